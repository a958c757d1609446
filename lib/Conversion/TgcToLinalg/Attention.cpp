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

/// A sequence this many times longer than its tile limit is tiled even when its tiles
/// come out small; a shorter one is one tile when it has no good divisor.
constexpr int64_t kWholeTileLimits = 8;

/// The tile of a sequence of `size`: the largest divisor of `size` that is at most
/// `limit` (tiles cover the sequence exactly, so every tile has static sizes), unless
/// that is below a quarter of `limit` and the sequence is at most kWholeTileLimits
/// limits long: then the whole sequence. ViT's 197 tokens (a prime) made 1 x 1 tiles, a
/// library GEMM and an allocation per score: 17x slower than eager.
int64_t tileSize(int64_t size, int64_t limit) {
  int64_t tile = 1;
  for (int64_t d = std::min(size, limit); d > 1 && tile == 1; --d)
    if (size % d == 0)
      tile = d;
  if (tile * 4 < limit && size <= kWholeTileLimits * limit)
    return size;
  return tile;
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

/// What the tiles of one attention share: sizes, scale, masks, and the batch
/// induction variables that place a tile in its [batch..., R, C] operand.
struct AttentionTiles {
  OpBuilder &b;
  Location loc;
  Type element;
  int64_t rank;
  double scale;
  bool causal;
  Value mask;
  SmallVector<Value> batch;

  MLIRContext *ctx() const { return b.getContext(); }
  int64_t batchRank() const { return rank - 2; }

  /// rows: [batch..., row0 : rows, 0 : cols] of a [batch..., R, C] tensor as [rows, cols].
  Value rows(Value source, OpFoldResult row0, int64_t rows, int64_t cols) const {
    SmallVector<OpFoldResult> offsets(batch.begin(), batch.end()),
        sizes(batchRank(), b.getIndexAttr(1));
    offsets.append({row0, b.getIndexAttr(0)});
    sizes.append({b.getIndexAttr(rows), b.getIndexAttr(cols)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get({rows, cols}, element),
                                          source, offsets, sizes, strides)
        .getResult();
  }

  /// [batch..., row0 : rows] of a [batch..., R] tensor as [rows].
  Value vector(Value source, OpFoldResult row0, int64_t rows) const {
    SmallVector<OpFoldResult> offsets(batch.begin(), batch.end()),
        sizes(batchRank(), b.getIndexAttr(1)), strides(rank - 1, b.getIndexAttr(1));
    offsets.push_back(row0);
    sizes.push_back(b.getIndexAttr(rows));
    return tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get({rows}, element), source,
                                          offsets, sizes, strides)
        .getResult();
  }

  /// Inserts a [rows, cols] tile (or a [rows] vector) at the batch element's `row0`
  /// in the forall's shared output `into`.
  void insertParallel(OpBuilder &ib, Value tile, Value into, OpFoldResult row0) const {
    auto type = llvm::cast<RankedTensorType>(tile.getType());
    SmallVector<OpFoldResult> offsets(batch.begin(), batch.end()),
        sizes(batchRank(), ib.getIndexAttr(1));
    offsets.push_back(row0);
    sizes.push_back(ib.getIndexAttr(type.getDimSize(0)));
    if (type.getRank() == 2) {
      offsets.push_back(ib.getIndexAttr(0));
      sizes.push_back(ib.getIndexAttr(type.getDimSize(1)));
    }
    SmallVector<OpFoldResult> strides(offsets.size(), ib.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(ib, loc, tile, into, offsets, sizes, strides);
  }

  /// `a @ b`, `a @ b^T` or `a^T @ b` for 2-d tiles, accumulated into `init`.
  Value gemm(OpBuilder &lb, Location ll, Value lhs, Value rhs, Value init, bool transLhs,
             bool transRhs) const {
    AffineExpr m = getAffineDimExpr(0, ctx()), n = getAffineDimExpr(1, ctx()),
               r = getAffineDimExpr(2, ctx());
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0, transLhs ? ArrayRef<AffineExpr>{r, m} : ArrayRef<AffineExpr>{m, r},
                       ctx()),
        AffineMap::get(3, 0, transRhs ? ArrayRef<AffineExpr>{n, r} : ArrayRef<AffineExpr>{r, n},
                       ctx()),
        AffineMap::get(3, 0, {m, n}, ctx())};
    return linalg::MatmulOp::create(
               lb, ll, TypeRange{init.getType()}, ValueRange{lhs, rhs}, ValueRange{init},
               {lb.getNamedAttr("indexing_maps", lb.getAffineMapArrayAttr(maps))})
        ->getResult(0);
  }

  /// Appends the mask's [bq, bk] tile at (q0, k0) to `inputs`.
  void maskTile(OpBuilder &lb, Value q0, Value k0, int64_t bq, int64_t bk,
                SmallVectorImpl<Value> &inputs, SmallVectorImpl<AffineMap> &maps) const;

  /// The logit of one score in a generic body: `score * scale`, plus a floating mask
  /// or -inf where a boolean mask is false, and -inf above the causal diagonal. `q0`
  /// and `k0` are the tile's first query and key.
  Value logit(OpBuilder &nb, Location nl, Value score, Value maskValue, Value q0, Value k0) const {
    Value x = arith::MulFOp::create(
        nb, nl, score, arith::ConstantOp::create(nb, nl, nb.getFloatAttr(element, scale)));
    Value hidden = arith::ConstantOp::create(
        nb, nl, nb.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
    if (maskValue && maskValue.getType().isInteger(1))
      x = arith::SelectOp::create(nb, nl, maskValue, x, hidden);
    else if (maskValue)
      x = arith::AddFOp::create(nb, nl, x, maskValue);
    if (causal) {
      Value qi = arith::AddIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 0), q0);
      Value kj = arith::AddIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 1), k0);
      Value seen = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, kj, qi);
      x = arith::SelectOp::create(nb, nl, seen, x, hidden);
    }
    return x;
  }
};

