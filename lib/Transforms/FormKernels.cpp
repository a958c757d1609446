// tgc-form-kernels: fusion groups outlined as kernel functions (docs/kernels.md).
//
// On linalg over builtin tensors. First the elementwise chains fuse: named structured ops
// that a library or a dedicated lowering does not take (everything but fills,
// contractions and convolutions) are generalized, and a `linalg.generic` producer with
// one use fuses into its `linalg.generic` consumer (elementwise into elementwise, and the
// prologue of a reduction). Then every remaining structured op is the root of a group
// that also holds copies of the cheap producers of its operands (output fills, view
// ops, index shape tensors, scalar constants); the group becomes a private function
// marked `tgc.kernel`, and the root a call of it.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tgc {
#define GEN_PASS_DEF_FORMKERNELSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

/// Whether `op` stays a named op: fills (kernels take them with their consumer),
/// contractions (BLAS) and convolutions / pooling (their own lowering).
static bool keepsItsName(linalg::LinalgOp op) {
  return isa<linalg::GenericOp, linalg::FillOp>(op) || linalg::isaContractionOpInterface(op) ||
         linalg::isaConvolutionOpInterface(op);
}

/// Generalizes the named ops that fusion should see as `linalg.generic`.
static LogicalResult generalize(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> named;
  func.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && !keepsItsName(op))
      named.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op->emitError("tgc-form-kernels: cannot generalize ") << op->getName();
  }
  return success();
}

/// The permutation that swaps the last two of `rank` dimensions.
static SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

/// `map` with its last two results swapped: the operand read transposed.
static AffineMap swapLastTwoResults(AffineMap map) {
  SmallVector<AffineExpr> results(map.getResults());
  std::swap(results[results.size() - 2], results.back());
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, map.getContext());
}

/// `map` with loop dimensions m and n (1 and 2 of a batched product, 0 and 1 of a
/// plain one) exchanged.
static AffineMap swapRowsAndColumns(AffineMap map, bool batched) {
  unsigned m = batched ? 1 : 0;
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    dims.push_back(getAffineDimExpr(d == m ? m + 1 : d == m + 1 ? m : d, ctx));
  return map.replaceDimsAndSymbols(dims, {}, map.getNumDims(), map.getNumSymbols());
}

namespace {
/// A GEMM reads a transposed operand through its indexing map instead of a transposed
/// copy, and a transposed GEMM result is the GEMM of the swapped operands
/// ((A B)^T = B^T A^T), computed in place; BLAS takes transposed operands as they are.
template <typename OpTy> struct FoldTransposeIntoGemm : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool batched = std::is_same_v<OpTy, linalg::BatchMatmulOp>;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool changed = false;
    for (unsigned i = 0; i < 2; ++i) {
      auto transpose = inputs[i].template getDefiningOp<linalg::TransposeOp>();
      // (linalg does not take a batch-broadcast operand read transposed.)
      if (!transpose || maps[i].getNumResults() != (batched ? 3u : 2u) ||
          transpose.getPermutation() != ArrayRef(swapLastTwo(maps[i].getNumResults())))
        continue;
      inputs[i] = transpose.getInput();
      maps[i] = swapLastTwoResults(maps[i]);
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.replaceOp(op, create(rewriter, op, inputs, op.getDpsInits()[0], maps));
    return success();
  }

  static Value create(PatternRewriter &rewriter, OpTy op, ValueRange inputs, Value init,
                      ArrayRef<AffineMap> maps) {
    return OpTy::create(
               rewriter, op.getLoc(), TypeRange{init.getType()}, inputs, ValueRange{init},
               {rewriter.getNamedAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps))})
        ->getResult(0);
  }
};

