/* Run.c - tgc_model_run: checks, binding, descriptors, call, write-back. */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- Scratch ----------------------------------------------------------===*/

/* The arena both entries keep their temporaries in: as large as the larger needs. */
static int allocate_arena(tgc_model *m) {
  uint64_t bytes = m->sig.arena_bytes;
  if (m->sig.has_backward && m->sig.backward_arena_bytes > bytes)
    bytes = m->sig.backward_arena_bytes;
  if (bytes == 0)
    return 0;
  if (bytes > (uint64_t)INT64_MAX - TGC_ALIGNMENT)
    return 1;
  if (m->cuda) {
    tgc_cuda *previous = tgc_cuda_enter(m->cuda);
    m->arena = tgc_cuda_alloc(m->cuda, (size_t)bytes);
    tgc_cuda_leave(previous);
  } else {
    m->arena = tgc_aligned_alloc((size_t)bytes);
  }
  m->arena_capacity = bytes;
  return m->arena == NULL;
}

int tgc_run_scratch_init(tgc_model *m) {
  tgc_run_scratch *run = &m->run;
  const tgc_signature *sig = &m->sig;
  if (allocate_arena(m))
    return 1;
  /* The arena's descriptors come last. */
  size_t words = tgc_descriptor_words(1) + tgc_descriptor_words(0), result_dims = 0;
  for (uint32_t i = 0; i < sig->num_args; ++i)
    words += tgc_descriptor_words(sig->args[i].rank);
  for (uint32_t i = 0; i < sig->num_results; ++i) {
    words += tgc_descriptor_words(sig->results[i].rank);
    result_dims += sig->results[i].rank;
  }
  /* Saved values the forward writes are extra results. */
  for (uint32_t i = 0; i < sig->num_saved; ++i)
    words += tgc_descriptor_words(sig->saved[i].rank);
  size_t slots = (size_t)sig->num_args + sig->num_results + sig->num_saved + 3;
  size_t results = (size_t)sig->num_results + 1;
  size_t inputs = (size_t)m->num_inputs + 1;
  run->packed_args = calloc(slots, sizeof *run->packed_args);
  run->descriptor_words = calloc(words + 1, sizeof *run->descriptor_words);
  run->result_sizes = calloc(result_dims + 1, sizeof *run->result_sizes);
  run->result_sizes_at = calloc(results, sizeof *run->result_sizes_at);
  run->result_nbytes = calloc(results, sizeof *run->result_nbytes);
  run->result_data = calloc(results, sizeof *run->result_data);
  run->result_managed = calloc(results, sizeof *run->result_managed);
  run->input_data = calloc(inputs, sizeof *run->input_data);
  run->input_packed = calloc(inputs, sizeof *run->input_packed);
  if (!run->packed_args || !run->descriptor_words || !run->result_sizes || !run->result_sizes_at ||
      !run->result_nbytes || !run->result_data || !run->result_managed || !run->input_data ||
      !run->input_packed)
    return 1;
  uint32_t at = 0;
  for (uint32_t i = 0; i < sig->num_results; ++i) {
    run->result_sizes_at[i] = at;
    at += sig->results[i].rank;
  }
  return 0;
}

void tgc_run_scratch_free(tgc_model *m) {
  tgc_run_scratch *run = &m->run;
  free(run->packed_args);
  free(run->descriptor_words);
  free(run->result_sizes);
  free(run->result_sizes_at);
  free(run->result_nbytes);
  free(run->result_data);
  free(run->result_managed);
  free(run->input_data);
  free(run->input_packed);
  memset(run, 0, sizeof *run);
  if (m->cuda && m->arena) {
    tgc_cuda *previous = tgc_cuda_enter(m->cuda);
    tgc_cuda_free(m->arena);
    tgc_cuda_leave(previous);
  } else {
    free(m->arena);
  }
  m->arena = NULL;
  m->arena_capacity = 0;
}

/*===--- Describing things in messages ------------------------------------===*/

