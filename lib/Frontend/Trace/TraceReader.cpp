// Reader for tgc traces (.trace): interprets the captured bytecode into tgc IR.
#include "tgc/Frontend/Trace/TraceReader.h"

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/GraphInputs.h"
#include "Frontend/Common/Json.h"
#include "Frontend/Common/OutputLayouts.h"
#include "Frontend/Common/StridedCopy.h"
#include "Frontend/Python/Interpreter.h"
#include "GraphBreaks.h"
#include "Guards.h"
#include "Replay.h"
#include "TraceFile.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include <map>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using namespace tgc::trace;

namespace {

/// A tensor of the trace that becomes an argument of @forward.
struct GraphInput {
  std::string name;
  std::string kind; ///< parameter | buffer | constant | user_input
  int64_t traceId;
  /// A tensor from outside the entry module's tree (tensorSource).
  bool free = false;
};

class TraceReader {
public:
  /// With `breakPath`, graph breaks are markers and branches follow it.
  TraceReader(llvm::StringRef path, MLIRContext *ctx, bool training,
              GraphBreakPath *breakPath = nullptr)
      : path(path.str()), ctx(ctx), fileLoc(FileLineColLoc::get(ctx, path, 0, 0)), builder(ctx),
        training(training), breakPath(breakPath) {}

  OwningOpRef<ModuleOp> read();

private:
  LogicalResult collectModuleTensors(const Json &value, const std::string &prefix,
                                     const char *store);
  LogicalResult collectInputs();
  FailureOr<TensorMeta> parseTensorMeta(const Json &tensor, const Json *dynamic);
  FailureOr<ElementsAttr> readTensorData(const GraphInput &input, const Json &tensor,
                                         const TensorMeta &meta);
  FailureOr<Value> addArgument(const GraphInput &input, const Json &tensor,
                               const Json *dynamic = nullptr);
  FailureOr<Value> tensorSource(int64_t id, const Json &tensor);
  ArrayAttr buildSymbolsAttr();
  LogicalResult checkUnbackedResults();
  LogicalResult applyInputHooks(py::Interpreter &interpreter);
  FailureOr<py::Var> callEntry(py::Interpreter &interpreter, py::CallArguments &entryCall);
  LogicalResult recordInputMetadata(py::Interpreter &interpreter);
  /// `tgc.output_layouts`: the user outputs whose fake-tensor strides are not row-major.
  void recordOutputLayouts(ArrayRef<Value> outputs);
  void annotateSignature();
  void dropUnusedFreeTensors();
  const Json *objectAt(int64_t id);

  std::string path;
  MLIRContext *ctx;
  Location fileLoc;
  OpBuilder builder;
  bool training;
  GraphBreakPath *breakPath;
  std::unique_ptr<TraceFile> trace;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// Entry-module tensors by trace id: their fully qualified names and kinds, in
  /// named_parameters / named_buffers order.
  std::vector<GraphInput> moduleTensors;
  std::map<int64_t, Value> arguments;
  std::vector<GraphInput> argumentInputs;
  std::vector<std::tuple<std::string, int64_t, std::optional<int64_t>, int64_t>> symbols;
  /// The symbols before the unbacked ones (sizes from Tensor.item()).
  size_t numBackedSymbols = 0;
  unsigned constants = 0;
  /// The trace objects' sources (computeSources), computed on first need.
  std::optional<std::vector<std::string>> sources;
  /// `tgc.state_sources`: state name -> source of the live tensor.
  SmallVector<NamedAttribute> stateSources;
  /// The results of @forward the entry call returns; the Python state's tensors follow.
  unsigned numUserOutputs = 0;
  Replay replay;
  /// The guard list (docs/guards.md).
  mlir::ArrayAttr guards;
};

} // namespace

const Json *TraceReader::objectAt(int64_t id) {
  llvm::Expected<const Json *> object = trace->getObject(id);
  if (!object) {
    llvm::consumeError(object.takeError());
    return nullptr;
  }
  return *object;
}

/// The object id a `{"ref": N}` value names, or -1.
static int64_t refOf(const Json &value) {
  return value.is_object() && value.contains("ref") ? value.at("ref").get<int64_t>() : -1;
}

