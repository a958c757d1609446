// The few ATen targets whose arguments need reshaping before they map onto a tgc op.
#ifndef TGC_LIB_CAPTURE_NODEADAPTERS_H
#define TGC_LIB_CAPTURE_NODEADAPTERS_H

#include "ExportFormat.h"
#include "tgc/Dialect/TensorMeta.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringRef.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// One argument of an export node: its schema name and its serialized `Argument`
/// (a one-key union such as `{"as_int": 3}`), pointing into the program's JSON.
struct NodeArgument {
  std::string name;
  const Json *value;
};

/// One entry of a node's flattened outputs: the value name ("" for `as_none`) and its
/// TensorMeta from `tensor_values`.
struct NodeOutput {
  std::string name;
  std::optional<TensorMeta> meta;
};

/// A node as an adapter sees it: adapters may rename, drop or reinterpret arguments
/// and add attributes (`attributes`) that the op needs but the schema does not pass.
struct AdapterNode {
  mlir::MLIRContext *ctx;
  std::vector<NodeArgument> &arguments;
  llvm::ArrayRef<NodeOutput> outputs;
  mlir::NamedAttrList &attributes;
  /// Reports an error about this node (prefixed with its name, at its location).
  std::function<mlir::InFlightDiagnostic()> emitError;
};

/// How to turn the nodes of one target into a tgc op when the generic mapping (operands
/// and attributes named after the schema's arguments) does not fit.
struct NodeAdapter {
  llvm::StringLiteral target;
  /// The tgc op to build; empty for the one AtenOpInterface lists for `target`.
  llvm::StringLiteral opName;
  mlir::LogicalResult (*adapt)(AdapterNode &node);
};

/// The adapter for `target` (`aten.split.Tensor`), if it has one.
const NodeAdapter *findNodeAdapter(llvm::StringRef target);

/// Whether `target` computes a Python int from sizes (`aten.sym_size.int`,
/// `_operator.mul`, ...). Such nodes become no op: their results are symbolic sizes,
/// which the graph's `sym_int_values` state as expressions of the size symbols.
bool isSymbolicIntTarget(llvm::StringRef target);

/// Whether an argument the op does not declare only configures something that does not
/// change values (layout, pin_memory, memory_format, device placement, ...), so that
/// dropping it is safe.
bool isIgnorableArgument(const NodeArgument &argument);

} // namespace tgc

#endif // TGC_LIB_CAPTURE_NODEADAPTERS_H
