// model.json's "program" (docs/graph-breaks.md), written by Target from the program
// attributes the .trace reader records on each graph's module.
#include "tgc/Target/ProgramJson.h"
#include "tgc/Dialect/Attributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mlir;
using namespace tgc;

namespace {

/// Graph modules with program attributes, and the diagnostics writing them reports.
struct Program {
  Program() {
    handler = std::make_unique<ScopedDiagnosticHandler>(&ctx, [this](Diagnostic &diag) {
      errors.push_back(diag.str());
      return success();
    });
  }

  /// Adds a graph whose user inputs and results are program values `inputs` and
  /// `outputs`, followed by `step` (a `kind` and the keys of that kind).
  ModuleOp graph(ArrayRef<int64_t> inputs, ArrayRef<int64_t> outputs,
                 ArrayRef<NamedAttribute> step) {
    ModuleOp module = modules.emplace_back(ModuleOp::create(UnknownLoc::get(&ctx))).get();
    module->setAttr(program::kGraphInputs, b.getDenseI64ArrayAttr(inputs));
    module->setAttr(program::kGraphOutputs, b.getDenseI64ArrayAttr(outputs));
    module->setAttr(program::kStep, b.getDictionaryAttr(step));
    names.push_back("p_g" + std::to_string(names.size()));
    return module;
  }

  NamedAttribute kind(StringRef value) { return named(program::kKindKey, b.getStringAttr(value)); }
  NamedAttribute named(StringRef key, Attribute value) { return b.getNamedAttr(key, value); }
  NamedAttribute integer(StringRef key, int64_t value) {
    return named(key, b.getI64IntegerAttr(value));
  }
  /// A call argument that is tensor `index` of the call.
  DictionaryAttr tensor(int64_t index) {
    return b.getDictionaryAttr(named("tensor", b.getI64IntegerAttr(index)));
  }

  /// The program's user inputs, on the first graph.
  void inputs(ArrayRef<StringRef> inputNames) {
    SmallVector<Attribute> attrs;
    for (StringRef name : inputNames)
      attrs.push_back(b.getStringAttr(name));
    (*modules.front())->setAttr(program::kProgramInputs, b.getArrayAttr(attrs));
  }

  FailureOr<std::string> write() {
    SmallVector<ModuleOp> graphs;
    for (OwningOpRef<ModuleOp> &module : modules)
      graphs.push_back(*module);
    return writeProgramJson(graphs, names);
  }

  MLIRContext ctx;
  Builder b{&ctx};
  std::vector<OwningOpRef<ModuleOp>> modules;
  std::vector<std::string> names;
  std::vector<std::string> errors;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
};

} // namespace

TEST_CASE("A program with a branch is written as docs/graph-breaks.md shows it") {
  Program p;
  p.graph({0}, {2, 3},
          {p.kind(program::kBranch), p.integer(program::kConditionKey, 3),
           p.integer(program::kTrueKey, 1), p.integer(program::kFalseKey, 2),
           p.named(program::kWhereKey, p.b.getStringAttr("gb_break_branch.py:11"))});
  p.graph({1, 2}, {}, {p.kind(program::kReturn)});
  p.graph({1, 2}, {}, {p.kind(program::kReturn)});
  p.inputs({"x", "y"});
  FailureOr<std::string> json = p.write();
  REQUIRE(succeeded(json));
  CHECK(*json == R"({"inputs":["x","y"],"nodes":[)"
                 R"({"graph":"p_g0","inputs":[0],"outputs":[2,3],"then":{"kind":"branch",)"
                 R"("condition":3,"true":1,"false":2,"where":"gb_break_branch.py:11"}},)"
                 R"({"graph":"p_g1","inputs":[1,2],"outputs":[],"then":{"kind":"return"}},)"
                 R"({"graph":"p_g2","inputs":[1,2],"outputs":[],"then":{"kind":"return"}}]})");
}

TEST_CASE("A call step writes each kind of argument and resolves tensors to program values") {
  Program p;
  Builder &b = p.b;
  Attribute namedTuple = b.getDictionaryAttr(
      {p.named("class", b.getStringAttr("torch.Size")),
       p.named("items", b.getArrayAttr({b.getI64IntegerAttr(2), b.getI64IntegerAttr(3)}))});
  SmallVector<Attribute> args = {b.getStringAttr("positive"),
                                 p.tensor(1),
                                 b.getF64FloatAttr(2.0),
                                 b.getF64FloatAttr(0.5),
                                 b.getF64FloatAttr(NAN),
                                 b.getBoolAttr(true),
                                 b.getI64IntegerAttr(-4),
                                 b.getUnitAttr(),
                                 b.getArrayAttr({p.tensor(0), b.getI64IntegerAttr(1)}),
                                 namedTuple};
  p.graph({0}, {1, 2},
          {p.kind(program::kCall), p.named(program::kCalleeKey, b.getStringAttr("builtins.print")),
           p.named(program::kArgsKey, b.getArrayAttr(args)),
           p.named(program::kKwargsKey, b.getDictionaryAttr(p.named("sep", b.getStringAttr("-")))),
           p.named(program::kTensorsKey, b.getDenseI64ArrayAttr({2, 1})),
           p.integer(program::kNextKey, 1)});
  p.graph({0, 1}, {}, {p.kind(program::kReturn)});
  p.inputs({"x"});
  FailureOr<std::string> json = p.write();
  REQUIRE(succeeded(json));
  CHECK(*json ==
        R"({"inputs":["x"],"nodes":[{"graph":"p_g0","inputs":[0],"outputs":[1,2],"then":)"
        R"({"kind":"call","callee":"builtins.print","args":["positive",)"
        R"({"type":"tensor","value":1},{"type":"float","value":"2.0"},0.5,)"
        R"({"type":"float","value":"nan"},true,-4,null,)"
        R"({"type":"tuple","items":[{"type":"tensor","value":2},1]},)"
        R"({"type":"tuple","class":{"type":"external","name":"torch.Size"},"items":[2,3]}],)"
        R"("kwargs":[["sep","-"]],"next":1}},)"
        R"({"graph":"p_g1","inputs":[0,1],"outputs":[],"then":{"kind":"return"}}]})");
}

