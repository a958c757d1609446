// Lowering of indexing ops: gather and embedding (generics reading with tensor.extract)
// and embedding's gradient (a scatter-add of gradient rows, as a loop over the indices).
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

/// An index tensor element as an `index` value.
Value indexValue(OpBuilder &b, Location loc, Value element) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                    castScalar(b, loc, element, b.getI64Type()));
}

/// `index` clamped into [0, size - 1].
Value clampIndex(OpBuilder &b, Location loc, Value index, Value size) {
  Value last = arith::SubIOp::create(b, loc, size, arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, index, last),
                                arith::ConstantIndexOp::create(b, loc, 0));
}

/// Whether 0 <= index < limit.
Value inBounds(OpBuilder &b, Location loc, Value index, Value limit) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, limit));
}

/// The sizes of the first `count` dimensions of `tensor` (appended to `sizes`), and
/// their product: the trip count of a loop over them.
Value leadingSizes(OpBuilder &b, Location loc, Value tensor, int64_t count,
                   SmallVectorImpl<Value> &sizes) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < count; ++d) {
    sizes.push_back(tensor::DimOp::create(b, loc, tensor, d));
    product = arith::MulIOp::create(b, loc, product, sizes.back());
  }
  return product;
}

/// The row-major coordinates of `linear` in a space of `sizes` (none for 0-d).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ValueRange sizes) {
  if (sizes.empty())
    return {};
  auto op = affine::AffineDelinearizeIndexOp::create(b, loc, linear, sizes);
  return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

/// result[b..., r...] = self[i0[b...], ..., ik[b...], r...]: a generic over the result
/// reading each index tensor through its broadcast map (size-1 dimensions read index 0)
/// and self with tensor.extract.
struct IndexLowering : TgcLoweringPattern<IndexOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(IndexOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getDimsAttr())
      return op.emitOpError("with dims is lowered after tgc-decompose moves them to the front");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    int64_t rank = resultType.getRank();
    int64_t indexed = static_cast<int64_t>(op.getIndices().size());
    int64_t selfRank = tgcType(op.getSelf()).getRank();
    int64_t broadcastRank = rank - (selfRank - indexed);
    ArrayRef<AffineExpr> resultSizes = resultType.getSizes();
    SmallVector<AffineMap> maps;
    for (Value index : op.getIndices()) {
      ArrayRef<AffineExpr> sizes = tgcType(index).getSizes();
      int64_t lead = broadcastRank - static_cast<int64_t>(sizes.size());
      SmallVector<AffineExpr> exprs;
      for (auto [d, size] : llvm::enumerate(sizes)) {
        bool broadcast = getConstantSize(size) == 1 && getConstantSize(resultSizes[lead + d]) != 1;
        exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                  : getAffineDimExpr(lead + d, ctx));
      }
      maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    Value self = adaptor.getSelf();
    SmallVector<Value> dimSizes;
    for (int64_t d = 0; d < indexed; ++d)
      dimSizes.push_back(tensor::DimOp::create(rewriter, loc, self, d));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(), adaptor.getIndices(), *init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> coords;
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t d = 0; d < indexed; ++d) {
            // A negative index counts from the end.
            Value i = indexValue(b, l, args[d]);
            Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
            Value wrapped = arith::AddIOp::create(b, l, i, dimSizes[d]);
            i = arith::SelectOp::create(b, l, negative, wrapped, i);
            coords.push_back(clampIndex(b, l, i, dimSizes[d]));
          }
          for (int64_t d = indexed; d < selfRank; ++d)
            coords.push_back(linalg::IndexOp::create(b, l, broadcastRank + d - indexed));
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, self, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// as_strided gathering from a row-major `self`: each result element reads the
/// element at position offset + sum(i_k * stride_k), delinearized by `self`'s sizes.
/// (A restride is a copy after tgc-decompose.)
struct AsStridedLowering : TgcLoweringPattern<AsStridedOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(AsStridedOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t> strides, inSizes;
    for (AffineExpr s : op.getStride().getSizes())
      strides.push_back(*getConstantSize(s));
    for (AffineExpr s : tgcType(op.getSelf()).getSizes())
      inSizes.push_back(*getConstantSize(s));
    int64_t offset = 0;
    if (ShapeAttr o = op.getStorageOffsetAttr(); o && !o.getSizes().empty())
      offset = *getConstantSize(o.getSizes()[0]);
    Value self = adaptor.getSelf();
    return lowerIndexGeneric(
        rewriter, lowering, op, {}, [&](OpBuilder &b, Location l, ValueRange idx, ValueRange) {
          auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, l, v); };
          Value position = c(offset);
          for (auto [i, stride] : llvm::zip(idx, strides))
            position =
                arith::AddIOp::create(b, l, position, arith::MulIOp::create(b, l, i, c(stride)));
          SmallVector<Value> coords(inSizes.size());
          for (int64_t d = static_cast<int64_t>(inSizes.size()) - 1; d >= 0; --d) {
            coords[d] = d == 0 ? position : arith::RemUIOp::create(b, l, position, c(inSizes[d]));
            if (d > 0)
              position = arith::DivUIOp::create(b, l, position, c(inSizes[d]));
          }
          return tensor::ExtractOp::create(b, l, self, coords).getResult();
        });
  }
};