/// transpose(A B) with a zero-filled accumulator and no other use of the product:
/// B^T A^T into the transpose's output.
template <typename OpTy> struct FoldTransposedGemmResult : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern<linalg::TransposeOp>::OpRewritePattern;
  static constexpr bool batched = std::is_same_v<OpTy, linalg::BatchMatmulOp>;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto gemm = transpose.getInput().getDefiningOp<OpTy>();
    if (!gemm || !gemm->hasOneUse() || !gemm.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef(swapLastTwo(batched ? 3 : 2)))
      return failure();
    auto fill = gemm.getDpsInits()[0].template getDefiningOp<linalg::FillOp>();
    if (!fill)
      return failure();
    SmallVector<AffineMap> maps = gemm.getIndexingMapsArray();
    if (batched && (maps[0].getNumResults() != 3 || maps[1].getNumResults() != 3))
      return failure();
    SmallVector<AffineMap> swapped = {swapRowsAndColumns(maps[1], batched),
                                      swapRowsAndColumns(maps[0], batched), maps[2]};
    Value init =
        linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs()[0], transpose.getInit())
            .getResult(0);
    SmallVector<Value> inputs = {gemm.getDpsInputs()[1], gemm.getDpsInputs()[0]};
    rewriter.replaceOp(transpose,
                       FoldTransposeIntoGemm<OpTy>::create(rewriter, gemm, inputs, init, swapped));
    return success();
  }
};
} // namespace

/// Folds transposes into the GEMMs that read or produce them.
static LogicalResult foldTransposes(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  patterns
      .add<FoldTransposeIntoGemm<linalg::MatmulOp>, FoldTransposeIntoGemm<linalg::BatchMatmulOp>,
           FoldTransposedGemmResult<linalg::MatmulOp>,
           FoldTransposedGemmResult<linalg::BatchMatmulOp>>(func.getContext());
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return func.emitError("tgc-form-kernels: folding transposes did not converge");
  return success();
}

/// Whether fusing the producer of `operand` into its consumer does not multiply costly
/// work: the consumer reads it in full (with every one of its loops), or the producer
/// has no division, square root or other math function. A producer fused into a
/// consumer that broadcasts it is recomputed for every element it is broadcast to:
/// eval-mode batch norm's per-channel `weight * rsqrt(var + eps)` would become an rsqrt
/// and a division per pixel. Such producers stay kernels over their small results;
/// cheap ones (a mask's compare, a scale) still fuse.
static bool fusionKeepsWork(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  if (llvm::all_of(llvm::seq(consumer.getNumLoops()),
                   [&](unsigned d) { return map.isFunctionOfDim(d); }))
    return true;
  return llvm::none_of(producer.getBody()->without_terminator(), [](Operation &op) {
    return isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp>(op) ||
           (isa<math::MathDialect>(op.getDialect()) &&
            !isa<math::AbsFOp, math::CopySignOp, math::FmaOp>(op));
  });
}

/// Whether fusing the producer of `operand` keeps its reads contiguous: the consumer
/// iterates the producer's innermost loop innermost too, or the producer reads at most
/// one full tensor along that loop. A consumer that permutes the result (ConvNeXt's
/// permute to channels-last after a depthwise convolution) would otherwise read every
/// input of the producer across its innermost loop: the 49 taps of a 7x7 depthwise
/// convolution became scalar gathers, 250 ms of a 780 ms step. Unfused, the producer
/// runs on vectors and its consumer reads one tensor across, as a fused one would.
static bool fusionKeepsContiguousReads(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || producer.getNumLoops() == 0)
    return true;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  AffineMap producerOut = producer.getIndexingMapMatchingResult(cast<OpResult>(operand->get()));
  unsigned inner = producer.getNumLoops() - 1;
  // The result dimension the producer's innermost loop writes, and the consumer loop
  // that iterates it.
  std::optional<unsigned> resultDim =
      producerOut.getResultPosition(getAffineDimExpr(inner, producer.getContext()));
  if (!resultDim || map.getNumResults() <= *resultDim)
    return true;
  auto consumerLoop = dyn_cast<AffineDimExpr>(map.getResult(*resultDim));
  if (consumerLoop && consumerLoop.getPosition() == consumer.getNumLoops() - 1)
    return true;
  unsigned contiguous = 0;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    AffineMap in = producer.getMatchingIndexingMap(input);
    if (!isa<ShapedType>(input->get().getType()) || in.getNumResults() == 0)
      continue;
    auto last = dyn_cast<AffineDimExpr>(in.getResults().back());
    bool full = llvm::all_of(llvm::seq(producer.getNumLoops()),
                             [&](unsigned d) { return in.isFunctionOfDim(d); });
    contiguous += full && last && last.getPosition() == inner;
  }
  return contiguous <= 1;
}

