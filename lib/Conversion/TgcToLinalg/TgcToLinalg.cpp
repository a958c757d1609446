// convert-tgc-to-linalg: the pass, its type conversion and the helpers every op
// family's patterns share.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tgc {
#define GEN_PASS_DEF_CONVERTTGCTOLINALGPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// LoweringContext
//===----------------------------------------------------------------------===//

RankedTensorType LoweringContext::convertTensorType(Type type) const {
  return llvm::dyn_cast_or_null<RankedTensorType>(converter.convertType(type));
}

FailureOr<Value> LoweringContext::materializeSize(ConversionPatternRewriter &rewriter,
                                                  Operation *op, AffineExpr size) const {
  Location loc = op->getLoc();
  if (std::optional<int64_t> c = getConstantSize(size))
    return arith::ConstantIndexOp::create(rewriter, loc, *c).getResult();
  auto func = op->getParentOfType<func::FuncOp>();
  auto it = func ? bindings.find(func) : bindings.end();
  if (it == bindings.end())
    return rewriter.notifyMatchFailure(op, "symbolic size outside a function");
  // Every symbol the expression uses, read from the argument that binds it.
  unsigned numSymbols = 0;
  size.walk([&](AffineExpr e) {
    if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
      numSymbols = std::max(numSymbols, s.getPosition() + 1);
  });
  SmallVector<Value> symbols(numSymbols);
  for (unsigned i = 0; i < numSymbols; ++i) {
    bool bound = i < it->second.size() && it->second[i].argIndex != ~0u;
    if (!bound) {
      // An unbacked symbol: the value of a tgc.bind_symbol's operand, read where the
      // size is needed (the bind comes before every use of the symbol).
      BindSymbolOp bind;
      func.walk([&](BindSymbolOp op) {
        if (op.getSymbol() == i)
          bind = op;
      });
      if (bind) {
        Value tensor = rewriter.getRemappedValue(bind.getValue());
        auto tensorType = tensor ? llvm::dyn_cast<RankedTensorType>(tensor.getType()) : nullptr;
        if (!tensorType)
          return rewriter.notifyMatchFailure(op, "bound symbol's tensor not converted yet");
        SmallVector<Value> zeros(tensorType.getRank(),
                                 arith::ConstantIndexOp::create(rewriter, loc, 0));
        Value element = tensor::ExtractOp::create(rewriter, loc, tensor, zeros);
        symbols[i] = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), element);
        continue;
      }
    }
    if (!bound) {
      // Unused symbols still need an operand; only used ones must be bound.
      bool used = false;
      size.walk([&](AffineExpr e) {
        if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e); s && s.getPosition() == i)
          used = true;
      });
      if (used) {
        op->emitError("size symbol s") << i << " is not a dimension of any function argument";
        return failure();
      }
      symbols[i] = arith::ConstantIndexOp::create(rewriter, loc, 0);
      continue;
    }
    SymbolBinding binding = it->second[i];
    Value arg = rewriter.getRemappedValue(func.getArgument(binding.argIndex));
    if (!arg || !llvm::isa<RankedTensorType>(arg.getType()))
      return rewriter.notifyMatchFailure(op, "argument not converted yet");
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&func.getBody().front());
    symbols[i] = tensor::DimOp::create(rewriter, loc, arg, binding.dim);
  }
  if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(size))
    return symbols[symbol.getPosition()];
  AffineMap map = AffineMap::get(0, numSymbols, size);
  return affine::AffineApplyOp::create(rewriter, loc, map, symbols).getResult();
}

FailureOr<SmallVector<Value>> LoweringContext::dynamicSizes(ConversionPatternRewriter &rewriter,
                                                            Operation *op,
                                                            BaseTensorType type) const {
  SmallVector<Value> sizes;
  for (AffineExpr size : type.getSizes()) {
    if (getConstantSize(size))
      continue;
    FailureOr<Value> v = materializeSize(rewriter, op, size);
    if (failed(v))
      return failure();
    sizes.push_back(*v);
  }
  return sizes;
}

