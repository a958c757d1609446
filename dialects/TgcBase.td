// The tgc dialect: definition shared by its types, attributes and ops.
#ifndef TGC_BASE_TD
#define TGC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tgc_Dialect : Dialect {
  let name = "tgc";
  let cppNamespace = "::tgc";
  let summary = "PyTorch programs as captured by tgc: ATen operators on tensors with "
                "fake-tensor metadata";
  let description = [{
    Tensors come in two forms. `!tgc.tensor` is the capture level: a reference to
    storage that may alias other tensors and may be mutated in place (what
    torch.export's training IR and bytecode capture produce). `!tgc.vtensor` is the value
    level: an immutable value, what functionalization produces and lowering consumes.
    Both carry the fake-tensor metadata PyTorch tracks: sizes (static, or affine
    expressions over the program's size symbols `s0, s1, ...`), strides, storage offset,
    dtype (an MLIR element type), device and requires_grad.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    /// Name of the module attribute listing the size symbols (`#tgc.symbol`s);
    /// `sN` in a type refers to element N.
    static constexpr ::llvm::StringLiteral kSymbolsAttrName = "tgc.symbols";
  private:
    void registerTypes();
    void registerAttributes();
  public:
  }];
}

/// Ops whose results the training partitioner never recomputes in backward: they are
/// computed once in forward and saved when backward needs them (matmuls, convolutions,
/// random ops; docs/training.md).
def Tgc_NoRecompute : NativeOpTrait<"NoRecompute"> {
  let cppNamespace = "::tgc::OpTrait";
}

#endif // TGC_BASE_TD
