// The model artifact: signature extraction, lowering to LLVM, in-process object
// emission with the embedded blobs, and linking model.so with the runtime.
#include "tgc/Dialect/Attributes.h"
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
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include <cmath>
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
  if (llvm::isa<Float8E4M3FNType>(t))
    return DType::float8e4m3fn();
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
  if (k == "user_output" || k == attr::kPythonState)
    return ResultKind::UserOutput;
  if (k == "buffer_mutation")
    return ResultKind::BufferMutation;
  if (k == "user_input_mutation")
    return ResultKind::UserInputMutation;
  return emitError(loc) << "unknown result kind '" << k << "'";
}

/// A `tgc.replay` value (docs/replay.md) as JSON; a tensor's `output` (a capture-time
/// @forward result index) becomes the model output index `outputs` maps it to.
static FailureOr<llvm::json::Value> replayValueJson(Attribute value,
                                                    const llvm::DenseMap<int64_t, int64_t> &outputs,
                                                    Location loc) {
  if (!value || llvm::isa<UnitAttr>(value))
    return llvm::json::Value(nullptr);
  if (auto b = llvm::dyn_cast<BoolAttr>(value))
    return llvm::json::Value(b.getValue());
  if (auto i = llvm::dyn_cast<IntegerAttr>(value))
    return llvm::json::Value(i.getInt());
  if (auto f = llvm::dyn_cast<FloatAttr>(value)) {
    double d = f.getValueAsDouble();
    // JSON writes an integral double as an integer (`2.0` as `2`, `-0.0` as `-0`), which
    // reads back as a Python int: those, and non-finite values, are typed floats.
    if (std::isfinite(d) && (d != std::trunc(d) || std::fabs(d) >= 1e17))
      return llvm::json::Value(d);
    std::string text = !std::isfinite(d) ? (std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf")
                                         : llvm::formatv("{0:F1}", d).str();
    return llvm::json::Value(
        llvm::json::Object{{"type", "float"}, {"value", std::move(text)}});
  }
  if (auto str = llvm::dyn_cast<StringAttr>(value))
    return llvm::json::Value(str.str());
  if (auto array = llvm::dyn_cast<ArrayAttr>(value)) {
    llvm::json::Array items;
    for (Attribute item : array) {
      FailureOr<llvm::json::Value> v = replayValueJson(item, outputs, loc);
      if (failed(v))
        return failure();
      items.push_back(std::move(*v));
    }
    return llvm::json::Value(std::move(items));
  }
  if (auto dict = llvm::dyn_cast<DictionaryAttr>(value)) {
    llvm::json::Object object;
    auto type = dict.getAs<StringAttr>(replay::kTypeKey);
    for (NamedAttribute entry : dict) {
      if (type && type.getValue() == replay::kTensor &&
          entry.getName() == replay::kOutputKey) {
        auto index = llvm::dyn_cast<IntegerAttr>(entry.getValue());
        auto it = index ? outputs.find(index.getInt()) : outputs.end();
        if (it == outputs.end())
          return emitError(loc) << "tgc.replay names tensor output " << entry.getValue()
                                << ", which is no python_state result of @forward";
        object[entry.getName().str()] = it->second;
        continue;
      }
      FailureOr<llvm::json::Value> v = replayValueJson(entry.getValue(), outputs, loc);
      if (failed(v))
        return failure();
      object[entry.getName().str()] = std::move(*v);
    }
    return llvm::json::Value(std::move(object));
  }
  return emitError(loc) << "unsupported attribute in tgc.replay: " << value;
}

namespace {
/// The entry functions of a model: `@forward` and, for a trainable model,
/// `@backward` (docs/training.md).
struct Entries {
  func::FuncOp forward;
  func::FuncOp backward;
};
} // namespace

/// A trainable model has public `@forward` and `@backward`; any other model has
/// exactly one public function.
static FailureOr<Entries> entryFunctions(ModuleOp module) {
  Entries entries;
  SmallVector<func::FuncOp> publicFuncs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate() && !func.isExternal())
      publicFuncs.push_back(func);
  for (func::FuncOp func : publicFuncs)
    if (func.getSymName() == "backward")
      entries.backward = func;
  if (entries.backward) {
    for (func::FuncOp func : publicFuncs) {
      if (func == entries.backward)
        continue;
      if (func.getSymName() != "forward")
        return func.emitError("a trainable program has only @forward and @backward as "
                              "entry functions");
      entries.forward = func;
    }
    if (!entries.forward)
      return entries.backward.emitError("@backward without a @forward");
    return entries;
  }
  if (publicFuncs.size() > 1)
    return module.emitError("the program has more than one entry function");
  if (publicFuncs.empty())
    return module.emitError("the program has no entry function");
  entries.forward = publicFuncs.front();
  return entries;
}

