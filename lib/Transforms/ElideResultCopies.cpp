// tgc-elide-result-copies: temporaries that end copied into a result's out-parameter
// are computed there instead (docs/kernels.md, Temporaries).
//
// One-shot bufferization computes a result into its out-parameter only where the value
// is built in place of it; a kernel call's output becomes a temporary (`memref.alloc`)
// that the entry copies into the out-parameter at the end. For large results (a weight
// gradient, a saved activation) that copy is a second pass over the result's memory.
#include "BufferAliases.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tgc {
#define GEN_PASS_DEF_ELIDERESULTCOPIESPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Whether `copy` is the last use, in `body`, of `alloc` and of every view of it (each
/// other user is, or is nested in, an op of `body` before the copy), and no alias
/// outlives those users (visitAliasUsers).
bool isLastUse(memref::AllocOp alloc, memref::CopyOp copy, Block &body) {
  bool before = true;
  bool contained = visitAliasUsers(alloc.getResult(), [&](Operation *user) {
    if (user == copy)
      return;
    Operation *top = body.findAncestorOpInBlock(*user);
    before &= top && top->isBeforeInBlock(copy);
  });
  return contained && before;
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
