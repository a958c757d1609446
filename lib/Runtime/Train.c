/* Train.c - tgc_model_backward, and the tables and scratch of a trainable
 * instance (docs/abi.md, "Training"). */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- Allocation -------------------------------------------------------===*/

int tgc_train_init(tgc_model *m) {
  const tgc_signature *sig = &m->sig;
  tgc_train_state *t = &m->train;
  if (!sig->has_backward)
    return 0;
  size_t saved = (size_t)sig->num_saved + 1, saved_dims = 0, words = 0, result_dims = 0;
  for (uint32_t i = 0; i < sig->num_saved; ++i) {
    saved_dims += sig->saved[i].rank;
    words += tgc_descriptor_words(sig->saved[i].rank);
  }
  for (uint32_t i = 0; i < sig->num_tangents; ++i)
    words += tgc_descriptor_words(sig->results[m->output_results[sig->tangents[i]]].rank);
  /* Symbols, then the arena and its request. */
  words += (sig->num_symbols + 1) * tgc_descriptor_words(1) + tgc_descriptor_words(0);
  for (uint32_t i = 0; i < sig->num_backward_results; ++i) {
    words += tgc_descriptor_words(sig->backward_results[i].rank);
    result_dims += sig->backward_results[i].rank;
  }
  size_t results = (size_t)sig->num_backward_results + 1;
  size_t tangents = (size_t)sig->num_tangents + 1;
  size_t inputs = (size_t)m->num_inputs + 1;
  t->call_data = calloc(saved, sizeof *t->call_data);
  t->call_sizes = calloc(saved_dims + 1, sizeof *t->call_sizes);
  t->sizes_at = calloc(saved, sizeof *t->sizes_at);
  t->call_nbytes = calloc(saved, sizeof *t->call_nbytes);
  t->pending_data = calloc(saved, sizeof *t->pending_data);
  t->pending_sizes = calloc(saved_dims + 1, sizeof *t->pending_sizes);
  t->pending_symbols = calloc((size_t)sig->num_symbols + 1, sizeof *t->pending_symbols);
  t->pending_inputs = calloc(inputs, sizeof *t->pending_inputs);
  t->pending_input_dims = calloc(inputs * 2 * TGC_MAX_RANK, sizeof *t->pending_input_dims);
  t->gradient_results = calloc(results, sizeof *t->gradient_results);
  t->output_tangent = calloc((size_t)m->num_outputs + 1, sizeof *t->output_tangent);
  t->input_mutation = calloc(inputs, sizeof *t->input_mutation);
  t->packed_args =
      calloc(saved + tangents + sig->num_symbols + results + 2, sizeof *t->packed_args);
  t->descriptor_words = calloc(words + 1, sizeof *t->descriptor_words);
  t->result_sizes = calloc(result_dims + 1, sizeof *t->result_sizes);
  t->result_sizes_at = calloc(results, sizeof *t->result_sizes_at);
  t->result_nbytes = calloc(results, sizeof *t->result_nbytes);
  t->result_data = calloc(results, sizeof *t->result_data);
  t->result_managed = calloc(results, sizeof *t->result_managed);
  t->tangent_data = calloc(tangents, sizeof *t->tangent_data);
  t->tangent_packed = calloc(tangents, sizeof *t->tangent_packed);
  if (!t->call_data || !t->call_sizes || !t->sizes_at || !t->call_nbytes || !t->pending_data ||
      !t->pending_sizes || !t->pending_symbols || !t->pending_inputs || !t->pending_input_dims ||
      !t->gradient_results || !t->output_tangent || !t->input_mutation || !t->packed_args ||
      !t->descriptor_words || !t->result_sizes || !t->result_sizes_at || !t->result_nbytes ||
      !t->result_data || !t->result_managed || !t->tangent_data || !t->tangent_packed)
    return 1;
  uint32_t at = 0;
  for (uint32_t i = 0; i < sig->num_saved; ++i) {
    t->sizes_at[i] = at;
    at += sig->saved[i].rank;
  }
  at = 0;
  for (uint32_t i = 0; i < sig->num_backward_results; ++i) {
    t->result_sizes_at[i] = at;
    at += sig->backward_results[i].rank;
  }
  for (uint32_t k = 0; k < m->num_outputs; ++k)
    t->output_tangent[k] = -1;
  for (uint32_t i = 0; i < sig->num_tangents; ++i)
    t->output_tangent[sig->tangents[i]] = (int32_t)i;
  for (uint32_t i = 0; i < m->num_inputs; ++i)
    t->input_mutation[i] = -1;
  for (uint32_t r = 0; r < sig->num_backward_results; ++r) {
    const tgc_result_sig *res = &sig->backward_results[r];
    if (res->kind == TGC_RESULT_GRADIENT)
      t->gradient_results[t->num_gradients++] = r;
    else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION)
      t->input_mutation[m->arg_input[res->target]] = (int32_t)r;
  }
  return 0;
}