/// Adds the mask's [bq, bk] tile (a size-1 dimension of the mask broadcasts: its
/// offset is 0 and the tile reads its index 0) to the inputs of the logits.
void AttentionTiles::maskTile(OpBuilder &lb, Value q0, Value k0, int64_t bq, int64_t bk,
                              SmallVectorImpl<Value> &inputs,
                              SmallVectorImpl<AffineMap> &maps) const {
  MLIRContext *ctx = lb.getContext();
  auto maskTy = llvm::cast<RankedTensorType>(mask.getType());
  int64_t maskRank = maskTy.getRank(), lead = rank - maskRank;
  SmallVector<OpFoldResult> offsets, sizes, strides(maskRank, lb.getIndexAttr(1));
  for (int64_t d = 0; d < maskRank; ++d) {
    int64_t full = d + lead;
    bool broadcast = maskTy.getDimSize(d) == 1;
    OpFoldResult at = full == rank - 2   ? OpFoldResult(q0)
                      : full == rank - 1 ? OpFoldResult(k0)
                                         : OpFoldResult(batch[full]);
    int64_t extent = full == rank - 2 ? bq : full == rank - 1 ? bk : 1;
    offsets.push_back(broadcast ? lb.getIndexAttr(0) : at);
    sizes.push_back(lb.getIndexAttr(broadcast ? 1 : extent));
  }
  // The tile keeps the last two dimensions (1 where they broadcast).
  int64_t rowsSize = maskRank >= 2 && maskTy.getDimSize(maskRank - 2) != 1 ? bq : 1;
  int64_t colsSize = maskTy.getDimSize(maskRank - 1) != 1 ? bk : 1;
  SmallVector<int64_t> tileShape = {rowsSize, colsSize};
  Value tile;
  if (maskRank >= 2) {
    tile = tensor::ExtractSliceOp::create(lb, loc,
                                          RankedTensorType::get(tileShape, maskTy.getElementType()),
                                          mask, offsets, sizes, strides);
  } else {
    Value cols = tensor::ExtractSliceOp::create(
        lb, loc, RankedTensorType::get({colsSize}, maskTy.getElementType()), mask, offsets, sizes,
        strides);
    tile = tensor::ExpandShapeOp::create(lb, loc,
                                         RankedTensorType::get(tileShape, maskTy.getElementType()),
                                         cols, SmallVector<ReassociationIndices>{{0, 1}});
  }
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
  AffineExpr c0 = getAffineConstantExpr(0, ctx);
  inputs.push_back(tile);
  maps.push_back(AffineMap::get(2, 0, {rowsSize == 1 ? c0 : i, colsSize == 1 ? c0 : j}, ctx));
}