static StringRef kindOf(func::FuncOp func, unsigned index, bool result) {
  auto kind = result ? func.getResultAttrOfType<StringAttr>(index, attr::kKind)
                     : func.getArgAttrOfType<StringAttr>(index, attr::kKind);
  return kind ? kind.getValue() : StringRef();
}

/// Reads a value tensor's dtype and sizes.
static LogicalResult tensorInfo(Type type, Location loc, const Twine &what, DType &dtype,
                                std::vector<SizeExpr> &sizes) {
  auto tensor = llvm::dyn_cast<ValueTensorType>(type);
  if (!tensor)
    return emitError(loc) << what << " must be a value tensor, got " << type;
  FailureOr<DType> d = toDType(tensor.getDtype(), loc);
  if (failed(d))
    return failure();
  dtype = *d;
  sizes = toSizes(llvm::cast<BaseTensorType>(tensor));
  return success();
}

/// The index of the argument named `name`, or kNoTarget.
static uint32_t argIndex(const ModelSignature &signature, StringRef name) {
  for (auto [j, arg] : llvm::enumerate(signature.args))
    if (arg.name == name)
      return j;
  return kNoTarget;
}

/// Reads a mutation or gradient result's target.
static LogicalResult readTarget(func::FuncOp func, unsigned i, const ModelSignature &signature,
                                ResultInfo &info) {
  auto target = func.getResultAttrOfType<StringAttr>(i, attr::kTarget);
  if (!target)
    return func.emitError() << "result #" << i << " of @" << func.getSymName()
                            << " names no target";
  info.name = target.str();
  info.target = argIndex(signature, info.name);
  if (info.target == kNoTarget)
    return func.emitError() << "result #" << i << " of @" << func.getSymName()
                            << " targets unknown '" << info.name << "'";
  return success();
}

/// The saved values of @forward's results, in order; a parameter or constant
/// argument returned as is becomes a by-reference saved value.
static LogicalResult readSavedResult(func::FuncOp func, unsigned i, ModelSignature &signature,
                                     BackwardInfo &backward) {
  SavedInfo saved;
  if (failed(tensorInfo(func.getResultTypes()[i], func.getLoc(),
                        "saved result #" + Twine(i), saved.dtype, saved.sizes)))
    return failure();
  Operation *terminator = func.getBody().front().getTerminator();
  if (auto arg = llvm::dyn_cast<BlockArgument>(terminator->getOperand(i))) {
    ArgKind kind = signature.args[arg.getArgNumber()].kind;
    if (kind == ArgKind::Parameter || kind == ArgKind::Constant)
      saved.arg = arg.getArgNumber();
  }
  backward.saved.push_back(std::move(saved));
  return success();
}