void tgc_train_free(tgc_model *m) {
  tgc_train_state *t = &m->train;
  tgc_saved_drop_pending(m);
  tgc_saved_release_call(m);
  free(t->call_data);
  free(t->call_sizes);
  free(t->sizes_at);
  free(t->call_nbytes);
  free(t->pending_data);
  free(t->pending_sizes);
  free(t->pending_symbols);
  free(t->pending_inputs);
  free(t->pending_input_dims);
  free(t->gradient_results);
  free(t->output_tangent);
  free(t->input_mutation);
  free(t->packed_args);
  free(t->descriptor_words);
  free(t->result_sizes);
  free(t->result_sizes_at);
  free(t->result_nbytes);
  free(t->result_data);
  free(t->result_managed);
  free(t->tangent_data);
  free(t->tangent_packed);
  memset(t, 0, sizeof *t);
}

/*===--- tgc_model_backward -----------------------------------------------===*/

/* The user output result a tangent stands for. */
static const tgc_result_sig *tangent_output(const tgc_model *m, uint32_t i) {
  return &m->sig.results[m->output_results[m->sig.tangents[i]]];
}

/* Evaluates `rank` sizes with the forward's symbol values. */
static bool eval_sizes(const tgc_model *m, const tgc_expr *exprs, uint32_t rank, int64_t *sizes) {
  for (uint32_t d = 0; d < rank; ++d)
    if (tgc_expr_eval(&exprs[d], m->symbol_values, m->symbol_bound, &sizes[d]) != TGC_EVAL_OK ||
        sizes[d] < 0)
      return false;
  return true;
}

/* Checks the gradient of user output k against that output's dtype and the
 * shape it had in the forward. */
static int check_grad_output(tgc_model *m, uint32_t k, const DLTensor *g) {
  const tgc_result_sig *out = &m->sig.results[m->output_results[k]];
  tgc_message msg;
  tgc_message_init(&msg, m->error, sizeof m->error);
  tgc_message_append(&msg, "grad output '%s' (#%" PRIu32 "): ", out->name, k);
  char expected_name[64], got_name[64];
  int64_t expected[TGC_MAX_RANK];
  if (!g) {
    tgc_message_append(&msg, "the tensor is NULL, but the output has a "
                             "gradient");
    return 1;
  }
  if (tgc_check_device(m, g, &msg) || tgc_check_cuda_layout(m, g, &msg))
    return 1;
  if (!tgc_dtype_equal(g->dtype, out->dtype)) {
    tgc_message_append(&msg, "expected dtype %s, got %s",
                       tgc_dtype_name(out->dtype, expected_name, sizeof expected_name),
                       tgc_dtype_name(g->dtype, got_name, sizeof got_name));
    return 1;
  }
  if (!eval_sizes(m, out->sizes, out->rank, expected)) {
    tgc_message_append(&msg, "the output's shape cannot be evaluated");
    return 1;
  }
  if (g->ndim != (int32_t)out->rank || (out->rank > 0 && !g->shape) ||
      (out->rank > 0 && memcmp(g->shape, expected, out->rank * sizeof *expected) != 0)) {
    tgc_message_append(&msg, "expected shape ");
    tgc_message_append_shape(&msg, expected, out->rank);
    if (g->ndim >= 0 && g->ndim <= TGC_MAX_RANK && (g->shape || g->ndim == 0)) {
      tgc_message_append(&msg, " (the output's), got ");
      tgc_message_append_shape(&msg, g->shape, (uint32_t)g->ndim);
    } else {
      tgc_message_append(&msg, " (the output's), got rank %d", (int)g->ndim);
    }
    return 1;
  }
  size_t nbytes;
  tgc_nbytes(expected, out->rank, tgc_dtype_size(out->dtype), &nbytes);
  if (nbytes > 0 && !g->data) {
    tgc_message_append(&msg, "the data pointer is NULL");
    return 1;
  }
  m->error[0] = '\0';
  return 0;
}

static const char *backward_result_what(uint8_t kind) {
  return kind == TGC_RESULT_GRADIENT          ? "gradient of"
         : kind == TGC_RESULT_BUFFER_MUTATION ? "new value of buffer"
                                              : "new value of input";
}

