// tgc-separate-fills: one linalg.fill per destination, so bufferization copies no fill
// (docs/kernels.md).
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tgc {
#define GEN_PASS_DEF_SEPARATEFILLSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// Whether `use` makes its owner write into the value's buffer in place: a
/// destination-style op's init or an scf.for's initial iteration value.
bool isDestination(OpOperand &use) {
  Operation *owner = use.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(owner))
    return dps.isDpsInit(&use);
  if (auto loop = dyn_cast<scf::ForOp>(owner))
    return use.getOperandNumber() >= loop.getNumControlOperands();
  return false;
}

struct SeparateFillsPass : tgc::impl::SeparateFillsPassBase<SeparateFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> destinations;
      for (OpOperand &use : fill->getResult(0).getUses())
        if (isDestination(use))
          destinations.push_back(&use);
      if (destinations.size() < 2)
        continue;
      // The last use in the list is the first one made: it keeps the original.
      for (OpOperand *use : ArrayRef(destinations).drop_back()) {
        OpBuilder b(use->getOwner());
        Operation *empty = b.clone(*fill.getOutputs()[0].getDefiningOp());
        IRMapping mapping;
        mapping.map(fill.getOutputs()[0], empty->getResult(0));
        use->set(b.clone(*fill, mapping)->getResult(0));
      }
    }
  }
};

} // namespace
