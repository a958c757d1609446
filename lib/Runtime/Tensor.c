/* Tensor.c - dtypes, sizes, aligned storage and strided copies. */
#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- Dtypes -----------------------------------------------------------===*/

static const char *dtype_base_name(DLDataType dtype) {
  switch (dtype.code) {
  case kDLFloat:
    return dtype.bits == 16   ? "float16"
           : dtype.bits == 32 ? "float32"
           : dtype.bits == 64 ? "float64"
                              : NULL;
  case kDLBfloat:
    return dtype.bits == 16 ? "bfloat16" : NULL;
  case kDLInt:
    return dtype.bits == 8    ? "int8"
           : dtype.bits == 16 ? "int16"
           : dtype.bits == 32 ? "int32"
           : dtype.bits == 64 ? "int64"
                              : NULL;
  case kDLUInt:
    return dtype.bits == 8    ? "uint8"
           : dtype.bits == 16 ? "uint16"
           : dtype.bits == 32 ? "uint32"
           : dtype.bits == 64 ? "uint64"
                              : NULL;
  case kDLComplex:
    return dtype.bits == 64 ? "complex64" : dtype.bits == 128 ? "complex128" : NULL;
  case TGC_DL_BOOL:
    return dtype.bits == 8 ? "bool" : NULL;
  case TGC_DL_FLOAT8_E4M3FN:
    return dtype.bits == 8 ? "float8_e4m3fn" : NULL;
  default:
    return NULL;
  }
}

const char *tgc_dtype_name(DLDataType dtype, char *buf, size_t capacity) {
  const char *base = dtype_base_name(dtype);
  if (base && dtype.lanes == 1)
    snprintf(buf, capacity, "%s", base);
  else if (base)
    snprintf(buf, capacity, "%sx%u", base, (unsigned)dtype.lanes);
  else
    snprintf(buf, capacity, "dtype(code=%u, bits=%u, lanes=%u)", (unsigned)dtype.code,
             (unsigned)dtype.bits, (unsigned)dtype.lanes);
  return buf;
}

size_t tgc_dtype_size(DLDataType dtype) {
  if (dtype.lanes != 1 || dtype.bits == 0 || dtype.bits % 8 != 0)
    return 0;
  return dtype.bits / 8;
}

bool tgc_dtype_equal(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/*===--- Sizes and storage ------------------------------------------------===*/

bool tgc_nbytes(const int64_t *sizes, uint32_t rank, size_t elem_size, size_t *nbytes) {
  size_t total = elem_size;
  for (uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0)
      return false;
    if (__builtin_mul_overflow(total, (uint64_t)sizes[d], &total))
      return false;
  }
  if (total > (size_t)INT64_MAX - TGC_ALIGNMENT)
    return false;
  *nbytes = total;
  return true;
}

bool tgc_strided_nbytes(const int64_t *sizes, const int64_t *strides, uint32_t rank,
                        size_t elem_size, size_t *nbytes) {
  uint64_t last = 0; /* the offset of the last element */
  for (uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || strides[d] < 0)
      return false;
    if (sizes[d] == 0) {
      *nbytes = 0;
      return true;
    }
    uint64_t span;
    if (__builtin_mul_overflow((uint64_t)(sizes[d] - 1), (uint64_t)strides[d], &span) ||
        __builtin_add_overflow(last, span, &last))
      return false;
  }
  size_t total;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, elem_size, &total) ||
      total > (size_t)INT64_MAX - TGC_ALIGNMENT)
    return false;
  *nbytes = total;
  return true;
}

void *tgc_aligned_alloc(size_t nbytes) {
  size_t rounded = (nbytes + TGC_ALIGNMENT - 1) / TGC_ALIGNMENT * TGC_ALIGNMENT;
  if (rounded == 0)
    rounded = TGC_ALIGNMENT;
  return aligned_alloc(TGC_ALIGNMENT, rounded);
}

void tgc_contiguous_strides(const int64_t *sizes, uint32_t rank, int64_t *strides) {
  int64_t stride = 1;
  for (uint32_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d] > 0 ? sizes[d] : 1;
  }
}