/* Shape and size of backward result r; a mutation must keep its target's. */
static int backward_result_shape(tgc_model *m, uint32_t r) {
  tgc_train_state *t = &m->train;
  const tgc_result_sig *res = &m->sig.backward_results[r];
  int64_t *sizes = t->result_sizes + t->result_sizes_at[r];
  if (!eval_sizes(m, res->sizes, res->rank, sizes) ||
      !tgc_nbytes(sizes, res->rank, tgc_dtype_size(res->dtype), &t->result_nbytes[r]))
    return tgc_fail(m, "%s '%s': no valid shape for the forward's inputs",
                    backward_result_what(res->kind), res->name);
  const int64_t *target = NULL;
  if (res->kind == TGC_RESULT_BUFFER_MUTATION)
    target = m->state[m->arg_state[res->target]].sizes;
  else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION)
    target = t->pending_inputs[m->arg_input[res->target]].shape;
  if (target && res->rank > 0 && memcmp(sizes, target, res->rank * sizeof *sizes) != 0)
    return tgc_fail(m,
                    "%s '%s': invalid signature: its shape differs from the "
                    "shape it replaces",
                    backward_result_what(res->kind), res->name);
  return 0;
}

static void release_backward(tgc_model *m) {
  tgc_train_state *t = &m->train;
  for (uint32_t i = 0; i < m->sig.num_tangents; ++i) {
    free(t->tangent_packed[i]);
    t->tangent_packed[i] = NULL;
  }
  for (uint32_t r = 0; r < m->sig.num_backward_results; ++r)
    tgc_result_buffer_free(m, &m->sig.backward_results[r], &t->result_data[r],
                           &t->result_managed[r]);
}

static int allocate_backward(tgc_model *m, DLTensor *const *grad_outputs) {
  tgc_train_state *t = &m->train;
  for (uint32_t r = 0; r < m->sig.num_backward_results; ++r)
    if (tgc_result_buffer(m, &m->sig.backward_results[r], t->result_sizes + t->result_sizes_at[r],
                          t->result_nbytes[r], &t->result_data[r], &t->result_managed[r]))
      return tgc_fail(m, "out of memory allocating gradients");
  for (uint32_t i = 0; i < m->sig.num_tangents; ++i)
    if (tgc_contiguous_data(grad_outputs[m->sig.tangents[i]], &t->tangent_data[i],
                            &t->tangent_packed[i]))
      return tgc_fail(m, "out of memory packing grad outputs");
  return 0;
}

/* Saved values, tangents, one data-less i8[s] per symbol s, then results:
 * the backward's packed order. */
static void build_backward_descriptors(tgc_model *m, DLTensor *const *grad_outputs) {
  tgc_train_state *t = &m->train;
  int64_t *words = t->descriptor_words;
  void **slot = t->packed_args;
  for (uint32_t k = 0; k < m->sig.num_saved; ++k) {
    const tgc_saved_sig *s = &m->sig.saved[k];
    *slot++ = words;
    if (s->arg != TGC_NO_TARGET) {
      const tgc_state_slot *state = &m->state[m->arg_state[s->arg]];
      words = tgc_write_descriptor(words, state->data, state->sizes, s->rank);
    } else {
      words = tgc_write_descriptor(words, t->pending_data[k], t->pending_sizes + t->sizes_at[k],
                                   s->rank);
    }
  }
  for (uint32_t i = 0; i < m->sig.num_tangents; ++i) {
    *slot++ = words;
    words = tgc_write_descriptor(words, t->tangent_data[i], grad_outputs[m->sig.tangents[i]]->shape,
                                 tangent_output(m, i)->rank);
  }
  for (uint32_t s = 0; s < m->sig.num_symbols; ++s) {
    *slot++ = words;
    int64_t size = m->symbol_bound[s] ? m->symbol_values[s] : 0;
    words = tgc_write_descriptor(words, NULL, &size, 1);
  }
  for (uint32_t r = 0; r < m->sig.num_backward_results; ++r) {
    *slot++ = words;
    words = tgc_write_descriptor(words, t->result_data[r], t->result_sizes + t->result_sizes_at[r],
                                 m->sig.backward_results[r].rank);
  }
  tgc_arena_descriptors(m, slot, words);
}

static void commit_backward(tgc_model *m, DLManagedTensor **grads) {
  tgc_train_state *t = &m->train;
  for (uint32_t r = 0; r < m->sig.num_backward_results; ++r) {
    const tgc_result_sig *res = &m->sig.backward_results[r];
    const DLTensor *input = res->kind == TGC_RESULT_USER_INPUT_MUTATION
                                ? &t->pending_inputs[m->arg_input[res->target]]
                                : NULL;
    tgc_apply_mutation(m, res, t->result_data[r], input);
  }
  for (uint32_t g = 0; g < t->num_gradients; ++g) {
    uint32_t r = t->gradient_results[g];
    grads[g] = t->result_managed[r];
    t->result_managed[r] = NULL;
  }
}

