/* Saved.c - The values a trainable model's forward saves for its backward:
 * evaluated and allocated per forward call, kept pending after run_train,
 * dropped when consumed or invalidated (docs/abi.md, "Training"). Their memory
 * comes from the temporaries' cache (Scratch.c): the next step's saved values
 * have the same sizes and take the same blocks, with no fresh pages to fault in. A CUDA
 * instance's saved values are device memory. */
#include "Internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*===--- One forward call -------------------------------------------------===*/

/* A saved value's memory: device memory for a CUDA instance (allocated in its call,
 * freed in its device's context, also outside a call). */
static void *saved_alloc(tgc_model *m, size_t nbytes) {
  return m->cuda ? tgc_cuda_alloc(m->cuda, nbytes) : _mlir_memref_to_llvm_alloc(nbytes);
}

static void saved_free(tgc_model *m, void *data) {
  if (m->cuda)
    tgc_cuda_free_on(tgc_cuda_device(m->cuda), data);
  else
    _mlir_memref_to_llvm_free(data);
}

int tgc_saved_prepare_call(tgc_model *m) {
  tgc_train_state *t = &m->train;
  for (uint32_t k = 0; k < m->sig.num_saved; ++k) {
    const tgc_saved_sig *s = &m->sig.saved[k];
    if (s->arg != TGC_NO_TARGET)
      continue;
    int64_t *sizes = t->call_sizes + t->sizes_at[k];
    for (uint32_t d = 0; d < s->rank; ++d) {
      enum tgc_eval_status status =
          tgc_expr_eval(&s->sizes[d], m->symbol_values, m->symbol_bound, &sizes[d]);
      if (status != TGC_EVAL_OK || sizes[d] < 0)
        return tgc_fail(
            m, "saved value #%" PRIu32 ": dimension %" PRIu32 " has no valid size for these inputs",
            k, d);
    }
    if (!tgc_nbytes(sizes, s->rank, tgc_dtype_size(s->dtype), &t->call_nbytes[k]))
      return tgc_fail(m,
                      "saved value #%" PRIu32 ": the tensor would be too "
                      "large",
                      k);
    t->call_data[k] = saved_alloc(m, t->call_nbytes[k]);
    if (!t->call_data[k])
      return tgc_fail(m, "out of memory allocating saved value #%" PRIu32, k);
  }
  return 0;
}

void tgc_saved_release_call(tgc_model *m) {
  tgc_train_state *t = &m->train;
  for (uint32_t k = 0; t->call_data && k < m->sig.num_saved; ++k) {
    saved_free(m, t->call_data[k]);
    t->call_data[k] = NULL;
  }
}

/*===--- Pending for the backward -----------------------------------------===*/

void tgc_saved_drop_pending(tgc_model *m) {
  tgc_train_state *t = &m->train;
  for (uint32_t k = 0; t->pending_data && k < m->sig.num_saved; ++k) {
    saved_free(m, t->pending_data[k]);
    t->pending_data[k] = NULL;
  }
  t->pending = false;
}

void tgc_saved_keep_call(tgc_model *m, DLTensor *const *inputs) {
  tgc_train_state *t = &m->train;
  tgc_saved_drop_pending(m);
  size_t bytes = 0;
  for (uint32_t k = 0; k < m->sig.num_saved; ++k) {
    const tgc_saved_sig *s = &m->sig.saved[k];
    if (s->arg != TGC_NO_TARGET)
      continue;
    t->pending_data[k] = t->call_data[k];
    t->call_data[k] = NULL;
    bytes += t->call_nbytes[k];
    memcpy(t->pending_sizes + t->sizes_at[k], t->call_sizes + t->sizes_at[k],
           s->rank * sizeof(int64_t));
  }
  memcpy(t->pending_symbols, m->symbol_values, m->sig.num_symbols * sizeof *m->symbol_values);
  /* Inputs the backward rewrites: remember where the caller's data is. */
  for (uint32_t i = 0; i < m->num_inputs; ++i) {
    if (t->input_mutation[i] < 0)
      continue;
    DLTensor *copy = &t->pending_inputs[i];
    int64_t *dims = t->pending_input_dims + (size_t)i * 2 * TGC_MAX_RANK;
    *copy = *inputs[i];
    memcpy(dims, inputs[i]->shape, (size_t)copy->ndim * sizeof *dims);
    copy->shape = dims;
    if (inputs[i]->strides) {
      memcpy(dims + TGC_MAX_RANK, inputs[i]->strides, (size_t)copy->ndim * sizeof *dims);
      copy->strides = dims + TGC_MAX_RANK;
    }
  }
  t->saved_bytes = bytes;
  t->pending = true;
}
