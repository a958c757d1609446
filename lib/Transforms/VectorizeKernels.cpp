// tgc-vectorize-kernels: elementwise kernels as vector-dialect code (docs/kernels.md).
//
// An all-parallel `linalg.generic` on memrefs is split along its innermost loop into
// full vectors and a remainder: the full part is an `scf.parallel` whose body is the op
// on a [1, ..., 1, lanes] tile, which linalg's vectorizer turns into unmasked
// `vector.transfer_read`s, vector arithmetic and `vector.transfer_write`s; the
// remainder is the op on the last `size mod lanes` columns, split the same way with
// narrower vectors when its size is static, else left to become a scalar loop. Unit
// dimensions are then dropped, so the code works on 1-d vectors.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "VectorOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tgc {
#define GEN_PASS_DEF_VECTORIZEKERNELSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// The lanes of the vectors `op` becomes, or nullopt when it is not vectorized: every
/// loop parallel; each memref operand of a vectorizable element type, read along the
/// innermost loop with unit stride as its own innermost dimension, or not along it at
/// all (a broadcast); a body of arith and math ops; an innermost loop of at least two
/// elements (or of unknown size). The vectors fill a register of `vectorBits`, or the
/// innermost loop when it is static and shorter.
std::optional<int64_t> vectorLanes(linalg::GenericOp op, unsigned vectorBits) {
  unsigned rank = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || rank == 0 || op.getNumParallelLoops() != rank)
    return std::nullopt;
  unsigned inner = rank - 1;
  unsigned widest = 8;
  for (OpOperand &operand : op->getOpOperands()) {
    Type type = operand.get().getType();
    if (!isa<MemRefType>(type)) {
      if (!tgc::memoryElementBits(type))
        return std::nullopt;
      continue;
    }
    if (!tgc::innerAccess(op, operand, inner))
      return std::nullopt;
    widest = std::max(widest, *tgc::memoryElementBits(getElementTypeOrSelf(type)));
  }
  if (!tgc::hasVectorBody(op))
    return std::nullopt;
  int64_t lanes = vectorBits / widest;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::is_contained(ranges, 0))
    return std::nullopt;
  // A static innermost loop shorter than a register gets the narrower vectors that fit
  // it (the 4x4 or 8x8 images of a network's last stages), not scalars.
  if (!ShapedType::isDynamic(ranges[inner]) && ranges[inner] < lanes)
    lanes = static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(ranges[inner])));
  if (lanes < 2)
    return std::nullopt;
  return lanes;
}

/// A clone of `op` on the tile of its operands at `offsets` with `sizes` (one per loop),
/// its `linalg.index` values offset to match.
linalg::GenericOp cloneOnTile(OpBuilder &b, Location loc, linalg::GenericOp op,
                              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                              ArrayRef<OpFoldResult> bounds) {
  SmallVector<Value> operands =
      linalg::makeTiledShapes(b, loc, op, op->getOperands(), offsets, sizes, bounds,
                              /*omitPartialTileCheck=*/true);
  auto tile = cast<linalg::GenericOp>(clone(b, op, TypeRange{}, operands));
  linalg::offsetIndices(b, tile, offsets);
  return tile;
}

