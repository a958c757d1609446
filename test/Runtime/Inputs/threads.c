/* threads.c - a compiled model (mlp.a, `tgc compile --emit=static --name mlp`) called from
 * several threads at once, built with ThreadSanitizer together with the runtime's sources
 * (test/Runtime/threads-tsan.test):
 *   1. four threads, each with its own instance (two of them on a pool of 2 threads), run
 *      many calls with their own inputs: every result equals the single-threaded one;
 *   2. four threads share one instance: each call either runs and gives the right result
 *      or is refused with "the instance is in use by another call" (docs/abi.md).
 * A data race in the runtime (the instance claim, the thread pool, the scratch cache,
 * the GEMM library's loading) is a ThreadSanitizer report, which fails the test. */
#include "mlp.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { kBatch = 4, kFeatures = 16, kCalls = 100, kThreads = 4 };

typedef struct {
  tgc_model *model; /* NULL: the thread creates its own */
  int id, threads;
  float expected[kThreads][kBatch * 8];
  int64_t outputs; /* elements of output 0 */
  int wrong, ran, refused;
  char error[256];
} job;

static void fill(float *x, int id) {
  for (int i = 0; i < kBatch * kFeatures; ++i)
    x[i] = (float)((i * 7 + id * 3) % 11) / 11.0f - 0.5f;
}

/* Runs `model` on thread id's inputs: 0 and the outputs in `out`, 1 refused, -1 failed. */
static int run(tgc_model *model, int id, float *out, int64_t *count, char *error) {
  float x[kBatch * kFeatures];
  fill(x, id);
  int64_t shape[2] = {kBatch, kFeatures};
  DLTensor input = {
      .data = x, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor *inputs[1] = {&input};
  DLManagedTensor *outputs[1] = {NULL};
  if (tgc_model_run(model, inputs, 1, outputs, 1) != 0) {
    const char *message = tgc_model_last_error(model);
    static const char refusal[] = "the instance is in use by another call";
    if (strncmp(message, refusal, sizeof refusal - 1) == 0)
      return 1;
    snprintf(error, 256, "%s", message);
    return -1;
  }
  DLTensor *y = &outputs[0]->dl_tensor;
  *count = y->shape[0] * y->shape[1];
  if (*count > kBatch * 8) {
    snprintf(error, 256, "output 0 has %lld elements", (long long)*count);
    outputs[0]->deleter(outputs[0]);
    return -1;
  }
  memcpy(out, y->data, (size_t)*count * sizeof(float));
  outputs[0]->deleter(outputs[0]);
  return 0;
}

static void *work(void *arg) {
  job *j = (job *)arg;
  tgc_model *model = j->model;
  if (!model) {
    if (mlp_create(&model) != 0) {
      snprintf(j->error, sizeof j->error, "%s", tgc_model_last_error(NULL));
      return NULL;
    }
    tgc_model_set_num_threads(model, j->threads);
  }
  for (int call = 0; call < kCalls; ++call) {
    float out[kBatch * 8];
    int64_t count = 0;
    int status = run(model, j->id, out, &count, j->error);
    if (status < 0)
      break;
    if (status > 0) {
      ++j->refused;
      continue;
    }
    ++j->ran;
    if (count != j->outputs || memcmp(out, j->expected[j->id], (size_t)count * sizeof(float)))
      ++j->wrong;
  }
  if (!j->model)
    tgc_model_destroy(model);
  return NULL;
}

/* Starts kThreads jobs on `shared` (NULL: an instance each) and reports them. */
static int round_of(const char *name, tgc_model *shared, job *jobs) {
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    pthread_create(&threads[t], NULL, work, &jobs[t]);
  for (int t = 0; t < kThreads; ++t)
    pthread_join(threads[t], NULL);
  int failed = 0, ran = 0, refused = 0, wrong = 0;
  for (int t = 0; t < kThreads; ++t) {
    if (jobs[t].error[0]) {
      printf("%s: thread %d: error: %s\n", name, t, jobs[t].error);
      failed = 1;
    }
    ran += jobs[t].ran;
    refused += jobs[t].refused;
    wrong += jobs[t].wrong;
  }
  printf("%s: %d calls, %d ran, %d wrong results, %s\n", name, kThreads * kCalls, ran, wrong,
         shared ? (refused + ran == kThreads * kCalls ? "the rest refused" : "calls lost")
                : (refused ? "some refused" : "none refused"));
  return failed || wrong || (!shared && ran != kThreads * kCalls) ||
         (shared && refused + ran != kThreads * kCalls);
}

int main(void) {
  static job jobs[kThreads];
  tgc_model *reference = NULL;
  if (mlp_create(&reference) != 0) {
    printf("error: %s\n", tgc_model_last_error(NULL));
    return 1;
  }
  /* Each thread's expected result, from one thread. */
  for (int t = 0; t < kThreads; ++t) {
    memset(&jobs[t], 0, sizeof jobs[t]);
    jobs[t].id = t;
    jobs[t].threads = t % 2 ? 2 : 1;
    if (run(reference, t, jobs[0].expected[t], &jobs[0].outputs, jobs[t].error) != 0) {
      printf("error: %s\n", jobs[t].error);
      return 1;
    }
  }
  for (int t = 1; t < kThreads; ++t) {
    memcpy(jobs[t].expected, jobs[0].expected, sizeof jobs[0].expected);
    jobs[t].outputs = jobs[0].outputs;
  }
  int failed = round_of("separate instances", NULL, jobs);
  for (int t = 0; t < kThreads; ++t) {
    jobs[t].model = reference;
    jobs[t].ran = jobs[t].refused = jobs[t].wrong = 0;
  }
  failed |= round_of("one shared instance", reference, jobs);
  tgc_model_destroy(reference);
  return failed;
}