static const tgc_arg_sig *input_sig(const tgc_model *m, uint32_t i) {
  return &m->sig.args[m->input_args[i]];
}

/* Starts an error message about user input i: "input 'x' (#0): ". */
static void begin_input_error(tgc_model *m, uint32_t i, tgc_message *msg) {
  tgc_message_init(msg, m->error, sizeof m->error);
  tgc_message_append(msg, "input '%s' (#%" PRIu32 "): ", input_sig(m, i)->name, i);
}

static void append_range(tgc_message *msg, const tgc_symbol_sig *s) {
  if (s->max == INT64_MAX)
    tgc_message_append(msg, "[%" PRId64 ", inf]", s->min);
  else
    tgc_message_append(msg, "[%" PRId64 ", %" PRId64 "]", s->min, s->max);
}

/* Appends " with s = v from input 'x' dimension d, ..." for the symbols of
 * `e`, so that a size mismatch names where each symbol's value came from. */
static void append_bindings(const tgc_model *m, const tgc_expr *e, tgc_message *msg) {
  const char *separator = ", with ";
  for (uint32_t s = 0; s < m->sig.num_symbols; ++s) {
    if (!tgc_expr_uses_symbol(e, s) || !m->symbol_bound[s])
      continue;
    const tgc_binder *b = &m->binders[s];
    tgc_message_append(msg, "%s%s = %" PRId64 " from input '%s' dimension %" PRIu32, separator,
                       m->sig.symbols[s].name, m->symbol_values[s],
                       input_sig(m, (uint32_t)b->input)->name, b->dim);
    separator = ", ";
  }
}

static bool expr_is_constant(const tgc_expr *e) {
  for (uint32_t i = 0; i < e->num_ops; ++i)
    if (e->ops[i].opcode == TGC_EXPR_SYM)
      return false;
  return true;
}

/* Appends "2*batch + 1" and the symbols' values, or nothing for constants. */
static void append_expr_explanation(const tgc_model *m, const tgc_expr *e, tgc_message *msg) {
  if (expr_is_constant(e))
    return;
  char text[256];
  tgc_expr_format(e, m->sig.symbols, text, sizeof text);
  tgc_message_append(msg, " = %s", text);
  append_bindings(m, e, msg);
}

static const char *eval_problem(enum tgc_eval_status status) {
  switch (status) {
  case TGC_EVAL_DIVISION_BY_ZERO:
    return "divides by zero";
  case TGC_EVAL_OVERFLOW:
    return "overflows";
  default:
    return "uses an unbound symbol";
  }
}

/*===--- Checking inputs --------------------------------------------------===*/

static int check_input_tensor(tgc_model *m, uint32_t i, const DLTensor *t) {
  tgc_message msg;
  const tgc_arg_sig *a = input_sig(m, i);
  char expected[64], got[64];
  begin_input_error(m, i, &msg);
  if (!t) {
    tgc_message_append(&msg, "the tensor is NULL");
    return 1;
  }
  if (tgc_check_device(m, t, &msg))
    return 1;
  if (!tgc_dtype_equal(t->dtype, a->dtype)) {
    tgc_message_append(&msg, "expected dtype %s, got %s",
                       tgc_dtype_name(a->dtype, expected, sizeof expected),
                       tgc_dtype_name(t->dtype, got, sizeof got));
    return 1;
  }
  if (t->ndim != (int32_t)a->rank) {
    tgc_message_append(&msg, "expected rank %" PRIu32 ", got %d", a->rank, (int)t->ndim);
    return 1;
  }
  if (a->rank > 0 && !t->shape) {
    tgc_message_append(&msg, "the shape is NULL");
    return 1;
  }
  size_t nbytes;
  for (uint32_t d = 0; d < a->rank; ++d) {
    if (t->shape[d] < 0) {
      tgc_message_append(&msg, "dimension %" PRIu32 " has negative size %" PRId64, d, t->shape[d]);
      return 1;
    }
  }
  if (!tgc_nbytes(t->shape, a->rank, tgc_dtype_size(a->dtype), &nbytes)) {
    tgc_message_append(&msg, "the tensor is too large");
    return 1;
  }
  if (nbytes > 0 && !t->data) {
    tgc_message_append(&msg, "the data pointer is NULL");
    return 1;
  }
  uintptr_t lo, hi;
  if (!tgc_dltensor_extent(t, tgc_dtype_size(a->dtype), &lo, &hi)) {
    tgc_message_append(&msg, "its strides and byte offset reach outside the address space");
    return 1;
  }
  if (tgc_check_cuda_layout(m, t, &msg))
    return 1;
  m->error[0] = '\0';
  return 0;
}

