// A captured program with graph breaks (`tgc compile --allow-graph-breaks`,
// docs/graph-breaks.md): several graphs, and the steps the caller runs between them.
#ifndef TGC_FRONTEND_TRACE_GRAPHPROGRAM_H
#define TGC_FRONTEND_TRACE_GRAPHPROGRAM_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::trace {

/// What the caller does after a node's graph has run. Values are numbered for the
/// whole program ("glue values"): the program's user inputs first, then each node's
/// outputs.
struct GraphStep {
  enum class Kind { Return, Call, Branch };
  Kind kind = Kind::Return;
  /// Call: `callee(*args, **kwargs)` with the arguments as `tgc.break_call` encodes
  /// them; tensor i is glue value `tensors[i]`. Then node `next`.
  std::string callee;
  mlir::ArrayAttr args;
  mlir::DictionaryAttr kwargs;
  std::vector<int64_t> tensors;
  int64_t next = -1;
  /// Branch: `bool(glue value condition)` picks node `ifTrue` or `ifFalse`.
  int64_t condition = -1;
  int64_t ifTrue = -1, ifFalse = -1;
  /// The program's file:line (for messages).
  std::string where;
};

/// One graph of the program and what follows it.
struct GraphNode {
  /// A capture-level module with `@forward`, like `readTrace`'s: its parameters,
  /// buffers and constants are the model's (by name); its user inputs are glue values.
  mlir::OwningOpRef<mlir::ModuleOp> graph;
  /// The glue value of each user input of `@forward`, in order.
  std::vector<int64_t> inputs;
  /// The glue value each result of `@forward` defines (empty for a Return node, whose
  /// results are the program's: user outputs and Python state, with its replay list).
  std::vector<int64_t> outputs;
  GraphStep step;
};

struct GraphProgram {
  /// The program's user inputs: glue values 0..n-1.
  std::vector<std::string> inputNames;
  /// Node 0 runs first.
  std::vector<GraphNode> nodes;
};

/// Reads a `.trace` like `readTrace`, but a branch on a tensor's value or a `print` is
/// a graph break rather than an error: every path through such branches is traced
/// (at most `maxPaths`) and cut at the breaks into graphs. Errors are diagnostics.
mlir::FailureOr<GraphProgram> readTraceProgram(llvm::StringRef path, mlir::MLIRContext *ctx,
                                               unsigned maxPaths = 32);

/// The program as model.json's `"program"` (docs/graph-breaks.md), graph i named
/// `graphNames[i]`.
std::string writeProgramJson(const GraphProgram &program,
                             llvm::ArrayRef<std::string> graphNames);

} // namespace tgc::trace

#endif // TGC_FRONTEND_TRACE_GRAPHPROGRAM_H
