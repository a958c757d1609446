// The Python-level torch API (torch.*, Tensor methods, operators, torch.nn.functional) as
// ATen calls: schemas, overload resolution and argument binding for the interpreter.
#ifndef TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONS_H
#define TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONS_H

#include "Frontend/Common/AtenCall.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace tgc::py {

using frontend::AtenArgument;
using frontend::AtenValue;

/// A parsed function schema in native_functions.yaml syntax:
/// `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
struct FunctionSchema {
  struct Argument {
    std::string name;
    /// The type as written: Tensor, Tensor?, Tensor[], Tensor?[], int, int[], SymInt[],
    /// int[2], float, bool, str, Scalar, ScalarType?, Device?, Layout?, MemoryFormat?...
    std::string type;
    bool keywordOnly = false;
    /// The default as written ("1", "None", "[]", "False"), absent when required.
    std::optional<std::string> defaultValue;
  };
  std::string name;     ///< "add"
  std::string overload; ///< "Tensor" ("" for the default overload)
  std::vector<Argument> arguments;
  size_t numReturns = 0;
  /// Whether the one return is a `Tensor[]` (split, chunk, unbind): all of the op's
  /// results, as a list.
  bool returnsList = false;
};

/// Parses a schema string; malformed ones are an error (they are tgc's own tables, so
/// this is for tests and for loud failures).
llvm::Expected<FunctionSchema> parseFunctionSchema(llvm::StringRef text);

/// A resolved call: the ATen target and its named arguments (omitted optionals left
/// out, so ops take their ODS defaults).
struct BoundCall {
  std::string target;
  std::vector<AtenArgument> arguments;
  /// What the Python callable returns: the first `numReturns` results of the op (ops
  /// like batch_norm have more), or all of them as a list when `returnsList`.
  size_t numReturns = 1;
  bool returnsList = false;
};

/// Binds a call of the Python callable `qualifiedName` (`torch.add`, `torch.Tensor.add`
/// with `self` first, `operator.add`, `torch.nn.functional.linear`) to one of its ATen
/// overloads, following torch's Python argument parser: positional then keyword
/// arguments, varargs int lists (`x.view(2, 3)`), Python numbers for Tensor/Scalar
/// parameters. Returns nullopt when tgc does not know the callable, an error naming the
/// problem when no overload accepts the arguments.
std::optional<llvm::Expected<BoundCall>> bindTorchCall(llvm::StringRef qualifiedName,
                                                       llvm::ArrayRef<AtenValue> positional,
                                                       llvm::ArrayRef<AtenArgument> keywords);

/// One overload of a `torch.ops` operator, as tgc-capture records it: its ATen target
/// (`aten.addmm.default`) and its schema in PyTorch's syntax without the namespace
/// (`addmm(Tensor self, Tensor mat1, ...) -> Tensor`).
struct OperatorOverload {
  std::string target;
  std::string schema;
};

/// Binds a call of the `torch.ops` operator `qualifiedName` (`torch.ops.aten.addmm`, an
/// overload packet, or one overload) to the first of its `overloads` that accepts the
/// arguments, as bindTorchCall binds torch's Python functions. Overloads that write into
/// an argument, and schemas tgc cannot read, are not tried.
llvm::Expected<BoundCall> bindOperatorCall(llvm::StringRef qualifiedName,
                                           llvm::ArrayRef<OperatorOverload> overloads,
                                           llvm::ArrayRef<AtenValue> positional,
                                           llvm::ArrayRef<AtenArgument> keywords);

/// Whether tgc knows `qualifiedName` as a torch callable.
bool isKnownTorchFunction(llvm::StringRef qualifiedName);

/// One overload of the table (a Python name, its signature and ATen target), so that
/// tests can check every entry against the schema parser and tgc's ops.
struct TorchOverloadInfo {
  std::string name;
  std::string signature;
  std::string target;
};

/// Every overload of every callable the table knows, in resolution order.
std::vector<TorchOverloadInfo> listTorchOverloads();

/// The Python names that more than one entry of the table lists: the table is filled by
/// op family (TorchFunctions<Family>.cpp), and a later entry would hide an earlier one.
/// None, unless tgc has a bug.
std::vector<std::string> listDuplicateTorchNames();

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_TORCHFUNCTIONS_H
