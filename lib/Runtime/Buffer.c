/* Buffer.c - Buffers and memref descriptors of one entry call, shared by
 * the forward (Run.c) and the backward (Train.c). */
#include "Internal.h"

#include <stdint.h>

#include <stdlib.h>
#include <string.h>

/*===--- Descriptors ------------------------------------------------------===*/

size_t tgc_descriptor_words(uint32_t rank) { return 3 + 2 * (size_t)rank; }

int64_t *tgc_write_descriptor(int64_t *words, void *data, const int64_t *sizes, uint32_t rank) {
  memcpy(&words[0], &data, sizeof data);
  memcpy(&words[1], &data, sizeof data);
  words[2] = 0;
  if (rank > 0)
    memcpy(words + 3, sizes, rank * sizeof *sizes);
  tgc_contiguous_strides(sizes, rank, words + 3 + rank);
  return words + tgc_descriptor_words(rank);
}

/*===--- CUDA calls -------------------------------------------------------===*/

int tgc_cuda_call_failed(tgc_model *m) {
  char why[TGC_ERROR_CAPACITY / 2];
  if (!m->cuda || !tgc_cuda_finish(m->cuda, why, sizeof why))
    return 0;
  return tgc_fail(m, "model '%s' failed on the GPU: %s", m->desc->name, why);
}

int tgc_check_device(const tgc_model *m, const DLTensor *t, tgc_message *msg) {
  if (m->cuda &&
      (t->device.device_type != kDLCUDA || t->device.device_id != tgc_cuda_device(m->cuda))) {
    tgc_message_append(msg,
                       "expected a tensor on CUDA device %d (kDLCUDA), got device type %d "
                       "number %d",
                       tgc_cuda_device(m->cuda), (int)t->device.device_type,
                       (int)t->device.device_id);
    return 1;
  }
  if (!m->cuda && t->device.device_type != kDLCPU) {
    tgc_message_append(msg, "expected a CPU tensor (kDLCPU), got device type %d",
                       (int)t->device.device_type);
    return 1;
  }
  return 0;
}

int tgc_check_cuda_layout(const tgc_model *m, const DLTensor *t, tgc_message *msg) {
  size_t elem = tgc_dtype_size(t->dtype);
  if (!m->cuda ||
      (tgc_dltensor_is_contiguous(t) && elem > 0 && (uintptr_t)tgc_dltensor_base(t) % elem == 0))
    return 0;
  tgc_message_append(msg, "a CUDA tensor must be contiguous and element-aligned (pass "
                          ".contiguous())");
  return 1;
}

/*===--- The arena --------------------------------------------------------===*/

void tgc_arena_descriptors(tgc_model *m, void **slot, int64_t *words) {
  int64_t capacity = (int64_t)m->arena_capacity;
  slot[0] = words;
  words = tgc_write_descriptor(words, m->arena, &capacity, 1);
  slot[1] = words;
  m->arena_request = 0;
  tgc_write_descriptor(words, &m->arena_request, NULL, 0);
}

void tgc_arena_grow(tgc_model *m) {
  if (m->arena_request <= 0 || (uint64_t)m->arena_request <= m->arena_capacity ||
      (uint64_t)m->arena_request > SIZE_MAX - TGC_ALIGNMENT)
    return;
  void *grown = m->cuda ? tgc_cuda_alloc(m->cuda, (size_t)m->arena_request)
                        : tgc_aligned_alloc((size_t)m->arena_request);
  if (!grown)
    return;
  if (m->cuda)
    tgc_cuda_free(m->arena);
  else
    free(m->arena);
  m->arena = grown;
  m->arena_capacity = (uint64_t)m->arena_request;
}

/*===--- Output tensors ---------------------------------------------------===*/

/* One allocation for the DLManagedTensor and its shape and strides; the
 * data is a block of the scratch cache (Scratch.c), so the outputs and
 * gradients of one call, once their owner deletes them, are the memory of the
 * next call's: no fresh pages, which cost a page fault and a clear per 4 KiB
 * (3300 of them per training step of the SDPA GPT, whose gradients are 17 MB). */
typedef struct managed_block {
  DLManagedTensor managed;
  int64_t dims[]; /* shape[rank], then strides[rank] */
} managed_block;

