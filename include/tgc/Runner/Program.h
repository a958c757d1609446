//===- Program.h - Running a program with graph breaks ----------*- C++ -*-===//
//
// A program compiled with --allow-graph-breaks is several graphs in one
// model.so and a small program in model.json that says which graph runs next
// and what the caller does between graphs (docs/graph-breaks.md). This is its
// one executor: `tgc run` uses it directly and `tgc.load` through the C ABI of
// libtgc_runner.so (tgc_runner.h). It owns one instance of each graph, keeps
// the buffers of the graphs in step, chains the backwards of the graphs it ran
// and leaves the calls between graphs (print) to its caller.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNNER_PROGRAM_H
#define TGC_RUNNER_PROGRAM_H

#include "tgc/Runner/Model.h"
#include "tgc/Runner/Status.h"
#include "tgc/Runner/Tensor.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tgc::runner {

/// A `call` step as the executor hands it to its caller.
struct ProgramCall {
  /// {"callee", "args", "kwargs"} of the step, each tensor argument
  /// ({"type": "tensor", "value": N}) replaced by {"type": "tensor", "index": k}
  /// (keeping its "number"), k indexing `tensors`.
  nlohmann::json call;
  /// The tensors the arguments pass, valid during the call.
  std::vector<const DLTensor *> tensors;
};

/// Performs a call step (or records it); a failure stops the run.
using CallHook = std::function<Status(const ProgramCall &)>;

/// A `module_hook` step of model.json's program, checked: program values `results`
/// are `tensors` (a submodule call's tensor arguments at stage "input", its tensor
/// results at stage "output"), at `positions` among `arity` arguments or results.
struct ModuleHookStep {
  std::string stage;
  int64_t hook = 0;
  std::vector<size_t> tensors;
  std::vector<size_t> results;
  std::vector<int64_t> positions;
  int64_t arity = 0;
  size_t next = 0;
  static Status parse(const nlohmann::json &step, ModuleHookStep &parsed);
};

/// A parameter, buffer or constant of one or more of the graphs.
struct StateEntry {
  std::string name;
  /// TGC_STATE_PARAMETER, _BUFFER or _CONSTANT.
  int kind;
};

/// The graphs of one program, one instance each, and the state of its last run.
class Program {
public:
  /// Reads the program of X.json beside `soPath` and creates an instance of
  /// each of its graphs.
  static Status open(const std::string &soPath, std::unique_ptr<Program> &program);

  /// model.json (the "program" and the "graphs", each graph's signature).
  const nlohmann::json &json() const { return document; }
  /// The program's inputs, by name: glue values 0..n-1.
  const std::vector<std::string> &inputNames() const { return inputs; }
  /// The state of every graph, each name once, in graph order.
  const std::vector<StateEntry> &state() const { return stateEntries; }
  /// Whether every graph has a backward (compiled with --train).
  bool isTrainable() const;

  /// Sets state `name` in every graph that has it.
  Status setState(const std::string &name, const DLTensor &value);
  /// Reads state `name` into a new host tensor (the graphs hold the same value).
  Status readState(const std::string &name, HostTensor &value);
  /// Reads state `name` into `value`, a tensor of its dtype and sizes.
  Status getState(const std::string &name, DLTensor &value);

  /// Runs the program on `inputArgs` (one per input; the caller keeps them
  /// valid until the run returns; the graphs write mutated inputs into them):
  /// each graph with tgc_model_run (tgc_model_run_train when `train`), each call
  /// step through `call`, each branch on the value of its condition.
  Status run(const std::vector<DLTensor> &inputArgs, bool train, const CallHook &call);

  /// After a run: the graph whose results are the program's (its entry in
  /// model.json's "graphs" says which outputs are Python state, and its replay).
  size_t resultGraph() const { return result; }
  /// After a run: the result graph's outputs (the caller may take them).
  std::vector<ManagedTensor> &outputs() { return results; }
  /// After a run: whether a graph wrote program input `i`.
  bool inputIsMutated(size_t i) const { return mutatedInputs.count(i) != 0; }
  /// After a run: whether result `k` has a gradient.
  bool outputHasGradient(size_t k) const;

  /// "input.<i>" for each program input, then each parameter a graph
  /// differentiates: what backward() returns.
  const std::vector<std::string> &gradientNames() const { return gradients; }
  /// After a run with `train`: the backwards of the graphs run, last first, on
  /// `gradOutputs` (one per result, null for none). `grads` gets one entry per
  /// gradientNames() entry, null where none flowed; parameter gradients are
  /// summed over the graphs. Each `grad_hook` step of the run calls `hook` (when
  /// set) with {"hook": N, "tensor": V, "where": ...} and the gradient of program value
  /// V, which the hook may overwrite, before the backward of the graph that computed V
  /// (none when no gradient reached V). Each `module_hook` step calls `hook` with
  /// {"hook": N, "stage": S, "positions", "arity", "where", ...} and gradients it may
  /// overwrite (ProgramBackward.cpp, moduleHookBackward), then adds the gradients of
  /// its `results` to those of its `tensors`, `hook` or not.
  Status backward(const std::vector<const DLTensor *> &gradOutputs,
                  std::vector<ManagedTensor> &grads, const CallHook &hook = {});

private:
  /// A glue value: a program input (borrowed) or a graph's output (owned).
  struct Glue {
    DLTensor tensor{};
    ManagedTensor owned;
    bool defined = false;
  };

  Status load(const std::string &soPath);
  const nlohmann::json &node(size_t index) const;
  Status glue(const nlohmann::json &index, DLTensor *&tensor);
  Status runNode(size_t index, bool train);
  Status defineOutputs(size_t index);
  Status takeStep(size_t index, const CallHook &call, size_t &next, bool &done);
  Status callStep(const nlohmann::json &step, const CallHook &call);
  Status callArgument(const nlohmann::json &arg, ProgramCall &call, nlohmann::json &converted);
  Status syncBuffers(size_t graph, const char *mutationsKey);
  Status gradOutputsOf(size_t step, const std::vector<const DLTensor *> &gradOutputs,
                       std::map<size_t, HostTensor> &valueGrads, std::vector<HostTensor> &zeros,
                       std::vector<DLTensor> &views, std::vector<DLTensor *> &pointers);
  Status runGradHooks(size_t step, std::map<size_t, HostTensor> &valueGrads, const CallHook &hook);
  /// A submodule call's results' gradients after its backward pre-hooks (none where
  /// none reached a result), kept from its `module_hook` output stage for its input stage.
  using KeptGrads = std::vector<std::optional<HostTensor>>;
  Status moduleHookBackward(size_t step, std::map<size_t, HostTensor> &valueGrads,
                            const CallHook &hook, std::map<int64_t, KeptGrads> &kept);
  Status backwardStep(size_t step, const std::vector<const DLTensor *> &gradOutputs,
                      std::map<size_t, HostTensor> &valueGrads,
                      std::map<std::string, HostTensor> &paramGrads);
  Status fail(size_t graph, const std::string &what) const { return models[graph]->error(what); }

  nlohmann::json document;
  std::vector<std::string> inputs;
  std::vector<std::unique_ptr<Model>> models;
  std::map<std::string, size_t> graphIndex;
  std::vector<StateEntry> stateEntries;
  std::vector<std::string> gradients;

  // The last run.
  std::vector<Glue> values;
  std::set<size_t> mutatedInputs;
  std::vector<ManagedTensor> results;
  size_t result = 0;
  /// The nodes run, in order (for the backward).
  std::vector<size_t> trail;
};

} // namespace tgc::runner

#endif // TGC_RUNNER_PROGRAM_H
