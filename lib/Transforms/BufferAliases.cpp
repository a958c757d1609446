// The uses of a bufferized temporary through its views (BufferAliases.h).
#include "BufferAliases.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

bool tgc::visitAliasUsers(Value buffer, function_ref<void(Operation *)> visit) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<mlir::OpTrait::IsTerminator>() || isa<memref::DeallocOp>(user))
        return false;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      bool aliases = llvm::any_of(user->getResultTypes(),
                                  [](Type t) { return isa<BaseMemRefType, TensorType>(t); });
      if (view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
      } else if (aliases) {
        return false;
      }
      visit(user);
    }
  }
  return true;
}
