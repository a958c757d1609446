// Reader for torch.export archives (.pt2): the serialized ExportedProgram to tgc IR.
//
// The archive layout and JSON schema are described in docs/pt2-format.md. Each node's
// JSON arguments are resolved into AtenValues (SymInts into size expressions, names into
// SSA values) and AtenCallBuilder turns the call into a tgc op, as it does for the
// bytecode interpreter; the reader then checks the op's results against the metadata
// the export recorded.
#include "tgc/Frontend/Export/ExportReader.h"

#include "ExportFormat.h"
#include "Frontend/Common/AtenCall.h"
#include "Frontend/Common/Autocast.h"
#include "Frontend/Common/CondRegions.h"
#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/GraphInputs.h"
#include "Frontend/Common/NodeAdapters.h"
#include "Frontend/Common/OutputLayouts.h"
#include "Frontend/Common/StridedCopy.h"
#include "Frontend/Common/SymbolicSizes.h"
#include "Pt2Archive.h"
#include "SympyExpr.h"
#include "WeightsSource.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <numeric>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::pt2;

/// The serialization schema major version tgc reads (torch 2.6 - 2.15 write 8.x).
static constexpr int64_t kSchemaMajor = 8;

/// The program torch.export.save writes (models/model.json and its weights); an
/// archive made with package_pt2 may hold others beside it.
static constexpr llvm::StringLiteral kProgramName = "model";

/// The program's JSON in the archives torch 2.6 and 2.7 wrote, which have no folders
/// and keep the weights in torch.save zips (docs/pt2-format.md §10).
static constexpr llvm::StringLiteral kLegacyProgramMember = "serialized_exported_program.json";

//===----------------------------------------------------------------------===//
// ExportReader
//===----------------------------------------------------------------------===//

namespace {

/// A graph input as the signature describes it.
struct GraphInput {
  std::string valueName; ///< placeholder name, keys tensor_values
  std::string kind;      ///< parameter | buffer | constant | user_input
  std::string name;      ///< fqn, or the user input's name
};

/// A graph output as the signature describes it.
struct GraphOutput {
  std::string valueName;
  std::string kind;   ///< user_output | buffer_mutation | user_input_mutation
  std::string target; ///< for mutations: the buffer fqn / user input name
};

class ExportReader {
public:
  ExportReader(llvm::StringRef path, MLIRContext *ctx)
      : path(path.str()), ctx(ctx), archiveLoc(FileLineColLoc::get(ctx, path, 0, 0)),
        currentLoc(archiveLoc), builder(ctx), atenCalls(builder) {}

  OwningOpRef<ModuleOp> read();

private:
  // The archive and the program's JSON.
  LogicalResult loadProgram();
  FailureOr<Json> readJson(llvm::StringRef member);
  LogicalResult checkSchemaVersion();
  FailureOr<std::unique_ptr<WeightsSource>> openWeights(bool legacyLayout);

  // Symbols and tensor metadata.
  AffineExpr symbolFor(llvm::StringRef name);
  FailureOr<AffineExpr> parseSymInt(const Json &symInt, llvm::StringRef valueName);
  FailureOr<AffineExpr> resolveSymInt(const Json &symInt);
  FailureOr<TensorMeta> parseTensorMeta(const Json &meta, llvm::StringRef valueName);
  FailureOr<TensorMeta> valueMeta(llvm::StringRef valueName);
  FailureOr<Type> parseDType(const Json &code, llvm::StringRef valueName);
  Attribute parseDevice(const Json &device);
  void addRangeConstraintSymbols();
  ArrayAttr buildSymbolsAttr();

  // Signature, globals and weights.
  FailureOr<GraphInput> parseInputSpec(const Json &spec);
  FailureOr<GraphOutput> parseOutputSpec(const Json &spec);
  LogicalResult buildEntryFunction();
  FailureOr<ElementsAttr> readInitialValue(llvm::StringRef fqn, const TensorMeta &meta);
  LogicalResult createGlobal(const GraphInput &input, const TensorMeta &meta);
  LogicalResult buildReturn(func::FuncOp func);
  LogicalResult recordOutputStructure(ArrayRef<Attribute> userLeaves);
  std::optional<Attribute> constantUserOutput(const Json &spec);

  // Nodes.
  LogicalResult convertNode(const Json &node);
  LogicalResult checkTensorMetadata(const Json &node);
  LogicalResult convertBroadcastTensors(const Json &node);
  LogicalResult convertMeshgrid(const Json &node);
  FailureOr<Value> buildExpand(Value tensor, ArrayRef<AffineExpr> sizes);
  Location nodeLocation(const Json &node, llvm::StringRef name);
  LogicalResult parseNodeOutputs(const Json &node, SmallVectorImpl<RecordedResult> &outputs);
  FailureOr<Value> lookupValue(llvm::StringRef valueName);
  FailureOr<std::optional<AtenValue>> convertArgument(const Json &argument, llvm::StringRef name);
  FailureOr<std::vector<AtenArgument>> convertArguments(const Json &node);
  LogicalResult bindOutputs(ValueRange results, llvm::ArrayRef<RecordedResult> outputs);

  // Higher-order ops: regions of the program kept as nested graphs.
  LogicalResult convertHigherOrder(const Json &node, llvm::StringRef target);
  LogicalResult convertCond(const Json &node);
  FailureOr<SmallVector<Value>> inlineGraph(const Json &subgraph,
                                            llvm::ArrayRef<AtenValue> operands);

  /// An error about the node being converted (or the archive), at its location.
  InFlightDiagnostic emitNodeError() {
    InFlightDiagnostic diag = emitError(currentLoc);
    if (!currentNode.empty())
      diag << "node '" << currentNode << "': ";
    return diag;
  }

  std::string path;
  MLIRContext *ctx;
  Location archiveLoc;
  /// Where errors about what is being read now go: the node's source line, or the
  /// archive.
  Location currentLoc;
  std::string currentNode;
  /// What is being read, for reports of malformed JSON.
  std::string currentMember = "the archive";
  OpBuilder builder;
  AtenCallBuilder atenCalls;

  std::unique_ptr<Pt2Archive> archive;
  std::unique_ptr<WeightsSource> weights;
  Json program;
  const Json *graph = nullptr;
  OwningOpRef<ModuleOp> module;

  llvm::StringMap<unsigned> symbolIndex;
  SmallVector<std::string> symbolNames;
  /// The value each symbol had at capture (a SymInt's `hint` when the SymInt is just
  /// that symbol), by symbol index.
  DenseMap<unsigned, int64_t> symbolHints;
  /// The i64 value of each unbacked symbol (`u0`) that an item() result is, by symbol
  /// index: what a size expression of it (`u0 - 22`, an `_operator` node) computes from.
  DenseMap<unsigned, Value> unbackedValues;
  /// The symbol a graph int's recorded expression is, when it is just one (`u0`).
  std::optional<AffineExpr> symbolOfInt(llvm::StringRef name);
  llvm::StringMap<Value> values;
  /// The names of the tensors nodes and the graph's outputs read (collectReadNames).
  llvm::StringSet<> readNames;
  void collectReadNames(const Json &value);
  /// The `torch.autocast` regions the node being converted is in, outermost first.
  SmallVector<AutocastRegion> autocastRegions;
};

} // namespace

