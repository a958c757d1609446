//===- ProgramTest.cpp - The graph-break program executor (tgc::runner) ---===//
//
// Programs written by hand over the tiny model (one graph, run at each node)
// exercise the executor's steps and errors without a compiler in the loop.
//
//===----------------------------------------------------------------------===//

#include "tgc/Runner/Program.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace tgc::runner;

namespace {

/// A copy of the tiny model as `prog.so` in a scratch directory, with a
/// prog.json holding `program` and tiny.json as its one graph.
class ProgramFiles {
public:
  explicit ProgramFiles(const nlohmann::json &program) {
    dir = std::filesystem::temp_directory_path() /
          ("tgc-program-test-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(TGC_TINY_MODEL_SO, dir / "prog.so",
                               std::filesystem::copy_options::overwrite_existing);
    std::ifstream in(std::filesystem::path(TGC_TINY_MODEL_SO).replace_extension("json"));
    nlohmann::json graph = nlohmann::json::parse(in);
    nlohmann::json json{{"name", "prog"}, {"program", program}, {"graphs", {graph}}};
    std::ofstream(dir / "prog.json") << json.dump();
  }
  ~ProgramFiles() { std::filesystem::remove_all(dir); }
  std::string so() const { return (dir / "prog.so").string(); }

private:
  std::filesystem::path dir;
};

/// The tiny model's inputs: x f32[2, 4], y f32[2].
struct TinyInputs {
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7}, y{10, 20};
  std::vector<int64_t> xShape{2, 4}, yShape{2};

  std::vector<DLTensor> tensors() {
    auto view = [](std::vector<float> &data, std::vector<int64_t> &shape) {
      DLTensor t{};
      t.data = data.data();
      t.device = {kDLCPU, 0};
      t.ndim = int32_t(shape.size());
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shape.data();
      return t;
    };
    return {view(x, xShape), view(y, yShape)};
  }
};

nlohmann::json node(std::vector<int> inputs, std::vector<int> outputs, nlohmann::json then) {
  return {{"graph", "tiny"}, {"inputs", inputs}, {"outputs", outputs}, {"then", then}};
}

/// Opens and runs `program` on the tiny inputs: "" or the error.
std::string runProgram(const nlohmann::json &program, const CallHook &hook = nullptr) {
  ProgramFiles files(program);
  std::unique_ptr<Program> opened;
  if (Status status = Program::open(files.so(), opened))
    return status.message();
  TinyInputs inputs;
  Status status = opened->run(inputs.tensors(), /*train=*/false, hook);
  return status.message();
}

} // namespace

TEST_CASE("A program runs its graphs and hands call steps to the caller", "[program]") {
  nlohmann::json call{
      {"kind", "call"},
      {"callee", "builtins.print"},
      {"args", {"ys", {{"type", "tensor"}, {"value", 3}}}},
      {"kwargs", nlohmann::json::array({nlohmann::json::array(
                     {"end", {{"type", "tensor"}, {"value", 2}, {"number", "float"}}})})},
      {"next", 1}};
  nlohmann::json program{
      {"inputs", {"x", "y"}},
      {"nodes", {node({0, 1}, {2, 3}, call), node({2, 1}, {}, {{"kind", "return"}})}}};
  ProgramFiles files(program);
  std::unique_ptr<Program> opened;
  REQUIRE(Program::open(files.so(), opened).message() == "");
  CHECK(opened->inputNames() == std::vector<std::string>{"x", "y"});
  CHECK(opened->state().size() == 3);

  std::vector<nlohmann::json> calls;
  std::vector<int64_t> firstSizes;
  TinyInputs inputs;
  Status status = opened->run(inputs.tensors(), false, [&](const ProgramCall &step) {
    calls.push_back(step.call);
    firstSizes.assign(step.tensors[0]->shape, step.tensors[0]->shape + step.tensors[0]->ndim);
    return Status::success();
  });
  REQUIRE(status.message() == "");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0]["callee"] == "builtins.print");
  CHECK(calls[0]["args"][1] == nlohmann::json{{"type", "tensor"}, {"index", 0}});
  CHECK(calls[0]["kwargs"][0][1] ==
        nlohmann::json{{"type", "tensor"}, {"index", 1}, {"number", "float"}});
  CHECK(firstSizes == std::vector<int64_t>{5});
  CHECK(opened->resultGraph() == 0);
  CHECK(opened->outputs().size() == 2);
  CHECK(opened->inputIsMutated(0));
  CHECK_FALSE(opened->inputIsMutated(1));

  HostTensor count;
  REQUIRE(opened->readState("count", count).message() == "");
  CHECK(*reinterpret_cast<int64_t *>(count.data.data()) == 2);
}

TEST_CASE("A failing call step stops the program with its message", "[program]") {
  nlohmann::json program{
      {"inputs", {"x", "y"}},
      {"nodes",
       {node({0, 1}, {2, 3},
             {{"kind", "call"}, {"callee", "f"}, {"args", {}}, {"kwargs", {}}, {"next", 1}}),
        node({0, 1}, {}, {{"kind", "return"}})}}};
  CHECK(runProgram(program, [](const ProgramCall &) { return Status::error("print failed"); }) ==
        "print failed");
}

/// A module_hook step (docs/graph-breaks.md) of `stage` passing value 2 on as value 4.
static nlohmann::json moduleHook(const char *stage, nlohmann::json tensors = {2},
                                 nlohmann::json positions = {0}) {
  return {{"kind", "module_hook"}, {"stage", stage},         {"hook", 0},  {"tensors", tensors},
          {"results", {4}},        {"positions", positions}, {"arity", 1}, {"next", 1}};
}

