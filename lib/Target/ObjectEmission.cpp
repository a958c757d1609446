// Object emission: translation to LLVM IR, the model interface, optimization and
// in-process code generation for the host CPU or the one `--cpu` names.
#include "ObjectEmission.h"
#include "ModelInterface.h"
#include "tgc/Target/Artifact.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCSectionELF.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;
using namespace tgc;

/// The target machine for `target`. Called from the code generation threads: the
/// native target is registered once, before any of them reads it.
static std::unique_ptr<llvm::TargetMachine> targetMachine(const CpuTarget &target,
                                                          std::string &error) {
  static const bool registered = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
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

/// Optimizes `m` at kLLVMOptLevel for `tm` and writes its object to `os`; an error
/// message, or the empty string.
static std::string optimizeAndEmit(llvm::Module &m, llvm::TargetMachine &tm,
                                   llvm::raw_pwrite_stream &os) {
  if (llvm::Error err = makeOptimizingTransformer(kLLVMOptLevel, 0, &tm)(&m))
    return "LLVM optimization failed: " + llvm::toString(std::move(err));
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  pm.run(m);
  return "";
}

/// Opens the object file `path`, removed again on a crash or unless kept: `error` says why
/// it could not be opened. Called on the thread that asks for the objects, never on the code
/// generation threads: the first file LLVM is to remove on a signal installs its signal
/// handlers, and with them an alternate signal stack (from malloc) for the installing
/// thread; ASan unmaps a pool thread's alternate stack as its own when the thread ends,
/// which fails on that one and ends the process.
static std::unique_ptr<llvm::ToolOutputFile> openObject(StringRef path, std::string &error) {
  std::error_code ec;
  auto out = std::make_unique<llvm::ToolOutputFile>(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return nullptr;
  }
  return out;
}

/// Closes the object file `out` at `path`, and keeps it when its writer's error message
/// `written` is empty and the file closes without one; the first error message, or "".
static std::string closeObject(llvm::ToolOutputFile &out, StringRef path, std::string written) {
  out.os().close();
  if (std::error_code ec = out.os().error()) {
    out.os().clear_error();
    if (written.empty())
      written = "cannot write " + path.str() + ": " + ec.message();
  }
  if (written.empty())
    out.keep();
  return written;
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

/// Optimizes and compiles bitcode `part` (named `name`) in a fresh context to `os`; an error
/// message or "".
static std::string compilePart(StringRef part, StringRef name, const CpuTarget &target,
                               llvm::raw_pwrite_stream &os) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> m =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(part, name), context);
  if (!m)
    return "reading a split part back: " + llvm::toString(m.takeError());
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return "no target for " + target.triple + ": " + error;
  return optimizeAndEmit(**m, *tm, os);
}

/// Moves the initializers of the large constant arrays of `m` to `outlined` and makes
/// the globals hidden declarations. The bytes stay in `m`'s context, which owns its
/// constants until it is destroyed.
static void outlineConstantData(llvm::Module &m, StringRef modelName,
                                std::vector<OutlinedData> &outlined) {
  for (llvm::GlobalVariable &global : m.globals()) {
    auto *data = llvm::dyn_cast_if_present<llvm::ConstantDataSequential>(
        global.hasInitializer() ? global.getInitializer() : nullptr);
    // A global with a section of its own (a CUDA model's fatbin, in `.nv_fatbin` where
    // CUDA's tools find it) stays in it.
    if (!global.isConstant() || !data || data->getRawDataValues().size() < kOutlinedDataBytes ||
        global.hasSection())
      continue;
    if (global.hasLocalLinkage())
      global.setName(modelName + "." + global.getName());
    uint64_t align = std::max<uint64_t>(global.getAlign().valueOrOne().value(), 64);
    outlined.push_back({global.getName().str(), data->getRawDataValues(), align});
    global.setInitializer(nullptr);
    global.setLinkage(llvm::GlobalValue::ExternalLinkage);
    global.setVisibility(llvm::GlobalValue::HiddenVisibility);
    global.setAlignment(llvm::Align(align));
  }
}

ObjectFile::~ObjectFile() {
  if (memoryFd_ >= 0)
    ::close(memoryFd_);
}