/// Ops of a body that make recomputing it in every consumer cheaper than writing its
/// result once and reading it back: a handful of arithmetic ops, no transcendental.
static constexpr unsigned kMaxRecomputedOps = 8;

/// Whether `producer` (an elementwise linalg.generic) is cheap enough to recompute in
/// each of its consumers: a short body without calls into libm-sized math, and at most
/// one input read in full (the others broadcast: a per-channel mean, a bias). A
/// consumer that recomputes it then reads no more than it would read of the result,
/// and the result is never written: batch norm's `x - mean`, read by the variance and
/// by the normalization, or a GEMM's transposed result plus its bias.
static bool isCheapToRecompute(linalg::GenericOp producer) {
  if (producer.getNumDpsInits() != 1 || producer.getNumReductionLoops() != 0 ||
      !producer.hasPureTensorSemantics())
    return false;
  unsigned ops = 0;
  for (Operation &op : producer.getBody()->without_terminator()) {
    if (++ops > kMaxRecomputedOps || op.getNumRegions() != 0)
      return false;
    if (isa<math::MathDialect>(op.getDialect()) &&
        !isa<math::AbsFOp, math::SqrtOp, math::RsqrtOp, math::FmaOp, math::CopySignOp>(op))
      return false;
  }
  unsigned loops = producer.getNumLoops();
  unsigned full = 0;
  for (OpOperand *input : producer.getDpsInputOperands())
    if (isa<ShapedType>(input->get().getType()) && llvm::all_of(llvm::seq(loops), [&](unsigned d) {
          return producer.getMatchingIndexingMap(input).isFunctionOfDim(d);
        }))
      ++full;
  return full <= 1;
}

/// Gives each fusable use of a cheap multi-use elementwise producer a copy of its own
/// (single-use fusion then folds each copy into its consumer). Returns whether it
/// cloned anything.
static bool cloneCheapProducers(func::FuncOp func) {
  SmallVector<linalg::GenericOp> producers;
  func.walk([&](linalg::GenericOp op) {
    if (!op->hasOneUse() && !op->use_empty() && isCheapToRecompute(op))
      producers.push_back(op);
  });
  bool changed = false;
  OpBuilder builder(func.getContext());
  for (linalg::GenericOp producer : producers) {
    SmallVector<OpOperand *> fusable;
    for (OpOperand &use : producer->getResult(0).getUses())
      if (isa<linalg::GenericOp>(use.getOwner()) && linalg::areElementwiseOpsFusable(&use) &&
          fusionKeepsWork(&use) && fusionKeepsContiguousReads(&use))
        fusable.push_back(&use);
    // The producer itself goes to the last fusable use when no other use keeps it.
    bool keepsOriginal =
        fusable.size() < size_t(std::distance(producer->use_begin(), producer->use_end()));
    if (!keepsOriginal && !fusable.empty())
      fusable.pop_back();
    for (OpOperand *use : fusable) {
      builder.setInsertionPoint(producer);
      use->set(builder.clone(*producer)->getResult(0));
      changed = true;
    }
  }
  return changed;
}

/// Fuses elementwise producers into their consumers: those with one use, and cheap
/// ones (isCheapToRecompute) recomputed in each consumer, until nothing changes.
static LogicalResult fuseElementwise(func::FuncOp func) {
  for (unsigned round = 0;; ++round) {
    RewritePatternSet patterns(func.getContext());
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() && fusionKeepsWork(fused) &&
             fusionKeepsContiguousReads(fused);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, singleUse);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, func.getContext());
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return func.emitError("tgc-form-kernels: elementwise fusion did not converge");
    // (Each round folds a producer into its consumers, which removes an op from every
    // chain: the rounds are bounded by the depth of the elementwise chains.)
    if (round == 64 || !cloneCheapProducers(func))
      return success();
  }
}