/* Whether the call writes user input i: a forward mutation, or with `keep`
 * (run_train) a backward one. */
static bool input_written(const tgc_model *m, uint32_t i, bool keep) {
  return m->input_mutation[i] >= 0 ||
         (keep && m->train.input_mutation && m->train.input_mutation[i] >= 0);
}

/* An input the model writes must not share memory with itself or another
 * input: the compiled program reads every input as it was at the call (eager
 * would see the write through the other name), so such a call is refused
 * rather than computed differently from eager. Inputs that are only read may
 * overlap freely. The checked extents are conservative: tensors whose bytes
 * interleave without sharing an element are refused too. */
static int check_written_inputs(tgc_model *m, DLTensor *const *inputs, bool keep) {
  for (uint32_t i = 0; i < m->num_inputs; ++i) {
    if (!input_written(m, i, keep))
      continue;
    const DLTensor *t = inputs[i];
    size_t elem = tgc_dtype_size(input_sig(m, i)->dtype);
    uintptr_t lo, hi;
    tgc_dltensor_extent(t, elem, &lo, &hi); /* checked by check_input_tensor */
    if (lo == hi)
      continue;
    tgc_message msg;
    if (tgc_dltensor_may_overlap_itself(t)) {
      begin_input_error(m, i, &msg);
      tgc_message_append(&msg, "the model writes to it, and its strides make elements share memory "
                               "(a stride of 0, as from expand); pass a tensor whose elements are "
                               "distinct (e.g. a clone)");
      return 1;
    }
    for (uint32_t j = 0; j < m->num_inputs; ++j) {
      uintptr_t other_lo, other_hi;
      if (j == i ||
          !tgc_dltensor_extent(inputs[j], tgc_dtype_size(input_sig(m, j)->dtype), &other_lo,
                               &other_hi) ||
          other_lo == other_hi || other_hi <= lo || hi <= other_lo)
        continue;
      begin_input_error(m, i, &msg);
      tgc_message_append(&msg,
                         "the model writes to it, and it shares memory with input '%s' (#%" PRIu32
                         "); pass separate tensors (e.g. a clone of one)",
                         input_sig(m, j)->name, j);
      return 1;
    }
  }
  return 0;
}

/* Solves size = coefficient * s + constant for s, or explains why not. */
static int solve_binder(tgc_model *m, uint32_t s, int64_t size, int64_t *value) {
  const tgc_binder *b = &m->binders[s];
  if (b->coefficient == 1 && b->constant == 0) {
    *value = size;
    return 0;
  }
  int64_t shifted, remainder;
  if (!__builtin_sub_overflow(size, b->constant, &shifted) &&
      tgc_mod(shifted, b->coefficient, &remainder) == TGC_EVAL_OK && remainder == 0 &&
      tgc_floordiv(shifted, b->coefficient, value) == TGC_EVAL_OK)
    return 0;
  tgc_message msg;
  char text[256];
  const tgc_arg_sig *a = input_sig(m, (uint32_t)b->input);
  tgc_expr_format(&a->sizes[b->dim], m->sig.symbols, text, sizeof text);
  begin_input_error(m, (uint32_t)b->input, &msg);
  tgc_message_append(&msg,
                     "dimension %" PRIu32 " is %" PRId64 ", which is not %s for any integer %s",
                     b->dim, size, text, m->sig.symbols[s].name);
  return 1;
}

