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

#include "VectorOperands.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// The body of `op` on scalars at the loop indices `ivs`, its outputs' block arguments
/// replaced by `carried`: the values it yields.
scf::ValueVector cloneScalarBody(OpBuilder &b, Location loc, linalg::GenericOp op, ValueRange ivs,
                                 ValueRange carried) {
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
  Block &body = op.getRegion().front();
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
}

/// The vector kind of an op that combines two values (a reduction's combiner).
std::optional<vector::CombiningKind> combiningKind(Operation *op) {
  using Kind = vector::CombiningKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return Kind::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return Kind::MUL; })
      .Case([](arith::MaximumFOp) { return Kind::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return Kind::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return Kind::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return Kind::MINNUMF; })
      .Case([](arith::MaxSIOp) { return Kind::MAXSI; })
      .Case([](arith::MinSIOp) { return Kind::MINSI; })
      .Case([](arith::MaxUIOp) { return Kind::MAXUI; })
      .Case([](arith::MinUIOp) { return Kind::MINUI; })
      .Case([](arith::AndIOp) { return Kind::AND; })
      .Case([](arith::OrIOp) { return Kind::OR; })
      .Default([](Operation *) { return std::nullopt; });
}

/// How one output of a reduction is combined: `combiner` (the body's only use of the
/// carried value, yielded) joins `contribution` to it.
struct Combination {
  Operation *combiner;
  Value contribution;
  vector::CombiningKind kind;
  TypedAttr identity;
};

/// A reduction whose innermost loop reduces, written with vectors of `lanes` elements
/// along it.
struct VectorPlan {
  int64_t lanes;
  SmallVector<Combination> outputs;
};

/// Vector accumulators per output in the main loop: 4 independent registers' worth, so
/// the combining op's latency does not bound the loop.
constexpr int64_t kUnroll = 4;

/// The vector plan of `op` (its innermost loop a reduction), or nullopt when it keeps
/// scalar code: every input read contiguously along the innermost loop or broadcast
/// along it, a body of arith and math ops, and each output combined once, by a
/// recognized op, with a value that does not depend on it.
std::optional<VectorPlan> planVector(linalg::GenericOp op, unsigned vectorBits) {
  unsigned inner = op.getNumLoops() - 1;
  unsigned widest = 8;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Type type = input->get().getType();
    if (isa<MemRefType>(type) ? !tgc::innerAccess(op, *input, inner)
                              : !tgc::memoryElementBits(type))
      return std::nullopt;
    widest = std::max(widest, *tgc::memoryElementBits(getElementTypeOrSelf(type)));
  }
  if (!tgc::hasVectorBody(op))
    return std::nullopt;
  for (Operation &bodyOp : op.getBody()->without_terminator())
    if (bodyOp.getNumOperands() != 0 && !isa<linalg::IndexOp>(bodyOp) &&
        !bodyOp.hasTrait<OpTrait::Elementwise>())
      return std::nullopt;
  VectorPlan plan;
  Operation *yield = op.getBody()->getTerminator();
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    std::optional<unsigned> bits = tgc::memoryElementBits(getElementTypeOrSelf(init.get()));
    BlockArgument carried = op.getMatchingBlockArgument(&init);
    if (!bits || !carried.hasOneUse())
      return std::nullopt;
    widest = std::max(widest, *bits);
    Operation *combiner = *carried.getUsers().begin();
    std::optional<vector::CombiningKind> kind = combiningKind(combiner);
    std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
    Value yielded = yield->getOperand(i);
    if (!kind || !identity || combiner->getNumOperands() != 2 ||
        yielded != combiner->getResult(0) || !yielded.hasOneUse())
      return std::nullopt;
    Value contribution =
        combiner->getOperand(0) == carried ? combiner->getOperand(1) : combiner->getOperand(0);
    plan.outputs.push_back({combiner, contribution, *kind, *identity});
  }
  plan.lanes = vectorBits / widest;
  int64_t size = op.getStaticLoopRanges()[inner];
  if (plan.lanes < 2 || !llvm::isPowerOf2_64(plan.lanes) ||
      (!ShapedType::isDynamic(size) && size < plan.lanes))
    return std::nullopt;
  return plan;
}

