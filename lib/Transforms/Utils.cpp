// Helpers shared by tgc's passes.
#include "tgc/Transforms/Passes.h"

using namespace mlir;

LogicalResult tgc::refreshResultTypes(Operation *op) {
  auto infer = llvm::dyn_cast<InferTypeOpInterface>(op);
  if (!infer)
    return op->emitOpError("does not infer its result types");
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  if (types.size() != op->getNumResults())
    return op->emitOpError("inferred ") << types.size() << " results, has "
                                        << op->getNumResults();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}