/// The sizes of an attention's operands ([batch..., L, E], [batch..., S, E],
/// [batch..., S, Ev]) and its tiles.
struct AttentionShape {
  int64_t rank, batchRank, queries, embed, keys, valueEmbed, bq, bk;
  Type element;

  static AttentionShape of(Value q, Value k, Value v) {
    auto qTy = llvm::cast<RankedTensorType>(q.getType());
    auto kTy = llvm::cast<RankedTensorType>(k.getType());
    auto vTy = llvm::cast<RankedTensorType>(v.getType());
    int64_t rank = qTy.getRank();
    int64_t queries = qTy.getDimSize(rank - 2), keys = kTy.getDimSize(rank - 2);
    return {rank,
            rank - 2,
            queries,
            qTy.getDimSize(rank - 1),
            keys,
            vTy.getDimSize(rank - 1),
            tileSize(queries, kQueryTile),
            tileSize(keys, kKeyTile),
            qTy.getElementType()};
  }
  bool isStatic() const {
    return llvm::none_of(ArrayRef<int64_t>{queries, embed, keys, valueEmbed},
                         ShapedType::isDynamic);
  }
};

/// One empty tensor per result of `op`: the scf.forall's shared outputs.
FailureOr<SmallVector<Value>> emptyResults(const LoweringContext &lowering,
                                           ConversionPatternRewriter &rewriter, Operation *op) {
  SmallVector<Value> outs;
  for (Value result : op->getResults()) {
    FailureOr<Value> out = lowering.emptyTensor(rewriter, op, tgcType(result));
    if (failed(out))
      return failure();
    outs.push_back(*out);
  }
  return outs;
}