TEST_CASE("A gradient hook step names the value, the hook and the next node") {
  Program p;
  p.graph({0}, {1},
          {p.kind(program::kGradHook), p.integer(program::kTensorKey, 1),
           p.integer(program::kHookKey, 0), p.integer(program::kNextKey, 1),
           p.named(program::kWhereKey, p.b.getStringAttr("prog.py:7"))});
  p.graph({1}, {}, {p.kind(program::kReturn)});
  p.inputs({"x"});
  FailureOr<std::string> json = p.write();
  REQUIRE(succeeded(json));
  CHECK(*json == R"({"inputs":["x"],"nodes":[)"
                 R"({"graph":"p_g0","inputs":[0],"outputs":[1],"then":{"kind":"grad_hook",)"
                 R"("tensor":1,"hook":0,"next":1,"where":"prog.py:7"}},)"
                 R"({"graph":"p_g1","inputs":[1],"outputs":[],"then":{"kind":"return"}}]})");
}

TEST_CASE("A gradient hook step without its hook is an error") {
  Program p;
  p.graph({0}, {1},
          {p.kind(program::kGradHook), p.integer(program::kTensorKey, 1),
           p.integer(program::kNextKey, 1)});
  p.graph({1}, {}, {p.kind(program::kReturn)});
  p.inputs({"x"});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "malformed tgc.step: a grad_hook needs tensor, hook and next");
}

/// A module hook step of `p` with the given results.
static SmallVector<NamedAttribute> moduleHookStep(Program &p, ArrayRef<int64_t> results) {
  auto array = [&](ArrayRef<int64_t> values) { return p.b.getDenseI64ArrayAttr(values); };
  return {p.kind(program::kModuleHook),
          p.named(program::kStageKey, p.b.getStringAttr("input")),
          p.integer(program::kHookKey, 3),
          p.named(program::kTensorsKey, array({0, 1})),
          p.named(program::kResultsKey, array(results)),
          p.named(program::kPositionsKey, array({0, 2})),
          p.integer(program::kArityKey, 3),
          p.integer(program::kNextKey, 1)};
}

TEST_CASE("A module hook step names its stage, hook, values, positions and arity") {
  Program p;
  p.graph({0, 1}, {}, moduleHookStep(p, {2, 3}));
  p.graph({2, 3}, {}, {p.kind(program::kReturn)});
  p.inputs({"x", "y"});
  FailureOr<std::string> json = p.write();
  REQUIRE(succeeded(json));
  CHECK(*json == R"({"inputs":["x","y"],"nodes":[)"
                 R"({"graph":"p_g0","inputs":[0,1],"outputs":[],"then":{"kind":"module_hook",)"
                 R"("stage":"input","hook":3,"tensors":[0,1],"results":[2,3],"positions":[0,2],)"
                 R"("arity":3,"next":1}},)"
                 R"({"graph":"p_g1","inputs":[2,3],"outputs":[],"then":{"kind":"return"}}]})");
}

TEST_CASE("A module hook step with fewer results than tensors is an error") {
  Program p;
  p.graph({0, 1}, {}, moduleHookStep(p, {2}));
  p.graph({2}, {}, {p.kind(program::kReturn)});
  p.inputs({"x", "y"});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "malformed tgc.step: a module_hook needs stage, hook, next and as "
                       "many tensors, results and positions");
}

TEST_CASE("A graph without a step is an error naming the attribute") {
  Program p;
  p.graph({0}, {}, {p.kind(program::kReturn)});
  (*p.modules.front())->removeAttr(program::kStep);
  p.inputs({"x"});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "a graph of the program has no tgc.step with a kind");
}

TEST_CASE("A call argument naming a tensor the call does not pass is an error") {
  Program p;
  p.graph({0}, {},
          {p.kind(program::kCall), p.named(program::kCalleeKey, p.b.getStringAttr("f")),
           p.named(program::kArgsKey, p.b.getArrayAttr({p.tensor(1)})),
           p.named(program::kKwargsKey, p.b.getDictionaryAttr({})),
           p.named(program::kTensorsKey, p.b.getDenseI64ArrayAttr({5})),
           p.integer(program::kNextKey, 0)});
  p.inputs({"x"});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "malformed tgc.step: an argument of the call is no constant, tuple or "
                       "tensor of the call");
}

TEST_CASE("A step of an unknown kind is an error") {
  Program p;
  p.graph({0}, {}, {p.kind("jump")});
  p.inputs({"x"});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "malformed tgc.step: unknown kind 'jump'");
}

TEST_CASE("A program without its input names is an error") {
  Program p;
  p.graph({0}, {}, {p.kind(program::kReturn)});
  CHECK(failed(p.write()));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "the program's first graph has no tgc.program_inputs (a list of names)");
}
