// Interfaces through which passes and readers see per-op behaviour of tgc ops.
#ifndef TGC_INTERFACES_TD
#define TGC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tgc_AtenOpInterface : OpInterface<"AtenOpInterface"> {
  let cppNamespace = "::tgc";
  let description = [{
    An op that stands for one or more ATen operators. Readers find the op for an ATen
    target (`aten.linear.default`) through this interface, so adding an op means adding
    its ODS entry: operands and attributes are named after the ATen schema's arguments
    and appear in schema order.
  }];
  let methods = [
    StaticInterfaceMethod<"ATen targets this op represents, as `aten.<name>.<overload>`",
      "::llvm::ArrayRef<::llvm::StringLiteral>", "getAtenTargets">,
    StaticInterfaceMethod<[{
        The op's operands in order, by name, marked as ATen schemas mark types:
        `bias?` is optional, `tensors[]` variadic. A reader routes a node's tensor (and
        Python-scalar-for-Tensor) arguments by them and sizes operand segments.
      }], "::llvm::ArrayRef<::llvm::StringLiteral>", "getAtenOperands">,
    StaticInterfaceMethod<[{
        Attributes with neither a default nor optionality: a reader must supply them
        (from the node or its adapter) before inferring result types.
      }], "::llvm::ArrayRef<::llvm::StringLiteral>", "getAtenRequiredAttrNames">,
  ];
}

def Tgc_ViewOpInterface : OpInterface<"ViewOpInterface"> {
  let cppNamespace = "::tgc";
  let description = [{
    An op whose result is a view of its `self` operand: on capture-level tensors, it
    aliases the operand's storage. Functionalization replays views on updated bases and
    uses `buildScatter` to write a new view value back into its base.
  }];
  let methods = [
    InterfaceMethod<"The tensor this op views.", "::mlir::Value", "getViewSource", (ins),
      [{ return $_op->getOperand(0); }]>,
    InterfaceMethod<[{
        Builds, on value tensors, the base with the region this view covers replaced by
        `newView`; `base` is the current value of the view source. Fails (with a
        diagnostic) for views that cannot be written through (expand).
      }], "::mlir::FailureOr<::mlir::Value>", "buildScatter",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$base, "::mlir::Value":$newView)>,
    InterfaceMethod<[{
        The op that computes this view on value tensors (same operands and attributes):
        the op itself, or for metadata-changing in-place ops (`t_`, `squeeze_`, ...) their
        pure view counterpart.
      }], "::llvm::StringRef", "getValueViewOpName", (ins), [{}],
      [{ return $_op->getName().getStringRef(); }]>,
  ];
}

def Tgc_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let cppNamespace = "::tgc";
  let description = [{
    An op that mutates some of its capture-level operands (`add_`, `copy_`, batch_norm in
    training mode writing its running statistics). Functionalization asks it for a pure
    equivalent on value tensors.
  }];
  let methods = [
    InterfaceMethod<"Indices of the operands this op writes.",
      "::llvm::SmallVector<unsigned>", "getMutatedOperandIndices">,
    InterfaceMethod<[{
        Builds the op's pure equivalent. `operands` are the current values (value
        tensors, or scalars) of this op's operands; on success `newOperandValues` holds
        the new value of each mutated operand (in `getMutatedOperandIndices` order) and
        `results` a value for each result that is not an alias of a mutated operand
        (results that alias one are given null).
      }], "::llvm::LogicalResult", "buildFunctional",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$operands,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$newOperandValues,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$results)>,
  ];
}

def Tgc_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::tgc";
  let description = [{
    An op computed element by element (after broadcasting). Lowering builds one
    `linalg.generic` for any such op and asks it for the scalar computation, so adding an
    elementwise op means adding its ODS entry and `buildScalar`.
  }];
  let methods = [
    InterfaceMethod<[{
        The element type the computation happens in (PyTorch's "common dtype"): the
        result dtype by default; comparisons compute in their operands' promoted dtype.
      }], "::mlir::Type", "getComputeType", (ins), [{}], [{
        return ::llvm::cast<::tgc::BaseTensorType>($_op->getResult(0).getType()).getDtype();
      }]>,
    InterfaceMethod<[{
        Whether operand `index` is passed to `buildScalar` with its own element type
        (masks and conditions) instead of converted to the compute type.
      }], "bool", "keepsOperandType", (ins "unsigned":$index), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Builds the scalar result from `args` (one per operand, converted to the compute
        type unless `keepsOperandType`). The result has the compute type, or i1.
      }], "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::ValueRange":$args, "::mlir::Type":$computeType)>,
  ];
}

def Tgc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::tgc";
  let description = [{
    An op with a derivative formula (its vector-Jacobian product), what
    `tgc-autodiff` chains in reverse to build the backward. Formulas follow PyTorch's
    derivatives.yaml and are built from tgc ops on value tensors. Attached as external
    models (lib/Dialect/Derivatives.cpp), one formula per op or op family.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the op's operands from the gradients of its results.
        `resultGrads` has one entry per result (null: no gradient reaches it);
        `operandGrads` is resized to one entry per operand and receives a gradient of
        the operand's sizes and dtype for each operand whose `needsGrad` entry is set
        (null means zero). `operandWrites` receives (operand index, new value) for each
        operand the op's backward writes into (a custom autograd.Function whose
        backward mutates a buffer; empty for every formula op). Fails with a diagnostic
        when the formula does not apply.
      }], "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder, "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::ArrayRef<bool>":$needsGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads,
           "::llvm::SmallVectorImpl<std::pair<unsigned, ::mlir::Value>> &":$operandWrites)>,
  ];
}

#endif // TGC_INTERFACES_TD
