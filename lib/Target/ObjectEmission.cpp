// Object emission: translation to LLVM IR, the model interface, optimization and
// in-process code generation for the host CPU.
#include "ObjectEmission.h"
#include "ModelInterface.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace tgc;

/// The host target, so generated loops use the vector units of the machine that
/// compiles (same machine and options give the same bytes).
static std::unique_ptr<llvm::TargetMachine> hostTargetMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::SubtargetFeatures features;
  for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature, enabled);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

static LogicalResult emitObject(llvm::Module &m, llvm::TargetMachine &tm, StringRef path,
                                Location loc) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out.os(), nullptr, llvm::CodeGenFileType::ObjectFile))
    return emitError(loc) << "the target cannot emit object files";
  pm.run(m);
  out.keep();
  return success();
}

LogicalResult tgc::emitModelObject(ModuleOp module, const ModelAbi &model, StringRef objectPath,
                                   TimingScope *timing) {
  Location loc = module.getLoc();
  TimingScope none;
  TimingScope &parent = timing ? *timing : none;
  TimingScope translating = parent.nest("translate to LLVM IR");
  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, model.signature.name);
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = hostTargetMachine(error);
  if (!tm)
    return emitError(loc) << "no target for this host: " << error;
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  if (failed(addModelInterface(*llvmModule, model, loc)))
    return failure();
  translating.stop();
  {
    TimingScope optimizing = parent.nest("LLVM optimization (O3)");
    if (llvm::Error err = makeOptimizingTransformer(3, 0, tm.get())(llvmModule.get()))
      return emitError(loc) << "LLVM optimization failed: " << llvm::toString(std::move(err));
  }
  TimingScope generating = parent.nest("LLVM code generation");
  return emitObject(*llvmModule, *tm, objectPath, loc);
}
