// torch.cond's placeholder regions made into an isolated tgc.cond (CondRegions.h).
#include "CondRegions.h"

#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

Operation *tgc::frontend::findOutsideWrite(Region &region) {
  Operation *found = nullptr;
  region.walk([&](InPlaceOpInterface op) {
    for (unsigned index : op.getMutatedOperandIndices()) {
      Value value = op->getOperand(index);
      while (region.isAncestor(value.getParentRegion())) {
        Value source = aliasedSource(value, /*throughViews=*/true);
        if (!source)
          break;
        value = source;
      }
      if (!region.isAncestor(value.getParentRegion())) {
        found = op;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return found;
}

/// The symbol a `tgc.sym_size` reads when its dimension is exactly one symbol, or the
/// one a `tgc.bind_symbol` binds.
static std::optional<unsigned> plainSymbolOf(Value value) {
  if (auto bind = value.getDefiningOp<BindSymbolOp>())
    return bind.getSymbol();
  auto size = value.getDefiningOp<SymSizeOp>();
  if (!size)
    return std::nullopt;
  auto type = llvm::cast<BaseTensorType>(size.getSelf().getType());
  std::optional<int64_t> dim = normalizeDim(size.getDim(), type.getRank());
  if (!dim)
    return std::nullopt;
  if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(type.getSizes()[*dim]))
    return symbol.getPosition();
  return std::nullopt;
}

std::optional<Type> tgc::frontend::condResultType(BaseTensorType a, BaseTensorType b) {
  if (a.getSizes() != b.getSizes() || a.getDtype() != b.getDtype())
    return std::nullopt;
  TensorMeta meta = a.getMeta();
  meta.strides = TensorMeta::contiguousStrides(meta.sizes, a.getContext());
  meta.storageOffset = AffineExpr();
  meta.requiresGrad = a.getMeta().requiresGrad || b.getMeta().requiresGrad;
  return BaseTensorType::get(a.getContext(), /*isRef=*/true, meta);
}

FailureOr<CondOp>
tgc::frontend::liftCond(OpBuilder &builder, CondOp holder, TypeRange resultTypes, Location loc,
                        llvm::function_ref<FailureOr<Value>(AffineExpr)> materialize) {
  llvm::SetVector<Value> free;
  getUsedValuesDefinedAbove(holder->getRegions(), free);
  // Constants (Python numbers) are copied into the branches rather than lifted.
  for (Region &region : holder->getRegions()) {
    Block &block = region.front();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&block);
    for (Value value : free) {
      Operation *def = value.getDefiningOp();
      if (def && def->getNumOperands() == 0 && def->hasTrait<mlir::OpTrait::ConstantLike>())
        replaceAllUsesInRegionWith(value, builder.clone(*def)->getResult(0), region);
    }
  }
  free.remove_if([](Value value) {
    Operation *def = value.getDefiningOp();
    return def && def->getNumOperands() == 0 && def->hasTrait<mlir::OpTrait::ConstantLike>();
  });
  SmallVector<Value> inputs;
  SmallVector<unsigned> symbols;
  llvm::DenseMap<unsigned, Value> symbolValue;
  SmallVector<std::pair<Value, unsigned>> freeSizes;
  for (Value value : free) {
    if (std::optional<unsigned> symbol = plainSymbolOf(value)) {
      freeSizes.push_back({value, *symbol});
      symbolValue.try_emplace(*symbol, value);
      if (!llvm::is_contained(symbols, *symbol))
        symbols.push_back(*symbol);
      continue;
    }
    inputs.push_back(value);
    collectSymbols(value.getType(), symbols);
  }
  for (Region &region : holder->getRegions())
    region.walk([&](Operation *op) {
      if (op->getParentOfType<CondOp>() != holder)
        return;
      for (Type type : op->getResultTypes())
        collectSymbols(type, symbols);
    });
  for (Type type : resultTypes)
    collectSymbols(type, symbols);
  llvm::sort(symbols);
  SmallVector<Value> sizes;
  for (unsigned symbol : symbols) {
    Value value = symbolValue.lookup(symbol);
    if (!value) {
      FailureOr<Value> materialized =
          materialize(getAffineSymbolExpr(symbol, builder.getContext()));
      if (failed(materialized))
        return failure();
      value = *materialized;
    }
    sizes.push_back(value);
  }

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(holder);
  SmallVector<int64_t> symbolList(symbols.begin(), symbols.end());
  auto cond = CondOp::create(builder, loc, resultTypes, holder.getPred(), inputs, sizes,
                             builder.getDenseI64ArrayAttr(symbolList));
  for (unsigned index = 0; index < 2; ++index) {
    Region *region = &cond->getRegion(index);
    region->takeBody(holder->getRegion(index));
    Block &block = region->front();
    for (Value input : inputs)
      replaceAllUsesInRegionWith(input, block.addArgument(input.getType(), loc), *region);
    SmallVector<Value> symbolArgs;
    for (size_t i = 0; i < symbols.size(); ++i)
      symbolArgs.push_back(block.addArgument(builder.getI64Type(), loc));
    for (auto [value, symbol] : freeSizes)
      replaceAllUsesInRegionWith(value, symbolArgs[llvm::find(symbols, symbol) - symbols.begin()],
                                 *region);
  }
  holder.erase();
  return cond;
}