FailureOr<SmallVector<OpFoldResult>>
LoweringContext::mixedSizes(ConversionPatternRewriter &rewriter, Operation *op,
                            BaseTensorType type) const {
  SmallVector<OpFoldResult> sizes;
  for (AffineExpr size : type.getSizes()) {
    if (std::optional<int64_t> c = getConstantSize(size)) {
      sizes.push_back(rewriter.getIndexAttr(*c));
      continue;
    }
    FailureOr<Value> v = materializeSize(rewriter, op, size);
    if (failed(v))
      return failure();
    sizes.push_back(*v);
  }
  return sizes;
}

FailureOr<Value> LoweringContext::emptyTensor(ConversionPatternRewriter &rewriter, Operation *op,
                                              BaseTensorType type) const {
  FailureOr<SmallVector<Value>> sizes = dynamicSizes(rewriter, op, type);
  if (failed(sizes))
    return failure();
  return tensor::EmptyOp::create(rewriter, op->getLoc(), convertTensorType(type), *sizes)
      .getResult();
}

FailureOr<Value> LoweringContext::filledTensor(ConversionPatternRewriter &rewriter, Operation *op,
                                               BaseTensorType type, Value value) const {
  FailureOr<Value> empty = emptyTensor(rewriter, op, type);
  if (failed(empty))
    return failure();
  return linalg::FillOp::create(rewriter, op->getLoc(), value, *empty).getResult(0);
}

FailureOr<Value> LoweringContext::zeroTensor(ConversionPatternRewriter &rewriter, Operation *op,
                                             BaseTensorType type) const {
  Type element = convertTensorType(type).getElementType();
  return filledTensor(rewriter, op, type, scalarConstant(rewriter, op->getLoc(), element, 0));
}

FailureOr<Value> LoweringContext::reshapeTo(ConversionPatternRewriter &rewriter, Operation *op,
                                            Value value, BaseTensorType type) const {
  RankedTensorType resultType = convertTensorType(type);
  if (value.getType() == resultType && resultType.hasStaticShape())
    return value;
  FailureOr<SmallVector<OpFoldResult>> sizes = mixedSizes(rewriter, op, type);
  if (failed(sizes))
    return failure();
  Location loc = op->getLoc();
  // A reshape that splits or merges adjacent dimensions of static sizes is an
  // expand_shape or collapse_shape: a view even of a strided buffer (a slice of a
  // fused QKV projection), where tensor.reshape bufferizes to a copy into contiguous
  // memory. (A collapse of dimensions that are not contiguous in memory still copies.)
  auto sourceType = cast<RankedTensorType>(value.getType());
  if (sourceType.hasStaticShape() && resultType.hasStaticShape() && sourceType.getRank() > 0 &&
      resultType.getRank() > 0 && sourceType.getRank() != resultType.getRank()) {
    if (std::optional<SmallVector<ReassociationIndices>> groups =
            getReassociationIndicesForReshape(sourceType, resultType)) {
      if (sourceType.getRank() < resultType.getRank())
        return tensor::ExpandShapeOp::create(rewriter, loc, resultType, value, *groups).getResult();
      return tensor::CollapseShapeOp::create(rewriter, loc, resultType, value, *groups).getResult();
    }
  }
  SmallVector<Value> sizeValues;
  for (OpFoldResult s : *sizes)
    sizeValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, s));
  auto shapeType = RankedTensorType::get({resultType.getRank()}, rewriter.getIndexType());
  Value shape = tensor::FromElementsOp::create(rewriter, loc, shapeType, sizeValues);
  return tensor::ReshapeOp::create(rewriter, loc, resultType, value, shape).getResult();
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

