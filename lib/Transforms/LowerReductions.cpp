// tgc-lower-reductions: reductions as loops that carry their accumulators in registers
// (docs/kernels.md).
//
// linalg's lowering to loops loads and stores the output element in every iteration of
// a reduction. LLVM cannot keep it in a register (the output may alias an input), so
// the innermost loop is a chain of scalar adds through memory. Here the output element
// is loaded once, carried through the reduction loops as an iteration argument and
// stored once, and its combining op may be reassociated, so LLVM vectorizes the
// innermost loop with partial results.
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

namespace tgc {
#define GEN_PASS_DEF_LOWERREDUCTIONSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// The number of leading parallel loops of `op` when every loop after them is a
/// reduction and there is at least one, and the outputs are indexed by the parallel
/// loops only; nullopt otherwise.
std::optional<unsigned> parallelPrefix(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned prefix = 0;
  while (prefix < iterators.size() && iterators[prefix] == utils::IteratorType::parallel)
    ++prefix;
  if (prefix == iterators.size())
    return std::nullopt;
  for (unsigned d = prefix; d < iterators.size(); ++d)
    if (iterators[d] != utils::IteratorType::reduction)
      return std::nullopt;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = prefix; d < iterators.size(); ++d)
      if (map.isFunctionOfDim(d))
        return std::nullopt;
  }
  return prefix;
}

/// The indices `map` gives for the loop induction variables `ivs`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    AffineMap single = AffineMap::get(map.getNumDims(), map.getNumSymbols(), expr);
    indices.push_back(affine::AffineApplyOp::create(b, loc, single, ivs));
  }
  return indices;
}

/// Marks the op that combines `carried` into `yielded` as reassociable.
void allowReassociation(Value yielded, Value carried) {
  Operation *def = yielded.getDefiningOp();
  if (!def ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
           arith::MinNumFOp>(def) ||
      !llvm::is_contained(def->getOperands(), carried))
    return;
  auto fastmath = cast<arith::ArithFastMathInterface>(def);
  arith::FastMathFlags flags =
      fastmath.getFastMathFlagsAttr().getValue() | arith::FastMathFlags::reassoc;
  def->setAttr(fastmath.getFastMathAttrName(),
               arith::FastMathFlagsAttr::get(def->getContext(), flags));
}

void lower(linalg::GenericOp op, unsigned prefix) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> lbs, ubs, steps;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc)) {
    lbs.push_back(getValueOrCreateConstantIndexOp(b, loc, range.offset));
    ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
    steps.push_back(getValueOrCreateConstantIndexOp(b, loc, range.stride));
  }
  Block &body = op.getRegion().front();

  // The reduction loops of one output element, at the parallel indices `outer`.
  auto reduce = [&](OpBuilder &b, Location loc, ValueRange outer) {
    SmallVector<Value> initial;
    for (OpOperand &init : op.getDpsInitsMutable())
      initial.push_back(memref::LoadOp::create(
          b, loc, init.get(), applyMap(b, loc, op.getMatchingIndexingMap(&init), outer)));
    auto inner = [&](OpBuilder &b, Location loc, ValueRange reductionIvs,
                     ValueRange carried) -> scf::ValueVector {
      SmallVector<Value> ivs(outer);
      llvm::append_range(ivs, reductionIvs);
      IRMapping mapping;
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value value = input->get();
        if (isa<MemRefType>(value.getType()))
          value = memref::LoadOp::create(b, loc, value,
                                         applyMap(b, loc, op.getMatchingIndexingMap(input), ivs));
        mapping.map(op.getMatchingBlockArgument(input), value);
      }
      for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
        mapping.map(op.getMatchingBlockArgument(&init), carried[i]);
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        b.clone(inner, mapping);
      }
      scf::ValueVector results;
      for (auto [i, yielded] : llvm::enumerate(body.getTerminator()->getOperands())) {
        results.push_back(mapping.lookupOrDefault(yielded));
        allowReassociation(results.back(), carried[i]);
      }
      return results;
    };
    scf::LoopNest nest = scf::buildLoopNest(b, loc, ArrayRef(lbs).drop_front(prefix),
                                            ArrayRef(ubs).drop_front(prefix),
                                            ArrayRef(steps).drop_front(prefix), initial, inner);
    for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), nest.results))
      memref::StoreOp::create(b, loc, result, init.get(),
                              applyMap(b, loc, op.getMatchingIndexingMap(&init), outer));
  };

  if (prefix == 0) {
    reduce(b, loc, ValueRange{});
  } else {
    scf::ParallelOp::create(
        b, loc, ArrayRef(lbs).take_front(prefix), ArrayRef(ubs).take_front(prefix),
        ArrayRef(steps).take_front(prefix),
        [&](OpBuilder &b, Location loc, ValueRange ivs) { reduce(b, loc, ivs); });
  }
  op.erase();
}

struct LowerReductionsPass : tgc::impl::LowerReductionsPassBase<LowerReductionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, unsigned>> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<unsigned> prefix = parallelPrefix(op))
        reductions.push_back({op, *prefix});
    });
    for (auto [op, prefix] : reductions)
      lower(op, prefix);
  }
};

} // namespace