/// The first output of `program` run on the tiny inputs.
static std::vector<float> firstOutput(const nlohmann::json &program) {
  ProgramFiles files(program);
  std::unique_ptr<Program> opened;
  REQUIRE(Program::open(files.so(), opened).message() == "");
  TinyInputs inputs;
  REQUIRE(opened->run(inputs.tensors(), false, nullptr).message() == "");
  HostTensor out;
  REQUIRE(copyToHost(opened->outputs()[0]->dl_tensor, "out", out).message() == "");
  const auto *data = reinterpret_cast<const float *>(out.data.data());
  return std::vector<float>(data, data + out.numElements());
}

TEST_CASE("A module_hook step passes its tensors on as new program values", "[program]") {
  auto twoNodes = [](int second, nlohmann::json then) {
    return nlohmann::json{
        {"inputs", {"x", "y"}},
        {"nodes", {node({0, 1}, {2, 3}, then), node({second, 1}, {}, {{"kind", "return"}})}}};
  };
  nlohmann::json direct{
      {"kind", "call"}, {"callee", "f"}, {"args", {}}, {"kwargs", {}}, {"next", 1}};
  std::vector<float> expected = firstOutput(twoNodes(2, direct));
  CHECK(firstOutput(twoNodes(4, moduleHook("input"))) == expected);
  CHECK(firstOutput(twoNodes(4, moduleHook("output"))) == expected);
}

/// Whether `message` ends with `text` (errors found when the program is opened start with
/// the library's path).
static bool endsWith(const std::string &message, const std::string &text) {
  INFO(message);
  return message.size() >= text.size() &&
         message.compare(message.size() - text.size(), text.size(), text) == 0;
}

TEST_CASE("Malformed programs are errors naming the problem", "[program]") {
  auto oneNode = [](nlohmann::json then) {
    return nlohmann::json{{"inputs", {"x", "y"}}, {"nodes", {node({0, 1}, {2, 3}, then)}}};
  };
  auto twoNodes = [](nlohmann::json then) {
    return nlohmann::json{
        {"inputs", {"x", "y"}},
        {"nodes", {node({0, 1}, {2, 3}, then), node({0, 1}, {}, {{"kind", "return"}})}}};
  };
  auto call = [](nlohmann::json args, nlohmann::json kwargs = nlohmann::json::array()) {
    return nlohmann::json{
        {"kind", "call"}, {"callee", "f"}, {"args", args}, {"kwargs", kwargs}, {"next", 1}};
  };
  // Found when the program runs.
  CHECK(runProgram(oneNode(
            {{"kind", "call"}, {"callee", "f"}, {"args", {}}, {"kwargs", {}}, {"next", 0}})) ==
        "model.json: the program does not end");
  CHECK(runProgram(oneNode({{"kind", "branch"}, {"condition", 3}, {"true", 0}, {"false", 0}})) ==
        "a branch condition has 5 elements");
  CHECK(runProgram(twoNodes(call({{{"type", "tuple"}}}))) ==
        "model.json: a tuple argument of a call has no items");
  CHECK(runProgram(twoNodes(call({{{"type", "tensor"}}}))) ==
        "model.json: program value null is not defined where it is used");
  // Found when it is opened: a step without its keys, or with nodes or program values
  // the program cannot have.
  CHECK(endsWith(runProgram(oneNode({{"kind", "jump"}})),
                 "model.json: program node 0: unknown program step 'jump'"));
  std::string badCall = "model.json: program node 0: a malformed 'call' step (its keys: "
                        "docs/graph-breaks.md)";
  CHECK(endsWith(runProgram(oneNode({{"kind", "call"}, {"callee", "f"}})), badCall));
  CHECK(endsWith(runProgram(twoNodes(call({}, {{"sep"}}))), badCall));
  CHECK(
      endsWith(runProgram(oneNode(
                   {{"kind", "call"}, {"callee", "f"}, {"args", {}}, {"kwargs", {}}, {"next", 4}})),
               badCall));
  CHECK(endsWith(
      runProgram(oneNode({{"kind", "branch"}, {"condition", 7}, {"true", 0}, {"false", 0}})),
      "model.json: program node 0: a malformed 'branch' step (its keys: docs/graph-breaks.md)"));
  CHECK(endsWith(
      runProgram(nlohmann::json{{"inputs", {"x", "y"}},
                                {"nodes", {node({0, 1}, {2, 3}, {{"kind", "return"}})}}}
                     .patch(nlohmann::json::parse(
                         R"([{"op": "replace", "path": "/nodes/0/inputs", "value": 0}])"))),
      "model.json: program node 0 needs a graph name, and inputs and outputs that "
      "are program values"));
  std::string badHook = "model.json: a module_hook step needs stage (\"input\" or \"output\"), "
                        "hook, next, arity and as many tensors, results and increasing "
                        "positions below arity";
  CHECK(endsWith(runProgram(twoNodes(moduleHook("sideways"))), badHook));
  CHECK(endsWith(runProgram(twoNodes(moduleHook("input", {2, 3}))), badHook));
  CHECK(endsWith(runProgram(twoNodes(moduleHook("input", {2}, {1}))), badHook));
  CHECK(endsWith(runProgram(twoNodes(moduleHook("input", {9}))),
                 "model.json: program node 0: a malformed 'module_hook' step (its keys: "
                 "docs/graph-breaks.md)"));
  CHECK(runProgram(nlohmann::json{{"inputs", {"x", "y"}}, {"nodes", nlohmann::json::array()}})
            .find("model.json has a malformed \"program\"") != std::string::npos);
}