/// Walks an nn.Module tree as named_parameters (`store` = "_parameters") or
/// named_buffers ("_buffers") does: the module's own entries, then its submodules' in
/// registration order; a tensor reached twice keeps its first name.
LogicalResult TraceReader::collectModuleTensors(const Json &value, const std::string &prefix,
                                                const char *store) {
  const Json *object = objectAt(refOf(value));
  if (!object || object->value("kind", "") != "object")
    return success();
  const Json &dict = object->at("dict");
  auto entries = [&](const char *store) -> const Json * {
    if (!dict.contains(store))
      return nullptr;
    const Json *storeObject = objectAt(refOf(dict.at(store)));
    return storeObject && storeObject->value("kind", "") == "dict" ? &storeObject->at("items")
                                                                   : nullptr;
  };
  if (const Json *items = entries(store)) {
    for (const Json &item : *items) {
      int64_t id = refOf(item.at(1));
      if (id < 0 || !item.at(0).is_string())
        continue;
      if (llvm::any_of(moduleTensors, [&](const GraphInput &t) { return t.traceId == id; }))
        continue;
      std::string kind = std::string(store) == "_parameters" ? "parameter" : "buffer";
      moduleTensors.push_back({prefix + item.at(0).get<std::string>(), kind, id});
    }
  }
  if (const Json *items = entries("_modules"))
    for (const Json &item : *items)
      if (item.at(0).is_string() &&
          failed(collectModuleTensors(item.at(1), prefix + item.at(0).get<std::string>() + ".",
                                      store)))
        return failure();
  return success();
}

FailureOr<TensorMeta> TraceReader::parseTensorMeta(const Json &tensor, const Json *dynamic) {
  TensorMeta meta;
  std::string dtypeName = tensor.at("dtype").get<std::string>();
  std::optional<TorchDType> dtype = lookupDTypeByName(dtypeName, ctx);
  if (!dtype || !dtype->type)
    return emitError(fileLoc) << "tensor dtype torch." << dtypeName << " is not supported";
  meta.dtype = dtype->type;
  const Json &shape = tensor.at("shape");
  for (auto [i, size] : llvm::enumerate(shape)) {
    std::string key = std::to_string(i);
    if (dynamic && dynamic->contains(key)) {
      const Json &dim = dynamic->at(key);
      std::string name = dim.at("symbol").get<std::string>();
      int64_t min = dim.value("min", Json(0)).is_null() ? 0 : dim.at("min").get<int64_t>();
      std::optional<int64_t> max;
      if (dim.contains("max") && !dim.at("max").is_null())
        max = dim.at("max").get<int64_t>();
      auto it = llvm::find_if(symbols, [&](auto &s) { return std::get<0>(s) == name; });
      unsigned index = it - symbols.begin();
      if (it == symbols.end())
        symbols.emplace_back(name, min, max, size.get<int64_t>());
      meta.sizes.push_back(getAffineSymbolExpr(index, ctx));
      continue;
    }
    meta.sizes.push_back(getAffineConstantExpr(size.get<int64_t>(), ctx));
  }
  bool symbolic = dynamic && !dynamic->empty();
  if (symbolic) {
    meta.strides = TensorMeta::contiguousStrides(meta.sizes, ctx);
  } else {
    for (const Json &stride : tensor.at("stride"))
      meta.strides.push_back(getAffineConstantExpr(stride.get<int64_t>(), ctx));
    int64_t offset = tensor.value("storage_offset", 0);
    if (offset != 0)
      meta.storageOffset = getAffineConstantExpr(offset, ctx);
  }
  std::string device = tensor.value("device", "cpu");
  if (device != "cpu") {
    auto [type, index] = llvm::StringRef(device).split(':');
    int64_t ordinal = 0;
    if (!index.empty() && index.getAsInteger(10, ordinal))
      return emitError(fileLoc) << "malformed device '" << device << "'";
    meta.device = DeviceAttr::get(ctx, type, ordinal);
  }
  meta.requiresGrad = tensor.value("requires_grad", false);
  // Metadata no tensor type admits (a negative size, strides of another rank) is a
  // malformed header, not a type to build.
  auto emit = [&] { return emitError(fileLoc) << "malformed tensor metadata: "; };
  if (failed(RefTensorType::verify(emit, meta.sizes, meta.dtype, meta.strides, meta.storageOffset,
                                   llvm::dyn_cast_or_null<DeviceAttr>(meta.device),
                                   meta.requiresGrad)))
    return failure();
  return meta;
}

