//===- CAPI.cpp - The C ABI of libtgc_runner.so ---------------------------===//
//
// tgc_program_* (tgc_runner.h) over the executor of Program.h. Every entry
// point catches what the executor may throw (malformed model.json) and turns
// failures into a return code and a last-error string.
//
//===----------------------------------------------------------------------===//

#include "tgc/Runner/Program.h"
#include "tgc/Runner/tgc_runner.h"

#include <exception>

using namespace tgc::runner;

struct tgc_program {
  std::unique_ptr<Program> program;
  std::string lastError;
};

namespace {

thread_local std::string openError;

/// Runs `body` (returning a Status), recording its failure in `program`.
template <typename Body> int guarded(tgc_program *program, Body body) {
  if (!program)
    return 1;
  Status status = Status::success();
  try {
    status = body(*program->program);
  } catch (const std::exception &error) {
    status = Status::error(std::string("malformed model.json: ") + error.what());
  }
  if (!status)
    return 0;
  program->lastError = status.message();
  return 1;
}

/// The i-th entry of `list`, or null out of range.
template <typename T> const T *entry(const std::vector<T> &list, int64_t index) {
  return index >= 0 && size_t(index) < list.size() ? &list[size_t(index)] : nullptr;
}

} // namespace

extern "C" {

int tgc_program_open(const char *so_path, tgc_program **program) {
  if (!so_path || !program) {
    openError = "tgc_program_open: null argument";
    return 1;
  }
  auto opened = std::make_unique<tgc_program>();
  Status status = Status::success();
  try {
    status = Program::open(so_path, opened->program);
  } catch (const std::exception &error) {
    status = Status::error(std::string(so_path) + ": malformed model.json: " + error.what());
  }
  if (status) {
    openError = status.message();
    return 1;
  }
  *program = opened.release();
  return 0;
}

void tgc_program_free(tgc_program *program) { delete program; }

const char *tgc_program_last_error(const tgc_program *program) {
  return program ? program->lastError.c_str() : openError.c_str();
}

int64_t tgc_program_num_inputs(const tgc_program *program) {
  return int64_t(program->program->inputNames().size());
}

const char *tgc_program_input_name(const tgc_program *program, int64_t index) {
  const std::string *name = entry(program->program->inputNames(), index);
  return name ? name->c_str() : nullptr;
}

int tgc_program_is_trainable(const tgc_program *program) {
  return program->program->isTrainable() ? 1 : 0;
}

int tgc_program_run(tgc_program *program, DLTensor *const *inputs, int64_t num_inputs, int train,
                    tgc_program_call_fn call, void *user) {
  return guarded(program, [&](Program &p) {
    std::vector<DLTensor> args;
    for (int64_t i = 0; i < num_inputs; ++i) {
      if (!inputs[i])
        return Status::error("input #" + std::to_string(i) + " is null");
      args.push_back(*inputs[i]);
    }
    CallHook hook;
    if (call)
      hook = [&](const ProgramCall &step) {
        std::string text = step.call.dump();
        std::vector<DLTensor *> tensors;
        for (const DLTensor *tensor : step.tensors)
          tensors.push_back(const_cast<DLTensor *>(tensor));
        if (call(user, text.c_str(), tensors.data(), int64_t(tensors.size())) != 0)
          return Status::error("calling " + step.call["callee"].dump() + " failed");
        return Status::success();
      };
    return p.run(args, train != 0, hook);
  });
}

const char *tgc_program_result_graph(const tgc_program *program) {
  const nlohmann::json &graph = program->program->json()["graphs"][program->program->resultGraph()];
  return graph["name"].get_ref<const std::string &>().c_str();
}

int64_t tgc_program_num_outputs(const tgc_program *program) {
  return int64_t(program->program->outputs().size());
}

int tgc_program_take_outputs(tgc_program *program, DLManagedTensor **outputs, int64_t num_outputs) {
  return guarded(program, [&](Program &p) {
    std::vector<ManagedTensor> &results = p.outputs();
    if (size_t(num_outputs) != results.size())
      return Status::error("the program has " + std::to_string(results.size()) + " outputs, not " +
                           std::to_string(num_outputs));
    for (size_t k = 0; k < results.size(); ++k)
      outputs[k] = results[k].release();
    results.clear();
    return Status::success();
  });
}

int tgc_program_input_is_mutated(const tgc_program *program, int64_t index) {
  return index >= 0 && program->program->inputIsMutated(size_t(index)) ? 1 : 0;
}

int tgc_program_output_has_gradient(const tgc_program *program, int64_t index) {
  return index >= 0 && program->program->outputHasGradient(size_t(index)) ? 1 : 0;
}

int64_t tgc_program_num_gradients(const tgc_program *program) {
  return int64_t(program->program->gradientNames().size());
}

const char *tgc_program_gradient_name(const tgc_program *program, int64_t index) {
  const std::string *name = entry(program->program->gradientNames(), index);
  return name ? name->c_str() : nullptr;
}

int tgc_program_backward(tgc_program *program, DLTensor *const *grad_outputs,
                         int64_t num_grad_outputs, DLManagedTensor **gradients,
                         int64_t num_gradients) {
  return tgc_program_backward_with_hooks(program, grad_outputs, num_grad_outputs, gradients,
                                         num_gradients, nullptr, nullptr);
}

int tgc_program_backward_with_hooks(tgc_program *program, DLTensor *const *grad_outputs,
                                    int64_t num_grad_outputs, DLManagedTensor **gradients,
                                    int64_t num_gradients, tgc_program_call_fn hook, void *user) {
  return guarded(program, [&](Program &p) {
    if (size_t(num_gradients) != p.gradientNames().size())
      return Status::error("the program has " + std::to_string(p.gradientNames().size()) +
                           " gradients, not " + std::to_string(num_gradients));
    std::vector<const DLTensor *> gradOutputs(grad_outputs, grad_outputs + num_grad_outputs);
    CallHook callHook;
    if (hook)
      callHook = [&](const ProgramCall &step) {
        std::string text = step.call.dump();
        std::vector<DLTensor *> tensors;
        for (const DLTensor *grad : step.tensors)
          tensors.push_back(const_cast<DLTensor *>(grad));
        if (hook(user, text.c_str(), tensors.data(), int64_t(tensors.size())) != 0)
          return Status::error(std::string(step.call.contains("stage") ? "the backward hooks #"
                                                                       : "the gradient hook #") +
                               step.call["hook"].dump() + " failed");
        return Status::success();
      };
    std::vector<ManagedTensor> grads;
    if (Status status = p.backward(gradOutputs, grads, callHook))
      return status;
    for (size_t g = 0; g < grads.size(); ++g)
      gradients[g] = grads[g].release();
    return Status::success();
  });
}

int64_t tgc_program_num_state(const tgc_program *program) {
  return int64_t(program->program->state().size());
}

const char *tgc_program_state_name(const tgc_program *program, int64_t index) {
  const StateEntry *state = entry(program->program->state(), index);
  return state ? state->name.c_str() : nullptr;
}

int tgc_program_state_kind(const tgc_program *program, int64_t index) {
  const StateEntry *state = entry(program->program->state(), index);
  return state ? state->kind : -1;
}

int tgc_program_set_state(tgc_program *program, const char *name, const DLTensor *value) {
  return guarded(program, [&](Program &p) { return p.setState(name, *value); });
}

int tgc_program_get_state(tgc_program *program, const char *name, DLTensor *value) {
  return guarded(program, [&](Program &p) { return p.getState(name, *value); });
}

} // extern "C"