/// A memory file for an object, named by its /proc path (valid for other processes of
/// this user, the linker among them, while this process keeps it open); a file object
/// at `fallback` where the system has no memory files.
static ObjectFile scratchObject(StringRef fallback, bool inMemory) {
#ifdef __linux__
  if (inMemory) {
    int fd = ::memfd_create("tgc-data.o", MFD_CLOEXEC);
    if (fd >= 0)
      return ObjectFile("/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd), fd);
  }
#endif
  return ObjectFile(fallback.str());
}

/// Writes the object that defines `outlined` to `os`: global objects (hidden unless
/// exported) in `section`, streamed to the object writer through MC as they are (no LLVM
/// IR, no assembly text, no file of their own); an error message or "".
static std::string emitDataObject(ArrayRef<OutlinedData> outlined, llvm::raw_pwrite_stream &os,
                                  const CpuTarget &target, StringRef section = ".tgc.data") {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, error);
  if (!tm)
    return "no target for " + target.triple + ": " + error;
  const llvm::Target &llvmTarget = tm->getTarget();
  const llvm::MCSubtargetInfo &sti = *tm->getMCSubtargetInfo();
  const llvm::MCRegisterInfo &mri = *tm->getMCRegisterInfo();
  const llvm::MCTargetOptions &mcOptions = tm->Options.MCOptions;
  llvm::MCContext context(tm->getTargetTriple(), tm->getMCAsmInfo(), &mri, &sti, nullptr,
                          &mcOptions);
  std::unique_ptr<llvm::MCObjectFileInfo> fileInfo(
      llvmTarget.createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(fileInfo.get());
  std::unique_ptr<llvm::MCAsmBackend> backend(llvmTarget.createMCAsmBackend(sti, mri, mcOptions));
  std::unique_ptr<llvm::MCCodeEmitter> emitter(
      llvmTarget.createMCCodeEmitter(*tm->getMCInstrInfo(), context));
  if (!backend || !emitter)
    return "the target cannot emit object files";
  std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(os);
  std::unique_ptr<llvm::MCStreamer> streamer(
      llvmTarget.createMCObjectStreamer(tm->getTargetTriple(), context, std::move(backend),
                                        std::move(writer), std::move(emitter), sti));
  streamer->initSections(/*NoExecStack=*/true, sti);
  streamer->switchSection(
      context.getELFSection(section, llvm::ELF::SHT_PROGBITS, llvm::ELF::SHF_ALLOC));
  for (const OutlinedData &data : outlined) {
    llvm::MCSymbol *symbol = context.getOrCreateSymbol(data.name);
    streamer->emitValueToAlignment(llvm::Align(data.align));
    streamer->emitSymbolAttribute(symbol, llvm::MCSA_Global);
    if (!data.exported)
      streamer->emitSymbolAttribute(symbol, llvm::MCSA_Hidden);
    streamer->emitSymbolAttribute(symbol, llvm::MCSA_ELF_TypeObject);
    streamer->emitELFSize(symbol, llvm::MCConstantExpr::create(data.bytes.size(), context));
    streamer->emitLabel(symbol);
    streamer->emitBytes(data.bytes);
  }
  streamer->finish();
  return "";
}

FailureOr<ObjectFile> tgc::emitJsonHashObject(StringRef modelName, StringRef jsonText,
                                              StringRef objectStem, const CpuTarget &target,
                                              Location loc) {
  std::string hex = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(jsonText)),
                                /*LowerCase=*/true);
  hex.push_back('\0');
  ObjectFile object((objectStem + ".json.o").str());
  OutlinedData hash{(modelName + "_json_sha256").str(), hex, 1, /*exported=*/true};
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openObject(object.path(), error);
  if (out)
    error = closeObject(*out, object.path(),
                        emitDataObject(hash, out->os(), target, ".rodata.tgc_json"));
  if (!error.empty())
    return emitError(loc) << error;
  return object;
}

FailureOr<std::vector<ObjectFile>> tgc::emitModelObjects(ModuleOp module, const ModelAbi &model,
                                                         StringRef objectStem,
                                                         const CpuTarget &target, bool dataInMemory,
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
  std::vector<OutlinedData> outlined;
  if (failed(addModelInterface(*llvmModule, model, target.enabledFeatures, loc, outlined)))
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
  // The weights and large constants: one object of their bytes.
  outlineConstantData(*llvmModule, model.signature.name, outlined);

  TimingScope splitting = parent.nest("LLVM module split");
  std::vector<llvm::SmallString<0>> parts = splitModule(*llvmModule, model.signature.name);
  llvmModule.reset(); // the outlined constants live on in llvmContext
  splitting.stop();

  TimingScope compiling = parent.nest("LLVM optimization and code generation");
  std::vector<ObjectFile> objects;
  for (size_t i = 0; i < parts.size(); ++i)
    objects.emplace_back((objectStem + "." + Twine(i) + ".o").str());
  if (!outlined.empty())
    objects.push_back(scratchObject((objectStem + ".data.o").str(), dataInMemory));
  std::vector<std::unique_ptr<llvm::ToolOutputFile>> outputs;
  for (const ObjectFile &object : objects) {
    outputs.push_back(openObject(object.path(), error));
    if (!outputs.back())
      return emitError(loc) << error;
  }
  std::vector<std::string> errors(objects.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(objects.size()));
    for (size_t i = 0; i < parts.size(); ++i)
      pool.async([&, i] {
        errors[i] = compilePart(parts[i], objects[i].path(), target, outputs[i]->os());
      });
    if (!outlined.empty())
      pool.async([&] { errors.back() = emitDataObject(outlined, outputs.back()->os(), target); });
    pool.wait();
  }
  for (size_t i = 0; i < objects.size(); ++i)
    errors[i] = closeObject(*outputs[i], objects[i].path(), std::move(errors[i]));
  for (const std::string &message : errors)
    if (!message.empty())
      return emitError(loc) << message;
  return objects;
}