/// The saved values and tangents @backward takes and the gradients and
/// mutations it returns.
static LogicalResult readBackward(func::FuncOp func, ModelSignature &signature,
                                  BackwardInfo &backward,
                                  ArrayRef<unsigned> userOutputResults,
                                  ArrayRef<Type> savedTypes) {
  unsigned numArgs = func.getNumArguments(), numSaved = savedTypes.size();
  if (numArgs < numSaved)
    return func.emitError() << "@backward takes " << numArgs << " arguments but @forward saves "
                            << numSaved << " values";
  for (unsigned i = 0; i < numArgs; ++i) {
    Location loc = func.getArgument(i).getLoc();
    StringRef kind = kindOf(func, i, /*result=*/false);
    Type type = func.getArgument(i).getType();
    if (i < numSaved) {
      if (kind != "saved")
        return emitError(loc) << "argument #" << i
                              << " of @backward must be saved value #" << i;
      if (!areMetaCompatible(type, savedTypes[i]))
        return emitError(loc) << "saved value #" << i << " is " << savedTypes[i]
                              << " in @forward but " << type << " in @backward";
      continue;
    }
    if (kind != "tangent")
      return emitError(loc) << "argument #" << i
                            << " of @backward must be a tangent (saved values come first)";
    auto output = func.getArgAttrOfType<IntegerAttr>(i, "tgc.output");
    if (!output || output.getInt() < 0 ||
        uint64_t(output.getInt()) >= userOutputResults.size())
      return emitError(loc) << "tangent argument #" << i
                            << " needs tgc.output, the index of a user output";
    backward.tangents.push_back(uint32_t(output.getInt()));
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    ResultInfo info;
    StringRef kind = kindOf(func, i, /*result=*/true);
    if (kind == "gradient")
      info.kind = ResultKind::Gradient;
    else if (kind == "buffer_mutation")
      info.kind = ResultKind::BufferMutation;
    else if (kind == "user_input_mutation")
      info.kind = ResultKind::UserInputMutation;
    else
      return func.emitError() << "result #" << i << " of @backward has kind '" << kind
                              << "': expected gradient, buffer_mutation or user_input_mutation";
    if (failed(tensorInfo(func.getResultTypes()[i], func.getLoc(),
                          "result #" + Twine(i) + " of @backward", info.dtype, info.sizes)) ||
        failed(readTarget(func, i, signature, info)))
      return failure();
    if (info.kind == ResultKind::Gradient) {
      const ArgInfo &target = signature.args[info.target];
      if (target.kind == ArgKind::UserInput) {
        unsigned input = 0;
        for (unsigned j = 0; j < info.target; ++j)
          input += signature.args[j].kind == ArgKind::UserInput;
        info.name = "input." + std::to_string(input);
      }
    }
    backward.results.push_back(std::move(info));
  }
  return success();
}

