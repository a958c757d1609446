// `tgc inspect model.so` (docs/abi.md): model.json, written beside model.so by
// `tgc compile`, as a table for people.
#include "Inspect.h"

#include "tgc/Runner/Model.h"

#include "llvm/Support/FileSystem.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

/// `[4, "s0", 16]` -> `[4, s0, 16]`.
static std::string shapeText(const json &shape) {
  std::string text = "[";
  for (size_t i = 0; shape.is_array() && i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += shape[i].is_string() ? shape[i].get<std::string>() : shape[i].dump();
  }
  return text + "]";
}

static std::string field(const json &entry, const char *key) {
  if (!entry.is_object() || !entry.contains(key) || entry[key].is_null())
    return "";
  return entry[key].is_string() ? entry[key].get<std::string>() : entry[key].dump();
}

/// One line per tensor entry: name, dtype, shape, then `extra(entry)`.
template <typename Extra>
static void printTensors(llvm::raw_ostream &os, const json &root, const char *key,
                         const char *title, Extra extra) {
  if (!root.contains(key) || !root[key].is_array())
    return;
  const json &entries = root[key];
  os << title << " (" << entries.size() << "):\n";
  size_t width = 0;
  for (const json &entry : entries)
    width = std::max(width, field(entry, "name").size());
  for (const json &entry : entries) {
    std::string name = field(entry, "name");
    os << "  " << name << std::string(width - name.size() + 2, ' ') << field(entry, "dtype") << " "
       << shapeText(entry.value("shape", json::array())) << extra(entry) << "\n";
  }
}

int inspectModel(const std::string &soPath, llvm::raw_ostream &os, llvm::raw_ostream &errs) {
  if (!llvm::sys::fs::exists(soPath)) {
    errs << "error: " << soPath << ": no such file\n";
    return 1;
  }
  json root;
  if (tgc::runner::Status status = tgc::runner::readModelJson(soPath, root)) {
    errs << "error: " << status.message() << "\n";
    return 1;
  }
  if (root.is_null()) {
    errs << "error: " << soPath << ": no model.json beside it (tgc compile writes one)\n";
    return 1;
  }
  if (!root.is_object() || !root.contains("inputs")) {
    errs << "error: " << soPath << ": its JSON is not a model's signature"
         << (root.is_object() && root.contains("graphs")
                 ? " (a program with graph breaks: tgc.load runs it)"
                 : "")
         << "\n";
    return 1;
  }
  os << "model " << field(root, "name") << " (ABI " << field(root, "abi_version") << ")";
  if (root.contains("target"))
    os << ", code for " << field(root["target"], "triple") << " " << field(root["target"], "cpu");
  os << "\n";
  bool trainable = root.contains("gradients");
  os << (trainable ? "trainable: forward and backward\n" : "inference only\n");

  printTensors(os, root, "inputs", "inputs", [](const json &e) {
    return e.value("mutated", false) ? std::string("  (mutated in place)") : std::string();
  });
  printTensors(os, root, "outputs", "outputs", [](const json &) { return std::string(); });
  printTensors(os, root, "state", "state", [](const json &e) {
    std::string kind = field(e, "kind");
    std::string source = field(e, "source");
    return (kind.empty() ? "" : "  " + kind) + (source.empty() ? "" : " from " + source);
  });
  if (trainable)
    printTensors(os, root, "gradients", "gradients", [](const json &e) {
      std::string target = field(e, "target");
      return target.empty() ? std::string() : "  of " + target;
    });
  if (root.contains("symbols") && root["symbols"].is_array() && !root["symbols"].empty()) {
    os << "dynamic sizes:\n";
    for (const json &symbol : root["symbols"])
      os << "  " << field(symbol, "name") << " in [" << field(symbol, "min") << ", "
         << field(symbol, "max") << "]\n";
  }
  if (root.contains("saved_bytes"))
    os << "saved for backward: " << field(root, "saved_count") << " tensors, "
       << field(root, "saved_bytes") << " bytes\n";
  if (root.contains("memory"))
    os << "temporaries: arena of " << field(root["memory"], "arena_bytes") << " bytes\n";
  return 0;
}
