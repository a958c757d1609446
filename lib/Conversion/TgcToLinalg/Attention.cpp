// Lowering of scaled_dot_product_attention to one fused, tiled kernel (docs/kernels.md):
// an scf.forall over the batch dimensions and tiles of queries, each running an online
// softmax over tiles of keys (flash attention), so no [L, S] matrix is materialized.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/TensorMeta.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tgc;

namespace {

/// The most queries and keys a tile has: a [64, 128] tile of scores and its
/// probabilities stay in the first-level cache next to the query and key tiles.
constexpr int64_t kQueryTile = 64;
constexpr int64_t kKeyTile = 128;

/// The largest divisor of `size` that is at most `limit` (tiles cover the sequence
/// exactly, so every tile has static sizes).
int64_t tileSize(int64_t size, int64_t limit) {
  for (int64_t d = std::min(size, limit); d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// Builds the ops of one tile: element type, sizes and the tile's offsets.
struct TileBuilder {
  OpBuilder &b;
  Location loc;
  Type element;

  Value constant(double v) const {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(element, v));
  }
  Value empty(ArrayRef<int64_t> shape) const {
    return tensor::EmptyOp::create(b, loc, shape, element);
  }
  Value filled(ArrayRef<int64_t> shape, double v) const {
    return linalg::FillOp::create(b, loc, constant(v), empty(shape)).getResult(0);
  }

  /// A linalg.generic over `shape` (2-d [rows, cols], or 1-d [rows]) writing `init`,
  /// reading `inputs` through `maps`; `reduceCols` makes the second loop a reduction.
  Value generic(ArrayRef<Value> inputs, ArrayRef<AffineMap> maps, Value init, AffineMap out,
                bool reduceCols,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) const {
    SmallVector<AffineMap> all(maps);
    all.push_back(out);
    SmallVector<utils::IteratorType> iterators(out.getNumDims(), utils::IteratorType::parallel);
    if (reduceCols)
      iterators.back() = utils::IteratorType::reduction;
    return linalg::GenericOp::create(b, loc, init.getType(), inputs, init, all, iterators,
                                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                                       linalg::YieldOp::create(nb, nl, body(nb, nl, args));
                                     })
        .getResult(0);
  }

  /// The exponent base of a row maximum: 0 for a row with no visible key yet (-inf), so
  /// exp(-inf - base) is 0 instead of NaN.
  Value base(OpBuilder &nb, Location nl, Value rowMax) const {
    Value negInf = arith::ConstantOp::create(
        nb, nl, nb.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
    Value zero = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(element, 0.0));
    Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, rowMax, negInf);
    return arith::SelectOp::create(nb, nl, none, zero, rowMax);
  }
};

struct AttentionLowering : TgcLoweringPattern<ScaledDotProductAttentionOp> {
  using TgcLoweringPattern::TgcLoweringPattern;

  LogicalResult matchAndRewrite(ScaledDotProductAttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.hasFusedLowering())
      return rewriter.notifyMatchFailure(op, "decomposed before lowering");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value mask = adaptor.getAttnMask();
    auto qTy = llvm::cast<RankedTensorType>(q.getType());
    auto kTy = llvm::cast<RankedTensorType>(k.getType());
    auto vTy = llvm::cast<RankedTensorType>(v.getType());
    int64_t rank = qTy.getRank(), batchRank = rank - 2;
    int64_t queries = qTy.getDimSize(rank - 2), embed = qTy.getDimSize(rank - 1);
    int64_t keys = kTy.getDimSize(rank - 2), valueEmbed = vTy.getDimSize(rank - 1);
    Type element = qTy.getElementType();
    double scale = op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble()
                                     : 1.0 / std::sqrt(static_cast<double>(embed));
    bool causal = op.getIsCausal();
    int64_t bq = tileSize(queries, kQueryTile), bk = tileSize(keys, kKeyTile);
    FailureOr<Value> out = lowering.emptyTensor(rewriter, op, tgcType(op.getResult()));
    if (failed(out))
      return failure();