/* Gives each symbol its value from its binder and checks its range. */
static int bind_symbols(tgc_model *m, DLTensor *const *inputs) {
  for (uint32_t s = 0; s < m->sig.num_symbols; ++s) {
    m->symbol_bound[s] = false;
    const tgc_binder *b = &m->binders[s];
    if (b->input < 0)
      continue;
    int64_t size = inputs[b->input]->shape[b->dim], value;
    if (solve_binder(m, s, size, &value))
      return 1;
    const tgc_symbol_sig *sym = &m->sig.symbols[s];
    if (value < sym->min || value > sym->max) {
      tgc_message msg;
      begin_input_error(m, (uint32_t)b->input, &msg);
      tgc_message_append(&msg, "dimension %" PRIu32 " is %" PRId64, b->dim, size);
      if (b->coefficient != 1 || b->constant != 0)
        tgc_message_append(&msg, ", so %s = %" PRId64, sym->name, value);
      tgc_message_append(&msg, ", outside the range ");
      append_range(&msg, sym);
      tgc_message_append(&msg, " of symbol '%s'", sym->name);
      return 1;
    }
    m->symbol_values[s] = value;
    m->symbol_bound[s] = true;
  }
  return 0;
}

/* Checks every input dimension against its size expression. */
static int check_input_sizes(tgc_model *m, DLTensor *const *inputs) {
  for (uint32_t i = 0; i < m->num_inputs; ++i) {
    const tgc_arg_sig *a = input_sig(m, i);
    for (uint32_t d = 0; d < a->rank; ++d) {
      int64_t expected, actual = inputs[i]->shape[d];
      enum tgc_eval_status status =
          tgc_expr_eval(&a->sizes[d], m->symbol_values, m->symbol_bound, &expected);
      if (status == TGC_EVAL_OK && expected == actual)
        continue;
      tgc_message msg;
      begin_input_error(m, i, &msg);
      if (status != TGC_EVAL_OK) {
        tgc_message_append(&msg, "the size of dimension %" PRIu32 " %s", d, eval_problem(status));
      } else {
        tgc_message_append(&msg, "dimension %" PRIu32 " is %" PRId64 ", expected %" PRId64, d,
                           actual, expected);
      }
      append_expr_explanation(m, &a->sizes[d], &msg);
      return 1;
    }
  }
  return 0;
}

static int check_run_arguments(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                               DLManagedTensor **outputs, int64_t num_outputs) {
  if (num_inputs != m->num_inputs)
    return tgc_fail(m, "expected %" PRIu32 " inputs, got %" PRId64, m->num_inputs, num_inputs);
  if (num_outputs != m->num_outputs)
    return tgc_fail(m, "expected room for %" PRIu32 " outputs, got %" PRId64, m->num_outputs,
                    num_outputs);
  if (!inputs && num_inputs > 0)
    return tgc_fail(m, "the inputs array is NULL");
  if (!outputs && num_outputs > 0)
    return tgc_fail(m, "the outputs array is NULL");
  for (uint32_t i = 0; i < m->num_inputs; ++i)
    if (check_input_tensor(m, i, inputs[i]))
      return 1;
  return 0;
}

/*===--- Result shapes ----------------------------------------------------===*/

static void begin_result_error(tgc_model *m, uint32_t r, tgc_message *msg) {
  const tgc_result_sig *res = &m->sig.results[r];
  tgc_message_init(msg, m->error, sizeof m->error);
  const char *what = res->kind == TGC_RESULT_USER_OUTPUT       ? "output"
                     : res->kind == TGC_RESULT_BUFFER_MUTATION ? "new value of buffer"
                                                               : "new value of input";
  tgc_message_append(msg, "%s '%s': ", what, res->name);
}

/* The shape a mutation result must have: its target's. */
static const int64_t *target_shape(const tgc_model *m, const tgc_result_sig *res,
                                   DLTensor *const *inputs) {
  if (res->kind == TGC_RESULT_BUFFER_MUTATION)
    return m->state[m->arg_state[res->target]].sizes;
  return inputs[m->arg_input[res->target]]->shape;
}