/// The contributions of `op`'s body on `width` consecutive elements of its innermost
/// loop, from `ivs[inner]` on: the body with vector operands where they vary along
/// the loop (contiguous inputs, the loop's linalg.index and what depends on them),
/// scalars where they do not, and no combiners.
SmallVector<Value> vectorContributions(OpBuilder &b, Location loc, linalg::GenericOp op,
                                       const VectorPlan &plan, ValueRange ivs, int64_t width) {
  unsigned inner = op.getNumLoops() - 1;
  IRMapping scalars;
  DenseMap<Value, Value> vectors;
  auto vectorOf = [&](Value value) -> Value {
    if (Value vector = vectors.lookup(value))
      return vector;
    Value scalar = scalars.lookupOrDefault(value);
    Value vector =
        vector::BroadcastOp::create(b, loc, VectorType::get({width}, scalar.getType()), scalar);
    vectors[value] = vector;
    return vector;
  };
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (!isa<MemRefType>(value.getType())) {
      scalars.map(arg, value);
      continue;
    }
    SmallVector<Value> indices = applyMap(b, loc, op.getMatchingIndexingMap(input), ivs);
    if (*tgc::innerAccess(op, *input, inner) == tgc::InnerAccess::Contiguous)
      vectors[arg] = vector::LoadOp::create(
          b, loc, VectorType::get({width}, getElementTypeOrSelf(value)), value, indices);
    else
      scalars.map(arg, memref::LoadOp::create(b, loc, value, indices));
  }
  auto isCombiner = [&](Operation &bodyOp) {
    return llvm::any_of(plan.outputs, [&](const Combination &c) { return c.combiner == &bodyOp; });
  };
  for (Operation &bodyOp : op.getBody()->without_terminator()) {
    if (isCombiner(bodyOp))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
      if (index.getDim() != inner) {
        scalars.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      auto type = VectorType::get({width}, b.getIndexType());
      Value lanes = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              type, llvm::to_vector(llvm::map_range(llvm::seq<int64_t>(0, width), [&](int64_t l) {
                return cast<Attribute>(b.getIndexAttr(l));
              }))));
      Value first = vector::BroadcastOp::create(b, loc, type, ivs[inner]);
      vectors[index.getResult()] = arith::AddIOp::create(b, loc, first, lanes);
      continue;
    }
    if (llvm::none_of(bodyOp.getOperands(), [&](Value v) { return vectors.contains(v); })) {
      b.clone(bodyOp, scalars);
      continue;
    }
    OperationState state(loc, bodyOp.getName());
    for (Value operand : bodyOp.getOperands())
      state.operands.push_back(vectorOf(operand));
    for (Type type : bodyOp.getResultTypes())
      state.types.push_back(VectorType::get({width}, type));
    state.addAttributes(bodyOp.getAttrs());
    Operation *vectorOp = b.create(state);
    for (auto [result, vector] : llvm::zip(bodyOp.getResults(), vectorOp->getResults()))
      vectors[result] = vector;
  }
  return llvm::to_vector(llvm::map_range(
      plan.outputs, [&](const Combination &c) { return vectorOf(c.contribution); }));
}

/// `value` (a vector of a power-of-two size) combined down to `lanes` elements by halves:
/// a fixed order, whatever the thread count.
Value combineHalves(OpBuilder &b, Location loc, vector::CombiningKind kind, Value value,
                    int64_t lanes) {
  for (int64_t n = cast<VectorType>(value.getType()).getNumElements(); n > lanes; n /= 2) {
    Value low = vector::ExtractStridedSliceOp::create(b, loc, value, {0}, {n / 2}, {1});
    Value high = vector::ExtractStridedSliceOp::create(b, loc, value, {n / 2}, {n / 2}, {1});
    value = vector::makeArithReduction(b, loc, kind, low, high);
  }
  return value;
}