FailureOr<ElementsAttr> TraceReader::readTensorData(const GraphInput &input, const Json &tensor,
                                                    const TensorMeta &meta) {
  const Json *storage = objectAt(refOf(tensor.at("storage")));
  if (!storage || !storage->contains("blob"))
    return emitError(fileLoc) << "the trace has no data for tensor '" << input.name << "'";
  llvm::Expected<ArrayRef<uint8_t>> blob = trace->getBlob(storage->at("blob").get<size_t>());
  if (!blob)
    return emitError(fileLoc) << llvm::toString(blob.takeError());
  SmallVector<int64_t> sizes, strides;
  for (const Json &size : tensor.at("shape"))
    sizes.push_back(size.get<int64_t>());
  for (const Json &stride : tensor.at("stride"))
    strides.push_back(stride.get<int64_t>());
  AsmResourceBlob resource;
  if (llvm::Error error =
          copyStrided(llvm::StringRef(reinterpret_cast<const char *>(blob->data()), blob->size()),
                      sizes, strides, tensor.value("storage_offset", 0),
                      getElementBytes(meta.dtype), BlobAllocator{resource}))
    return emitError(fileLoc) << "cannot read the data of '" << input.name
                              << "': " << llvm::toString(std::move(error));
  auto type = RankedTensorType::get(sizes, meta.dtype);
  return llvm::cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, getResourceName(input.name), std::move(resource)));
}

FailureOr<Value> TraceReader::addArgument(const GraphInput &input, const Json &tensor,
                                          const Json *dynamic) {
  FailureOr<TensorMeta> meta = parseTensorMeta(tensor, dynamic);
  if (failed(meta))
    return failure();
  Location loc = NameLoc::get(builder.getStringAttr(input.name), fileLoc);
  if (input.kind != "user_input") {
    FailureOr<ElementsAttr> initialValue = readTensorData(input, tensor, *meta);
    if (failed(initialValue))
      return failure();
    TensorMeta valueMeta;
    valueMeta.sizes = meta->sizes;
    valueMeta.dtype = meta->dtype;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(func);
    GlobalOp::create(
        builder, loc, builder.getStringAttr(input.name), builder.getStringAttr(input.kind),
        TypeAttr::get(BaseTensorType::get(ctx, /*isRef=*/false, valueMeta)), *initialValue);
  }
  Block &entry = func.getBody().front();
  BlockArgument arg = entry.addArgument(BaseTensorType::get(ctx, /*isRef=*/true, *meta), loc);
  arguments[input.traceId] = arg;
  argumentInputs.push_back(input);
  return Value(arg);
}

FailureOr<Value> TraceReader::tensorSource(int64_t id, const Json &tensor) {
  if (auto it = arguments.find(id); it != arguments.end())
    return it->second;
  // A tensor outside the entry module's tree (a global, a closure's, an attribute): state
  // the caller refreshes from its source before each call (`tgc.state_sources`; a
  // buffer, so the program may write it), a parameter when it is an nn.Parameter or a
  // leaf that requires grad (`w = torch.randn(3, requires_grad=True)` read by the
  // program: eager accumulates w.grad, and Dynamo lifts it as a graph input); a constant
  // when no stable source reaches it.
  if (!sources)
    sources = computeSources(*trace);
  std::string source = size_t(id) < sources->size() ? (*sources)[id] : "";
  bool parameter = tensor.value("parameter", false) || tensor.value("requires_grad", false);
  std::string name = "_tensor_constant" + std::to_string(constants++);
  bool sourced = !source.empty() && !throughHookDict(source);
  if (sourced)
    stateSources.push_back(builder.getNamedAttr(name, builder.getStringAttr(source)));
  return addArgument({name,
                      parameter ? "parameter"
                      : sourced ? "buffer"
                                : "constant",
                      id, true},
                     tensor);
}

/// Tensors from outside the entry module that the graph does not use are not inputs:
/// reading an object reads everything it reaches (`sys` reaches `sys.modules` and every
/// module's objects, other models among them), and such a tensor would be state the
/// caller must find before every call, through a path the program never took.
void TraceReader::dropUnusedFreeTensors() {
  Block &entry = func.getBody().front();
  for (size_t i = argumentInputs.size(); i-- > 0;) {
    const GraphInput &input = argumentInputs[i];
    if (!input.free || !entry.getArgument(i).use_empty())
      continue;
    entry.eraseArgument(i);
    if (Operation *global = SymbolTable::lookupSymbolIn(*module, input.name))
      global->erase();
    llvm::erase_if(stateSources,
                   [&](NamedAttribute source) { return source.getName() == input.name; });
    arguments.erase(input.traceId);
    argumentInputs.erase(argumentInputs.begin() + i);
  }
}