static void managed_tensor_delete(DLManagedTensor *self) {
  if (!self)
    return;
  _mlir_memref_to_llvm_free(self->dl_tensor.data);
  free(self);
}

/* A contiguous tensor of `sizes` over `data` on `device`, which `deleter` frees (with
 * `context`); NULL when the block cannot be allocated (`data` is not freed then). */
static DLManagedTensor *managed_tensor(void *data, DLDevice device, DLDataType dtype,
                                       const int64_t *sizes, uint32_t rank,
                                       void (*deleter)(DLManagedTensor *), void *context) {
  managed_block *block = malloc(sizeof *block + 2 * (size_t)rank * sizeof(int64_t));
  if (!block)
    return NULL;
  int64_t *shape = block->dims;
  int64_t *strides = block->dims + rank;
  if (rank > 0)
    memcpy(shape, sizes, rank * sizeof *shape);
  tgc_contiguous_strides(sizes, rank, strides);
  DLTensor *t = &block->managed.dl_tensor;
  t->data = data;
  t->device = device;
  t->ndim = (int32_t)rank;
  t->dtype = dtype;
  t->shape = shape;
  t->strides = strides;
  t->byte_offset = 0;
  block->managed.manager_ctx = context;
  block->managed.deleter = deleter;
  return &block->managed;
}

DLManagedTensor *tgc_managed_tensor_new(DLDataType dtype, const int64_t *sizes, uint32_t rank,
                                        size_t nbytes) {
  void *data = _mlir_memref_to_llvm_alloc(nbytes);
  if (!data)
    return NULL;
  DLDevice cpu = {kDLCPU, 0};
  DLManagedTensor *managed =
      managed_tensor(data, cpu, dtype, sizes, rank, managed_tensor_delete, NULL);
  if (!managed)
    _mlir_memref_to_llvm_free(data);
  return managed;
}

/* A CUDA output: device memory, freed in its device's context by the deleter (the
 * device number rides in manager_ctx). */
static void cuda_tensor_delete(DLManagedTensor *self) {
  if (!self)
    return;
  tgc_cuda_free_on((int)(intptr_t)self->manager_ctx, self->dl_tensor.data);
  free(self);
}

static DLManagedTensor *cuda_tensor_new(tgc_cuda *c, DLDataType dtype, const int64_t *sizes,
                                        uint32_t rank, size_t nbytes) {
  void *data = tgc_cuda_alloc(c, nbytes);
  if (!data)
    return NULL;
  DLDevice device = {kDLCUDA, tgc_cuda_device(c)};
  DLManagedTensor *managed = managed_tensor(data, device, dtype, sizes, rank, cuda_tensor_delete,
                                            (void *)(intptr_t)tgc_cuda_device(c));
  if (!managed)
    tgc_cuda_free(data);
  return managed;
}

DLManagedTensor *tgc_managed_tensor_on_device(tgc_model *m, DLDataType dtype, const int64_t *sizes,
                                              uint32_t rank, size_t nbytes) {
  return m->cuda ? cuda_tensor_new(m->cuda, dtype, sizes, rank, nbytes)
                 : tgc_managed_tensor_new(dtype, sizes, rank, nbytes);
}

/*===--- Results and inputs -----------------------------------------------===*/

int tgc_result_buffer(tgc_model *m, const tgc_result_sig *res, const int64_t *sizes, size_t nbytes,
                      void **data, DLManagedTensor **managed) {
  if (res->kind == TGC_RESULT_BUFFER_MUTATION) {
    *data = m->state[m->arg_state[res->target]].spare;
    return 0;
  }
  if (res->kind == TGC_RESULT_USER_INPUT_MUTATION) {
    *data = m->cuda ? tgc_cuda_alloc(m->cuda, nbytes) : _mlir_memref_to_llvm_alloc(nbytes);
    return *data == NULL;
  }
  *managed = tgc_managed_tensor_on_device(m, res->dtype, sizes, res->rank, nbytes);
  if (!*managed)
    return 1;
  *data = (*managed)->dl_tensor.data;
  return 0;
}

