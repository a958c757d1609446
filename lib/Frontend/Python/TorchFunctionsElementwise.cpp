// The elementwise part of the table of torch callables: unary and binary ops,
// comparisons, where/masked_fill and dtype conversions.
#include "TorchFunctionTable.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

/// `//`: division rounding down.
static llvm::Error floorRounding(BoundCall &call) {
  call.arguments.push_back({"rounding_mode", AtenValue::str("floor")});
  return llvm::Error::success();
}

/// Tensor.float() and the like: a conversion to one dtype.
template <unsigned bits, bool isFloat> static llvm::Error convertTo(BoundCall &call) {
  AtenValue *self = findArgument(call, "self");
  if (!self || self->kind != AtenValue::Kind::Tensor)
    return bindingError("expected a tensor");
  MLIRContext *ctx = self->values.front().getContext();
  Type dtype;
  if (isFloat)
    dtype = bits == 16   ? Type(Float16Type::get(ctx))
            : bits == 32 ? Type(Float32Type::get(ctx))
                         : Type(Float64Type::get(ctx));
  else
    dtype = IntegerType::get(ctx, bits, bits == 1 ? IntegerType::Signless : IntegerType::Signed);
  takeArgument(call, "memory_format");
  call.arguments.push_back({"dtype", AtenValue::dtype(dtype)});
  return llvm::Error::success();
}

/// Tensor.to(other): to other's dtype (and device, which the target drops).
static llvm::Error toOtherTensor(BoundCall &call) {
  AtenValue other = takeArgument(call, "other");
  if (other.kind != AtenValue::Kind::Tensor)
    return bindingError("expected a tensor");
  auto type = cast<BaseTensorType>(other.values.front().getType());
  call.arguments.push_back({"dtype", AtenValue::dtype(type.getDtype())});
  call.arguments.push_back({"device", AtenValue::device(type.getMeta().device)});
  return llvm::Error::success();
}

/// Tensor.cpu(): a copy to the CPU (the tensor itself when it is there).
static llvm::Error toCpu(BoundCall &call) {
  call.arguments.push_back({"device", AtenValue::device(Attribute())});
  return llvm::Error::success();
}

// Overload lists shared by several callables.
static std::vector<Overload> binary(llvm::StringLiteral tensorSig, llvm::StringLiteral tensorTarget,
                                    llvm::StringLiteral scalarSig,
                                    llvm::StringLiteral scalarTarget) {
  return {{tensorSig, tensorTarget}, {scalarSig, scalarTarget}};
}

