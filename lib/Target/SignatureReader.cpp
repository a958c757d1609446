// Target's view of a lowered model: its calling signature, weights and entries, read
// from the `tgc.abi` attribute tgc-prepare-entries records (docs/abi.md) and the
// Python-level module attributes the pipeline keeps to the end.
#include "SignatureReader.h"

#include "tgc/Dialect/Attributes.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Types and values
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

/// The row-major bytes of an initial value, one byte per bool: a view of the attribute's
/// data where it holds them so (weights: no copy), else of `storage`, which receives them.
static FailureOr<std::string_view> rawBytes(ElementsAttr value, std::string &storage,
                                            Location loc) {
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "initial value has no data";
    ArrayRef<char> data = blob->getData();
    return std::string_view(data.data(), data.size());
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return emitError(loc) << "unsupported initial value attribute";
  storage.clear();
  if (dense.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      storage.push_back(b ? 1 : 0);
    return std::string_view(storage);
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string_view(raw.data(), raw.size());
  for (int64_t i = 0, n = dense.getNumElements(); i < n; ++i)
    storage.append(raw.begin(), raw.end());
  return std::string_view(storage);
}

/// An upper bound of the weights blob's size for `args`: each state value's bytes (at
/// most as many as its attribute's elements take) and its alignment padding.
static size_t weightsCapacity(ArrayRef<DictionaryAttr> args) {
  size_t bytes = 0;
  for (DictionaryAttr entry : args)
    if (auto value = entry.getAs<ElementsAttr>(abi::kValueKey)) {
      Type element = value.getElementType();
      uint64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 8;
      bytes += value.getNumElements() * llvm::divideCeil(bits, 8) + kWeightsAlignment;
    }
  return bytes;
}

/// A `tgc.replay` value (docs/replay.md) as JSON; a tensor's `output` (a capture-time
/// @forward result index) becomes the model output index `outputs` maps it to.
static FailureOr<llvm::json::Value>
replayValueJson(Attribute value, const llvm::DenseMap<int64_t, int64_t> &outputs, Location loc) {
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
    std::string text = !std::isfinite(d) ? (std::isnan(d) ? "nan"
                                            : d > 0       ? "inf"
                                                          : "-inf")
                                         : llvm::formatv("{0:F1}", d).str();
    return llvm::json::Value(llvm::json::Object{{"type", "float"}, {"value", std::move(text)}});
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
      if (type && type.getValue() == replay::kTensor && entry.getName() == replay::kOutputKey) {
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

//===----------------------------------------------------------------------===//
// tgc.abi
//===----------------------------------------------------------------------===//

namespace {
/// Reads `tgc.abi` into a ModelAbi; a malformed attribute is a diagnostic on the module
/// (tgc-prepare-entries writes it well formed).
class AbiReader {
public:
  explicit AbiReader(ModuleOp module) : module(module), loc(module.getLoc()) {}

  FailureOr<ModelAbi> read(StringRef name);

  /// python_state results: their `output` -> their index among the user outputs.
  llvm::DenseMap<int64_t, int64_t> stateOutputs;

private:
  template <typename T> FailureOr<T> get(DictionaryAttr dict, StringRef key) {
    if (auto value = dict ? dict.getAs<T>(key) : T())
      return value;
    return emitError(loc) << "malformed tgc.abi: '" << key << "' is missing or mistyped";
  }
  FailureOr<SmallVector<DictionaryAttr>> entriesOf(DictionaryAttr dict, StringRef key);
  LogicalResult readTensor(DictionaryAttr entry, DType &dtype, std::vector<SizeExpr> &sizes);
  uint32_t readIndex(DictionaryAttr entry, StringRef key);
  LogicalResult readSymbols(DictionaryAttr abiAttr);
  LogicalResult readArgs(DictionaryAttr abiAttr);
  FailureOr<ResultInfo> readResult(DictionaryAttr entry);
  LogicalResult readResults(DictionaryAttr abiAttr);
  LogicalResult readBackward(DictionaryAttr backwardAttr);
  LogicalResult readMemory(DictionaryAttr abiAttr, StringRef role, MemoryPlan &plan);

  ModuleOp module;
  Location loc;
  ModelAbi model;
};
} // namespace

/// The dictionaries of list `key` of `dict`.
FailureOr<SmallVector<DictionaryAttr>> AbiReader::entriesOf(DictionaryAttr dict, StringRef key) {
  FailureOr<ArrayAttr> list = get<ArrayAttr>(dict, key);
  if (failed(list))
    return failure();
  SmallVector<DictionaryAttr> entries;
  for (Attribute entry : *list) {
    auto entryDict = llvm::dyn_cast<DictionaryAttr>(entry);
    if (!entryDict)
      return emitError(loc) << "malformed tgc.abi: an entry of '" << key << "' is no dictionary";
    entries.push_back(entryDict);
  }
  return entries;
}

/// A tensor's dtype and sizes, from its value tensor `type`.
LogicalResult AbiReader::readTensor(DictionaryAttr entry, DType &dtype,
                                    std::vector<SizeExpr> &sizes) {
  FailureOr<TypeAttr> type = get<TypeAttr>(entry, abi::kTypeKey);
  if (failed(type))
    return failure();
  auto tensor = llvm::dyn_cast<ValueTensorType>(type->getValue());
  if (!tensor)
    return emitError(loc) << "malformed tgc.abi: " << type->getValue() << " is not a value tensor";
  FailureOr<DType> d = toDType(tensor.getDtype(), loc);
  if (failed(d))
    return failure();
  dtype = *d;
  sizes = toSizes(llvm::cast<BaseTensorType>(tensor));
  return success();
}

/// An argument index (`target`, `arg`), or kNoTarget when the entry has none.
uint32_t AbiReader::readIndex(DictionaryAttr entry, StringRef key) {
  auto index = entry.getAs<IntegerAttr>(key);
  return index ? uint32_t(index.getInt()) : kNoTarget;
}

LogicalResult AbiReader::readSymbols(DictionaryAttr abiAttr) {
  FailureOr<ArrayAttr> symbols = get<ArrayAttr>(abiAttr, abi::kSymbolsKey);
  if (failed(symbols))
    return failure();
  for (Attribute attr : *symbols) {
    auto symbol = llvm::dyn_cast<SymbolAttr>(attr);
    if (!symbol)
      return emitError(loc) << "malformed tgc.abi: symbol " << attr << " is no #tgc.symbol";
    SymbolInfo info;
    info.name = symbol.getName().str();
    info.min = symbol.getMin();
    if (symbol.getMax())
      info.max = *symbol.getMax();
    model.signature.symbols.push_back(info);
  }
  return success();
}

LogicalResult AbiReader::readArgs(DictionaryAttr abiAttr) {
  FailureOr<SmallVector<DictionaryAttr>> args = entriesOf(abiAttr, abi::kArgsKey);
  if (failed(args))
    return failure();
  // Appending the weights one by one would copy hundreds of MB as the blob grows.
  model.weights.reserve(weightsCapacity(*args));
  std::string storage;
  for (DictionaryAttr entry : *args) {
    FailureOr<StringAttr> kind = get<StringAttr>(entry, abi::kKindKey);
    FailureOr<StringAttr> name = get<StringAttr>(entry, abi::kNameKey);
    ArgInfo info;
    if (failed(kind) || failed(name) || failed(readTensor(entry, info.dtype, info.sizes)))
      return failure();
    info.name = name->str();
    std::optional<ArgKind> argKind = llvm::StringSwitch<std::optional<ArgKind>>(kind->getValue())
                                         .Case(abi::kParameter, ArgKind::Parameter)
                                         .Case(abi::kBuffer, ArgKind::Buffer)
                                         .Case(abi::kConstant, ArgKind::Constant)
                                         .Case(abi::kUserInput, ArgKind::UserInput)
                                         .Default(std::nullopt);
    if (!argKind)
      return emitError(loc) << "unknown argument kind '" << kind->getValue() << "'";
    info.kind = *argKind;
    if (info.kind != ArgKind::UserInput) {
      auto value = entry.getAs<ElementsAttr>(abi::kValueKey);
      if (!value)
        return emitError(loc) << "state argument '" << info.name << "' has no tgc.global";
      FailureOr<std::string_view> bytes = rawBytes(value, storage, loc);
      if (failed(bytes))
        return failure();
      appendWeights(model.weights, info, *bytes);
    }
    model.signature.args.push_back(std::move(info));
  }
  return success();
}

FailureOr<ResultInfo> AbiReader::readResult(DictionaryAttr entry) {
  FailureOr<StringAttr> kind = get<StringAttr>(entry, abi::kKindKey);
  FailureOr<StringAttr> name = get<StringAttr>(entry, abi::kNameKey);
  ResultInfo info;
  if (failed(kind) || failed(name) || failed(readTensor(entry, info.dtype, info.sizes)))
    return failure();
  info.name = name->str();
  std::optional<ResultKind> resultKind =
      llvm::StringSwitch<std::optional<ResultKind>>(kind->getValue())
          .Cases({abi::kUserOutput, attr::kPythonState}, ResultKind::UserOutput)
          .Case(abi::kBufferMutation, ResultKind::BufferMutation)
          .Case(abi::kUserInputMutation, ResultKind::UserInputMutation)
          .Case(abi::kGradient, ResultKind::Gradient)
          .Default(std::nullopt);
  if (!resultKind)
    return emitError(loc) << "unknown result kind '" << kind->getValue() << "'";
  info.kind = *resultKind;
  info.target = readIndex(entry, abi::kTargetKey);
  return info;
}

LogicalResult AbiReader::readResults(DictionaryAttr abiAttr) {
  FailureOr<SmallVector<DictionaryAttr>> results = entriesOf(abiAttr, abi::kResultsKey);
  if (failed(results))
    return failure();
  ModelSignature &signature = model.signature;
  int64_t userOutputs = 0;
  for (DictionaryAttr entry : *results) {
    FailureOr<ResultInfo> info = readResult(entry);
    if (failed(info))
      return failure();
    if (info->kind == ResultKind::UserOutput) {
      if (auto slot = entry.getAs<StringAttr>(abi::kSlotKey)) {
        FailureOr<IntegerAttr> output = get<IntegerAttr>(entry, abi::kOutputKey);
        if (failed(output))
          return failure();
        signature.slots[signature.results.size()] = slot.str();
        stateOutputs[output->getInt()] = userOutputs;
      }
      ++userOutputs;
    }
    signature.results.push_back(std::move(*info));
  }
  return success();
}

LogicalResult AbiReader::readBackward(DictionaryAttr backwardAttr) {
  BackwardInfo backward;
  FailureOr<SmallVector<DictionaryAttr>> saved = entriesOf(backwardAttr, abi::kSavedKey);
  FailureOr<SmallVector<DictionaryAttr>> results = entriesOf(backwardAttr, abi::kResultsKey);
  FailureOr<DenseI64ArrayAttr> tangents = get<DenseI64ArrayAttr>(backwardAttr, abi::kTangentsKey);
  if (failed(saved) || failed(results) || failed(tangents))
    return failure();
  for (DictionaryAttr entry : *saved) {
    SavedInfo info;
    if (failed(readTensor(entry, info.dtype, info.sizes)))
      return failure();
    info.arg = readIndex(entry, abi::kArgKey);
    backward.saved.push_back(std::move(info));
  }
  for (int64_t output : tangents->asArrayRef())
    backward.tangents.push_back(uint32_t(output));
  for (DictionaryAttr entry : *results) {
    FailureOr<ResultInfo> info = readResult(entry);
    if (failed(info))
      return failure();
    backward.results.push_back(std::move(*info));
  }
  if (auto count = backwardAttr.getAs<IntegerAttr>(abi::kSavedCountKey))
    backward.savedCount = count.getInt();
  if (auto bytes = backwardAttr.getAs<IntegerAttr>(abi::kSavedBytesKey))
    backward.savedBytes = bytes.getInt();
  model.signature.backward = std::move(backward);
  return success();
}

/// Entry `role`'s memory plan (tgc-plan-memory); none when the pipeline did not plan
/// it, and then the entry has no arena argument.
LogicalResult AbiReader::readMemory(DictionaryAttr abiAttr, StringRef role, MemoryPlan &plan) {
  auto memory = abiAttr.getAs<DictionaryAttr>(abi::kMemoryKey);
  if (!memory || !memory.get(role))
    return success();
  FailureOr<DictionaryAttr> entry = get<DictionaryAttr>(memory, role);
  if (failed(entry))
    return failure();
  auto read = [&](StringRef key, int64_t &field) -> LogicalResult {
    FailureOr<IntegerAttr> value = get<IntegerAttr>(*entry, key);
    if (failed(value))
      return failure();
    if (value->getInt() < 0)
      return emitError(loc) << "malformed tgc.abi: negative memory." << role << "." << key;
    field = value->getInt();
    return success();
  };
  int64_t arenaBytes = 0;
  if (failed(read(abi::kArenaBytesKey, arenaBytes)) ||
      failed(read(abi::kBuffersKey, plan.buffers)) ||
      failed(read(abi::kBufferBytesKey, plan.bufferBytes)) ||
      failed(read(abi::kUnplannedKey, plan.unplanned)) ||
      failed(read(abi::kDynamicBuffersKey, plan.dynamicBuffers)))
    return failure();
  plan.arenaBytes = uint64_t(arenaBytes);
  return success();
}

FailureOr<ModelAbi> AbiReader::read(StringRef name) {
  auto abiAttr = module->getAttrOfType<DictionaryAttr>(abi::kAbi);
  if (!abiAttr)
    return module.emitError("the module has no tgc.abi: run the pipeline to the llvm phase, "
                            "whose tgc-prepare-entries records the model's signature");
  model.signature.name = name.str();
  FailureOr<DictionaryAttr> entries = get<DictionaryAttr>(abiAttr, abi::kEntriesKey);
  if (failed(entries))
    return failure();
  FailureOr<StringAttr> forward = get<StringAttr>(*entries, abi::kForwardKey);
  if (failed(forward))
    return failure();
  model.forwardEntry = forward->str();
  if (auto backward = entries->getAs<StringAttr>(abi::kBackwardKey))
    model.backwardEntry = backward.str();
  if (failed(readSymbols(abiAttr)) || failed(readArgs(abiAttr)) || failed(readResults(abiAttr)) ||
      failed(readMemory(abiAttr, abi::kForwardKey, model.signature.memory)))
    return failure();
  if (!model.backwardEntry.empty()) {
    FailureOr<DictionaryAttr> backward = get<DictionaryAttr>(abiAttr, abi::kBackwardKey);
    if (failed(backward) || failed(readBackward(*backward)) ||
        failed(readMemory(abiAttr, abi::kBackwardKey, model.signature.backward->memory)))
      return failure();
  }
  return std::move(model);
}

//===----------------------------------------------------------------------===//
// Python-level attributes
//===----------------------------------------------------------------------===//

/// A captured program's output structure or input metadata changes as JSON.
static llvm::json::Value attributeJson(Attribute a) {
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
      items.push_back(attributeJson(item));
    return items;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(a)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dict)
      object[entry.getName().str()] = attributeJson(entry.getValue());
    return object;
  }
  return nullptr; // unit: None
}

/// `tgc.output_layouts` ([{output, strides}], `output` counting the user outputs) as the
/// strides of those results, in which the runtime hands them out (docs/abi.md).
static LogicalResult readOutputLayouts(Attribute layouts, Location loc, ModelSignature &signature) {
  SmallVector<ResultInfo *> outputs;
  for (ResultInfo &result : signature.results)
    if (result.kind == ResultKind::UserOutput)
      outputs.push_back(&result);
  auto array = dyn_cast<ArrayAttr>(layouts);
  if (!array)
    return emitError(loc) << "'" << attr::kOutputLayouts << "' is not an array";
  for (Attribute item : array) {
    auto layout = dyn_cast<DictionaryAttr>(item);
    auto output = layout ? layout.getAs<IntegerAttr>("output") : IntegerAttr();
    auto strides = layout ? layout.getAs<ArrayAttr>("strides") : ArrayAttr();
    if (!output || !strides || output.getInt() < 0 || output.getInt() >= int64_t(outputs.size()) ||
        !llvm::all_of(strides, llvm::IsaPred<IntegerAttr>))
      return emitError(loc) << "malformed '" << attr::kOutputLayouts << "' entry " << item;
    ResultInfo &result = *outputs[output.getInt()];
    result.strides.clear();
    for (Attribute stride : strides)
      result.strides.push_back(cast<IntegerAttr>(stride).getInt());
  }
  return success();
}

/// The replay list, state sources, output structure, input metadata and guards, which
/// model.json shows as they are (docs/replay.md, docs/guards.md).
static LogicalResult readPythonState(ModuleOp module,
                                     const llvm::DenseMap<int64_t, int64_t> &stateOutputs,
                                     ModelSignature &signature) {
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
  if (Attribute structure = module->getAttr(attr::kOutputStructure)) {
    llvm::raw_string_ostream os(signature.outputStructureJson);
    os << attributeJson(structure);
  }
  if (Attribute metadata = module->getAttr(attr::kInputMetadata)) {
    llvm::raw_string_ostream os(signature.inputMetadataJson);
    os << attributeJson(metadata);
  }
  if (Attribute layouts = module->getAttr(attr::kOutputLayouts)) {
    llvm::raw_string_ostream os(signature.outputLayoutsJson);
    os << attributeJson(layouts);
    if (failed(readOutputLayouts(layouts, module.getLoc(), signature)))
      return failure();
  }
  if (auto guards = module->getAttrOfType<ArrayAttr>(attr::kGuards)) {
    FailureOr<llvm::json::Value> json =
        replayValueJson(guards, llvm::DenseMap<int64_t, int64_t>(), module.getLoc());
    if (failed(json))
      return failure();
    llvm::raw_string_ostream os(signature.guardsJson);
    os << *json;
  }
  return success();
}

FailureOr<ModelAbi> tgc::readModelAbi(ModuleOp module, StringRef name) {
  AbiReader reader(module);
  FailureOr<ModelAbi> model = reader.read(name);
  if (failed(model) || failed(readPythonState(module, reader.stateOutputs, model->signature)))
    return failure();
  std::string problem = verifySignature(model->signature);
  if (!problem.empty())
    return module.emitError("internal error (a bug in tgc; please report it with this input): "
                            "the model signature is invalid: ")
           << problem;
  return model;
}
