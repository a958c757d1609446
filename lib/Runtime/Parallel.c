/* Parallel.c - the runtime's thread pool: tgc_rt_parallel_for, which generated
 * kernels and the GEMM helpers call.
 *
 * [0, n) is split into one contiguous chunk per thread (chunk i is
 * [n*i/T, n*(i+1)/T)); the calling thread runs chunk 0 and the pool's workers
 * the others. What a chunk computes does not depend on which thread runs it or
 * on T, so results are the same for every thread count as long as callers only
 * parallelize independent iterations (they do: no reduction is split across
 * threads). One dispatch at a time per process: a call made while the pool is
 * busy (another model instance on another thread) runs sequentially. */
#define _GNU_SOURCE
#include "Internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* The most threads one dispatch uses. */
#define TGC_MAX_THREADS 256
#define TGC_PARTS_BITS 16
_Static_assert(TGC_MAX_THREADS < (1 << TGC_PARTS_BITS), "a dispatch's chunk count fits its bits");
/* Polls of the generation (with a pause each) a worker spins before it sleeps:
 * kernels come in quick succession, and a condition variable's wake-up costs
 * more than most kernels. */
#define TGC_SPIN 4000

static struct {
  pthread_mutex_t dispatch; /* held by the thread whose work the pool runs */
  pthread_mutex_t lock;     /* guards the sleeps on `wake` and `done` */
  pthread_cond_t wake;
  pthread_cond_t done;
  int workers; /* started, never stopped */
  /* The dispatch: a count in the high bits and its number of chunks in the low
   * TGC_PARTS_BITS, in one word so that a worker reads both at once. A worker
   * that sits a dispatch out touches nothing else of it: the next dispatch may
   * already be writing fn, ctx and n. Those stay put for a worker that takes
   * part, since the dispatch cannot end before its chunk has run. */
  _Atomic uint64_t generation;
  tgc_task_fn fn;
  void *ctx;
  int64_t n;
  _Atomic int pending; /* chunks of workers not yet finished */
} pool = {.dispatch = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

/* The thread count of the model call running on this thread (0: none). */
static _Thread_local int current_threads;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

int tgc_threads_default(void) {
  const char *env = getenv("TGC_NUM_THREADS");
  if (env && *env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (end && *end == '\0' && v > 0)
      return v > TGC_MAX_THREADS ? TGC_MAX_THREADS : (int)v;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set) > TGC_MAX_THREADS ? TGC_MAX_THREADS : CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (online > TGC_MAX_THREADS ? TGC_MAX_THREADS : (int)online) : 1;
}

int tgc_threads_enter(int threads) {
  int previous = current_threads;
  current_threads = threads < 1 ? 1 : (threads > TGC_MAX_THREADS ? TGC_MAX_THREADS : threads);
  return previous;
}

void tgc_threads_leave(int previous) { current_threads = previous; }

int tgc_threads_current(void) { return current_threads > 0 ? current_threads : 1; }

static void run_chunk(tgc_task_fn fn, void *ctx, int64_t n, int parts, int i) {
  int64_t begin = (int64_t)((__int128)n * i / parts);
  int64_t end = (int64_t)((__int128)n * (i + 1) / parts);
  if (begin < end)
    fn(ctx, begin, end);
}

/* The generation current when worker i was started: the first it must not run
 * (written before its pthread_create, read by it only). */
static uint64_t spawn_generation[TGC_MAX_THREADS];

static void *worker_main(void *arg) {
  int index = (int)(intptr_t)arg;
  uint64_t seen = spawn_generation[index];
  for (;;) {
    uint64_t g = seen;
    for (int s = 0; s < TGC_SPIN && g == seen; ++s) {
      cpu_relax();
      g = atomic_load_explicit(&pool.generation, memory_order_acquire);
    }
    if (g == seen) {
      pthread_mutex_lock(&pool.lock);
      while ((g = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen)
        pthread_cond_wait(&pool.wake, &pool.lock);
      pthread_mutex_unlock(&pool.lock);
    }
    seen = g;
    int parts = (int)(g & ((1u << TGC_PARTS_BITS) - 1));
    if (index >= parts)
      continue;
    run_chunk(pool.fn, pool.ctx, pool.n, parts, index);
    if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&pool.lock);
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.lock);
    }
  }
  return NULL;
}

/* Starts workers up to `count`; returns how many there are. */
static int start_workers(int count) {
  while (pool.workers < count) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    spawn_generation[pool.workers + 1] =
        atomic_load_explicit(&pool.generation, memory_order_relaxed);
    int failed = pthread_create(&thread, &attr, worker_main, (void *)(intptr_t)(pool.workers + 1));
    pthread_attr_destroy(&attr);
    if (failed)
      break;
    ++pool.workers;
  }
  return pool.workers;
}

void tgc_rt_parallel_for(tgc_task_fn fn, void *ctx, int64_t n) {
  if (n <= 0)
    return;
  int parts = tgc_threads_current();
  if (parts > n)
    parts = (int)n;
  if (parts <= 1 || pthread_mutex_trylock(&pool.dispatch) != 0) {
    fn(ctx, 0, n);
    return;
  }
  int workers = start_workers(parts - 1);
  if (parts > workers + 1)
    parts = workers + 1;
  pool.fn = fn;
  pool.ctx = ctx;
  pool.n = n;
  atomic_store_explicit(&pool.pending, parts - 1, memory_order_relaxed);
  /* Only the thread holding `dispatch` writes the word. */
  uint64_t count =
      (atomic_load_explicit(&pool.generation, memory_order_relaxed) >> TGC_PARTS_BITS) + 1;
  atomic_store_explicit(&pool.generation, count << TGC_PARTS_BITS | (uint64_t)parts,
                        memory_order_release);
  pthread_mutex_lock(&pool.lock);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  run_chunk(fn, ctx, n, parts, 0);
  for (int s = 0; s < TGC_SPIN && atomic_load_explicit(&pool.pending, memory_order_acquire); ++s)
    cpu_relax();
  if (atomic_load_explicit(&pool.pending, memory_order_acquire)) {
    pthread_mutex_lock(&pool.lock);
    while (atomic_load_explicit(&pool.pending, memory_order_acquire))
      pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
  }
  pthread_mutex_unlock(&pool.dispatch);
}