/// Elementwise unary.
static void addUnary(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.relu", "torch.Tensor.relu"},
       {{TGC_SCHEMA("relu(Tensor self)"), "aten.relu.default"}}},
      {{"torch.relu_", "torch.Tensor.relu_", "torch.nn.functional.relu_"},
       {{TGC_SCHEMA("relu_(Tensor self)"), "aten.relu_.default"}}},
      {{"torch.neg", "torch.Tensor.neg", "operator.neg"},
       {{TGC_SCHEMA("neg(Tensor self)"), "aten.neg.default"}}},
      {{"torch.abs", "torch.Tensor.abs", "builtins.abs"},
       {{TGC_SCHEMA("abs(Tensor self)"), "aten.abs.default"}}},
      {{"torch.tanh", "torch.Tensor.tanh", "torch.nn.functional.tanh"},
       {{TGC_SCHEMA("tanh(Tensor self)"), "aten.tanh.default"}}},
      {{"torch.tanh_", "torch.Tensor.tanh_"},
       {{TGC_SCHEMA("tanh_(Tensor self)"), "aten.tanh_.default"}}},
      {{"torch.sigmoid", "torch.Tensor.sigmoid", "torch.nn.functional.sigmoid"},
       {{TGC_SCHEMA("sigmoid(Tensor self)"), "aten.sigmoid.default"}}},
      {{"torch.sigmoid_", "torch.Tensor.sigmoid_"},
       {{TGC_SCHEMA("sigmoid_(Tensor self)"), "aten.sigmoid_.default"}}},
      {{"torch.exp", "torch.Tensor.exp"}, {{TGC_SCHEMA("exp(Tensor self)"), "aten.exp.default"}}},
      {{"torch.log", "torch.Tensor.log"}, {{TGC_SCHEMA("log(Tensor self)"), "aten.log.default"}}},
      {{"torch.sqrt", "torch.Tensor.sqrt"},
       {{TGC_SCHEMA("sqrt(Tensor self)"), "aten.sqrt.default"}}},
      {{"torch.rsqrt", "torch.Tensor.rsqrt"},
       {{TGC_SCHEMA("rsqrt(Tensor self)"), "aten.rsqrt.default"}}},
      {{"torch.erf", "torch.Tensor.erf"}, {{TGC_SCHEMA("erf(Tensor self)"), "aten.erf.default"}}},
      {{"torch.reciprocal", "torch.Tensor.reciprocal"},
       {{TGC_SCHEMA("reciprocal(Tensor self)"), "aten.reciprocal.default"}}},
      {{"torch.sin", "torch.Tensor.sin"}, {{TGC_SCHEMA("sin(Tensor self)"), "aten.sin.default"}}},
      {{"torch.cos", "torch.Tensor.cos"}, {{TGC_SCHEMA("cos(Tensor self)"), "aten.cos.default"}}},
      {{"torch.logical_not", "torch.Tensor.logical_not"},
       {{TGC_SCHEMA("logical_not(Tensor self)"), "aten.logical_not.default"}}},
      {{"torch.bitwise_not", "torch.Tensor.bitwise_not", "operator.invert",
        "torch.Tensor.__invert__"},
       {{TGC_SCHEMA("bitwise_not(Tensor self)"), "aten.bitwise_not.default"}}},
      {{"torch.clamp", "torch.clip", "torch.Tensor.clamp", "torch.Tensor.clip"},
       {{TGC_SCHEMA("clamp(Tensor self, Scalar? min=None, Scalar? max=None)"),
         "aten.clamp.default"}}},
      {{"torch.clamp_", "torch.Tensor.clamp_", "torch.Tensor.clip_"},
       {{TGC_SCHEMA("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None)"),
         "aten.clamp_.default"}}},
      {{"torch.clamp_min", "torch.Tensor.clamp_min"},
       {{TGC_SCHEMA("clamp_min(Tensor self, Scalar min)"), "aten.clamp_min.default"}}},
      {{"torch.clamp_max", "torch.Tensor.clamp_max"},
       {{TGC_SCHEMA("clamp_max(Tensor self, Scalar max)"), "aten.clamp_max.default"}}},
      {{"torch.Tensor.clamp_min_"},
       {{TGC_SCHEMA("clamp_min_(Tensor(a!) self, Scalar min)"), "aten.clamp_min_.default"}}},
      {{"torch.Tensor.clamp_max_"},
       {{TGC_SCHEMA("clamp_max_(Tensor(a!) self, Scalar max)"), "aten.clamp_max_.default"}}},
  };
  llvm::append_range(table, functions);
}

