/* Gemm.c - GEMM helpers generated code calls with plain arguments.
 *
 * f32 products of some size go to oneDNN's dnnl_sgemm when libdnnl.so.2 can be
 * loaded (Debian's libdnnl2): measured on AVX-512 it is 4-35 % faster than
 * OpenBLAS on the shapes models have (docs/kernels.md). The library is opened
 * with dlopen at the first instance's creation, so model.so does not depend on
 * it: without it, and for f64 and small products, OpenBLAS computes (small
 * products too go to oneDNN where OpenBLAS fell back to pre-AVX kernels).
 * TGC_GEMM=openblas keeps every product on OpenBLAS. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "Internal.h"

#include <cblas.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* dnnl_sgemm (oneapi/dnnl/dnnl.h): row-major C = alpha*op(A)*op(B) + beta*C. */
typedef int (*dnnl_sgemm_fn)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                             const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                             float *C, int64_t ldc);
/* Debian's oneDNN runs on OpenMP: a product is kept on the calling thread (the
 * runtime's pool splits the work) by setting the calling thread's OpenMP
 * thread count, a per-thread setting, to 1 around the call. It must be the
 * OpenMP runtime libdnnl's calls bind to: one already in the process's global
 * scope wins over libdnnl's own libgomp (PyTorch brings its own), else the one
 * libdnnl loaded. Setting the other one leaves oneDNN running a team of
 * threads inside each of the pool's, on cores the pool already uses. */
typedef int (*omp_get_max_threads_fn)(void);
typedef void (*omp_set_num_threads_fn)(int);

static struct {
  pthread_once_t once;
  dnnl_sgemm_fn sgemm;
  double min_work; /* multiply-adds from which an f32 product goes to oneDNN */
  omp_get_max_threads_fn get_max_threads;
  omp_set_num_threads_fn set_num_threads;
} dnnl = {.once = PTHREAD_ONCE_INIT};

/* Multiply-adds from which an f32 product goes to oneDNN: below, its fixed cost
 * per call (about a microsecond) outweighs its faster kernels. */
static const double kDnnlMinWork = 32768.0;
/* The same where OpenBLAS lags the host (openblas_lags_host): oneDNN is as fast
 * from 1-2K multiply-adds and 2-4x faster from 4K up (docs/kernels.md). */
static const double kDnnlMinWorkLagging = 4096.0;

extern char *openblas_get_corename(void) __attribute__((weak));

/* Whether OpenBLAS runs kernels older than the host's vector units. Its runtime
 * dispatch falls back to SSE3 ("Prescott") on CPUs it does not know: Debian 12's
 * OpenBLAS 0.3.21 on a recent Xeon with AVX-512, where oneDNN is 2-5x faster on
 * most of the small products that would go to OpenBLAS (docs/kernels.md). */
static bool openblas_lags_host(void) {
  if (!openblas_get_corename || !__builtin_cpu_supports("avx2"))
    return false;
  const char *core = openblas_get_corename();
  static const char *const kPreAvx[] = {
      "prescott", "core2", "penryn", "dunnington", "nehalem",   "atom",   "barcelona", "bobcat",
      "opteron",  "nano",  "katmai", "coppermine", "northwood", "banias", "athlon",    "unknown"};
  for (size_t i = 0; core && i < sizeof kPreAvx / sizeof *kPreAvx; ++i)
    if (strncasecmp(core, kPreAvx[i], strlen(kPreAvx[i])) == 0)
      return true;
  return false;
}

static void load_dnnl(void) {
  const char *choice = getenv("TGC_GEMM");
  if (choice && strcmp(choice, "openblas") == 0)
    return;
  void *handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return;
  dnnl_sgemm_fn sgemm = (dnnl_sgemm_fn)dlsym(handle, "dnnl_sgemm");
  omp_get_max_threads_fn get = (omp_get_max_threads_fn)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  omp_set_num_threads_fn set = (omp_set_num_threads_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (!get || !set) {
    get = (omp_get_max_threads_fn)dlsym(handle, "omp_get_max_threads");
    set = (omp_set_num_threads_fn)dlsym(handle, "omp_set_num_threads");
  }
  if (!sgemm || !get || !set) {
    dlclose(handle);
    return;
  }
  dnnl.get_max_threads = get;
  dnnl.set_num_threads = set;
  dnnl.min_work = openblas_lags_host() ? kDnnlMinWorkLagging : kDnnlMinWork;
  dnnl.sgemm = sgemm;
}

/* Computes the product with oneDNN on this thread; false if it cannot. */
static bool dnnl_gemm(int64_t transA, int64_t transB, const float *A, int64_t lda, const float *B,
                      int64_t ldb, float *C, int64_t ldc, int64_t M, int64_t N, int64_t K,
                      float alpha, float beta) {
  if (!dnnl.sgemm || (double)M * (double)N * (double)K < dnnl.min_work || K <= 0)
    return false;
  int threads = dnnl.get_max_threads();
  if (threads != 1)
    dnnl.set_num_threads(1);
  int status = dnnl.sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb,
                          beta, C, ldc);
  if (threads != 1)
    dnnl.set_num_threads(threads);
  return status == 0;
}

