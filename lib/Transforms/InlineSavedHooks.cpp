// tgc-inline-saved-hooks: saved-tensor pack/unpack hooks instantiated at the ends of the
// partitioned @forward and @backward, so the saved bytes are the packed ones.
#include "JointGraph.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace tgc {
#define GEN_PASS_DEF_INLINESAVEDHOOKSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The storage dtype of `--pack-saved=<name>`.
Type packedDtype(MLIRContext *ctx, StringRef name) {
  if (name == "bf16")
    return BFloat16Type::get(ctx);
  if (name == "fp8")
    return Float8E4M3FNType::get(ctx);
  return nullptr;
}

/// `x -> to_dtype(x, to)` over `from` tensors, as a template function named `name`.
func::FuncOp buildCastHook(OpBuilder &b, Location loc, StringRef name, Type from, Type to) {
  MLIRContext *ctx = b.getContext();
  TensorMeta meta;
  meta.sizes = {getAffineConstantExpr(1, ctx)};
  meta.dtype = from;
  Type argType = BaseTensorType::get(ctx, /*isRef=*/false, meta);
  meta.dtype = to;
  Type resultType = BaseTensorType::get(ctx, /*isRef=*/false, meta);
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({argType}, {resultType}));
  fn.setPrivate();
  OpBuilder body = OpBuilder::atBlockBegin(fn.addEntryBlock());
  Value cast = ToDTypeOp::create(body, loc, fn.getArgument(0), TypeAttr::get(to));
  func::ReturnOp::create(body, loc, cast);
  return fn;
}

struct InlineSavedHooksPass : public tgc::impl::InlineSavedHooksPassBase<InlineSavedHooksPass> {
  using InlineSavedHooksPassBase::InlineSavedHooksPassBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  /// The hooks to apply: the module's `tgc.saved_tensors_hooks`, or the built-in
  /// casting pair of `pack-dtype`. Null when there are none.
  FailureOr<SavedTensorsHooksOp> findHooks(ModuleOp module) {
    // Scoped hooks are tgc-autodiff's: they apply to what ops of their scope save.
    for (SavedTensorsHooksOp scoped : module.getOps<SavedTensorsHooksOp>())
      if (scoped.getScope())
        return scoped.emitOpError("applies to the ops of scope ")
               << *scoped.getScope() << ", which tgc-autodiff applies (run it first)";
    auto all = llvm::to_vector(module.getOps<SavedTensorsHooksOp>());
    if (all.size() > 1)
      return all[1].emitOpError("only one saved-tensor hook pair per module is supported");
    if (packDtype.empty())
      return all.empty() ? SavedTensorsHooksOp() : all.front();
    Location loc = module.getLoc();
    if (!all.empty())
      return all.front().emitOpError("conflicts with --pack-saved=") << packDtype;
    Type storage = packedDtype(module.getContext(), packDtype);
    if (!storage)
      return emitError(loc) << "unknown --pack-saved dtype '" << packDtype
                            << "': expected bf16 or fp8";
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type f32 = Float32Type::get(module.getContext());
    func::FuncOp pack = buildCastHook(b, loc, "tgc.pack_" + packDtype, f32, storage);
    func::FuncOp unpack = buildCastHook(b, loc, "tgc.unpack_" + packDtype, storage, f32);
    return SavedTensorsHooksOp::create(b, loc, pack.getSymName(), unpack.getSymName(),
                                       /*activations_only=*/true, /*scope=*/IntegerAttr());
  }