static int compute_result_shape(tgc_model *m, uint32_t r, DLTensor *const *inputs) {
  const tgc_result_sig *res = &m->sig.results[r];
  int64_t *sizes = m->run.result_sizes + m->run.result_sizes_at[r];
  tgc_message msg;
  for (uint32_t d = 0; d < res->rank; ++d) {
    enum tgc_eval_status status =
        tgc_expr_eval(&res->sizes[d], m->symbol_values, m->symbol_bound, &sizes[d]);
    if (status == TGC_EVAL_OK && sizes[d] >= 0)
      continue;
    begin_result_error(m, r, &msg);
    if (status != TGC_EVAL_OK)
      tgc_message_append(&msg, "the size of dimension %" PRIu32 " %s", d, eval_problem(status));
    else
      tgc_message_append(&msg, "dimension %" PRIu32 " would be %" PRId64, d, sizes[d]);
    append_expr_explanation(m, &res->sizes[d], &msg);
    return 1;
  }
  if (!tgc_nbytes(sizes, res->rank, tgc_dtype_size(res->dtype), &m->run.result_nbytes[r])) {
    begin_result_error(m, r, &msg);
    tgc_message_append(&msg, "the tensor would be too large");
    return 1;
  }
  if (res->kind == TGC_RESULT_USER_OUTPUT || res->rank == 0 ||
      memcmp(sizes, target_shape(m, res, inputs), res->rank * sizeof *sizes) == 0)
    return 0;
  begin_result_error(m, r, &msg);
  tgc_message_append(&msg, "invalid signature: shape ");
  tgc_message_append_shape(&msg, sizes, res->rank);
  tgc_message_append(&msg, " differs from the shape it replaces ");
  tgc_message_append_shape(&msg, target_shape(m, res, inputs), res->rank);
  return 1;
}

/*===--- Buffers for the call ---------------------------------------------===*/

/* Frees what a run allocated and has not handed out. */
static void release_run(tgc_model *m) {
  tgc_run_scratch *run = &m->run;
  for (uint32_t i = 0; i < m->num_inputs; ++i) {
    free(run->input_packed[i]);
    run->input_packed[i] = NULL;
  }
  for (uint32_t r = 0; r < m->sig.num_results; ++r)
    tgc_result_buffer_free(m, &m->sig.results[r], &run->result_data[r], &run->result_managed[r]);
}

static int allocate_run(tgc_model *m, DLTensor *const *inputs) {
  tgc_run_scratch *run = &m->run;
  for (uint32_t r = 0; r < m->sig.num_results; ++r)
    if (tgc_result_buffer(m, &m->sig.results[r], run->result_sizes + run->result_sizes_at[r],
                          run->result_nbytes[r], &run->result_data[r], &run->result_managed[r]))
      return tgc_fail(m, "out of memory allocating results");
  for (uint32_t i = 0; i < m->num_inputs; ++i)
    if (tgc_contiguous_data(inputs[i], &run->input_data[i], &run->input_packed[i]))
      return tgc_fail(m, "out of memory packing input '%s'", input_sig(m, i)->name);
  return 0;
}

static void build_descriptors(tgc_model *m, DLTensor *const *inputs) {
  tgc_run_scratch *run = &m->run;
  int64_t *words = run->descriptor_words;
  void **slot = run->packed_args;
  for (uint32_t i = 0; i < m->sig.num_args; ++i) {
    const tgc_arg_sig *a = &m->sig.args[i];
    *slot++ = words;
    if (m->arg_state[i] >= 0) {
      const tgc_state_slot *state = &m->state[m->arg_state[i]];
      words = tgc_write_descriptor(words, state->data, state->sizes, a->rank);
    } else {
      int32_t input = m->arg_input[i];
      words = tgc_write_descriptor(words, run->input_data[input], inputs[input]->shape, a->rank);
    }
  }
  for (uint32_t r = 0; r < m->sig.num_results; ++r) {
    *slot++ = words;
    words =
        tgc_write_descriptor(words, run->result_data[r],
                             run->result_sizes + run->result_sizes_at[r], m->sig.results[r].rank);
  }
  /* Then the saved values the forward writes, in saved order. */
  for (uint32_t k = 0; k < m->sig.num_saved; ++k) {
    if (m->sig.saved[k].arg != TGC_NO_TARGET)
      continue;
    *slot++ = words;
    words = tgc_write_descriptor(words, m->train.call_data[k],
                                 m->train.call_sizes + m->train.sizes_at[k], m->sig.saved[k].rank);
  }
  tgc_arena_descriptors(m, slot, words);
}

