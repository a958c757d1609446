// tgc-generate-gemms: contractions as generated loops in kernels (dot products, or the
// reduction outside the output's row), for code that gives the same bits on every host.
#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/Attributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace tgc {
#define GEN_PASS_DEF_GENERATEGEMMSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// Whether `op`'s last loop is its only reduction and the loop before it indexes the
/// output's innermost dimension: a product this pass rewrites.
bool hasInnerReductionOverRow(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned n = iterators.size();
  if (n < 2 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      iterators[n - 1] != utils::IteratorType::reduction ||
      iterators[n - 2] != utils::IteratorType::parallel)
    return false;
  AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return output.getNumResults() > 0 &&
         output.getResults().back() == getAffineDimExpr(n - 2, op.getContext());
}

/// Whether the reduction (the last loop) indexes the innermost dimension of every input.
bool reducesAlongEveryInnermostDim(linalg::GenericOp op) {
  AffineExpr reduction = getAffineDimExpr(op.getNumLoops() - 1, op.getContext());
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    return map.getNumResults() > 0 && map.getResults().back() == reduction;
  });
}

/// Moves `op` (on buffers) into a new private kernel function `name` of `module` that
/// takes its operands, and calls it there: kernels are what code generation optimizes
/// and vectorizes (entries are glue, compiled unoptimized).
void outlineAsKernel(RewriterBase &rewriter, ModuleOp module, Operation *op, StringRef name) {
  SmallVector<Value> operands(op->getOperands());
  Location loc = op->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(module.getBody());
  auto kernel = func::FuncOp::create(rewriter, loc, name,
                                     rewriter.getFunctionType(ValueRange(operands).getTypes(), {}));
  kernel.setPrivate();
  kernel->setAttr(tgc::attr::kKernel, rewriter.getUnitAttr());
  Block *body = kernel.addEntryBlock();
  rewriter.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(operands, body->getArguments());
  rewriter.clone(*op, mapping);
  func::ReturnOp::create(rewriter, loc);
  rewriter.setInsertionPoint(op);
  func::CallOp::create(rewriter, loc, kernel, operands);
  rewriter.eraseOp(op);
}

struct GenerateGemmsPass : tgc::impl::GenerateGemmsPassBase<GenerateGemmsPass> {
  /// The contractions to rewrite: on buffers, their one reduction innermost, over an
  /// output row.
  SmallVector<linalg::LinalgOp> contractions() {
    SmallVector<linalg::LinalgOp> found;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && linalg::isaContractionOpInterface(op) &&
          hasInnerReductionOverRow(op))
        found.push_back(op);
    });
    return found;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // Each contraction of an entry into a kernel of its own.
    SymbolTable symbols(module);
    unsigned counter = 0;
    for (linalg::LinalgOp op : contractions()) {
      auto parent = op->getParentOfType<func::FuncOp>();
      if (parent->hasAttr(tgc::attr::kKernel))
        continue;
      std::string name;
      do
        name = (parent.getSymName() + "_gemm" + Twine(counter++)).str();
      while (symbols.lookup(name));
      outlineAsKernel(rewriter, module, op, name);
    }
    for (linalg::LinalgOp op : contractions()) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic = isa<linalg::GenericOp>(op)
                                                 ? cast<linalg::GenericOp>(op.getOperation())
                                                 : linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic))
        return signalPassFailure();
      // Operands that are contiguous along the reduction (A[i, k] @ B[j, k], nn.Linear's
      // product) make dot products, which tgc-lower-reductions turns into vector code;
      // otherwise the reduction moves outside the output row.
      if (reducesAlongEveryInnermostDim(*generic))
        continue;
      unsigned n = generic->getNumLoops();
      SmallVector<unsigned> swapped = llvm::to_vector(llvm::seq<unsigned>(0, n));
      std::swap(swapped[n - 2], swapped[n - 1]);
      if (failed(linalg::interchangeGenericOp(rewriter, *generic, swapped)))
        return signalPassFailure();
    }
  }
};

} // namespace
