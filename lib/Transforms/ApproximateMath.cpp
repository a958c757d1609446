// tgc-approximate-math: f32 transcendental functions as inline polynomial arithmetic
// instead of libm calls, so that the loops holding them vectorize.
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tgc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// The functions whose upstream approximations hold PyTorch's fp32 tolerance over their
/// whole domain (test/e2e/Inputs/ops/math.mlir checks each against PyTorch from
/// denormals to overflow): within a few ulp, except that exp flushes results below
/// FLT_MIN (x < -87.3) to zero where libm returns denormals. Not approximated: log,
/// log1p and log2 (their approximations clamp denormal inputs to FLT_MIN: log(1e-40)
/// would be -87.3, not -92.1), expm1 (built on log), sin and cos (their range reduction
/// loses accuracy for large arguments).
bool approximated(StringRef name) {
  name.consume_front("math.");
  return llvm::is_contained({"exp", "tanh", "erf"}, name);
}

struct ApproximateMathPass : tgc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
