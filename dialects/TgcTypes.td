// Types and attributes of the tgc dialect: tensors with fake-tensor metadata.
#ifndef TGC_TYPES_TD
#define TGC_TYPES_TD

include "TgcBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tgc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tgc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tgc_DeviceAttr : Tgc_Attr<"Device", "device"> {
  let summary = "A PyTorch device: `cpu`, `cuda` or `cuda:N`";
  let description = [{
    Where a tensor lives when the program was captured. Kept so that a program captured
    on CUDA still says so; the CPU target compiles it for the host all the same.
  }];
  let parameters = (ins StringRefParameter<"device type">:$kind,
                        DefaultValuedParameter<"int64_t", "-1">:$index);
  let assemblyFormat = "`<` $kind (`:` $index^)? `>`";
  let extraClassDeclaration = [{
    /// The host CPU device, the default for tensors that name none.
    static DeviceAttr getCpu(::mlir::MLIRContext *ctx) { return get(ctx, "cpu", -1); }
  }];
}

def Tgc_SymbolAttr : Tgc_Attr<"Symbol", "symbol"> {
  let summary = "A size symbol with its name in the source and its value range";
  let description = [{
    `#tgc.symbol<"s77", min = 2, max = 64, hint = 3>`. The module attribute
    `tgc.symbols` lists them; a type's `sN` is the N-th. `max` is absent for an unbounded
    symbol. `hint` is the value seen when the program was captured (torch.export's size
    hint), when known; cost models (the training partitioner's byte sizes) use it.
  }];
  let parameters = (ins StringRefParameter<"name in the source">:$name,
                        "int64_t":$min,
                        OptionalParameter<"std::optional<int64_t>">:$max,
                        OptionalParameter<"std::optional<int64_t>">:$hint);
  let assemblyFormat = "`<` $name `,` `min` `=` $min (`,` `max` `=` $max^)? "
                       "(`,` `hint` `=` $hint^)? `>`";
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$name, "int64_t":$min,
                     "std::optional<int64_t>":$max), [{
      return $_get($_ctxt, name, min, max, std::nullopt);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The value cost models assume: the hint, else min(max, 1024) clamped to min
    /// (docs/training.md).
    int64_t getTypicalValue() const {
      if (getHint())
        return *getHint();
      return std::max(getMin(), std::min<int64_t>(getMax().value_or(1024), 1024));
    }
  }];
}

def Tgc_ShapeAttr : Tgc_Attr<"Shape", "shape"> {
  let summary = "A list of sizes, each an integer or an affine expression of symbols";
  let description = [{
    `#tgc.shape<[s0, 4, s0 * 8]>`: the `size` argument of view, expand, full and friends,
    with symbolic sizes kept symbolic. `-1` is allowed where ATen allows it (view).
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::AffineExpr", "sizes">:$sizes);
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Tgc_TensorTypeBase<string name, string typeMnemonic, string typeSummary>
    : TypeDef<Tgc_Dialect, name> {
  let mnemonic = typeMnemonic;
  let summary = typeSummary;
  let parameters = (ins
    ArrayRefParameter<"::mlir::AffineExpr", "sizes">:$sizes,
    "::mlir::Type":$dtype,
    OptionalArrayRefParameter<"::mlir::AffineExpr", "strides, empty when unknown">:$strides,
    OptionalParameter<"::mlir::AffineExpr", "storage offset, null means 0">:$storageOffset,
    OptionalParameter<"::tgc::DeviceAttr", "null means cpu">:$device,
    DefaultValuedParameter<"bool", "false">:$requiresGrad);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<::mlir::AffineExpr>":$sizes,
                                        "::mlir::Type":$dtype), [{
      return $_get(dtype.getContext(), sizes, dtype, ::llvm::ArrayRef<::mlir::AffineExpr>{},
                   ::mlir::AffineExpr(), ::tgc::DeviceAttr(), false);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The metadata as one struct; what inference functions work on.
    ::tgc::TensorMeta getMeta() const;
  }];
}

def Tgc_RefTensorType : Tgc_TensorTypeBase<"RefTensor", "tensor",
    "A capture-level tensor: a reference to storage that may alias and be mutated"> {
  let description = [{
    `!tgc.tensor<[s0, 4], f32, strides = [4, 1], offset = 0, device = cuda:0, grad>`.
    Values of this type are names for (views of) storages: an in-place op on one is
    visible through every alias. Functionalization turns them into `!tgc.vtensor`.
  }];
}

def Tgc_ValueTensorType : Tgc_TensorTypeBase<"ValueTensor", "vtensor",
    "A value-level tensor: an immutable value"> {
  let description = [{
    `!tgc.vtensor<[s0, 4], f32>`. What functionalization produces and lowering consumes.
    Strides are normally absent: a value has no layout until it is bufferized.
  }];
}

def Tgc_AnyTensor : Type<
    CPred<"::llvm::isa<::tgc::RefTensorType, ::tgc::ValueTensorType>($_self)">,
    "tgc tensor", "::tgc::BaseTensorType">;
def Tgc_Scalar : AnyTypeOf<[F64, I64, I1], "Python scalar (f64, i64 or i1)">;
def Tgc_TensorOrScalar : AnyTypeOf<[Tgc_AnyTensor, F64, I64, I1], "tgc tensor or Python scalar">;

def Tgc_DTypeAttr : TypeAttrBase<"::mlir::Type", "a PyTorch dtype as an MLIR element type">;

#endif // TGC_TYPES_TD
