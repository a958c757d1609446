// Where the interpreter finds the Python objects that existed before the call.
#ifndef TGC_LIB_FRONTEND_PYTHON_OBJECTTABLE_H
#define TGC_LIB_FRONTEND_PYTHON_OBJECTTABLE_H

#include "Bytecode.h"
#include "Frontend/Common/Json.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace tgc::py {

using frontend::Json;

/// The objects a captured program can reach, as a capture records them: a table of JSON
/// objects by id (docs/trace-format.md "objects") and the code objects among them. The
/// interpreter reads an object the first time the program touches it. A `.trace` file
/// is one (trace::TraceFile); tests supply others.
class ObjectTable {
public:
  virtual ~ObjectTable();
  /// Where the objects come from (a file path), for diagnostics.
  virtual llvm::StringRef getPath() const = 0;
  /// Object `id`; an error if there is none.
  virtual llvm::Expected<const Json *> getObject(size_t id) const = 0;
  /// The code object of object `id` (a `code` object), unmarshalled.
  virtual llvm::Expected<CodeRef> getCode(size_t id) const = 0;
};

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_OBJECTTABLE_H
