// tgc-finalize-entries: the entries of a bufferized model made ready for translation to
// LLVM IR, named as `tgc.abi` says and with a C interface (docs/abi.md).
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tgc {
#define GEN_PASS_DEF_FINALIZEENTRIESPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

/// Strips entry `role`'s attributes, renames it `<name>_<role>` unless `name` is empty,
/// and gives it a C interface; returns its new name.
static FailureOr<StringAttr> finalizeEntry(ModuleOp module, DictionaryAttr entries, StringRef role,
                                           StringRef name) {
  auto symbol = entries.getAs<StringAttr>(role);
  if (!symbol)
    return module.emitError() << "tgc.abi names no " << role << " entry";
  auto func = module.lookupSymbol<func::FuncOp>(symbol);
  if (!func)
    return module.emitError() << "tgc.abi names the " << role << " entry @" << symbol.getValue()
                              << ", which the module does not define";
  func.removeArgAttrsAttr();
  func.removeResAttrsAttr();
  if (!name.empty())
    func.setSymName((name + "_" + role).str());
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(func.getContext()));
  return func.getSymNameAttr();
}

namespace {
struct FinalizeEntriesPass : public tgc::impl::FinalizeEntriesPassBase<FinalizeEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto abiAttr = module->getAttrOfType<DictionaryAttr>(abi::kAbi);
    auto entries = abiAttr ? abiAttr.getAs<DictionaryAttr>(abi::kEntriesKey) : DictionaryAttr();
    auto name = abiAttr ? abiAttr.getAs<StringAttr>(abi::kNameKey) : StringAttr();
    if (!entries || !name) {
      module.emitError("tgc-finalize-entries needs the tgc.abi attribute that "
                       "tgc-prepare-entries records");
      return signalPassFailure();
    }
    // The initial values of state are in tgc.abi.
    for (auto global : llvm::make_early_inc_range(module.getOps<GlobalOp>()))
      global.erase();
    Builder b(module.getContext());
    SmallVector<NamedAttribute> renamed;
    for (StringRef role : {abi::kForwardKey, abi::kBackwardKey}) {
      if (!entries.get(role))
        continue;
      FailureOr<StringAttr> symbol = finalizeEntry(module, entries, role, name.getValue());
      if (failed(symbol))
        return signalPassFailure();
      renamed.push_back(b.getNamedAttr(role, *symbol));
    }
    NamedAttrList updated(abiAttr);
    updated.set(abi::kEntriesKey, b.getDictionaryAttr(renamed));
    module->setAttr(abi::kAbi, updated.getDictionary(module.getContext()));
    // Kernels stay functions of their own in model.so, local to it: LLVM optimizes and
    // generates code for each one alone instead of one function holding every loop.
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(attr::kKernel))
        continue;
      func->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(func.getContext(), LLVM::Linkage::Internal));
      func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    }
  }
};
} // namespace
