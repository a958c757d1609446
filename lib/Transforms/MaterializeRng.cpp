// tgc-materialize-rng: random ops draw from the instance's RNG state, a buffer the
// function takes and advances.
#include "DecomposeUtils.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace tgc {
#define GEN_PASS_DEF_MATERIALIZERNGPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The name of the RNG state: the argument's `tgc.name` and its global's symbol.
constexpr llvm::StringLiteral kRngState = "tgc.rng_state";

/// A dropout that draws random numbers (training mode and 0 < p), a bernoulli, or a
/// factory of random numbers (rand, randn, randperm).
bool isRandom(Operation *op) {
  if (llvm::isa<BernoulliOp, RandOp, RandpermOp>(op))
    return true;
  if (auto dropout = llvm::dyn_cast<DropoutOp>(op))
    return dropout.getTrain() && !dropout.getP().isZero();
  if (auto dropout = llvm::dyn_cast<NativeDropoutOp>(op))
    return dropout.getTrain().value_or(true) && !dropout.getP().isZero();
  return false;
}

/// The number of elements of `x` as an i64 scalar (symbolic sizes read with sym_size).
Value numElements(OpBuilder &b, Location loc, Value x) {
  int64_t rank = llvm::cast<BaseTensorType>(x.getType()).getRank();
  return decompose::countElements(b, loc, x, decompose::trailingDims(0, rank));
}

/// The state's global (i64[2] = [seed 0, offset 0]), created once per module.
void declareStateGlobal(ModuleOp module, Type stateType) {
  if (module.lookupSymbol(kRngState))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto tensorType = RankedTensorType::get({2}, b.getI64Type());
  GlobalOp::create(b, module.getLoc(), b.getStringAttr(kRngState), b.getStringAttr("buffer"),
                   TypeAttr::get(stateType),
                   DenseElementsAttr::get(tensorType, ArrayRef<int64_t>{0, 0}));
}

/// Where the state argument goes: after the model's state, before the user inputs.
unsigned stateArgumentIndex(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto kind = func.getArgAttrOfType<StringAttr>(i, attr::kKind);
    if (!kind || kind.getValue() == "user_input")
      return i;
  }
  return func.getNumArguments();
}

/// input * mask * 1/(1-p), with mask = rand_bernoulli(state, offset) {p = 1 - p};
/// returns (output, mask).
std::pair<Value, Value> buildDropout(OpBuilder &b, Location loc, Value input, double p, Value state,
                                     Value offset) {
  auto type = llvm::cast<BaseTensorType>(input.getType());
  ShapeAttr size = ShapeAttr::get(b.getContext(), type.getSizes());
  Value mask = RandBernoulliOp::create(b, loc, state, offset, size, b.getF64FloatAttr(1 - p));
  Value kept = MulOp::create(b, loc, input, mask);
  // p = 1 drops everything; its scale would be infinite.
  double scale = p < 1 ? 1 / (1 - p) : 0;
  Value scaled =
      MulOp::create(b, loc, kept, arith::ConstantOp::create(b, loc, b.getF64FloatAttr(scale)));
  return {scaled, mask};
}