FailureOr<ModelSignature> tgc::extractSignature(ModuleOp module, StringRef name,
                                                std::string &weights) {
  FailureOr<Entries> entries = entryFunctions(module);
  if (failed(entries))
    return failure();
  func::FuncOp func = entries->forward;
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
    ArgInfo info;
    FailureOr<ArgKind> kind = argKind(func.getArgAttrOfType<StringAttr>(i, attr::kKind), loc);
    if (failed(kind) ||
        failed(tensorInfo(arg.getType(), loc, "argument #" + Twine(i), info.dtype, info.sizes)))
      return failure();
    info.kind = *kind;
    auto argName = func.getArgAttrOfType<StringAttr>(i, attr::kName);
    info.name = argName ? argName.str() : "input." + std::to_string(i);
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
  BackwardInfo backward;
  SmallVector<unsigned> userOutputResults;
  /// python_state results: their `tgc.output` -> their index among the user outputs.
  llvm::DenseMap<int64_t, int64_t> stateOutputs;
  SmallVector<Type> savedTypes;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    Location loc = func.getLoc();
    if (entries->backward && kindOf(func, i, /*result=*/true) == "saved") {
      savedTypes.push_back(func.getResultTypes()[i]);
      if (failed(readSavedResult(func, i, signature, backward)))
        return failure();
      continue;
    }
    ResultInfo info;
    FailureOr<ResultKind> kind =
        resultKind(func.getResultAttrOfType<StringAttr>(i, attr::kKind), loc);
    if (failed(kind) || failed(tensorInfo(func.getResultTypes()[i], loc,
                                          "result #" + Twine(i), info.dtype, info.sizes)))
      return failure();
    info.kind = *kind;
    info.name = "output." + std::to_string(i);
    if (info.kind == ResultKind::UserOutput) {
      if (kindOf(func, i, /*result=*/true) == attr::kPythonState) {
        auto slot = func.getResultAttrOfType<StringAttr>(i, attr::kName);
        auto output = func.getResultAttrOfType<IntegerAttr>(i, attr::kOutput);
        if (!slot || !output)
          return func.emitError() << "python_state result #" << i
                                  << " needs tgc.name and tgc.output";
        signature.slots[signature.results.size()] = slot.str();
        stateOutputs[output.getInt()] = userOutputResults.size();
      }
      userOutputResults.push_back(i);
    } else if (failed(readTarget(func, i, signature, info))) {
      return failure();
    }
    signature.results.push_back(std::move(info));
  }
  if (entries->backward) {
    if (failed(readBackward(entries->backward, signature, backward, userOutputResults,
                            savedTypes)))
      return failure();
    // A tangent has its output's sizes and dtype (requires_grad may differ).
    for (auto [i, output] : llvm::enumerate(backward.tangents)) {
      unsigned forwardResult = userOutputResults[output];
      Type tangentType = entries->backward.getArgument(savedTypes.size() + i).getType();
      if (!areMetaCompatible(tangentType, func.getResultTypes()[forwardResult]))
        return entries->backward.emitError()
               << "tangent #" << i << " is " << tangentType << " but user output #" << output
               << " is " << func.getResultTypes()[forwardResult];
    }
    if (auto count = module->getAttrOfType<IntegerAttr>("tgc.saved_count"))
      backward.savedCount = count.getInt();
    if (auto bytes = module->getAttrOfType<IntegerAttr>("tgc.saved_bytes"))
      backward.savedBytes = bytes.getInt();
    signature.backward = std::move(backward);
  }
  if (auto actions = module->getAttrOfType<ArrayAttr>(attr::kReplay)) {
    FailureOr<llvm::json::Value> json = replayValueJson(actions, stateOutputs, module.getLoc());
    if (failed(json))
      return failure();
    llvm::raw_string_ostream os(signature.replayJson);
    os << *json;
  }
  if (auto sources = module->getAttrOfType<DictionaryAttr>(attr::kStateSources))
    for (NamedAttribute entry : sources)
      if (auto source = dyn_cast<StringAttr>(entry.getValue()))
        signature.stateSources[entry.getName().str()] = source.str();
  // Captured programs' output structure and input metadata changes: attributes as JSON.
  std::function<llvm::json::Value(Attribute)> toJson = [&](Attribute a) -> llvm::json::Value {
    if (auto i = dyn_cast<IntegerAttr>(a))
      return i.getType().isInteger(1) ? llvm::json::Value(i.getValue().getBoolValue())
                                      : llvm::json::Value(i.getInt());
    if (auto f = dyn_cast<FloatAttr>(a))
      return f.getValueAsDouble();
    if (auto s = dyn_cast<StringAttr>(a))
      return s.str();
    if (auto array = dyn_cast<ArrayAttr>(a)) {
      llvm::json::Array items;
      for (Attribute item : array)
        items.push_back(toJson(item));
      return items;
    }
    if (auto dict = dyn_cast<DictionaryAttr>(a)) {
      llvm::json::Object object;
      for (NamedAttribute entry : dict)
        object[entry.getName().str()] = toJson(entry.getValue());
      return object;
    }
    return nullptr; // unit: None
  };
  if (Attribute structure = module->getAttr(attr::kOutputStructure)) {
    llvm::raw_string_ostream os(signature.outputStructureJson);
    os << toJson(structure);
  }
  if (Attribute metadata = module->getAttr(attr::kInputMetadata)) {
    llvm::raw_string_ostream os(signature.inputMetadataJson);
    os << toJson(metadata);
  }
  if (auto guards = module->getAttrOfType<ArrayAttr>(attr::kGuards)) {
    FailureOr<llvm::json::Value> json =
        replayValueJson(guards, llvm::DenseMap<int64_t, int64_t>(), module.getLoc());
    if (failed(json))
      return failure();
    llvm::raw_string_ostream os(signature.guardsJson);
    os << *json;
  }
  std::string problem = verifySignature(signature);
  if (!problem.empty())
    return func.emitError("the model signature is invalid: ") << problem;
  return signature;
}

//===----------------------------------------------------------------------===//
// Lowering and code generation
//===----------------------------------------------------------------------===//

/// Drops the saved results of `forward` that are parameters or constants
/// returned as is: the backward reads those in place (docs/abi.md), so the
/// forward entry does not copy them.
static void dropReferenceSaved(func::FuncOp forward, const BackwardInfo &backward) {
  llvm::BitVector erase(forward.getNumResults());
  unsigned saved = 0;
  for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
    if (kindOf(forward, i, /*result=*/true) == "saved" &&
        backward.saved[saved++].arg != kNoTarget)
      erase.set(i);
  Operation *terminator = forward.getBody().front().getTerminator();
  for (int i = int(erase.size()) - 1; i >= 0; --i)
    if (erase.test(i))
      terminator->eraseOperand(i);
  (void)forward.eraseResults(erase);
}

