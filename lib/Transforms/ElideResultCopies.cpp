// tgc-elide-result-copies: temporaries that end copied into a result's out-parameter
// are computed there instead (docs/kernels.md, Temporaries).
//
// One-shot bufferization computes a result into its out-parameter only where the value
// is built in place of it; a kernel call's output becomes a temporary (`memref.alloc`)
// that the entry copies into the out-parameter at the end. For large results (a weight
// gradient, a saved activation) that copy is a second pass over the result's memory.
#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/Attributes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace tgc {
#define GEN_PASS_DEF_ELIDERESULTCOPIESPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Whether `copy` is the last use, in `body`, of `alloc` and of every view of it: each
/// other user is (or is nested in) an op of `body` before the copy.
bool isLastUse(memref::AllocOp alloc, memref::CopyOp copy, Block &body) {
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == copy)
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(copy))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == value)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

/// Elides the copies of `func` that qualify; returns how many.
unsigned elideCopies(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<memref::CopyOp> copies;
  for (auto copy : body.getOps<memref::CopyOp>())
    copies.push_back(copy);
  unsigned elided = 0;
  for (memref::CopyOp copy : copies) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!out || out.getOwner() != &body || !out.hasOneUse() || !alloc ||
        alloc->getBlock() != &body || alloc.getType() != out.getType() ||
        !isLastUse(alloc, copy, body))
      continue;
    copy.erase();
    alloc.getResult().replaceAllUsesWith(out);
    alloc.erase();
    ++elided;
  }
  return elided;
}

struct ElideResultCopiesPass : public tgc::impl::ElideResultCopiesPassBase<ElideResultCopiesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // Kernels write into their callers' buffers: their arguments may alias.
      if (func.isExternal() || func->hasAttr(attr::kKernel) || !func.getBody().hasOneBlock())
        continue;
      elideCopies(func);
    }
  }
};

} // namespace