AffineMap tgc::broadcastMap(ArrayRef<AffineExpr> operandSizes, ArrayRef<AffineExpr> resultSizes,
                            MLIRContext *ctx) {
  int64_t rank = resultSizes.size(), lead = rank - operandSizes.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(operandSizes)) {
    AffineExpr resultSize = resultSizes[lead + i];
    bool broadcast = getConstantSize(size) == 1 && getConstantSize(resultSize) != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(lead + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

FailureOr<Value> tgc::broadcastTo(ConversionPatternRewriter &rewriter,
                                  const LoweringContext &lowering, Operation *op, Value input,
                                  BaseTensorType inputType, BaseTensorType resultType,
                                  Type elementType) {
  FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
  if (failed(init))
    return failure();
  Location loc = op->getLoc();
  auto initType = llvm::cast<RankedTensorType>(init->getType());
  if (elementType && elementType != initType.getElementType()) {
    init = tensor::EmptyOp::create(rewriter, loc, initType.getShape(), elementType,
                                   init->getDefiningOp<tensor::EmptyOp>().getDynamicSizes())
               .getResult();
  }
  Type outElement = llvm::cast<RankedTensorType>(init->getType()).getElementType();
  MLIRContext *ctx = rewriter.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps = {broadcastMap(inputType.getSizes(), resultType.getSizes(), ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, init->getType(), input, *init, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, castScalar(b, l, args[0], outElement));
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Windowed gathers
//===----------------------------------------------------------------------===//

Value tgc::windowGather(
    OpBuilder &b, Location loc, Value init, const Window &w, ArrayRef<int64_t> outputSizes,
    function_ref<Value(OpBuilder &, Location, const WindowPosition &)> contribution) {
  MLIRContext *ctx = b.getContext();
  Type element = llvm::cast<RankedTensorType>(init.getType()).getElementType();
  AffineExpr n, c, h, x, jh, jw;
  bindDims(ctx, n, c, h, x, jh, jw);
  // Per spatial dimension, what the reduction loop runs over. With a stride s > 1 and no
  // dilation, the windows that read position t = in + padding are those of the outputs
  // t / s - j for j < ceil(K / s), at kernel offset t - o * s: ceil(K / s) candidates
  // instead of K offsets of which all but about K / s miss the stride (a global average
  // pool's kernel is the whole image, read by one window). Otherwise the loop runs over
  // the kernel offsets k and keeps those with (t - k * dilation) a multiple of s.
  int64_t extent[2];
  bool byOutput[2];
  for (int i = 0; i < 2; ++i) {
    byOutput[i] = w.dilation[i] == 1 && w.stride[i] > 1;
    extent[i] = byOutput[i] ? llvm::divideCeil(w.kernel[i], w.stride[i]) : w.kernel[i];
  }
  // The window operand only gives the reduction loops their bounds.
  Value window = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{extent[0], extent[1]}, element);
  SmallVector<AffineMap> maps = {AffineMap::get(6, 0, {jh, jw}, ctx),
                                 AffineMap::get(6, 0, {n, c, h, x}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), window, init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto index = [&](unsigned d) { return linalg::IndexOp::create(nb, l, d).getResult(); };
        auto constant = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        WindowPosition pos;
        pos.n = index(0);
        pos.c = index(1);
        pos.h = index(2);
        pos.w = index(3);
        Value valid = arith::ConstantIntOp::create(nb, l, 1, 1);
        Value zero = constant(0);
        auto all = [&](Value cond) { valid = arith::AndIOp::create(nb, l, valid, cond); };
        auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
          return arith::CmpIOp::create(nb, l, predicate, lhs, rhs).getResult();
        };
        Value out[2], offset[2];
        for (int i = 0; i < 2; ++i) {
          Value in = i == 0 ? pos.h : pos.w, j = index(4 + i);
          Value t = arith::AddIOp::create(nb, l, in, constant(w.padding[i]));
          Value stride = constant(w.stride[i]);
          if (byOutput[i]) {
            // o = t / s - j (t >= 0), read at kernel offset k = t - o * s.
            Value o = arith::SubIOp::create(nb, l, arith::DivSIOp::create(nb, l, t, stride), j);
            Value k = arith::SubIOp::create(nb, l, t, arith::MulIOp::create(nb, l, o, stride));
            all(cmp(arith::CmpIPredicate::sge, o, zero));
            all(cmp(arith::CmpIPredicate::slt, k, constant(w.kernel[i])));
            out[i] = o;
            offset[i] = k;
          } else {
            // t - k * dilation must be a multiple of the stride, its quotient an output.
            Value o = arith::SubIOp::create(
                nb, l, t, arith::MulIOp::create(nb, l, j, constant(w.dilation[i])));
            all(cmp(arith::CmpIPredicate::sge, o, zero));
            if (w.stride[i] != 1) {
              Value rem = arith::RemSIOp::create(nb, l, o, stride);
              all(cmp(arith::CmpIPredicate::eq, rem, zero));
              o = arith::DivSIOp::create(nb, l, o, stride);
            }
            out[i] = o;
            offset[i] = j;
          }
          all(cmp(arith::CmpIPredicate::slt, out[i], constant(outputSizes[i])));
        }
        pos.valid = valid;
        auto orZero = [&](Value v) { return arith::SelectOp::create(nb, l, valid, v, zero); };
        pos.oh = orZero(out[0]);
        pos.ow = orZero(out[1]);
        pos.kh = byOutput[0] ? orZero(offset[0]) : offset[0];
        pos.kw = byOutput[1] ? orZero(offset[1]) : offset[1];
        Value value = contribution(nb, l, pos);
        value = arith::SelectOp::create(nb, l, valid, value, scalarConstant(nb, l, element, 0));
        linalg::YieldOp::create(nb, l, addScalars(nb, l, args[1], value));
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Element types of value tensors map to signless builtin types.
Type convertElementType(Type dtype) {
  if (auto i = llvm::dyn_cast<IntegerType>(dtype))
    return IntegerType::get(i.getContext(), i.getWidth());
  return dtype;
}

/// The first argument dimension that is exactly each symbol.
SmallVector<SymbolBinding> bindSymbols(func::FuncOp func, unsigned numSymbols) {
  SmallVector<SymbolBinding> bindings(numSymbols, SymbolBinding{~0u, 0});
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::dyn_cast<BaseTensorType>(arg.getType());
    if (!type)
      continue;
    for (auto [dim, size] : llvm::enumerate(type.getSizes())) {
      auto sym = llvm::dyn_cast<AffineSymbolExpr>(size);
      if (sym && sym.getPosition() < numSymbols && bindings[sym.getPosition()].argIndex == ~0u)
        bindings[sym.getPosition()] = {arg.getArgNumber(), static_cast<unsigned>(dim)};
    }
  }
  return bindings;
}

unsigned countSymbols(ModuleOp module) {
  unsigned count = getNumSymbols(module.getOperation());
  module.walk([&](Operation *op) {
    auto visit = [&](Type t) {
      if (auto tensor = llvm::dyn_cast<BaseTensorType>(t))
        for (AffineExpr size : tensor.getSizes())
          size.walk([&](AffineExpr e) {
            if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
              count = std::max(count, s.getPosition() + 1);
          });
    };
    for (Type t : op->getResultTypes())
      visit(t);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          visit(a.getType());
  });
  return count;
}

struct SymSizeLowering : TgcLoweringPattern<SymSizeOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(SymSizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t rank = llvm::cast<RankedTensorType>(adaptor.getSelf().getType()).getRank();
    std::optional<int64_t> dim = normalizeDim(op.getDim(), rank);
    if (!dim)
      return op.emitOpError("dimension out of range");
    Value size = tensor::DimOp::create(rewriter, op.getLoc(), adaptor.getSelf(), *dim);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getI64Type(), size);
    return success();
  }
};

/// item: the tensor's one element, widened to the Python number's type.
struct ItemLowering : TgcLoweringPattern<ItemOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ItemOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(adaptor.getSelf().getType());
    SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value element = tensor::ExtractOp::create(rewriter, loc, adaptor.getSelf(), zeros);
    Type target = op.getType(), source = element.getType();
    if (source == target)
      rewriter.replaceOp(op, element);
    else if (llvm::isa<FloatType>(source))
      rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, target, element);
    else if (source.isInteger(1) ||
             llvm::cast<BaseTensorType>(op.getSelf().getType()).getDtype().isUnsignedInteger())
      rewriter.replaceOpWithNewOp<arith::ExtUIOp>(op, target, element);
    else
      rewriter.replaceOpWithNewOp<arith::ExtSIOp>(op, target, element);
    return success();
  }
};

