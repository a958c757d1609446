// tgc-inline-autograd-functions: each tgc.autograd_function becomes its forward
// template's body, and the templates go away (docs/training.md).
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace tgc {
#define GEN_PASS_DEF_INLINEAUTOGRADFUNCTIONSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// How deeply Function forwards may apply other Functions.
constexpr unsigned kMaxNesting = 64;

struct InlineAutogradFunctionsPass
    : public tgc::impl::InlineAutogradFunctionsPassBase<InlineAutogradFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> templates;
    // A forward template may apply a Function itself: its op is copied into the caller
    // by the instantiation, so repeat until none is left (a template that applies
    // itself would never end: nesting is bounded).
    for (unsigned round = 0;; ++round) {
      SmallVector<AutogradFunctionOp> ops;
      module.walk([&](AutogradFunctionOp op) { ops.push_back(op); });
      if (ops.empty())
        break;
      if (round == kMaxNesting) {
        ops.front().emitOpError("autograd functions nest deeper than ") << kMaxNesting;
        return signalPassFailure();
      }
      for (AutogradFunctionOp op : ops)
        if (failed(inlineOne(op, templates)))
          return signalPassFailure();
    }
    // Templates nothing refers to any more, until none is left (one template may be the
    // only user of another).
    bool erased = true;
    while (erased) {
      erased = false;
      for (func::FuncOp &fn : templates)
        if (fn && fn.isPrivate() && SymbolTable::symbolKnownUseEmpty(fn, module)) {
          fn.erase();
          fn = nullptr;
          erased = true;
        }
    }
  }

  /// Replaces `op` by `@forward_fn`'s body; records its templates in `templates`.
  LogicalResult inlineOne(AutogradFunctionOp op, SmallVectorImpl<func::FuncOp> &templates) {
    for (FlatSymbolRefAttr name : {op.getForwardFnAttr(), op.getBackwardFnAttr()}) {
      auto fn =
          name ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name) : func::FuncOp();
      if (fn && !llvm::is_contained(templates, fn))
        templates.push_back(fn);
    }
    auto forward = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, op.getForwardFnAttr());
    if (!forward)
      return op.emitOpError("forward ") << op.getForwardFnAttr() << " is not a function";
    OpBuilder b(op);
    FailureOr<SmallVector<Value>> results =
        instantiateFunction(b, op.getLoc(), forward, op.getInputs());
    if (failed(results))
      return failure();
    if (results->size() != op.getNumResults())
      return op.emitOpError("forward ") << op.getForwardFnAttr() << " returns " << results->size()
                                        << " values for " << op.getNumResults() << " results";
    op.replaceAllUsesWith(*results);
    op.erase();
    return success();
  }
};

} // namespace
