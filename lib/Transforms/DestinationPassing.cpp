// Destination-passing entry points: tensor results become memref out-arguments.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tgc {
#define GEN_PASS_DEF_DESTINATIONPASSINGPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

LogicalResult convertFunction(func::FuncOp func) {
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
  SmallVector<Type> argTypes(func.getArgumentTypes());
  SmallVector<DictionaryAttr> argAttrs;
  func.getAllArgAttrs(argAttrs);
  if (argAttrs.empty())
    argAttrs.assign(argTypes.size(), DictionaryAttr::get(func.getContext()));
  // The caller's tensors are read-only: one-shot bufferization copies before writing
  // into one (an scf.for carrying a scatter or index_put from an input, say), where it
  // would otherwise update the argument's buffer in place.
  for (auto [i, type] : llvm::enumerate(argTypes))
    if (llvm::isa<TensorType>(type))
      argAttrs[i] = DictionaryAttr::get(
          func.getContext(), llvm::to_vector(llvm::concat<const NamedAttribute>(
                                 argAttrs[i].getValue(),
                                 ArrayRef<NamedAttribute>{NamedAttribute(
                                     StringAttr::get(func.getContext(), "bufferization.writable"),
                                     BoolAttr::get(func.getContext(), false))})));
  OpBuilder b(ret);
  Block &entry = func.getBody().front();
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!tensor)
      return func.emitError("destination passing: result #") << i << " is not a ranked tensor";
    auto memref = MemRefType::get(tensor.getShape(), tensor.getElementType());
    BlockArgument out = entry.addArgument(memref, value.getLoc());
    argTypes.push_back(memref);
    DictionaryAttr attrs = func.getResultAttrDict(i);
    argAttrs.push_back(attrs ? attrs : DictionaryAttr::get(func.getContext()));
    auto store = bufferization::MaterializeInDestinationOp::create(b, ret.getLoc(), value, out);
    store.setRestrict(true);
    store.setWritable(true);
  }
  func::ReturnOp::create(b, ret.getLoc());
  ret.erase();
  func.setFunctionType(FunctionType::get(func.getContext(), argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  return success();
}

struct DestinationPassingPass
    : public tgc::impl::DestinationPassingPassBase<DestinationPassingPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // Kernels (tgc-form-kernels) return tensors tied to their output arguments, which
      // one-shot bufferization resolves at the call; only entries get out-arguments.
      if (func.isExternal() || func.getNumResults() == 0 || func->hasAttr(attr::kKernel))
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("destination passing: functions with control flow are not supported");
        return signalPassFailure();
      }
      if (failed(convertFunction(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