struct MaterializeRngPass : public tgc::impl::MaterializeRngPassBase<MaterializeRngPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(materialize(module, func)))
        return signalPassFailure();
  }

  /// Attention with dropout (training): the explicit softmax(scores) with a dropout of
  /// the probabilities, times the values, so that the dropout draws from the state like
  /// any other. (Its scores are [batch..., L, S]: not the fused kernels.)
  LogicalResult expandAttentionDropout(func::FuncOp func) {
    SmallVector<ScaledDotProductAttentionOp> attentions;
    func.walk([&](ScaledDotProductAttentionOp op) {
      if (!op.getDropoutP().isZero())
        attentions.push_back(op);
    });
    for (ScaledDotProductAttentionOp op : attentions) {
      if (op.getWithLogsumexp())
        return op.emitOpError("with dropout and the log-sum-exp is not supported");
      OpBuilder b(op);
      Value scores = op.buildScores(b);
      if (!scores)
        return op.emitOpError("with dropout needs a static embedding size (or a scale) and no "
                              "grouped-query attention");
      int64_t rank = llvm::cast<BaseTensorType>(scores.getType()).getRank();
      Value probs = SoftmaxOp::create(b, op.getLoc(), scores, rank - 1, TypeAttr(), false);
      probs = DropoutOp::create(b, op.getLoc(), probs, op.getDropoutPAttr(), b.getBoolAttr(true));
      Value out = MatmulOp::create(b, op.getLoc(), probs, op.getValue());
      op->replaceAllUsesWith(ValueRange{out});
      op.erase();
    }
    return success();
  }

  LogicalResult materialize(ModuleOp module, func::FuncOp func) {
    if (failed(expandAttentionDropout(func)))
      return failure();
    SmallVector<Operation *> randomOps;
    func.walk([&](Operation *op) {
      if (isRandom(op))
        randomOps.push_back(op);
    });
    if (randomOps.empty())
      return success();
    for (Operation *op : randomOps)
      if (op->getParentOp() != func || !func.getBody().hasOneBlock() ||
          (op->getNumOperands() && llvm::isa<RefTensorType>(op->getOperand(0).getType())))
        return op->emitOpError("needs the RNG state, which tgc-materialize-rng adds to "
                               "value-level functions of one block only");
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    auto stateType = ValueTensorType::get({getAffineConstantExpr(2, ctx)}, b.getI64Type());
    declareStateGlobal(module, stateType);
    unsigned index = stateArgumentIndex(func);
    NamedAttrList argAttrs;
    argAttrs.set(attr::kKind, b.getStringAttr("buffer"));
    argAttrs.set(attr::kName, b.getStringAttr(kRngState));
    argAttrs.set(attr::kGlobal, FlatSymbolRefAttr::get(ctx, kRngState));
    if (failed(func.insertArgument(index, stateType, argAttrs.getDictionary(ctx), func.getLoc())))
      return failure();
    Value state = func.getArgument(index);

    // Each random op draws its elements from [offset, offset + numel); the next starts
    // where it ended.
    b.setInsertionPointToStart(&func.getBody().front());
    Value offset = arith::ConstantOp::create(b, func.getLoc(), b.getI64IntegerAttr(0));
    for (Operation *op : randomOps) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto rand = llvm::dyn_cast<RandOp>(op)) {
        Type dtype = llvm::cast<BaseTensorType>(rand.getType()).getDtype();
        Value drawn = RandDrawOp::create(b, loc, state, offset, rand.getSizeAttr(),
                                         TypeAttr::get(dtype), rand.getNormal());
        offset = arith::AddIOp::create(b, loc, offset, numElements(b, loc, drawn));
        op->replaceAllUsesWith(ValueRange{drawn});
        op->erase();
        continue;
      }
      if (auto randperm = llvm::dyn_cast<RandpermOp>(op)) {
        // The positions of n random keys in ascending order (a stable sort, so that
        // equal keys still give a permutation).
        Value keys =
            RandDrawOp::create(b, loc, state, offset,
                               ShapeAttr::get(ctx, {getAffineConstantExpr(randperm.getN(), ctx)}),
                               TypeAttr::get(b.getF64Type()), false);
        offset = arith::AddIOp::create(b, loc, offset, numElements(b, loc, keys));
        auto sort = SortOp::create(b, loc, keys, 0, false, b.getBoolAttr(true));
        Type dtype = llvm::cast<BaseTensorType>(randperm.getType()).getDtype();
        Value perm = sort.getIndices();
        if (llvm::cast<BaseTensorType>(perm.getType()).getDtype() != dtype)
          perm = ToDTypeOp::create(b, loc, perm, TypeAttr::get(dtype));
        op->replaceAllUsesWith(ValueRange{perm});
        op->erase();
        continue;
      }
      Value input = op->getOperand(0);
      if (auto bernoulli = llvm::dyn_cast<BernoulliOp>(op)) {
        auto type = llvm::cast<BaseTensorType>(input.getType());
        ShapeAttr size = ShapeAttr::get(ctx, type.getSizes());
        Value mask = RandBernoulliOp::create(b, loc, state, offset, size, bernoulli.getPAttr());
        Value drawn = ToDTypeOp::create(b, loc, mask, TypeAttr::get(type.getDtype()));
        offset = arith::AddIOp::create(b, loc, offset, numElements(b, loc, input));
        op->replaceAllUsesWith(ValueRange{drawn});
        op->erase();
        continue;
      }
      double p = llvm::isa<DropoutOp>(op)
                     ? llvm::cast<DropoutOp>(op).getP().convertToDouble()
                     : llvm::cast<NativeDropoutOp>(op).getP().convertToDouble();
      auto [output, mask] = buildDropout(b, loc, input, p, state, offset);
      offset = arith::AddIOp::create(b, loc, offset, numElements(b, loc, input));
      if (llvm::isa<DropoutOp>(op))
        op->replaceAllUsesWith(ValueRange{output});
      else
        op->replaceAllUsesWith(ValueRange{output, mask});
      op->erase();
    }

    // The new state: [seed, offset + drawn].
    auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
    b.setInsertionPoint(ret);
    Location loc = ret.getLoc();
    auto unit =
        DenseElementsAttr::get(RankedTensorType::get({2}, b.getI64Type()), ArrayRef<int64_t>{0, 1});
    Value advance = MulOp::create(b, loc, ConstantOp::create(b, loc, unit), offset);
    Value newState = AddOp::create(b, loc, state, advance, Attribute());
    ret.getOperandsMutable().append(newState);
    NamedAttrList resultAttrs;
    resultAttrs.set(attr::kKind, b.getStringAttr("buffer_mutation"));
    resultAttrs.set(attr::kTarget, b.getStringAttr(kRngState));
    return func.insertResult(func.getNumResults(), newState.getType(),
                             resultAttrs.getDictionary(ctx));
  }
};

} // namespace