LogicalResult TraceReader::collectInputs() {
  const Json &header = trace->header();
  const Json &entry = header.at("entry");
  // The entry callable (or a bound method's self) roots the module tree.
  const Json *callable = objectAt(refOf(entry.at("callable")));
  Json root = entry.at("callable");
  if (callable && callable->value("kind", "") == "method")
    root = callable->at("self");
  // Parameters first, then buffers, as torch.export orders them.
  if (failed(collectModuleTensors(root, "", "_parameters")) ||
      failed(collectModuleTensors(root, "", "_buffers")))
    return failure();
  for (const GraphInput &input : moduleTensors) {
    const Json *tensor = objectAt(input.traceId);
    if (!tensor || tensor->value("kind", "") != "tensor")
      return emitError(fileLoc) << "'" << input.name << "' is not a tensor in the trace";
    if (failed(addArgument(input, *tensor)))
      return failure();
  }
  for (const Json &input : header.value("inputs", Json::array())) {
    int64_t id = input.at("tensor").get<int64_t>();
    const Json *tensor = objectAt(id);
    if (!tensor || tensor->value("kind", "") != "tensor")
      return emitError(fileLoc) << "input '" << input.value("name", "") << "' is not a tensor";
    const Json *dynamic = input.contains("dynamic") ? &input.at("dynamic") : nullptr;
    if (failed(
            addArgument({input.at("name").get<std::string>(), "user_input", id}, *tensor, dynamic)))
      return failure();
  }
  return success();
}

ArrayAttr TraceReader::buildSymbolsAttr() {
  SmallVector<Attribute> attrs;
  for (auto &[name, min, max, hint] : symbols)
    attrs.push_back(SymbolAttr::get(ctx, name, min, max,
                                    hint < 0 ? std::nullopt : std::optional<int64_t>(hint)));
  return ArrayAttr::get(ctx, attrs);
}

/// The runtime sizes every result before the graph runs, from the inputs' sizes: a
/// result whose size comes from a tensor's value (an unbacked symbol) cannot be one.
LogicalResult TraceReader::checkUnbackedResults() {
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    SmallVector<unsigned> used;
    collectSymbols(type, used);
    for (unsigned symbol : used) {
      if (symbol < numBackedSymbols)
        continue;
      Location where = fileLoc;
      func.walk([&](BindSymbolOp bind) {
        if (bind.getSymbol() == symbol)
          where = bind.getLoc();
      });
      auto kind = func.getResultAttrOfType<StringAttr>(i, attr::kKind);
      return emitError(where) << "a number from Tensor.item() is used as a size of "
                              << (kind && kind.getValue() == "user_output"
                                      ? "a tensor the program returns"
                                      : "a tensor the program keeps")
                              << " (" << type
                              << "); tgc sizes results from the inputs' sizes before the "
                              << "graph runs, so data-dependent result sizes are not supported";
    }
  }
  return success();
}

/// Hooks registered with register_hook before capture apply to the gradient of the graph
/// input from its first use on.
LogicalResult TraceReader::applyInputHooks(Interpreter &interpreter) {
  for (const GraphInput &input : argumentInputs) {
    const Json *tensor = objectAt(input.traceId);
    if (!tensor || !tensor->contains("hooks") || tensor->at("hooks").empty())
      continue;
    FailureOr<Var> tensorVar = interpreter.readValue(Json{{"ref", input.traceId}});
    FailureOr<std::vector<Var>> hooks = failure();
    if (succeeded(tensorVar))
      hooks = interpreter.readValues(tensor->at("hooks"));
    if (failed(hooks) || failed(interpreter.applyGradHooks(*tensorVar, *hooks, fileLoc,
                                                           Interpreter::HookOrigin::BeforeCapture)))
      return failure();
  }
  return success();
}