/// result[i] = self[i with dimension `dim` replaced by index[i]]: a generic over the
/// index reading self with tensor.extract.
struct GatherLowering : TgcLoweringPattern<GatherOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    int64_t rank = resultType.getRank();
    int64_t dim = *normalizeDim(op.getDim(), rank);
    Value self = adaptor.getSelf();
    Value size = rank ? tensor::DimOp::create(rewriter, loc, self, dim).getResult()
                      : arith::ConstantIndexOp::create(rewriter, loc, 1).getResult();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(), adaptor.getIndex(), *init,
        SmallVector<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> indices;
          for (int64_t i = 0; i < rank; ++i)
            indices.push_back(i == dim ? clampIndex(b, l, indexValue(b, l, args[0]), size)
                                       : linalg::IndexOp::create(b, l, i).getResult());
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, self, indices).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// result[i..., d] = weight[clamp(indices[i...], 0, V - 1), d]: a generic over the
/// result reading the indices through its map and the weight with tensor.extract.
struct EmbeddingLowering : TgcLoweringPattern<EmbeddingOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    Value weight = adaptor.getWeight();
    Value rows = tensor::DimOp::create(rewriter, loc, weight, 0);
    int64_t rank = resultType.getRank();
    SmallVector<AffineExpr> leading;
    for (int64_t i = 0; i + 1 < rank; ++i)
      leading.push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, leading, ctx),
                                   AffineMap::getMultiDimIdentityMap(rank, ctx)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(), adaptor.getIndices(), *init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value row = clampIndex(b, l, indexValue(b, l, args[0]), rows);
          Value column = linalg::IndexOp::create(b, l, rank - 1);
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, weight, ValueRange{row, column}).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// A [num_weights, D] tensor of zeros, then a loop over the flattened indices adding
/// each gradient row into the row it indexes (skipping padding_idx and indices out of
/// range); the rows are tensor slices, updated in place after bufferization.
struct EmbeddingBackwardLowering : TgcLoweringPattern<EmbeddingBackwardOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(EmbeddingBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getScaleGradByFreq())
      return op.emitOpError("scale_grad_by_freq is not supported yet");
    Location loc = op.getLoc();
    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, tgcType(op.getResult()));
    if (failed(init))
      return failure();
    // Indices as [M] and grad_output as [M, D].
    auto flatten = [&](Value v, int64_t keep) -> Value {
      auto type = llvm::cast<RankedTensorType>(v.getType());
      int64_t lead = type.getRank() - keep;
      if (lead == 1)
        return v;
      if (lead == 0) {
        SmallVector<int64_t> shape = {1};
        llvm::append_range(shape, type.getShape());
        SmallVector<ReassociationIndices> reassoc;
        for (int64_t i = 0; i < keep; ++i)
          reassoc.push_back(i == 0 ? ReassociationIndices{0, 1} : ReassociationIndices{i + 1});
        if (keep == 0)
          reassoc.clear();
        return tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v, reassoc);
      }
      SmallVector<ReassociationIndices> reassoc(1);
      for (int64_t i = 0; i < lead; ++i)
        reassoc[0].push_back(i);
      for (int64_t i = lead; i < type.getRank(); ++i)
        reassoc.push_back({i});
      return tensor::CollapseShapeOp::create(rewriter, loc, v, reassoc);
    };
    Value indices = flatten(adaptor.getIndices(), 0);
    Value grad = flatten(adaptor.getGradOutput(), 1);
    Value count = tensor::DimOp::create(rewriter, loc, indices, 0);
    Value rows = tensor::DimOp::create(rewriter, loc, *init, 0);
    OpFoldResult width = tensor::getMixedSize(rewriter, loc, grad, 1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    int64_t paddingIdx = op.getPaddingIdx();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{*init},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          Value row = indexValue(b, l, tensor::ExtractOp::create(b, l, indices, i));
          Value valid = inBounds(b, l, row, rows);
          if (paddingIdx >= 0)
            valid = arith::AndIOp::create(
                b, l, valid,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, row,
                                      arith::ConstantIndexOp::create(b, l, paddingIdx)));
          auto ifOp = scf::IfOp::create(
              b, l, valid,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<OpFoldResult> sizes = {tb.getIndexAttr(1), width};
                SmallVector<OpFoldResult> strides(2, tb.getIndexAttr(1));
                Value target = tensor::ExtractSliceOp::create(
                    tb, tl, acc[0], SmallVector<OpFoldResult>{row, tb.getIndexAttr(0)}, sizes,
                    strides);
                Value source = tensor::ExtractSliceOp::create(
                    tb, tl, grad, SmallVector<OpFoldResult>{i, tb.getIndexAttr(0)}, sizes, strides);
                Value sum = linalg::AddOp::create(tb, tl, TypeRange{target.getType()},
                                                  ValueRange{target, source}, ValueRange{target})
                                ->getResult(0);
                Value updated = tensor::InsertSliceOp::create(
                    tb, tl, sum, acc[0], SmallVector<OpFoldResult>{row, tb.getIndexAttr(0)}, sizes,
                    strides);
                scf::YieldOp::create(tb, tl, updated);
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, acc[0]); });
          scf::YieldOp::create(b, l, ifOp.getResult(0));
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// index_put in its leading form (tgc-decompose): indices [B] for the first k
/// dimensions, values [B, rest]. An scf.for over B (row-major, so the last of repeated
/// positions wins) writes or adds each values[b] (a `rest` slice) at the position the
/// indices name, negative ones counted from the end, those outside skipped.
struct IndexPutLowering : TgcLoweringPattern<IndexPutOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(IndexPutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getDimsAttr())
      return op.emitOpError("expected the leading form (run tgc-decompose first)");
    Location loc = op.getLoc();
    Value self = adaptor.getSelf(), values = adaptor.getValues();
    ValueRange indices = adaptor.getIndices();
    auto selfType = llvm::cast<RankedTensorType>(self.getType());
    auto valuesType = llvm::cast<RankedTensorType>(values.getType());
    Type element = selfType.getElementType();
    int64_t k = static_cast<int64_t>(indices.size());
    int64_t rank = selfType.getRank(), restRank = rank - k;
    int64_t bRank = valuesType.getRank() - restRank;
    if (valuesType.getElementType() != element) {
      FailureOr<Value> cast = broadcastTo(rewriter, lowering, op, values, tgcType(op.getValues()),
                                          tgcType(op.getValues()), element);
      if (failed(cast))
        return failure();
      values = *cast;
      valuesType = llvm::cast<RankedTensorType>(values.getType());
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> bSizes, limits;
    Value count = leadingSizes(rewriter, loc, values, bRank, bSizes);
    leadingSizes(rewriter, loc, self, k, limits);
    SmallVector<OpFoldResult> restSizes;
    for (int64_t d = k; d < rank; ++d)
      restSizes.push_back(tensor::getMixedSize(rewriter, loc, self, d));
    auto restType = RankedTensorType::get(selfType.getShape().drop_front(k), element);
    bool accumulate = op.getAccumulate();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{self},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          SmallVector<Value> coords = delinearize(b, l, i, bSizes);
          SmallVector<Value> target;
          Value valid = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
          for (int64_t d = 0; d < k; ++d) {
            Value at = indexValue(b, l, tensor::ExtractOp::create(b, l, indices[d], coords));
            Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, at, zero);
            at = arith::SelectOp::create(b, l, negative, arith::AddIOp::create(b, l, at, limits[d]),
                                         at);
            valid = arith::AndIOp::create(b, l, valid, inBounds(b, l, at, limits[d]));
            target.push_back(at);
          }
          auto ifOp = scf::IfOp::create(
              b, l, valid,
              [&](OpBuilder &tb, Location tl) {
                Value updated;
                if (restRank == 0) {
                  Value v = tensor::ExtractOp::create(tb, tl, values, coords);
                  if (accumulate)
                    v = addScalars(tb, tl, tensor::ExtractOp::create(tb, tl, acc[0], target), v);
                  updated = tensor::InsertOp::create(tb, tl, v, acc[0], target);
                } else {
                  auto slice = [&](Value source, ArrayRef<Value> lead) -> Value {
                    SmallVector<OpFoldResult> offsets(lead.begin(), lead.end()), sizes;
                    sizes.assign(lead.size(), tb.getIndexAttr(1));
                    offsets.append(restRank, tb.getIndexAttr(0));
                    llvm::append_range(sizes, restSizes);
                    SmallVector<OpFoldResult> strides(offsets.size(), tb.getIndexAttr(1));
                    return tensor::ExtractSliceOp::create(tb, tl, restType, source, offsets, sizes,
                                                          strides);
                  };
                  Value v = slice(values, coords);
                  if (accumulate) {
                    Value old = slice(acc[0], target);
                    v = linalg::AddOp::create(tb, tl, TypeRange{restType}, ValueRange{old, v},
                                              ValueRange{old})
                            ->getResult(0);
                  }
                  SmallVector<OpFoldResult> offsets(target.begin(), target.end()), sizes;
                  sizes.assign(k, tb.getIndexAttr(1));
                  offsets.append(restRank, tb.getIndexAttr(0));
                  llvm::append_range(sizes, restSizes);
                  SmallVector<OpFoldResult> strides(offsets.size(), tb.getIndexAttr(1));
                  updated =
                      tensor::InsertSliceOp::create(tb, tl, v, acc[0], offsets, sizes, strides);
                }
                scf::YieldOp::create(tb, tl, updated);
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, acc[0]); });
          scf::YieldOp::create(b, l, ifOp.getResult(0));
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// The scatter family as an scf.for over the elements of `index` (in row-major order,
/// as ATen's CPU kernel visits them: with "none" the last write wins) carrying the
/// result, and for the reductions that leave `self` out or average, a count per
/// position. Each step reads the index, skips it when outside the dimension, and
/// combines the source element into the position it names; "mean" divides at the end.
template <typename OpTy> struct ScatterLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    StringRef reduce = op.getReduce();
    reduce = reduce == "add" ? "sum" : reduce == "multiply" ? "prod" : reduce;
    bool includeSelf = op.getIncludeSelf();
    Value self = adaptor.getSelf(), index = adaptor.getIndex();
    Value src;
    if constexpr (std::is_same_v<OpTy, ScatterValueOp>)
      src = adaptor.getValue();
    else
      src = adaptor.getSrc();
    auto selfType = llvm::cast<RankedTensorType>(self.getType());
    Type element = selfType.getElementType();
    int64_t rank = selfType.getRank();
    int64_t dim = rank ? *normalizeDim(op.getDim(), rank) : 0;
    bool counted = reduce == "mean" || (reduce != "none" && !includeSelf);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> indexSizes;
    Value count = leadingSizes(rewriter, loc, index, rank, indexSizes);
    Value limit = rank ? tensor::DimOp::create(rewriter, loc, self, dim).getResult() : one;
    SmallVector<Value> inits = {self};
    if (counted) {
      BaseTensorType type = tgcType(op.getSelf());
      TensorMeta counts = type.getMeta();
      counts.dtype = rewriter.getI64Type();
      FailureOr<Value> zeros = this->lowering.zeroTensor(rewriter, op, type.withMeta(counts));
      if (failed(zeros))
        return failure();
      inits.push_back(*zeros);
    }
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, inits,
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          SmallVector<Value> coords = delinearize(b, l, i, indexSizes);
          Value at = indexValue(b, l, tensor::ExtractOp::create(b, l, index, coords));
          Value valid = inBounds(b, l, at, limit);
          auto ifOp = scf::IfOp::create(
              b, l, valid,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<Value> target(coords);
                if (rank)
                  target[dim] = at;
                Value v = llvm::isa<RankedTensorType>(src.getType())
                              ? tensor::ExtractOp::create(tb, tl, src, coords).getResult()
                              : src;
                v = castScalar(tb, tl, v, element);
                Value old = tensor::ExtractOp::create(tb, tl, acc[0], target);
                Value updated = v;
                if (reduce == "sum" || reduce == "mean")
                  updated = addScalars(tb, tl, old, v);
                else if (reduce == "prod")
                  updated = mulScalars(tb, tl, old, v);
                else if (reduce == "amax")
                  updated = maxScalars(tb, tl, old, v);
                else if (reduce == "amin")
                  updated = minScalars(tb, tl, old, v);
                SmallVector<Value> results;
                if (counted) {
                  Value seen = tensor::ExtractOp::create(tb, tl, acc[1], target);
                  if (!includeSelf) {
                    Value first = arith::CmpIOp::create(
                        tb, tl, arith::CmpIPredicate::eq, seen,
                        arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)));
                    updated = arith::SelectOp::create(tb, tl, first, v, updated);
                  }
                  results.push_back(tensor::InsertOp::create(tb, tl, updated, acc[0], target));
                  Value next = arith::AddIOp::create(
                      tb, tl, seen, arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(1)));
                  results.push_back(tensor::InsertOp::create(tb, tl, next, acc[1], target));
                } else {
                  results.push_back(tensor::InsertOp::create(tb, tl, updated, acc[0], target));
                }
                scf::YieldOp::create(tb, tl, results);
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, acc); });
          scf::YieldOp::create(b, l, ifOp.getResults());
        });
    Value result = loop.getResult(0);
    if (reduce == "mean") {
      // Written positions: the sum over (count + include_self) elements.
      AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
      auto generic = linalg::GenericOp::create(
          rewriter, loc, result.getType(), ValueRange{loop.getResult(1)}, ValueRange{result},
          SmallVector<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value n = args[0];
            if (includeSelf)
              n = arith::AddIOp::create(b, l, n,
                                        arith::ConstantOp::create(b, l, b.getI64IntegerAttr(1)));
            Value divisor = castScalar(b, l, n, element);
            Value mean = llvm::isa<FloatType>(element)
                             ? arith::DivFOp::create(b, l, args[1], divisor).getResult()
                             : arith::FloorDivSIOp::create(b, l, args[1], divisor).getResult();
            Value written =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, args[0],
                                      arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
            linalg::YieldOp::create(
                b, l, arith::SelectOp::create(b, l, written, mean, args[1]).getResult());
          });
      result = generic.getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tgc::populateIndexingPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<IndexLowering, AsStridedLowering, GatherLowering, EmbeddingLowering,
               EmbeddingBackwardLowering, IndexPutLowering, ScatterLowering<ScatterOp>,
               ScatterLowering<ScatterValueOp>, ScatterLowering<ScatterAddOp>,
               ScatterLowering<ScatterReduceOp>>(lowering, patterns.getContext());
}