/// Splits `op` into its full vectors (an scf.parallel of vectorized tiles) and its
/// remainder; returns the remainder when its size is static (the caller may vectorize
/// it in turn), else null. Null, changing nothing, if the vectorizer does not take the
/// tile.
FailureOr<linalg::GenericOp> vectorize(RewriterBase &rewriter, linalg::GenericOp op,
                                       int64_t lanes) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  unsigned rank = op.getNumLoops(), inner = rank - 1;
  SmallVector<OpFoldResult> bounds;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(rewriter, loc))
    bounds.push_back(range.size);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, lanes);
  Value size = getValueOrCreateConstantIndexOp(rewriter, loc, bounds[inner]);
  std::optional<int64_t> staticSize = getConstantIntValue(bounds[inner]);
  Value fullEnd =
      staticSize
          ? arith::ConstantIndexOp::create(rewriter, loc, *staticSize / lanes * lanes).getResult()
          : arith::SubIOp::create(rewriter, loc, size,
                                  arith::RemUIOp::create(rewriter, loc, size, step))
                .getResult();

  SmallVector<Value> lbs(rank, zero), ubs, steps(rank, one);
  for (unsigned d = 0; d < inner; ++d)
    ubs.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, bounds[d]));
  ubs.push_back(fullEnd);
  steps[inner] = step;
  linalg::GenericOp tile;
  auto full = scf::ParallelOp::create(
      rewriter, loc, lbs, ubs, steps, [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<OpFoldResult> sizes(rank, b.getIndexAttr(1));
        sizes[inner] = b.getIndexAttr(lanes);
        tile = cloneOnTile(b, loc, op, getAsOpFoldResult(ivs), sizes, bounds);
      });
  if (failed(linalg::vectorizeOpPrecondition(tile))) {
    rewriter.eraseOp(full);
    return linalg::GenericOp();
  }

  // The remainder: columns [fullEnd, size) of every row.
  linalg::GenericOp remainder;
  if (!staticSize || *staticSize % lanes != 0) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes(bounds);
    offsets[inner] = fullEnd;
    sizes[inner] = staticSize ? OpFoldResult(rewriter.getIndexAttr(*staticSize % lanes))
                              : arith::SubIOp::create(rewriter, loc, size, fullEnd).getResult();
    remainder = cloneOnTile(rewriter, loc, op, offsets, sizes, bounds);
  }
  rewriter.eraseOp(op);

  rewriter.setInsertionPoint(tile);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(rewriter, tile);
  if (failed(result))
    return tile.emitOpError("vectorization failed after its precondition held");
  rewriter.eraseOp(tile);
  return staticSize ? remainder : linalg::GenericOp();
}

struct VectorizeKernelsPass : tgc::impl::VectorizeKernelsPassBase<VectorizeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, int64_t>> ops;
    SetVector<func::FuncOp> kernels;
    getOperation()->walk([&](func::FuncOp func) {
      if (!func->hasAttr(tgc::attr::kKernel))
        return;
      func.walk([&](linalg::GenericOp op) {
        if (std::optional<int64_t> lanes = vectorLanes(op, vectorBits)) {
          ops.push_back({op, *lanes});
          kernels.insert(func);
        }
      });
    });
    if (ops.empty())
      return;
    IRRewriter rewriter(&getContext());
    // A static remainder is vectorized in turn with the widest vectors that fit it
    // (vectorLanes: a row of 28 is vectors of 16, 8 and 4; of 7, vectors of 4 and 2 and
    // a scalar): the rows of a network at 224x224 (112, 56, 28, 14, 7) are rarely
    // multiples of a register.
    for (auto [op, lanes] : ops) {
      FailureOr<linalg::GenericOp> remainder = vectorize(rewriter, op, lanes);
      while (succeeded(remainder) && *remainder)
        if (std::optional<int64_t> narrower = vectorLanes(*remainder, vectorBits))
          remainder = vectorize(rewriter, *remainder, *narrower);
        else
          break;
      if (failed(remainder))
        return signalPassFailure();
    }

    // [1, ..., 1, lanes] vectors become 1-d ones (on rank-reducing subviews), and
    // transfers that broadcast become a scalar load and a broadcast. Then, apart
    // (dropping unit dimensions makes subviews that folding them would undo, forever),
    // the transfers index the kernel's memrefs instead of the subviews.
    RewritePatternSet vectors(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(vectors);
    vector::populateVectorTransferDropUnitDimsPatterns(vectors);
    vector::populateVectorTransferPermutationMapLoweringPatterns(vectors);
    vector::populateScalarVectorTransferLoweringPatterns(vectors, /*benefit=*/1,
                                                         /*allowMultipleUses=*/true);
    vector::TransferReadOp::getCanonicalizationPatterns(vectors, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(vectors, &getContext());
    RewritePatternSet aliases(&getContext());
    memref::populateFoldMemRefAliasOpPatterns(aliases);
    vector::populateScalarVectorTransferLoweringPatterns(aliases, /*benefit=*/1,
                                                         /*allowMultipleUses=*/true);
    FrozenRewritePatternSet frozenVectors(std::move(vectors)), frozenAliases(std::move(aliases));
    for (func::FuncOp func : kernels)
      if (failed(applyPatternsGreedily(func, frozenVectors)) ||
          failed(applyPatternsGreedily(func, frozenAliases)))
        return signalPassFailure();
  }
};

} // namespace
