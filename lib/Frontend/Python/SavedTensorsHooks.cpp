// Saved-tensor hooks in captured programs: `torch.autograd.graph.saved_tensors_hooks` as
// a context manager (and the hooks active at capture), traced into scoped
// `tgc.saved_tensors_hooks` ops over the ops created inside the scope.
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// The context manager's class, as the trace names it.
static constexpr llvm::StringLiteral kHooksClass = "torch.autograd.graph.saved_tensors_hooks";

void Interpreter::enterSavedTensorsHooks(Var pack, Var unpack, Location loc) {
  Block *block = builder.getInsertionBlock();
  savedHooksScopes.push_back({nextSavedHooksScope++, std::move(pack), std::move(unpack), block,
                              block->empty() ? nullptr : &block->back()});
}

/// `type` as a value tensor that does not require grad: what a pack hook receives.
static Type savedTensorType(BaseTensorType type) {
  TensorMeta meta = type.getMeta();
  meta.requiresGrad = false;
  return BaseTensorType::get(type.getContext(), /*isRef=*/false, meta);
}

LogicalResult Interpreter::exitSavedTensorsHooks(Location loc) {
  if (savedHooksScopes.empty())
    return error(loc) << kHooksClass << ".__exit__ without __enter__";
  SavedHooksScope scope = savedHooksScopes.back();
  savedHooksScopes.pop_back();
  if (builder.getInsertionBlock() != scope.block)
    return error(loc) << kHooksClass << " left in another function than it was entered in";
  StringRef tagName = SavedTensorsHooksOp::getScopeTagName();
  IntegerAttr tag = builder.getI64IntegerAttr(scope.id);
  // The scope's ops (not those of scopes inside it), and one tensor type per floating
  // dtype they use: the types the hooks are traced for.
  SmallVector<BaseTensorType> types;
  auto noteType = [&](Type type) {
    auto tensor = llvm::dyn_cast<BaseTensorType>(type);
    if (!tensor || !llvm::isa<FloatType>(tensor.getDtype()))
      return;
    if (llvm::none_of(types,
                      [&](BaseTensorType seen) { return seen.getDtype() == tensor.getDtype(); }))
      types.push_back(tensor);
  };
  Block::iterator begin = scope.last ? std::next(scope.last->getIterator()) : scope.block->begin();
  for (Operation &op : llvm::make_range(begin, scope.block->end())) {
    if (op.hasAttr(tagName))
      continue;
    op.setAttr(tagName, tag);
    for (Type type : op.getOperandTypes())
      noteType(type);
    for (Type type : op.getResultTypes())
      noteType(type);
  }
  for (BaseTensorType type : types)
    if (failed(
            traceSavedTensorsHooks(scope.id, scope.pack, scope.unpack, savedTensorType(type), loc)))
      return failure();
  return success();
}

LogicalResult Interpreter::traceSavedTensorsHooks(int64_t id, Var pack, Var unpack, Type type,
                                                  Location loc) {
  size_t effects = sideEffects.size();
  FailureOr<func::FuncOp> packFn = traceTemplate(pack, "saved_pack", type, loc);
  if (failed(packFn))
    return failure();
  if (packFn->getNumResults() != 1)
    return error(loc) << "a saved-tensor pack hook must return one tensor (tgc saves tensors)";
  FailureOr<func::FuncOp> unpackFn =
      traceTemplate(unpack, "saved_unpack", packFn->getResultTypes(), loc);
  if (failed(unpackFn))
    return failure();
  auto saved = llvm::cast<BaseTensorType>(type);
  auto restored = unpackFn->getNumResults() == 1
                      ? llvm::dyn_cast<BaseTensorType>(unpackFn->getResultTypes()[0])
                      : BaseTensorType();
  if (!restored || restored.getSizes() != saved.getSizes() ||
      restored.getDtype() != saved.getDtype())
    return error(loc) << "a saved-tensor unpack hook must give back a tensor of the packed "
                         "tensor's sizes and dtype ("
                      << type << ")";
  // PyTorch runs pack once per tensor an op saves (and unpack once per use in backward);
  // tgc decides what is saved after capture, so no count of calls could be replayed.
  if (sideEffects.size() != effects)
    return error(loc) << "saved-tensor hooks with Python side effects are not supported: "
                         "PyTorch runs pack once per tensor saved for backward, and tgc "
                         "chooses what is saved when it compiles, so the effects cannot be "
                         "replayed";
  auto enclosing = llvm::cast<func::FuncOp>(builder.getInsertionBlock()->getParentOp());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(enclosing);
  SavedTensorsHooksOp::create(builder, loc, packFn->getSymName(), unpackFn->getSymName(),
                              /*activations_only=*/false, builder.getI64IntegerAttr(id));
  return success();
}

//===----------------------------------------------------------------------===//
// Registration: the context manager and its methods
//===----------------------------------------------------------------------===//

/// `saved_tensors_hooks(pack_hook, unpack_hook)`: a manager object holding the hooks.
static CallResult makeManager(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  Var pack = args.size() > 0 ? args[0] : Var();
  Var unpack = args.size() > 1 ? args[1] : Var();
  for (auto &[keyword, value] : call.arguments.keywords) {
    Var &slot = keyword == "pack_hook" ? pack : unpack;
    if ((keyword != "pack_hook" && keyword != "unpack_hook") || slot)
      return call.error() << kHooksClass << "() got an unexpected keyword argument '" << keyword
                          << "'";
    slot = value;
  }
  if (args.size() > 2 || !pack || !unpack)
    return call.error() << kHooksClass << "(pack_hook, unpack_hook) takes two hooks";
  HeapObject manager;
  manager.kind = H::Instance;
  manager.classObject = makeExternal(kHooksClass);
  manager.setAttribute("pack_hook", pack);
  manager.setAttribute("unpack_hook", unpack);
  return makeObject(in.newObject(std::move(manager)));
}

/// The manager a method is called on, or the error a call of anything else is.
static FailureOr<const HeapObject *> managerOf(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << "graph break: calling " << call.name << " is not supported";
  return &in.getHeap().get(call.args[0]->object);
}

static CallResult enterScope(Interpreter &in, ExternalCall &call) {
  FailureOr<const HeapObject *> self = managerOf(in, call);
  if (failed(self))
    return failure();
  Var pack = (*self)->getAttribute("pack_hook"), unpack = (*self)->getAttribute("unpack_hook");
  if (!pack || !unpack)
    return call.error() << kHooksClass << " has no pack_hook/unpack_hook";
  in.enterSavedTensorsHooks(pack, unpack, call.loc);
  return makeNone();
}

static CallResult exitScope(Interpreter &in, ExternalCall &call) {
  if (failed(managerOf(in, call)) || failed(in.exitSavedTensorsHooks(call.loc)))
    return failure();
  return makeNone();
}

void tgc::py::registerSavedTensorsHooks(CallRegistry &registry) {
  registry.add(kHooksClass, makeManager);
  registry.add((kHooksClass + ".__enter__").str(), enterScope);
  registry.add((kHooksClass + ".__exit__").str(), exitScope);
}