/// The bound symbol's value is its tensor's one element.
struct BindSymbolLowering : TgcLoweringPattern<BindSymbolOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(BindSymbolOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::dyn_cast<RankedTensorType>(adaptor.getValue().getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "operand not converted yet");
    SmallVector<Value> zeros(type.getRank(),
                             arith::ConstantIndexOp::create(rewriter, op.getLoc(), 0));
    Value element = tensor::ExtractOp::create(rewriter, op.getLoc(), adaptor.getValue(), zeros);
    if (element.getType() != rewriter.getI64Type())
      element = arith::ExtSIOp::create(rewriter, op.getLoc(), rewriter.getI64Type(), element);
    rewriter.replaceOp(op, element);
    return success();
  }
};

/// A side-effect-free op all of whose results have no elements computes nothing: each
/// result is a `tensor.empty`. This spares every lowering its zero-size corner (slices
/// at offset 0 of a size-0 dimension, which tensor.extract_slice rejects, and the like).
struct EmptyResultLowering : ConversionPattern {
  EmptyResultLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/10, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>,
                                ConversionPatternRewriter &rewriter) const override {
    if (!llvm::isa<TgcDialect>(op->getDialect()) || op->getNumResults() == 0 ||
        op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return failure();
    SmallVector<Value> empties;
    for (Type type : op->getResultTypes()) {
      auto ranked = llvm::dyn_cast_or_null<RankedTensorType>(getTypeConverter()->convertType(type));
      if (!ranked || !llvm::is_contained(ranked.getShape(), 0) || !ranked.hasStaticShape())
        return failure();
      empties.push_back(tensor::EmptyOp::create(rewriter, op->getLoc(), ranked.getShape(),
                                                ranked.getElementType()));
    }
    rewriter.replaceOp(op, empties);
    return success();
  }
};