/// Whether `a` and `b` are reductions over the same loops that read a common tensor the
/// same way: batch norm's backward sums grad_output and grad_output * (x - mean) over
/// the same [N, C, H, W].
static bool areSiblingReductions(linalg::GenericOp a, linalg::GenericOp b) {
  if (!a.hasPureTensorSemantics() || !b.hasPureTensorSemantics() || a.getNumReductionLoops() == 0 ||
      a.getIteratorTypesArray() != b.getIteratorTypesArray())
    return false;
  SmallVector<int64_t> ra = a.getStaticLoopRanges(), rb = b.getStaticLoopRanges();
  if (ra != rb || llvm::any_of(ra, ShapedType::isDynamic))
    return false;
  for (OpOperand *x : a.getDpsInputOperands())
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() && isa<RankedTensorType>(x->get().getType()) &&
          a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y))
        return true;
  return false;
}

/// `b`'s outputs added to `a`: one op computing both, at `a`.
static linalg::GenericOp mergeReductions(linalg::GenericOp a, linalg::GenericOp b) {
  IRRewriter rewriter(a.getContext());
  rewriter.setInsertionPoint(a);
  SmallVector<Value> inputs(a.getDpsInputs()), inits(a.getDpsInits());
  llvm::append_range(inputs, b.getDpsInputs());
  for (Value init : b.getDpsInits()) {
    // Each output its own destination: an accumulator both start from (one zero fill)
    // is filled again for the second.
    auto fill = init.getDefiningOp<linalg::FillOp>();
    auto empty = fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() : nullptr;
    if (llvm::is_contained(inits, init) && empty) {
      Value fresh = rewriter.clone(*empty)->getResult(0);
      init =
          linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs()[0], fresh).getResult(0);
    }
    inits.push_back(init);
  }
  SmallVector<AffineMap> maps;
  for (linalg::GenericOp op : {a, b})
    for (OpOperand *input : op.getDpsInputOperands())
      maps.push_back(op.getMatchingIndexingMap(input));
  for (linalg::GenericOp op : {a, b})
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
  SmallVector<Type> types(a->getResultTypes());
  llvm::append_range(types, b->getResultTypes());
  auto fused = linalg::GenericOp::create(
      rewriter, a.getLoc(), types, inputs, inits, maps, a.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        // args: a's inputs, b's inputs, a's outputs, b's outputs.
        unsigned ai = a.getNumDpsInputs(), bi = b.getNumDpsInputs(), ao = a.getNumDpsInits();
        SmallVector<Value> yields;
        auto cloneBody = [&](linalg::GenericOp op, ValueRange ins, ValueRange outs) {
          IRMapping mapping;
          Block *body = op.getBody();
          mapping.map(body->getArguments().take_front(ins.size()), ins);
          mapping.map(body->getArguments().drop_front(ins.size()), outs);
          for (Operation &inner : body->without_terminator())
            nb.clone(inner, mapping);
          for (Value v : body->getTerminator()->getOperands())
            yields.push_back(mapping.lookupOrDefault(v));
        };
        cloneBody(a, args.take_front(ai), args.slice(ai + bi, ao));
        cloneBody(b, args.slice(ai, bi), args.drop_front(ai + bi + ao));
        linalg::YieldOp::create(nb, loc, yields);
      });
  unsigned na = a->getNumResults();
  rewriter.replaceOp(a, fused->getResults().take_front(na));
  rewriter.replaceOp(b, fused->getResults().drop_front(na));
  return fused;
}

/// Merges sibling reductions (areSiblingReductions) into one op with the outputs of
/// both, computed in one pass over what they read; the later one's operands must all
/// be defined before the earlier one, where the merged op goes.
static LogicalResult fuseSiblingReductions(func::FuncOp func) {
  SmallVector<Block *> blocks;
  func.walk([&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    SmallVector<linalg::GenericOp> reductions;
    for (auto op : block->getOps<linalg::GenericOp>())
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() != 0)
        reductions.push_back(op);
    for (size_t i = 0; i < reductions.size(); ++i) {
      if (!reductions[i])
        continue;
      for (size_t j = i + 1; j < reductions.size(); ++j) {
        linalg::GenericOp a = reductions[i], b = reductions[j];
        if (!b || !areSiblingReductions(a, b))
          continue;
        // Everything b uses must exist where a is (values of this block before a; block
        // arguments and values of enclosing blocks dominate both).
        SetVector<Value> used(b->getOperands().begin(), b->getOperands().end());
        getUsedValuesDefinedAbove(b->getRegions(), used);
        if (!llvm::all_of(used, [&](Value v) {
              Operation *def = v.getDefiningOp();
              return !def || def->getBlock() != block || def->isBeforeInBlock(a);
            }))
          continue;
        reductions[i] = mergeReductions(a, b);
        reductions[j] = nullptr;
      }
    }
  }
  return success();
}

