// A captured program with graph breaks (`tgc compile --allow-graph-breaks`,
// docs/graph-breaks.md): several graphs, and the steps the caller runs between them.
#ifndef TGC_FRONTEND_TRACE_GRAPHPROGRAM_H
#define TGC_FRONTEND_TRACE_GRAPHPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

namespace tgc::trace {

/// The graphs of a program, node 0 first. Each is a capture-level module with
/// `@forward`, like `readTrace`'s: its parameters, buffers and constants are the
/// model's (by name); its user inputs are program values ("glue values": the program's
/// user inputs first, then each graph's results). Each records its part of the program
/// as module attributes (`program::` in tgc/Dialect/Attributes.h): the program values of
/// its user inputs and results and the step after it (return, call, branch); the first
/// also the names of the program's user inputs. Target writes model.json's "program"
/// from them (tgc/Target/ProgramJson.h).
struct GraphProgram {
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> graphs;
};

/// Reads a `.trace` like `readTrace`, but a branch on a tensor's value or a `print` is
/// a graph break rather than an error: every path through such branches is traced
/// (at most `maxPaths`) and cut at the breaks into graphs. Errors are diagnostics.
/// `training` as for readTrace.
mlir::FailureOr<GraphProgram> readTraceProgram(llvm::StringRef path, mlir::MLIRContext *ctx,
                                               bool training = true, unsigned maxPaths = 32);

} // namespace tgc::trace

#endif // TGC_FRONTEND_TRACE_GRAPHPROGRAM_H