bool tgc_dltensor_is_contiguous(const DLTensor *t) {
  if (!t->strides)
    return true;
  int64_t expected = 1;
  for (int d = t->ndim; d-- > 0;) {
    if (t->shape[d] == 0)
      return true;
    if (t->shape[d] != 1 && t->strides[d] != expected)
      return false;
    expected *= t->shape[d];
  }
  return true;
}

char *tgc_dltensor_base(const DLTensor *t) { return (char *)t->data + t->byte_offset; }

bool tgc_dltensor_extent(const DLTensor *t, size_t elem_size, uintptr_t *lo, uintptr_t *hi) {
  /* Offsets in elements of the first and last element from element 0. */
  int64_t low = 0, high = 0, dense = 1;
  for (int d = t->ndim; d-- > 0;) {
    int64_t size = t->shape[d];
    if (size == 0) {
      *lo = *hi = (uintptr_t)t->data;
      return true;
    }
    int64_t stride = t->strides ? t->strides[d] : dense, reach;
    if (__builtin_mul_overflow(stride, size - 1, &reach) ||
        __builtin_add_overflow(reach < 0 ? low : high, reach, reach < 0 ? &low : &high))
      return false;
    if (!t->strides && __builtin_mul_overflow(dense, size, &dense))
      return false;
  }
  /* In bytes, from the base address, with its last element's bytes. */
  int64_t low_bytes, high_bytes;
  uintptr_t base;
  if (__builtin_mul_overflow(low, (int64_t)elem_size, &low_bytes) ||
      __builtin_mul_overflow(high, (int64_t)elem_size, &high_bytes) ||
      __builtin_add_overflow(high_bytes, (int64_t)elem_size, &high_bytes) ||
      __builtin_add_overflow((uintptr_t)t->data, t->byte_offset, &base) ||
      __builtin_add_overflow(base, low_bytes, lo) || __builtin_add_overflow(base, high_bytes, hi))
    return false;
  return true;
}

bool tgc_dltensor_may_overlap_itself(const DLTensor *t) {
  if (!t->strides)
    return false;
  /* The dimensions of size > 1 by |stride|: each must step past everything
   * the smaller ones reach, or two index tuples may meet. */
  uint64_t strides[TGC_MAX_RANK], sizes[TGC_MAX_RANK];
  int n = 0;
  for (int d = 0; d < t->ndim; ++d) {
    if (t->shape[d] == 0)
      return false;
    if (t->shape[d] == 1)
      continue;
    if (n == TGC_MAX_RANK) /* more than 2^64 elements: not a tensor in memory */
      return true;
    uint64_t stride = t->strides[d] < 0 ? 0 - (uint64_t)t->strides[d] : (uint64_t)t->strides[d];
    int k = n++;
    for (; k > 0 && strides[k - 1] > stride; --k) {
      strides[k] = strides[k - 1];
      sizes[k] = sizes[k - 1];
    }
    strides[k] = stride;
    sizes[k] = (uint64_t)t->shape[d];
  }
  uint64_t reach = 0; /* the largest offset the smaller dimensions reach */
  for (int k = 0; k < n; ++k) {
    if (strides[k] <= reach)
      return true;
    uint64_t extent;
    if (__builtin_mul_overflow(strides[k], sizes[k] - 1, &extent) ||
        __builtin_add_overflow(reach, extent, &reach))
      return true;
  }
  return false;
}

/*===--- Strided copy -----------------------------------------------------===*/

/* A copy problem with unit dimensions dropped and mergeable neighbours
 * merged, innermost dimension first, so that most copies become a few long
 * memmoves. A problem with more than TGC_MAX_RANK non-unit dimensions has
 * more than 2^64 elements, so the fixed arrays always suffice. */
typedef struct copy_plan {
  uint32_t rank;
  int64_t sizes[TGC_MAX_RANK];
  int64_t dst_strides[TGC_MAX_RANK];
  int64_t src_strides[TGC_MAX_RANK];
} copy_plan;

/* Adds a dimension outside those already planned. */
static bool plan_push_outer(copy_plan *p, int64_t size, int64_t dst_stride, int64_t src_stride) {
  if (size == 1)
    return true;
  if (p->rank > 0) {
    uint32_t last = p->rank - 1;
    if (dst_stride == p->dst_strides[last] * p->sizes[last] &&
        src_stride == p->src_strides[last] * p->sizes[last]) {
      p->sizes[last] *= size;
      return true;
    }
  }
  if (p->rank == TGC_MAX_RANK)
    return false;
  p->sizes[p->rank] = size;
  p->dst_strides[p->rank] = dst_stride;
  p->src_strides[p->rank] = src_stride;
  ++p->rank;
  return true;
}