/* cblas takes 32-bit ints (Debian's OpenBLAS is not ILP64). */
static bool fits_blas_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static bool fits_blas(int64_t lda, int64_t ldb, int64_t ldc, int64_t M, int64_t N, int64_t K) {
  return fits_blas_int(lda) && fits_blas_int(ldb) && fits_blas_int(ldc) && fits_blas_int(M) &&
         fits_blas_int(N) && fits_blas_int(K);
}

/* BLAS rejects leading dimensions below 1 even for empty matrices. */
static int blas_ld(int64_t ld) { return ld < 1 ? 1 : (int)ld; }

/* The loop kernels: C = alpha * op(A) * op(B) + beta * C, with beta == 0
 * meaning "overwrite" as in BLAS. */
#define TGC_GEMM_LOOP(NAME, T)                                                                     \
  void NAME(int64_t transA, int64_t transB, const T *A, int64_t lda, const T *B, int64_t ldb,      \
            T *C, int64_t ldc, int64_t M, int64_t N, int64_t K, T alpha, T beta) {                 \
    for (int64_t i = 0; i < M; ++i) {                                                              \
      for (int64_t j = 0; j < N; ++j) {                                                            \
        T sum = 0;                                                                                 \
        for (int64_t k = 0; k < K; ++k) {                                                          \
          T a = transA ? A[k * lda + i] : A[i * lda + k];                                          \
          T b = transB ? B[j * ldb + k] : B[k * ldb + j];                                          \
          sum += a * b;                                                                            \
        }                                                                                          \
        T *c = &C[i * ldc + j];                                                                    \
        *c = beta == 0 ? alpha * sum : alpha * sum + beta * *c;                                    \
      }                                                                                            \
    }                                                                                              \
  }

TGC_GEMM_LOOP(tgc_gemm_loop_f32, float)
TGC_GEMM_LOOP(tgc_gemm_loop_f64, double)

/* One product: C = alpha * op(A) * op(B) + beta * C on the calling thread. */
static void gemm_one(bool f64, int64_t transA, int64_t transB, const void *A, int64_t lda,
                     const void *B, int64_t ldb, void *C, int64_t ldc, int64_t M, int64_t N,
                     int64_t K, double alpha, double beta) {
  if (M <= 0 || N <= 0)
    return;
  enum CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  bool blas = fits_blas(lda, ldb, ldc, M, N, K);
  if (f64 && blas)
    cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, alpha, A, blas_ld(lda), B,
                blas_ld(ldb), beta, C, blas_ld(ldc));
  else if (f64)
    tgc_gemm_loop_f64(transA, transB, A, lda, B, ldb, C, ldc, M, N, K, alpha, beta);
  else if (dnnl_gemm(transA, transB, A, lda, B, ldb, C, ldc, M, N, K, (float)alpha, (float)beta))
    return;
  else if (blas)
    cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, (float)alpha, A, blas_ld(lda), B,
                blas_ld(ldb), (float)beta, C, blas_ld(ldc));
  else
    tgc_gemm_loop_f32(transA, transB, A, lda, B, ldb, C, ldc, M, N, K, (float)alpha, (float)beta);
}

/* GEMMs run on the runtime's thread pool: OpenBLAS itself stays single-threaded
 * (its own threads would spin against the pool's), and a product is split
 * into independent blocks: over the batch when it has a matrix per thread,
 * else over the rows or the columns of C, whichever there are more of, in
 * multiples of kGemmUnit. Each element of C is computed by one thread, the
 * same way for any thread count. */
static const int64_t kGemmUnit = 16;
/* Multiply-adds below which a product stays on one thread. */
static const int64_t kGemmParallelWork = (int64_t)1 << 18;

typedef struct gemm_job {
  bool f64;
  int64_t batch, transA, transB;
  const char *A, *B;
  char *C;
  int64_t strideA, strideB, strideC; /* bytes */
  int64_t lda, ldb, ldc, M, N, K;
  double alpha, beta;
  enum { SPLIT_BATCH, SPLIT_ROWS, SPLIT_COLUMNS } split;
} gemm_job;

static void gemm_task(void *ctx, int64_t begin, int64_t end) {
  const gemm_job *j = ctx;
  int64_t size = j->f64 ? (int64_t)sizeof(double) : (int64_t)sizeof(float);
  if (j->split == SPLIT_BATCH) {
    for (int64_t b = begin; b < end; ++b)
      gemm_one(j->f64, j->transA, j->transB, j->A + b * j->strideA, j->lda, j->B + b * j->strideB,
               j->ldb, j->C + b * j->strideC, j->ldc, j->M, j->N, j->K, j->alpha, j->beta);
    return;
  }
  int64_t extent = j->split == SPLIT_ROWS ? j->M : j->N;
  int64_t lo = begin * kGemmUnit, hi = end * kGemmUnit < extent ? end * kGemmUnit : extent;
  for (int64_t b = 0; b < j->batch; ++b) {
    const char *A = j->A + b * j->strideA, *B = j->B + b * j->strideB;
    char *C = j->C + b * j->strideC;
    if (j->split == SPLIT_ROWS)
      gemm_one(j->f64, j->transA, j->transB, A + (j->transA ? lo : lo * j->lda) * size, j->lda, B,
               j->ldb, C + lo * j->ldc * size, j->ldc, hi - lo, j->N, j->K, j->alpha, j->beta);
    else
      gemm_one(j->f64, j->transA, j->transB, A, j->lda, B + (j->transB ? lo * j->ldb : lo) * size,
               j->ldb, C + lo * size, j->ldc, j->M, hi - lo, j->K, j->alpha, j->beta);
  }
}

