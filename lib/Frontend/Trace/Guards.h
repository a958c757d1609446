// The guard list of a captured program (docs/guards.md): the Python values the compiled
// graph assumes, as checks `tgc.load` runs before each call.
#ifndef TGC_LIB_FRONTEND_TRACE_GUARDS_H
#define TGC_LIB_FRONTEND_TRACE_GUARDS_H

#include "Frontend/Python/Interpreter.h"
#include "TraceFile.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace tgc::trace {

/// Builds the `tgc.guards` module attribute after the entry call: the entry's non-tensor
/// arguments (`call`), then the interpreter's reads of pre-existing Python state, in
/// program order, one guard per (source, kind), the first observation kept. Reads of
/// objects unreachable from the roots, and values without a guard kind (tensors,
/// functions, program-created classes), make none.
mlir::ArrayAttr buildGuards(const TraceFile &trace, const py::Interpreter &interpreter,
                            const py::CallArguments &call, mlir::MLIRContext *ctx);

} // namespace tgc::trace

#endif // TGC_LIB_FRONTEND_TRACE_GUARDS_H