/// The loop order of a reduction: its parallel dimensions first, then its reduction
/// dimensions, each in their order, with the innermost dimension kept innermost (it is
/// the contiguous one that vectorizes). Batch norm's mean over [N, C, H, W] (n, c, h, w)
/// becomes (c, n, h, w): the outermost loop is parallel and runs on threads. Each
/// output element still sees its reduction iterations in the same order, so the result
/// is bit-identical. Empty when the order already is that.
static SmallVector<unsigned> reductionInterchange(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned rank = iterators.size();
  if (rank < 2 || !llvm::is_contained(iterators, utils::IteratorType::reduction))
    return {};
  SmallVector<unsigned> order;
  for (auto kind : {utils::IteratorType::parallel, utils::IteratorType::reduction})
    for (unsigned d = 0; d + 1 < rank; ++d)
      if (iterators[d] == kind)
        order.push_back(d);
  order.push_back(rank - 1);
  if (llvm::equal(order, llvm::seq<unsigned>(0, rank)))
    return {};
  return order;
}

static LogicalResult interchangeReductions(func::FuncOp func) {
  SmallVector<linalg::GenericOp> reductions;
  func.walk([&](linalg::GenericOp op) {
    if (op.hasPureTensorSemantics() && !reductionInterchange(op).empty())
      reductions.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::GenericOp op : reductions) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::interchangeGenericOp(rewriter, op, reductionInterchange(op))))
      return op->emitError("tgc-form-kernels: cannot interchange the loops of a reduction");
  }
  return success();
}

/// Ops a group copies instead of taking their result as an argument: views and casts
/// (no data of their own), index shape tensors and scalar constants.
static bool isCopiedIntoGroup(Operation *op) {
  if (isa<tensor::ReshapeOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
          tensor::CastOp>(op))
    return true;
  if (auto fromElements = dyn_cast<tensor::FromElementsOp>(op))
    return fromElements.getType().getElementType().isIndex();
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return !isa<ShapedType>(constant.getType());
  return false;
}

namespace {

/// One fusion group: the root and the copied producers in an order where each op
/// follows its operands, and the values it takes from outside.
struct Group {
  Operation *root;
  /// The op whose results the kernel returns: the root, or the insert_slice of a slice
  /// update (sliceUpdate).
  Operation *last;
  /// The extract_slice through which the root's output comes in a slice update.
  Operation *initView = nullptr;
  SmallVector<Operation *> ops;
  SetVector<Value> inputs;
  DenseSet<Operation *> members;

  explicit Group(Operation *rootOp) : root(rootOp), last(rootOp) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(rootOp);
    tensor::InsertSliceOp insert = linalgOp ? sliceUpdate(linalgOp) : tensor::InsertSliceOp();
    if (insert)
      initView = extractOf(linalgOp);
    members.insert(root);
    addOperands(root);
    ops.push_back(root);
    if (initView) {
      members.insert(insert);
      addOperands(insert);
      ops.push_back(insert);
      last = insert;
    }
  }

  /// The extract_slice that the output of `root` comes from, through a fill or not.
  static tensor::ExtractSliceOp extractOf(linalg::LinalgOp root) {
    if (root.getNumDpsInits() != 1)
      return {};
    Value init = root.getDpsInits()[0];
    if (auto fill = init.getDefiningOp<linalg::FillOp>(); fill && fill->hasOneUse())
      init = fill.getOutputs()[0];
    auto extract = init.getDefiningOp<tensor::ExtractSliceOp>();
    return extract && extract->hasOneUse() ? extract : tensor::ExtractSliceOp();
  }