static void gemm(gemm_job *j) {
  if (j->batch <= 0 || j->M <= 0 || j->N <= 0)
    return;
  /* In a CUDA model's call, the operands are device memory: cuBLAS. */
  tgc_cuda *cuda = tgc_cuda_current();
  if (cuda) {
    int64_t size = j->f64 ? (int64_t)sizeof(double) : (int64_t)sizeof(float);
    tgc_cuda_gemm(cuda, j->f64, j->batch, j->transA, j->transB, j->A, j->strideA / size, j->lda,
                  j->B, j->strideB / size, j->ldb, j->C, j->strideC / size, j->ldc, j->M, j->N,
                  j->K, j->alpha, j->beta);
    return;
  }
  int threads = tgc_threads_current();
  double work = (double)j->batch * (double)j->M * (double)j->N * (double)(j->K > 0 ? j->K : 1);
  if (threads <= 1 || work < (double)kGemmParallelWork) {
    j->split = SPLIT_BATCH;
    gemm_task(j, 0, j->batch);
    return;
  }
  if (j->batch >= threads) {
    j->split = SPLIT_BATCH;
    tgc_rt_parallel_for(gemm_task, j, j->batch);
    return;
  }
  j->split = j->M >= j->N ? SPLIT_ROWS : SPLIT_COLUMNS;
  int64_t extent = j->split == SPLIT_ROWS ? j->M : j->N;
  tgc_rt_parallel_for(gemm_task, j, (extent + kGemmUnit - 1) / kGemmUnit);
}

extern void openblas_set_num_threads(int) __attribute__((weak));

const char *tgc_gemm_f32_library(void) { return dnnl.sgemm ? "onednn" : "openblas"; }

double tgc_gemm_f32_onednn_min_work(void) { return dnnl.sgemm ? dnnl.min_work : -1.0; }

void tgc_gemm_init(void) {
  if (openblas_set_num_threads)
    openblas_set_num_threads(1);
  pthread_once(&dnnl.once, load_dnnl);
}

/* The entries generated code calls, per element type: a single product is the
 * batched one with a batch of 1. Offsets and batch strides are in elements. */
#define TGC_GEMM_ENTRIES(SUFFIX, T, IS_F64)                                                        \
  void tgc_rt_gemm_batched_##SUFFIX(                                                               \
      int64_t batch, int64_t transA, int64_t transB, const T *A, int64_t offA, int64_t strideA,    \
      int64_t lda, const T *B, int64_t offB, int64_t strideB, int64_t ldb, T *C, int64_t offC,     \
      int64_t strideC, int64_t ldc, int64_t M, int64_t N, int64_t K, T alpha, T beta) {            \
    int64_t size = (int64_t)sizeof(T);                                                             \
    gemm(&(gemm_job){.f64 = IS_F64,                                                                \
                     .batch = batch,                                                               \
                     .transA = transA,                                                             \
                     .transB = transB,                                                             \
                     .A = (const char *)(A + offA),                                                \
                     .B = (const char *)(B + offB),                                                \
                     .C = (char *)(C + offC),                                                      \
                     .strideA = strideA * size,                                                    \
                     .strideB = strideB * size,                                                    \
                     .strideC = strideC * size,                                                    \
                     .lda = lda,                                                                   \
                     .ldb = ldb,                                                                   \
                     .ldc = ldc,                                                                   \
                     .M = M,                                                                       \
                     .N = N,                                                                       \
                     .K = K,                                                                       \
                     .alpha = alpha,                                                               \
                     .beta = beta});                                                               \
  }                                                                                                \
  void tgc_rt_gemm_##SUFFIX(int64_t transA, int64_t transB, const T *A, int64_t offA, int64_t lda, \
                            const T *B, int64_t offB, int64_t ldb, T *C, int64_t offC,             \
                            int64_t ldc, int64_t M, int64_t N, int64_t K, T alpha, T beta) {       \
    tgc_rt_gemm_batched_##SUFFIX(1, transA, transB, A, offA, 0, lda, B, offB, 0, ldb, C, offC, 0,  \
                                 ldc, M, N, K, alpha, beta);                                       \
  }

TGC_GEMM_ENTRIES(f32, float, false)
TGC_GEMM_ENTRIES(f64, double, true)
