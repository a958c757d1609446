// The model artifact: signature extraction, lowering to LLVM, in-process object
// emission with the embedded blobs, and linking model.so with the runtime.
#include "tgc/Target/Artifact.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

static FailureOr<DType> toDType(Type t, Location loc) {
  if (t.isF32())
    return DType::float32();
  if (t.isF64())
    return DType::float64();
  if (t.isF16())
    return DType::float16();
  if (t.isBF16())
    return DType::bfloat16();
  if (t.isInteger(1))
    return DType::boolean();
  if (auto i = llvm::dyn_cast<IntegerType>(t)) {
    if (i.isUnsigned() && i.getWidth() == 8)
      return DType::uint8();
    if (!i.isUnsigned())
      switch (i.getWidth()) {
      case 8:
        return DType::int8();
      case 16:
        return DType::int16();
      case 32:
        return DType::int32();
      case 64:
        return DType::int64();
      }
  }
  return emitError(loc) << "dtype " << t << " is not supported by the model ABI";
}

static SizeExpr toSizeExpr(AffineExpr e) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(e))
    return SizeExpr::constant(c.getValue());
  if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
    return SizeExpr::symbol(s.getPosition());
  auto bin = llvm::cast<AffineBinaryOpExpr>(e);
  SizeExpr l = toSizeExpr(bin.getLHS()), r = toSizeExpr(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return SizeExpr::add(l, r);
  case AffineExprKind::Mul:
    return SizeExpr::mul(l, r);
  case AffineExprKind::FloorDiv:
    return SizeExpr::floorDiv(l, r);
  case AffineExprKind::CeilDiv:
    return SizeExpr::ceilDiv(l, r);
  case AffineExprKind::Mod:
    return SizeExpr::mod(l, r);
  default:
    llvm_unreachable("sizes are expressions of symbols");
  }
}

static std::vector<SizeExpr> toSizes(BaseTensorType type) {
  std::vector<SizeExpr> sizes;
  for (AffineExpr e : type.getSizes())
    sizes.push_back(toSizeExpr(e));
  return sizes;
}