/// Appends to `backward` one `!tgc.vtensor<[sK], i8>` argument per size symbol,
/// which the runtime passes without data: lowering binds each symbol from the
/// first argument dimension that is exactly that symbol, and the backward's
/// results may use a symbol that no saved value or tangent has (docs/abi.md).
static LogicalResult addSymbolArguments(func::FuncOp backward, unsigned numSymbols) {
  MLIRContext *ctx = backward.getContext();
  for (unsigned s = 0; s < numSymbols; ++s) {
    TensorMeta meta;
    meta.sizes = {getAffineSymbolExpr(s, ctx)};
    meta.dtype = IntegerType::get(ctx, 8);
    Type type = BaseTensorType::get(ctx, /*isRef=*/false, meta);
    if (failed(backward.insertArgument(backward.getNumArguments(), type, DictionaryAttr(),
                                       backward.getLoc())))
      return failure();
  }
  return success();
}

/// Prepares an entry for translation: the signature has been read and what
/// remains of it would only confuse translation; the function is renamed
/// `<name>_<entry>` and gets a C interface.
static void prepareEntry(func::FuncOp func, StringRef name, StringRef entry) {
  func.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  func.setSymName((name + "_" + entry).str());
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(func.getContext()));
}

/// Runs the pipeline's phases after decomposition (after the partition for a
/// trainable model) on the entry functions.
static LogicalResult lowerToLLVMDialect(ModuleOp module, const Entries &entries,
                                        const ModelSignature &signature, StringRef name) {
  for (auto global : llvm::make_early_inc_range(module.getOps<GlobalOp>()))
    global.erase();
  if (entries.backward) {
    dropReferenceSaved(entries.forward, *signature.backward);
    if (failed(addSymbolArguments(entries.backward, signature.symbols.size())))
      return failure();
  }
  prepareEntry(entries.forward, name, "forward");
  if (entries.backward)
    prepareEntry(entries.backward, name, "backward");
  module->removeAttr(TgcDialect::kSymbolsAttrName);
  module->removeAttr("tgc.saved_count");
  module->removeAttr("tgc.saved_bytes");
  PassManager pm(module.getContext());
  PipelineOptions options;
  options.train = bool(entries.backward);
  options.startAfter = entries.backward ? Phase::Partition : Phase::Decompose;
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

/// Adds `void tgc_entry_<entry>(void **args)`, the runtime's calling
/// convention: it loads each descriptor pointer and calls the C interface of
/// `<name>_<entry>`. Null if the lowered module has no such function.
static llvm::Function *addPackedEntry(llvm::Module &m, StringRef name, StringRef entryName) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *target = m.getFunction(("_mlir_ciface_" + name + "_" + entryName).str());
  if (!target)
    return nullptr;
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  auto *entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
      llvm::GlobalValue::InternalLinkage, "tgc_entry_" + entryName, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0, e = target->arg_size(); i < e; ++i)
    args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i)));
  b.CreateCall(target, args);
  b.CreateRetVoid();
  return entry;
}

/// Adds the packed entries, the model descriptor and `<name>_create` to `m`.
static LogicalResult addModelInterface(llvm::Module &m, StringRef name, StringRef signatureBlob,
                                       StringRef weights, bool trainable, Location loc) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function *forward = addPackedEntry(m, name, "forward");
  if (!forward)
    return emitError(loc) << "the lowered module has no entry " << name << "_forward";
  llvm::Constant *backward = llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0));
  if (trainable) {
    llvm::Function *entry = addPackedEntry(m, name, "backward");
    if (!entry)
      return emitError(loc) << "the lowered module has no entry " << name << "_backward";
    backward = entry;
  }

  std::string nameBytes = name.str();
  nameBytes.push_back('\0');
  llvm::GlobalVariable *nameGlobal = addBlob(m, nameBytes, name + "_name");
  llvm::GlobalVariable *sigGlobal = addBlob(m, signatureBlob, name + "_signature");
  llvm::GlobalVariable *weightsGlobal = addBlob(m, weights, name + "_weights");
  // tgc_model_desc (TGC_ABI_VERSION 2): { i64, ptr, ptr, i64, ptr, i64, ptr, ptr }.
  auto *descType = llvm::StructType::get(ctx, {i64, ptr, ptr, i64, ptr, i64, ptr, ptr});
  llvm::Constant *desc = llvm::ConstantStruct::get(
      descType, {llvm::ConstantInt::get(i64, 2), nameGlobal, sigGlobal,
                 llvm::ConstantInt::get(i64, signatureBlob.size()), weightsGlobal,
                 llvm::ConstantInt::get(i64, weights.size()), forward, backward});
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