int tgc_result_relayout(const tgc_result_sig *res, DLManagedTensor *managed) {
  DLTensor *t = &managed->dl_tensor;
  size_t elem_size = tgc_dtype_size(t->dtype);
  size_t nbytes;
  if (!tgc_strided_nbytes(t->shape, res->strides, res->rank, elem_size, &nbytes))
    return 1;
  void *data = _mlir_memref_to_llvm_alloc(nbytes);
  if (!data)
    return 1;
  /* A broadcast dimension (stride 0) receives equal values in one place. */
  tgc_copy_strided(data, res->strides, t->data, NULL, t->shape, res->rank, elem_size);
  _mlir_memref_to_llvm_free(t->data);
  t->data = data;
  memcpy(t->strides, res->strides, res->rank * sizeof *res->strides);
  return 0;
}

int tgc_result_relayout_cuda(tgc_model *m, const tgc_result_sig *res, DLManagedTensor *managed) {
  DLTensor *t = &managed->dl_tensor;
  size_t elem_size = tgc_dtype_size(t->dtype);
  size_t nbytes, packed_bytes;
  if (!tgc_strided_nbytes(t->shape, res->strides, res->rank, elem_size, &nbytes) ||
      !tgc_nbytes(t->shape, res->rank, elem_size, &packed_bytes))
    return 1;
  /* Through host memory: the layouts are those of views (transposes, broadcasts), whose
   * outputs are small next to the work of a call. */
  char *packed = malloc(packed_bytes ? packed_bytes : 1), *strided = calloc(1, nbytes ? nbytes : 1);
  void *data = tgc_cuda_alloc(m->cuda, nbytes);
  int failed =
      !packed || !strided || !data || tgc_cuda_to_host(m->cuda, packed, t->data, packed_bytes);
  if (!failed) {
    tgc_copy_strided(strided, res->strides, packed, NULL, t->shape, res->rank, elem_size);
    failed = tgc_cuda_to_device(m->cuda, data, strided, nbytes);
  }
  free(packed);
  free(strided);
  if (failed) {
    tgc_cuda_free(data);
    return 1;
  }
  tgc_cuda_free(t->data);
  t->data = data;
  memcpy(t->strides, res->strides, res->rank * sizeof *res->strides);
  return 0;
}

void tgc_result_buffer_free(tgc_model *m, const tgc_result_sig *res, void **data,
                            DLManagedTensor **managed) {
  if (*managed)
    (*managed)->deleter(*managed);
  else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION && m->cuda)
    tgc_cuda_free(*data);
  else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION)
    _mlir_memref_to_llvm_free(*data);
  *managed = NULL;
  *data = NULL;
}

void tgc_apply_mutation(tgc_model *m, const tgc_result_sig *res, void *data,
                        const DLTensor *input) {
  if (res->kind == TGC_RESULT_BUFFER_MUTATION) {
    tgc_state_slot *state = &m->state[m->arg_state[res->target]];
    state->spare = state->data;
    state->data = data;
  } else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION && m->cuda) {
    /* CUDA inputs are contiguous (Run.c checks). */
    size_t nbytes = 0;
    tgc_nbytes(input->shape, res->rank, tgc_dtype_size(res->dtype), &nbytes);
    tgc_cuda_on_device(m->cuda, tgc_dltensor_base(input), data, nbytes);
  } else if (res->kind == TGC_RESULT_USER_INPUT_MUTATION) {
    tgc_copy_strided(tgc_dltensor_base(input), input->strides, data, NULL, input->shape, res->rank,
                     tgc_dtype_size(res->dtype));
  }
}

int tgc_contiguous_data(const DLTensor *t, void **data, void **packed) {
  size_t elem_size = tgc_dtype_size(t->dtype);
  char *base = tgc_dltensor_base(t);
  *data = base;
  if (tgc_dltensor_is_contiguous(t) && (uintptr_t)base % elem_size == 0)
    return 0;
  size_t nbytes;
  tgc_nbytes(t->shape, (uint32_t)t->ndim, elem_size, &nbytes);
  *packed = tgc_aligned_alloc(nbytes);
  if (!*packed)
    return 1;
  tgc_copy_strided(*packed, NULL, base, t->strides, t->shape, (uint32_t)t->ndim, elem_size);
  *data = *packed;
  return 0;
}
