// tgc-widen-accumulators: bf16/f16 matrix products and convolutions accumulate in f32
// and round once, as ATen's CPU kernels do; products of operands widened from bf16/f16
// read the narrow operands.
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tgc {
#define GEN_PASS_DEF_WIDENACCUMULATORSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

bool isNarrowFloat(Type t) { return t.isBF16() || t.isF16(); }

/// `v` (a ranked tensor) with its elements converted to `element` by an elementwise
/// linalg.generic (extf to widen, truncf to narrow).
Value convertElements(OpBuilder &b, Location loc, Value v, Type element) {
  auto type = llvm::cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  Value init = tensor::EmptyOp::create(b, loc, sizes, element);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  bool widen = element.getIntOrFloatBitWidth() > type.getElementTypeBitWidth();
  return linalg::GenericOp::create(
             b, loc, init.getType(), v, init, ArrayRef<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value converted = widen
                                     ? arith::ExtFOp::create(nb, l, element, args[0]).getResult()
                                     : arith::TruncFOp::create(nb, l, element, args[0]).getResult();
               linalg::YieldOp::create(nb, l, converted);
             })
      .getResult(0);
}

/// The f32 accumulator for `init`: a fill of the same constant, or `init` widened.
Value widenInit(OpBuilder &b, Location loc, Value init, Type f32) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    Attribute value;
    if (matchPattern(fill.getInputs()[0], m_Constant(&value)))
      if (auto f = llvm::dyn_cast<FloatAttr>(value)) {
        Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init), f32);
        Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, f.getValueAsDouble()));
        return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
      }
  }
  return convertElements(b, loc, init, f32);
}

/// Rebuilds the named op `op` (one tensor output of a narrow float type) with an f32
/// accumulator; its region comes from the op's own region builder.
template <typename OpT> void widen(OpT op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value init = op.getDpsInits()[0];
  Type narrow = llvm::cast<RankedTensorType>(init.getType()).getElementType();
  Value wide = widenInit(b, loc, init, b.getF32Type());
  // Every attribute but the operand segments (matmul's indexing_maps among them).
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "operandSegmentSizes")
      attributes.push_back(a);
  auto rebuilt = OpT::create(b, loc, TypeRange{wide.getType()}, op.getDpsInputs(), ValueRange{wide},
                             attributes);
  Value result = convertElements(b, loc, rebuilt->getResult(0), narrow);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

/// The narrow tensor `v` widens, when `v` is an elementwise `extf` of all of it (an
/// identity-indexed linalg.generic whose body only extends its input).
Value widenedFrom(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block &body = generic.getRegion().front();
  auto yield = llvm::cast<linalg::YieldOp>(body.getTerminator());
  auto ext = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  if (!ext || &body.front() != ext.getOperation() || ext.getIn() != body.getArgument(0))
    return {};
  Value source = generic.getDpsInputs()[0];
  auto type = llvm::dyn_cast<RankedTensorType>(source.getType());
  return type && isNarrowFloat(type.getElementType()) ? source : Value();
}

/// A product with an f32 accumulator of operands widened from bf16/f16 reads the narrow
/// operands: the named op extends each element to the accumulator's type itself, so the
/// values are the same and the widened copies are not made (the f32 products that
/// decomposition writes for a bf16 linear with bias, tgc-decompose).
template <typename OpT> void foldWidenedOperands(OpT op) {
  auto init = llvm::dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!init || !init.getElementType().isF32() || op->getNumResults() != 1)
    return;
  SmallVector<Value> inputs(op.getDpsInputs());
  bool changed = false;
  for (Value &input : inputs)
    if (Value narrow = widenedFrom(input)) {
      input = narrow;
      changed = true;
    }
  if (!changed)
    return;
  // The region's block arguments follow the operand types: rebuilt by the op's builder.
  OpBuilder b(op);
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "operandSegmentSizes")
      attributes.push_back(a);
  auto rebuilt =
      OpT::create(b, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(), attributes);
  op->getResult(0).replaceAllUsesWith(rebuilt->getResult(0));
  op->erase();
}

struct WidenAccumulatorsPass : tgc::impl::WidenAccumulatorsPassBase<WidenAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> narrow;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op->getNumResults() != 1)
        return;
      auto type = llvm::dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
      if (type && isNarrowFloat(type.getElementType()))
        narrow.push_back(op);
    });
    for (Operation *op : narrow)
      llvm::TypeSwitch<Operation *>(op)
          .Case([](linalg::MatmulOp m) { widen(m); })
          .Case([](linalg::BatchMatmulOp m) { widen(m); })
          .Case([](linalg::Conv2DNchwFchwOp m) { widen(m); })
          .Case([](linalg::Conv2DNgchwGfchwOp m) { widen(m); })
          .Default([](Operation *) {});
    SmallVector<Operation *> products;
    getOperation()->walk([&](Operation *op) {
      if (llvm::isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        products.push_back(op);
    });
    for (Operation *op : products)
      llvm::TypeSwitch<Operation *>(op)
          .Case([](linalg::MatmulOp m) { foldWidenedOperands(m); })
          .Case([](linalg::BatchMatmulOp m) { foldWidenedOperands(m); });
  }
};

} // namespace