/// The loops of a reduction: an scf.parallel over the parallel loops (`prefix` of them),
/// for each output element an scf.for nest over the reduction loops carrying the
/// accumulators, and a store. Without a vector plan the accumulator is the output
/// element; with one, the innermost loop runs in vectors of kUnroll * lanes elements,
/// then of lanes, then scalars, each carrying accumulators of its width (starting from
/// the combiner's identity), combined at the end with the scalar one.
void lower(linalg::GenericOp op, unsigned prefix, const std::optional<VectorPlan> &plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> lbs, ubs, steps;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc)) {
    lbs.push_back(getValueOrCreateConstantIndexOp(b, loc, range.offset));
    ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
    steps.push_back(getValueOrCreateConstantIndexOp(b, loc, range.stride));
  }
  unsigned inner = op.getNumLoops() - 1;
  int64_t outputs = op.getNumDpsInits();

  // The vector widths of the innermost loop, widest first (static sizes drop the ones
  // that never run), and whether scalars finish it.
  SmallVector<int64_t> widths;
  bool scalarTail = true;
  std::optional<int64_t> size = getConstantIntValue(ubs[inner]);
  if (plan) {
    int64_t lanes = plan->lanes, wide = kUnroll * lanes;
    if (!size || *size >= wide)
      widths.push_back(wide);
    if (!size || (widths.empty() ? *size : *size % wide) >= lanes)
      widths.push_back(lanes);
    scalarTail = !size || *size % lanes != 0;
  }
  int64_t perOutput = widths.size() + 1;

  // The innermost loop, from the outer reduction loops' indices `ivs`: the vector
  // loops, then the scalar one.
  auto innermost = [&](OpBuilder &b, Location loc, ValueRange ivs,
                       ValueRange carried) -> scf::ValueVector {
    scf::ValueVector next(carried.begin(), carried.end());
    Value begin = lbs[inner];
    for (size_t w = 0; w < widths.size(); ++w) {
      int64_t width = widths[w];
      Value step = arith::ConstantIndexOp::create(b, loc, width);
      Value rest = arith::SubIOp::create(b, loc, ubs[inner], begin);
      Value end =
          arith::SubIOp::create(b, loc, ubs[inner], arith::RemUIOp::create(b, loc, rest, step));
      SmallVector<Value> accs;
      for (int64_t o = 0; o < outputs; ++o)
        accs.push_back(next[o * perOutput + w]);
      auto loop = scf::ForOp::create(b, loc, begin, end, step, accs,
                                     [&](OpBuilder &lb, Location ll, Value iv, ValueRange accs) {
                                       SmallVector<Value> all(ivs);
                                       all.push_back(iv);
                                       SmallVector<Value> parts =
                                           vectorContributions(lb, ll, op, *plan, all, width);
                                       SmallVector<Value> combined;
                                       for (auto [o, part] : llvm::enumerate(parts))
                                         combined.push_back(vector::makeArithReduction(
                                             lb, ll, plan->outputs[o].kind, part, accs[o]));
                                       scf::YieldOp::create(lb, ll, combined);
                                     });
      for (int64_t o = 0; o < outputs; ++o)
        next[o * perOutput + w] = loop.getResult(o);
      begin = end;
    }
    if (!scalarTail)
      return next;
    SmallVector<Value> accs;
    for (int64_t o = 0; o < outputs; ++o)
      accs.push_back(next[o * perOutput + perOutput - 1]);
    auto loop =
        scf::ForOp::create(b, loc, begin, ubs[inner], steps[inner], accs,
                           [&](OpBuilder &lb, Location ll, Value iv, ValueRange accs) {
                             SmallVector<Value> all(ivs);
                             all.push_back(iv);
                             scf::YieldOp::create(lb, ll, cloneScalarBody(lb, ll, op, all, accs));
                           });
    for (int64_t o = 0; o < outputs; ++o)
      next[o * perOutput + perOutput - 1] = loop.getResult(o);
    return next;
  };

  // The reduction loops of one output element, at the parallel indices `outer`.
  auto reduce = [&](OpBuilder &b, Location loc, ValueRange outer) {
    SmallVector<Value> initial;
    for (auto [o, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      for (int64_t width : widths)
        initial.push_back(arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(VectorType::get({width}, getElementTypeOrSelf(init.get())),
                                   cast<Attribute>(plan->outputs[o].identity))));
      initial.push_back(memref::LoadOp::create(
          b, loc, init.get(), applyMap(b, loc, op.getMatchingIndexingMap(&init), outer)));
    }
    auto body = [&](OpBuilder &b, Location loc, ValueRange reductionIvs,
                    ValueRange carried) -> scf::ValueVector {
      SmallVector<Value> ivs(outer);
      llvm::append_range(ivs, reductionIvs);
      return innermost(b, loc, ivs, carried);
    };
    scf::LoopNest nest =
        scf::buildLoopNest(b, loc, ArrayRef(lbs).slice(prefix, inner - prefix),
                           ArrayRef(ubs).slice(prefix, inner - prefix),
                           ArrayRef(steps).slice(prefix, inner - prefix), initial, body);
    for (auto [o, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value result = nest.results[o * perOutput + perOutput - 1];
      if (!widths.empty()) {
        vector::CombiningKind kind = plan->outputs[o].kind;
        Value vector;
        for (auto [w, width] : llvm::enumerate(widths)) {
          Value part = combineHalves(b, loc, kind, nest.results[o * perOutput + w], plan->lanes);
          vector = vector ? vector::makeArithReduction(b, loc, kind, vector, part) : part;
        }
        Value lane = vector::ExtractOp::create(b, loc, combineHalves(b, loc, kind, vector, 1),
                                               ArrayRef<int64_t>{0});
        result = vector::makeArithReduction(b, loc, kind, result, lane);
      }
      memref::StoreOp::create(b, loc, result, init.get(),
                              applyMap(b, loc, op.getMatchingIndexingMap(&init), outer));
    }
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
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, unsigned>> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<unsigned> prefix = parallelPrefix(op))
        reductions.push_back({op, *prefix});
    });
    for (auto [op, prefix] : reductions) {
      std::optional<VectorPlan> plan;
      if (vectorBits != 0 && op.getIteratorTypesArray().back() == utils::IteratorType::reduction)
        plan = planVector(op, vectorBits);
      lower(op, prefix, plan);
    }
  }
};

} // namespace
