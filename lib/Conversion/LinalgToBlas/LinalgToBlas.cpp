// convert-linalg-to-blas: f32/f64 matmuls on buffers become calls to the runtime's
// OpenBLAS-backed GEMM helpers.
#include "tgc/Conversion/RuntimeCalls.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tgc {
#define GEN_PASS_DEF_CONVERTLINALGTOBLASPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// Whether a memref's rows are contiguous (unit innermost stride), so BLAS can take it
/// with a leading dimension.
bool hasUnitInnerStride(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

/// Pointer, offset and strides of a memref for a plain C call.
struct BufferArgs {
  Value pointer, offset;
  SmallVector<Value> strides;
};

BufferArgs bufferArgs(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  BufferArgs args;
  args.pointer = tgc::alignedPointer(b, loc, memref);
  args.offset = arith::IndexCastOp::create(b, loc, b.getI64Type(), meta.getOffset());
  for (Value stride : meta.getStrides())
    args.strides.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), stride));
  return args;
}

/// Whether operand `map` reads its matrix transposed: (k, m) instead of (m, k) for A,
/// (n, k) instead of (k, n) for B. Fails for maps that are neither. A batched operand
/// may leave out the batch dimension (`broadcast`: every batch reads one matrix).
FailureOr<bool> isTransposed(AffineMap map, unsigned row, unsigned col, bool batched,
                             bool *broadcast = nullptr) {
  bool unbatched = batched && broadcast && map.getNumResults() == 2;
  if (broadcast)
    *broadcast = unbatched;
  unsigned first = batched && !unbatched ? 1 : 0;
  if (map.getNumResults() != first + 2 ||
      (first && map.getResult(0) != getAffineDimExpr(0, map.getContext())))
    return failure();
  auto at = [&](unsigned i) { return llvm::dyn_cast<AffineDimExpr>(map.getResult(first + i)); };
  if (!at(0) || !at(1))
    return failure();
  unsigned dims = batched ? 1 : 0;
  unsigned r = at(0).getPosition() - dims, c = at(1).getPosition() - dims;
  if (r == row && c == col)
    return false;
  if (r == col && c == row)
    return true;
  return failure();
}

/// `op` if it is a linalg.fill of zero into exactly `c` (a buffer).
linalg::FillOp zeroFillOf(Operation *op, Value c) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill || !fill.hasPureBufferSemantics() || fill.getDpsInits()[0] != c)
    return {};
  return matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()) ? fill : linalg::FillOp();
}

/// Rewrites a (batch_)matmul C += A @ B into a call of the runtime GEMM helper.
template <typename MatmulOp, bool batched> struct MatmulToBlas : OpRewritePattern<MatmulOp> {
  using OpRewritePattern<MatmulOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "needs buffers");
    // Loop dimensions [b,] m, n, k: A is (m, k) or (k, m), B (k, n) or (n, k), C (m, n).
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool broadcastA = false, broadcastB = false;
    FailureOr<bool> transA = isTransposed(maps[0], 0, 2, batched, &broadcastA);
    FailureOr<bool> transB = isTransposed(maps[1], 2, 1, batched, &broadcastB);
    FailureOr<bool> transC = isTransposed(maps[2], 0, 1, batched);
    if (failed(transA) || failed(transB) || failed(transC) || *transC)
      return rewriter.notifyMatchFailure(op, "indexing maps are not a (transposed) GEMM");
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
    auto cType = llvm::cast<MemRefType>(c.getType());
    Type element = cType.getElementType();
    if (!element.isF32() && !element.isF64())
      return rewriter.notifyMatchFailure(op, "BLAS takes f32 and f64");
    for (Value v : {a, b, c}) {
      auto type = llvm::cast<MemRefType>(v.getType());
      if (type.getElementType() != element || !hasUnitInnerStride(type))
        return rewriter.notifyMatchFailure(op, "operands need contiguous rows of one type");
    }
    // C = A @ B right after C was zeroed: the GEMM overwrites C (beta 0), with no
    // separate pass over C to zero it first.
    linalg::FillOp zeroFill = zeroFillOf(op->getPrevNode(), c);
    Location loc = op.getLoc();
    auto i64 = rewriter.getI64Type();
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(v));
    };
    auto dim = [&](Value v, int64_t d) -> Value {
      return arith::IndexCastOp::create(rewriter, loc, i64,
                                        memref::DimOp::create(rewriter, loc, v, d));
    };
    BufferArgs ab = bufferArgs(rewriter, loc, a), bb = bufferArgs(rewriter, loc, b),
               cb = bufferArgs(rewriter, loc, c);
    int64_t r = batched ? 1 : 0; // index of the row dimension of C
    int64_t rA = broadcastA ? 0 : r;
    Value m = dim(c, r), n = dim(c, r + 1), k = dim(a, *transA ? rA : rA + 1);
    Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(element, 1.0));
    Value beta = one;
    if (zeroFill) {
      rewriter.eraseOp(zeroFill);
      beta = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(element, 0.0));
    }
    SmallVector<Value> args;
    if (batched)
      args.push_back(dim(c, 0));
    args.append({cst(*transA), cst(*transB)});
    for (auto [buf, broadcast] :
         {std::pair(&ab, broadcastA), std::pair(&bb, broadcastB), std::pair(&cb, false)}) {
      args.append({buf->pointer, buf->offset});
      if (batched)
        args.push_back(broadcast ? cst(0) : buf->strides[0]);
      args.push_back(buf->strides[broadcast ? 0 : r]);
    }
    args.append({m, n, k, one, beta});
    std::string name = std::string(batched ? "tgc_rt_gemm_batched_" : "tgc_rt_gemm_") +
                       (element.isF32() ? "f32" : "f64");
    auto module = op->template getParentOfType<ModuleOp>();
    func::FuncOp helper =
        tgc::declareRuntimeHelper(rewriter, module, name, ValueRange(args).getTypes());
    func::CallOp::create(rewriter, loc, helper, args);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertLinalgToBlasPass
    : public tgc::impl::ConvertLinalgToBlasPassBase<ConvertLinalgToBlasPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToBlas<linalg::MatmulOp, false>, MatmulToBlas<linalg::BatchMatmulOp, true>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError() << getArgument() << ": the rewriting did not converge";
      return signalPassFailure();
    }
  }
};

} // namespace