/// Elementwise binary.
static void addBinary(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.add", "torch.Tensor.add", "operator.add", "operator.radd", "torch.Tensor.__add__",
        "torch.Tensor.__radd__"},
       binary(TGC_SCHEMA("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"),
              "aten.add.Tensor",
              TGC_SCHEMA("add.Scalar(Tensor self, Scalar other, Scalar alpha=1)"),
              "aten.add.Scalar")},
      {{"torch.Tensor.add_", "operator.iadd", "torch.Tensor.__iadd__"},
       binary(TGC_SCHEMA("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)"),
              "aten.add_.Tensor",
              TGC_SCHEMA("add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1)"),
              "aten.add_.Scalar")},
      {{"torch.sub", "torch.subtract", "torch.Tensor.sub", "operator.sub", "torch.Tensor.__sub__"},
       binary(TGC_SCHEMA("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"),
              "aten.sub.Tensor",
              TGC_SCHEMA("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1)"),
              "aten.sub.Scalar")},
      {{"torch.Tensor.sub_", "operator.isub", "torch.Tensor.__isub__"},
       binary(TGC_SCHEMA("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)"),
              "aten.sub_.Tensor",
              TGC_SCHEMA("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1)"),
              "aten.sub_.Scalar")},
      {{"torch.rsub", "operator.rsub", "torch.Tensor.__rsub__"},
       binary(TGC_SCHEMA("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"),
              "aten.rsub.Tensor",
              TGC_SCHEMA("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1)"),
              "aten.rsub.Scalar")},
      {{"torch.mul", "torch.multiply", "torch.Tensor.mul", "operator.mul", "operator.rmul",
        "torch.Tensor.__mul__", "torch.Tensor.__rmul__"},
       binary(TGC_SCHEMA("mul.Tensor(Tensor self, Tensor other)"), "aten.mul.Tensor",
              TGC_SCHEMA("mul.Scalar(Tensor self, Scalar other)"), "aten.mul.Scalar")},
      {{"torch.Tensor.mul_", "operator.imul", "torch.Tensor.__imul__"},
       binary(TGC_SCHEMA("mul_.Tensor(Tensor(a!) self, Tensor other)"), "aten.mul_.Tensor",
              TGC_SCHEMA("mul_.Scalar(Tensor(a!) self, Scalar other)"), "aten.mul_.Scalar")},
      {{"torch.div", "torch.divide", "torch.true_divide", "torch.Tensor.div", "torch.Tensor.divide",
        "torch.Tensor.true_divide", "operator.truediv", "torch.Tensor.__truediv__"},
       {{TGC_SCHEMA("div.Tensor(Tensor self, Tensor other)"), "aten.div.Tensor"},
        {TGC_SCHEMA("div.Scalar(Tensor self, Scalar other)"), "aten.div.Scalar"},
        {TGC_SCHEMA("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode)"),
         "aten.div.Tensor_mode"},
        {TGC_SCHEMA("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode)"),
         "aten.div.Scalar_mode"}}},
      {{"operator.rtruediv", "torch.Tensor.__rtruediv__"},
       {{TGC_SCHEMA("rtruediv(Tensor other, Tensor self)"), "aten.div.Tensor"}}},
      {{"torch.Tensor.div_", "operator.itruediv", "torch.Tensor.__itruediv__"},
       binary(TGC_SCHEMA("div_.Tensor(Tensor(a!) self, Tensor other)"), "aten.div_.Tensor",
              TGC_SCHEMA("div_.Scalar(Tensor(a!) self, Scalar other)"), "aten.div_.Scalar")},
      {{"torch.floor_divide", "torch.Tensor.floor_divide", "operator.floordiv",
        "torch.Tensor.__floordiv__"},
       {{TGC_SCHEMA("floordiv(Tensor self, Tensor other)"), "aten.div.Tensor_mode", floorRounding},
        {TGC_SCHEMA("floordiv(Tensor self, Scalar other)"), "aten.div.Scalar_mode",
         floorRounding}}},
      {{"torch.pow", "torch.Tensor.pow", "operator.pow", "torch.Tensor.__pow__"},
       {{TGC_SCHEMA("pow.Tensor_Tensor(Tensor self, Tensor exponent)"), "aten.pow.Tensor_Tensor"},
        {TGC_SCHEMA("pow.Tensor_Scalar(Tensor self, Scalar exponent)"), "aten.pow.Tensor_Scalar"},
        {TGC_SCHEMA("pow.Scalar(Scalar self, Tensor exponent)"), "aten.pow.Scalar"}}},
      {{"operator.rpow", "torch.Tensor.__rpow__"},
       {{TGC_SCHEMA("rpow(Tensor exponent, Scalar self)"), "aten.pow.Scalar"},
        {TGC_SCHEMA("rpow(Tensor exponent, Tensor self)"), "aten.pow.Tensor_Tensor"}}},
      {{"torch.maximum", "torch.Tensor.maximum"},
       {{TGC_SCHEMA("maximum(Tensor self, Tensor other)"), "aten.maximum.default"}}},
      {{"torch.fmax", "torch.Tensor.fmax"},
       {{TGC_SCHEMA("fmax(Tensor self, Tensor other)"), "aten.fmax.default"}}},
      {{"torch.fmin", "torch.Tensor.fmin"},
       {{TGC_SCHEMA("fmin(Tensor self, Tensor other)"), "aten.fmin.default"}}},
      {{"torch.isfinite", "torch.Tensor.isfinite"},
       {{TGC_SCHEMA("isfinite(Tensor self)"), "aten.isfinite.default"}}},
      {{"torch.minimum", "torch.Tensor.minimum"},
       {{TGC_SCHEMA("minimum(Tensor self, Tensor other)"), "aten.minimum.default"}}},
      // max.dim / min.dim come before .other, as in torch's parser: `x.max(0)` is a
      // reduction over dim 0 (values and indices), never maximum(x, 0).
      {{"torch.max", "torch.Tensor.max"},
       {{TGC_SCHEMA("max(Tensor self)"), "aten.amax.default"},
        {"max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
         "indices)",
         "aten.max.dim"},
        {TGC_SCHEMA("max.other(Tensor self, Tensor other)"), "aten.maximum.default"}}},
      {{"torch.min", "torch.Tensor.min"},
       {{TGC_SCHEMA("min(Tensor self)"), "aten.amin.default"},
        {"min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
         "indices)",
         "aten.min.dim"},
        {TGC_SCHEMA("min.other(Tensor self, Tensor other)"), "aten.minimum.default"}}},
      {{"torch.eq", "torch.Tensor.eq", "operator.eq", "torch.Tensor.__eq__"},
       binary(TGC_SCHEMA("eq.Tensor(Tensor self, Tensor other)"), "aten.eq.Tensor",
              TGC_SCHEMA("eq.Scalar(Tensor self, Scalar other)"), "aten.eq.Scalar")},
      {{"torch.ne", "torch.not_equal", "torch.Tensor.ne", "operator.ne", "torch.Tensor.__ne__"},
       binary(TGC_SCHEMA("ne.Tensor(Tensor self, Tensor other)"), "aten.ne.Tensor",
              TGC_SCHEMA("ne.Scalar(Tensor self, Scalar other)"), "aten.ne.Scalar")},
      {{"torch.lt", "torch.less", "torch.Tensor.lt", "operator.lt", "torch.Tensor.__lt__"},
       binary(TGC_SCHEMA("lt.Tensor(Tensor self, Tensor other)"), "aten.lt.Tensor",
              TGC_SCHEMA("lt.Scalar(Tensor self, Scalar other)"), "aten.lt.Scalar")},
      {{"torch.le", "torch.less_equal", "torch.Tensor.le", "operator.le", "torch.Tensor.__le__"},
       binary(TGC_SCHEMA("le.Tensor(Tensor self, Tensor other)"), "aten.le.Tensor",
              TGC_SCHEMA("le.Scalar(Tensor self, Scalar other)"), "aten.le.Scalar")},
      {{"torch.gt", "torch.greater", "torch.Tensor.gt", "operator.gt", "torch.Tensor.__gt__"},
       binary(TGC_SCHEMA("gt.Tensor(Tensor self, Tensor other)"), "aten.gt.Tensor",
              TGC_SCHEMA("gt.Scalar(Tensor self, Scalar other)"), "aten.gt.Scalar")},
      {{"torch.ge", "torch.greater_equal", "torch.Tensor.ge", "operator.ge", "torch.Tensor.__ge__"},
       binary(TGC_SCHEMA("ge.Tensor(Tensor self, Tensor other)"), "aten.ge.Tensor",
              TGC_SCHEMA("ge.Scalar(Tensor self, Scalar other)"), "aten.ge.Scalar")},
      {{"torch.logical_and", "torch.Tensor.logical_and"},
       {{TGC_SCHEMA("logical_and(Tensor self, Tensor other)"), "aten.logical_and.default"}}},
      {{"torch.logical_or", "torch.Tensor.logical_or"},
       {{TGC_SCHEMA("logical_or(Tensor self, Tensor other)"), "aten.logical_or.default"}}},
      // `&`, `|`, `^` are bitwise on integers, logical on bools (as tgc's bitwise ops are).
      {{"torch.bitwise_and", "torch.Tensor.bitwise_and", "operator.and_", "operator.rand_",
        "torch.Tensor.__and__", "torch.Tensor.__rand__"},
       binary(
           TGC_SCHEMA("bitwise_and.Tensor(Tensor self, Tensor other)"), "aten.bitwise_and.Tensor",
           TGC_SCHEMA("bitwise_and.Scalar(Tensor self, Scalar other)"), "aten.bitwise_and.Scalar")},
      {{"torch.bitwise_or", "torch.Tensor.bitwise_or", "operator.or_", "operator.ror_",
        "torch.Tensor.__or__", "torch.Tensor.__ror__"},
       binary(TGC_SCHEMA("bitwise_or.Tensor(Tensor self, Tensor other)"), "aten.bitwise_or.Tensor",
              TGC_SCHEMA("bitwise_or.Scalar(Tensor self, Scalar other)"),
              "aten.bitwise_or.Scalar")},
      {{"torch.bitwise_xor", "torch.Tensor.bitwise_xor", "operator.xor", "operator.rxor",
        "torch.Tensor.__xor__", "torch.Tensor.__rxor__"},
       binary(
           TGC_SCHEMA("bitwise_xor.Tensor(Tensor self, Tensor other)"), "aten.bitwise_xor.Tensor",
           TGC_SCHEMA("bitwise_xor.Scalar(Tensor self, Scalar other)"), "aten.bitwise_xor.Scalar")},
      {{"torch.bitwise_left_shift", "torch.Tensor.bitwise_left_shift", "operator.lshift",
        "torch.Tensor.__lshift__"},
       binary(TGC_SCHEMA("bitwise_left_shift.Tensor(Tensor self, Tensor other)"),
              "aten.bitwise_left_shift.Tensor",
              TGC_SCHEMA("bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other)"),
              "aten.bitwise_left_shift.Tensor_Scalar")},
      {{"torch.bitwise_right_shift", "torch.Tensor.bitwise_right_shift", "operator.rshift",
        "torch.Tensor.__rshift__"},
       binary(TGC_SCHEMA("bitwise_right_shift.Tensor(Tensor self, Tensor other)"),
              "aten.bitwise_right_shift.Tensor",
              TGC_SCHEMA("bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other)"),
              "aten.bitwise_right_shift.Tensor_Scalar")},
      // `%` is Python's modulo (the sign of the divisor), torch.fmod C's (the dividend's).
      {{"torch.remainder", "torch.Tensor.remainder", "operator.mod", "torch.Tensor.__mod__"},
       binary(TGC_SCHEMA("remainder.Tensor(Tensor self, Tensor other)"), "aten.remainder.Tensor",
              TGC_SCHEMA("remainder.Scalar(Tensor self, Scalar other)"), "aten.remainder.Scalar")},
      {{"torch.fmod", "torch.Tensor.fmod"},
       binary(TGC_SCHEMA("fmod.Tensor(Tensor self, Tensor other)"), "aten.fmod.Tensor",
              TGC_SCHEMA("fmod.Scalar(Tensor self, Scalar other)"), "aten.fmod.Scalar")},
      {{"torch.where", "torch.Tensor.where"},
       {{TGC_SCHEMA("where.self(Tensor condition, Tensor self, Tensor other)"), "aten.where.self"},
        {TGC_SCHEMA("where.ScalarOther(Tensor condition, Tensor self, Scalar other)"),
         "aten.where.ScalarOther"},
        {TGC_SCHEMA("where.ScalarSelf(Tensor condition, Scalar self, Tensor other)"),
         "aten.where.ScalarSelf"},
        {TGC_SCHEMA("where.Scalar(Tensor condition, Scalar self, Scalar other)"),
         "aten.where.Scalar"}}},
      {{"torch.masked_fill", "torch.Tensor.masked_fill"},
       binary(TGC_SCHEMA("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value)"),
              "aten.masked_fill.Scalar",
              TGC_SCHEMA("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value)"),
              "aten.masked_fill.Tensor")},
      {{"torch.Tensor.masked_fill_"},
       binary(TGC_SCHEMA("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value)"),
              "aten.masked_fill_.Scalar",
              TGC_SCHEMA("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value)"),
              "aten.masked_fill_.Tensor")},
      {{"torch.type_as", "torch.Tensor.type_as"},
       {{TGC_SCHEMA("type_as(Tensor self, Tensor other)"), "aten.type_as.default"}}},
  };
  llvm::append_range(table, functions);
}

