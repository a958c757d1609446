/* Scratch.c - the memory of generated code's temporaries (memref.alloc and
 * memref.dealloc, lowered with use-generic-functions to the two functions below).
 *
 * Blocks of kScratchCached bytes and more are kept after they are freed and
 * handed out again for the next allocation of the same size. A model's
 * temporaries have the same sizes call after call, so after the first call
 * none of them goes back to the OS: fresh pages cost a page fault and a clear
 * per 4 KiB, and glibc maps every block above 32 MiB afresh (im2col columns
 * are that big). The same cache holds the storage of the tensors a call
 * returns (Buffer.c), which their owner frees through the tensor's deleter.
 * At most kScratchCapacity bytes are kept. Model instances hold the cache
 * (tgc_scratch_retain): it is emptied when the last instance of this model.so
 * is destroyed, and blocks freed while no instance is alive (an output that
 * outlived its model) go straight back to malloc. In a CUDA model's call
 * (tgc_cuda_current), both functions take device memory instead (Cuda.c). */
#include "Internal.h"

#include <pthread.h>
#include <stdlib.h>

/* Smallest block that is cached: malloc serves smaller ones from its own bins. */
static const size_t kScratchCached = (size_t)64 << 10;
/* The most bytes kept in the cache. */
static const size_t kScratchCapacity = (size_t)4 << 30;

/* Before each block: its size, and the next free block of the cache. */
typedef struct scratch_header {
  size_t size;
  struct scratch_header *next;
  char pad[TGC_ALIGNMENT - sizeof(size_t) - sizeof(void *)];
} scratch_header;

_Static_assert(sizeof(scratch_header) == TGC_ALIGNMENT, "the header keeps blocks aligned");

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static scratch_header *cache; /* most recently freed first */
static size_t cached_bytes;
static size_t holders; /* live model instances */

void *_mlir_memref_to_llvm_alloc(size_t size) {
  /* In a CUDA model's call, temporaries and saved values are device memory. */
  tgc_cuda *cuda = tgc_cuda_current();
  if (cuda)
    return tgc_cuda_alloc(cuda, size);
  if (size >= kScratchCached) {
    pthread_mutex_lock(&cache_lock);
    for (scratch_header **link = &cache; *link; link = &(*link)->next) {
      scratch_header *block = *link;
      if (block->size != size)
        continue;
      *link = block->next;
      cached_bytes -= size;
      pthread_mutex_unlock(&cache_lock);
      return block + 1;
    }
    pthread_mutex_unlock(&cache_lock);
  }
  if (size > SIZE_MAX - 2 * sizeof(scratch_header))
    return NULL;
  size_t total =
      (sizeof(scratch_header) + size + TGC_ALIGNMENT - 1) / TGC_ALIGNMENT * TGC_ALIGNMENT;
  scratch_header *block = aligned_alloc(TGC_ALIGNMENT, total);
  if (!block)
    return NULL;
  block->size = size;
  block->next = NULL;
  return block + 1;
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  if (tgc_cuda_current()) {
    tgc_cuda_free(ptr);
    return;
  }
  scratch_header *block = (scratch_header *)ptr - 1;
  if (block->size >= kScratchCached) {
    pthread_mutex_lock(&cache_lock);
    if (holders > 0 && cached_bytes + block->size <= kScratchCapacity) {
      block->next = cache;
      cache = block;
      cached_bytes += block->size;
      block = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
  }
  free(block);
}

void tgc_scratch_retain(void) {
  pthread_mutex_lock(&cache_lock);
  ++holders;
  pthread_mutex_unlock(&cache_lock);
}

void tgc_scratch_release(void) {
  pthread_mutex_lock(&cache_lock);
  scratch_header *list = NULL;
  if (holders > 0 && --holders == 0) {
    list = cache;
    cache = NULL;
    cached_bytes = 0;
  }
  pthread_mutex_unlock(&cache_lock);
  while (list) {
    scratch_header *next = list->next;
    free(list);
    list = next;
  }
}