/// The row-major bytes of an initial value, one byte per bool.
static FailureOr<std::string> rawBytes(ElementsAttr value, Location loc) {
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "initial value has no data";
    ArrayRef<char> data = blob->getData();
    return std::string(data.begin(), data.end());
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return emitError(loc) << "unsupported initial value attribute";
  if (dense.getElementType().isInteger(1)) {
    std::string bytes;
    for (bool b : dense.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return bytes;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string(raw.begin(), raw.end());
  std::string bytes;
  for (int64_t i = 0, n = dense.getNumElements(); i < n; ++i)
    bytes.append(raw.begin(), raw.end());
  return bytes;
}

static FailureOr<ArgKind> argKind(StringAttr kind, Location loc) {
  StringRef k = kind ? kind.getValue() : "user_input";
  if (k == "parameter")
    return ArgKind::Parameter;
  if (k == "buffer")
    return ArgKind::Buffer;
  if (k == "constant")
    return ArgKind::Constant;
  if (k == "user_input")
    return ArgKind::UserInput;
  return emitError(loc) << "unknown argument kind '" << k << "'";
}

static FailureOr<ResultKind> resultKind(StringAttr kind, Location loc) {
  StringRef k = kind ? kind.getValue() : "user_output";
  if (k == "user_output")
    return ResultKind::UserOutput;
  if (k == "buffer_mutation")
    return ResultKind::BufferMutation;
  if (k == "user_input_mutation")
    return ResultKind::UserInputMutation;
  return emitError(loc) << "unknown result kind '" << k << "'";
}

/// The model's single public function.
static FailureOr<func::FuncOp> entryFunction(ModuleOp module) {
  func::FuncOp entry;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (entry)
      return module.emitError("the program has more than one entry function");
    entry = func;
  }
  if (!entry)
    return module.emitError("the program has no entry function");
  return entry;
}

FailureOr<ModelSignature> tgc::extractSignature(ModuleOp module, StringRef name,
                                                std::string &weights) {
  FailureOr<func::FuncOp> entry = entryFunction(module);
  if (failed(entry))
    return failure();
  func::FuncOp func = *entry;
  ModelSignature signature;
  signature.name = name.str();
  if (auto symbols = module->getAttrOfType<ArrayAttr>(TgcDialect::kSymbolsAttrName))
    for (auto symbol : symbols.getAsRange<SymbolAttr>()) {
      SymbolInfo info;
      info.name = symbol.getName().str();
      info.min = symbol.getMin();
      if (symbol.getMax())
        info.max = *symbol.getMax();
      signature.symbols.push_back(info);
    }
  SymbolTable table(module);
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    Location loc = arg.getLoc();
    auto type = llvm::dyn_cast<ValueTensorType>(arg.getType());
    if (!type)
      return emitError(loc) << "argument #" << i << " must be a value tensor, got "
                            << arg.getType();
    ArgInfo info;
    FailureOr<ArgKind> kind = argKind(func.getArgAttrOfType<StringAttr>(i, attr::kKind), loc);
    FailureOr<DType> dtype = toDType(type.getDtype(), loc);
    if (failed(kind) || failed(dtype))
      return failure();
    info.kind = *kind;
    info.dtype = *dtype;
    auto argName = func.getArgAttrOfType<StringAttr>(i, attr::kName);
    info.name = argName ? argName.str() : "input." + std::to_string(i);
    info.sizes = toSizes(llvm::cast<BaseTensorType>(type));
    if (info.kind != ArgKind::UserInput) {
      auto ref = func.getArgAttrOfType<FlatSymbolRefAttr>(i, attr::kGlobal);
      auto global = ref ? table.lookup<GlobalOp>(ref.getValue()) : GlobalOp();
      if (!global)
        return emitError(loc) << "state argument '" << info.name << "' has no tgc.global";
      FailureOr<std::string> bytes = rawBytes(global.getInitialValue(), global.getLoc());
      if (failed(bytes))
        return failure();
      appendWeights(weights, info, *bytes);
    }
    signature.args.push_back(std::move(info));
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    Location loc = func.getLoc();
    auto type = llvm::dyn_cast<ValueTensorType>(func.getResultTypes()[i]);
    if (!type)
      return emitError(loc) << "result #" << i << " must be a value tensor";
    ResultInfo info;
    FailureOr<ResultKind> kind =
        resultKind(func.getResultAttrOfType<StringAttr>(i, attr::kKind), loc);
    FailureOr<DType> dtype = toDType(type.getDtype(), loc);
    if (failed(kind) || failed(dtype))
      return failure();
    info.kind = *kind;
    info.dtype = *dtype;
    info.sizes = toSizes(llvm::cast<BaseTensorType>(type));
    info.name = "output." + std::to_string(i);
    if (info.kind != ResultKind::UserOutput) {
      auto target = func.getResultAttrOfType<StringAttr>(i, attr::kTarget);
      if (!target)
        return emitError(loc) << "mutation result #" << i << " names no target";
      info.name = target.str();
      for (auto [j, arg] : llvm::enumerate(signature.args))
        if (arg.name == info.name)
          info.target = j;
      if (info.target == kNoTarget)
        return emitError(loc) << "mutation result #" << i << " targets unknown '"
                              << info.name << "'";
    }
    signature.results.push_back(std::move(info));
  }
  std::string problem = verifySignature(signature);
  if (!problem.empty())
    return func.emitError("the model signature is invalid: ") << problem;
  return signature;
}

//===----------------------------------------------------------------------===//
// Lowering and code generation
//===----------------------------------------------------------------------===//

/// Runs the pipeline's phases after decomposition, with the entry function renamed
/// `<name>_forward` and given a C interface.
static LogicalResult lowerToLLVMDialect(ModuleOp module, func::FuncOp entry, StringRef name) {
  for (auto global : llvm::make_early_inc_range(module.getOps<GlobalOp>()))
    global.erase();
  // The signature has been read; what remains of it would only confuse translation.
  entry.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  entry.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  module->removeAttr(TgcDialect::kSymbolsAttrName);
  entry.setSymName((name + "_forward").str());
  entry->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(module.getContext()));
  PassManager pm(module.getContext());
  PipelineOptions options;
  options.startAfter = Phase::Decompose;
  options.compileTo = Phase::LLVM;
  buildPipeline(pm, options);
  return pm.run(module);
}

static llvm::GlobalVariable *addBlob(llvm::Module &m, StringRef data, const llvm::Twine &name) {
  llvm::Constant *init =
      llvm::ConstantDataArray::getString(m.getContext(), data, /*AddNull=*/false);
  auto *global = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setAlignment(llvm::Align(64));
  return global;
}