//===----------------------------------------------------------------------===//
// The archive and the program's JSON
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> ExportReader::read() {
  ctx->getOrLoadDialect<TgcDialect>();
  try {
    if (failed(loadProgram()) || failed(buildEntryFunction()))
      return nullptr;
    module->getOperation()->setAttr(TgcDialect::kSymbolsAttrName, buildSymbolsAttr());
  } catch (const Json::exception &e) {
    emitNodeError() << "malformed " << currentMember << ": " << e.what();
    return nullptr;
  }
  if (failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

LogicalResult ExportReader::loadProgram() {
  archive = Pt2Archive::open(path, archiveLoc);
  if (!archive)
    return failure();
  if (archive->contains("byteorder")) {
    FailureOr<std::string> order = archive->read("byteorder", archiveLoc);
    if (failed(order))
      return failure();
    if (llvm::StringRef(*order).trim() != "little")
      return emitError(archiveLoc)
             << "the archive's tensor data is '" << llvm::StringRef(*order).trim()
             << "' endian; tgc reads little-endian data only";
  }
  bool legacyLayout = archive->contains(kLegacyProgramMember);
  std::string programMember =
      legacyLayout ? kLegacyProgramMember.str() : ("models/" + kProgramName + ".json").str();
  FailureOr<Json> json = readJson(programMember);
  if (failed(json))
    return failure();
  program = std::move(*json);
  if (failed(checkSchemaVersion()))
    return failure();
  FailureOr<std::unique_ptr<WeightsSource>> source = openWeights(legacyLayout);
  if (failed(source))
    return failure();
  weights = std::move(*source);
  graph = &program.at("graph_module").at("graph");
  return success();
}

/// The three ways torch has stored a program's tensors (docs/pt2-format.md §8, §10).
FailureOr<std::unique_ptr<WeightsSource>> ExportReader::openWeights(bool legacyLayout) {
  // torch 2.6 - 2.7: torch.save zips beside serialized_exported_program.json.
  if (legacyLayout)
    return createPickledSource(*archive, {"serialized_state_dict.pt", "serialized_constants.pt"},
                               ctx);
  // torch 2.8: the same zips, as data/weights/model.pt and data/constants/model.pt.
  std::string weightsConfig = ("data/weights/" + kProgramName + "_weights_config.json").str();
  std::string weightsPickle = ("data/weights/" + kProgramName + ".pt").str();
  if (!archive->contains(weightsConfig) && archive->contains(weightsPickle))
    return createPickledSource(
        *archive, {weightsPickle, ("data/constants/" + kProgramName + ".pt").str()}, ctx);
  // torch >= 2.9: a raw file per storage, described by JSON configs.
  return createPayloadConfigSource(*archive, kProgramName, archiveLoc);
}

FailureOr<Json> ExportReader::readJson(llvm::StringRef member) {
  FailureOr<std::string> text = archive->read(member, archiveLoc);
  if (failed(text))
    return failure();
  currentMember = member.str();
  try {
    return parseJson(quoteNonFiniteLiterals(*text));
  } catch (const Json::exception &e) {
    return emitError(archiveLoc) << "member '" << member << "' is not valid JSON: " << e.what();
  }
}

LogicalResult ExportReader::checkSchemaVersion() {
  const Json &version = program.at("schema_version");
  // torch 2.1 and 2.2 wrote a plain integer (1, 2); later releases {major, minor}.
  if (version.is_number_integer())
    return emitError(archiveLoc) << "torch.export schema version " << version.get<int64_t>()
                                 << " is not supported (tgc reads " << kSchemaMajor << ".x)";
  int64_t major = version.at("major").get<int64_t>();
  int64_t minor = version.at("minor").get<int64_t>();
  if (major == kSchemaMajor)
    return success();
  return emitError(archiveLoc) << "torch.export schema version " << major << "." << minor
                               << " is not supported (tgc reads " << kSchemaMajor << ".x)";
}

//===----------------------------------------------------------------------===//
// Symbols and tensor metadata
//===----------------------------------------------------------------------===//

AffineExpr ExportReader::symbolFor(llvm::StringRef name) {
  auto [it, inserted] = symbolIndex.try_emplace(name, symbolNames.size());
  if (inserted)
    symbolNames.push_back(name.str());
  return getAffineSymbolExpr(it->second, ctx);
}

FailureOr<AffineExpr> ExportReader::parseSymInt(const Json &symInt, llvm::StringRef valueName) {
  std::string kind = unionKind(symInt);
  if (kind == "as_int")
    return getAffineConstantExpr(unionValue(symInt).get<int64_t>(), ctx);
  if (kind != "as_expr")
    return emitNodeError() << "value '" << valueName << "': expected a SymInt, got '"
                           << symInt.dump() << "'";
  std::string text = unionValue(symInt).at("expr_str").get<std::string>();
  llvm::Expected<AffineExpr> expr =
      parseSympyExpr(text, ctx, [&](llvm::StringRef name) { return symbolFor(name); });
  if (!expr)
    return emitNodeError() << "value '" << valueName << "': cannot use the size expression '"
                           << text << "': " << llvm::toString(expr.takeError());
  const Json &body = unionValue(symInt);
  auto symbol = llvm::dyn_cast<AffineSymbolExpr>(*expr);
  const Json *hint = body.contains("hint") ? &body.at("hint") : nullptr;
  if (symbol && hint && unionKind(*hint) == "as_int" && unionValue(*hint).is_number_integer())
    symbolHints.try_emplace(symbol.getPosition(), unionValue(*hint).get<int64_t>());
  return *expr;
}

/// A SymInt argument: a literal, or a name of graph.sym_int_values.
std::optional<AffineExpr> ExportReader::symbolOfInt(llvm::StringRef name) {
  const Json &symIntValues = graph->at("sym_int_values");
  auto it = symIntValues.find(std::string(name));
  if (it == symIntValues.end() || unionKind(*it) != "as_expr")
    return std::nullopt;
  const Json &text = unionValue(*it).at("expr_str");
  if (!text.is_string() ||
      !llvm::StringRef(text.get_ref<const std::string &>()).starts_with("Symbol("))
    return std::nullopt;
  FailureOr<AffineExpr> expr = parseSymInt(*it, name);
  if (failed(expr) || !llvm::isa<AffineSymbolExpr>(*expr))
    return std::nullopt;
  return *expr;
}

FailureOr<AffineExpr> ExportReader::resolveSymInt(const Json &symInt) {
  std::string kind = unionKind(symInt);
  if (kind == "as_int")
    return getAffineConstantExpr(unionValue(symInt).get<int64_t>(), ctx);
  if (kind != "as_name")
    return emitNodeError() << "expected a SymInt argument, got '" << symInt.dump() << "'";
  std::string name = unionValue(symInt).get<std::string>();
  const Json &symIntValues = graph->at("sym_int_values");
  if (!symIntValues.contains(name))
    return emitNodeError() << "unknown symbolic int '" << name << "'";
  return parseSymInt(symIntValues.at(name), name);
}

FailureOr<Type> ExportReader::parseDType(const Json &code, llvm::StringRef valueName) {
  std::optional<TorchDType> dtype = lookupDTypeByCode(code.get<int64_t>(), ctx);
  if (!dtype)
    return emitNodeError() << "value '" << valueName << "' has unknown dtype code "
                           << code.get<int64_t>();
  if (!dtype->type)
    return emitNodeError() << "value '" << valueName << "' has dtype " << dtype->name
                           << ", which tgc does not support";
  return dtype->type;
}

/// Null for the CPU (what types leave implicit), a #tgc.device otherwise.
Attribute ExportReader::parseDevice(const Json &device) {
  std::string kind = device.at("type").get<std::string>();
  const Json *index = device.contains("index") ? &device.at("index") : nullptr;
  if (kind == "cpu")
    return {};
  return DeviceAttr::get(ctx, kind, index && !index->is_null() ? index->get<int64_t>() : -1);
}

FailureOr<TensorMeta> ExportReader::parseTensorMeta(const Json &json, llvm::StringRef valueName) {
  TensorMeta meta;
  FailureOr<Type> dtype = parseDType(json.at("dtype"), valueName);
  if (failed(dtype))
    return failure();
  meta.dtype = *dtype;
  if (json.contains("layout") && json.at("layout").get<int64_t>() != 7)
    return emitNodeError() << "value '" << valueName
                           << "' is not a strided (dense) tensor; tgc reads dense tensors only";
  for (const Json &size : json.at("sizes")) {
    FailureOr<AffineExpr> expr = parseSymInt(size, valueName);
    if (failed(expr))
      return failure();
    if (getConstantSize(*expr).value_or(0) < 0)
      return emitNodeError() << "value '" << valueName << "' has a negative size";
    meta.sizes.push_back(*expr);
  }
  for (const Json &stride : json.at("strides")) {
    FailureOr<AffineExpr> expr = parseSymInt(stride, valueName);
    if (failed(expr))
      return failure();
    meta.strides.push_back(*expr);
  }
  if (meta.strides.size() != meta.sizes.size())
    return emitNodeError() << "value '" << valueName << "' has " << meta.sizes.size()
                           << " sizes but " << meta.strides.size() << " strides";
  FailureOr<AffineExpr> offset = parseSymInt(json.at("storage_offset"), valueName);
  if (failed(offset))
    return failure();
  if (getConstantSize(*offset) != 0)
    meta.storageOffset = *offset;
  meta.device = parseDevice(json.at("device"));
  meta.requiresGrad = json.contains("requires_grad") && json.at("requires_grad").get<bool>();
  return meta;
}

FailureOr<TensorMeta> ExportReader::valueMeta(llvm::StringRef valueName) {
  const Json &tensorValues = graph->at("tensor_values");
  if (!tensorValues.contains(valueName))
    return emitNodeError() << "tensor '" << valueName << "' has no metadata in tensor_values";
  return parseTensorMeta(tensorValues.at(valueName), valueName);
}

/// Symbols bounded by range_constraints but not seen in the inputs come after those.
void ExportReader::addRangeConstraintSymbols() {
  if (!program.contains("range_constraints"))
    return;
  for (const auto &[name, range] : program.at("range_constraints").items())
    if (!name.empty() && llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      symbolFor(name);
}

ArrayAttr ExportReader::buildSymbolsAttr() {
  SmallVector<Attribute> symbols;
  const Json *ranges =
      program.contains("range_constraints") ? &program.at("range_constraints") : nullptr;
  for (const std::string &name : symbolNames) {
    int64_t min = 0;
    std::optional<int64_t> max;
    const Json *range = ranges && ranges->contains(name) ? &ranges->at(name) : nullptr;
    if (range && range->is_object()) {
      if (range->contains("min_val") && range->at("min_val").is_number_integer())
        min = range->at("min_val").get<int64_t>();
      if (range->contains("max_val") && range->at("max_val").is_number_integer())
        max = range->at("max_val").get<int64_t>();
    }
    std::optional<int64_t> hint;
    if (auto it = symbolHints.find(symbols.size()); it != symbolHints.end())
      hint = it->second;
    symbols.push_back(SymbolAttr::get(ctx, name, min, max, hint));
  }
  return ArrayAttr::get(ctx, symbols);
}

//===----------------------------------------------------------------------===//
// Signature, globals and weights
//===----------------------------------------------------------------------===//

FailureOr<GraphInput> ExportReader::parseInputSpec(const Json &spec) {
  std::string kind = unionKind(spec);
  if (kind.empty())
    return emitNodeError() << "malformed input spec '" << spec.dump() << "'";
  const Json &body = unionValue(spec);
  auto placeholder = [&](llvm::StringRef kindName, const char *nameKey) -> GraphInput {
    return {body.at("arg").at("name").get<std::string>(), kindName.str(),
            body.at(nameKey).get<std::string>()};
  };
  if (kind == "parameter")
    return placeholder("parameter", "parameter_name");
  if (kind == "buffer")
    return placeholder("buffer", "buffer_name");
  if (kind == "tensor_constant")
    return placeholder("constant", "tensor_constant_name");
  if (kind == "user_input") {
    const Json &argument = body.at("arg");
    if (unionKind(argument) != "as_tensor")
      return emitNodeError() << "user input '" << argument.dump()
                             << "' is not a tensor; tgc supports tensor inputs only for now";
    std::string name = unionValue(argument).at("name").get<std::string>();
    return GraphInput{name, "user_input", name};
  }
  return emitNodeError() << "input of kind '" << kind
                         << "' is not supported yet (tgc supports parameters, buffers, tensor "
                            "constants and tensor user inputs)";
}

FailureOr<GraphOutput> ExportReader::parseOutputSpec(const Json &spec) {
  std::string kind = unionKind(spec);
  if (kind.empty())
    return emitNodeError() << "malformed output spec '" << spec.dump() << "'";
  const Json &body = unionValue(spec);
  if (kind == "user_output") {
    const Json &argument = body.at("arg");
    if (unionKind(argument) != "as_tensor")
      return emitNodeError() << "user output '" << argument.dump()
                             << "' is not a tensor; tgc supports tensor outputs only for now";
    return GraphOutput{unionValue(argument).at("name").get<std::string>(), kind, ""};
  }
  if (kind == "buffer_mutation")
    return GraphOutput{body.at("arg").at("name").get<std::string>(), kind,
                       body.at("buffer_name").get<std::string>()};
  if (kind == "user_input_mutation")
    return GraphOutput{body.at("arg").at("name").get<std::string>(), kind,
                       body.at("user_input_name").get<std::string>()};
  return emitNodeError() << "output of kind '" << kind << "' is not supported yet";
}

LogicalResult ExportReader::buildEntryFunction() {
  module = ModuleOp::create(archiveLoc);
  builder.setInsertionPointToEnd(module->getBody());
  const Json &signature = program.at("graph_module").at("signature");
  SmallVector<GraphInput> inputs;
  SmallVector<Type> argTypes;
  for (const Json &spec : signature.at("input_specs")) {
    FailureOr<GraphInput> input = parseInputSpec(spec);
    if (failed(input))
      return failure();
    FailureOr<TensorMeta> meta = valueMeta(input->valueName);
    if (failed(meta))
      return failure();
    if (input->kind != "user_input" && failed(createGlobal(*input, *meta)))
      return failure();
    argTypes.push_back(BaseTensorType::get(ctx, /*isRef=*/true, *meta));
    inputs.push_back(std::move(*input));
  }
  addRangeConstraintSymbols();

  auto func =
      func::FuncOp::create(builder, archiveLoc, "forward", builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    BlockArgument arg = entry->getArgument(i);
    arg.setLoc(NameLoc::get(builder.getStringAttr(input.name), archiveLoc));
    values[input.valueName] = arg;
    func.setArgAttrs(i, getGraphInputAttrs(ctx, input.kind, input.name));
  }

  builder.setInsertionPointToEnd(entry);
  for (const Json &node : graph->at("nodes"))
    collectReadNames(node.at("inputs"));
  collectReadNames(graph->at("outputs"));
  for (const Json &node : graph->at("nodes"))
    if (failed(convertNode(node)))
      return failure();
  currentNode.clear();
  currentLoc = archiveLoc;
  return buildReturn(func);
}

LogicalResult ExportReader::buildReturn(func::FuncOp func) {
  const Json &signature = program.at("graph_module").at("signature");
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  // What each user output is in the returned value: a tensor result's index, or a
  // constant the module returned (None, a number, a bool, a string).
  SmallVector<Attribute> userLeaves;
  // The user outputs' layouts as the export recorded them (eager's strides).
  SmallVector<std::pair<int64_t, TensorMeta>> userMetas;
  int64_t numTensorOutputs = 0;
  for (const Json &spec : signature.at("output_specs")) {
    if (std::optional<Attribute> constant = constantUserOutput(spec)) {
      userLeaves.push_back(*constant);
      continue;
    }
    FailureOr<GraphOutput> output = parseOutputSpec(spec);
    if (failed(output))
      return failure();
    if (unionKind(spec) == "user_output") {
      const Json &tensorValues = graph->at("tensor_values");
      if (tensorValues.contains(output->valueName)) {
        FailureOr<TensorMeta> meta = valueMeta(output->valueName);
        if (failed(meta))
          return failure();
        userMetas.emplace_back(numTensorOutputs, *meta);
      }
      userLeaves.push_back(builder.getI64IntegerAttr(numTensorOutputs++));
    }
    FailureOr<Value> value = lookupValue(output->valueName);
    if (failed(value))
      return failure();
    results.push_back(*value);
    NamedAttrList attrs;
    attrs.set(attr::kKind, builder.getStringAttr(output->kind));
    if (!output->target.empty())
      attrs.set(attr::kTarget, builder.getStringAttr(output->target));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  if (failed(recordOutputStructure(userLeaves)))
    return failure();
  if (ArrayAttr layouts = frontend::outputLayoutsAttr(builder, userMetas))
    module->getOperation()->setAttr(attr::kOutputLayouts, layouts);
  func::ReturnOp::create(builder, archiveLoc, results);
  func.setFunctionType(
      builder.getFunctionType(func.getArgumentTypes(), ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

/// The structure (model.json's `output_structure`, as the trace reader records it) of the
/// pytree spec `spec` (torch.utils._pytree's JSON), whose leaves are `leaves` from
/// `nextLeaf` on; nullopt for a node type it does not describe.
static std::optional<Attribute> pytreeStructure(const Json &spec, ArrayRef<Attribute> leaves,
                                                size_t &nextLeaf, OpBuilder &b) {
  if (!spec.is_object() || !spec.contains("type") || !spec.contains("children_spec") ||
      !spec.at("children_spec").is_array())
    return std::nullopt;
  const Json &type = spec.at("type");
  const Json &children = spec.at("children_spec");
  auto tagged = [&](llvm::StringRef tag, Attribute payload) -> Attribute {
    return b.getDictionaryAttr(b.getNamedAttr(tag, payload));
  };
  if (type.is_null())
    return children.empty() && nextLeaf < leaves.size()
               ? std::optional<Attribute>(leaves[nextLeaf++])
               : std::nullopt;
  if (!type.is_string())
    return std::nullopt;
  const std::string &name = type.get_ref<const std::string &>();
  if (name == "builtins.NoneType")
    return tagged("const", b.getUnitAttr());
  SmallVector<Attribute> items;
  for (const Json &child : children) {
    std::optional<Attribute> item = pytreeStructure(child, leaves, nextLeaf, b);
    if (!item)
      return std::nullopt;
    items.push_back(*item);
  }
  // (A namedtuple comes back as a plain tuple, as from a trace.)
  if (name == "builtins.tuple" || name == "collections.namedtuple")
    return tagged("tuple", b.getArrayAttr(items));
  if (name == "builtins.list")
    return tagged("list", b.getArrayAttr(items));
  if (name != "builtins.dict" && name != "collections.OrderedDict")
    return std::nullopt;
  // A dict's context is the JSON list of its keys.
  const Json &context = spec.contains("context") ? spec.at("context") : Json();
  Json keys = context.is_string()
                  ? Json::parse(context.get_ref<const std::string &>(), nullptr, false)
                  : Json();
  if (!keys.is_array() || keys.size() != items.size())
    return std::nullopt;
  SmallVector<Attribute> entries;
  for (auto [key, item] : llvm::zip_equal(keys, items)) {
    Attribute keyAttr;
    if (key.is_string())
      keyAttr = b.getStringAttr(key.get_ref<const std::string &>());
    else if (key.is_number_integer())
      keyAttr = b.getI64IntegerAttr(key.get<int64_t>());
    else
      return std::nullopt;
    entries.push_back(b.getArrayAttr({keyAttr, item}));
  }
  return tagged("dict", b.getArrayAttr(entries));
}

/// The structure of a user output that is a constant (`{"const": value}`), or nullopt
/// for any other output spec.
std::optional<Attribute> ExportReader::constantUserOutput(const Json &spec) {
  if (unionKind(spec) != "user_output" || !unionValue(spec).is_object() ||
      !unionValue(spec).contains("arg"))
    return std::nullopt;
  const Json &argument = unionValue(spec).at("arg");
  std::string kind = unionKind(argument);
  const Json &value = unionValue(argument);
  Attribute constant;
  if (kind == "as_none")
    constant = builder.getUnitAttr();
  else if (kind == "as_bool" && value.is_boolean())
    constant = builder.getBoolAttr(value.get<bool>());
  else if (kind == "as_int" && value.is_number_integer())
    constant = builder.getI64IntegerAttr(value.get<int64_t>());
  else if (kind == "as_float" && value.is_number())
    constant = builder.getF64FloatAttr(value.get<double>());
  else if (kind == "as_string" && value.is_string())
    constant = builder.getStringAttr(value.get_ref<const std::string &>());
  else
    return std::nullopt;
  return builder.getDictionaryAttr(builder.getNamedAttr("const", constant));
}

/// Records what the exported module returns (its call signature's out_spec, whose leaves
/// are `userLeaves`) as the module's output structure, so that `tgc.load` returns eager's
/// tuples, lists, dicts and constants. Left out (the tensors come back flat) where the
/// spec is absent or holds a type other than tuples, lists, dicts and None; then a
/// constant output, which only the structure can return, is an error.
LogicalResult ExportReader::recordOutputStructure(ArrayRef<Attribute> userLeaves) {
  std::optional<Attribute> structure;
  const Json &graphModule = program.at("graph_module");
  const Json &callGraph = graphModule.value("module_call_graph", Json());
  for (const Json &entry : callGraph.is_array() ? callGraph : Json::array()) {
    if (!entry.is_object() || entry.value("fqn", Json()) != Json("") ||
        !entry.contains("signature") || !entry.at("signature").is_object())
      continue;
    const Json &outSpec = entry.at("signature").value("out_spec", Json());
    Json serialized = outSpec.is_string()
                          ? Json::parse(outSpec.get_ref<const std::string &>(), nullptr, false)
                          : Json();
    size_t leaves = 0;
    if (serialized.is_array() && serialized.size() == 2 && serialized.at(0) == Json(1))
      structure = pytreeStructure(serialized.at(1), userLeaves, leaves, builder);
    if (leaves != userLeaves.size())
      structure.reset();
    break;
  }
  if (structure) {
    module->getOperation()->setAttr(attr::kOutputStructure, *structure);
    return success();
  }
  for (Attribute leaf : userLeaves)
    if (auto constant = dyn_cast<DictionaryAttr>(leaf))
      return emitError(archiveLoc)
             << "the module returns a constant (" << constant.get("const")
             << ") in a structure tgc cannot rebuild (its out_spec); tgc supports tensor "
                "outputs there only";
  return success();
}

LogicalResult ExportReader::createGlobal(const GraphInput &input, const TensorMeta &meta) {
  FailureOr<ElementsAttr> initialValue = readInitialValue(input.name, meta);
  if (failed(initialValue))
    return failure();
  TensorMeta valueMeta;
  valueMeta.sizes = meta.sizes;
  valueMeta.dtype = meta.dtype;
  Type type = BaseTensorType::get(ctx, /*isRef=*/false, valueMeta);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module->getBody());
  GlobalOp::create(builder, NameLoc::get(builder.getStringAttr(input.name), archiveLoc),
                   builder.getStringAttr(input.name), builder.getStringAttr(input.kind),
                   TypeAttr::get(type), *initialValue);
  return success();
}

/// The stored view of `fqn`'s storage, copied into a contiguous blob.
FailureOr<ElementsAttr> ExportReader::readInitialValue(llvm::StringRef fqn,
                                                       const TensorMeta &meta) {
  FailureOr<StoredTensor> stored = weights->lookup(fqn, archiveLoc);
  if (failed(stored))
    return failure();
  auto constantSizes = llvm::map_range(
      stored->sizes, [&](int64_t size) { return getAffineConstantExpr(size, ctx); });
  if (stored->dtype != meta.dtype || !llvm::equal(constantSizes, meta.sizes))
    return emitError(archiveLoc) << "the stored data of '" << fqn
                                 << "' does not match its metadata in the graph";
  ArrayRef<int64_t> sizes = stored->sizes;
  // 64-byte alignment, as the archive stores it, lets consumers map the data directly.
  AsmResourceBlob blob;
  if (llvm::Error error =
          copyStrided(stored->storage, sizes, stored->strides, stored->storageOffset,
                      getElementBytes(meta.dtype), BlobAllocator{blob}))
    return emitError(archiveLoc) << "cannot read the data of '" << fqn
                                 << "': " << llvm::toString(std::move(error));
  auto type = RankedTensorType::get(sizes, meta.dtype);
  return llvm::cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, getResourceName(fqn), std::move(blob)));
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

/// The node's name at the user's line of its stack trace (the archive without one).
Location ExportReader::nodeLocation(const Json &node, llvm::StringRef name) {
  Location source = archiveLoc;
  const Json *metadata = node.contains("metadata") ? &node.at("metadata") : nullptr;
  if (metadata && metadata->contains("stack_trace") && metadata->at("stack_trace").is_string())
    if (auto frame = findUserFrame(metadata->at("stack_trace").get_ref<const std::string &>()))
      source = FileLineColLoc::get(ctx, frame->first, frame->second, 0);
  return NameLoc::get(builder.getStringAttr(name), source);
}

/// Nodes written before torch 2.8 have no name; their first output names them.
static std::string nodeName(const Json &node, llvm::StringRef target) {
  if (node.contains("name") && node.at("name").is_string())
    return node.at("name").get<std::string>();
  for (const Json &output : node.at("outputs")) {
    std::string kind = unionKind(output);
    if (kind == "as_tensor")
      return unionValue(output).at("name").get<std::string>();
    if (kind == "as_tensors" && !unionValue(output).empty())
      return unionValue(output).at(0).at("name").get<std::string>();
    if (kind == "as_sym_int" && unionKind(unionValue(output)) == "as_name")
      return unionValue(unionValue(output)).get<std::string>();
  }
  return target.str();
}

LogicalResult ExportReader::convertNode(const Json &node) {
  llvm::StringRef target = node.at("target").get_ref<const std::string &>();
  target.consume_front("torch.ops.");
  currentNode = nodeName(node, target);
  currentLoc = nodeLocation(node, currentNode);
  if (isSymbolicIntTarget(target) || isRuntimeCheckTarget(target))
    return success();
  if (target == "aten._assert_tensor_metadata.default")
    return checkTensorMetadata(node);
  if (target.starts_with("higher_order."))
    return convertHigherOrder(node, target);
  if (target == "aten.broadcast_tensors.default")
    return convertBroadcastTensors(node);
  if (target == "aten.meshgrid.default" || target == "aten.meshgrid.indexing")
    return convertMeshgrid(node);
  if (!atenCalls.supports(target))
    return emitNodeError() << "unsupported operator " << target;

  SmallVector<RecordedResult> outputs;
  if (failed(parseNodeOutputs(node, outputs)))
    return failure();
  FailureOr<std::vector<AtenArgument>> converted = convertArguments(node);
  if (failed(converted))
    return failure();
  std::vector<AtenArgument> arguments = std::move(*converted);
  auto errorFn = [this]() { return emitNodeError(); };
  if (failed(applyAutocast(atenCalls, currentLoc, autocastRegions, target, arguments, errorFn)))
    return failure();
  bool inAutocast =
      llvm::any_of(autocastRegions, [](const AutocastRegion &r) { return r.enabled; });
  std::vector<AtenArgument> retry = inAutocast ? arguments : std::vector<AtenArgument>();
  FailureOr<SmallVector<Value>> results = atenCalls.buildResults(
      currentLoc, target, std::move(arguments), outputs.size(), errorFn, outputs);
  if (failed(results))
    return failure();
  // Inside an autocast block, an op that is not on autocast's lists may still compute
  // in another dtype through the ops it is made of in eager (einsum calls bmm): where
  // the archive records another floating-point dtype for its result, its floating-point
  // operands are cast to that dtype, as that inner op's policy did.
  if (inAutocast && !outputs.empty() && outputs.front().meta && !results->empty()) {
    Type recorded = outputs.front().meta->dtype;
    auto inferred = llvm::dyn_cast<BaseTensorType>(results->front().getType());
    if (inferred && inferred.getDtype() != recorded && llvm::isa<FloatType>(recorded) &&
        llvm::isa<FloatType>(inferred.getDtype())) {
      // The results' ops go (those of a composite's earlier steps are left to DCE).
      llvm::SetVector<Operation *> owners;
      for (Value result : *results)
        if (Operation *owner = result.getDefiningOp())
          owners.insert(owner);
      for (Operation *owner : owners)
        if (owner->use_empty())
          owner->erase();
      for (AtenArgument &argument : retry)
        if (argument.value.kind == AtenValue::Kind::Tensor ||
            argument.value.kind == AtenValue::Kind::Tensors)
          for (Value &tensor : argument.value.values) {
            Type dtype = llvm::cast<BaseTensorType>(tensor.getType()).getDtype();
            if (!llvm::isa<FloatType>(dtype) || dtype.isF64() || dtype == recorded)
              continue;
            FailureOr<Value> cast = atenCalls.buildValue(
                currentLoc, "aten._to_copy.default",
                {{"self", AtenValue::tensor(tensor)}, {"dtype", AtenValue::dtype(recorded)}},
                errorFn);
            if (failed(cast))
              return failure();
            tensor = *cast;
          }
      results = atenCalls.buildResults(currentLoc, target, std::move(retry), outputs.size(),
                                       errorFn, outputs);
      if (failed(results))
        return failure();
    }
  }
  return bindOutputs(*results, outputs);
}

/// `aten._assert_tensor_metadata(a, size, stride, dtype, device, layout)`, which export
/// records where the program converts a dtype: checked here, at compile time, against
/// what tgc knows of `a` (its dtype, and its sizes where both are static), and then
/// dropped. The device and layout are the exporting machine's and are not checked.
LogicalResult ExportReader::checkTensorMetadata(const Json &node) {
  Value tensor;
  Type dtype;
  std::optional<SmallVector<AffineExpr>> sizes;
  FailureOr<std::vector<AtenArgument>> arguments = convertArguments(node);
  if (failed(arguments))
    return failure();
  for (const auto &[name, value] : *arguments) {
    if (name == "a" && value.kind == AtenValue::Kind::Tensor)
      tensor = value.values.front();
    else if (name == "dtype" && value.kind == AtenValue::Kind::DType)
      dtype = value.type;
    else if (name == "size" && value.kind == AtenValue::Kind::Ints)
      sizes = value.sizes;
  }
  auto type = tensor ? llvm::dyn_cast<BaseTensorType>(tensor.getType()) : BaseTensorType();
  if (!type)
    return emitNodeError() << "_assert_tensor_metadata has no tensor argument 'a'";
  if (dtype && dtype != type.getDtype())
    return emitNodeError() << "the archive asserts dtype " << dtype << " for this tensor, but "
                           << "tgc infers " << type.getDtype();
  if (sizes) {
    ArrayRef<AffineExpr> inferred = type.getSizes();
    bool differ = sizes->size() != inferred.size();
    for (size_t d = 0; !differ && d < inferred.size(); ++d) {
      auto recorded = llvm::dyn_cast<AffineConstantExpr>((*sizes)[d]);
      auto known = llvm::dyn_cast<AffineConstantExpr>(inferred[d]);
      differ = recorded && known && recorded.getValue() != known.getValue();
    }
    if (differ) {
      std::string expected, actual;
      llvm::raw_string_ostream e(expected), a(actual);
      llvm::interleaveComma(*sizes, e);
      llvm::interleaveComma(inferred, a);
      return emitNodeError() << "the archive asserts sizes [" << expected
                             << "] for this tensor, but tgc infers [" << actual << "]";
    }
  }
  return success();
}

/// `aten.broadcast_tensors(tensors)` (what F.mse_loss and other losses call first):
/// each tensor expanded to the sizes they broadcast to together.
LogicalResult ExportReader::convertBroadcastTensors(const Json &node) {
  SmallVector<Value> tensors;
  FailureOr<std::vector<AtenArgument>> arguments = convertArguments(node);
  if (failed(arguments))
    return failure();
  for (const auto &[name, value] : *arguments)
    if (name == "tensors" && value.kind == AtenValue::Kind::Tensors)
      tensors.assign(value.values.begin(), value.values.end());
  if (tensors.empty())
    return emitNodeError() << "broadcast_tensors has no tensor list 'tensors'";
  SmallVector<AffineExpr> sizes;
  for (Value tensor : tensors) {
    ArrayRef<AffineExpr> own = llvm::cast<BaseTensorType>(tensor.getType()).getSizes();
    FailureOr<SmallVector<AffineExpr>> both = broadcastSizes(sizes, own);
    if (failed(both)) {
      std::string a, b;
      llvm::raw_string_ostream as(a), bs(b);
      llvm::interleaveComma(sizes, as);
      llvm::interleaveComma(own, bs);
      return emitNodeError() << "sizes [" << a << "] and [" << b << "] do not broadcast";
    }
    sizes = std::move(*both);
  }
  SmallVector<RecordedResult> outputs;
  if (failed(parseNodeOutputs(node, outputs)))
    return failure();
  SmallVector<Value> results;
  for (Value tensor : tensors) {
    FailureOr<Value> expanded = buildExpand(tensor, sizes);
    if (failed(expanded))
      return failure();
    results.push_back(*expanded);
  }
  return bindOutputs(results, outputs);
}

/// `aten.expand(tensor, sizes)` at the node being converted.
FailureOr<Value> ExportReader::buildExpand(Value tensor, ArrayRef<AffineExpr> sizes) {
  return atenCalls.buildValue(
      currentLoc, "aten.expand.default",
      {{"self", AtenValue::tensor(tensor)}, {"size", AtenValue::ints(sizes)}},
      [this]() { return emitNodeError(); });
}

/// `aten.meshgrid(tensors, indexing="ij")` of 0-d and 1-d tensors: each is viewed along
/// its own dimension of the grid ([n0, n1, ...]; "xy" swaps the first two) and
/// expanded to the grid.
LogicalResult ExportReader::convertMeshgrid(const Json &node) {
  SmallVector<Value> tensors;
  std::string indexing = "ij";
  FailureOr<std::vector<AtenArgument>> arguments = convertArguments(node);
  if (failed(arguments))
    return failure();
  for (const auto &[name, value] : *arguments) {
    if (name == "tensors" && value.kind == AtenValue::Kind::Tensors)
      tensors.assign(value.values.begin(), value.values.end());
    if (name == "indexing" && value.kind == AtenValue::Kind::String)
      indexing = value.string;
  }
  if (tensors.empty())
    return emitNodeError() << "meshgrid has no tensor list 'tensors'";
  if (indexing != "ij" && indexing != "xy")
    return emitNodeError() << "meshgrid's indexing must be 'ij' or 'xy', not '" << indexing << "'";
  SmallVector<AffineExpr> lengths;
  for (Value tensor : tensors) {
    auto type = llvm::cast<BaseTensorType>(tensor.getType());
    if (type.getRank() > 1)
      return emitNodeError() << "meshgrid takes 0-d and 1-d tensors, not " << type;
    lengths.push_back(type.getRank() == 0 ? getAffineConstantExpr(1, ctx) : type.getSizes()[0]);
  }
  // The grid dimension of each tensor.
  SmallVector<size_t> position(tensors.size());
  std::iota(position.begin(), position.end(), 0);
  if (indexing == "xy" && tensors.size() >= 2)
    std::swap(position[0], position[1]);
  SmallVector<AffineExpr> grid(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    grid[position[i]] = lengths[i];
  SmallVector<RecordedResult> outputs;
  if (failed(parseNodeOutputs(node, outputs)))
    return failure();
  SmallVector<Value> results;
  for (size_t i = 0; i < tensors.size(); ++i) {
    SmallVector<AffineExpr> shape(tensors.size(), getAffineConstantExpr(1, ctx));
    shape[position[i]] = lengths[i];
    FailureOr<Value> view = atenCalls.buildValue(
        currentLoc, "aten.view.default",
        {{"self", AtenValue::tensor(tensors[i])}, {"size", AtenValue::ints(shape)}},
        [this]() { return emitNodeError(); });
    if (failed(view))
      return failure();
    FailureOr<Value> expanded = buildExpand(*view, grid);
    if (failed(expanded))
      return failure();
    results.push_back(*expanded);
  }
  return bindOutputs(results, outputs);
}

LogicalResult ExportReader::parseNodeOutputs(const Json &node,
                                             SmallVectorImpl<RecordedResult> &outputs) {
  auto addTensor = [&](const Json &tensor) -> LogicalResult {
    std::string name = tensor.at("name").get<std::string>();
    FailureOr<TensorMeta> meta = valueMeta(name);
    if (failed(meta))
      return failure();
    outputs.push_back({name, *meta});
    return success();
  };
  for (const Json &output : node.at("outputs")) {
    std::string kind = unionKind(output);
    if (kind == "as_tensor" && failed(addTensor(unionValue(output))))
      return failure();
    if (kind == "as_tensors")
      for (const Json &tensor : unionValue(output))
        if (failed(addTensor(tensor)))
          return failure();
    if (kind == "as_none")
      outputs.push_back({"", std::nullopt});
    // A Python float or int (item()): bound to the op's scalar result.
    bool symScalar = (kind == "as_sym_float" || kind == "as_sym_int") &&
                     unionKind(unionValue(output)) == "as_name";
    if (symScalar)
      outputs.push_back({unionValue(unionValue(output)).get<std::string>(), std::nullopt});
    if (kind != "as_tensor" && kind != "as_tensors" && kind != "as_none" && !symScalar)
      return emitNodeError() << "results of kind '" << kind << "' are not supported";
  }
  return success();
}

FailureOr<Value> ExportReader::lookupValue(llvm::StringRef valueName) {
  auto it = values.find(valueName);
  if (it == values.end())
    return emitNodeError() << "unknown tensor '" << valueName << "'";
  return it->second;
}

/// The value a serialized argument stands for: names resolved into SSA values,
/// SymInts into size expressions. Nullopt drops an argument of a kind tgc does not read
/// that only configures what does not change values (isIgnorableArgument).
FailureOr<std::optional<AtenValue>> ExportReader::convertArgument(const Json &argument,
                                                                  llvm::StringRef name) {
  std::string kind = unionKind(argument);
  const Json &value = unionValue(argument);
  auto tensorValue = [&](const Json &tensor) {
    return lookupValue(tensor.at("name").get<std::string>());
  };
  auto sizeOf = [&](const Json &element, bool symbolic) -> FailureOr<AffineExpr> {
    if (symbolic)
      return resolveSymInt(element);
    return getAffineConstantExpr(element.get<int64_t>(), ctx);
  };
  auto floatOf = [&](const Json &element) -> FailureOr<double> {
    std::optional<double> f = parseFloat(element);
    if (!f)
      return emitNodeError() << "argument '" << name << "' is not a float: " << element.dump();
    return *f;
  };
  if (kind == "as_none")
    return std::optional<AtenValue>(AtenValue::none());
  if (kind == "as_tensor") {
    FailureOr<Value> v = tensorValue(value);
    if (failed(v))
      return failure();
    return std::optional<AtenValue>(AtenValue::tensor(*v));
  }
  if (kind == "as_optional_tensor")
    return convertArgument(value, name);
  if (kind == "as_optional_tensors") {
    // Tensor?[] (index's indices): the tensors present, `bools` says which positions.
    SmallVector<Value> tensors;
    SmallVector<bool> present;
    for (const Json &element : value) {
      if (unionKind(element) == "as_tensor") {
        FailureOr<Value> v = tensorValue(unionValue(element));
        if (failed(v))
          return failure();
        tensors.push_back(*v);
      }
      present.push_back(unionKind(element) == "as_tensor");
    }
    AtenValue list = AtenValue::tensors(tensors);
    list.bools.assign(present.begin(), present.end());
    return std::optional<AtenValue>(list);
  }
  if (kind == "as_tensors") {
    SmallVector<Value> tensors;
    for (const Json &tensor : value) {
      FailureOr<Value> v = tensorValue(tensor);
      if (failed(v))
        return failure();
      tensors.push_back(*v);
    }
    return std::optional<AtenValue>(AtenValue::tensors(tensors));
  }
  // A float, or an integer that no size expression names, that the program computed
  // (item()): the scalar value bound to its name.
  bool symFloat = kind == "as_sym_float" && unionKind(value) == "as_name";
  bool computedInt = kind == "as_sym_int" && unionKind(value) == "as_name" &&
                     values.count(unionValue(value).get<std::string>());
  if (symFloat || computedInt) {
    FailureOr<Value> scalar = lookupValue(unionValue(value).get<std::string>());
    if (failed(scalar))
      return failure();
    AtenValue computed =
        symFloat ? AtenValue::floating(0.0) : AtenValue::integer(getAffineConstantExpr(0, ctx));
    // An int keeps its recorded expression (`u0`) too: a slice's length is the
    // difference of two such bounds.
    if (computedInt)
      if (std::optional<AffineExpr> symbol = symbolOfInt(unionValue(value).get<std::string>()))
        computed.size = *symbol;
    computed.values.push_back(*scalar);
    return std::optional<AtenValue>(computed);
  }
  // An int computed from item() results (`u0 - 22`, an `_operator` node tgc skips):
  // their values in that expression.
  if (kind == "as_sym_int" && unionKind(value) == "as_name" && !unbackedValues.empty()) {
    FailureOr<AffineExpr> size = sizeOf(value, true);
    if (failed(size))
      return failure();
    bool usesUnbacked = false;
    size->walk([&](AffineExpr e) {
      if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(e))
        usesUnbacked |= unbackedValues.count(symbol.getPosition()) != 0;
    });
    if (usesUnbacked) {
      FailureOr<Value> computed = materializeSize(
          builder, currentLoc, *size,
          [&](unsigned symbol) { return unbackedValues.lookup(symbol); },
          [this]() { return emitNodeError(); });
      if (failed(computed))
        return failure();
      AtenValue integer = AtenValue::integer(*size);
      integer.values.push_back(*computed);
      return std::optional<AtenValue>(integer);
    }
  }
  // Memory formats are the schema's enum codes: 0 Unknown (as absent), 1 Contiguous,
  // 2 ChannelsLast, 3 ChannelsLast3d, 4 Preserve (docs/pt2-format.md).
  if (kind == "as_memory_format") {
    if (!value.is_number_integer())
      return emitNodeError() << "argument '" << name << "': a memory format must be an integer";
    static constexpr MemoryFormat kFormats[] = {
        MemoryFormat::Contiguous, MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d,
        MemoryFormat::Preserve};
    int64_t code = value.get<int64_t>();
    if (code == 0)
      return std::optional<AtenValue>(AtenValue::none());
    if (code < 0 || code > 4)
      return emitNodeError() << "argument '" << name << "': unknown memory format " << code;
    return std::optional<AtenValue>(AtenValue::memoryFormat(kFormats[code - 1]));
  }
  // Layouts are enum codes; no op reads them (they are ignorable).
  if (kind == "as_int" || kind == "as_sym_int" || kind == "as_layout") {
    FailureOr<AffineExpr> size = sizeOf(value, kind == "as_sym_int");
    if (failed(size))
      return failure();
    return std::optional<AtenValue>(AtenValue::integer(*size));
  }
  if (kind == "as_sym_float")
    return convertArgument(value, name);
  if (kind == "as_float") {
    FailureOr<double> f = floatOf(value);
    if (failed(f))
      return failure();
    return std::optional<AtenValue>(AtenValue::floating(*f));
  }
  if (kind == "as_bool")
    return std::optional<AtenValue>(AtenValue::boolean(value.get<bool>()));
  if (kind == "as_string")
    return std::optional<AtenValue>(AtenValue::str(value.get<std::string>()));
  if (kind == "as_ints" || kind == "as_sym_ints") {
    SmallVector<AffineExpr> sizes;
    for (const Json &element : value) {
      FailureOr<AffineExpr> size = sizeOf(element, kind == "as_sym_ints");
      if (failed(size))
        return failure();
      sizes.push_back(*size);
    }
    return std::optional<AtenValue>(AtenValue::ints(sizes));
  }
  if (kind == "as_floats") {
    SmallVector<double> floats;
    for (const Json &element : value) {
      std::optional<double> f = parseFloat(element);
      if (!f)
        return emitNodeError() << "argument '" << name << "' holds a non-float";
      floats.push_back(*f);
    }
    return std::optional<AtenValue>(AtenValue::floatList(floats));
  }
  if (kind == "as_bools") {
    SmallVector<bool> bools;
    for (const Json &element : value)
      bools.push_back(element.get<bool>());
    return std::optional<AtenValue>(AtenValue::boolList(bools));
  }
  if (kind == "as_scalar_type") {
    FailureOr<Type> dtype = parseDType(value, name);
    if (failed(dtype))
      return failure();
    return std::optional<AtenValue>(AtenValue::dtype(*dtype));
  }
  if (kind == "as_device")
    return std::optional<AtenValue>(AtenValue::device(parseDevice(value)));
  if (isIgnorableArgument({name.str(), AtenValue::none()}))
    return std::optional<AtenValue>();
  return emitNodeError() << "argument '" << name << "' of kind '" << kind << "' is not supported";
}

/// The node's arguments by name, converted (those of kinds tgc does not read left out,
/// isIgnorableArgument).
FailureOr<std::vector<AtenArgument>> ExportReader::convertArguments(const Json &node) {
  std::vector<AtenArgument> arguments;
  for (const Json &input : node.at("inputs")) {
    std::string name = input.at("name").get<std::string>();
    FailureOr<std::optional<AtenValue>> value = convertArgument(input.at("arg"), name);
    if (failed(value))
      return failure();
    if (*value)
      arguments.push_back({std::move(name), std::move(**value)});
  }
  return arguments;
}

/// What bindOutputs compares, as a value type (`!tgc.vtensor<[4, s0], f32>`).
static Type sizesAndDType(const TensorMeta &meta) {
  return ValueTensorType::get(meta.sizes, meta.dtype);
}

/// Whether two sizes are the same function of the symbols. Equal expressions are;
/// otherwise (sympy and MLIR may simplify floordiv/mod differently) both are evaluated
/// at a few points, with distinct values for distinct symbols.
static bool isSameSize(AffineExpr a, AffineExpr b, unsigned numSymbols) {
  if (a == b)
    return true;
  for (int64_t base : {2, 3, 5, 16, 61}) {
    SmallVector<AffineExpr> point;
    for (unsigned i = 0; i < numSymbols; ++i)
      point.push_back(getAffineConstantExpr(base + 7 * i, a.getContext()));
    if (a.replaceSymbols(point) != b.replaceSymbols(point))
      return false;
  }
  return true;
}

/// Binds the node's output names to the op's results after checking that tgc's
/// inference agrees with the metadata the export recorded.
LogicalResult ExportReader::bindOutputs(ValueRange results,
                                        llvm::ArrayRef<RecordedResult> outputs) {
  for (auto [output, result] : llvm::zip_first(outputs, results)) {
    if (!output.meta) {
      if (output.name.empty() || llvm::isa<BaseTensorType>(result.getType()))
        continue;
      values[output.name] = result; // a scalar (item())
      // An int whose recorded expression is one symbol: that symbol's value.
      if (result.getType().isInteger(64))
        if (std::optional<AffineExpr> symbol = symbolOfInt(output.name))
          unbackedValues.try_emplace(llvm::cast<AffineSymbolExpr>(*symbol).getPosition(), result);
      continue;
    }
    auto type = llvm::dyn_cast<BaseTensorType>(result.getType());
    if (!type)
      return emitNodeError() << "result '" << output.name << "' is not a tensor in tgc";
    ArrayRef<AffineExpr> inferred = type.getSizes(), recorded = output.meta->sizes;
    bool sameSizes =
        inferred.size() == recorded.size() &&
        llvm::all_of(llvm::zip(inferred, recorded), [&](auto sizes) {
          return isSameSize(std::get<0>(sizes), std::get<1>(sizes), symbolNames.size());
        });
    if (!sameSizes || type.getDtype() != output.meta->dtype) {
      if (readNames.contains(output.name))
        return emitNodeError() << "tgc infers " << sizesAndDType(type.getMeta()) << " for '"
                               << output.name << "' but the archive records "
                               << sizesAndDType(*output.meta);
      // Nothing reads it (an unused output of batch norm, whose shape differs between
      // torch releases and devices): follow the archive, i.e. leave it unbound.
      InFlightDiagnostic warning = emitWarning(currentLoc);
      if (!currentNode.empty())
        warning << "node '" << currentNode << "': ";
      warning << "tgc infers " << sizesAndDType(type.getMeta()) << " for '" << output.name
              << "' but the archive records " << sizesAndDType(*output.meta)
              << "; nothing reads it, so the archive's metadata is kept";
      continue;
    }
    values[output.name] = result;
  }
  return success();
}

/// Every tensor name in `value` (a node's inputs, the graph's outputs): the `name` of
/// an as_tensor / as_tensors / as_optional_tensors argument, at any depth.
void ExportReader::collectReadNames(const Json &value) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() == "as_graph")
        continue; // a nested graph's names are its own (inlineGraph)
      if (it.key() == "name" && it.value().is_string())
        readNames.insert(it.value().get<std::string>());
      else
        collectReadNames(it.value());
    }
  } else if (value.is_array()) {
    for (const Json &element : value)
      collectReadNames(element);
  }
}

//===----------------------------------------------------------------------===//
// Higher-order ops
//===----------------------------------------------------------------------===//

/// `torch.no_grad()` / `enable_grad()` and `torch.autocast(...)` blocks, which the
/// training IR keeps as higher-order ops over a nested graph (the core IR has them
/// inlined): `wrap_with_set_grad_enabled(enabled, graph, *operands)` and
/// `wrap_with_autocast(device_type, dtype, enabled, cache_enabled, graph, *operands)`.
/// The nested graph is inlined. Its results are detached where grad mode is off, and
/// its ATen calls get autocast's casts (applyAutocast) inside an enabled autocast block.
LogicalResult ExportReader::convertHigherOrder(const Json &node, llvm::StringRef target) {
  if (target == "higher_order.cond")
    return convertCond(node);
  bool setGradEnabled = target == "higher_order.wrap_with_set_grad_enabled";
  bool autocast = target == "higher_order.wrap_with_autocast";
  if (!setGradEnabled && !autocast)
    return emitNodeError() << "unsupported higher-order operator " << target;
  // The arguments before the nested graph configure the block; those after it are the
  // graph's operands.
  const Json *subgraph = nullptr;
  std::vector<AtenValue> config, operands;
  for (const Json &input : node.at("inputs")) {
    const Json &argument = input.at("arg");
    if (unionKind(argument) == "as_graph") {
      if (subgraph)
        return emitNodeError() << target << " has more than one nested graph";
      subgraph = &unionValue(argument).at("graph");
      continue;
    }
    FailureOr<std::optional<AtenValue>> value =
        convertArgument(argument, input.at("name").get<std::string>());
    if (failed(value))
      return failure();
    (subgraph ? operands : config).push_back(**value);
  }
  using K = AtenValue::Kind;
  auto kindsAre = [&](std::initializer_list<std::initializer_list<K>> kinds) {
    return config.size() == kinds.size() && llvm::all_of(llvm::zip(config, kinds), [](auto pair) {
             return llvm::is_contained(std::get<1>(pair), std::get<0>(pair).kind);
           });
  };
  if (!subgraph)
    return emitNodeError() << target << " has no nested graph";
  bool enabled;
  if (setGradEnabled) {
    if (!kindsAre({{K::Bool}}))
      return emitNodeError() << target << " expects (enabled, graph, operands...)";
    enabled = config[0].boolValue;
  } else {
    if (!kindsAre({{K::String}, {K::DType, K::None}, {K::Bool}, {K::Bool, K::None}}))
      return emitNodeError()
             << target
             << " expects (device_type, dtype, enabled, cache_enabled, graph, operands...)";
    AutocastRegion region;
    region.deviceType = config[0].string;
    region.enabled = config[2].boolValue;
    // torch's default autocast dtypes: bf16 on the CPU, f16 elsewhere.
    region.dtype = config[1].kind == K::DType   ? config[1].type
                   : region.deviceType == "cpu" ? Type(BFloat16Type::get(ctx))
                                                : Type(Float16Type::get(ctx));
    autocastRegions.push_back(std::move(region));
  }

  SmallVector<RecordedResult> outputs;
  if (failed(parseNodeOutputs(node, outputs)))
    return failure();
  std::string hopNode = currentNode;
  Location hopLoc = currentLoc;
  FailureOr<SmallVector<Value>> results = inlineGraph(*subgraph, operands);
  if (autocast)
    autocastRegions.pop_back();
  currentNode = hopNode;
  currentLoc = hopLoc;
  if (failed(results))
    return failure();
  if (results->size() != outputs.size())
    return emitNodeError() << "the nested graph returns " << results->size()
                           << " values but the node has " << outputs.size() << " outputs";
  // No gradient flows out of a no_grad block.
  if (setGradEnabled && !enabled)
    for (Value &result : *results) {
      if (!llvm::isa<BaseTensorType>(result.getType()))
        continue;
      FailureOr<Value> detached = atenCalls.buildValue(currentLoc, "aten.detach.default",
                                                       {{"self", AtenValue::tensor(result)}},
                                                       [this]() { return emitNodeError(); });
      if (failed(detached))
        return failure();
      result = *detached;
    }
  return bindOutputs(*results, outputs);
}

/// `cond(pred, true_graph, false_graph, operands)` (torch.cond): each nested graph
/// converted into a region of a placeholder `tgc.cond`, which liftCond makes isolated.
LogicalResult ExportReader::convertCond(const Json &node) {
  const Json &inputs = node.at("inputs");
  if (inputs.size() != 4 || unionKind(inputs[1].at("arg")) != "as_graph" ||
      unionKind(inputs[2].at("arg")) != "as_graph")
    return emitNodeError() << "cond expects (pred, true_graph, false_graph, operands)";
  FailureOr<std::optional<AtenValue>> pred = convertArgument(inputs[0].at("arg"), "pred");
  FailureOr<std::optional<AtenValue>> operandList =
      convertArgument(inputs[3].at("arg"), "operands");
  if (failed(pred) || failed(operandList))
    return failure();
  std::vector<AtenValue> operands;
  if (*operandList && (*operandList)->kind == AtenValue::Kind::Tensors) {
    for (Value operand : (*operandList)->values)
      operands.push_back(AtenValue::tensor(operand));
  } else if (*operandList && (*operandList)->kind != AtenValue::Kind::None) {
    return emitNodeError() << "cond's operands must be a list of tensors";
  }
  const Json *branches[2] = {&unionValue(inputs[1].at("arg")).at("graph"),
                             &unionValue(inputs[2].at("arg")).at("graph")};
  SmallVector<RecordedResult> outputs;
  if (failed(parseNodeOutputs(node, outputs)))
    return failure();
  std::string condNode = currentNode;
  Location condLoc = currentLoc;
  auto restoreNode = [&]() {
    currentNode = condNode;
    currentLoc = condLoc;
  };
  // A constant predicate (export specializes a Python bool) picks its branch.
  if (*pred && (*pred)->kind == AtenValue::Kind::Bool) {
    FailureOr<SmallVector<Value>> results =
        inlineGraph(*branches[(*pred)->boolValue ? 0 : 1], operands);
    restoreNode();
    if (failed(results))
      return failure();
    return bindOutputs(*results, outputs);
  }
  if (!*pred || (*pred)->kind != AtenValue::Kind::Tensor)
    return emitNodeError() << "cond's predicate must be a tensor or a bool";
  Value predicate = (*pred)->values.front();

  OpBuilder::InsertionGuard guard(builder);
  auto holder = CondOp::create(builder, condLoc, TypeRange{}, predicate, ValueRange{}, ValueRange{},
                               builder.getDenseI64ArrayAttr({}));
  // Erases the placeholder (and what was converted into it) on failure.
  auto dropHolder = [&]() {
    for (Region &region : holder->getRegions())
      for (Block &block : region)
        block.dropAllDefinedValueUses();
    holder->erase();
    return failure();
  };
  SmallVector<Value> branchResults[2];
  for (unsigned index = 0; index < 2; ++index) {
    builder.createBlock(&holder->getRegion(index));
    FailureOr<SmallVector<Value>> results = inlineGraph(*branches[index], operands);
    restoreNode();
    if (failed(results))
      return dropHolder();
    if (Operation *write = findOutsideWrite(holder->getRegion(index))) {
      InFlightDiagnostic diag = emitNodeError() << "a torch.cond branch writes into a tensor "
                                                   "from outside the branch";
      diag.attachNote(write->getLoc()) << "the write";
      return dropHolder();
    }
    branchResults[index] = std::move(*results);
  }
  if (branchResults[0].size() != branchResults[1].size() ||
      branchResults[0].size() != outputs.size()) {
    emitNodeError() << "cond's branches return " << branchResults[0].size() << " and "
                    << branchResults[1].size() << " values for " << outputs.size() << " outputs";
    return dropHolder();
  }
  SmallVector<Type> resultTypes;
  for (auto [a, b] : llvm::zip(branchResults[0], branchResults[1])) {
    auto aType = llvm::dyn_cast<BaseTensorType>(a.getType());
    auto bType = llvm::dyn_cast<BaseTensorType>(b.getType());
    std::optional<Type> type = aType && bType ? condResultType(aType, bType) : std::nullopt;
    if (!type) {
      emitNodeError() << "cond's branches return " << a.getType() << " and " << b.getType();
      return dropHolder();
    }
    resultTypes.push_back(*type);
  }
  for (unsigned index = 0; index < 2; ++index) {
    builder.setInsertionPointToEnd(&holder->getRegion(index).front());
    YieldOp::create(builder, condLoc, branchResults[index]);
  }
  builder.setInsertionPoint(holder);
  FailureOr<CondOp> cond = liftCond(builder, holder, resultTypes, condLoc, [&](AffineExpr size) {
    return materializeSize(builder, condLoc, size, {}, [this]() { return emitNodeError(); });
  });
  if (failed(cond))
    return failure();
  return bindOutputs(cond->getResults(), outputs);
}

/// Converts a nested graph's nodes in its own scope (its names are its own; its inputs
/// are bound to `operands`) and returns the values of its outputs.
FailureOr<SmallVector<Value>> ExportReader::inlineGraph(const Json &subgraph,
                                                        llvm::ArrayRef<AtenValue> operands) {
  const Json &inputs = subgraph.at("inputs");
  if (inputs.size() != operands.size())
    return emitNodeError() << "the nested graph takes " << inputs.size() << " inputs but "
                           << operands.size() << " operands are passed";
  const Json *outerGraph = graph;
  llvm::StringMap<Value> outerValues;
  llvm::StringSet<> outerReadNames;
  std::swap(values, outerValues);
  std::swap(readNames, outerReadNames);
  llvm::scope_exit restoreScope([&]() {
    graph = outerGraph;
    std::swap(values, outerValues);
    std::swap(readNames, outerReadNames);
  });
  graph = &subgraph;
  for (auto [input, operand] : llvm::zip(inputs, operands)) {
    std::string kind = unionKind(input);
    const Json &body = unionValue(input);
    if (kind == "as_tensor" && operand.kind == AtenValue::Kind::Tensor) {
      values[body.at("name").get<std::string>()] = operand.values.front();
      continue;
    }
    // A size: the nested graph's sym_int_values hold its expression; a computed int
    // (item()) is bound to its value.
    if (kind == "as_sym_int" && operand.kind == AtenValue::Kind::Int) {
      if (unionKind(body) == "as_name" && !operand.values.empty())
        values[unionValue(body).get<std::string>()] = operand.values.front();
      continue;
    }
    return emitNodeError() << "the nested graph's input '" << input.dump()
                           << "' does not match its operand";
  }
  for (const Json &node : subgraph.at("nodes"))
    collectReadNames(node.at("inputs"));
  collectReadNames(subgraph.at("outputs"));
  for (const Json &node : subgraph.at("nodes"))
    if (failed(convertNode(node)))
      return failure();
  SmallVector<Value> results;
  for (const Json &output : subgraph.at("outputs")) {
    if (unionKind(output) != "as_tensor")
      return emitNodeError() << "the nested graph's output '" << output.dump()
                             << "' is not a tensor; tgc supports tensor outputs only";
    FailureOr<Value> value = lookupValue(unionValue(output).at("name").get<std::string>());
    if (failed(value))
      return failure();
    results.push_back(*value);
  }
  return results;
}

OwningOpRef<ModuleOp> tgc::pt2::readExportArchive(llvm::StringRef path, MLIRContext *ctx) {
  return ExportReader(path, ctx).read();
}
