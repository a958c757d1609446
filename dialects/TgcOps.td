// The tgc dialect's operations: ATen operators grouped by family.
#ifndef TGC_OPS_TD
#define TGC_OPS_TD

include "TgcBase.td"
include "TgcTypes.td"
include "TgcInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// An ATen operator. `atenTargets` are the export targets it stands for; result
/// metadata comes from `inferReturnTypes` (InferTypeOpInterface), which every op defines
/// and the verifier checks against the result types (sizes, dtype, strides when known).
class Tgc_Op<string mnemonic, list<string> atenTargets, list<Trait> traits = []>
    : Op<Tgc_Dialect, mnemonic, !listconcat(traits, [
        Tgc_AtenOpInterface,
        InferTypeOpAdaptorWithIsCompatible])> {
  list<string> aten = atenTargets;
  // What readers need to map an ATen node onto this op without knowing it
  // (AtenOpInterface): the operands (`name`, `name?` optional, `name[]` variadic), and
  // the attributes that have neither a default nor optionality, from `arguments`.
  list<string> atenOperands = !foldl([]<string>, !range(!size(arguments)), names, i,
      !if(!initialized(!getdagarg<Attr>(arguments, i)), names,
          !listconcat(names, [!getdagname(arguments, i) #
              !cond(!isa<Optional>(!getdagarg<TypeConstraint>(arguments, i)): "?",
                    !isa<Variadic>(!getdagarg<TypeConstraint>(arguments, i)): "[]",
                    true: "")])));
  list<string> atenRequiredAttrNames = !foldl([]<string>, !range(!size(arguments)), names, i,
      !if(!initialized(!getdagarg<Attr>(arguments, i)),
          !if(!and(!not(!getdagarg<Attr>(arguments, i).isOptional),
                   !not(!initialized(!getdagarg<Attr>(arguments, i).defaultValue))),
              !listconcat(names, [!getdagname(arguments, i)]), names),
          names));
  code extraDecl = "";
  let extraClassDeclaration = !strconcat([{
    static ::llvm::ArrayRef<::llvm::StringLiteral> getAtenTargets() {
      static constexpr ::llvm::StringLiteral names[] = {""}],
      !foldl("", aten, acc, t, acc # ", \"" # t # "\""), [{};
      return ::llvm::ArrayRef(names).drop_front();
    }
    static ::llvm::ArrayRef<::llvm::StringLiteral> getAtenOperands() {
      static constexpr ::llvm::StringLiteral names[] = {""}],
      !foldl("", atenOperands, acc, t, acc # ", \"" # t # "\""), [{};
      return ::llvm::ArrayRef(names).drop_front();
    }
    static ::llvm::ArrayRef<::llvm::StringLiteral> getAtenRequiredAttrNames() {
      static constexpr ::llvm::StringLiteral names[] = {""}],
      !foldl("", atenRequiredAttrNames, acc, t, acc # ", \"" # t # "\""), [{};
      return ::llvm::ArrayRef(names).drop_front();
    }
  }], extraDecl);
  code inferBody = "";
  let extraClassDefinition = !strconcat([{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l, ::mlir::TypeRange r) {
      return ::tgc::areMetaCompatible(l, r);
    }
  }], !if(!empty(inferBody), "", !strconcat([{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *ctx,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
  }], inferBody, "\n}\n")));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Tgc_UnaryOp<string mnemonic, list<string> aten, list<Trait> traits = []>
    : Tgc_Op<mnemonic, aten, !listconcat([Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface>], traits)> {
  let summary = "Elementwise " # mnemonic;
  let arguments = (ins Tgc_AnyTensor:$self);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::FloatPromoted, types);";
}
// Unary ops whose result keeps the input dtype (integers stay integers).
class Tgc_UnarySameOp<string mnemonic, list<string> aten>
    : Tgc_UnaryOp<mnemonic, aten> {
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::Promoted, types);";
}

def Tgc_ReluOp : Tgc_UnarySameOp<"relu", ["aten.relu.default"]>;
def Tgc_NegOp : Tgc_UnarySameOp<"neg", ["aten.neg.default"]>;
def Tgc_AbsOp : Tgc_UnarySameOp<"abs", ["aten.abs.default"]>;
def Tgc_TanhOp : Tgc_UnaryOp<"tanh", ["aten.tanh.default"]>;
def Tgc_SigmoidOp : Tgc_UnaryOp<"sigmoid", ["aten.sigmoid.default"]>;
def Tgc_ExpOp : Tgc_UnaryOp<"exp", ["aten.exp.default"]>;
def Tgc_LogOp : Tgc_UnaryOp<"log", ["aten.log.default"]>;
def Tgc_SqrtOp : Tgc_UnaryOp<"sqrt", ["aten.sqrt.default"]>;
def Tgc_RsqrtOp : Tgc_UnaryOp<"rsqrt", ["aten.rsqrt.default"]>;
def Tgc_ErfOp : Tgc_UnaryOp<"erf", ["aten.erf.default"]>;
def Tgc_ReciprocalOp : Tgc_UnaryOp<"reciprocal", ["aten.reciprocal.default"]>;
def Tgc_SiluOp : Tgc_UnaryOp<"silu", ["aten.silu.default"]>;
def Tgc_SinOp : Tgc_UnaryOp<"sin", ["aten.sin.default"]>;
def Tgc_CosOp : Tgc_UnaryOp<"cos", ["aten.cos.default"]>;
def Tgc_TanOp : Tgc_UnaryOp<"tan", ["aten.tan.default"]>;
def Tgc_AsinOp : Tgc_UnaryOp<"asin", ["aten.asin.default"]>;
def Tgc_AcosOp : Tgc_UnaryOp<"acos", ["aten.acos.default"]>;
def Tgc_AtanOp : Tgc_UnaryOp<"atan", ["aten.atan.default"]>;
def Tgc_SinhOp : Tgc_UnaryOp<"sinh", ["aten.sinh.default"]>;
def Tgc_CoshOp : Tgc_UnaryOp<"cosh", ["aten.cosh.default"]>;
def Tgc_AsinhOp : Tgc_UnaryOp<"asinh", ["aten.asinh.default"]>;
def Tgc_AcoshOp : Tgc_UnaryOp<"acosh", ["aten.acosh.default"]>;
def Tgc_AtanhOp : Tgc_UnaryOp<"atanh", ["aten.atanh.default"]>;
def Tgc_Expm1Op : Tgc_UnaryOp<"expm1", ["aten.expm1.default"]>;
def Tgc_Log1pOp : Tgc_UnaryOp<"log1p", ["aten.log1p.default"]>;
def Tgc_Log2Op : Tgc_UnaryOp<"log2", ["aten.log2.default"]>;
def Tgc_Log10Op : Tgc_UnaryOp<"log10", ["aten.log10.default"]>;
// Rounding: integers (and bools) are returned as they are.
def Tgc_CeilOp : Tgc_UnarySameOp<"ceil", ["aten.ceil.default"]>;
def Tgc_FloorOp : Tgc_UnarySameOp<"floor", ["aten.floor.default"]>;
def Tgc_RoundOp : Tgc_UnarySameOp<"round", ["aten.round.default"]> {
  let description = [{ Round half to even, as ATen's `std::nearbyint`. }];
}
def Tgc_TruncOp : Tgc_UnarySameOp<"trunc", ["aten.trunc.default"]>;
def Tgc_SignOp : Tgc_UnarySameOp<"sign", ["aten.sign.default"]> {
  let description = [{ -1, 0 or 1; NaN gives 0, as ATen computes `(0 < x) - (x < 0)`. }];
}
/// Float classification: bool results, computed in the operand's dtype.
class Tgc_ClassifyOp<string mnemonic, list<string> aten>
    : Tgc_UnaryOp<mnemonic, aten,
                  [DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface, ["getComputeType"]>]> {
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::Bool, types);";
}
def Tgc_IsnanOp : Tgc_ClassifyOp<"isnan", ["aten.isnan.default"]>;
def Tgc_IsinfOp : Tgc_ClassifyOp<"isinf", ["aten.isinf.default"]>;

def Tgc_HardtanhOp : Tgc_UnarySameOp<"hardtanh", ["aten.hardtanh.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedAttr<F64Attr, "-1.0">:$min_val,
                       DefaultValuedAttr<F64Attr, "1.0">:$max_val);
}
def Tgc_EluOp : Tgc_UnaryOp<"elu", ["aten.elu.default"]> {
  let description = [{
    `scale * x` for x > 0, else `scale * alpha * (exp(input_scale * x) - 1)`.
  }];
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<F64Attr, "1.0">:$input_scale);
}
def Tgc_HardsigmoidOp : Tgc_UnaryOp<"hardsigmoid", ["aten.hardsigmoid.default"]> {
  let description = [{ `relu6(x + 3) / 6`, as ATen computes it. }];
}
def Tgc_HardswishOp : Tgc_UnaryOp<"hardswish", ["aten.hardswish.default"]> {
  let description = [{ `x * relu6(x + 3) / 6`, as ATen computes it. }];
}
def Tgc_LeakyReluOp : Tgc_UnaryOp<"leaky_relu", ["aten.leaky_relu.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedAttr<F64Attr, "0.01">:$negative_slope);
}
def Tgc_LogicalNotOp : Tgc_UnaryOp<"logical_not", ["aten.logical_not.default"],
    [DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface, ["getComputeType"]>]> {
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::Bool, types);";
}

def Tgc_BitwiseNotOp : Tgc_UnarySameOp<"bitwise_not", ["aten.bitwise_not.default"]> {
  let hasVerifier = 1;
}