/* Plans the copy; false if there is nothing to copy. */
static bool plan_copy(copy_plan *plan, const int64_t *dst_strides, const int64_t *src_strides,
                      const int64_t *sizes, uint32_t rank) {
  plan->rank = 0;
  int64_t dense = 1;
  for (uint32_t d = rank; d-- > 0;) {
    if (sizes[d] <= 0)
      return false;
    int64_t dst_stride = dst_strides ? dst_strides[d] : dense;
    int64_t src_stride = src_strides ? src_strides[d] : dense;
    if (!plan_push_outer(plan, sizes[d], dst_stride, src_stride))
      return false;
    dense *= sizes[d];
  }
  return true;
}

/* The innermost dimension of a copy that is not dense on both sides: `count`
 * elements `elem_size` bytes wide, a loop of fixed-size copies (one load and
 * one store each, vectorized by the compiler where it can) instead of a
 * memmove call per element. */
#define TGC_COPY_ELEMENTS(T)                                                                       \
  for (int64_t i = 0; i < count; ++i)                                                              \
    memcpy(dst + i * dst_step, src + i * src_step, sizeof(T));
static void copy_elements(char *dst, ptrdiff_t dst_step, const char *src, ptrdiff_t src_step,
                          int64_t count, size_t elem_size) {
  switch (elem_size) {
  case 1:
    TGC_COPY_ELEMENTS(uint8_t)
    return;
  case 2:
    TGC_COPY_ELEMENTS(uint16_t)
    return;
  case 4:
    TGC_COPY_ELEMENTS(uint32_t)
    return;
  case 8:
    TGC_COPY_ELEMENTS(uint64_t)
    return;
  default:
    for (int64_t i = 0; i < count; ++i)
      memcpy(dst + i * dst_step, src + i * src_step, elem_size);
  }
}
#undef TGC_COPY_ELEMENTS

void tgc_copy_strided(char *dst, const int64_t *dst_strides, const char *src,
                      const int64_t *src_strides, const int64_t *sizes, uint32_t rank,
                      size_t elem_size) {
  copy_plan plan;
  if (!plan_copy(&plan, dst_strides, src_strides, sizes, rank))
    return;
  /* The innermost dimension is copied as one run when it is dense on both
   * sides (a memmove), otherwise as a loop over its elements. */
  bool dense = plan.rank == 0 || (plan.dst_strides[0] == 1 && plan.src_strides[0] == 1);
  int64_t run = plan.rank > 0 ? plan.sizes[0] : 1;
  size_t run_bytes = (size_t)run * elem_size;
  ptrdiff_t dst_step = plan.rank > 0 ? (ptrdiff_t)plan.dst_strides[0] * (ptrdiff_t)elem_size : 0;
  ptrdiff_t src_step = plan.rank > 0 ? (ptrdiff_t)plan.src_strides[0] * (ptrdiff_t)elem_size : 0;
  uint32_t first_outer = plan.rank > 0 ? 1 : 0;
  int64_t index[TGC_MAX_RANK] = {0};
  ptrdiff_t dst_pos = 0, src_pos = 0;
  for (;;) {
    char *d_ptr = dst + dst_pos * (ptrdiff_t)elem_size;
    const char *s_ptr = src + src_pos * (ptrdiff_t)elem_size;
    if (dense)
      memmove(d_ptr, s_ptr, run_bytes);
    else
      copy_elements(d_ptr, dst_step, s_ptr, src_step, run, elem_size);
    uint32_t d = first_outer;
    for (; d < plan.rank; ++d) {
      dst_pos += plan.dst_strides[d];
      src_pos += plan.src_strides[d];
      if (++index[d] < plan.sizes[d])
        break;
      dst_pos -= plan.dst_strides[d] * plan.sizes[d];
      src_pos -= plan.src_strides[d] * plan.sizes[d];
      index[d] = 0;
    }
    if (d == plan.rank)
      return;
  }
}
