// Cutting the traced paths of a program with graph breaks into graphs
// (docs/graph-breaks.md).
#ifndef TGC_LIB_FRONTEND_TRACE_GRAPHBREAKS_H
#define TGC_LIB_FRONTEND_TRACE_GRAPHBREAKS_H

#include "tgc/Frontend/Trace/GraphProgram.h"

namespace tgc::trace {

/// One traced path: a capture-level module whose `@forward` has graph-break markers
/// (`tgc.break_branch`, `tgc.break_call`) among its top-level ops, and the branch
/// outcomes it followed.
struct PathTrace {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<bool> decisions;
};

/// Cuts every path at its markers and merges the segments paths share (same segment
/// number, same outcomes before it) into one graph. `paths` must hold both outcomes of
/// every branch that a path reaches; paths[0] is the first traced.
mlir::FailureOr<GraphProgram> splitGraphBreaks(std::vector<PathTrace> &paths,
                                               mlir::MLIRContext *ctx);

/// The step of a graph that ends the program: `{kind = "return"}`.
mlir::DictionaryAttr returnStep(mlir::MLIRContext *ctx);

/// Records on `graph` the program values of its user inputs and of its results, and
/// the step after it (`program::kGraphInputs`, `kGraphOutputs`, `kStep`).
void recordProgramNode(mlir::ModuleOp graph, llvm::ArrayRef<int64_t> inputs,
                       llvm::ArrayRef<int64_t> outputs, mlir::DictionaryAttr step);

/// Records on the program's first graph the names of its user inputs
/// (`program::kProgramInputs`).
void recordProgramInputs(mlir::ModuleOp first, llvm::ArrayRef<std::string> names);

} // namespace tgc::trace

#endif // TGC_LIB_FRONTEND_TRACE_GRAPHBREAKS_H