  /// A root that computes a slice of a tensor T in place: its output is (a fill of) a
  /// slice of T, and its one use inserts the result into T at the same place; the
  /// insert_slice, or null. This is a loop over tiles of T (a convolution chunked over
  /// the batch): the kernel takes all of T and returns it, so bufferization writes the
  /// slice in place instead of copying it in and out of a buffer of its own.
  static tensor::InsertSliceOp sliceUpdate(linalg::LinalgOp root) {
    if (root->getNumResults() != 1 || !root->hasOneUse())
      return {};
    auto insert = dyn_cast<tensor::InsertSliceOp>(*root->getUsers().begin());
    tensor::ExtractSliceOp extract = extractOf(root);
    if (!insert || !extract || insert.getSource() != root->getResult(0) ||
        extract.getSource() != insert.getDest() ||
        extract.getMixedOffsets() != insert.getMixedOffsets() ||
        extract.getMixedSizes() != insert.getMixedSizes() ||
        extract.getMixedStrides() != insert.getMixedStrides())
      return {};
    return insert;
  }

  /// Adds what `op`'s operands (and the values its regions use from above) come from.
  void addOperands(Operation *op) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      bool isInit = dps && dps.isDpsInit(&operand);
      if (isInit)
        separateEmptyInit(operand);
      addValue(operand.get(), isInit);
    }
    SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    for (Value value : above)
      addValue(value, /*isInit=*/false);
  }

  /// Gives an output that starts from a tensor.empty the group already takes (CSE
  /// merges equal empties: an scf.forall's outputs of one shape share one) an empty
  /// of its own, so it becomes an argument of its own. Inside the kernel nothing then
  /// marks two outputs as the same tensor, whose contents bufferization would have to
  /// copy for each (the kernel cannot know an argument's contents are undefined); at
  /// the call, an empty passed twice gets a second buffer and no copy.
  void separateEmptyInit(OpOperand &operand) {
    auto empty = operand.get().getDefiningOp<tensor::EmptyOp>();
    if (!empty || !inputs.contains(operand.get()))
      return;
    OpBuilder builder(empty);
    operand.set(builder.clone(*empty)->getResult(0));
  }

  /// Copies the producer of `value` into the group or takes `value` as an input. An
  /// output (`isInit`) comes in as an argument, perhaps through the fill that
  /// initializes it, but never through a view: the kernel's results are then its output
  /// arguments, which bufferization writes in place.
  void addValue(Value value, bool isInit) {
    Operation *def = value.getDefiningOp();
    if (def && members.contains(def))
      return;
    bool copied = isInit ? isa_and_present<linalg::FillOp>(def) || (def && def == initView)
                         : def && isCopiedIntoGroup(def);
    if (copied) {
      members.insert(def);
      addOperands(def);
      ops.push_back(def);
      return;
    }
    inputs.insert(value);
  }
};

/// Outlines `group` as `@<func>_kernel<N>` after `after` and calls it in the root's
/// place; returns the kernel.
static func::FuncOp outline(Group &group, func::FuncOp func, Operation *after, SymbolTable &symbols,
                            unsigned index) {
  Operation *root = group.root;
  Location loc = root->getLoc();
  MLIRContext *ctx = func.getContext();
  SmallVector<Type> inputTypes;
  for (Value input : group.inputs)
    inputTypes.push_back(input.getType());
  OpBuilder builder(ctx);
  auto kernel =
      func::FuncOp::create(builder, loc, (func.getSymName() + "_kernel" + Twine(index)).str(),
                           FunctionType::get(ctx, inputTypes, group.last->getResultTypes()));
  kernel.setPrivate();
  kernel->setAttr(attr::kKernel, UnitAttr::get(ctx));
  symbols.insert(kernel, std::next(Block::iterator(after)));
  Block *body = kernel.addEntryBlock();
  IRMapping mapping;
  mapping.map(group.inputs.getArrayRef(), body->getArguments());
  builder.setInsertionPointToEnd(body);
  for (Operation *op : group.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> results;
  for (Value result : group.last->getResults())
    results.push_back(mapping.lookup(result));
  func::ReturnOp::create(builder, loc, results);

  builder.setInsertionPoint(group.last);
  auto call = func::CallOp::create(builder, loc, kernel, group.inputs.getArrayRef());
  group.last->replaceAllUsesWith(call.getResults());
  if (group.last != root)
    group.last->erase();
  root->erase();
  return kernel;
}

/// Erases the copied producers the outlined groups left without uses (users first).
static void eraseDead(SetVector<Operation *> &producers) {
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *op : producers.takeVector()) {
      if (isOpTriviallyDead(op)) {
        op->erase();
        erased = true;
      } else {
        producers.insert(op);
      }
    }
  }
}