    // One iteration per batch element and tile of queries.
    SmallVector<OpFoldResult> bounds;
    for (int64_t d = 0; d < batchRank; ++d)
      bounds.push_back(tensor::getMixedSize(rewriter, loc, q, d));
    bounds.push_back(rewriter.getIndexAttr(queries / bq));
    auto forall = scf::ForallOp::create(rewriter, loc, bounds, ValueRange{*out}, std::nullopt);
    OpBuilder b = OpBuilder::atBlockTerminator(forall.getBody());
    TileBuilder t{b, loc, element};
    SmallVector<Value> ivs(forall.getInductionVars());
    Value q0 = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) * bq), ivs.back());

    // rows: [batch..., row0 : rows, 0 : cols] of a [batch..., R, C] tensor as [rows, cols].
    auto tile = [&](Value source, OpFoldResult row0, int64_t rows, int64_t cols) {
      SmallVector<OpFoldResult> offsets(ArrayRef(ivs).drop_back()),
          sizes(batchRank, b.getIndexAttr(1));
      offsets.append({row0, b.getIndexAttr(0)});
      sizes.append({b.getIndexAttr(rows), b.getIndexAttr(cols)});
      SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get({rows, cols}, element),
                                            source, offsets, sizes, strides)
          .getResult();
    };
    Value qTile = tile(q, q0, bq, embed);

    // The keys a tile of queries sees: all, or for a causal mask those up to its last
    // query, rounded up to whole key tiles.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, bk);
    Value end = arith::ConstantIndexOp::create(b, loc, keys);
    if (causal) {
      AffineExpr d0 = getAffineDimExpr(0, ctx);
      end = affine::AffineMinOp::create(
          b, loc,
          AffineMap::get(
              1, 0, {getAffineConstantExpr(keys, ctx), (d0 + bq + bk - 1).floorDiv(bk) * bk}, ctx),
          ValueRange{q0});
    }

    AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
    AffineMap rows2 = AffineMap::get(2, 0, {i}, ctx), id2 = AffineMap::get(2, 0, {i, j}, ctx);
    AffineMap id1 = AffineMap::get(1, 0, {i}, ctx);
    double negInf = -std::numeric_limits<double>::infinity();
    Value rowMax0 = t.filled({bq}, negInf), rowSum0 = t.filled({bq}, 0.0);
    Value acc0 = t.filled({bq, valueEmbed}, 0.0);
    auto loop = scf::ForOp::create(
        b, loc, zero, end, step, ValueRange{rowMax0, rowSum0, acc0},
        [&](OpBuilder &lb, Location ll, Value k0, ValueRange carried) {
          TileBuilder l{lb, ll, element};
          Value rowMax = carried[0], rowSum = carried[1], acc = carried[2];
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value kTile = tile(k, k0, bk, embed), vTile = tile(v, k0, bk, valueEmbed);
          // scores = q k^T (BLAS reads the key tile transposed).
          AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
                     r = getAffineDimExpr(2, ctx);
          SmallVector<AffineMap> gemmMaps = {AffineMap::get(3, 0, {m, r}, ctx),
                                             AffineMap::get(3, 0, {n, r}, ctx),
                                             AffineMap::get(3, 0, {m, n}, ctx)};
          Value scoresInit = l.filled({bq, bk}, 0.0);
          Value scores = linalg::MatmulOp::create(
                             lb, ll, TypeRange{scoresInit.getType()}, ValueRange{qTile, kTile},
                             ValueRange{scoresInit},
                             {lb.getNamedAttr("indexing_maps", lb.getAffineMapArrayAttr(gemmMaps))})
                             ->getResult(0);
          // scale, mask, causal mask.
          SmallVector<Value> inputs = {scores};
          SmallVector<AffineMap> maps = {id2};
          if (mask)
            appendMaskTile(b, ll, mask, ivs, q0, k0, bq, bk, rank, inputs, maps);
          Value logits = l.generic(
              inputs, maps, l.empty({bq, bk}), id2, false,
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                TileBuilder e{nb, nl, element};
                Value x = arith::MulFOp::create(nb, nl, args[0], e.constant(scale));
                Value hidden = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(element, negInf));
                if (mask && args[1].getType().isInteger(1))
                  x = arith::SelectOp::create(nb, nl, args[1], x, hidden);
                else if (mask)
                  x = arith::AddFOp::create(nb, nl, x, args[1]);
                if (causal) {
                  Value qi = arith::AddIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 0), q0);
                  Value kj = arith::AddIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 1), k0);
                  Value seen = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, kj, qi);
                  x = arith::SelectOp::create(nb, nl, seen, x, hidden);
                }
                return x;
              });
          // The running maximum, updated in place, and what the earlier tiles' sums and
          // outputs are worth under it (exp(old - new)); the probabilities relative to
          // it. Every carried value is updated in its own buffer (the updates read the
          // value they write), so the loop bufferizes without copies.
          Value tileMax = l.generic({logits}, {id2}, l.filled({bq}, negInf), rows2, true,
                                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                                      return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
                                    });
          auto update = linalg::GenericOp::create(
              lb, ll, TypeRange{rowMax.getType(), rowMax.getType()}, ValueRange{tileMax},
              ValueRange{rowMax, l.empty({bq})}, SmallVector<AffineMap>(3, id1),
              SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value newMax = arith::MaximumFOp::create(nb, nl, args[1], args[0]);
                Value shifted = arith::SubFOp::create(nb, nl, args[1], l.base(nb, nl, newMax));
                linalg::YieldOp::create(nb, nl,
                                        ValueRange{newMax, math::ExpOp::create(nb, nl, shifted)});
              });
          Value newMax = update.getResult(0), correction = update.getResult(1);
          Value probs = l.generic({logits, newMax}, {id2, rows2}, l.empty({bq, bk}), id2, false,
                                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                                    Value shifted = arith::SubFOp::create(nb, nl, args[0],
                                                                          l.base(nb, nl, args[1]));
                                    return math::ExpOp::create(nb, nl, shifted);
                                  });
          Value scaledSum = l.generic({correction}, {id1}, rowSum, id1, false,
                                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                                        return arith::MulFOp::create(nb, nl, args[1], args[0]);
                                      });
          Value newSum = l.generic({probs}, {id2}, scaledSum, rows2, true,
                                   [&](OpBuilder &nb, Location nl, ValueRange args) {
                                     return arith::AddFOp::create(nb, nl, args[0], args[1]);
                                   });
          Value scaledAcc = l.generic({correction}, {rows2}, acc, id2, false,
                                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                                        return arith::MulFOp::create(nb, nl, args[1], args[0]);
                                      });
          // acc += probs @ v (BLAS accumulates into the rescaled output).
          Value newAcc = linalg::MatmulOp::create(lb, ll, TypeRange{scaledAcc.getType()},
                                                  ValueRange{probs, vTile}, ValueRange{scaledAcc})
                             ->getResult(0);
          scf::YieldOp::create(lb, ll, ValueRange{newMax, newSum, newAcc});
        });

    // out = acc / sum, into the tile's rows of the result (in place).
    Value outTile = tile(forall.getRegionIterArgs()[0], q0, bq, valueEmbed);
    Value result = t.generic({loop.getResult(2), loop.getResult(1)}, {id2, rows2}, outTile, id2,
                             false, [&](OpBuilder &nb, Location nl, ValueRange args) {
                               return arith::DivFOp::create(nb, nl, args[0], args[1]);
                             });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets(ArrayRef(ivs).drop_back()),
        sizes(batchRank, b.getIndexAttr(1));
    offsets.append({q0, b.getIndexAttr(0)});
    sizes.append({b.getIndexAttr(bq), b.getIndexAttr(valueEmbed)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(b, loc, result, forall.getRegionIterArgs()[0], offsets,
                                          sizes, strides);
    rewriter.replaceOp(op, forall.getResult(0));
    return success();
  }

  /// Adds the mask's [bq, bk] tile (a size-1 dimension of the mask broadcasts: its
  /// offset is 0 and the tile reads its index 0) to the inputs of the logits.
  static void appendMaskTile(OpBuilder &b, Location loc, Value mask, ValueRange ivs, Value q0,
                             Value k0, int64_t bq, int64_t bk, int64_t rank,
                             SmallVectorImpl<Value> &inputs, SmallVectorImpl<AffineMap> &maps) {
    MLIRContext *ctx = b.getContext();
    auto maskTy = llvm::cast<RankedTensorType>(mask.getType());
    int64_t maskRank = maskTy.getRank(), lead = rank - maskRank;
    SmallVector<OpFoldResult> offsets, sizes, strides(maskRank, b.getIndexAttr(1));
    for (int64_t d = 0; d < maskRank; ++d) {
      int64_t full = d + lead;
      bool broadcast = maskTy.getDimSize(d) == 1;
      OpFoldResult at = full == rank - 2   ? OpFoldResult(q0)
                        : full == rank - 1 ? OpFoldResult(k0)
                                           : OpFoldResult(ivs[full]);
      int64_t extent = full == rank - 2 ? bq : full == rank - 1 ? bk : 1;
      offsets.push_back(broadcast ? b.getIndexAttr(0) : at);
      sizes.push_back(b.getIndexAttr(broadcast ? 1 : extent));
    }
    // The tile keeps the last two dimensions (1 where they broadcast).
    int64_t rowsSize = maskRank >= 2 && maskTy.getDimSize(maskRank - 2) != 1 ? bq : 1;
    int64_t colsSize = maskTy.getDimSize(maskRank - 1) != 1 ? bk : 1;
    SmallVector<int64_t> tileShape = {rowsSize, colsSize};
    Value tile;
    if (maskRank >= 2) {
      tile = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(tileShape, maskTy.getElementType()), mask, offsets, sizes,
          strides);
    } else {
      Value cols = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({colsSize}, maskTy.getElementType()), mask, offsets, sizes,
          strides);
      tile = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(tileShape, maskTy.getElementType()), cols,
          SmallVector<ReassociationIndices>{{0, 1}});
    }
    AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
    AffineExpr c0 = getAffineConstantExpr(0, ctx);
    inputs.push_back(tile);
    maps.push_back(AffineMap::get(2, 0, {rowsSize == 1 ? c0 : i, colsSize == 1 ? c0 : j}, ctx));
  }
};

} // namespace

void tgc::populateAttentionPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(lowering, patterns.getContext());
}