/* User outputs that eager lays out other than row-major (a transposed result,
 * channels-last, a broadcast) in that layout. Before commit_run: a failure leaves the
 * instance's state and the caller's inputs as they were. */
static int relayout_outputs(tgc_model *m) {
  for (uint32_t k = 0; k < m->num_outputs; ++k) {
    uint32_t r = m->output_results[k];
    const tgc_result_sig *res = &m->sig.results[r];
    if (res->num_strides == 0)
      continue;
    if (m->cuda ? tgc_result_relayout_cuda(m, res, m->run.result_managed[r])
                : tgc_result_relayout(res, m->run.result_managed[r]))
      return tgc_fail(m, "out of memory laying out output '%s'", res->name);
  }
  return 0;
}

/* Applies a finished call: swaps in new buffer values, writes mutated
 * inputs back through the caller's strides, hands out the outputs. */
static void commit_run(tgc_model *m, DLTensor *const *inputs, DLManagedTensor **outputs) {
  tgc_run_scratch *run = &m->run;
  for (uint32_t r = 0; r < m->sig.num_results; ++r) {
    const tgc_result_sig *res = &m->sig.results[r];
    const DLTensor *input =
        res->kind == TGC_RESULT_USER_INPUT_MUTATION ? inputs[m->arg_input[res->target]] : NULL;
    tgc_apply_mutation(m, res, run->result_data[r], input);
  }
  for (uint32_t k = 0; k < m->num_outputs; ++k) {
    uint32_t r = m->output_results[k];
    outputs[k] = run->result_managed[r];
    run->result_managed[r] = NULL;
  }
}

/* One call of the forward entry; `keep` keeps the saved values of a
 * trainable model pending for the backward. */
static int run_forward_here(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                            DLManagedTensor **outputs, int64_t num_outputs, bool keep) {
  m->error[0] = '\0';
  for (int64_t k = 0; outputs && k < num_outputs; ++k)
    outputs[k] = NULL;
  if (check_run_arguments(m, inputs, num_inputs, outputs, num_outputs) ||
      check_written_inputs(m, inputs, keep) || bind_symbols(m, inputs) ||
      check_input_sizes(m, inputs))
    return 1;
  for (uint32_t r = 0; r < m->sig.num_results; ++r)
    if (compute_result_shape(m, r, inputs))
      return 1;
  if (allocate_run(m, inputs) || tgc_saved_prepare_call(m)) {
    release_run(m);
    tgc_saved_release_call(m);
    return 1;
  }
  build_descriptors(m, inputs);
  int threads = tgc_threads_enter(m->num_threads);
  m->desc->forward(m->run.packed_args);
  tgc_threads_leave(threads);
  tgc_arena_grow(m);
  if (tgc_cuda_call_failed(m) || relayout_outputs(m) || tgc_cuda_call_failed(m)) {
    release_run(m);
    tgc_saved_release_call(m);
    return 1;
  }
  commit_run(m, inputs, outputs);
  release_run(m);
  if (keep)
    tgc_saved_keep_call(m, inputs);
  tgc_saved_release_call(m);
  return tgc_cuda_call_failed(m);
}

/* run_forward_here, for a CUDA instance in its context, on `stream` when `on_stream`
 * (without waiting for the work), else on the instance's stream. */
