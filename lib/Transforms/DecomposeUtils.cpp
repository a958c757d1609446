// What the tgc-decompose patterns share.
#include "DecomposeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::decompose;

BaseTensorType tgc::decompose::typeOf(Value v) { return llvm::cast<BaseTensorType>(v.getType()); }

Value tgc::decompose::f64(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

ShapeAttr tgc::decompose::shapeAttr(MLIRContext *ctx, ArrayRef<AffineExpr> sizes) {
  return ShapeAttr::get(ctx, sizes);
}

Value tgc::decompose::countElements(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims) {
  int64_t constant = 1;
  Value dynamic;
  for (int64_t d : dims) {
    AffineExpr size = typeOf(x).getSizes()[d];
    if (std::optional<int64_t> c = getConstantSize(size)) {
      constant *= *c;
      continue;
    }
    Value s = SymSizeOp::create(b, loc, x, d);
    dynamic = dynamic ? arith::MulIOp::create(b, loc, dynamic, s).getResult() : s;
  }
  Value c = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(constant));
  return dynamic ? arith::MulIOp::create(b, loc, dynamic, c).getResult() : c;
}

Value tgc::decompose::floatConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                                    FloatType type, ArrayRef<double> values) {
  auto tensorType = RankedTensorType::get(shape, type);
  if (type.isF64())
    return ConstantOp::create(b, loc, DenseElementsAttr::get(tensorType, values));
  assert(type.isF32() && "float constants are f32 or f64");
  SmallVector<float> narrow(values.begin(), values.end());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(tensorType, ArrayRef<float>(narrow)));
}

Value tgc::decompose::int64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> values) {
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get(shape, b.getI64Type()), values));
}

Value tgc::decompose::castTo(OpBuilder &b, Location loc, Value v, Type dtype) {
  if (typeOf(v).getDtype() == dtype)
    return v;
  return ToDTypeOp::create(b, loc, v, TypeAttr::get(dtype));
}

Value tgc::decompose::toComputationDtype(OpBuilder &b, Location loc, Value x) {
  Type dtype = typeOf(x).getDtype();
  return dtype.isBF16() || dtype.isF16() ? castTo(b, loc, x, b.getF32Type()) : x;
}

void tgc::decompose::replaceWithCast(PatternRewriter &rewriter, Operation *op,
                                     SmallVector<Value> results) {
  for (auto [value, result] : llvm::zip(results, op->getResults()))
    value = castTo(rewriter, op->getLoc(), value, typeOf(result).getDtype());
  rewriter.replaceOp(op, results);
}

SmallVector<int64_t> tgc::decompose::trailingDims(int64_t from, int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t d = from; d < rank; ++d)
    dims.push_back(d);
  return dims;
}

std::pair<Value, Value> tgc::decompose::meanAndVariance(OpBuilder &b, Location loc, Value x,
                                                        ArrayRef<int64_t> dims, bool onePass) {
  auto dimsAttr = b.getDenseI64ArrayAttr(dims);
  Type dtype = typeOf(x).getDtype();
  if (onePass && dtype.isF32()) {
    auto wide = TypeAttr::get(b.getF64Type()), narrow = TypeAttr::get(dtype);
    Value x64 = ToDTypeOp::create(b, loc, x, wide);
    Value mean = MeanOp::create(b, loc, x64, dimsAttr, /*keepdim=*/true, TypeAttr());
    Value meanSquare = MeanOp::create(b, loc, MulOp::create(b, loc, x64, x64), dimsAttr,
                                      /*keepdim=*/true, TypeAttr());
    Value variance = ReluOp::create(
        b, loc, SubOp::create(b, loc, meanSquare, MulOp::create(b, loc, mean, mean), Attribute()));
    return {ToDTypeOp::create(b, loc, mean, narrow), ToDTypeOp::create(b, loc, variance, narrow)};
  }
  Value mean = MeanOp::create(b, loc, x, dimsAttr, /*keepdim=*/true, TypeAttr());
  Value centered = SubOp::create(b, loc, x, mean, Attribute());
  Value squared = MulOp::create(b, loc, centered, centered);
  Value variance = MeanOp::create(b, loc, squared, dimsAttr, /*keepdim=*/true, TypeAttr());
  return {mean, variance};
}

Value tgc::decompose::squeezeDims(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims) {
  return SqueezeOp::create(b, loc, x, b.getDenseI64ArrayAttr(dims));
}

Value tgc::decompose::channelView(OpBuilder &b, Location loc, Value v, int64_t rank) {
  SmallVector<AffineExpr> sizes(rank, getAffineConstantExpr(1, b.getContext()));
  sizes[1] = typeOf(v).getSizes()[0];
  return ViewOp::create(b, loc, v, shapeAttr(b.getContext(), sizes));
}
