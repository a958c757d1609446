// If-conversion of tgc.cond: both branches inlined, their results selected with where.
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tgc {
#define GEN_PASS_DEF_IFCONVERTCONDPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

void ifConvert(CondOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<Value> arguments(op.getInputs());
  llvm::append_range(arguments, op.getSizes());
  SmallVector<Value> branchResults[2];
  for (unsigned index = 0; index < 2; ++index) {
    Block &block = op->getRegion(index).front();
    IRMapping mapping;
    mapping.map(block.getArguments(), arguments);
    for (Operation &inner : block.without_terminator())
      b.clone(inner, mapping);
    for (Value value : block.getTerminator()->getOperands())
      branchResults[index].push_back(mapping.lookupOrDefault(value));
  }
  // The predicate as a 0-d bool, so it broadcasts against results of any rank.
  Value pred = op.getPred();
  pred = ViewOp::create(b, loc, pred, ShapeAttr::get(ctx, {}));
  if (!llvm::cast<BaseTensorType>(pred.getType()).getDtype().isInteger(1))
    pred = NeOp::create(b, loc, pred,
                        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)).getResult());
  for (auto [result, onTrue, onFalse] :
       llvm::zip(op.getResults(), branchResults[0], branchResults[1]))
    result.replaceAllUsesWith(WhereOp::create(b, loc, pred, onTrue, onFalse).getResult());
  op.erase();
}

struct IfConvertCondPass : public tgc::impl::IfConvertCondPassBase<IfConvertCondPass> {
  void runOnOperation() override {
    SmallVector<CondOp> conds;
    getOperation().walk<WalkOrder::PostOrder>([&](CondOp op) { conds.push_back(op); });
    for (CondOp op : conds)
      ifConvert(op);
  }
};

} // namespace