/// [row0 : row0 + rows, col0 : col0 + cols] of a 2-d tensor.
Value slice2d(OpBuilder &b, Location loc, Value source, OpFoldResult row0, OpFoldResult col0,
              int64_t rows, int64_t cols) {
  return tensor::ExtractSliceOp::create(
      b, loc, source, ArrayRef<OpFoldResult>{row0, col0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(cols)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// `tile` written into a 2-d tensor at (row0, col0).
Value insert2d(OpBuilder &b, Location loc, Value tile, Value into, OpFoldResult row0,
               OpFoldResult col0) {
  auto type = llvm::cast<RankedTensorType>(tile.getType());
  return tensor::InsertSliceOp::create(
      b, loc, tile, into, ArrayRef<OpFoldResult>{row0, col0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(type.getDimSize(0)),
                             b.getIndexAttr(type.getDimSize(1))},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// The batch bounds of an attention's scf.forall (the query's leading sizes).
SmallVector<OpFoldResult> batchBounds(OpBuilder &b, Location loc, Value q, int64_t batchRank) {
  SmallVector<OpFoldResult> bounds;
  for (int64_t d = 0; d < batchRank; ++d)
    bounds.push_back(tensor::getMixedSize(b, loc, q, d));
  return bounds;
}

struct AttentionLowering : TgcLoweringPattern<ScaledDotProductAttentionOp> {
  using TgcLoweringPattern::TgcLoweringPattern;

  LogicalResult matchAndRewrite(ScaledDotProductAttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.hasFusedLowering())
      return rewriter.notifyMatchFailure(op, "decomposed before lowering");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    auto [rank, batchRank, queries, embed, keys, valueEmbed, bq, bk, element] =
        AttentionShape::of(q, k, v);
    bool causal = op.getIsCausal();
    FailureOr<SmallVector<Value>> outs = emptyResults(lowering, rewriter, op);
    if (failed(outs))
      return failure();

    // One iteration per batch element and tile of queries.
    SmallVector<OpFoldResult> bounds = batchBounds(rewriter, loc, q, batchRank);
    bounds.push_back(rewriter.getIndexAttr(queries / bq));
    auto forall = scf::ForallOp::create(rewriter, loc, bounds, *outs, std::nullopt);
    OpBuilder b = OpBuilder::atBlockTerminator(forall.getBody());
    SmallVector<Value> ivs(forall.getInductionVars());
    AttentionTiles t{b,
                     loc,
                     element,
                     rank,
                     *op.resolvedScale(),
                     causal,
                     adaptor.getAttnMask(),
                     SmallVector<Value>(ArrayRef(ivs).drop_back())};
    TileBuilder tb{b, loc, element};
    Value q0 = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) * bq), ivs.back());
    Value qTile = t.rows(q, q0, bq, embed);

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
    Value rowMax0 = tb.filled({bq}, negInf), rowSum0 = tb.filled({bq}, 0.0);
    Value acc0 = tb.filled({bq, valueEmbed}, 0.0);
    auto loop = scf::ForOp::create(
        b, loc, zero, end, step, ValueRange{rowMax0, rowSum0, acc0},
        [&](OpBuilder &lb, Location ll, Value k0, ValueRange carried) {
          TileBuilder l{lb, ll, element};
          Value rowMax = carried[0], rowSum = carried[1], acc = carried[2];
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value kTile = t.rows(k, k0, bk, embed), vTile = t.rows(v, k0, bk, valueEmbed);
          // scores = q k^T (BLAS reads the key tile transposed).
          Value scores = t.gemm(lb, ll, qTile, kTile, l.filled({bq, bk}, 0.0), false, true);
          // scale, mask, causal mask.
          SmallVector<Value> inputs = {scores};
          SmallVector<AffineMap> maps = {id2};
          if (t.mask)
            t.maskTile(lb, q0, k0, bq, bk, inputs, maps);
          Value logits =
              l.generic(inputs, maps, l.empty({bq, bk}), id2, false,
                        [&](OpBuilder &nb, Location nl, ValueRange args) {
                          return t.logit(nb, nl, args[0], t.mask ? args[1] : Value(), q0, k0);
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
          Value newAcc = t.gemm(lb, ll, probs, vTile, scaledAcc, false, false);
          scf::YieldOp::create(lb, ll, ValueRange{newMax, newSum, newAcc});
        });

    // out = acc / sum, into the tile's rows of the result (in place).
    Value outTile = t.rows(forall.getRegionIterArgs()[0], q0, bq, valueEmbed);
    Value result = tb.generic({loop.getResult(2), loop.getResult(1)}, {id2, rows2}, outTile, id2,
                              false, [&](OpBuilder &nb, Location nl, ValueRange args) {
                                return arith::DivFOp::create(nb, nl, args[0], args[1]);
                              });
    // The row log-sum-exp: max + log(sum), -inf for a row that sees no key.
    Value lse;
    if (op.getWithLogsumexp())
      lse = tb.generic({loop.getResult(0), loop.getResult(1)}, {id1, id1},
                       t.vector(forall.getRegionIterArgs()[1], q0, bq), id1, false,
                       [&](OpBuilder &nb, Location nl, ValueRange args) {
                         Value log = math::LogOp::create(nb, nl, args[1]);
                         return arith::AddFOp::create(nb, nl, tb.base(nb, nl, args[0]), log);
                       });
    OpBuilder ib = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
    t.insertParallel(ib, result, forall.getRegionIterArgs()[0], q0);
    if (lse)
      t.insertParallel(ib, lse, forall.getRegionIterArgs()[1], q0);
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

/// The fused backward (FlashAttention-2): per batch element, D = rowsum(dO * O); then
/// for each tile of keys (dK and dV of the tile accumulate in registers-sized tiles)
/// and each tile of queries that sees it: P = exp(logits - lse) recomputed, dV += P^T dO,
/// dP = dO V^T, dS = P * (dP - D), dK += scale * dS^T Q, dQ += scale * dS K. The
/// scf.forall runs the batch elements on the threads.
struct AttentionBackwardLowering : TgcLoweringPattern<ScaledDotProductAttentionBackwardOp> {
  using TgcLoweringPattern::TgcLoweringPattern;

  LogicalResult matchAndRewrite(ScaledDotProductAttentionBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value o = adaptor.getOutput(), dO = adaptor.getGradOutput(), lse = adaptor.getLogsumexp();
    AttentionShape shape = AttentionShape::of(q, k, v);
    if (!shape.isStatic())
      return rewriter.notifyMatchFailure(op, "symbolic sequence or embedding size");
    auto [rank, batchRank, queries, embed, keys, valueEmbed, bq, bk, element] = shape;
    bool causal = op.getIsCausal(), maskGrad = op.getWithMaskGrad();
    FailureOr<SmallVector<Value>> outs = emptyResults(lowering, rewriter, op);
    if (failed(outs))
      return failure();

    // One iteration per batch element (one, for 2-d operands).
    SmallVector<OpFoldResult> bounds = batchBounds(rewriter, loc, q, batchRank);
    if (bounds.empty())
      bounds.push_back(rewriter.getIndexAttr(1));
    auto forall = scf::ForallOp::create(rewriter, loc, bounds, *outs, std::nullopt);
    OpBuilder b = OpBuilder::atBlockTerminator(forall.getBody());
    SmallVector<Value> ivs(forall.getInductionVars());
    AttentionTiles t{b,
                     loc,
                     element,
                     rank,
                     op.getScale().convertToDouble(),
                     causal,
                     adaptor.getAttnMask(),
                     SmallVector<Value>(ArrayRef(ivs).take_front(batchRank))};
    TileBuilder tb{b, loc, element};
    AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
    AffineMap rows2 = AffineMap::get(2, 0, {i}, ctx), id2 = AffineMap::get(2, 0, {i, j}, ctx);
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);

    // D = rowsum(dO * O).
    Value oRows = t.rows(o, b.getIndexAttr(0), queries, valueEmbed);
    Value dORows = t.rows(dO, b.getIndexAttr(0), queries, valueEmbed);
    Value delta = tb.generic({dORows, oRows}, {id2, id2}, tb.filled({queries}, 0.0), rows2, true,
                             [&](OpBuilder &nb, Location nl, ValueRange args) {
                               Value prod = arith::MulFOp::create(nb, nl, args[0], args[1]);
                               return arith::AddFOp::create(nb, nl, prod, args[2]);
                             });

    // The batch element's gradients, carried through the loops and updated in place.
    SmallVector<Value> init = {tb.filled({queries, embed}, 0.0), tb.filled({keys, embed}, 0.0),
                               tb.filled({keys, valueEmbed}, 0.0)};
    if (maskGrad)
      init.push_back(tb.filled({queries, keys}, 0.0));
    Value keyStep = arith::ConstantIndexOp::create(b, loc, bk);
    Value keyEnd = arith::ConstantIndexOp::create(b, loc, keys);
    auto keyLoop = scf::ForOp::create(
        b, loc, zeroIndex, keyEnd, keyStep, init,
        [&](OpBuilder &kb, Location kl, Value k0, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(kb.getInsertionBlock(), kb.getInsertionPoint());
          TileBuilder kt{kb, kl, element};
          Value kTile = t.rows(k, k0, bk, embed), vTile = t.rows(v, k0, bk, valueEmbed);
          // A causal tile of keys is seen from the tile of queries holding its first key on.
          Value qBegin = zeroIndex;
          if (causal)
            qBegin = affine::AffineApplyOp::create(
                kb, kl, AffineMap::get(1, 0, getAffineDimExpr(0, ctx).floorDiv(bq) * bq), k0);
          SmallVector<Value> inner = {carried[0], kt.filled({bk, embed}, 0.0),
                                      kt.filled({bk, valueEmbed}, 0.0)};
          if (maskGrad)
            inner.push_back(carried[3]);
          auto queryLoop = scf::ForOp::create(
              kb, kl, qBegin, arith::ConstantIndexOp::create(kb, kl, queries),
              arith::ConstantIndexOp::create(kb, kl, bq), inner,
              [&](OpBuilder &lb, Location ll, Value q0, ValueRange acc) {
                OpBuilder::InsertionGuard innerGuard(b);
                b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
                TileBuilder l{lb, ll, element};
                Value qTile = t.rows(q, q0, bq, embed), dOTile = t.rows(dO, q0, bq, valueEmbed);
                Value lseTile = t.vector(lse, q0, bq);
                Value deltaTile =
                    tensor::ExtractSliceOp::create(lb, ll, delta, ArrayRef<OpFoldResult>{q0},
                                                   ArrayRef<OpFoldResult>{lb.getIndexAttr(bq)},
                                                   ArrayRef<OpFoldResult>{lb.getIndexAttr(1)});
                // P = exp(logits - lse).
                Value scores = t.gemm(lb, ll, qTile, kTile, l.filled({bq, bk}, 0.0), false, true);
                SmallVector<Value> inputs = {scores};
                SmallVector<AffineMap> maps = {id2};
                if (t.mask)
                  t.maskTile(lb, q0, k0, bq, bk, inputs, maps);
                inputs.push_back(lseTile);
                maps.push_back(rows2);
                Value probs = l.generic(
                    inputs, maps, l.empty({bq, bk}), id2, false,
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value x = t.logit(nb, nl, args[0], t.mask ? args[1] : Value(), q0, k0);
                      Value shifted =
                          arith::SubFOp::create(nb, nl, x, l.base(nb, nl, args[inputs.size() - 1]));
                      return math::ExpOp::create(nb, nl, shifted);
                    });
                // dV += P^T dO; dP = dO V^T; dS = P * (dP - D).
                Value dV = t.gemm(lb, ll, probs, dOTile, acc[2], true, false);
                Value dP = t.gemm(lb, ll, dOTile, vTile, l.filled({bq, bk}, 0.0), false, true);
                Value dS = l.generic({probs, dP, deltaTile}, {id2, id2, rows2}, l.empty({bq, bk}),
                                     id2, false, [&](OpBuilder &nb, Location nl, ValueRange args) {
                                       Value diff = arith::SubFOp::create(nb, nl, args[1], args[2]);
                                       return arith::MulFOp::create(nb, nl, args[0], diff);
                                     });
                SmallVector<Value> next(4);
                if (maskGrad)
                  next[3] = insert2d(lb, ll, dS, acc[3], q0, k0);
                // The logits' gradient times the scale: what the scores' GEMM operands get.
                Value scaled =
                    l.generic({dS}, {id2}, l.empty({bq, bk}), id2, false,
                              [&](OpBuilder &nb, Location nl, ValueRange args) {
                                return arith::MulFOp::create(nb, nl, args[0], l.constant(t.scale));
                              });
                // dK += dS^T Q; dQ[q0 : q0 + bq] += dS K.
                Value dK = t.gemm(lb, ll, scaled, qTile, acc[1], true, false);
                Value dQRows = slice2d(lb, ll, acc[0], q0, lb.getIndexAttr(0), bq, embed);
                Value dQTile = t.gemm(lb, ll, scaled, kTile, dQRows, false, false);
                next[0] = insert2d(lb, ll, dQTile, acc[0], q0, lb.getIndexAttr(0));
                next[1] = dK;
                next[2] = dV;
                next.resize(maskGrad ? 4 : 3);
                scf::YieldOp::create(lb, ll, next);
              });
          // The key tile's dK and dV into the batch element's rows.
          SmallVector<Value> next = {
              queryLoop.getResult(0),
              insert2d(kb, kl, queryLoop.getResult(1), carried[1], k0, kb.getIndexAttr(0)),
              insert2d(kb, kl, queryLoop.getResult(2), carried[2], k0, kb.getIndexAttr(0))};
          if (maskGrad)
            next.push_back(queryLoop.getResult(3));
          scf::YieldOp::create(kb, kl, next);
        });

    OpBuilder ib = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
    for (auto [result, into] : llvm::zip(keyLoop.getResults(), forall.getRegionIterArgs()))
      t.insertParallel(ib, result, into, ib.getIndexAttr(0));
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

} // namespace

void tgc::populateAttentionPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, AttentionBackwardLowering>(lowering, patterns.getContext());
}