def Tgc_GeluOp : Tgc_UnaryOp<"gelu", ["aten.gelu.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

class Tgc_BinaryOp<string mnemonic, list<string> aten, string dtypeRule = "Promoted",
                   list<string> overrides = []>
    : Tgc_Op<mnemonic, aten, [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface,
                                                              overrides>]> {
  let summary = "Elementwise " # mnemonic # " with broadcasting and type promotion";
  let arguments = (ins Tgc_TensorOrScalar:$self, Tgc_TensorOrScalar:$other);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $other attr-dict `:` type($self) `,` type($other) `->` type($result)";
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::" # dtypeRule # ", types);";
}
/// add and sub scale `other` by `alpha` first, as ATen does.
class Tgc_BinaryAlphaOp<string mnemonic, list<string> aten>
    : Tgc_BinaryOp<mnemonic, aten> {
  let arguments = (ins Tgc_TensorOrScalar:$self, Tgc_TensorOrScalar:$other,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
}

def Tgc_AddOp : Tgc_BinaryAlphaOp<"add", ["aten.add.Tensor", "aten.add.Scalar"]>;
def Tgc_SubOp : Tgc_BinaryAlphaOp<"sub", ["aten.sub.Tensor", "aten.sub.Scalar"]>;
def Tgc_RsubOp : Tgc_BinaryAlphaOp<"rsub", ["aten.rsub.Scalar", "aten.rsub.Tensor"]>;
def Tgc_MulOp : Tgc_BinaryOp<"mul", ["aten.mul.Tensor", "aten.mul.Scalar"]>;
def Tgc_DivOp : Tgc_BinaryOp<"div", ["aten.div.Tensor", "aten.div.Scalar",
                                     "aten.div.Tensor_mode", "aten.div.Scalar_mode"],
                             "FloatPromoted"> {
  let description = [{
    True division, or with `rounding_mode` ("trunc" or "floor") the rounded quotient,
    which keeps integer operands integers (as `floor_divide` and `//`). An integer
    division by zero, which ATen rejects with an error, gives 0, and the one quotient
    that overflows, the minimum divided by -1, wraps to the minimum: generated code
    never traps.
  }];
  let arguments = (ins Tgc_TensorOrScalar:$self, Tgc_TensorOrScalar:$other,
                       OptionalAttr<StrAttr>:$rounding_mode);
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "adaptor.getRoundingModeAttr() ? ::tgc::ResultDType::Promoted "
                  ": ::tgc::ResultDType::FloatPromoted, types);";
  let hasVerifier = 1;
}
def Tgc_PowOp : Tgc_BinaryOp<"pow", ["aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor",
                                     "aten.pow.Scalar"]>;
def Tgc_MaximumOp : Tgc_BinaryOp<"maximum", ["aten.maximum.default", "aten.max.other"]>;
def Tgc_MinimumOp : Tgc_BinaryOp<"minimum", ["aten.minimum.default", "aten.min.other"]>;
def Tgc_Atan2Op : Tgc_BinaryOp<"atan2", ["aten.atan2.default"], "FloatPromoted">;
def Tgc_FmodOp : Tgc_BinaryOp<"fmod", ["aten.fmod.Tensor", "aten.fmod.Scalar"]> {
  let description = [{ C's fmod: the remainder of truncated division, with the dividend's sign. }];
}
def Tgc_RemainderOp : Tgc_BinaryOp<"remainder", ["aten.remainder.Tensor",
                                                 "aten.remainder.Scalar"]> {
  let description = [{ Python's %: the remainder of floor division, with the divisor's sign. }];
}
def Tgc_EqOp : Tgc_BinaryOp<"eq", ["aten.eq.Tensor", "aten.eq.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_NeOp : Tgc_BinaryOp<"ne", ["aten.ne.Tensor", "aten.ne.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_LtOp : Tgc_BinaryOp<"lt", ["aten.lt.Tensor", "aten.lt.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_LeOp : Tgc_BinaryOp<"le", ["aten.le.Tensor", "aten.le.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_GtOp : Tgc_BinaryOp<"gt", ["aten.gt.Tensor", "aten.gt.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_GeOp : Tgc_BinaryOp<"ge", ["aten.ge.Tensor", "aten.ge.Scalar"], "Bool", ["getComputeType"]>;
def Tgc_LogicalAndOp : Tgc_BinaryOp<"logical_and", ["aten.logical_and.default"], "Bool", ["getComputeType"]>;
def Tgc_LogicalXorOp : Tgc_BinaryOp<"logical_xor", ["aten.logical_xor.default"], "Bool", ["getComputeType"]>;
def Tgc_LogicalOrOp : Tgc_BinaryOp<"logical_or", ["aten.logical_or.default"], "Bool", ["getComputeType"]>;
/// Bitwise ops of integer and bool tensors (ATen rejects floating operands too).
class Tgc_BitwiseOp<string mnemonic, list<string> aten> : Tgc_BinaryOp<mnemonic, aten> {
  let hasVerifier = 1;
}
def Tgc_BitwiseAndOp : Tgc_BitwiseOp<"bitwise_and", ["aten.bitwise_and.Tensor",
    "aten.bitwise_and.Scalar", "aten.__and__.Tensor", "aten.__and__.Scalar"]>;
def Tgc_BitwiseOrOp : Tgc_BitwiseOp<"bitwise_or", ["aten.bitwise_or.Tensor",
    "aten.bitwise_or.Scalar", "aten.__or__.Tensor", "aten.__or__.Scalar"]>;
def Tgc_BitwiseXorOp : Tgc_BitwiseOp<"bitwise_xor", ["aten.bitwise_xor.Tensor",
    "aten.bitwise_xor.Scalar", "aten.__xor__.Tensor", "aten.__xor__.Scalar"]>;
def Tgc_BitwiseLeftShiftOp : Tgc_BitwiseOp<"bitwise_left_shift", [
    "aten.bitwise_left_shift.Tensor", "aten.bitwise_left_shift.Tensor_Scalar",
    "aten.__lshift__.Tensor", "aten.__lshift__.Scalar"]> {
  let description = [{ `self << other`; 0 where `other` is negative or not below the bit
    width, as ATen's kernel gives. }];
}
def Tgc_BitwiseRightShiftOp : Tgc_BitwiseOp<"bitwise_right_shift", [
    "aten.bitwise_right_shift.Tensor", "aten.bitwise_right_shift.Tensor_Scalar",
    "aten.__rshift__.Tensor", "aten.__rshift__.Scalar"]> {
  let description = [{ `self >> other`, arithmetic on signed integers; where `other` is
    negative or past the largest shift the result is `self >>` that shift (0 or -1), as
    ATen's kernel gives. }];
}

def Tgc_WhereOp : Tgc_Op<"where", ["aten.where.self", "aten.where.ScalarOther",
                                   "aten.where.ScalarSelf", "aten.where.Scalar"],
                   [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface,
                                                   ["keepsOperandType"]>]> {
  let summary = "Select `self` where `condition` holds, else `other`";
  let arguments = (ins Tgc_AnyTensor:$condition, Tgc_TensorOrScalar:$self,
                       Tgc_TensorOrScalar:$other);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$condition `,` $self `,` $other attr-dict `:` type($condition) `,` "
                       "type($self) `,` type($other) `->` type($result)";
  let inferBody = "return ::tgc::inferWhere(ctx, loc, adaptor.getCondition(), "
                  "adaptor.getSelf(), adaptor.getOther(), types);";
}

def Tgc_MaskedFillOp : Tgc_Op<"masked_fill", ["aten.masked_fill.Scalar",
                                              "aten.masked_fill.Tensor"],
                              [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface,
                                                              ["keepsOperandType"]>]> {
  let summary = "`self` with `value` where `mask` holds";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mask, Tgc_TensorOrScalar:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $mask `,` $value attr-dict `:` type($self) `,` type($mask) "
                       "`,` type($value) `->` type($result)";
  let inferBody = "return ::tgc::inferMaskedFill(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getMask(), types);";
}

def Tgc_ToDTypeOp : Tgc_Op<"to_dtype", ["aten._to_copy.default", "aten.to.dtype",
                                        "aten.to.dtype_layout", "aten.to.device",
                                        "aten.type_as.default"],
                           [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface>]> {
  let summary = "Convert to another dtype (a copy; device moves are dropped for the target)";
  let description = [{
    `memory_format` (a torch.memory_format name; absent: contiguous_format) lays the
    capture-level result out as ATen's `to` does; it changes no value.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<Tgc_DTypeAttr>:$dtype,
                       OptionalAttr<StrAttr>:$memory_format);
  let results = (outs Tgc_AnyTensor:$result);
  let builders = [OpBuilder<(ins "::mlir::Value":$self, "::mlir::TypeAttr":$dtype), [{
    build($_builder, $_state, self, dtype, ::mlir::StringAttr());
  }]>];
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferToDType(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDtypeAttr(), types, adaptor.getMemoryFormatAttr());";
}

def Tgc_ClampOp : Tgc_Op<"clamp", ["aten.clamp.default", "aten.clamp_min.default",
                                   "aten.clamp_max.default"], [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface>]> {
  let summary = "Clamp to [min, max]";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$min,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$max);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::Promoted, types);";
}

def Tgc_ClampTensorOp : Tgc_Op<"clamp_tensor", ["aten.clamp.Tensor"],
    [Pure, AttrSizedOperandSegments, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface>]> {
  let summary = "Clamp to tensor bounds: `min(max(self, min), max)`, NaN propagating";
  let arguments = (ins Tgc_AnyTensor:$self, Optional<Tgc_AnyTensor>:$min,
                       Optional<Tgc_AnyTensor>:$max);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self (`min` $min^ `:` type($min))? (`max` $max^ `:` type($max))? "
                       "attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferElementwise(ctx, loc, adaptor.getOperands(), "
                  "::tgc::ResultDType::Promoted, types);";
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Tgc_LinearOp : Tgc_Op<"linear", ["aten.linear.default"], [Pure]> {
  let summary = "input @ weight^T + bias";
  let arguments = (ins Tgc_AnyTensor:$input, Tgc_AnyTensor:$weight,
                       Optional<Tgc_AnyTensor>:$bias);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferLinear(ctx, loc, adaptor.getInput(), "
                  "adaptor.getWeight(), adaptor.getBias(), types);";
}

def Tgc_MmOp : Tgc_Op<"mm", ["aten.mm.default"], [Pure, Tgc_NoRecompute]> {
  let summary = "Matrix product of two 2-d tensors";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mat2);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $mat2 attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferMatmul(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getMat2(), ::tgc::MatmulKind::Mm, types);";
}

def Tgc_BmmOp : Tgc_Op<"bmm", ["aten.bmm.default"], [Pure, Tgc_NoRecompute]> {
  let summary = "Batched matrix product of two 3-d tensors";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mat2);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $mat2 attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferMatmul(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getMat2(), ::tgc::MatmulKind::Bmm, types);";
}

def Tgc_MatmulOp : Tgc_Op<"matmul", ["aten.matmul.default"], [Pure]> {
  let summary = "torch.matmul: vector/matrix/batched products with broadcasting";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$other);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $other attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferMatmul(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getOther(), ::tgc::MatmulKind::Matmul, types);";
}

def Tgc_AddmmOp : Tgc_Op<"addmm", ["aten.addmm.default"], [Pure]> {
  let summary = "beta * self + alpha * (mat1 @ mat2)";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mat1, Tgc_AnyTensor:$mat2,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$beta,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $mat1 `,` $mat2 attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferAddmm(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getMat1(), adaptor.getMat2(), types);";
}

def Tgc_BaddbmmOp : Tgc_Op<"baddbmm", ["aten.baddbmm.default"], [Pure]> {
  let summary = "beta * self + alpha * (batch1 @ batch2), batched";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$batch1, Tgc_AnyTensor:$batch2,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$beta,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $batch1 `,` $batch2 attr-dict `:` type(operands) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferAddmm(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getBatch1(), adaptor.getBatch2(), types, ::tgc::MatmulKind::Bmm);";
}

def Tgc_RepeatInterleaveOp : Tgc_Op<"repeat_interleave", ["aten.repeat_interleave.self_int"],
                                    [Pure]> {
  let summary = "Each element of `self` `repeats` times in a row along `dim` (of the "
                "flattened input without one)";
  let description = [{
    A constant repeat count only (`repeat_interleave.self_int`); `output_size` is then
    implied. tgc-decompose makes it an unsqueeze, an expand and a view.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$repeats, OptionalAttr<I64Attr>:$dim,
                       OptionalAttr<I64Attr>:$output_size);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferRepeatInterleave(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getRepeats(), adaptor.getDimAttr(), types);";
}

def Tgc_ConvolutionOp : Tgc_Op<"convolution", ["aten.convolution.default",
    "aten.conv2d.default", "aten.conv1d.default", "aten.conv3d.default",
    "aten.conv_transpose1d.default", "aten.conv_transpose2d.input",
    "aten.conv_transpose3d.input"],
    [Pure, Tgc_NoRecompute]> {
  let summary = "N-d convolution (groups, stride, padding, dilation)";
  let arguments = (ins Tgc_AnyTensor:$input, Tgc_AnyTensor:$weight,
                       Optional<Tgc_AnyTensor>:$bias,
                       // Empty = the schema default (1, 0, 1 in every spatial dim).
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferConvolution(ctx, loc, adaptor.getInput(), adaptor.getWeight(), "
                  "adaptor.getStride(), adaptor.getPadding(), adaptor.getDilation(), "
                  "adaptor.getTransposed(), adaptor.getOutputPaddingAttr(), adaptor.getGroups(), types);";
  let hasVerifier = 1;
}

def Tgc_ConvolutionBackwardInputOp : Tgc_Op<"convolution_backward_input", [],
                                            [Pure, Tgc_NoRecompute]> {
  let summary = "Gradient of a (non-transposed) convolution with respect to its input";
  let description = [{
    grad_input of `aten.convolution_backward`: the transposed convolution of
    `grad_output` [N, F, OH, OW] with `weight` [F, C/groups, KH, KW] back onto an input
    of sizes `input_size` [N, C, H, W]. Input positions no window reads (past the last
    window) get 0.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$weight,
                       Tgc_ShapeAttr:$input_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $weight attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferConvolutionBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getWeight(), adaptor.getInputSize(), adaptor.getStride(), "
                  "adaptor.getPadding(), adaptor.getDilation(), adaptor.getGroups(), "
                  "::tgc::ConvolutionGradient::Input, types);";
}

def Tgc_ConvolutionBackwardWeightOp : Tgc_Op<"convolution_backward_weight", [],
                                             [Pure, Tgc_NoRecompute]> {
  let summary = "Gradient of a (non-transposed) convolution with respect to its weight";
  let description = [{
    grad_weight of `aten.convolution_backward`: the correlation of `grad_output`
    [N, F, OH, OW] with `input` [N, C, H, W], summed over the batch, giving a weight of
    sizes `weight_size` [F, C/groups, KH, KW].
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$input,
                       Tgc_ShapeAttr:$weight_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $input attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferConvolutionBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getInput(), adaptor.getWeightSize(), adaptor.getStride(), "
                  "adaptor.getPadding(), adaptor.getDilation(), adaptor.getGroups(), "
                  "::tgc::ConvolutionGradient::Weight, types);";
}

def Tgc_ConvolutionBackwardOp : Tgc_Op<"convolution_backward",
    ["aten.convolution_backward.default"], [Pure]> {
  let summary = "Gradients of a convolution: input, weight and bias";
  let description = [{
    What `aten.convolution_backward` computes, for the convolution of `input` with
    `weight` (transposed or not). Every gradient is computed (the bias's is the sum of
    `grad_output` over all but the channels); `output_mask` only says which ones the
    caller uses. tgc-decompose rewrites it into convolution_backward_input/_weight (a
    transposed convolution's input gradient is a convolution).
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$input, Tgc_AnyTensor:$weight,
                       OptionalAttr<Tgc_ShapeAttr>:$bias_sizes,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       OptionalAttr<DenseBoolArrayAttr>:$output_mask);
  let results = (outs Tgc_AnyTensor:$grad_input, Tgc_AnyTensor:$grad_weight,
                      Tgc_AnyTensor:$grad_bias);
  let assemblyFormat = "$grad_output `,` $input `,` $weight attr-dict `:` type(operands) `->` "
                       "type(results)";
  let inferBody = "return ::tgc::inferConvolutionBackwardAll(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getInput(), adaptor.getWeight(), types);";
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

def Tgc_BatchNormOp : Tgc_Op<"batch_norm", ["aten.batch_norm.default",
    "aten._native_batch_norm_legit_functional.default", "aten.native_batch_norm.default",
    "aten._native_batch_norm_legit_no_training.default", "aten._native_batch_norm_legit.default",
    "aten._native_batch_norm_legit.no_stats"],
    [AttrSizedOperandSegments, DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "Batch normalization; in training mode it updates the running statistics";
  let description = [{
    Results: the normalized output, the batch mean and the inverse standard deviation
    (as `native_batch_norm` returns them; empty in eval mode), then, when `functional`
    is set, the new running mean and running variance. Without `functional`, in training
    mode, the op writes the new running statistics into `running_mean`/`running_var`
    (capture level); functionalization turns it into the functional form.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, Optional<Tgc_AnyTensor>:$weight,
                       Optional<Tgc_AnyTensor>:$bias, Optional<Tgc_AnyTensor>:$running_mean,
                       Optional<Tgc_AnyTensor>:$running_var,
                       BoolAttr:$training, F64Attr:$momentum, F64Attr:$eps,
                       UnitAttr:$functional);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? "
                       "(`running` $running_mean^ `,` $running_var)? attr-dict `:` "
                       "type(operands) `->` type($results)";
  let inferBody = "return ::tgc::inferBatchNorm(ctx, loc, adaptor.getInput(), adaptor.getTraining(), "
                  "adaptor.getFunctional(), types);";
  let hasVerifier = 1;
}

def Tgc_LayerNormOp : Tgc_Op<"layer_norm", ["aten.layer_norm.default",
                                            "aten.native_layer_norm.default"],
                             [Pure, AttrSizedOperandSegments]> {
  let summary = "Layer normalization over the trailing `normalized_shape` dimensions";
  let description = [{
    With `native`, results are (output, mean, rstd) as `native_layer_norm` returns them;
    otherwise just the output.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, DenseI64ArrayAttr:$normalized_shape,
                       Optional<Tgc_AnyTensor>:$weight, Optional<Tgc_AnyTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1e-05">:$eps, UnitAttr:$native);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` "
                       "type(operands) `->` type($results)";
  let inferBody = "return ::tgc::inferLayerNorm(ctx, loc, adaptor.getInput(), adaptor.getNormalizedShape(), "
                  "adaptor.getNative(), types);";
}

def Tgc_GroupNormOp : Tgc_Op<"group_norm", ["aten.group_norm.default",
                                            "aten.native_group_norm.default"],
                             [Pure, AttrSizedOperandSegments]> {
  let summary = "Group normalization: the channels in `group` groups, each normalized with "
                "its own statistics over its channels and the spatial dimensions";
  let description = [{
    With `native`, results are (output, mean, rstd) as `native_group_norm` returns them,
    the statistics [N, group]; otherwise just the output.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, Optional<Tgc_AnyTensor>:$weight,
                       Optional<Tgc_AnyTensor>:$bias, I64Attr:$group,
                       DefaultValuedAttr<F64Attr, "1e-05">:$eps, UnitAttr:$native);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` "
                       "type(operands) `->` type($results)";
  let inferBody = "return ::tgc::inferGroupNorm(ctx, loc, adaptor.getInput(), adaptor.getGroup(), "
                  "adaptor.getNative(), types);";
}

def Tgc_LayerNormBackwardOp : Tgc_Op<"layer_norm_backward",
    ["aten.native_layer_norm_backward.default"], [Pure, AttrSizedOperandSegments]> {
  let summary = "Gradients of native_layer_norm: input, weight and bias";
  let description = [{
    From the forward's `mean` and `rstd` (kept sizes: the normalized dimensions are 1).
    Every gradient is computed; `output_mask` only says which ones the caller uses.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_out, Tgc_AnyTensor:$input,
                       DenseI64ArrayAttr:$normalized_shape, Tgc_AnyTensor:$mean,
                       Tgc_AnyTensor:$rstd, Optional<Tgc_AnyTensor>:$weight,
                       Optional<Tgc_AnyTensor>:$bias, OptionalAttr<DenseBoolArrayAttr>:$output_mask);
  let results = (outs Tgc_AnyTensor:$grad_input, Tgc_AnyTensor:$grad_weight,
                      Tgc_AnyTensor:$grad_bias);
  let assemblyFormat = "$grad_out `,` $input `,` $mean `,` $rstd (`weight` $weight^)? "
                       "(`bias` $bias^)? attr-dict `:` type(operands) `->` type(results)";
  let inferBody = "return ::tgc::inferNormBackward(ctx, loc, adaptor.getGradOut(), "
                  "adaptor.getInput(), adaptor.getNormalizedShape(), types);";
}

def Tgc_GroupNormBackwardOp : Tgc_Op<"group_norm_backward",
    ["aten.native_group_norm_backward.default"], [Pure]> {
  let summary = "Gradients of native_group_norm: input, weight and bias";
  let description = [{
    From the forward's `mean` and `rstd` [N, group]. Every gradient is computed;
    `output_mask` only says which ones the caller uses.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_out, Tgc_AnyTensor:$input, Tgc_AnyTensor:$mean,
                       Tgc_AnyTensor:$rstd, Optional<Tgc_AnyTensor>:$weight, I64Attr:$group,
                       OptionalAttr<DenseBoolArrayAttr>:$output_mask);
  let results = (outs Tgc_AnyTensor:$grad_input, Tgc_AnyTensor:$grad_weight,
                      Tgc_AnyTensor:$grad_bias);
  let assemblyFormat = "$grad_out `,` $input `,` $mean `,` $rstd (`weight` $weight^)? attr-dict "
                       "`:` type(operands) `->` type(results)";
  let inferBody = "return ::tgc::inferNormBackward(ctx, loc, adaptor.getGradOut(), "
                  "adaptor.getInput(), {}, types);";
}

def Tgc_SoftmaxOp : Tgc_Op<"softmax", ["aten.softmax.int", "aten._softmax.default"], [Pure]> {
  let summary = "Softmax along `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, OptionalAttr<Tgc_DTypeAttr>:$dtype,
                       UnitAttr:$log);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferSoftmax(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getDtypeAttr(), types);";
}

def Tgc_CumsumOp : Tgc_Op<"cumsum", ["aten.cumsum.default"], [Pure]> {
  let summary = "Cumulative sum along `dim` (from its end with `reverse`)";
  let description = [{
    ATen's cumsum: integer and bool tensors sum into int64 unless `dtype` says
    otherwise. `reverse` (tgc's own, for the derivative) sums from the last element:
    result[i] = sum of self[j] for j >= i.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, OptionalAttr<Tgc_DTypeAttr>:$dtype,
                       UnitAttr:$reverse);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferCumsum(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getDtypeAttr(), types);";
}

def Tgc_CumprodOp : Tgc_Op<"cumprod", ["aten.cumprod.default"], [Pure]> {
  let summary = "Cumulative product along `dim`";
  let description = [{
    ATen's cumprod: integer and bool tensors multiply into int64 unless `dtype` says
    otherwise.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, OptionalAttr<Tgc_DTypeAttr>:$dtype);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferCumsum(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getDtypeAttr(), types);";
}

def Tgc_WeightNormOp : Tgc_Op<"weight_norm", ["aten._weight_norm.default"], [Pure]> {
  let summary = "v * g / ||v||, the norm over every dimension but `dim` (all for -1)";
  let arguments = (ins Tgc_AnyTensor:$v, Tgc_AnyTensor:$g, DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$v `,` $g attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getV(), types);";
}

def Tgc_LogSoftmaxOp : Tgc_Op<"log_softmax", ["aten.log_softmax.int",
                                              "aten._log_softmax.default"], [Pure]> {
  let summary = "Log-softmax along `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, OptionalAttr<Tgc_DTypeAttr>:$dtype);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferSoftmax(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getDtypeAttr(), types);";
}

def Tgc_CdistOp : Tgc_Op<"cdist", ["aten._cdist_forward.default", "aten.cdist.default"],
                         [Pure]> {
  let summary = "p-norm distances between the rows of x1 [.., P, M] and x2 [.., R, M]";
  let description = [{
    Result [.., P, R]: || x1[.., i, :] - x2[.., j, :] ||_p; p = 0 counts the differing
    elements, p = inf takes the largest difference. `compute_mode` (whether ATen may
    use a matrix product for p = 2) does not change the values tgc computes.
  }];
  let arguments = (ins Tgc_AnyTensor:$x1, Tgc_AnyTensor:$x2, DefaultValuedAttr<F64Attr, "2.0">:$p,
                       OptionalAttr<I64Attr>:$compute_mode);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$x1 `,` $x2 attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferCdist(ctx, loc, adaptor.getX1(), adaptor.getX2(), types);";
}

def Tgc_PdistOp : Tgc_Op<"pdist", ["aten._pdist_forward.default", "aten.pdist.default"], [Pure]> {
  let summary = "p-norm distances between each pair of rows i < j of `self` [N, M]";
  let description = [{
    Result [N * (N - 1) / 2], the pairs in row-major order of the upper triangle.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<F64Attr, "2.0">:$p);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferPdist(ctx, loc, adaptor.getSelf(), types);";
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Tgc_NllLossOp : Tgc_Op<"nll_loss", ["aten.nll_loss_forward.default",
    "aten.nll_loss2d_forward.default", "aten.nll_loss.default", "aten.nll_loss2d.default"],
    [Pure]> {
  let summary = "Negative log-likelihood of class indices; also the total weight";
  let description = [{
    `self` holds log-probabilities [N, C, d...] (or [C]), `target` class indices
    [N, d...] (or []). Element i contributes `-weight[t] * self[i, t]` with
    `t = target[i]`, or nothing when `t == ignore_index`. `reduction` is ATen's enum:
    0 none (the per-element losses), 1 mean (their sum divided by the total weight), 2
    sum. The second result is the total weight of the counted elements (0 for none), as
    `aten.nll_loss_forward` returns it for the backward. Class indices outside [0, C)
    read a clamped index instead of failing.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$target,
                       Optional<Tgc_AnyTensor>:$weight,
                       DefaultValuedAttr<I64Attr, "1">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Tgc_AnyTensor:$output, Tgc_AnyTensor:$total_weight);
  let assemblyFormat = "$self `,` $target (`weight` $weight^)? attr-dict `:` type(operands) "
                       "`->` type(results)";
  let inferBody = "return ::tgc::inferNllLoss(ctx, loc, adaptor.getSelf(), adaptor.getTarget(), "
                  "adaptor.getWeight(), adaptor.getReduction(), /*withTotalWeight=*/true, types);";
}

def Tgc_NllLossBackwardOp : Tgc_Op<"nll_loss_backward", ["aten.nll_loss_backward.default",
    "aten.nll_loss2d_backward.default"], [Pure]> {
  let summary = "Gradient of nll_loss with respect to `self`";
  let description = [{
    `-weight[t] * g` at each element's target class and 0 elsewhere (and on ignored
    elements), where g is `grad_output[i]` (reduction none), `grad_output` (sum) or
    `grad_output / total_weight` (mean).
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$self, Tgc_AnyTensor:$target,
                       Optional<Tgc_AnyTensor>:$weight, Tgc_AnyTensor:$total_weight,
                       DefaultValuedAttr<I64Attr, "1">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $self `,` $target (`weight` $weight^)? `total` "
                       "$total_weight attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferNllLossBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getSelf(), adaptor.getTarget(), adaptor.getWeight(), "
                  "adaptor.getTotalWeight(), adaptor.getReduction(), types);";
}

def Tgc_CrossEntropyLossOp : Tgc_Op<"cross_entropy_loss", ["aten.cross_entropy_loss.default"],
                                    [Pure]> {
  let summary = "nll_loss of log_softmax over the class dimension (F.cross_entropy)";
  let description = [{
    With class-index targets (an integer `target`), decomposition makes it
    `nll_loss(log_softmax(self, class dim), target, weight)`; `label_smoothing` and
    class-probability targets are not supported yet (decomposition reports them).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$target,
                       Optional<Tgc_AnyTensor>:$weight,
                       DefaultValuedAttr<I64Attr, "1">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $target (`weight` $weight^)? attr-dict `:` type(operands) "
                       "`->` type($result)";
  let inferBody = "return ::tgc::inferNllLoss(ctx, loc, adaptor.getSelf(), adaptor.getTarget(), "
                  "adaptor.getWeight(), adaptor.getReduction(), /*withTotalWeight=*/false, types);";
  let hasVerifier = 1;
}

/// Losses of `self` against `target` element by element, with ATen's `reduction`: 0
/// none (the losses, at the broadcast sizes), 1 mean, 2 sum. tgc-decompose writes each
/// as elementwise ops and a reduction.
class Tgc_PointwiseLossOp<string mnemonic, list<string> aten, dag extra = (ins),
                          list<Trait> traits = []>
    : Tgc_Op<mnemonic, aten, !listconcat([Pure], traits)> {
  let arguments = !con((ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$target), extra,
                       (ins DefaultValuedAttr<I64Attr, "1">:$reduction));
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $target attr-dict `:` type($self) `,` type($target) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferPointwiseLoss(ctx, loc, adaptor.getOperands(), "
                  "adaptor.getReduction(), types);";
}
def Tgc_MseLossOp : Tgc_PointwiseLossOp<"mse_loss", ["aten.mse_loss.default"]> {
  let summary = "(self - target)^2";
}
def Tgc_L1LossOp : Tgc_PointwiseLossOp<"l1_loss", ["aten.l1_loss.default"]> {
  let summary = "|self - target|";
}
def Tgc_SmoothL1LossOp : Tgc_PointwiseLossOp<"smooth_l1_loss", ["aten.smooth_l1_loss.default"],
    (ins DefaultValuedAttr<F64Attr, "1.0">:$beta)> {
  let summary = "0.5 d^2 / beta where d = |self - target| < beta, else d - 0.5 beta";
}
def Tgc_HuberLossOp : Tgc_PointwiseLossOp<"huber_loss", ["aten.huber_loss.default"],
    (ins DefaultValuedAttr<F64Attr, "1.0">:$delta)> {
  let summary = "0.5 d^2 where d = |self - target| < delta, else delta (d - 0.5 delta)";
}
def Tgc_BinaryCrossEntropyOp : Tgc_PointwiseLossOp<"binary_cross_entropy",
    ["aten.binary_cross_entropy.default"], (ins Optional<Tgc_AnyTensor>:$weight)> {
  let summary = "-weight (target log(self) + (1 - target) log(1 - self)), logs clamped at -100";
  let assemblyFormat = "$self `,` $target (`weight` $weight^)? attr-dict `:` type(operands) "
                       "`->` type($result)";
}
def Tgc_BinaryCrossEntropyWithLogitsOp : Tgc_PointwiseLossOp<"binary_cross_entropy_with_logits",
    ["aten.binary_cross_entropy_with_logits.default"],
    (ins Optional<Tgc_AnyTensor>:$weight, Optional<Tgc_AnyTensor>:$pos_weight),
    [AttrSizedOperandSegments]> {
  let summary = "binary_cross_entropy of sigmoid(self), computed stably from the logits";
  let description = [{
    `-weight (pos_weight target log(sigmoid(self)) + (1 - target) log(1 - sigmoid(self)))`,
    as ATen computes it: `(1 - target) self + (1 + (pos_weight - 1) target)
    (log(exp(-m) + exp(-self - m)) + m)` with `m = max(-self, 0)`.
  }];
  let assemblyFormat = "$self `,` $target (`weight` $weight^)? (`pos_weight` $pos_weight^)? "
                       "attr-dict `:` type(operands) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Indexing: embedding, gather
//===----------------------------------------------------------------------===//

def Tgc_GatherOp : Tgc_Op<"gather", ["aten.gather.default"], [Pure]> {
  let summary = "self[.., index[i], ..] along `dim`: result sizes are the index's";
  let description = [{
    Indices outside the dimension read a clamped position instead of failing.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index,
                       DefaultValuedAttr<BoolAttr, "false">:$sparse_grad);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index attr-dict `:` type($self) `,` type($index) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferGather(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), types);";
}

/// The scatter family: `self` with the elements of `src` (or the scalar `value`) written
/// at `index` along `dim` (result[..., index[i], ...] for each position i of `index`),
/// combined by `reduce` with what is there: "none" (the last write wins), "sum",
/// "prod", "mean", "amax", "amin"; `include_self = false` leaves the old values of the
/// written positions out. Indices outside the dimension are skipped.
def Tgc_ScatterOp : Tgc_Op<"scatter", ["aten.scatter.src"], [Pure]> {
  let summary = "Write `src` at `index` along `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index,
                       Tgc_AnyTensor:$src);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index `,` $src attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferScatter(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), adaptor.getSrc(), types);";
  code extraDecl = "::llvm::StringRef getReduce() { return \"none\"; } "
                   "bool getIncludeSelf() { return true; }";
}
def Tgc_ScatterValueOp : Tgc_Op<"scatter_value", ["aten.scatter.value"], [Pure]> {
  let summary = "Write the scalar `value` at `index` along `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index,
                       Tgc_TensorOrScalar:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index `,` $value attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferScatter(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), nullptr, types);";
  code extraDecl = "::llvm::StringRef getReduce() { return \"none\"; } "
                   "bool getIncludeSelf() { return true; }";
}
def Tgc_MaskedScatterOp : Tgc_Op<"masked_scatter", ["aten.masked_scatter.default"], [Pure]> {
  let summary = "`self` with the positions where `mask` is true taken from `source`, in order";
  let description = [{
    `self` and `mask` broadcast together; the k-th true position of the mask
    (row-major) gets element k of `source` (flattened). tgc-decompose gathers `source` at the running count of
    true positions (a cumsum).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mask, Tgc_AnyTensor:$source);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $mask `,` $source attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferMaskedScatter(ctx, loc, adaptor.getSelf(), adaptor.getMask(), "
                  "adaptor.getSource(), types);";
}

def Tgc_Col2ImOp : Tgc_Op<"col2im", ["aten.col2im.default"], [Pure]> {
  let summary = "Fold: sums sliding-window columns back into an image (the inverse layout "
                "of unfold)";
  let description = [{
    `self` [N, C * KH * KW, L] (or without N) holds, for each of the L window positions
    of a [C, output_size] image, the window's elements; each is added to the image
    element it was read from (none where it falls in the padding). tgc-decompose makes
    it a scatter_add at constant positions.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$output_size,
                       DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$dilation,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$stride);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferCol2Im(ctx, loc, adaptor.getSelf(), adaptor.getOutputSize(), "
                  "adaptor.getKernelSize(), adaptor.getDilation(), adaptor.getPadding(), "
                  "adaptor.getStride(), types);";
}

def Tgc_ScatterAddOp : Tgc_Op<"scatter_add", ["aten.scatter_add.default"], [Pure]> {
  let summary = "Add `src` at `index` along `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index,
                       Tgc_AnyTensor:$src);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index `,` $src attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferScatter(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), adaptor.getSrc(), types);";
  code extraDecl = "::llvm::StringRef getReduce() { return \"sum\"; } "
                   "bool getIncludeSelf() { return true; }";
}
def Tgc_ScatterReduceOp : Tgc_Op<"scatter_reduce", ["aten.scatter_reduce.two",
                                                   "aten.scatter.reduce"], [Pure]> {
  let summary = "Combine `src` at `index` along `dim` by `reduce` (`scatter(reduce=)`'s "
                "\"add\" and \"multiply\" are \"sum\" and \"prod\")";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index,
                       Tgc_AnyTensor:$src, StrAttr:$reduce,
                       DefaultValuedAttr<BoolAttr, "true">:$include_self);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index `,` $src attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferScatter(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), adaptor.getSrc(), types);";
  let hasVerifier = 1;
}

def Tgc_IndexOp : Tgc_Op<"index", ["aten.index.Tensor"], [Pure]> {
  let summary = "Advanced indexing self[i0, i1, ...] by integer tensors on the leading "
                "dimensions";
  let description = [{
    `indices` index the first `len(indices)` dimensions of `self`, or the dimensions
    `dims` (increasing; `aten.index.Tensor` with `None` entries), and broadcast
    together. As in ATen, the broadcast sizes replace the indexed dimensions when those
    are adjacent, and come first otherwise; the other dimensions of `self` keep their
    order. A negative index counts from the end; an index outside the dimension reads a
    clamped position instead of failing. tgc-decompose moves the indexed dimensions to
    the front (permutes), so the lowering and the derivative see leading indices only.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Variadic<Tgc_AnyTensor>:$indices,
                       OptionalAttr<DenseI64ArrayAttr>:$dims);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `[` $indices `]` attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferIndex(ctx, loc, adaptor.getSelf(), adaptor.getIndices(), "
                  "adaptor.getDimsAttr(), types);";
}

def Tgc_IndexPutOp : Tgc_Op<"index_put", ["aten.index_put.default"], [Pure]> {
  let summary = "`self` with `values` written (or added) at self[indices]";
  let description = [{
    `indices` and `dims` as for `tgc.index`; `values` broadcasts to the shape of
    self[indices]. With `accumulate` the values are added (repeated positions add up),
    else written in order (the last write wins). A negative index counts from the end;
    indices outside the dimension are skipped. tgc-decompose brings it to the form the
    lowering takes: indexed dimensions leading, indices broadcast to one shape B and
    `values` expanded to B + the other sizes.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Variadic<Tgc_AnyTensor>:$indices,
                       Tgc_AnyTensor:$values, DefaultValuedAttr<BoolAttr, "false">:$accumulate,
                       OptionalAttr<DenseI64ArrayAttr>:$dims);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `[` $indices `]` `,` $values attr-dict `:` type(operands) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_IndexSelectOp : Tgc_Op<"index_select", ["aten.index_select.default"], [Pure]> {
  let summary = "The entries `index` (a 1-d or 0-d integer tensor) of dimension `dim`";
  let description = [{ tgc-decompose rewrites it into `tgc.index` with `dims = [dim]`. }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, Tgc_AnyTensor:$index);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $index attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferIndexSelect(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), types);";
}

def Tgc_EmbeddingOp : Tgc_Op<"embedding", ["aten.embedding.default"], [Pure]> {
  let summary = "Rows of `weight` [V, D] at `indices`: result sizes are indices' + [D]";
  let description = [{
    `padding_idx`, `scale_grad_by_freq` and `sparse` only matter to the backward
    (`tgc.embedding_backward`). Indices outside [0, V) read a clamped row instead of
    failing.
  }];
  let arguments = (ins Tgc_AnyTensor:$weight, Tgc_AnyTensor:$indices,
                       DefaultValuedAttr<I64Attr, "-1">:$padding_idx,
                       DefaultValuedAttr<BoolAttr, "false">:$scale_grad_by_freq,
                       DefaultValuedAttr<BoolAttr, "false">:$sparse);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$weight `,` $indices attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferEmbedding(ctx, loc, adaptor.getWeight(), "
                  "adaptor.getIndices(), types);";
}

def Tgc_EmbeddingBagOp : Tgc_Op<"embedding_bag", ["aten._embedding_bag.default",
    "aten._embedding_bag_forward_only.default", "aten.embedding_bag.padding_idx",
    "aten.embedding_bag.default"], [Pure]> {
  let summary = "Sums, means or maxima of bags of rows of `weight` [V, D]";
  let description = [{
    Bag b holds the entries `indices[offsets[b] : offsets[b + 1]]` (the last one runs to
    the end of `indices`, or `offsets` ends with the end when `include_last_offset`).
    `mode` 0 sums the rows (each scaled by `per_sample_weights` when given), 1 averages
    them, 2 takes their elementwise maximum; entries equal to `padding_idx` (when it is
    not negative) are left out, and an empty bag gives zeros.

    Results, with the sizes ATen's CPU kernel gives them: the bags [B, D]; `offset2bag`,
    each entry's bag ([0] for a sum of float rows without padding_idx); `bag_size`, the
    number of entries each bag reduced; `max_indices`, for mode 2 the row each maximum
    came from (the first where several are equal; 0 in an empty bag), else [B] zeros.
    tgc-decompose computes them with scatter-adds into the bags (the derivative comes
    from the ops it builds); `scale_grad_by_freq` is not supported.
  }];
  let arguments = (ins Tgc_AnyTensor:$weight, Tgc_AnyTensor:$indices, Tgc_AnyTensor:$offsets,
                       DefaultValuedAttr<BoolAttr, "false">:$scale_grad_by_freq,
                       DefaultValuedAttr<I64Attr, "0">:$mode,
                       DefaultValuedAttr<BoolAttr, "false">:$sparse,
                       Optional<Tgc_AnyTensor>:$per_sample_weights,
                       DefaultValuedAttr<BoolAttr, "false">:$include_last_offset,
                       DefaultValuedAttr<I64Attr, "-1">:$padding_idx);
  let results = (outs Tgc_AnyTensor:$result, Tgc_AnyTensor:$offset2bag, Tgc_AnyTensor:$bag_size,
                      Tgc_AnyTensor:$max_indices);
  let assemblyFormat = "$weight `,` $indices `,` $offsets (`weights` $per_sample_weights^ `:` "
                       "type($per_sample_weights))? attr-dict `:` type($weight) `,` "
                       "type($indices) `,` type($offsets) `->` type(results)";
  let inferBody = "return ::tgc::inferEmbeddingBag(ctx, loc, adaptor.getWeight(), "
                  "adaptor.getIndices(), adaptor.getOffsets(), adaptor.getPerSampleWeights(), "
                  "adaptor.getMode(), adaptor.getIncludeLastOffset(), adaptor.getPaddingIdx(), "
                  "types);";
}

def Tgc_EmbeddingBackwardOp : Tgc_Op<"embedding_backward",
                                     ["aten.embedding_dense_backward.default"], [Pure]> {
  let summary = "Gradient of embedding with respect to its weight";
  let description = [{
    A [num_weights, D] tensor of zeros into which each row of `grad_output`
    [indices..., D] is added at its index; the row `padding_idx` stays 0 (a negative
    `padding_idx` means none). Indices outside [0, num_weights) are skipped.
    `scale_grad_by_freq` is not supported yet.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$indices,
                       I64Attr:$num_weights,
                       DefaultValuedAttr<I64Attr, "-1">:$padding_idx,
                       DefaultValuedAttr<BoolAttr, "false">:$scale_grad_by_freq);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $indices attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferEmbeddingBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getIndices(), adaptor.getNumWeights(), types);";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Tgc_ReductionOp<string mnemonic, list<string> aten>
    : Tgc_Op<mnemonic, aten, [Pure]> {
  let summary = mnemonic # " over `dim` (all dims when absent)";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<DenseI64ArrayAttr>:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferReduction(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), adaptor.getKeepdim(), adaptor.getDtypeAttr(), "
                  "::tgc::ReductionKind::" # mnemonic # ", types);";
}
def Tgc_SumOp : Tgc_ReductionOp<"sum", ["aten.sum.dim_IntList", "aten.sum.default"]>;
def Tgc_AnyOp : Tgc_ReductionOp<"any", ["aten.any.dim", "aten.any.dims", "aten.any.default"]>;
def Tgc_AllOp : Tgc_ReductionOp<"all", ["aten.all.dim", "aten.all.dims", "aten.all.default"]>;
def Tgc_MeanOp : Tgc_ReductionOp<"mean", ["aten.mean.dim", "aten.mean.default"]>;
def Tgc_AmaxOp : Tgc_ReductionOp<"amax", ["aten.amax.default", "aten.max.default"]>;
def Tgc_AminOp : Tgc_ReductionOp<"amin", ["aten.amin.default", "aten.min.default"]>;
def Tgc_ProdOp : Tgc_ReductionOp<"prod", ["aten.prod.dim_int", "aten.prod.default"]>;

def Tgc_VectorNormOp : Tgc_Op<"vector_norm", ["aten.linalg_vector_norm.default"], [Pure]> {
  let summary = "The `ord`-norm over `dim` (all dims when absent)";
  let description = [{
    As `torch.linalg.vector_norm` of a real tensor: `sum(|x|^ord)^(1/ord)`, the largest
    (`inf`) or smallest (`-inf`) |x|, or the number of non-zeros (`0`), in `dtype` when
    given. tgc-decompose rewrites it into elementwise ops and reductions; the 2-norm and
    p-norms of an all-zero slice have gradient 0 there, as ATen's norm backward gives.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<F64Attr, "2.0">:$ord,
                       OptionalAttr<DenseI64ArrayAttr>:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferReduction(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), adaptor.getKeepdim(), adaptor.getDtypeAttr(), "
                  "::tgc::ReductionKind::mean, types);";
}

/// The extremum over `dim` and the index of its first occurrence (NaN counts as the
/// extremum, as in ATen); `keepdim` keeps `dim` with size 1.
class Tgc_ExtremumDimOp<string mnemonic, list<string> aten, bit isMax>
    : Tgc_Op<mnemonic, aten, [Pure]> {
  let summary = mnemonic # ": values and indices of the extremum over `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Tgc_AnyTensor:$values, Tgc_AnyTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($values) `,` type($indices)";
  let inferBody = "return ::tgc::inferArgReduction(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), adaptor.getKeepdim(), /*withValues=*/true, types);";
  code extraDecl = "static constexpr bool isMax = " # !if(isMax, "true", "false") # ";";
}
def Tgc_MaxDimOp : Tgc_ExtremumDimOp<"max_dim", ["aten.max.dim"], 1>;
def Tgc_MinDimOp : Tgc_ExtremumDimOp<"min_dim", ["aten.min.dim"], 0>;

/// The index of the first extremum over `dim`, or over the flattened input (a linear
/// index) when `dim` is absent.
class Tgc_ArgExtremumOp<string mnemonic, list<string> aten, bit isMax>
    : Tgc_Op<mnemonic, aten, [Pure]> {
  let summary = mnemonic # ": index of the first extremum";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<I64Attr>:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferArgReduction(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), adaptor.getKeepdim(), /*withValues=*/false, types);";
  code extraDecl = "static constexpr bool isMax = " # !if(isMax, "true", "false") # ";";
}
def Tgc_ArgmaxOp : Tgc_ArgExtremumOp<"argmax", ["aten.argmax.default"], 1>;
def Tgc_ArgminOp : Tgc_ArgExtremumOp<"argmin", ["aten.argmin.default"], 0>;

def Tgc_VarOp : Tgc_Op<"var", ["aten.var.correction", "aten.var.dim"], [Pure]> {
  let summary = "Variance over `dim` with Bessel `correction`";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<DenseI64ArrayAttr>:$dim,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$correction,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferReduction(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), adaptor.getKeepdim(), nullptr, "
                  "::tgc::ReductionKind::var, types);";
}

//===----------------------------------------------------------------------===//
// Views: results alias `self` on capture-level tensors
//===----------------------------------------------------------------------===//

class Tgc_ViewOp<string mnemonic, list<string> aten>
    : Tgc_Op<mnemonic, aten, [Pure, DeclareOpInterfaceMethods<Tgc_ViewOpInterface,
                                                              ["buildScatter"]>]> {
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
}

def Tgc_ViewOp : Tgc_ViewOp<"view", ["aten.view.default", "aten.reshape.default",
                                     "aten._unsafe_view.default"]> {
  let summary = "Reinterpret with new sizes (one may be -1)";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_ShapeAttr:$size);
  let inferBody = "return ::tgc::inferView(ctx, loc, adaptor.getSelf(), adaptor.getSize(), "
                  "types);";
}
def Tgc_PermuteOp : Tgc_ViewOp<"permute", ["aten.permute.default"]> {
  let summary = "Reorder dimensions";
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$dims);
  let inferBody = "return ::tgc::inferPermute(ctx, loc, adaptor.getSelf(), adaptor.getDims(), "
                  "types);";
}
def Tgc_TransposeOp : Tgc_ViewOp<"transpose", ["aten.transpose.int"]> {
  let summary = "Swap two dimensions";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim0, I64Attr:$dim1);
  let inferBody = "return ::tgc::inferTranspose(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDim0(), adaptor.getDim1(), types);";
}
def Tgc_TOp : Tgc_ViewOp<"t", ["aten.t.default", "aten.numpy_T.default"]> {
  let summary = "Transpose a tensor of rank <= 2";
  let arguments = (ins Tgc_AnyTensor:$self);
  let inferBody = "return ::tgc::inferTranspose(ctx, loc, adaptor.getSelf(), 0, 1, types);";
}
def Tgc_ExpandOp : Tgc_ViewOp<"expand", ["aten.expand.default"]> {
  let summary = "Broadcast to `size` without copying (-1 keeps a size)";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_ShapeAttr:$size);
  let inferBody = "return ::tgc::inferExpand(ctx, loc, adaptor.getSelf(), adaptor.getSize(), "
                  "types);";
}
def Tgc_UnsqueezeOp : Tgc_ViewOp<"unsqueeze", ["aten.unsqueeze.default"]> {
  let summary = "Insert a size-1 dimension";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim);
  let inferBody = "return ::tgc::inferUnsqueeze(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDim(), types);";
}
def Tgc_SqueezeOp : Tgc_ViewOp<"squeeze", ["aten.squeeze.dim", "aten.squeeze.dims",
                                           "aten.squeeze.default"]> {
  let summary = "Remove size-1 dimensions (those in `dim`, or all)";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<DenseI64ArrayAttr>:$dim);
  let inferBody = "return ::tgc::inferSqueeze(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), types);";
}
def Tgc_SliceOp : Tgc_ViewOp<"slice", ["aten.slice.Tensor"]> {
  let summary = "Elements start:end:step of one dimension (clamped as Python does)";
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "0">:$dim,
                       OptionalAttr<Tgc_ShapeAttr>:$start, OptionalAttr<Tgc_ShapeAttr>:$end,
                       DefaultValuedAttr<I64Attr, "1">:$step);
  let inferBody = "return ::tgc::inferSlice(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getStartAttr(), adaptor.getEndAttr(), adaptor.getStep(), types);";
}
def Tgc_SelectOp : Tgc_ViewOp<"select", ["aten.select.int"]> {
  let summary = "Index one dimension away";
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim, I64Attr:$index);
  let inferBody = "return ::tgc::inferSelect(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getIndex(), types);";
}
def Tgc_AliasOp : Tgc_ViewOp<"alias", ["aten.alias.default", "aten.lift_fresh.default"]> {
  let summary = "The same tensor";
  let arguments = (ins Tgc_AnyTensor:$self);
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getSelf(), types);";
}
def Tgc_DetachOp : Tgc_ViewOp<"detach", ["aten.detach.default"]> {
  let summary = "The same tensor, cut from the autograd graph (no gradient flows back)";
  let arguments = (ins Tgc_AnyTensor:$self);
  let inferBody = "return ::tgc::inferDetach(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_SplitOp : Tgc_Op<"split", ["aten.split.Tensor", "aten.split_with_sizes.default"],
                         [Pure]> {
  let summary = "Split one dimension into chunks (views of `self`)";
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$split_sizes,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($results)";
  let inferBody = "return ::tgc::inferSplit(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getSplitSizes(), adaptor.getDim(), types);";
}

def Tgc_UnbindOp : Tgc_Op<"unbind", ["aten.unbind.int"], [Pure]> {
  let summary = "The slices of one dimension, each without it (views of `self`)";
  let description = [{
    As `torch.unbind`: result i is `select(self, dim, i)`; the dimension's size must be
    static. tgc-decompose rewrites it into those selects.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($results)";
  let inferBody = "return ::tgc::inferUnbind(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "types);";
}

def Tgc_CloneOp : Tgc_Op<"clone", ["aten.clone.default", "aten.contiguous.default",
                                   "aten.lift_fresh_copy.default"], [Pure]> {
  let summary = "A fresh copy";
  let description = [{
    `memory_format` (a torch.memory_format name; absent: contiguous_format) lays the
    capture-level result out as ATen's clone does: preserve_format keeps a dense
    layout of `self`.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<StrAttr>:$memory_format);
  let results = (outs Tgc_AnyTensor:$result);
  let builders = [OpBuilder<(ins "::mlir::Value":$self), [{
    build($_builder, $_state, self, ::mlir::StringAttr());
  }]>];
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types, "
                  "adaptor.getMemoryFormatAttr());";
}

def Tgc_CopyOp : Tgc_Op<"copy", ["aten.copy.default"], [Pure]> {
  let summary = "`src` broadcast to `self`'s sizes in `self`'s dtype (functional copy_)";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$src);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $src attr-dict `:` type($self) `,` type($src) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_AsStridedOp : Tgc_Op<"as_strided", ["aten.as_strided.default"], [Pure]> {
  let summary = "Elements of `self`'s storage at `storage_offset + sum(i_k * stride_k)`";
  let description = [{
    `self`'s storage is its elements in the layout tgc gives it: the strides of its type
    for a view, row-major for a computed tensor. A result that addresses the same
    elements in the same order (a change of the strides of size-1 dimensions, as torch's
    decompositions emit to restore a memory format) is a copy of `self`; otherwise
    `self` must be row-major and each result element is gathered from the position it
    addresses, which must lie inside `self`. Sizes, strides and the offset are static.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_ShapeAttr:$size, Tgc_ShapeAttr:$stride,
                       OptionalAttr<Tgc_ShapeAttr>:$storage_offset);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferAsStrided(ctx, loc, adaptor.getSelf(), adaptor.getSize(), "
                  "adaptor.getStride(), adaptor.getStorageOffsetAttr(), types);";
  let extraDecl = [{
    /// Whether the result reads `self`'s elements in `self`'s own order (a restride).
    bool isRestride();
  }];
}

def Tgc_SliceScatterOp : Tgc_Op<"slice_scatter", ["aten.slice_scatter.default"], [Pure]> {
  let summary = "`self` with `src` written into the slice start:end:step of `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$src,
                       DefaultValuedAttr<I64Attr, "0">:$dim,
                       OptionalAttr<Tgc_ShapeAttr>:$start, OptionalAttr<Tgc_ShapeAttr>:$end,
                       DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $src attr-dict `:` type($self) `,` type($src) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_SelectScatterOp : Tgc_Op<"select_scatter", ["aten.select_scatter.default"], [Pure]> {
  let summary = "`self` with `src` written at `index` of `dim`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$src, I64Attr:$dim, I64Attr:$index);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $src attr-dict `:` type($self) `,` type($src) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_DiffOp : Tgc_Op<"diff", ["aten.diff.default"], [Pure, AttrSizedOperandSegments]> {
  let summary = "n-th forward difference along `dim`, after prepending and appending";
  let description = [{
    `out[i] = x[i + 1] - x[i]` applied `n` times to `cat([prepend, self, append], dim)`
    (a bool tensor's difference is `!=`), as `torch.diff`. tgc-decompose rewrites it
    into slices and subtractions.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "1">:$n,
                       DefaultValuedAttr<I64Attr, "-1">:$dim, Optional<Tgc_AnyTensor>:$prepend,
                       Optional<Tgc_AnyTensor>:$append);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self (`prepend` $prepend^)? (`append` $append^)? attr-dict `:` "
                       "type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferDiff(ctx, loc, adaptor.getSelf(), adaptor.getN(), "
                  "adaptor.getDim(), adaptor.getPrepend(), adaptor.getAppend(), types);";
}

def Tgc_PadOp : Tgc_Op<"pad", ["aten.constant_pad_nd.default", "aten.pad.default",
                               "aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
                               "aten.reflection_pad3d.default", "aten.replication_pad1d.default",
                               "aten.replication_pad2d.default", "aten.replication_pad3d.default",
                               "aten._pad_circular.default"], [Pure]> {
  let summary = "Pad the last dimensions (constant, reflect, replicate or circular)";
  let description = [{
    `pad` holds (before, after) pairs from the last dimension backwards, as
    `torch.nn.functional.pad`. `constant` fills with `value` (0 when absent), and a
    negative amount removes elements; `reflect` mirrors without repeating the edge (each
    amount below the size), `replicate` repeats the edge element, and `circular` wraps
    around (each amount at most the size). tgc-decompose rewrites it into slices,
    filled tensors and concatenations, whose derivatives give the pad's.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$pad,
                       DefaultValuedAttr<StrAttr, "\"constant\"">:$mode,
                       OptionalAttr<F64Attr>:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferPad(ctx, loc, adaptor.getSelf(), adaptor.getPad(), "
                  "adaptor.getMode(), types);";
}

def Tgc_RepeatOp : Tgc_Op<"repeat", ["aten.repeat.default"], [Pure]> {
  let summary = "Tile `self` `repeats` times along each dimension";
  let description = [{
    As `Tensor.repeat`: `repeats` has at least the input's rank; extra leading entries
    add dimensions. tgc-decompose rewrites it into a view, an expand and a copy.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$repeats);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferRepeat(ctx, loc, adaptor.getSelf(), adaptor.getRepeats(), "
                  "types);";
}

def Tgc_RollOp : Tgc_Op<"roll", ["aten.roll.default"], [Pure]> {
  let summary = "Rotate elements along `dims` by `shifts` (the flattened tensor without dims)";
  let description = [{
    As `torch.roll`: element i of a rolled dimension moves to (i + shift) mod size.
    tgc-decompose rewrites it into slices and a concatenation per dimension.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$shifts,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dims);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferRoll(ctx, loc, adaptor.getSelf(), adaptor.getShifts(), "
                  "adaptor.getDims(), types);";
}

def Tgc_SortOp : Tgc_Op<"sort", ["aten.sort.default", "aten.sort.stable"], [Pure]> {
  let summary = "Values along `dim` in order, and their positions";
  let description = [{
    Stable (equal values keep their order) whichever `stable` says; NaN sorts above
    every number, as in ATen. tgc-decompose builds it from comparisons of all pairs
    along `dim` (each element's rank, then the element of each rank): O(n^2) work per
    row, suited to the short rows of models (top-k of a vocabulary is slow).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "-1">:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$descending,
                       OptionalAttr<BoolAttr>:$stable);
  let results = (outs Tgc_AnyTensor:$values, Tgc_AnyTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($values) `,` type($indices)";
  let inferBody = "return ::tgc::inferSortTopk(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "std::nullopt, types);";
}

def Tgc_TopkOp : Tgc_Op<"topk", ["aten.topk.default"], [Pure]> {
  let summary = "The `k` largest (or smallest) values along `dim`, and their positions";
  let description = [{ Always sorted; tgc-decompose takes the first k of a sort. }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$k, DefaultValuedAttr<I64Attr, "-1">:$dim,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Tgc_AnyTensor:$values, Tgc_AnyTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($values) `,` type($indices)";
  let inferBody = "return ::tgc::inferSortTopk(ctx, loc, adaptor.getSelf(), adaptor.getDim(), "
                  "adaptor.getK(), types);";
}

def Tgc_HistcOp : Tgc_Op<"histc", ["aten.histc.default"], [Pure]> {
  let summary = "Counts of `self`'s elements in `bins` equal-width bins over [min, max]";
  let description = [{
    Element x counts in bin floor((x - min) * bins / (max - min)), x == max in the last;
    elements outside [min, max] and NaN are not counted. The result has `self`'s float
    dtype. tgc-decompose compares each element's bin with every bin and sums. A range
    taken from the data (min == max) is not supported.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "100">:$bins,
                       DefaultValuedAttr<F64Attr, "0.0">:$min,
                       DefaultValuedAttr<F64Attr, "0.0">:$max);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferHistc(ctx, loc, adaptor.getSelf(), adaptor.getBins(), "
                  "adaptor.getMin().convertToDouble(), adaptor.getMax().convertToDouble(), types);";
}

def Tgc_GroupedMmOp : Tgc_Op<"grouped_mm", ["aten._grouped_mm.default",
                                            "transformers.grouped_mm_fallback.default"],
                             [Pure]> {
  let summary = "Row groups of `input` times their group's matrix of `weight`";
  let description = [{
    `input` [S, K] holds the rows of E groups one after the other; `offs` [E] (integer)
    holds where each group ends (cumulative counts), `weight` [E, K, N] one matrix per
    group. Row s of the result [S, N] is input[s] @ weight[g] for the group g that holds
    it; rows at or after offs[E - 1] are 0 (the mixture-of-experts layers of
    transformers: `torch._grouped_mm`, and its `grouped_mm_fallback`). tgc-decompose
    writes it as one GEMM over every group: each row, spread over the E blocks of a
    [S, E * K] matrix and kept only in its group's block, times `weight` viewed
    [E * K, N]. That costs E times the multiply-adds of the grouped product, but has no
    data-dependent shape, and its derivative is the GEMM's.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, Tgc_AnyTensor:$weight, Tgc_AnyTensor:$offs);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $offs attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferGroupedMm(ctx, loc, adaptor.getInput(), "
                  "adaptor.getWeight(), adaptor.getOffs(), types);";
}

def Tgc_FlipOp : Tgc_Op<"flip", ["aten.flip.default"], [Pure]> {
  let summary = "Reverse the order of elements along `dims`";
  let description = [{ tgc-decompose rewrites it into index_select by reversed aranges. }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$dims);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferFlip(ctx, loc, adaptor.getSelf(), adaptor.getDims(), "
                  "types);";
}

def Tgc_DiagonalOp : Tgc_Op<"diagonal", ["aten.diagonal.default"], [Pure]> {
  let summary = "The diagonal of dimensions `dim1` and `dim2` (shifted by `offset`), last";
  let description = [{
    A copy, not a view. tgc-decompose rewrites it into `tgc.index` of the two
    dimensions by aranges.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "0">:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$dim1,
                       DefaultValuedAttr<I64Attr, "1">:$dim2);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferDiagonal(ctx, loc, adaptor.getSelf(), adaptor.getOffset(), "
                  "adaptor.getDim1(), adaptor.getDim2(), types);";
}

def Tgc_AffineGridOp : Tgc_Op<"affine_grid", ["aten.affine_grid_generator.default"], [Pure]> {
  let summary = "The sampling grid of the affine maps `theta` [N, k, k + 1] for an output "
                "of `size` [N, C, spatial...] (k = 2 or 3)";
  let description = [{
    Result [N, spatial..., k]: theta times (x, y[, z], 1), where x runs over [-1, 1] along
    the last dimension (scaled by (n - 1) / n without `align_corners`), y over the one
    before. tgc-decompose multiplies a constant base grid by theta.
  }];
  let arguments = (ins Tgc_AnyTensor:$theta, DenseI64ArrayAttr:$size, BoolAttr:$align_corners);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$theta attr-dict `:` type($theta) `->` type($result)";
  let inferBody = "return ::tgc::inferAffineGrid(ctx, loc, adaptor.getTheta(), adaptor.getSize(), "
                  "types);";
}

def Tgc_GridSampler2dOp : Tgc_Op<"grid_sampler_2d", ["aten.grid_sampler_2d.default",
                                                     "aten.grid_sampler.default"], [Pure]> {
  let summary = "Samples `input` [N, C, H, W] at the points of `grid` [N, Ho, Wo, 2]";
  let description = [{
    `grid[n, i, j]` holds (x, y) in [-1, 1] (-1 and 1 the centers of the corner pixels
    with `align_corners`, their outer edges without). `interpolation_mode` 0 is
    bilinear, 1 nearest (ties to even), 2 bicubic (cubic convolution, A = -0.75);
    `padding_mode` 0 reads zeros outside the image, 1 the nearest border pixel, 2 the
    image reflected at its borders. The result is [N, C, Ho, Wo]. tgc-decompose reads
    each tap with advanced indexing and weights it, as ATen's decomposition does.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, Tgc_AnyTensor:$grid, I64Attr:$interpolation_mode,
                       I64Attr:$padding_mode, BoolAttr:$align_corners);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input `,` $grid attr-dict `:` type($input) `,` type($grid) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferGridSampler2d(ctx, loc, adaptor.getInput(), "
                  "adaptor.getGrid(), adaptor.getInterpolationMode(), adaptor.getPaddingMode(), "
                  "types);";
}

def Tgc_UpsampleOp : Tgc_Op<"upsample", [
    "aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec",
    "aten.upsample_nearest1d.default", "aten.upsample_nearest2d.default",
    "aten._upsample_nearest_exact1d.vec", "aten._upsample_nearest_exact2d.vec",
    "aten._upsample_nearest_exact1d.default", "aten._upsample_nearest_exact2d.default",
    "aten.upsample_nearest3d.vec", "aten.upsample_nearest3d.default",
    "aten._upsample_nearest_exact3d.vec", "aten._upsample_nearest_exact3d.default",
    "aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.vec",
    "aten.upsample_linear1d.default", "aten.upsample_bilinear2d.default",
    "aten.upsample_trilinear3d.vec", "aten.upsample_trilinear3d.default",
    "aten.upsample_bicubic2d.vec", "aten.upsample_bicubic2d.default"], [Pure]> {
  let summary = "Resample the last 1 to 3 dimensions (nearest, nearest-exact, linear or "
                "cubic)";
  let description = [{
    `input` [N, C, (D,) (H,) W] resampled to `output_size` (or the input size times
    `scale_factors`, rounded down), as ATen's upsample kernels compute source positions:
    `nearest` reads floor(o * in / out), `nearest_exact` floor((o + 0.5) * in / out)
    (with a given scale factor, 1 / scale replaces in / out), `linear` interpolates
    between the two nearest inputs and `cubic` (2-d only, as `upsample_bicubic2d`) is
    cubic convolution (A = -0.75) of the four nearest, their positions clamped to the
    input, with `align_corners` as in `F.interpolate`. tgc-decompose rewrites it into
    products with constant [out, in] interpolation matrices along each resampled
    dimension (each mode is separable), so its gradient is theirs.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, OptionalAttr<DenseI64ArrayAttr>:$output_size,
                       OptionalAttr<DenseF64ArrayAttr>:$scale_factors,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners,
                       DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferBody = "return ::tgc::inferUpsample(ctx, loc, adaptor.getInput(), "
                  "adaptor.getOutputSizeAttr(), adaptor.getScaleFactorsAttr(), adaptor.getMode(), "
                  "types);";
}

def Tgc_EinsumOp : Tgc_Op<"einsum", ["aten.einsum.default"], [Pure]> {
  let summary = "Sum of products over the labels of `equation` (torch.einsum)";
  let description = [{
    As `torch.einsum(equation, *tensors)`: explicit (`ij,jk->ik`) or implicit output,
    ellipses broadcast from the right. tgc-decompose contracts the operands pairwise,
    left to right, each pair as one batched matrix product (labels shared and kept are
    batch dimensions, shared and not kept are contracted), summing labels one operand
    alone has and nothing keeps first. A label repeated within one operand (a diagonal)
    is not supported. `path` (opt_einsum's order) is ignored.
  }];
  let arguments = (ins StrAttr:$equation, Variadic<Tgc_AnyTensor>:$tensors,
                       OptionalAttr<DenseI64ArrayAttr>:$path);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$tensors attr-dict `:` type($tensors) `->` type($result)";
  let inferBody = "return ::tgc::inferEinsum(ctx, loc, adaptor.getEquation(), "
                  "adaptor.getTensors(), types);";
}

def Tgc_CatOp : Tgc_Op<"cat", ["aten.cat.default", "aten.concat.default"], [Pure]> {
  let summary = "Concatenate along `dim`";
  let description = [{
    As ATen, cat skips a 1-d operand of size 0 whatever the others' rank (the empty
    cache a model concatenates its first keys onto); canonicalization drops such
    operands.
  }];
  let arguments = (ins Variadic<Tgc_AnyTensor>:$tensors, DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Tgc_AnyTensor:$result);
  let hasCanonicalizer = 1;
  let assemblyFormat = "$tensors attr-dict `:` type($tensors) `->` type($result)";
  let inferBody = "return ::tgc::inferCat(ctx, loc, adaptor.getTensors(), adaptor.getDim(), "
                  "/*stack=*/false, types);";
}

def Tgc_StackOp : Tgc_Op<"stack", ["aten.stack.default"], [Pure]> {
  let summary = "Stack along a new dimension `dim`";
  let arguments = (ins Variadic<Tgc_AnyTensor>:$tensors, DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$tensors attr-dict `:` type($tensors) `->` type($result)";
  let inferBody = "return ::tgc::inferCat(ctx, loc, adaptor.getTensors(), adaptor.getDim(), "
                  "/*stack=*/true, types);";
}

//===----------------------------------------------------------------------===//
// Attention, dropout, pooling
//===----------------------------------------------------------------------===//

def Tgc_DropoutOp : Tgc_Op<"dropout", ["aten.dropout.default"], [Pure]> {
  let summary = "Dropout: the identity when not training or when p is 0";
  let description = [{
    Random dropout (training with 0 < p) draws its mask from the instance's RNG state:
    `tgc-materialize-rng` rewrites it into `tgc.rand_bernoulli` and multiplications;
    decomposition makes the rest the identity.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, F64Attr:$p, BoolAttr:$train);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getInput(), types);";
}

def Tgc_NativeDropoutOp : Tgc_Op<"native_dropout", ["aten.native_dropout.default"], [Pure]> {
  let summary = "Dropout that also returns its keep mask (core ATen IR)";
  let description = [{
    Results: `input * mask / (1 - p)` and the bool mask of kept elements. Not training
    (or p = 0): the input and a mask of ones. `tgc-materialize-rng` rewrites the random
    form, decomposition the other.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, F64Attr:$p, OptionalAttr<BoolAttr>:$train);
  let results = (outs Tgc_AnyTensor:$output, Tgc_AnyTensor:$mask);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let inferBody = "return ::tgc::inferNativeDropout(ctx, loc, adaptor.getInput(), types);";
}

def Tgc_BernoulliOp : Tgc_Op<"bernoulli", []> {
  let summary = "A tensor like `input` whose elements are 1 with probability `p`, else 0";
  let description = [{
    The functional form of `x.bernoulli_(p)` (torchvision's stochastic depth draws its
    keep mask this way). Only `input`'s shape and dtype matter. Not pure: two draws are
    different tensors. `tgc-materialize-rng` rewrites it into `tgc.rand_bernoulli` from
    the instance's RNG state and a conversion to the dtype.
  }];
  let arguments = (ins Tgc_AnyTensor:$input, F64Attr:$p);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getInput(), types);";
}

def Tgc_RandBernoulliOp : Tgc_Op<"rand_bernoulli", [], [Pure, Tgc_NoRecompute]> {
  let summary = "A bool tensor whose elements are true with probability `p`";
  let description = [{
    Counter-based (Philox4x32-10): element i (row-major linear index) is drawn from
    key = seed and counter = state offset + `offset` + i, where `state` is the
    instance's RNG state `[seed, offset]` (i64[2]). The result depends only on these
    values, not on loop order, so it is deterministic; callers give each random op of a
    function its own `offset` range and advance the state's offset past all of them
    (`tgc-materialize-rng`).
  }];
  let arguments = (ins Tgc_AnyTensor:$state, I64:$offset, Tgc_ShapeAttr:$size, F64Attr:$p);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$state `,` $offset attr-dict `:` type($state) `->` type($result)";
  let inferBody = "return ::tgc::inferRandBernoulli(ctx, loc, adaptor.getState(), "
                  "adaptor.getSize(), adaptor.getP().convertToDouble(), types);";
}

def Tgc_RandOp : Tgc_Op<"rand", ["aten.rand.default", "aten.randn.default"]> {
  let summary = "Random numbers: uniform in [0, 1), or with `normal` standard normal";
  let description = [{
    Not pure: two draws are different tensors. `tgc-materialize-rng` rewrites it into
    `tgc.rand_draw` from the instance's RNG state. The numbers are tgc's own (Philox),
    not the ones torch's generator would give.
  }];
  let arguments = (ins Tgc_ShapeAttr:$size, OptionalAttr<Tgc_DTypeAttr>:$dtype,
                       OptionalAttr<Tgc_DeviceAttr>:$device, UnitAttr:$normal);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let inferBody = "return ::tgc::inferRand(ctx, loc, adaptor.getSize(), adaptor.getDtypeAttr(), "
                  "adaptor.getDeviceAttr(), types);";
}

def Tgc_RandpermOp : Tgc_Op<"randperm", ["aten.randperm.default"]> {
  let summary = "A random permutation of 0 .. n - 1";
  let description = [{
    Not pure. `tgc-materialize-rng` rewrites it into the stable sort of `n` random keys
    drawn from the instance's RNG state (`tgc.rand_draw`); the permutation is the sort's
    indices.
  }];
  let arguments = (ins I64Attr:$n, OptionalAttr<Tgc_DTypeAttr>:$dtype,
                       OptionalAttr<Tgc_DeviceAttr>:$device);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let inferBody = "return ::tgc::inferRandperm(ctx, loc, adaptor.getN(), adaptor.getDtypeAttr(), "
                  "adaptor.getDeviceAttr(), types);";
}

def Tgc_RandDrawOp : Tgc_Op<"rand_draw", [], [Pure, Tgc_NoRecompute]> {
  let summary = "Random numbers of `dtype` from the RNG state: uniform in [0, 1), or "
                "standard normal with `normal`";
  let description = [{
    Counter-based (Philox4x32-10) as `tgc.rand_bernoulli`: element i (row-major linear
    index) comes from the block for counter state offset + `offset` + i under key seed.
    Uniform numbers have as many random bits as the dtype's significand (53 for f64 from
    two words, 24 for f32, 11 for f16, 8 for bf16), so that they are exact and below 1;
    normal ones come from two words by the Box-Muller transform, in f32 (f64 for f64).
  }];
  let arguments = (ins Tgc_AnyTensor:$state, I64:$offset, Tgc_ShapeAttr:$size,
                       Tgc_DTypeAttr:$dtype, UnitAttr:$normal);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$state `,` $offset attr-dict `:` type($state) `->` type($result)";
  let inferBody = "return ::tgc::inferRandDraw(ctx, loc, adaptor.getState(), adaptor.getSize(), "
                  "adaptor.getDtype(), types);";
}

def Tgc_ScaledDotProductAttentionOp : Tgc_Op<"scaled_dot_product_attention",
    ["aten.scaled_dot_product_attention.default",
     "aten._scaled_dot_product_flash_attention_for_cpu.default"], [Pure, Tgc_NoRecompute]> {
  let summary = "softmax(query @ key^T * scale + mask) @ value; with `with_logsumexp`, "
                "also each row's log-sum-exp";
  let description = [{
    With `with_logsumexp` the op also returns the log-sum-exp of each row of the masked,
    scaled scores, [batch..., L] in the query's dtype (-inf for a row that sees no key),
    as `aten._scaled_dot_product_flash_attention_for_cpu` does: what the fused backward
    (`tgc.scaled_dot_product_attention_backward`) recomputes the probabilities from.
  }];
  let arguments = (ins Tgc_AnyTensor:$query, Tgc_AnyTensor:$key, Tgc_AnyTensor:$value,
                       Optional<Tgc_AnyTensor>:$attn_mask,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       OptionalAttr<F64Attr>:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$enable_gqa,
                       UnitAttr:$with_logsumexp);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$query `,` $key `,` $value (`mask` $attn_mask^)? attr-dict `:` "
                       "type(operands) `->` type($results)";
  let inferBody = "return ::tgc::inferAttention(ctx, loc, adaptor.getQuery(), adaptor.getKey(), "
                  "adaptor.getValue(), adaptor.getWithLogsumexp(), types);";
  let extraDecl = [{
    /// Whether the lowering takes this op as it is, as a fused tiled kernel: f32/f64,
    /// no dropout, no grouped-query attention, static sequence and embedding sizes,
    /// the same batch sizes for query, key and value, and a mask (boolean or of the
    /// query's dtype) that broadcasts to [batch..., L, S] by size-1 dimensions.
    bool hasFusedLowering();
    /// The scale of the scores: the attribute, or 1/sqrt(E) for a static embedding size E.
    std::optional<double> resolvedScale();
    /// The masked, scaled scores `q k^T` [batch..., L, S] as tgc ops (what the softmax
    /// takes); null when the scale is unknown (resolvedScale) or with grouped-query
    /// attention.
    ::mlir::Value buildScores(::mlir::OpBuilder &b);
  }];
}

def Tgc_ScaledDotProductAttentionBackwardOp : Tgc_Op<"scaled_dot_product_attention_backward",
    [], [Pure, Tgc_NoRecompute]> {
  let summary = "Gradients of a fused attention: query, key, value and, with "
                "`with_mask_grad`, the scores (the mask's gradient before broadcasting)";
  let description = [{
    The backward of a `tgc.scaled_dot_product_attention` that has a fused lowering,
    from its output and the row log-sum-exp it returned (FlashAttention-2's backward):
    the probabilities are recomputed tile by tile, so no [L, S] matrix is stored.
    `scale` is the forward's resolved scale. With `with_mask_grad`, a fourth result is
    the gradient of the masked scores, [batch..., L, S]: a floating mask's gradient
    summed over the dimensions by which the mask broadcasts.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$query, Tgc_AnyTensor:$key,
                       Tgc_AnyTensor:$value, Tgc_AnyTensor:$output, Tgc_AnyTensor:$logsumexp,
                       Optional<Tgc_AnyTensor>:$attn_mask,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal, F64Attr:$scale,
                       UnitAttr:$with_mask_grad);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$grad_output `,` $query `,` $key `,` $value `,` $output `,` $logsumexp "
                       "(`mask` $attn_mask^)? attr-dict `:` type(operands) `->` type($results)";
  let inferBody = "return ::tgc::inferAttentionBackward(ctx, loc, adaptor.getQuery(), "
                  "adaptor.getKey(), adaptor.getValue(), adaptor.getWithMaskGrad(), types);";
}

def Tgc_MaxPool2dOp : Tgc_Op<"max_pool2d", ["aten.max_pool2d.default",
                                            "aten.max_pool2d_with_indices.default"], [Pure]> {
  let summary = "2-d max pooling; with `with_indices`, also the argmax (flat h * W + w)";
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1}">:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       UnitAttr:$with_indices);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($results)";
  let inferBody = "return ::tgc::inferPool2d(ctx, loc, adaptor.getSelf(), adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), adaptor.getDilation(), "
                  "adaptor.getCeilMode(), adaptor.getWithIndices(), types);";
}

def Tgc_AvgPool2dOp : Tgc_Op<"avg_pool2d", ["aten.avg_pool2d.default"], [Pure]> {
  let summary = "2-d average pooling";
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferPool2d(ctx, loc, adaptor.getSelf(), adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), {1}, adaptor.getCeilMode(), "
                  "false, types);";
  let hasVerifier = 1;
}

def Tgc_MaxPool2dBackwardOp : Tgc_Op<"max_pool2d_backward",
    ["aten.max_pool2d_with_indices_backward.default"], [Pure]> {
  let summary = "Gradient of max pooling: grad_output added at the argmax of each window";
  let description = [{
    `indices` are those tgc.max_pool2d `with_indices` returns (flat h * W + w in the
    unpadded input plane). The window parameters are the forward op's.
  }];
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$self,
                       DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1}">:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       Tgc_AnyTensor:$indices);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $self `,` $indices attr-dict `:` type(operands) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferPool2dBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getSelf(), adaptor.getIndices(), adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), adaptor.getDilation(), "
                  "adaptor.getCeilMode(), types);";
}

def Tgc_AvgPool2dBackwardOp : Tgc_Op<"avg_pool2d_backward",
    ["aten.avg_pool2d_backward.default"], [Pure]> {
  let summary = "Gradient of average pooling: each window's gradient spread over it";
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$self,
                       DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $self attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferPool2dBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getSelf(), nullptr, adaptor.getKernelSize(), adaptor.getStride(), "
                  "adaptor.getPadding(), {1}, adaptor.getCeilMode(), types);";
  let hasVerifier = 1;
}

def Tgc_AdaptiveAvgPoolOp : Tgc_Op<"adaptive_avg_pool",
    ["aten.adaptive_avg_pool1d.default", "aten.adaptive_avg_pool2d.default",
     "aten._adaptive_avg_pool2d.default",
     "aten.adaptive_avg_pool3d.default", "aten._adaptive_avg_pool3d.default"], [Pure]> {
  let summary = "Average pooling of the last len(output_size) dimensions to output_size";
  let description = [{
    Output element i of a dimension of size In averages the input elements
    [floor(i * In / Out), ceil((i + 1) * In / Out)), as ATen. tgc-decompose makes an
    output size that divides the input size an avg_pool2d, and any other a product
    with a constant averaging matrix per dimension.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$output_size);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferAdaptivePool(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getOutputSize(), types);";
}

def Tgc_AdaptiveAvgPoolBackwardOp : Tgc_Op<"adaptive_avg_pool_backward",
    ["aten._adaptive_avg_pool2d_backward.default",
     "aten._adaptive_avg_pool3d_backward.default"], [Pure]> {
  let summary = "Gradient of adaptive average pooling with respect to its input `self`";
  let arguments = (ins Tgc_AnyTensor:$grad_output, Tgc_AnyTensor:$self);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$grad_output `,` $self attr-dict `:` type(operands) `->` type($result)";
  let inferBody = "return ::tgc::inferAdaptivePoolBackward(ctx, loc, adaptor.getGradOutput(), "
                  "adaptor.getSelf(), types);";
}

def Tgc_MaxPool3dOp : Tgc_Op<"max_pool3d", ["aten.max_pool3d.default",
                                            "aten.max_pool3d_with_indices.default"], [Pure]> {
  let summary = "3-d max pooling; with `with_indices`, also the argmax (flat d * H * W + h * W + w)";
  let description = [{
    tgc-decompose takes the maximum over the window's positions, one strided slice of
    the input padded with -inf per position (the first of equal maxima, as ATen).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1}">:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       UnitAttr:$with_indices);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($results)";
  let inferBody = "return ::tgc::inferPool(ctx, loc, adaptor.getSelf(), 3, adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), adaptor.getDilation(), "
                  "adaptor.getCeilMode(), adaptor.getWithIndices(), types);";
}

def Tgc_AvgPool1dOp : Tgc_Op<"avg_pool1d", ["aten.avg_pool1d.default"], [Pure]> {
  let summary = "1-d average pooling";
  let description = [{
    tgc-decompose makes it an avg_pool2d over a height-1 image.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferPool(ctx, loc, adaptor.getSelf(), 1, adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), {1}, adaptor.getCeilMode(), "
                  "false, types);";
}

def Tgc_AvgPool3dOp : Tgc_Op<"avg_pool3d", ["aten.avg_pool3d.default"], [Pure]> {
  let summary = "3-d average pooling";
  let description = [{
    tgc-decompose sums one strided slice of the zero-padded input per window position
    and divides by each window's divisor, a constant (divisor_override, the window's
    size clipped to the padded input, or with count_include_pad false its elements in
    the input).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0}">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferPool(ctx, loc, adaptor.getSelf(), 3, adaptor.getKernelSize(), "
                  "adaptor.getStride(), adaptor.getPadding(), {1}, adaptor.getCeilMode(), "
                  "false, types);";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

def Tgc_FullOp : Tgc_Op<"full", ["aten.full.default", "aten.ones.default",
                                 "aten.zeros.default", "aten.empty.memory_format",
                                 "aten.empty_strided.default",
                                 "aten.new_ones.default", "aten.new_zeros.default",
                                 "aten.new_full.default", "aten.new_empty.default"], [Pure]> {
  let summary = "A tensor of `size` filled with `fill_value`";
  let arguments = (ins Tgc_ShapeAttr:$size, AnyAttrOf<[F64Attr, I64Attr, BoolAttr]>:$fill_value,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype, OptionalAttr<Tgc_DeviceAttr>:$device);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let inferBody = "return ::tgc::inferFull(ctx, loc, adaptor.getSize(), adaptor.getFillValue(), "
                  "adaptor.getDtypeAttr(), adaptor.getDeviceAttr(), types);";
}

def Tgc_FillOp : Tgc_Op<"fill", ["aten.fill.Scalar", "aten.fill.Tensor"],
                        [Pure, DeclareOpInterfaceMethods<Tgc_ElementwiseOpInterface>]> {
  let summary = "A tensor like `self` (sizes and dtype) filled with `value`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_TensorOrScalar:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $value attr-dict `:` type($self) `,` type($value) `->` "
                       "type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_FullLikeOp : Tgc_Op<"full_like", ["aten.full_like.default", "aten.ones_like.default",
                                          "aten.zeros_like.default",
                                          "aten.empty_like.default"], [Pure]> {
  let summary = "A tensor shaped like `self` filled with `fill_value`";
  let description = [{
    `memory_format` (absent: contiguous_format) lays the capture-level result out as
    ATen's empty_like does.
  }];
  let arguments = (ins Tgc_AnyTensor:$self, AnyAttrOf<[F64Attr, I64Attr, BoolAttr]>:$fill_value,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype, OptionalAttr<StrAttr>:$memory_format);
  let results = (outs Tgc_AnyTensor:$result);
  let builders = [OpBuilder<(ins "::mlir::Value":$self, "::mlir::Attribute":$fill_value,
                                 "::mlir::TypeAttr":$dtype), [{
    build($_builder, $_state, self, fill_value, dtype, ::mlir::StringAttr());
  }]>];
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferFullLike(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDtypeAttr(), types, adaptor.getMemoryFormatAttr());";
}

def Tgc_ArangeOp : Tgc_Op<"arange", ["aten.arange.default", "aten.arange.start",
                                     "aten.arange.start_step"], [Pure]> {
  let summary = "start, start + step, ... below end";
  let description = [{
    `end` may be a symbolic size (a one-element #tgc.shape, e.g. a sequence length) when
    `start` and `step` are integers and `step` is positive.
  }];
  let arguments = (ins OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$start,
                       AnyAttrOf<[F64Attr, I64Attr, Tgc_ShapeAttr]>:$end,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$step,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype, OptionalAttr<Tgc_DeviceAttr>:$device);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let inferBody = "return ::tgc::inferArange(ctx, loc, adaptor.getStartAttr(), adaptor.getEnd(), "
                  "adaptor.getStepAttr(), adaptor.getDtypeAttr(), adaptor.getDeviceAttr(), types);";
}

def Tgc_ScalarTensorOp : Tgc_Op<"scalar_tensor", ["aten.scalar_tensor.default"], [Pure]> {
  let summary = "A 0-d tensor holding `s`";
  let arguments = (ins AnyAttrOf<[F64Attr, I64Attr, BoolAttr]>:$s,
                       OptionalAttr<Tgc_DTypeAttr>:$dtype, OptionalAttr<Tgc_DeviceAttr>:$device);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let inferBody = "return ::tgc::inferFull(ctx, loc, ::tgc::ShapeAttr::get(ctx, {}), "
                  "adaptor.getS(), adaptor.getDtypeAttr(), adaptor.getDeviceAttr(), types);";
}

class Tgc_TriangleOp<string mnemonic, list<string> aten> : Tgc_Op<mnemonic, aten, [Pure]> {
  let summary = "Keep the " # mnemonic # " part relative to `diagonal`, zero the rest";
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<I64Attr, "0">:$diagonal);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}
def Tgc_TrilOp : Tgc_TriangleOp<"tril", ["aten.tril.default"]>;
def Tgc_TriuOp : Tgc_TriangleOp<"triu", ["aten.triu.default"]>;

def Tgc_SymSizeOp : Op<Tgc_Dialect, "sym_size", [Pure]> {
  let summary = "The size of one dimension, as a Python int (i64)";
  let description = [{
    What `aten.sym_size.int` computes. Readers turn sizes into symbols instead; passes
    use this op for scalars derived from sizes (the element count of a mean).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim);
  let results = (outs I64:$result);
  let assemblyFormat = "$self attr-dict `:` type($self)";
}

def Tgc_ItemOp : Tgc_Op<"item", ["aten._local_scalar_dense.default", "aten.item.default"],
                        [Pure]> {
  let summary = "The one element of a tensor as a Python number: f64 (float), i64 or i1";
  let arguments = (ins Tgc_AnyTensor:$self);
  let results = (outs AnyTypeOf<[F64, I64, I1]>:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferItem(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_BindSymbolOp : Op<Tgc_Dialect, "bind_symbol", []> {
  let summary = "An unbacked size symbol: its value is a tensor's one integer element";
  let description = [{
    `%n = tgc.bind_symbol %t {symbol = 1 : i64}`: from here on, size symbol `s1` is the
    value of `%t`'s one element (an integer tensor), which `%n` also is. What a Python
    int from `Tensor.item()` used as a size becomes (Dynamo's unbacked SymInt); the
    capture clamps the value into the range its use allows first (docs/bytecode.md,
    "Numbers from tensors"). No function argument binds such a symbol, so lowering
    reads it from this op; it must come before every op whose types use the symbol.
    The op has no declared memory effects, so it is never erased or merged.
  }];
  let arguments = (ins Tgc_AnyTensor:$value, I64Attr:$symbol);
  let results = (outs I64:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Tgc_ConstantOp : Tgc_Op<"constant", [], [Pure, ConstantLike]> {
  let summary = "A tensor constant";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value `->` type($result)";
  let inferBody = "return ::tgc::inferConstant(ctx, loc, adaptor.getValue(), types);";
  // ConstantLike ops must fold to their value: the greedy driver's constant CSE reads it.
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// In-place ops (capture level only)
//===----------------------------------------------------------------------===//

/// `self.<op>_(other)`: writes op(self, other) into self, cast to self's dtype.
class Tgc_InPlaceBinaryOp<string mnemonic, string functional, list<string> aten>
    : Tgc_Op<mnemonic, aten, [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "In-place " # functional;
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_TensorOrScalar:$other,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $other attr-dict `:` type($self) `,` type($other) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getSelf(), types);";
  let extraDecl = "static ::llvm::StringRef getFunctionalOpName() { return \"tgc." # functional # "\"; }";
  let hasVerifier = 1;
}
def Tgc_AddInPlaceOp : Tgc_InPlaceBinaryOp<"add_", "add", ["aten.add_.Tensor", "aten.add_.Scalar"]>;
def Tgc_SubInPlaceOp : Tgc_InPlaceBinaryOp<"sub_", "sub", ["aten.sub_.Tensor", "aten.sub_.Scalar"]>;
def Tgc_MulInPlaceOp : Tgc_InPlaceBinaryOp<"mul_", "mul", ["aten.mul_.Tensor", "aten.mul_.Scalar"]>;
def Tgc_DivInPlaceOp : Tgc_InPlaceBinaryOp<"div_", "div", ["aten.div_.Tensor", "aten.div_.Scalar"]>;

/// `self.<op>_(...)`: writes the functional op's result (same operands and attributes)
/// into self.
class Tgc_InPlaceUnaryOp<string mnemonic, string functional, list<string> aten>
    : Tgc_Op<mnemonic, aten, [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "In-place " # functional;
  let arguments = (ins Tgc_AnyTensor:$self);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getSelf(), types);";
  let extraDecl = "static ::llvm::StringRef getFunctionalOpName() { return \"tgc." # functional # "\"; }";
}
def Tgc_ReluInPlaceOp : Tgc_InPlaceUnaryOp<"relu_", "relu", ["aten.relu_.default"]>;
// detach_ (torch.tensor(...) constants in the training IR): later uses read the detached tensor.
def Tgc_DetachInPlaceOp : Tgc_InPlaceUnaryOp<"detach_", "detach", ["aten.detach_.default"]>;
def Tgc_SigmoidInPlaceOp : Tgc_InPlaceUnaryOp<"sigmoid_", "sigmoid", ["aten.sigmoid_.default"]>;
def Tgc_TanhInPlaceOp : Tgc_InPlaceUnaryOp<"tanh_", "tanh", ["aten.tanh_.default"]>;
def Tgc_SiluInPlaceOp : Tgc_InPlaceUnaryOp<"silu_", "silu", ["aten.silu_.default"]>;
def Tgc_HardsigmoidInPlaceOp : Tgc_InPlaceUnaryOp<"hardsigmoid_", "hardsigmoid", ["aten.hardsigmoid_.default"]>;
def Tgc_HardswishInPlaceOp : Tgc_InPlaceUnaryOp<"hardswish_", "hardswish", ["aten.hardswish_.default"]>;
def Tgc_HardtanhInPlaceOp : Tgc_InPlaceUnaryOp<"hardtanh_", "hardtanh", ["aten.hardtanh_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedAttr<F64Attr, "-1.0">:$min_val,
                       DefaultValuedAttr<F64Attr, "1.0">:$max_val);
}
def Tgc_DropoutInPlaceOp : Tgc_InPlaceUnaryOp<"dropout_", "dropout", ["aten.dropout_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, F64Attr:$p, BoolAttr:$train);
}
def Tgc_BernoulliInPlaceOp : Tgc_InPlaceUnaryOp<"bernoulli_", "bernoulli",
                                                ["aten.bernoulli_.float"]> {
  let arguments = (ins Tgc_AnyTensor:$self, DefaultValuedAttr<F64Attr, "0.5">:$p);
}
def Tgc_LeakyReluInPlaceOp : Tgc_InPlaceUnaryOp<"leaky_relu_", "leaky_relu",
                                                ["aten.leaky_relu_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self,
                       DefaultValuedAttr<F64Attr, "0.01">:$negative_slope);
}

def Tgc_MaskedFillInPlaceOp : Tgc_InPlaceUnaryOp<"masked_fill_", "masked_fill",
    ["aten.masked_fill_.Scalar", "aten.masked_fill_.Tensor"]> {
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$mask, Tgc_TensorOrScalar:$value);
  let assemblyFormat = "$self `,` $mask `,` $value attr-dict `:` type($self) `,` type($mask) "
                       "`,` type($value) `->` type($result)";
}
def Tgc_IndexPutInPlaceOp : Tgc_InPlaceUnaryOp<"index_put_", "index_put",
    ["aten.index_put_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, Variadic<Tgc_AnyTensor>:$indices,
                       Tgc_AnyTensor:$values, DefaultValuedAttr<BoolAttr, "false">:$accumulate,
                       OptionalAttr<DenseI64ArrayAttr>:$dims);
  let assemblyFormat = "$self `[` $indices `]` `,` $values attr-dict `:` type(operands) `->` "
                       "type($result)";
}
def Tgc_ClampInPlaceOp : Tgc_InPlaceUnaryOp<"clamp_", "clamp",
    ["aten.clamp_.default", "aten.clamp_min_.default", "aten.clamp_max_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$min,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$max);
}

def Tgc_CopyInPlaceOp : Tgc_Op<"copy_", ["aten.copy_.default"],
                               [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "Write `src` (broadcast, converted) into `self`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$src);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $src attr-dict `:` type($self) `,` type($src) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_FillInPlaceOp : Tgc_Op<"fill_", ["aten.fill_.Scalar", "aten.zero_.default"],
                               [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "Fill `self` with `value` (zero_ when absent)";
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<AnyAttrOf<[F64Attr, I64Attr, BoolAttr]>>:$value);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getSelf(), types);";
}

//===----------------------------------------------------------------------===//
// Graph-level ops
//===----------------------------------------------------------------------===//

def Tgc_GlobalOp : Op<Tgc_Dialect, "global", [Symbol]> {
  let summary = "The initial value of a parameter, buffer or constant of the model";
  let description = [{
    `tgc.global @"bn.running_mean" buffer : !tgc.vtensor<[8], f32> = dense_resource<w3>`.
    Entry function arguments name their global with `tgc.global = @...`; the artifact
    embeds `initial_value` as the instance's starting state.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kind, TypeAttr:$type,
                       ElementsAttr:$initial_value);
  let assemblyFormat = "$sym_name $kind attr-dict `:` $type `=` $initial_value";
  let hasVerifier = 1;
}

def Tgc_OverwriteOp : Op<Tgc_Dialect, "overwrite", []> {
  let summary = "Write a value into a capture-level tensor (functionalization's epilogue)";
  let arguments = (ins Tgc_ValueTensorType:$value, Tgc_RefTensorType:$target);
  let assemblyFormat = "$value `into` $target attr-dict `:` type($value) `into` type($target)";
}

def Tgc_ToValueOp : Op<Tgc_Dialect, "to_value", []> {
  let summary = "The current contents of a capture-level tensor, as a value";
  let arguments = (ins Tgc_RefTensorType:$operand);
  let results = (outs Tgc_ValueTensorType:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Autograd hooks (training)
//===----------------------------------------------------------------------===//

def Tgc_GradHookOp : Tgc_Op<"grad_hook", [], [Pure]> {
  let summary = "`self`, with `hook` applied to its gradient in backward";
  let description = [{
    What `tensor.register_hook(fn)` attaches: in forward the result is `self`; in
    backward, the gradient flowing into this value is replaced by `@hook(grad)` before
    it flows on to `self`. `hook` is a function over tgc tensors used as a template:
    `tgc-autodiff` instantiates its body on the gradient (types re-inferred).
  }];
  let arguments = (ins Tgc_AnyTensor:$self, FlatSymbolRefAttr:$hook);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self $hook attr-dict `:` type($self) `->` type($result)";
  let inferBody = "return ::tgc::inferClone(ctx, loc, adaptor.getSelf(), types);";
}

def Tgc_AutogradFunctionOp : Op<Tgc_Dialect, "autograd_function",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = "A custom autograd.Function: `@forward_fn` with `@backward_fn` as its VJP";
  let description = [{
    What `MyFunction.apply(...)` of a `torch.autograd.Function` subclass captures. The
    operands are the tensor arguments of `apply`; `@forward_fn` (a template function
    over them) returns the `num_outputs` outputs of `forward`, then the tensors it saved
    for backward (`ctx.save_for_backward`, tensors stored on `ctx`). The op's results
    are `@forward_fn`'s. `@backward_fn` takes the saved tensors, then one gradient per
    output, and returns one gradient per operand listed in `gradient_of` (operand
    indices, increasing; an operand not listed gets no gradient: `backward` returned
    None for it). Without `@backward_fn` (no input required grad at capture), the op
    cannot be differentiated and `gradient_of` is empty.

    `tgc-autodiff` differentiates the op by instantiating `@backward_fn` on the saved
    results and the outputs' gradients (zeros for an output no gradient reaches);
    `tgc-inline-autograd-functions` then replaces the op by `@forward_fn`'s body
    (right after autodiff when training, at the end of decompose otherwise) and erases
    the templates. Both functions are templates (`tgc::instantiateFunction`): their
    bodies are re-inferred on the values they are applied to.

    Writes into operands (a buffer passed to `apply` that `forward` or `backward`
    mutates in place): `forward_mutates` lists the operands `@forward_fn` writes
    (increasing), `backward_mutates` those `@backward_fn` writes (distinct, in the
    order of its written arguments). Over reference tensors (capture level) the
    templates write into their arguments in place and the op writes its
    `forward_mutates` operands; functionalization turns each write into results: the
    value-level op has one more result per `forward_mutates` operand (its new value,
    after the outputs and saved tensors), `@forward_fn` returns them last, and
    `@backward_fn` returns the new value of each `backward_mutates` operand after the
    gradients. `tgc-autodiff` makes the backward ones mutation results of `@joint`
    with `tgc.pass = "backward"`.
  }];
  let arguments = (ins Variadic<Tgc_AnyTensor>:$inputs, FlatSymbolRefAttr:$forward_fn,
                       OptionalAttr<FlatSymbolRefAttr>:$backward_fn, I64Attr:$num_outputs,
                       DenseI64ArrayAttr:$gradient_of,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$forward_mutates,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$backward_mutates);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = [{
    $forward_fn (`,` $backward_fn^)? `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The outputs of `forward` (the first `num_outputs` results).
    ::mlir::ResultRange getOutputs() { return getResults().take_front(getNumOutputs()); }
    /// How many results are new values of `forward_mutates` operands (value level:
    /// those operands that are value tensors; capture-level ones are written in place).
    unsigned getNumForwardWrites();
    /// The tensors saved for backward (after the outputs, before the forward writes).
    ::mlir::ResultRange getSaved() {
      return getResults().drop_front(getNumOutputs()).drop_back(getNumForwardWrites());
    }
    /// The new values of the `forward_mutates` operands (value level; the last results).
    ::mlir::ResultRange getForwardWrites() {
      return getResults().take_back(getNumForwardWrites());
    }
  }];
}

def Tgc_SavedTensorsHooksOp : Op<Tgc_Dialect, "saved_tensors_hooks", []> {
  let summary = "A pack/unpack pair applied to the tensors saved for backward";
  let description = [{
    What `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` installs, at module
    level. Both are functions over tgc tensors used as templates (their bodies are
    re-inferred for each value); `@unpack` must give back a tensor of the packed value's
    sizes and dtype.

    Without `scope`: after partitioning, `tgc-inline-saved-hooks` instantiates `@pack`
    at the end of `@forward` on each saved value whose dtype is `@pack`'s argument
    dtype (with `activations_only`, not on values that are graph inputs), saves what it
    returns, and instantiates `@unpack` at the start of `@backward`.

    With `scope = N` (what a captured program installs, docs/training.md): the hooks
    apply to the tensors that ops carrying the discardable attribute
    `tgc.saved_hooks_scope = N` save for backward, as PyTorch applies the hooks active
    when an op runs to what that op saves: `tgc-autodiff` makes the derivative of each
    such op read its operands and results of `@pack`'s argument dtype through
    `@unpack(@pack(v))`. A scope may have one pair per dtype.
  }];
  let arguments = (ins FlatSymbolRefAttr:$pack, FlatSymbolRefAttr:$unpack,
                       UnitAttr:$activations_only, OptionalAttr<I64Attr>:$scope);
  let assemblyFormat = "`pack` `=` $pack `,` `unpack` `=` $unpack (`scope` $scope^)? attr-dict";
  let extraClassDeclaration = [{
    /// The discardable op attribute (i64) naming the scope an op was created in.
    static constexpr ::llvm::StringLiteral getScopeTagName() {
      return ::llvm::StringLiteral("tgc.saved_hooks_scope");
    }
  }];
}

//===----------------------------------------------------------------------===//
// Control flow (docs/bytecode.md, "torch.cond")
//===----------------------------------------------------------------------===//

def Tgc_CondOp : Op<Tgc_Dialect, "cond", [IsolatedFromAbove, RecursiveMemoryEffects,
                                          AttrSizedOperandSegments]> {
  let summary = "torch.cond: runs one of two subgraphs on a one-element predicate";
  let description = [{
    `torch.cond(pred, true_fn, false_fn, operands)` on a tensor predicate. The regions
    are the two branches' subgraphs; only the one `bool(pred)` selects runs. They are
    isolated from above: every value a branch uses from outside (its `operands`, tensors
    it closes over, Python numbers from `.item()`) is lifted into `inputs`, and every
    free size symbol its types mention is lifted into `sizes` exactly once, as the i64
    value of the symbol `symbols[i]` (`s<symbols[i]>`). Each region's block takes
    `inputs` then `sizes`; `tgc.yield` gives the branch's results, which have the
    op's result sizes and dtypes in both branches. Branches do not write into their
    inputs (PyTorch's torch.cond rejects input mutation too).

    ```mlir
    %r = tgc.cond %p inputs(%x, %b : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[8], f32>)
           sizes(%n) {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 8], f32>
    then {
    ^bb0(%a: !tgc.vtensor<[s0, 8], f32>, %c: !tgc.vtensor<[8], f32>, %s0: i64):
      ...
      tgc.yield %t : !tgc.vtensor<[s0, 8], f32>
    } else { ... }
    ```

    Both inference and training keep the op to lowering, which makes it `scf.if`;
    `tgc-autodiff` differentiates it into a forward cond that also returns each
    branch's saved values and a backward cond over the branches' backwards.
  }];
  let arguments = (ins Tgc_AnyTensor:$pred, Variadic<AnyType>:$inputs, Variadic<I64>:$sizes,
                       DenseI64ArrayAttr:$symbols);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$thenRegion, SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $pred (`inputs` `(` $inputs^ `:` type($inputs) `)`)? (`sizes` `(` $sizes^ `)`)? attr-dict
    `:` type($pred) (`->` type($results)^)? `then` $thenRegion `else` $elseRegion
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tgc_YieldOp : Op<Tgc_Dialect, "yield", [Pure, Terminator, HasParent<"CondOp">]> {
  let summary = "The results of a tgc.cond branch";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Graph breaks (capture level, `tgc compile --allow-graph-breaks`; docs/graph-breaks.md)
//===----------------------------------------------------------------------===//

def Tgc_BreakBranchOp : Op<Tgc_Dialect, "break_branch", []> {
  let summary = "A graph break: the program branches on `bool(condition)`";
  let description = [{
    Where a captured program's control flow depends on a tensor's value (`if
    y.sum() > 0:`). The interpreter traces one path per combination of outcomes; this
    op marks the point and the outcome `taken` the path it is on follows.
    `tgc::splitGraphBreaks` ends a graph here: the graph returns `condition`, the
    caller evaluates `bool(condition)` and runs the graph of the branch taken.
    `condition` must have exactly one element.
  }];
  let arguments = (ins Tgc_AnyTensor:$condition, BoolAttr:$taken);
  let assemblyFormat = "$condition `taken` `=` $taken attr-dict `:` type($condition)";
  let hasVerifier = 1;
}

def Tgc_BreakCallOp : Op<Tgc_Dialect, "break_call", []> {
  let summary = "A graph break: the caller runs a Python call between two graphs";
  let description = [{
    A call tgc does not compile but the caller can run with the values the program
    passes (`print(...)`); its result is not used by the program. `args` are the
    positional arguments and `kwargs` the keyword ones, each a constant (unit for None,
    bool, i64, f64, string, an array for a tuple, `{class = "torch.Size", items = [...]}`
    for a tuple of a library class) or `{tensor = i : i64}`, the i-th operand, whose
    value at this point of the program the graph before returns.
  }];
  let arguments = (ins StrAttr:$callee, Variadic<Tgc_AnyTensor>:$tensors, ArrayAttr:$args,
                       DictionaryAttr:$kwargs);
  let assemblyFormat = [{
    $callee `(` $tensors `)` `args` `=` $args `kwargs` `=` $kwargs attr-dict
    (`:` type($tensors)^)?
  }];
  let hasVerifier = 1;
}

def Tgc_BreakHookOp : Op<Tgc_Dialect, "break_hook", []> {
  let summary = "A graph break: a gradient hook that changes Python state runs between "
                "two graphs' backwards";
  let description = [{
    `tensor.register_hook(fn)` on a tensor the program computes, where `fn` changes
    Python state (docs/bytecode.md, *Hooks*): the graph before returns `tensor`, and in
    backward the caller calls hook number `hook` (the path's `hook`-th `grad_hook`
    replay action) with its gradient before the backward of the graph that computes it.
    Nothing happens in the forward.
  }];
  let arguments = (ins Tgc_AnyTensor:$tensor, I64Attr:$hook);
  let assemblyFormat = "$tensor `hook` `=` $hook attr-dict `:` type($tensor)";
  let hasVerifier = 1;
}

def Tgc_BreakModuleHookOp : Op<Tgc_Dialect, "break_module_hook", []> {
  let summary = "A graph break on either side of a call of a submodule with backward hooks";
  let description = [{
    A call of a submodule with full backward hooks or backward pre-hooks (docs/bytecode.md,
    *Hooks*) is bracketed by two of these: stage `input` before `forward` takes the tensor
    arguments, stage `output` after it (and the forward hooks) the tensor results. Each
    result is the operand, as a fresh value: the call's ops use the `input` results and the
    code after the call the `output` results, so in backward the gradients of the fresh
    values are those of the call alone, as torch's BackwardHook sees them. `positions`
    are the operands' indices among the `arity` positional arguments (or items of the
    returned tuple). In backward the caller calls the module's hooks (the path's `hook`-th
    `grad_hook` replay action, the module) at the `output` stage with the results'
    gradients (the pre-hooks) and at the `input` stage with the arguments' (the full
    hooks). Nothing happens in the forward.

    ```mlir
    %h = tgc.break_module_hook "input" hook = 0 (%x) positions = [0] arity = 2
        : (!tgc.tensor<[4], f32>) -> !tgc.tensor<[4], f32>
    ```
  }];
  let arguments = (ins Variadic<Tgc_AnyTensor>:$tensors, StrAttr:$stage, I64Attr:$hook,
                       DenseI64ArrayAttr:$positions, I64Attr:$arity);
  let results = (outs Variadic<Tgc_AnyTensor>:$results);
  let assemblyFormat = [{
    $stage `hook` `=` $hook `(` $tensors `)` `positions` `=` $positions `arity` `=` $arity
    attr-dict `:` functional-type($tensors, $results)
  }];
  let hasVerifier = 1;
}

#endif // TGC_OPS_TD

//===----------------------------------------------------------------------===//
// Metadata-changing in-place ops (capture level only)
//===----------------------------------------------------------------------===//

/// `self.<op>_(...)`: keeps self's storage and gives it new sizes/strides. The result is
/// self with the new metadata, i.e. a view of self's base; functionalization replays it
/// as the pure view op `functional` (same attributes). The operand's SSA value keeps its
/// old metadata: later uses of it see the storage through the old sizes/strides.
class Tgc_MetadataInPlaceOp<string mnemonic, string functional, list<string> aten>
    : Tgc_Op<mnemonic, aten, [DeclareOpInterfaceMethods<Tgc_ViewOpInterface,
                                                        ["buildScatter", "getValueViewOpName"]>]> {
  let summary = "In-place " # functional # " (metadata only)";
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self) `->` type($result)";
  let extraDecl = "static ::llvm::StringRef getFunctionalOpName() { return \"tgc." # functional # "\"; }";
}
def Tgc_TInPlaceOp : Tgc_MetadataInPlaceOp<"t_", "t", ["aten.t_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self);
  let inferBody = "return ::tgc::inferTranspose(ctx, loc, adaptor.getSelf(), 0, 1, types);";
}
def Tgc_TransposeInPlaceOp : Tgc_MetadataInPlaceOp<"transpose_", "transpose",
                                                   ["aten.transpose_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim0, I64Attr:$dim1);
  let inferBody = "return ::tgc::inferTranspose(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDim0(), adaptor.getDim1(), types);";
}
def Tgc_SqueezeInPlaceOp : Tgc_MetadataInPlaceOp<"squeeze_", "squeeze",
    ["aten.squeeze_.dim", "aten.squeeze_.dims", "aten.squeeze_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, OptionalAttr<DenseI64ArrayAttr>:$dim);
  let inferBody = "return ::tgc::inferSqueeze(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDimAttr(), types);";
}
def Tgc_UnsqueezeInPlaceOp : Tgc_MetadataInPlaceOp<"unsqueeze_", "unsqueeze",
                                                   ["aten.unsqueeze_.default"]> {
  let arguments = (ins Tgc_AnyTensor:$self, I64Attr:$dim);
  let inferBody = "return ::tgc::inferUnsqueeze(ctx, loc, adaptor.getSelf(), "
                  "adaptor.getDim(), types);";
}

//===----------------------------------------------------------------------===//
// out= variants (capture level only)
//===----------------------------------------------------------------------===//

/// `torch.<op>(self, other, out=out)`: writes op(self, other) into `out` (converted to its
/// dtype) and returns it. `out` must already have the result's sizes: resizing it is not
/// supported (functionalization reports it).
class Tgc_OutBinaryOp<string mnemonic, string functional, list<string> aten>
    : Tgc_Op<mnemonic, aten, [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = functional # " into `out`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_TensorOrScalar:$other, Tgc_AnyTensor:$out,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `,` $other `out` $out attr-dict `:` type($self) `,` type($other) "
                       "`,` type($out) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getOut(), types);";
}
def Tgc_AddOutOp : Tgc_OutBinaryOp<"add_out", "add", ["aten.add.out"]>;
def Tgc_SubOutOp : Tgc_OutBinaryOp<"sub_out", "sub", ["aten.sub.out"]>;
def Tgc_MulOutOp : Tgc_OutBinaryOp<"mul_out", "mul", ["aten.mul.out"]>;
def Tgc_DivOutOp : Tgc_OutBinaryOp<"div_out", "div", ["aten.div.out"]>;

/// `torch.<op>(self, out=out)`: writes op(self) into `out` (see Tgc_OutBinaryOp).
class Tgc_OutUnaryOp<string mnemonic, string functional, list<string> aten>
    : Tgc_Op<mnemonic, aten, [DeclareOpInterfaceMethods<Tgc_InPlaceOpInterface>]> {
  let summary = functional # " into `out`";
  let arguments = (ins Tgc_AnyTensor:$self, Tgc_AnyTensor:$out);
  let results = (outs Tgc_AnyTensor:$result);
  let assemblyFormat = "$self `out` $out attr-dict `:` type($self) `,` type($out) `->` type($result)";
  let inferBody = "return ::tgc::inferAlias(ctx, loc, adaptor.getOut(), types);";
  let extraDecl = "static ::llvm::StringRef getFunctionalOpName() { return \"tgc." # functional # "\"; }";
}
def Tgc_SigmoidOutOp : Tgc_OutUnaryOp<"sigmoid_out", "sigmoid", ["aten.sigmoid.out"]>;
def Tgc_TanhOutOp : Tgc_OutUnaryOp<"tanh_out", "tanh", ["aten.tanh.out"]>;
def Tgc_ExpOutOp : Tgc_OutUnaryOp<"exp_out", "exp", ["aten.exp.out"]>;