struct ConvertTgcToLinalgPass
    : public tgc::impl::ConvertTgcToLinalgPassBase<ConvertTgcToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Saved-tensor hooks still here have no backward to apply to (an inference build,
    // or no value was saved): they and the templates only they use go.
    eraseSavedTensorsHooks(module, [](SavedTensorsHooksOp) { return true; });
    TypeConverter converter;
    converter.addConversion([](Type t) { return t; });
    converter.addConversion([](ValueTensorType t) -> Type {
      return RankedTensorType::get(llvm::cast<BaseTensorType>(t).getStaticSizes(),
                                   convertElementType(t.getDtype()));
    });
    auto materialize = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs).getResult(0);
    };
    converter.addSourceMaterialization(materialize);
    converter.addTargetMaterialization(materialize);

    SymbolBindings bindings;
    unsigned numSymbols = countSymbols(module);
    for (auto func : module.getOps<func::FuncOp>())
      bindings[func] = bindSymbols(func, numSymbols);
    LoweringContext lowering(converter, bindings);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                           math::MathDialect, affine::AffineDialect,
                           bufferization::BufferizationDialect, scf::SCFDialect>();
    target.addIllegalDialect<TgcDialect>();
    target.addLegalOp<GlobalOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) && converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    patterns.add<SymSizeLowering, BindSymbolLowering, ItemLowering>(lowering, ctx);
    patterns.add<EmptyResultLowering>(converter, ctx);
    populateElementwisePatterns(lowering, patterns);
    populateLinearAlgebraPatterns(lowering, patterns);
    populateAttentionPatterns(lowering, patterns);
    populateReductionPatterns(lowering, patterns);
    populateViewPatterns(lowering, patterns);
    populatePoolingPatterns(lowering, patterns);
    populateCreationPatterns(lowering, patterns);
    populateLossPatterns(lowering, patterns);
    populateIndexingPatterns(lowering, patterns);
    populateRandomPatterns(lowering, patterns);
    populateControlFlowPatterns(lowering, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
