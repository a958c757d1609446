//===- ModelJson.cpp - model.json and the training report -----------------===//

#include "SignatureInternal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <sstream>

using namespace tgc;
using namespace tgc::detail;

using OrderedJson = nlohmann::ordered_json;

static OrderedJson shapeJson(const std::vector<SizeExpr> &sizes,
                             const std::vector<SymbolInfo> &symbols) {
  OrderedJson shape = OrderedJson::array();
  for (const SizeExpr &size : sizes) {
    if (size.isConstant() && !checkProgram(size.ops(), 0))
      shape.push_back(size.constantValue());
    else
      shape.push_back(printSizeExpr(size, symbols));
  }
  return shape;
}

static OrderedJson tensorJson(const std::string &name, DType dtype,
                              const std::vector<SizeExpr> &sizes,
                              const std::vector<SymbolInfo> &symbols) {
  OrderedJson tensor;
  tensor["name"] = name;
  tensor["dtype"] = dtypeName(dtype);
  tensor["shape"] = shapeJson(sizes, symbols);
  return tensor;
}

static OrderedJson mutationJson(const ModelSignature &signature, const ResultInfo &result) {
  OrderedJson mutation;
  mutation["kind"] = result.kind == ResultKind::BufferMutation ? "buffer" : "user_input";
  mutation["target"] =
      result.target < signature.args.size() ? signature.args[result.target].name : result.name;
  return mutation;
}

static void addTrainingJson(const ModelSignature &signature, OrderedJson &root) {
  const BackwardInfo &bw = *signature.backward;
  auto [count, bytes] = savedTotals(bw);
  root["saved_count"] = count;
  if (bytes)
    root["saved_bytes"] = *bytes;
  else
    root["saved_bytes"] = nullptr;
  OrderedJson saved = OrderedJson::array(), tangents = OrderedJson::array(),
              gradients = OrderedJson::array(), mutations = OrderedJson::array();
  for (const SavedInfo &value : bw.saved) {
    OrderedJson entry;
    entry["dtype"] = dtypeName(value.dtype);
    entry["shape"] = shapeJson(value.sizes, signature.symbols);
    if (value.arg < signature.args.size())
      entry["reference"] = signature.args[value.arg].name;
    else
      entry["reference"] = nullptr;
    saved.push_back(std::move(entry));
  }
  for (uint32_t output : bw.tangents) {
    OrderedJson entry;
    entry["output"] = output;
    tangents.push_back(std::move(entry));
  }
  for (const ResultInfo &result : bw.results) {
    if (isMutation(result)) {
      mutations.push_back(mutationJson(signature, result));
      continue;
    }
    OrderedJson entry = tensorJson(result.name, result.dtype, result.sizes, signature.symbols);
    entry["target"] =
        result.target < signature.args.size() ? signature.args[result.target].name : result.name;
    gradients.push_back(std::move(entry));
  }
  root["saved"] = std::move(saved);
  root["tangents"] = std::move(tangents);
  root["gradients"] = std::move(gradients);
  root["backward_mutations"] = std::move(mutations);
}

static OrderedJson memoryPlanJson(const MemoryPlan &plan) {
  OrderedJson entry;
  entry["arena_bytes"] = plan.arenaBytes;
  entry["buffers"] = plan.buffers;
  entry["buffer_bytes"] = plan.bufferBytes;
  entry["dynamic_buffers"] = plan.dynamicBuffers;
  entry["unplanned"] = plan.unplanned;
  return entry;
}

/// The temporaries: the instance's arena (as large as the larger entry needs) and each
/// entry's plan.
static OrderedJson memoryJson(const ModelSignature &signature) {
  OrderedJson memory;
  uint64_t arena = signature.memory.arenaBytes;
  if (signature.backward)
    arena = std::max(arena, signature.backward->memory.arenaBytes);
  memory["arena_bytes"] = arena;
  memory["forward"] = memoryPlanJson(signature.memory);
  if (signature.backward)
    memory["backward"] = memoryPlanJson(signature.backward->memory);
  return memory;
}