/// Adds the packed entry, the model descriptor and `<name>_create` to `m`.
static LogicalResult addModelInterface(llvm::Module &m, StringRef name, StringRef signatureBlob,
                                       StringRef weights) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *forward = m.getFunction(("_mlir_ciface_" + name + "_forward").str());
  if (!forward)
    return failure();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);

  // void <name>_entry(void **args): the runtime's calling convention.
  auto *entry = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                                               {ptr}, false),
                                       llvm::GlobalValue::InternalLinkage, name + "_entry", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0, e = forward->arg_size(); i < e; ++i)
    args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i)));
  b.CreateCall(forward, args);
  b.CreateRetVoid();

  std::string nameBytes = name.str();
  nameBytes.push_back('\0');
  llvm::GlobalVariable *nameGlobal = addBlob(m, nameBytes, name + "_name");
  llvm::GlobalVariable *sigGlobal = addBlob(m, signatureBlob, name + "_signature");
  llvm::GlobalVariable *weightsGlobal = addBlob(m, weights, name + "_weights");
  auto *descType = llvm::StructType::get(ctx, {i64, ptr, ptr, i64, ptr, i64, ptr});
  llvm::Constant *desc = llvm::ConstantStruct::get(
      descType, {llvm::ConstantInt::get(i64, 1), nameGlobal, sigGlobal,
                 llvm::ConstantInt::get(i64, signatureBlob.size()), weightsGlobal,
                 llvm::ConstantInt::get(i64, weights.size()), entry});
  auto *descGlobal = new llvm::GlobalVariable(m, descType, true, llvm::GlobalValue::PrivateLinkage,
                                              desc, name + "_desc");

  // int <name>_create(tgc_model **out) { return tgc_rt_create(&desc, out); }
  llvm::FunctionCallee rtCreate =
      m.getOrInsertFunction("tgc_rt_create", llvm::FunctionType::get(i32, {ptr, ptr}, false));
  auto *create = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                                        llvm::GlobalValue::ExternalLinkage, name + "_create", m);
  llvm::IRBuilder<> cb(llvm::BasicBlock::Create(ctx, "entry", create));
  cb.CreateRet(cb.CreateCall(rtCreate, {descGlobal, create->getArg(0)}));

  // Everything else the module defines is internal to model.so.
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && &f != create)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return success();
}

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

static LogicalResult linkLibrary(const ArtifactOptions &options, StringRef object,
                                 Location loc) {
  std::vector<std::string> argv = {options.linker, "-shared", "-o", options.libraryPath,
                                   object.str(), options.runtimeLibrary};
  argv.insert(argv.end(), options.linkLibraries.begin(), options.linkLibraries.end());
  SmallVector<StringRef> args(argv.begin(), argv.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(options.linker, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0)
    return emitError(loc) << "linking " << options.libraryPath << " failed (" << options.linker
                          << " exited with " << rc << ")" << (error.empty() ? "" : ": ")
                          << error;
  return success();
}

static LogicalResult writeText(StringRef path, StringRef text, Location loc) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  out.os() << text;
  out.keep();
  return success();
}

LogicalResult tgc::emitArtifact(ModuleOp module, const ArtifactOptions &options) {
  Location loc = module.getLoc();
  std::string weights;
  FailureOr<ModelSignature> signature = extractSignature(module, options.name, weights);
  if (failed(signature))
    return failure();
  FailureOr<func::FuncOp> entry = entryFunction(module);
  if (failed(lowerToLLVMDialect(module, *entry, options.name)))
    return failure();

  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, options.name);
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = hostTargetMachine(error);
  if (!tm)
    return emitError(loc) << "no target for this host: " << error;
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  if (failed(addModelInterface(*llvmModule, options.name, encodeSignatureBlob(*signature),
                               weights)))
    return emitError(loc) << "the lowered module has no entry " << options.name << "_forward";
  if (llvm::Error err = makeOptimizingTransformer(3, 0, tm.get())(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: " << llvm::toString(std::move(err));

  SmallString<128> object(options.libraryPath);
  llvm::sys::path::replace_extension(object, ".o");
  if (failed(emitObject(*llvmModule, *tm, object, loc)) ||
      failed(linkLibrary(options, object, loc)))
    return failure();
  if (!options.keepObject)
    llvm::sys::fs::remove(object);

  SmallString<128> header(options.libraryPath), json(options.libraryPath);
  llvm::sys::path::replace_extension(header, ".h");
  llvm::sys::path::replace_extension(json, ".json");
  if (failed(writeText(header, writeModelHeader(*signature), loc)) ||
      failed(writeText(json, writeSignatureJson(*signature), loc)))
    return failure();
  return success();
}