struct FormKernelsPass : public tgc::impl::FormKernelsPassBase<FormKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr(attr::kKernel))
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      if (failed(foldTransposes(func)) || failed(generalize(func)) ||
          failed(fuseElementwise(func)) || failed(fuseSiblingReductions(func)) ||
          failed(interchangeReductions(func)))
        return signalPassFailure();
      formKernels(func, symbols);
    }
    if (failed(mergeIdenticalKernels(module)))
      return signalPassFailure();
  }

  /// Kernels with the same body and signature are one kernel: the calls of the later
  /// ones call the first. Repeated blocks (resnet50's bottlenecks, a transformer's
  /// layers, the backward of each) give many identical groups, and each kernel is code
  /// that LLVM optimizes and compiles.
  static LogicalResult mergeIdenticalKernels(ModuleOp module) {
    llvm::StringMap<func::FuncOp> first;
    SmallVector<std::pair<func::FuncOp, func::FuncOp>> duplicates;
    OpPrintingFlags flags;
    flags.printGenericOpForm().useLocalScope().elideLargeElementsAttrs(1 << 30);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(attr::kKernel) || func.isExternal())
        continue;
      // The key: the function printed under a fixed name, without locations.
      std::string key;
      llvm::raw_string_ostream os(key);
      StringAttr name = func.getSymNameAttr();
      func.setSymName("kernel");
      func->print(os, flags);
      func.setSymNameAttr(name);
      auto [it, inserted] = first.try_emplace(key, func);
      if (!inserted)
        duplicates.push_back({func, it->second});
    }
    // One walk redirects every call (kernels are only called, never referenced).
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> redirect;
    for (auto [duplicate, kept] : duplicates)
      redirect[duplicate.getSymNameAttr()] = FlatSymbolRefAttr::get(kept.getSymNameAttr());
    if (redirect.empty())
      return success();
    module.walk([&](func::CallOp call) {
      if (auto it = redirect.find(call.getCalleeAttr().getAttr()); it != redirect.end())
        call.setCalleeAttr(it->second);
    });
    for (auto [duplicate, kept] : duplicates)
      duplicate.erase();
    return success();
  }

  void formKernels(func::FuncOp func, SymbolTable &symbols) {
    // Roots: structured ops, and tiled ops (an scf.forall over tiles, with the structured
    // ops of a tile inside: fused attention), each one kernel as a whole.
    SmallVector<Operation *> roots;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto forall = dyn_cast<scf::ForallOp>(op)) {
        if (forall->getNumResults() != 0) {
          roots.push_back(op);
          return WalkResult::skip();
        }
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && linalgOp.hasPureTensorSemantics() && !isInitFillOnly(linalgOp))
        roots.push_back(op);
      return WalkResult::advance();
    });
    SetVector<Operation *> producers;
    Operation *after = func;
    unsigned index = 0;
    for (Operation *root : roots) {
      producers.remove(root); // a fill copied into an earlier group and a root of its own
      Group group(root);
      for (Operation *op : group.ops)
        if (op != group.root && op != group.last)
          producers.insert(op);
      after = outline(group, func, after, symbols, index++);
    }
    eraseDead(producers);
  }

  /// A fill whose every use initializes the output of another structured op goes into
  /// those ops' groups instead of forming its own.
  static bool isInitFillOnly(linalg::LinalgOp op) {
    if (!isa<linalg::FillOp>(op) || op->use_empty())
      return false;
    return llvm::all_of(op->getUses(), [](OpOperand &use) {
      auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
      return user && user.isDpsInit(&use);
    });
  }
};

} // namespace
