/*===- tgc_runner.h - C ABI of libtgc_runner.so: graph-break programs -----===*
 *
 * A program compiled with `tgc compile --allow-graph-breaks` is several models
 * in one model.so and a program in model.json saying which runs next
 * (docs/graph-breaks.md). libtgc_runner.so runs such programs: the same
 * executor as `tgc run`, for C callers and for `tgc.load` (through ctypes).
 *
 *   tgc_program *p;
 *   if (tgc_program_open("model.so", &p) != 0) puts(tgc_program_last_error(NULL));
 *   tgc_program_run(p, inputs, n, 0, print_call, NULL);
 *   DLManagedTensor *outs[N]; tgc_program_take_outputs(p, outs, N);
 *   tgc_program_free(p);
 *
 * Tensors are DLPack 0.6 `DLTensor`s; inputs are read (and, where the program
 * mutates them, written) in place. Functions returning int return 0 on
 * success and nonzero on failure, with the message in tgc_program_last_error.
 * A program is not thread-safe (one call at a time).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TGC_RUNNER_TGC_RUNNER_H
#define TGC_RUNNER_TGC_RUNNER_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tgc_program tgc_program;

/** A `call` step between two graphs (e.g. print). `call_json` is
 *  {"callee": "builtins.print", "args": [...], "kwargs": [[name, value]...]}
 *  in model.json's value encoding, each tensor argument written as
 *  {"type": "tensor", "index": k} (with its "number" when it stands for a
 *  Python number): tensors[k], valid during the call. Returns 0, or nonzero to
 *  stop the run. */
typedef int (*tgc_program_call_fn)(void *user, const char *call_json, DLTensor *const *tensors,
                                   int64_t num_tensors);

/** Opens the program of model.json beside `so_path` (X.json beside X.so) and
 *  creates an instance of each of its graphs. */
int tgc_program_open(const char *so_path, tgc_program **program);
/** Frees the program, its instances and any outputs not taken. */
void tgc_program_free(tgc_program *program);
/** The last error of `program`, or with NULL that of the last failed
 *  tgc_program_open on this thread. */
const char *tgc_program_last_error(const tgc_program *program);

/** The program's inputs (glue values 0..n-1), by name. */
int64_t tgc_program_num_inputs(const tgc_program *program);
const char *tgc_program_input_name(const tgc_program *program, int64_t index);
/** 1 if every graph has a backward (compiled with --train), else 0. */
int tgc_program_is_trainable(const tgc_program *program);

/** Runs the program on `inputs` (one per program input): each graph with
 *  tgc_model_run (tgc_model_run_train when `train`), each branch on its
 *  condition's value, each call step through `call` (NULL: calls are skipped). */
int tgc_program_run(tgc_program *program, DLTensor *const *inputs, int64_t num_inputs, int train,
                    tgc_program_call_fn call, void *user);
/** After a run: the graph whose outputs are the program's, as its "name" in
 *  model.json's "graphs" (its entry says which outputs are Python state and
 *  holds the replay list). */
const char *tgc_program_result_graph(const tgc_program *program);
/** After a run: the number of outputs (the result graph's). */
int64_t tgc_program_num_outputs(const tgc_program *program);
/** After a run: moves the outputs into `outputs` (the caller calls each one's
 *  deleter); `num_outputs` must be tgc_program_num_outputs. */
int tgc_program_take_outputs(tgc_program *program, DLManagedTensor **outputs, int64_t num_outputs);
/** After a run: 1 if a graph wrote program input `index`, else 0. */
int tgc_program_input_is_mutated(const tgc_program *program, int64_t index);
/** After a run: 1 if output `index` has a gradient, else 0. */
int tgc_program_output_has_gradient(const tgc_program *program, int64_t index);

/** What tgc_program_backward returns: "input.<i>" per program input, then the
 *  fully qualified name of each parameter a graph differentiates. */
int64_t tgc_program_num_gradients(const tgc_program *program);
const char *tgc_program_gradient_name(const tgc_program *program, int64_t index);
/** After a run with `train`: the backwards of the graphs run, last first.
 *  `grad_outputs`: one per output (NULL where it has no gradient);
 *  `gradients` receives one tensor per gradient name (NULL where none flowed;
 *  the caller calls each one's deleter). Parameter gradients are summed over
 *  the graphs (f32 or f64 host tensors). */
int tgc_program_backward(tgc_program *program, DLTensor *const *grad_outputs,
                         int64_t num_grad_outputs, DLManagedTensor **gradients,
                         int64_t num_gradients);
/** tgc_program_backward that runs the program's gradient hooks (`grad_hook`
 *  steps: a hook that changes Python state on a tensor the program computes,
 *  docs/graph-breaks.md) through `hook`: call_json is {"hook": N, "tensor": V,
 *  "where": "file:line"}, tensors[0] the gradient of program value V (a host
 *  tensor the hook may overwrite with its result, which then flows on), called
 *  before the backward of the graph that computed V. N numbers the hooks in
 *  the order of the result graph's `grad_hook` replay actions. A submodule call
 *  with backward hooks (`module_hook` steps) calls `hook` with {"hook": N,
 *  "stage": "output", "positions": [...], "arity": n, "inputs": {"positions",
 *  "arity"}, "where"} and the gradients of the call's tensor results (NULL where
 *  none reached one), which the module's backward pre-hooks may overwrite; then
 *  with {"hook": N, "stage": "input", "positions", "arity", "outputs": {...}}
 *  and the gradients of its tensor arguments through the call (which its full
 *  hooks may overwrite) followed by those the output stage left. */
int tgc_program_backward_with_hooks(tgc_program *program, DLTensor *const *grad_outputs,
                                    int64_t num_grad_outputs, DLManagedTensor **gradients,
                                    int64_t num_gradients, tgc_program_call_fn hook, void *user);

/** The state of every graph (parameters, buffers, constants), each name once;
 *  kinds are TGC_STATE_PARAMETER, _BUFFER and _CONSTANT of tgc_runtime.h. */
int64_t tgc_program_num_state(const tgc_program *program);
const char *tgc_program_state_name(const tgc_program *program, int64_t index);
int tgc_program_state_kind(const tgc_program *program, int64_t index);
/** Sets state `name` in every graph that has it. */
int tgc_program_set_state(tgc_program *program, const char *name, const DLTensor *value);
/** Copies state `name` into `value` (a tensor of its dtype and sizes). */
int tgc_program_get_state(tgc_program *program, const char *name, DLTensor *value);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TGC_RUNNER_TGC_RUNNER_H */