  LogicalResult run() {
    ModuleOp module = getOperation();
    FailureOr<SavedTensorsHooksOp> found = findHooks(module);
    if (failed(found))
      return failure();
    SavedTensorsHooksOp hooks = *found;
    if (!hooks)
      return success();
    auto pack = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(hooks, hooks.getPackAttr());
    auto unpack = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(hooks, hooks.getUnpackAttr());
    if (!pack || !unpack || pack.getNumArguments() != 1 || unpack.getNumArguments() != 1)
      return hooks.emitOpError("pack and unpack must be functions of one tensor");
    auto packInput = llvm::dyn_cast<BaseTensorType>(pack.getArgumentTypes()[0]);
    if (!packInput)
      return hooks.emitOpError("pack must take a tensor");
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    auto backward = module.lookupSymbol<func::FuncOp>("backward");
    if (!forward || !backward)
      return hooks.emitOpError("needs the partitioned @forward and @backward (run after "
                               "tgc-partition)");

    auto ret = llvm::cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    SmallVector<unsigned> savedResults, savedArgs;
    for (unsigned i = 0; i < forward.getNumResults(); ++i)
      if (joint::getResultKind(forward, i) == joint::kSaved)
        savedResults.push_back(i);
    for (unsigned i = 0; i < backward.getNumArguments(); ++i)
      if (joint::getArgKind(backward, i) == joint::kSaved)
        savedArgs.push_back(i);
    if (savedResults.size() != savedArgs.size())
      return backward.emitOpError("takes ")
             << savedArgs.size() << " saved values, @forward saves " << savedResults.size();

    OpBuilder forwardBuilder(ret);
    OpBuilder backwardBuilder = OpBuilder::atBlockBegin(&backward.getBody().front());
    for (auto [resultIndex, argIndex] : llvm::zip(savedResults, savedArgs)) {
      Value saved = ret.getOperand(resultIndex);
      auto savedType = llvm::dyn_cast<BaseTensorType>(saved.getType());
      if (!savedType || savedType.getDtype() != packInput.getDtype())
        continue;
      if (hooks.getActivationsOnly() && llvm::isa<BlockArgument>(saved))
        continue;
      Location loc = saved.getLoc();
      FailureOr<SmallVector<Value>> packed =
          instantiateFunction(forwardBuilder, loc, pack, {saved});
      if (failed(packed))
        return failure();
      if (packed->size() != 1 || !llvm::isa<BaseTensorType>(packed->front().getType()))
        return pack.emitOpError("must return one tensor");
      ret.setOperand(resultIndex, packed->front());

      BlockArgument arg = backward.getArgument(argIndex);
      SmallVector<OpOperand *> uses =
          llvm::map_to_vector(arg.getUses(), [](OpOperand &u) { return &u; });
      arg.setType(packed->front().getType());
      FailureOr<SmallVector<Value>> unpacked =
          instantiateFunction(backwardBuilder, loc, unpack, {arg});
      if (failed(unpacked))
        return failure();
      auto restored = unpacked->size() == 1
                          ? llvm::dyn_cast<BaseTensorType>(unpacked->front().getType())
                          : BaseTensorType();
      if (!restored || restored.getSizes() != savedType.getSizes() ||
          restored.getDtype() != savedType.getDtype())
        return unpack.emitOpError("must give back a tensor of the saved value's sizes and "
                                  "dtype (")
               << savedType << ")";
      for (OpOperand *use : uses)
        use->set(unpacked->front());
    }
    forward.setFunctionType(
        FunctionType::get(module.getContext(), forward.getArgumentTypes(), ret.getOperandTypes()));
    backward.setFunctionType(FunctionType::get(module.getContext(),
                                               backward.getBody().front().getArgumentTypes(),
                                               backward.getResultTypes()));
    updateSavedBytes(module, forward);

    hooks.erase();
    for (func::FuncOp fn : {pack, unpack})
      if (fn.isPrivate() && SymbolTable::symbolKnownUseEmpty(fn, module))
        fn.erase();
    return success();
  }

  /// `tgc.saved_bytes` counts what is now saved (parameters and constants saved as they
  /// are stay references and cost nothing, as in tgc-partition).
  void updateSavedBytes(ModuleOp module, func::FuncOp forward) {
    if (!module->hasAttr(attr::kSavedBytes))
      return;
    auto ret = llvm::cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    int64_t bytes = 0;
    for (unsigned i = 0; i < forward.getNumResults(); ++i) {
      if (joint::getResultKind(forward, i) != joint::kSaved)
        continue;
      if (auto arg = llvm::dyn_cast<BlockArgument>(ret.getOperand(i))) {
        StringRef kind = joint::getArgKind(forward, arg.getArgNumber());
        if (kind == joint::kParameter || kind == joint::kConstant)
          continue;
      }
      bytes += joint::getTypicalByteSize(llvm::cast<BaseTensorType>(forward.getResultTypes()[i]),
                                         module);
    }
    module->setAttr(attr::kSavedBytes,
                    IntegerAttr::get(IntegerType::get(module.getContext(), 64), bytes));
  }
};

} // namespace