/// Conversions to a dtype or device.
static void addConversions(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.Tensor.to"},
       {{TGC_SCHEMA("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool "
                    "copy=False, MemoryFormat? memory_format=None)"),
         "aten.to.dtype"},
        {TGC_SCHEMA("to.device(Tensor(a) self, Device? device=None, ScalarType? dtype=None, bool "
                    "non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)"),
         "aten._to_copy.default"},
        {TGC_SCHEMA("to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool "
                    "copy=False, *, MemoryFormat? memory_format=None)"),
         "aten._to_copy.default", toOtherTensor}}},
      {{"torch.Tensor.cpu"},
       {{TGC_SCHEMA("cpu(Tensor(a) self, MemoryFormat? memory_format=None)"),
         "aten._to_copy.default", toCpu}}},
      {{"torch.Tensor.float"},
       {{TGC_SCHEMA("float(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<32, true>}}},
      {{"torch.Tensor.double"},
       {{TGC_SCHEMA("double(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<64, true>}}},
      {{"torch.Tensor.half"},
       {{TGC_SCHEMA("half(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<16, true>}}},
      {{"torch.Tensor.int"},
       {{TGC_SCHEMA("int(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<32, false>}}},
      {{"torch.Tensor.long"},
       {{TGC_SCHEMA("long(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<64, false>}}},
      {{"torch.Tensor.bool"},
       {{TGC_SCHEMA("bool(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<1, false>}}},
  };
  llvm::append_range(table, functions);
}

void tgc::py::addElementwiseTorchFunctions(std::vector<TorchFunction> &table) {
  addUnary(table);
  addBinary(table);
  addConversions(table);
}