static LogicalResult linkLibrary(const ArtifactOptions &options, ArrayRef<std::string> objects,
                                 Location loc) {
  std::vector<std::string> argv = {options.linker, "-shared", "-o", options.libraryPath};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.push_back(options.runtimeLibrary);
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

/// Lowers `module` and writes the object of model `name` (its packed entries, blobs
/// and `<name>_create`) to `object`; returns the model's signature.
static FailureOr<ModelSignature> emitModelObject(ModuleOp module, const ArtifactOptions &options,
                                                 StringRef name, StringRef object) {
  Location loc = module.getLoc();
  std::string weights;
  FailureOr<ModelSignature> signature = extractSignature(module, name, weights);
  if (failed(signature))
    return failure();
  if (options.report)
    *options.report << writeTrainingReport(*signature);
  FailureOr<Entries> entries = entryFunctions(module);
  if (failed(entries) || failed(lowerToLLVMDialect(module, *entries, *signature, name)))
    return failure();

  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, name);
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = hostTargetMachine(error);
  if (!tm)
    return emitError(loc) << "no target for this host: " << error;
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  if (failed(addModelInterface(*llvmModule, name, encodeSignatureBlob(*signature), weights,
                               signature->backward.has_value(), loc)))
    return failure();
  if (llvm::Error err = makeOptimizingTransformer(3, 0, tm.get())(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: " << llvm::toString(std::move(err));
  if (failed(emitObject(*llvmModule, *tm, object, loc)))
    return failure();
  return signature;
}

/// Links `objects` into model.so, removes them unless kept, and writes model.h and
/// model.json.
static LogicalResult finishArtifact(const ArtifactOptions &options,
                                    ArrayRef<std::string> objects, StringRef headerText,
                                    StringRef jsonText, Location loc) {
  if (failed(linkLibrary(options, objects, loc)))
    return failure();
  if (!options.keepObject)
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
  SmallString<128> header(options.libraryPath), json(options.libraryPath);
  llvm::sys::path::replace_extension(header, ".h");
  llvm::sys::path::replace_extension(json, ".json");
  if (failed(writeText(header, headerText, loc)) || failed(writeText(json, jsonText, loc)))
    return failure();
  return success();
}

LogicalResult tgc::emitArtifact(ModuleOp module, const ArtifactOptions &options) {
  SmallString<128> object(options.libraryPath);
  llvm::sys::path::replace_extension(object, ".o");
  FailureOr<ModelSignature> signature =
      emitModelObject(module, options, options.name, object);
  if (failed(signature))
    return failure();
  return finishArtifact(options, {object.str().str()}, writeModelHeader(*signature),
                        writeSignatureJson(*signature), module.getLoc());
}

LogicalResult tgc::emitProgramArtifact(ArrayRef<ModuleOp> graphs, StringRef programJson,
                                       const ArtifactOptions &options) {
  std::vector<std::string> objects;
  std::vector<ModelSignature> signatures;
  for (auto [i, graph] : llvm::enumerate(graphs)) {
    std::string name = graphModelName(options.name, i);
    SmallString<128> object(options.libraryPath);
    llvm::sys::path::replace_extension(object, "." + std::to_string(i) + ".o");
    FailureOr<ModelSignature> signature = emitModelObject(graph, options, name, object);
    if (failed(signature))
      return failure();
    objects.push_back(object.str().str());
    signatures.push_back(std::move(*signature));
  }
  return finishArtifact(options, objects, writeProgramHeader(options.name, signatures),
                        writeProgramSignatureJson(options.name, programJson.str(), signatures),
                        ModuleOp(graphs.front()).getLoc());
}
