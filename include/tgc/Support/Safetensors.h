//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// safetensors is how tgc exchanges tensors with PyTorch: example inputs,
// reference outputs and state for `tgc run` and the numerics tests. The
// format: an 8-byte little-endian header length, a JSON header mapping each
// tensor name to {dtype, shape, data_offsets} (plus an optional
// "__metadata__" string map), then the raw row-major little-endian data.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_SAFETENSORS_H
#define TGC_SUPPORT_SAFETENSORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// The element types tgc reads and writes, named as in the format.
enum class SafetensorsDType {
  BOOL,
  U8,
  I8,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  I64,
  U64,
  F64,
};

/// The format's name of a dtype ("F32").
llvm::StringRef safetensorsDTypeName(SafetensorsDType dtype);

/// The dtype a format name stands for, or nothing for names tgc does not
/// support (e.g. F8_E4M3).
std::optional<SafetensorsDType> parseSafetensorsDType(llvm::StringRef name);

/// Bytes per element.
size_t safetensorsDTypeSize(SafetensorsDType dtype);

/// One named tensor with its bytes (row-major, little-endian).
struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::F32;
  std::vector<int64_t> shape;
  std::string data;

  /// Product of the shape (1 for a scalar).
  int64_t numElements() const;
};

/// The contents of a safetensors file.
struct SafetensorsFile {
  /// The "__metadata__" map (free-form strings).
  std::map<std::string, std::string> metadata;
  /// Tensors in file order when read; written in the format's canonical
  /// order (largest element size first, then by name).
  std::vector<SafetensorsTensor> tensors;

  /// The tensor named `name`, or null.
  const SafetensorsTensor *find(llvm::StringRef name) const;
};

/// Parses safetensors `bytes`; errors name `sourceName` (usually the path)
/// and say what is wrong (truncated header, bad JSON, unknown dtype,
/// offsets that do not match the shape or overlap, ...).
llvm::Expected<SafetensorsFile> parseSafetensors(llvm::StringRef bytes, llvm::StringRef sourceName);

/// Reads and parses the file at `path`.
llvm::Expected<SafetensorsFile> readSafetensors(llvm::StringRef path);

/// Encodes `file`; fails on duplicate or empty names, negative sizes, or a
/// data size that does not match dtype and shape.
llvm::Expected<std::string> serializeSafetensors(const SafetensorsFile &file);

/// Encodes `file` and writes it to `path`; errors name the path.
llvm::Error writeSafetensors(llvm::StringRef path, const SafetensorsFile &file);

} // namespace tgc

#endif // TGC_SUPPORT_SAFETENSORS_H
