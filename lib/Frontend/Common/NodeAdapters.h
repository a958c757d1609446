// The few ATen targets whose arguments need reshaping before they map onto a tgc op.
#ifndef TGC_LIB_FRONTEND_COMMON_NODEADAPTERS_H
#define TGC_LIB_FRONTEND_COMMON_NODEADAPTERS_H

#include "AtenCall.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringRef.h"
#include <functional>
#include <string>
#include <vector>

namespace tgc::frontend {

/// A call as an adapter sees it: adapters may rename, drop or reinterpret arguments
/// and add attributes (`attributes`) that the op needs but the schema does not pass.
/// Both frontends build calls this way (AtenCallBuilder), so adapters see resolved
/// AtenValues, never a file format.
struct AdapterCall {
  mlir::MLIRContext *ctx;
  std::vector<AtenArgument> &arguments;
  /// The results the capture recorded; empty when it recorded none (the interpreter),
  /// in which case adapters compute from the operands what they would read here.
  llvm::ArrayRef<RecordedResult> recorded;
  mlir::NamedAttrList &attributes;
  /// Reports an error about this call (at its location, naming it).
  std::function<mlir::InFlightDiagnostic()> emitError;
};

/// How to turn the calls of one target into a tgc op when the generic mapping (operands
/// and attributes named after the schema's arguments) does not fit.
struct NodeAdapter {
  llvm::StringLiteral target;
  /// The tgc op to build; empty for the one AtenOpInterface lists for `target`.
  llvm::StringLiteral opName;
  mlir::LogicalResult (*adapt)(AdapterCall &call);
};

/// The adapter for `target` (`aten.split.Tensor`), if it has one.
const NodeAdapter *findNodeAdapter(llvm::StringRef target);

/// An ATen alias (`aten.multiply.Tensor` for `aten.mul.Tensor`, `aten.swapaxes` for
/// `aten.transpose.int`), which the training IR keeps as the program called it: the
/// target it stands for, and the arguments whose names differ (alias name, target name).
struct AtenAlias {
  llvm::StringLiteral alias;
  llvm::StringLiteral target;
  std::pair<llvm::StringRef, llvm::StringRef> renames[2] = {};
};

/// The alias entry for `target`, if it is an alias.
const AtenAlias *findAtenAlias(llvm::StringRef target);

/// Whether `target` computes a Python int from sizes (`aten.sym_size.int`,
/// `_operator.mul`, ...). Such nodes become no op: their results are symbolic sizes,
/// which the graph's `sym_int_values` state as expressions of the size symbols.
bool isSymbolicIntTarget(llvm::StringRef target);

/// Whether `target` only states or checks a fact about data-dependent sizes: the
/// comparisons of SymInts that give SymBools (`_operator.ge`, ...) and what consumes
/// them, `aten._assert_scalar` (torch._check, export's range checks on unbacked sizes),
/// `sym_constrain_range(_for_size)`. Such nodes become no op; tgc does not check them
/// at run time (docs/ops.md).
bool isRuntimeCheckTarget(llvm::StringRef target);

/// Whether an argument the op does not declare only configures something that does not
/// change values (layout, pin_memory, memory_format, device placement, ...), so that
/// dropping it is safe.
bool isIgnorableArgument(const AtenArgument &argument);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_NODEADAPTERS_H