std::string tgc::writeSignatureJson(const ModelSignature &signature) {
  OrderedJson inputs = OrderedJson::array(), outputs = OrderedJson::array(),
              state = OrderedJson::array(), symbols = OrderedJson::array(),
              mutations = OrderedJson::array();
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const ArgInfo &arg = signature.args[i];
    OrderedJson tensor = tensorJson(arg.name, arg.dtype, arg.sizes, signature.symbols);
    if (arg.kind == ArgKind::UserInput) {
      tensor["mutated"] = isMutated(signature, i);
      inputs.push_back(std::move(tensor));
      continue;
    }
    tensor["kind"] = argKindName(arg.kind);
    if (auto it = signature.stateSources.find(arg.name); it != signature.stateSources.end())
      tensor["source"] = it->second;
    state.push_back(std::move(tensor));
  }
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const ResultInfo &result = signature.results[r];
    if (result.kind == ResultKind::UserOutput) {
      OrderedJson output = tensorJson(result.name, result.dtype, result.sizes, signature.symbols);
      if (auto slot = signature.slots.find(uint32_t(r)); slot != signature.slots.end()) {
        output["kind"] = "python_state";
        output["slot"] = slot->second;
      }
      outputs.push_back(std::move(output));
      continue;
    }
    mutations.push_back(mutationJson(signature, result));
  }
  for (const SymbolInfo &symbol : signature.symbols) {
    OrderedJson entry;
    entry["name"] = symbol.name;
    entry["min"] = symbol.min;
    if (symbol.max == std::numeric_limits<int64_t>::max())
      entry["max"] = nullptr;
    else
      entry["max"] = symbol.max;
    symbols.push_back(std::move(entry));
  }
  OrderedJson root;
  root["name"] = signature.name;
  root["abi_version"] = 2;
  root["inputs"] = std::move(inputs);
  root["outputs"] = std::move(outputs);
  root["state"] = std::move(state);
  root["symbols"] = std::move(symbols);
  root["mutations"] = std::move(mutations);
  if (signature.backward)
    addTrainingJson(signature, root);
  root["memory"] = memoryJson(signature);
  if (!signature.inputMetadataJson.empty())
    root["input_metadata"] = OrderedJson::parse(signature.inputMetadataJson);
  if (!signature.outputLayoutsJson.empty())
    root["output_layouts"] = OrderedJson::parse(signature.outputLayoutsJson);
  if (!signature.outputStructureJson.empty())
    root["output_structure"] = OrderedJson::parse(signature.outputStructureJson);
  if (!signature.replayJson.empty())
    root["replay"] = OrderedJson::parse(signature.replayJson);
  if (!signature.guardsJson.empty())
    root["guards"] = OrderedJson::parse(signature.guardsJson);
  return root.dump(2) + "\n";
}

std::string tgc::writeTrainingReport(const ModelSignature &signature) {
  if (!signature.backward)
    return "saved count: 0\nsaved bytes: 0\n";
  const BackwardInfo &bw = *signature.backward;
  auto [count, bytes] = savedTotals(bw);
  std::ostringstream out;
  out << "saved count: " << count << "\n"
      << "saved bytes: " << (bytes ? std::to_string(*bytes) : "unknown") << "\n";
  for (size_t i = 0; i < bw.saved.size(); ++i) {
    const SavedInfo &saved = bw.saved[i];
    out << "saved #" << i << ": " << dtypeName(saved.dtype) << "[";
    for (size_t d = 0; d < saved.sizes.size(); ++d)
      out << (d ? ", " : "") << printSizeExpr(saved.sizes[d], signature.symbols);
    out << "]";
    if (saved.arg < signature.args.size())
      out << " = " << argKindName(signature.args[saved.arg].kind) << " '"
          << signature.args[saved.arg].name << "' (by reference)";
    out << "\n";
  }
  return out.str();
}

std::string tgc::writeProgramSignatureJson(const std::string &name, const std::string &programJson,
                                           const std::vector<ModelSignature> &graphs) {
  OrderedJson json;
  json["name"] = name;
  json["program"] = OrderedJson::parse(programJson);
  OrderedJson list = OrderedJson::array();
  for (const ModelSignature &graph : graphs)
    list.push_back(OrderedJson::parse(writeSignatureJson(graph)));
  json["graphs"] = list;
  return json.dump(2) + "\n";
}