/// Calls the trace's entry (its callable with its arguments, under the saved-tensor hooks
/// active at capture) and returns what it returned; `entryCall` gets the arguments.
FailureOr<Var> TraceReader::callEntry(Interpreter &interpreter, CallArguments &entryCall) {
  const Json &entry = trace->header().at("entry");
  FailureOr<Var> callable = interpreter.readValue(entry.at("callable"));
  if (failed(callable))
    return failure();
  interpreter.setEntry(*callable);
  CallArguments call;
  for (const Json &arg : entry.value("args", Json::array())) {
    FailureOr<Var> value = interpreter.readValue(arg);
    if (failed(value))
      return failure();
    call.positional.push_back(*value);
  }
  Json kwargs = entry.value("kwargs", Json::object());
  for (auto &[name, arg] : kwargs.items()) {
    FailureOr<Var> value = interpreter.readValue(arg);
    if (failed(value))
      return failure();
    call.keywords.emplace_back(name, *value);
  }
  interpreter.setImportableModules(trace->header().value("modules", Json::object()));
  if (const auto methods = trace->header().find("tensor_methods");
      methods != trace->header().end() &&
      failed(interpreter.setTensorMethodOverloads(*methods, fileLoc)))
    return failure();
  if (const auto attributes = trace->header().find("tensor_attributes");
      attributes != trace->header().end()) {
    if (!attributes->is_array() ||
        !llvm::all_of(*attributes, [](const Json &name) { return name.is_string(); })) {
      emitError(fileLoc) << "malformed trace header: tensor_attributes is not a list of names";
      return failure();
    }
    interpreter.setTensorAttributes(attributes->get<std::vector<std::string>>());
  }
  // The grad mode `capture` was called in is the program's outside its own blocks. A
  // training step runs with grad enabled (tgc.load(train=True) differentiates only
  // then), whatever mode it was captured in.
  if (const auto mode = trace->header().find("grad_enabled"); mode != trace->header().end()) {
    if (!mode->is_boolean()) {
      emitError(fileLoc) << "malformed trace header: grad_enabled is not a bool";
      return failure();
    }
    interpreter.setEntryGradMode(training || mode->get<bool>());
  }
  // The saved-tensor hooks active when `capture` was called apply to the whole call.
  const Json &hooks = trace->header().value("saved_tensors_hooks", Json::array());
  if (hooks.size() > 1) {
    emitError(fileLoc) << "the trace has " << hooks.size()
                       << " saved-tensor hook pairs; torch applies only the innermost one";
    return failure();
  }
  if (!hooks.empty()) {
    FailureOr<std::vector<Var>> pair = interpreter.readValues(hooks.at(0));
    if (failed(pair))
      return failure();
    if (pair->size() != 2) {
      emitError(fileLoc) << "malformed trace header: a saved-tensor hook pair is not "
                            "[pack, unpack]";
      return failure();
    }
    interpreter.enterSavedTensorsHooks((*pair)[0], (*pair)[1], fileLoc);
  }
  entryCall = call;
  FailureOr<Var> result = interpreter.call(*callable, std::move(call), fileLoc);
  if (failed(result))
    return failure();
  if (!hooks.empty() && failed(interpreter.exitSavedTensorsHooks(fileLoc)))
    return failure();
  return result;
}

/// Records the inputs whose metadata the program changed in place (`x.t_()`): the
/// caller's tensor gets the new sizes/strides/offset after the call, as in eager. An
/// input that `out=` resized gets new storage instead (a replay `resize`).
LogicalResult TraceReader::recordInputMetadata(Interpreter &interpreter) {
  SmallVector<Attribute> metadata;
  for (auto [i, input] : llvm::enumerate(argumentInputs)) {
    if (input.kind != "user_input")
      continue;
    FailureOr<Var> tensor = interpreter.readValue(Json{{"ref", input.traceId}});
    if (failed(tensor) || !(*tensor)->is(Variable::Kind::Tensor))
      continue;
    if (llvm::any_of(interpreter.getSideEffects(), [&](const SideEffect &effect) {
          return effect.kind == SideEffect::Kind::Resize && effect.object == (*tensor)->object;
        }))
      continue;
    TensorMeta arrived = cast<BaseTensorType>(func.getArgument(i).getType()).getMeta();
    TensorMeta now =
        cast<BaseTensorType>(interpreter.getHeap().get((*tensor)->object).tensor.getType())
            .getMeta();
    auto offsetOf = [](const TensorMeta &m) {
      return m.storageOffset ? getConstantSize(m.storageOffset) : std::optional<int64_t>(0);
    };
    auto stridesOf = [&](const TensorMeta &m) {
      return m.strides.empty() ? TensorMeta::contiguousStrides(m.sizes, ctx) : m.strides;
    };
    if (now.sizes == arrived.sizes && stridesOf(now) == stridesOf(arrived) &&
        offsetOf(now) == offsetOf(arrived))
      continue;
    SmallVector<int64_t> sizes, strides;
    bool constant = offsetOf(now).has_value();
    for (AffineExpr e : now.sizes)
      if (std::optional<int64_t> c = getConstantSize(e))
        sizes.push_back(*c);
      else
        constant = false;
    for (AffineExpr e : stridesOf(now))
      if (std::optional<int64_t> c = getConstantSize(e))
        strides.push_back(*c);
      else
        constant = false;
    if (!constant) {
      emitError(fileLoc) << "the program changes the sizes or strides of input '" << input.name
                         << "' in place, and they depend on dynamic sizes";
      return failure();
    }
    metadata.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("input", builder.getStringAttr(input.name)),
         builder.getNamedAttr("sizes", builder.getI64ArrayAttr(sizes)),
         builder.getNamedAttr("strides", builder.getI64ArrayAttr(strides)),
         builder.getNamedAttr("offset", builder.getI64IntegerAttr(*offsetOf(now)))}));
  }
  if (!metadata.empty())
    module->getOperation()->setAttr(attr::kInputMetadata, builder.getArrayAttr(metadata));
  return success();
}

