// Object emission: translation to LLVM IR, the model interface, optimization and
// in-process code generation for the host CPU or the one `--cpu` names.
#include "ObjectEmission.h"
#include "ModelInterface.h"
#include "tgc/Target/Artifact.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>

using namespace mlir;
using namespace tgc;

/// The target machine for `target`. Called from the code generation threads: the
/// native target is registered once, before any of them reads it.
static std::unique_ptr<llvm::TargetMachine> targetMachine(const CpuTarget &target,
                                                          std::string &error) {
  static const bool registered = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser(); // the `.incbin` of outlineConstantData
    return true;
  }();
  (void)registered;
  llvm::Triple triple(target.triple);
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(llvmTarget->createTargetMachine(
      triple, target.cpu, target.features, llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

FailureOr<CpuTarget> tgc::resolveCpuTarget(StringRef cpu, Location loc) {
  CpuTarget target;
  target.triple = llvm::sys::getDefaultTargetTriple();
  if (cpu.empty() || cpu == "native") {
    // The machine that compiles: its CPU and every feature it has or lacks.
    target.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
    target.features = features.getString();
  } else {
    target.cpu = cpu.str();
  }
  std::string error;
  std::unique_ptr<llvm::TargetMachine> generic = targetMachine({target.triple, "", "", {}}, error);
  if (!generic)
    return emitError(loc) << "no target for " << target.triple << ": " << error;
  if (!generic->getMCSubtargetInfo()->isCPUStringValid(target.cpu))
    return emitError(loc) << "unknown CPU '" << cpu << "' for " << target.triple
                          << " (try native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or a "
                             "CPU name such as skylake-avx512)";
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return emitError(loc) << "no target for " << target.triple << ": " << error;
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  for (const llvm::SubtargetFeatureKV &feature : sti->getAllProcessorFeatures())
    if (sti->getFeatureBits().test(feature.Value))
      target.enabledFeatures.push_back(feature.Key);
  return target;
}

FailureOr<unsigned> tgc::cpuVectorBits(StringRef cpu, Location loc) {
  FailureOr<CpuTarget> target = resolveCpuTarget(cpu, loc);
  if (failed(target))
    return failure();
  auto has = [&](StringRef feature) {
    return llvm::is_contained(target->enabledFeatures, feature);
  };
  if (has("avx512f"))
    return 512u;
  if (has("avx") || has("lasx"))
    return 256u;
  return 128u;
}

/// LLVM's IR optimization level, chosen by measurement: kernels are simple loop nests
/// that O2 already vectorizes. O3 took the LLVM part of densenet121's training compile
/// from 21 s to 33 s and ran no faster (4-layer GPT inference 31.4 vs 30.3 ms,
/// mobilenet_v2 10.6 vs 11.0 ms, 2 threads; within the noise).
static constexpr unsigned kLLVMOptLevel = 2;

/// Optimizes `m` at kLLVMOptLevel for `tm` and writes its object to `path`; an error message, or
/// the empty string.
static std::string optimizeAndEmit(llvm::Module &m, llvm::TargetMachine &tm, StringRef path) {
  if (llvm::Error err = makeOptimizingTransformer(kLLVMOptLevel, 0, &tm)(&m))
    return "LLVM optimization failed: " + llvm::toString(std::move(err));
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + path.str() + ": " + ec.message();
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out.os(), nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  pm.run(m);
  out.keep();
  return "";
}

/// How many parts a model's LLVM module is split into, each optimized and compiled on a
/// thread of its own. Fixed, not the machine's core count, so that the same input gives
/// the same objects everywhere; a model with fewer functions has fewer parts.
static constexpr unsigned kCodeGenParts = 8;

/// Splits `m` into parts (kernels and entries are separate functions, so LLVM's
/// per-function work divides well), each as bitcode for a context of its own. Splitting
/// makes the local symbols that parts share hidden globals, so they are first prefixed
/// with the model's name: the graphs of a program are models of one library.
static std::vector<llvm::SmallString<0>> splitModule(llvm::Module &m, StringRef modelName) {
  for (llvm::GlobalValue &value : m.global_values())
    if (value.hasLocalLinkage() && value.hasName())
      value.setName(modelName + "." + value.getName());
  unsigned functions = 0;
  for (llvm::Function &f : m)
    functions += !f.isDeclaration();
  std::vector<llvm::SmallString<0>> parts;
  llvm::SplitModule(m, std::clamp(functions, 1u, kCodeGenParts),
                    [&](std::unique_ptr<llvm::Module> part) {
                      llvm::raw_svector_ostream os(parts.emplace_back());
                      llvm::WriteBitcodeToFile(*part, os);
                    });
  return parts;
}

/// Optimizes and compiles bitcode `part` in a fresh context; an error message or "".
static std::string compilePart(StringRef part, StringRef path, const CpuTarget &target) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> m =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(part, path), context);
  if (!m)
    return "reading a split part back: " + llvm::toString(m.takeError());
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return "no target for " + target.triple + ": " + error;
  return optimizeAndEmit(**m, *tm, path);
}

/// Constant data this large and more (weights) is not compiled from LLVM IR: instruction
/// selection emits an array element by element, and splitting copies it through bitcode.
static constexpr uint64_t kOutlinedDataBytes = 4 << 10;

