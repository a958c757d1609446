// The model interface of a translated model: packed entries, blobs, the descriptor
// and `<name>_create` (docs/abi.md).
#include "ModelInterface.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"

using namespace mlir;
using namespace tgc;

static llvm::GlobalVariable *addBlob(llvm::Module &m, StringRef data, const llvm::Twine &name) {
  llvm::Constant *init =
      llvm::ConstantDataArray::getString(m.getContext(), data, /*AddNull=*/false);
  auto *global = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setAlignment(llvm::Align(64));
  return global;
}

/// Adds `void tgc_entry_<role>(void **args)`, the runtime's calling convention: it
/// loads each descriptor pointer and calls the C interface of entry function `symbol`.
/// Null if the lowered module has no such function.
static llvm::Function *addPackedEntry(llvm::Module &m, StringRef symbol, StringRef role) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *target = m.getFunction(("_mlir_ciface_" + symbol).str());
  if (!target)
    return nullptr;
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  auto *entry =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
                             llvm::GlobalValue::InternalLinkage, "tgc_entry_" + role, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0, e = target->arg_size(); i < e; ++i)
    args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i)));
  b.CreateCall(target, args);
  b.CreateRetVoid();
  return entry;
}

/// A hidden declaration of `name`, which the data object defines as `outlined`.
static llvm::GlobalVariable *declareOutlined(llvm::Module &m, const OutlinedData &outlined) {
  auto *type = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()), outlined.bytes.size());
  auto *global = new llvm::GlobalVariable(
      m, type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage, nullptr, outlined.name);
  global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  global->setAlignment(llvm::Align(outlined.align));
  return global;
}

LogicalResult tgc::addModelInterface(llvm::Module &m, const ModelAbi &model,
                                     ArrayRef<std::string> cpuFeatures, Location loc,
                                     std::vector<OutlinedData> &outlined) {
  StringRef name = model.signature.name;
  std::string signatureBlob = encodeSignatureBlob(model.signature);
  StringRef weights = model.weights;
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function *forward = addPackedEntry(m, model.forwardEntry, "forward");
  if (!forward)
    return emitError(loc) << "the lowered module has no entry " << model.forwardEntry;
  llvm::Constant *backward = llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0));
  if (model.signature.backward) {
    llvm::Function *entry = addPackedEntry(m, model.backwardEntry, "backward");
    if (!entry)
      return emitError(loc) << "the lowered module has no entry " << model.backwardEntry;
    backward = entry;
  }

  std::string nameBytes = name.str();
  nameBytes.push_back('\0');
  llvm::GlobalVariable *nameGlobal = addBlob(m, nameBytes, name + "_name");
  llvm::GlobalVariable *sigGlobal = addBlob(m, signatureBlob, name + "_signature");
  // The weights (hundreds of MB for a large model) go to the data object as they are,
  // without a copy into an LLVM constant.
  llvm::GlobalVariable *weightsGlobal =
      weights.size() < kOutlinedDataBytes
          ? addBlob(m, weights, name + "_weights")
          : declareOutlined(
                m, outlined.emplace_back(OutlinedData{(name + ".weights").str(), weights, 64}));
  // tgc_model_desc (TGC_ABI_VERSION 2): { i64, ptr, ptr, i64, ptr, i64, ptr, ptr }.
  auto *descType = llvm::StructType::get(ctx, {i64, ptr, ptr, i64, ptr, i64, ptr, ptr});
  llvm::Constant *desc = llvm::ConstantStruct::get(
      descType, {llvm::ConstantInt::get(i64, 2), nameGlobal, sigGlobal,
                 llvm::ConstantInt::get(i64, signatureBlob.size()), weightsGlobal,
                 llvm::ConstantInt::get(i64, weights.size()), forward, backward});
  auto *descGlobal = new llvm::GlobalVariable(m, descType, true, llvm::GlobalValue::PrivateLinkage,
                                              desc, name + "_desc");

  // int <name>_create(tgc_model **out) {
  //   return tgc_rt_create_for_cpu(&desc, "<features>", out);
  // }
  // or, for a CUDA model, tgc_rt_create_for_cuda.
  std::string featureList = llvm::join(cpuFeatures, ",");
  llvm::GlobalVariable *featuresGlobal =
      addBlob(m, StringRef(featureList.c_str(), featureList.size() + 1), name + "_cpu_features");
  auto *create = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                                        llvm::GlobalValue::ExternalLinkage, name + "_create", m);
  llvm::IRBuilder<> cb(llvm::BasicBlock::Create(ctx, "entry", create));
  // A CUDA model (tgc-lower-gpu-to-runtime made its GPU code data):
  //   return tgc_rt_create_for_cuda(&desc, "<features>", &image, out);
  // with image = { fatbin, its size, kernel names, their size, flags } (tgc_cuda_image).
  llvm::GlobalVariable *fatbin = m.getGlobalVariable("tgc_cuda_fatbin", /*AllowInternal=*/true);
  llvm::GlobalVariable *kernelNames =
      m.getGlobalVariable("tgc_cuda_kernel_names", /*AllowInternal=*/true);
  if (fatbin && kernelNames) {
    auto size = [&](llvm::GlobalVariable *global) {
      return llvm::ConstantInt::get(
          i64, m.getDataLayout().getTypeAllocSize(global->getValueType()).getFixedValue());
    };
    llvm::Constant *flags = llvm::ConstantInt::get(i64, 0);
    if (llvm::GlobalVariable *global = m.getGlobalVariable("tgc_cuda_flags", true);
        global && global->hasInitializer())
      flags = global->getInitializer();
    auto *imageType = llvm::StructType::get(ctx, {ptr, i64, ptr, i64, i64});
    auto *image = new llvm::GlobalVariable(
        m, imageType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(imageType,
                                  {fatbin, size(fatbin), kernelNames, size(kernelNames), flags}),
        name + "_cuda_image");
    llvm::FunctionCallee rtCreate = m.getOrInsertFunction(
        "tgc_rt_create_for_cuda", llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false));
    cb.CreateRet(cb.CreateCall(rtCreate, {descGlobal, featuresGlobal, image, create->getArg(0)}));
  } else {
    llvm::FunctionCallee rtCreate = m.getOrInsertFunction(
        "tgc_rt_create_for_cpu", llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
    cb.CreateRet(cb.CreateCall(rtCreate, {descGlobal, featuresGlobal, create->getArg(0)}));
  }

  // Everything else the module defines is internal to model.so.
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && &f != create)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return success();
}