void TraceReader::recordOutputLayouts(ArrayRef<Value> outputs) {
  SmallVector<std::pair<int64_t, TensorMeta>> metas;
  for (auto [i, output] : llvm::enumerate(outputs))
    metas.emplace_back(i, cast<BaseTensorType>(output.getType()).getMeta());
  if (ArrayAttr layouts = frontend::outputLayoutsAttr(builder, metas))
    module->getOperation()->setAttr(attr::kOutputLayouts, layouts);
}

/// The argument and result attributes of @forward and the module's Python-level
/// attributes (replay, state sources, guards, symbols).
void TraceReader::annotateSignature() {
  for (auto [i, input] : llvm::enumerate(argumentInputs)) {
    func.setArgAttrs(i, getGraphInputAttrs(ctx, input.kind, input.name));
  }
  for (unsigned i = 0; i < numUserOutputs; ++i)
    func.setResultAttr(i, attr::kKind, builder.getStringAttr("user_output"));
  for (auto [i, state] : llvm::enumerate(replay.tensors)) {
    unsigned index = numUserOutputs + i;
    func.setResultAttr(index, attr::kKind, builder.getStringAttr(attr::kPythonState));
    func.setResultAttr(index, attr::kName, builder.getStringAttr(state.slot));
    func.setResultAttr(index, attr::kOutput, builder.getI64IntegerAttr(index));
  }
  if (replay.actions && !replay.actions.empty())
    module->getOperation()->setAttr(attr::kReplay, replay.actions);
  if (!stateSources.empty())
    module->getOperation()->setAttr(attr::kStateSources, DictionaryAttr::get(ctx, stateSources));
  if (guards && !guards.empty())
    module->getOperation()->setAttr(attr::kGuards, guards);
  module->getOperation()->setAttr(TgcDialect::kSymbolsAttrName, buildSymbolsAttr());
}