static int run_forward_on(tgc_model *m, bool on_stream, void *stream, DLTensor *const *inputs,
                          int64_t num_inputs, DLManagedTensor **outputs, int64_t num_outputs,
                          bool keep) {
  if (!m->cuda)
    return run_forward_here(m, inputs, num_inputs, outputs, num_outputs, keep);
  tgc_cuda *previous =
      on_stream ? tgc_cuda_enter_on(m->cuda, stream, false) : tgc_cuda_enter(m->cuda);
  int rc = run_forward_here(m, inputs, num_inputs, outputs, num_outputs, keep);
  tgc_cuda_leave(previous);
  return rc;
}

static int run_forward(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                       DLManagedTensor **outputs, int64_t num_outputs, bool keep) {
  return run_forward_on(m, false, NULL, inputs, num_inputs, outputs, num_outputs, keep);
}

/* A call another call's hold on `m` refused (tgc_model_claim): its outputs are NULL, as
 * on any failure. */
static int refused(DLManagedTensor **outputs, int64_t num_outputs) {
  for (int64_t k = 0; outputs && k < num_outputs; ++k)
    outputs[k] = NULL;
  return 1;
}

TGC_EXPORT int tgc_model_run(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                             DLManagedTensor **outputs, int64_t num_outputs) {
  if (!m)
    return 1;
  if (tgc_model_claim(m))
    return refused(outputs, num_outputs);
  int rc = run_forward(m, inputs, num_inputs, outputs, num_outputs, false);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_run_async(tgc_model *m, void *stream, DLTensor *const *inputs,
                                   int64_t num_inputs, DLManagedTensor **outputs,
                                   int64_t num_outputs) {
  if (!m)
    return 1;
  if (tgc_model_claim(m))
    return refused(outputs, num_outputs);
  int rc;
  if (!m->cuda && stream) {
    rc = refused(outputs, num_outputs);
    tgc_fail(m, "model '%s' runs on the CPU: tgc_model_run_async takes a NULL stream",
             m->desc->name);
  } else {
    rc = run_forward_on(m, true, stream, inputs, num_inputs, outputs, num_outputs, false);
  }
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_set_cuda_stream(tgc_model *m, void *stream) {
  if (!m)
    return 1;
  if (tgc_model_claim(m))
    return 1;
  int rc = 0;
  if (m->cuda)
    tgc_cuda_choose_stream(m->cuda, stream);
  else if (stream)
    rc = tgc_fail(m, "model '%s' runs on the CPU: it has no CUDA stream", m->desc->name);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_device_type(const tgc_model *m) {
  return !m ? 0 : m->cuda ? kDLCUDA : kDLCPU;
}

/* A contiguous copy of `src` (on `from`) in a new tensor on `to` (the instance's device,
 * or the CPU); the transfer through host memory where one side is the GPU. */
static int copy_tensor(tgc_model *m, const DLTensor *src, bool to_device, DLManagedTensor **out) {
  m->error[0] = '\0';
  if (!out)
    return tgc_fail(m, "the output pointer is NULL");
  *out = NULL;
  size_t elem = src ? tgc_dtype_size(src->dtype) : 0;
  size_t nbytes;
  uintptr_t lo, hi;
  if (!src || elem == 0 || src->ndim < 0 || src->ndim > TGC_MAX_RANK ||
      (src->ndim > 0 && !src->shape))
    return tgc_fail(m, "the tensor is NULL or malformed");
  for (int32_t d = 0; d < src->ndim; ++d)
    if (src->shape[d] < 0)
      return tgc_fail(m, "the tensor has a negative size");
  if (!tgc_nbytes(src->shape, (uint32_t)src->ndim, elem, &nbytes) ||
      !tgc_dltensor_extent(src, elem, &lo, &hi) || (nbytes > 0 && !src->data))
    return tgc_fail(m, "the tensor is too large, or its data is NULL");
  tgc_message msg;
  tgc_message_init(&msg, m->error, sizeof m->error);
  bool src_on_device = m->cuda && !to_device;
  if (src_on_device ? tgc_check_device(m, src, &msg) : src->device.device_type != kDLCPU) {
    if (!src_on_device)
      tgc_message_append(&msg, "expected a CPU tensor, got device type %d",
                         (int)src->device.device_type);
    return 1;
  }
  if (!m->cuda) {
    *out = tgc_managed_tensor_new(src->dtype, src->shape, (uint32_t)src->ndim, nbytes);
    if (!*out)
      return tgc_fail(m, "out of memory");
    tgc_copy_strided((*out)->dl_tensor.data, NULL, tgc_dltensor_base(src), src->strides, src->shape,
                     (uint32_t)src->ndim, elem);
    return 0;
  }
  /* Host memory before the call enters the device's context, where allocations are the
   * device's. */
  DLManagedTensor *t =
      to_device ? NULL
                : tgc_managed_tensor_new(src->dtype, src->shape, (uint32_t)src->ndim, nbytes);
  /* To the device: the elements packed on the host. From it: the bytes the elements
   * span (any strides), unpacked on the host. */
  size_t span = to_device ? nbytes : (size_t)(hi - lo);
  char *packed = malloc(span ? span : 1);
  if (!packed || (!to_device && !t)) {
    free(packed);
    if (t)
      t->deleter(t);
    return tgc_fail(m, "out of memory");
  }
  if (to_device)
    tgc_copy_strided(packed, NULL, tgc_dltensor_base(src), src->strides, src->shape,
                     (uint32_t)src->ndim, elem);
  tgc_cuda *previous = tgc_cuda_enter(m->cuda);
  int failed;
  if (to_device) {
    t = tgc_managed_tensor_on_device(m, src->dtype, src->shape, (uint32_t)src->ndim, nbytes);
    failed = !t || tgc_cuda_to_device(m->cuda, t->dl_tensor.data, packed, nbytes);
  } else {
    failed = tgc_cuda_to_host(m->cuda, packed, (const void *)lo, span);
    if (!failed)
      tgc_copy_strided(t->dl_tensor.data, NULL, packed + ((uintptr_t)tgc_dltensor_base(src) - lo),
                       src->strides, src->shape, (uint32_t)src->ndim, elem);
  }
  failed |= tgc_cuda_call_failed(m);
  tgc_cuda_leave(previous);
  free(packed);
  if (failed) {
    if (t)
      t->deleter(t);
    if (!m->error[0])
      tgc_fail(m, "copying to or from the GPU failed");
    return 1;
  }
  *out = t;
  return 0;
}

/* copy_tensor in a call that holds the instance. */
static int copy_claimed(tgc_model *m, const DLTensor *src, bool to_device, DLManagedTensor **out) {
  if (!m || tgc_model_claim(m))
    return 1;
  int rc = copy_tensor(m, src, to_device, out);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_copy_to_device(tgc_model *m, const DLTensor *src, DLManagedTensor **out) {
  return copy_claimed(m, src, true, out);
}

TGC_EXPORT int tgc_model_copy_to_host(tgc_model *m, const DLTensor *src, DLManagedTensor **out) {
  return copy_claimed(m, src, false, out);
}

static int run_train(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                     DLManagedTensor **outputs, int64_t num_outputs) {
  m->error[0] = '\0';
  for (int64_t k = 0; outputs && k < num_outputs; ++k)
    outputs[k] = NULL;
  if (!m->sig.has_backward)
    return tgc_fail(m,
                    "model '%s' is not trainable (compile it with "
                    "`tgc compile --train`)",
                    m->desc->name);
  return run_forward(m, inputs, num_inputs, outputs, num_outputs, true);
}

TGC_EXPORT int tgc_model_run_train(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                                   DLManagedTensor **outputs, int64_t num_outputs) {
  if (!m)
    return 1;
  if (tgc_model_claim(m))
    return refused(outputs, num_outputs);
  int rc = run_train(m, inputs, num_inputs, outputs, num_outputs);
  tgc_model_release(m);
  return rc;
}
