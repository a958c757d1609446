/* MemrefCopy.c - MLIR's memrefCopy, for memref.copy lowerings. */
#include "Internal.h"

#include <string.h>

/* The ranked descriptor behind an unranked memref: { allocated, aligned,
 * offset, sizes[rank], strides[rank] }. */
typedef struct ranked_descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizes_and_strides[];
} ranked_descriptor;

void memrefCopy(int64_t elem_size, tgc_unranked_memref *src_arg, tgc_unranked_memref *dst_arg) {
  const ranked_descriptor *src = src_arg->descriptor;
  const ranked_descriptor *dst = dst_arg->descriptor;
  int64_t rank = src_arg->rank;
  const int64_t *sizes = src->sizes_and_strides;
  const int64_t *src_strides = sizes + rank;
  const int64_t *dst_strides = dst->sizes_and_strides + dst_arg->rank;
  char *src_ptr = src->aligned + src->offset * elem_size;
  char *dst_ptr = dst->aligned + dst->offset * elem_size;
  /* MLIR's version walks the elements one by one in row-major order; the
   * strided copy visits the same elements and merges contiguous runs. */
  tgc_copy_strided(dst_ptr, dst_strides, src_ptr, src_strides, sizes, (uint32_t)rank,
                   (size_t)elem_size);
}