/// Whether `text` can stand in double quotes in assembly as it is.
static bool isPlainAsmString(StringRef text) {
  return llvm::all_of(text, [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

/// Moves the initializers of the large constant arrays of `m` into the file `blobPath`
/// and makes the globals hidden declarations; returns assembly that defines them as
/// `.incbin`s of that file (empty when there is nothing to move), or an error message
/// in `error`. Assembling it copies the bytes as they are, which costs next to nothing.
static std::string outlineConstantData(llvm::Module &m, StringRef modelName, StringRef blobPath,
                                       std::string &error) {
  if (!isPlainAsmString(blobPath))
    return "";
  std::string blob, assembly;
  llvm::raw_string_ostream as(assembly);
  for (llvm::GlobalVariable &global : m.globals()) {
    auto *data = llvm::dyn_cast_if_present<llvm::ConstantDataSequential>(
        global.hasInitializer() ? global.getInitializer() : nullptr);
    if (!global.isConstant() || !data || data->getRawDataValues().size() < kOutlinedDataBytes)
      continue;
    if (global.hasLocalLinkage())
      global.setName(modelName + "." + global.getName());
    if (!isPlainAsmString(global.getName()))
      continue;
    StringRef bytes = data->getRawDataValues();
    uint64_t align = std::max<uint64_t>(global.getAlign().valueOrOne().value(), 64);
    blob.resize(llvm::alignTo(blob.size(), align));
    uint64_t offset = blob.size();
    blob.append(bytes);
    std::string name = ("\"" + global.getName() + "\"").str();
    as << ".p2align " << llvm::Log2_64(align) << "\n"
       << ".globl " << name << "\n.hidden " << name << "\n.type " << name << ",@object\n"
       << ".size " << name << ", " << bytes.size() << "\n"
       << name << ":\n.incbin \"" << blobPath << "\", " << offset << ", " << bytes.size() << "\n";
    global.setInitializer(nullptr);
    global.setLinkage(llvm::GlobalValue::ExternalLinkage);
    global.setVisibility(llvm::GlobalValue::HiddenVisibility);
    global.setAlignment(llvm::Align(align));
  }
  if (assembly.empty())
    return "";
  std::error_code ec;
  llvm::raw_fd_ostream out(blobPath, ec);
  if (!ec)
    out << blob;
  if (ec || out.has_error()) {
    error = "cannot write " + blobPath.str() + ": " + ec.message();
    return "";
  }
  return ".section .tgc.data,\"a\",@progbits\n" + assembly;
}

/// Assembles `assembly` (outlineConstantData's) into the object `path`; an error
/// message or "".
static std::string emitDataObject(StringRef assembly, StringRef path, const CpuTarget &target) {
  llvm::LLVMContext context;
  llvm::Module m("tgc_data", context);
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return "no target for " + target.triple + ": " + error;
  m.setDataLayout(tm->createDataLayout());
  m.setTargetTriple(tm->getTargetTriple());
  m.setModuleInlineAsm(assembly);
  return optimizeAndEmit(m, *tm, path);
}

FailureOr<std::vector<std::string>> tgc::emitModelObjects(ModuleOp module, const ModelAbi &model,
                                                          StringRef objectStem,
                                                          const CpuTarget &target,
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
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return emitError(loc) << "no target for " << target.triple << ": " << error;
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  if (failed(addModelInterface(*llvmModule, model, target.enabledFeatures, loc)))
    return failure();
  translating.stop();

  // The entries (every external function; kernels and their tasks are internal) are
  // glue: descriptor bookkeeping, allocations and kernel calls, in one basic block of up
  // to ~10^5 instructions for a large model. Optimizing them gains nothing and their
  // instruction selection and scheduling cost more than all kernels together, so they
  // are compiled as at -O0 (optnone: no IR passes, FastISel).
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration() && !f.hasLocalLinkage()) {
      f.addFnAttr(llvm::Attribute::NoInline);
      f.addFnAttr(llvm::Attribute::OptimizeNone);
    }
  // The weights: one object assembled from a file of their bytes.
  TimingScope outlining = parent.nest("constant data");
  std::string blobPath = (objectStem + ".data").str();
  std::string assembly = outlineConstantData(*llvmModule, model.signature.name, blobPath, error);
  if (!error.empty())
    return emitError(loc) << error;
  outlining.stop();

  TimingScope splitting = parent.nest("LLVM module split");
  std::vector<llvm::SmallString<0>> parts = splitModule(*llvmModule, model.signature.name);
  llvmModule.reset();
  splitting.stop();

  TimingScope compiling = parent.nest("LLVM optimization and code generation");
  size_t count = parts.size() + (assembly.empty() ? 0 : 1);
  std::vector<std::string> objects(count), errors(count);
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(count));
    for (size_t i = 0; i < parts.size(); ++i) {
      objects[i] = (objectStem + "." + Twine(i) + ".o").str();
      pool.async([&, i] { errors[i] = compilePart(parts[i], objects[i], target); });
    }
    if (!assembly.empty()) {
      objects.back() = (objectStem + ".data.o").str();
      pool.async([&] { errors.back() = emitDataObject(assembly, objects.back(), target); });
    }
    pool.wait();
  }
  if (!assembly.empty())
    llvm::sys::fs::remove(blobPath);
  for (const std::string &message : errors)
    if (!message.empty())
      return emitError(loc) << message;
  return objects;
}
