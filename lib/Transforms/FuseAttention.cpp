// tgc-fuse-attention: attention written out by hand becomes one
// scaled_dot_product_attention (docs/kernels.md).
#include "tgc/Dialect/TensorMeta.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace tgc {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

BaseTensorType typeOf(Value v) { return llvm::cast<BaseTensorType>(v.getType()); }

/// The op defining `v` as an `OpT`, if `v` has no other user than the one looking.
template <typename OpT> OpT soleUse(Value v) {
  if (!v || !v.hasOneUse())
    return nullptr;
  return v.getDefiningOp<OpT>();
}

/// A scalar constant operand (an arith.constant f64 or i64) as a double.
std::optional<double> scalarConstant(Value v) {
  FloatAttr f;
  if (matchPattern(v, m_Constant(&f)))
    return f.getValueAsDouble();
  IntegerAttr i;
  if (matchPattern(v, m_Constant(&i)))
    return static_cast<double>(i.getInt());
  return std::nullopt;
}

/// Whether a transpose swaps the last two of `rank` dimensions.
bool swapsLastTwo(TransposeOp op, int64_t rank) {
  auto norm = [&](int64_t d) { return d < 0 ? d + rank : d; };
  int64_t a = norm(op.getDim0()), b = norm(op.getDim1());
  return std::min(a, b) == rank - 2 && std::max(a, b) == rank - 1;
}

struct FuseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp out, PatternRewriter &rewriter) const override {
    // ... @ v, from the probabilities (through a no-op conversion or dropout).
    Value probs = out.getSelf(), v = out.getOther();
    while (true) {
      if (auto convert = soleUse<ToDTypeOp>(probs);
          convert && typeOf(convert.getSelf()).getDtype() == typeOf(probs).getDtype()) {
        probs = convert.getSelf();
        continue;
      }
      if (auto dropout = soleUse<DropoutOp>(probs);
          dropout && (!dropout.getTrain() || dropout.getP().isZero())) {
        probs = dropout.getInput();
        continue;
      }
      break;
    }
    auto softmax = soleUse<SoftmaxOp>(probs);
    if (!softmax || softmax.getLog())
      return rewriter.notifyMatchFailure(out, "not softmax @ v");
    BaseTensorType probsType = typeOf(softmax.getResult());
    int64_t rank = probsType.getRank(), dim = static_cast<int64_t>(softmax.getDim());
    Type dtype = probsType.getDtype();
    if (rank < 2 || !(dtype.isF32() || dtype.isF64()) || typeOf(v).getRank() != rank ||
        typeOf(v).getDtype() != dtype || typeOf(softmax.getSelf()).getDtype() != dtype ||
        (dim != -1 && dim != rank - 1))
      return rewriter.notifyMatchFailure(out, "softmax over another dimension or dtype");

    // The mask: masked_fill(cond, -inf) or + a floating mask.
    Value logits = softmax.getSelf(), mask;
    if (auto fill = soleUse<MaskedFillOp>(logits)) {
      std::optional<double> value = scalarConstant(fill.getValue());
      if (!value || !std::isinf(*value) || *value > 0)
        return rewriter.notifyMatchFailure(out, "masked_fill with another value than -inf");
      mask = fill.getMask();
      logits = fill.getSelf();
    } else if (auto add = soleUse<AddOp>(logits);
               add && !add.getAlphaAttr() && llvm::isa<BaseTensorType>(add.getOther().getType()) &&
               typeOf(add.getOther()).getDtype() == dtype) {
      mask = add.getOther();
      logits = add.getSelf();
    }
    if (mask && typeOf(mask).getRank() > rank)
      return rewriter.notifyMatchFailure(out, "mask of a higher rank than the scores");

    // The scale: * s, / s, or none.
    double scale = 1.0;
    if (auto mul = soleUse<MulOp>(logits)) {
      std::optional<double> s = scalarConstant(mul.getOther());
      if (!s)
        return rewriter.notifyMatchFailure(out, "scores scaled by a tensor");
      scale = *s;
      logits = mul.getSelf();
    } else if (auto div = soleUse<DivOp>(logits); div && !div.getRoundingModeAttr()) {
      std::optional<double> s = scalarConstant(div.getOther());
      if (!s || *s == 0)
        return rewriter.notifyMatchFailure(out, "scores divided by a tensor");
      scale = 1.0 / *s;
      logits = div.getSelf();
    }

    // q @ k^T.
    auto scores = soleUse<MatmulOp>(logits);
    if (!scores)
      return rewriter.notifyMatchFailure(out, "scores are not a matmul");
    auto keyT = scores.getOther().getDefiningOp<TransposeOp>();
    Value q = scores.getSelf();
    if (!keyT || !keyT.getResult().hasOneUse() || typeOf(q).getRank() != rank ||
        typeOf(keyT.getSelf()).getRank() != rank || !swapsLastTwo(keyT, rank))
      return rewriter.notifyMatchFailure(out, "scores are not q @ k^T");
    Value k = keyT.getSelf();
    BaseTensorType qType = typeOf(q), kType = typeOf(k), vType = typeOf(v);
    // Attention does not broadcast batch dimensions the way matmul does.
    if (qType.getDtype() != dtype || kType.getDtype() != dtype ||
        qType.getSizes().drop_back(2) != kType.getSizes().drop_back(2) ||
        qType.getSizes().drop_back(2) != vType.getSizes().drop_back(2))
      return rewriter.notifyMatchFailure(out, "query, key and value batch sizes differ");
    // Saved-tensor hook scopes stay on the ops autodiff sees.
    for (Operation *op : {out.getOperation(), softmax.getOperation(), scores.getOperation()})
      if (op->hasAttr(SavedTensorsHooksOp::getScopeTagName()))
        return rewriter.notifyMatchFailure(out, "inside a saved-tensor hooks scope");

    Location loc = out.getLoc();
    if (mask && typeOf(mask).getDtype().isInteger(1))
      mask = LogicalNotOp::create(rewriter, loc, mask);
    auto attention = ScaledDotProductAttentionOp::create(
        rewriter, loc, q, k, v, mask, rewriter.getF64FloatAttr(0.0), rewriter.getBoolAttr(false),
        rewriter.getF64FloatAttr(scale), rewriter.getBoolAttr(false), UnitAttr());
    if (attention->getResult(0).getType() != out.getType())
      return rewriter.notifyMatchFailure(out, "attention's result type differs");
    rewriter.replaceOp(out, attention->getResult(0));
    return success();
  }
};

struct FuseAttentionPass : tgc::impl::FuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
