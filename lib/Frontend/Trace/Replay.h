// The Python state replay list of a captured program (docs/replay.md): the side effects
// the interpreter recorded, as final values with sources from the program's roots.
#ifndef TGC_LIB_FRONTEND_TRACE_REPLAY_H
#define TGC_LIB_FRONTEND_TRACE_REPLAY_H

#include "Frontend/Python/Interpreter.h"
#include "TraceFile.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include <string>
#include <vector>

namespace tgc::trace {

/// A tensor of the replayed state: it becomes a `python_state` result of @forward.
struct StateTensor {
  mlir::Value value;
  /// Where it lives after the call (`fn.cache[0]`): the result's `tgc.name`.
  std::string slot;
};

/// The replay list and the tensors its values refer to.
struct Replay {
  /// The `tgc.replay` module attribute.
  mlir::ArrayAttr actions;
  /// Tensor `{"type": "tensor", "output": firstOutput + i}` is `tensors[i]`.
  std::vector<StateTensor> tensors;
};

/// Builds the replay list after the entry call: one action per written target (attribute,
/// global, cell, container) in program order of its first write, with the target's final
/// value in `interpreter`'s heap. `firstOutput` is the @forward result index the first
/// state tensor will have (the number of user outputs). Errors (a value that cannot be
/// replayed) are reported at the write's location.
/// A resized tensor (`out=`) must be one of `userInputs` (trace object id -> input
/// name): its action is a `resize` naming the input.
/// After the actions, one `return` action per value of the interpreter's
/// getReturnedValues() (the parts of the returned value only the replay vocabulary
/// describes), in order, each with its value; `loc` is where their errors go.
mlir::FailureOr<Replay> buildReplay(const TraceFile &trace, const py::Interpreter &interpreter,
                                    unsigned firstOutput,
                                    const llvm::DenseMap<int64_t, std::string> &userInputs,
                                    mlir::MLIRContext *ctx, mlir::Location loc);

/// The Python path of every trace object reachable from the roots (`fn`, `args[i]`,
/// `kwargs['k']`, `globals['<module>']`, `modules['<name>']`), found by a breadth-first
/// walk, so each object gets its shortest, first-found path; "" for none. By object id.
std::vector<std::string> computeSources(const TraceFile &trace);

/// Whether `source` has an item step into an attribute whose name ends in `hooks`
/// (`fn._forward_hooks[3]`): nn.Module's hook dicts are keyed by handle ids, which differ
/// in every process, so such a source names nothing stable.
bool throughHookDict(llvm::StringRef source);

/// A Python string literal for `s` as repr() writes it (the `[STR]` of a source).
std::string sourceStringLiteral(llvm::StringRef s);
/// The source step of attribute `name`: `.name`, or `.__dict__['name']` when `name` is
/// not an identifier.
std::string sourceAttributeStep(llvm::StringRef name);

} // namespace tgc::trace

#endif // TGC_LIB_FRONTEND_TRACE_REPLAY_H
