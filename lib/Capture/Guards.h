// The guard list of a captured program (docs/guards.md): the Python values the compiled
// graph assumes, as checks `tgc.load` runs before each call.
#ifndef TGC_LIB_CAPTURE_GUARDS_H
#define TGC_LIB_CAPTURE_GUARDS_H

#include "Interpreter.h"
#include "TraceFile.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace tgc::capture {

/// Builds the `tgc.guards` module attribute after the entry call: the entry's non-tensor
/// arguments (`call`), then the interpreter's reads of pre-existing Python state, in
/// program order, one guard per (source, kind), the first observation kept. Reads of
/// objects unreachable from the roots, and values without a guard kind (tensors,
/// functions, program-created classes), make none.
mlir::ArrayAttr buildGuards(const TraceFile &trace, const Interpreter &interpreter,
                            const CallArguments &call, mlir::MLIRContext *ctx);

} // namespace tgc::capture

#endif // TGC_LIB_CAPTURE_GUARDS_H