OwningOpRef<ModuleOp> TraceReader::read() {
  ctx->loadDialect<TgcDialect, func::FuncDialect, arith::ArithDialect>();
  llvm::Expected<std::unique_ptr<TraceFile>> opened = TraceFile::open(path);
  if (!opened) {
    emitError(fileLoc) << llvm::toString(opened.takeError());
    return nullptr;
  }
  trace = std::move(*opened);
  module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, fileLoc, "forward", builder.getFunctionType({}, {}));
  Block *entryBlock = func.addEntryBlock();
  try {
    if (failed(collectInputs()))
      return nullptr;
    builder.setInsertionPointToEnd(entryBlock);
    Interpreter interpreter(*trace, builder, [this](int64_t id, const Json &tensor) {
      return tensorSource(id, tensor);
    });
    std::vector<SymbolRange> ranges;
    for (auto &[name, min, max, hint] : symbols)
      ranges.push_back({min, max});
    interpreter.setSymbolRanges(std::move(ranges));
    interpreter.setTraining(training);
    if (breakPath)
      interpreter.enableGraphBreaks(breakPath, entryBlock);
    if (failed(applyInputHooks(interpreter)))
      return nullptr;
    CallArguments entryCall;
    FailureOr<Var> result = callEntry(interpreter, entryCall);
    if (failed(result))
      return nullptr;
    SmallVector<Value> outputs;
    if (failed(interpreter.flattenTensors(*result, outputs, fileLoc, /*allowReplayed=*/true)))
      return nullptr;
    // Sizes from Tensor.item() (unbacked symbols) follow the trace's own symbols.
    numBackedSymbols = symbols.size();
    for (auto [i, name] : llvm::enumerate(interpreter.getUnbackedSymbols())) {
      const SymbolRange &range = interpreter.getSymbolRanges()[numBackedSymbols + i];
      symbols.emplace_back(name, range.min, range.max, /*no hint=*/-1);
    }
    int64_t nextTensor = 0;
    FailureOr<Attribute> structure = interpreter.outputStructure(*result, nextTensor, fileLoc);
    if (failed(structure))
      return nullptr;
    module->getOperation()->setAttr(attr::kOutputStructure, *structure);
    numUserOutputs = outputs.size();
    recordOutputLayouts(outputs);
    if (failed(recordInputMetadata(interpreter)))
      return nullptr;
    llvm::DenseMap<int64_t, std::string> userInputs;
    for (const GraphInput &input : argumentInputs)
      if (input.kind == "user_input")
        userInputs[input.traceId] = input.name;
    FailureOr<Replay> built =
        buildReplay(*trace, interpreter, numUserOutputs, userInputs, ctx, fileLoc);
    if (failed(built))
      return nullptr;
    replay = std::move(*built);
    guards = buildGuards(*trace, interpreter, entryCall, ctx);
    for (const StateTensor &state : replay.tensors)
      outputs.push_back(state.value);
    func::ReturnOp::create(builder, fileLoc, outputs);
  } catch (const Json::exception &e) {
    emitError(fileLoc) << "malformed trace header: " << e.what();
    return nullptr;
  }
  dropUnusedFreeTensors();
  func.setFunctionType(builder.getFunctionType(entryBlock->getArgumentTypes(),
                                               func.front().getTerminator()->getOperandTypes()));
  annotateSignature();
  if (failed(checkUnbackedResults()))
    return nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

OwningOpRef<ModuleOp> tgc::trace::readTrace(llvm::StringRef path, MLIRContext *ctx, bool training) {
  return TraceReader(path, ctx, training).read();
}

FailureOr<GraphProgram> tgc::trace::readTraceProgram(llvm::StringRef path, MLIRContext *ctx,
                                                     bool training, unsigned maxPaths) {
  // Depth first over the branch outcomes: each run follows `next` and takes `true`
  // at the branches past it; the next run flips the last `true` it took.
  std::vector<PathTrace> paths;
  std::vector<bool> next;
  while (true) {
    GraphBreakPath breaks{next, 0};
    OwningOpRef<ModuleOp> module = TraceReader(path, ctx, training, &breaks).read();
    if (!module)
      return failure();
    breaks.decisions.resize(breaks.next);
    if (paths.size() == maxPaths)
      return emitError(FileLineColLoc::get(ctx, path, 0, 0))
             << "graph break: the program has more than " << maxPaths
             << " paths through branches on tensor values";
    paths.push_back({std::move(module), breaks.decisions});
    next = breaks.decisions;
    while (!next.empty() && !next.back())
      next.pop_back();
    if (next.empty())
      break;
    next.back() = false;
  }
  if (paths.size() == 1 && paths[0].decisions.empty() &&
      paths[0].module->getBody()
              ->walk([](Operation *op) {
                return isa<BreakCallOp, BreakHookOp, BreakModuleHookOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted() == false) {
    // No graph break: the program is its one graph, as readTrace reads it.
    GraphProgram program;
    ModuleOp graph = *paths[0].module;
    auto func = graph.lookupSymbol<func::FuncOp>("forward");
    std::vector<int64_t> inputs;
    std::vector<std::string> inputNames;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto kind = func.getArgAttrOfType<StringAttr>(i, attr::kKind);
      if (kind && kind.getValue() == "user_input") {
        inputs.push_back(inputNames.size());
        auto name = func.getArgAttrOfType<StringAttr>(i, attr::kName);
        inputNames.push_back(name ? name.str() : "");
      }
    }
    recordProgramNode(graph, inputs, /*outputs=*/{}, returnStep(ctx));
    recordProgramInputs(graph, inputNames);
    program.graphs.push_back(std::move(paths[0].module));
    return program;
  }
  return splitGraphBreaks(paths, ctx);
}