static int check_backward_arguments(tgc_model *m, DLTensor *const *grad_outputs,
                                    int64_t num_grad_outputs, DLManagedTensor **grads,
                                    int64_t num_grads) {
  tgc_train_state *t = &m->train;
  if (!m->sig.has_backward)
    return tgc_fail(m,
                    "model '%s' is not trainable (compile it with "
                    "`tgc compile --train`)",
                    m->desc->name);
  if (num_grad_outputs != m->num_outputs)
    return tgc_fail(m,
                    "expected %" PRIu32 " grad outputs (one per output), got "
                    "%" PRId64,
                    m->num_outputs, num_grad_outputs);
  if (num_grads != t->num_gradients)
    return tgc_fail(m, "expected room for %" PRIu32 " gradients, got %" PRId64, t->num_gradients,
                    num_grads);
  if (!grad_outputs && num_grad_outputs > 0)
    return tgc_fail(m, "the grad outputs array is NULL");
  if (!grads && num_grads > 0)
    return tgc_fail(m, "the gradients array is NULL");
  if (!t->pending)
    return tgc_fail(m, "no saved values for the backward: call "
                       "tgc_model_run_train first (each backward consumes "
                       "the values of one run_train)");
  /* Shapes are those of the forward that saved the values. */
  memcpy(m->symbol_values, t->pending_symbols, m->sig.num_symbols * sizeof *m->symbol_values);
  for (uint32_t s = 0; s < m->sig.num_symbols; ++s)
    m->symbol_bound[s] = m->binders[s].input >= 0;
  for (uint32_t i = 0; i < m->sig.num_tangents; ++i)
    if (check_grad_output(m, m->sig.tangents[i], grad_outputs[m->sig.tangents[i]]))
      return 1;
  for (uint32_t r = 0; r < m->sig.num_backward_results; ++r)
    if (backward_result_shape(m, r))
      return 1;
  return 0;
}

static int backward_here(tgc_model *m, DLTensor *const *grad_outputs, int64_t num_grad_outputs,
                         DLManagedTensor **grads, int64_t num_grads) {
  m->error[0] = '\0';
  for (int64_t g = 0; grads && g < num_grads; ++g)
    grads[g] = NULL;
  if (check_backward_arguments(m, grad_outputs, num_grad_outputs, grads, num_grads))
    return 1;
  if (allocate_backward(m, grad_outputs)) {
    release_backward(m);
    return 1;
  }
  build_backward_descriptors(m, grad_outputs);
  int threads = tgc_threads_enter(m->num_threads);
  m->desc->backward(m->train.packed_args);
  tgc_threads_leave(threads);
  tgc_arena_grow(m);
  if (tgc_cuda_call_failed(m)) {
    release_backward(m);
    return 1;
  }
  commit_backward(m, grads);
  release_backward(m);
  tgc_saved_drop_pending(m);
  return tgc_cuda_call_failed(m);
}

/* backward_here, for a CUDA instance in its context. */
static int backward(tgc_model *m, DLTensor *const *grad_outputs, int64_t num_grad_outputs,
                    DLManagedTensor **grads, int64_t num_grads) {
  if (!m->cuda)
    return backward_here(m, grad_outputs, num_grad_outputs, grads, num_grads);
  tgc_cuda *previous = tgc_cuda_enter(m->cuda);
  int rc = backward_here(m, grad_outputs, num_grad_outputs, grads, num_grads);
  tgc_cuda_leave(previous);
  return rc;
}

TGC_EXPORT int tgc_model_backward(tgc_model *m, DLTensor *const *grad_outputs,
                                  int64_t num_grad_outputs, DLManagedTensor **grads,
                                  int64_t num_grads) {
  if (!m)
    return 1;
  if (tgc_model_claim(m)) {
    for (int64_t g = 0; grads && g < num_grads; ++g)
      grads[g] = NULL;
    return 1;
  }
  int rc = backward(m, grad_outputs, num_grad_outputs, grads, num_grads);
  tgc_model_release(m);
  return rc;
}

/*===--- Queries ----------------------------------------------------------===*/

TGC_EXPORT int tgc_model_is_trainable(const tgc_model *m) { return m && m->sig.has_backward; }

TGC_EXPORT int64_t tgc_model_num_gradients(const tgc_model *m) {
  return m ? m->train.num_gradients : 0;
}

TGC_EXPORT const char *tgc_model_gradient_name(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->train.num_gradients)
    return NULL;
  return m->sig.backward_results[m->train.gradient_results[i]].name;
}

TGC_EXPORT int tgc_model_output_has_gradient(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_outputs)
    return -1;
  return m->train.output_tangent && m->train.output_tangent[i] >= 0;
}

TGC_EXPORT int64_t tgc_model_saved_count(const tgc_model *m) { return m ? m->sig.num_saved : 0; }

TGC_EXPORT int64_t tgc_model_saved_bytes(const tgc_model *m) {
  return m ? (int64_t)m->train.saved_bytes : 0;
}
