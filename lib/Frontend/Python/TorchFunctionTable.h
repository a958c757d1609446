// The table of torch callables, private to TorchFunctions*.cpp: each callable's overloads
// with their schemas, ATen targets and argument rewrites, added by op family.
#ifndef TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONTABLE_H
#define TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONTABLE_H

#include "TorchFunctions.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace tgc::py {

/// A change to a bound call where the Python-level API and the ATen operator differ.
using Rewrite = llvm::Error (*)(BoundCall &call);

/// One way to call a Python callable.
struct Overload {
  /// The Python-level signature in schema syntax; parameter names are ATen's (the
  /// keyword `input` also names a `self` parameter, as torch's parser allows).
  llvm::StringLiteral signature;
  llvm::StringLiteral target;
  Rewrite rewrite = nullptr;
  /// Whether omitted parameters with a non-None default are passed with it, for
  /// Python signatures whose defaults ATen does not have (F.batch_norm's training).
  bool passDefaults = false;
};

/// Callables that share their overloads (`torch.add`, `torch.Tensor.add`).
struct TorchFunction {
  std::vector<llvm::StringLiteral> names;
  std::vector<Overload> overloads;
};

/// The schema of a Python-level function that has no return type of its own.
#define TGC_SCHEMA(signature) signature " -> Tensor"
/// Callables that return a list of tensors (split, chunk, unbind).
#define TGC_LIST_SCHEMA(signature) signature " -> Tensor[]"

/// The table's parts, by op family, in the order the table lists them.
/// Elementwise unary and binary ops, comparisons and dtype conversions
/// (TorchFunctionsElementwise.cpp).
void addElementwiseTorchFunctions(std::vector<TorchFunction> &table);
/// Linear algebra, reductions, normalization, softmax, losses, activations and pooling
/// (TorchFunctionsNN.cpp).
void addNNTorchFunctions(std::vector<TorchFunction> &table);
/// Views and shapes, in-place writes and creation (TorchFunctionsShapes.cpp).
void addShapeTorchFunctions(std::vector<TorchFunction> &table);

// Helpers of the argument rewrites (TorchFunctions.cpp).
/// An error of the table's binding or parsing.
llvm::Error bindingError(const llvm::Twine &message);
/// The bound argument `name`, if given.
AtenValue *findArgument(BoundCall &call, llvm::StringRef name);
/// Removes the bound argument `name`, returning its value (None when not given).
AtenValue takeArgument(BoundCall &call, llvm::StringRef name);
void renameArgument(BoundCall &call, llvm::StringRef from, llvm::StringRef to);
bool isTrue(const AtenValue &value);
/// The MLIR context of the values in a call (for the constants defaults need).
mlir::MLIRContext *findContext(llvm::ArrayRef<AtenValue> values);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONTABLE_H
