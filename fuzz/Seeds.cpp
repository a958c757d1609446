//===- Seeds.cpp - Writes the harnesses' seeds that no fixture file holds -===//
//
// The signature blobs of the hand-written test models and model.json programs
// over the tiny model (each kind of step), for fuzz/run.sh's corpora.
//
// Usage: tgc-fuzz-seeds <tiny.json> <signature dir> <program dir>
//
//===----------------------------------------------------------------------===//

#include "TinyModelSignature.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

namespace {

void write(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

nlohmann::json node(std::vector<int> inputs, std::vector<int> outputs, nlohmann::json then) {
  return {{"graph", "tiny"}, {"inputs", inputs}, {"outputs", outputs}, {"then", then}};
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " <tiny.json> <signature dir> <program dir>\n";
    return 1;
  }
  std::string weights;
  write(std::string(argv[2]) + "/tiny",
        tgc::encodeSignatureBlob(tgc::test::tinySignature(weights)));
  write(std::string(argv[2]) + "/scale",
        tgc::encodeSignatureBlob(tgc::test::scaleSignature(weights)));
  write(std::string(argv[2]) + "/halves", tgc::encodeSignatureBlob(tgc::test::halvesSignature()));

  std::ifstream in(argv[1]);
  nlohmann::json tiny = nlohmann::json::parse(in);
  nlohmann::json ret{{"kind", "return"}};
  nlohmann::json call{{"kind", "call"},
                      {"callee", "builtins.print"},
                      {"args", {"ys", {{"type", "tensor"}, {"value", 3}}}},
                      {"kwargs", nlohmann::json::array()},
                      {"next", 1}};
  nlohmann::json branch{{"kind", "branch"}, {"condition", 5}, {"true", 1}, {"false", 2}};
  nlohmann::json gradHook{{"kind", "grad_hook"}, {"tensor", 2}, {"hook", 0}, {"next", 1}};
  nlohmann::json moduleHook{
      {"kind", "module_hook"}, {"stage", "input"}, {"hook", 0},  {"tensors", {2}},
      {"results", {4}},        {"positions", {0}}, {"arity", 1}, {"next", 1}};
  std::vector<std::pair<std::string, nlohmann::json>> programs{
      {"call", {node({0, 1}, {2, 3}, call), node({2, 1}, {}, ret)}},
      {"grad_hook", {node({0, 1}, {2, 3}, gradHook), node({2, 1}, {}, ret)}},
      {"module_hook", {node({0, 1}, {2, 3}, moduleHook), node({4, 1}, {}, ret)}},
      {"branch",
       {node({0, 1}, {2, 3}, call), node({2, 1}, {4, 5}, branch), node({4, 1}, {}, ret),
        node({0, 4}, {}, ret)}}};
  for (auto &[name, nodes] : programs) {
    nlohmann::json document{{"name", "prog"},
                            {"program", {{"inputs", {"x", "y"}}, {"nodes", nodes}}},
                            {"graphs", {tiny}}};
    write(std::string(argv[3]) + "/" + name, document.dump(1));
  }
  return 0;
}
