// A .trace file (docs/trace-format.md): header checks, the object table and the blobs.
#ifndef TGC_LIB_FRONTEND_TRACE_TRACEFILE_H
#define TGC_LIB_FRONTEND_TRACE_TRACEFILE_H

#include "Frontend/Common/Json.h"
#include "Frontend/Python/ObjectTable.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>

namespace tgc::trace {

using frontend::Json;

/// An opened .trace: the file stays mapped, the JSON header is parsed once, and code
/// objects are unmarshalled on first use. Every accessor checks what it reads (ids,
/// blob bounds, kinds) and reports malformed files as errors, never by crashing.
class TraceFile : public py::ObjectTable {
public:
  /// Opens `path`, checking the magic, the format major version, the header's JSON,
  /// the Python version it was captured with (3.11 to 3.13) and that every blob lies inside
  /// the file.
  static llvm::Expected<std::unique_ptr<TraceFile>> open(llvm::StringRef path);

  /// The parsed JSON header.
  const Json &header() const { return json; }
  size_t getNumObjects() const;
  /// Object `id` of the `objects` table.
  llvm::Expected<const Json *> getObject(size_t id) const override;
  /// The bytes of blob `index`.
  llvm::Expected<llvm::ArrayRef<uint8_t>> getBlob(size_t index) const;
  /// The code object of object `id` (a `code` object), unmarshalled and cached.
  llvm::Expected<py::CodeRef> getCode(size_t id) const override;
  llvm::StringRef getPath() const override { return path; }

private:
  TraceFile() = default;
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  Json json;
  uint64_t dataOffset = 0;
  /// The minor version of the CPython 3 that captured the program (3.11 to 3.13).
  int pythonMinor = 12;
  mutable llvm::DenseMap<size_t, py::CodeRef> codes;
};

} // namespace tgc::trace

#endif // TGC_LIB_FRONTEND_TRACE_TRACEFILE_H
