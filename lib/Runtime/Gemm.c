/* Gemm.c - GEMM helpers generated code calls with plain arguments. */
#include "Internal.h"

#include <cblas.h>
#include <limits.h>

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

void tgc_rt_gemm_f32(int64_t transA, int64_t transB, const float *A, int64_t offA, int64_t lda,
                     const float *B, int64_t offB, int64_t ldb, float *C, int64_t offC, int64_t ldc,
                     int64_t M, int64_t N, int64_t K, float alpha, float beta) {
  if (M <= 0 || N <= 0)
    return;
  if (!fits_blas(lda, ldb, ldc, M, N, K)) {
    tgc_gemm_loop_f32(transA, transB, A + offA, lda, B + offB, ldb, C + offC, ldc, M, N, K, alpha,
                      beta);
    return;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              (int)M, (int)N, (int)K, alpha, A + offA, blas_ld(lda), B + offB, blas_ld(ldb), beta,
              C + offC, blas_ld(ldc));
}

void tgc_rt_gemm_f64(int64_t transA, int64_t transB, const double *A, int64_t offA, int64_t lda,
                     const double *B, int64_t offB, int64_t ldb, double *C, int64_t offC,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha, double beta) {
  if (M <= 0 || N <= 0)
    return;
  if (!fits_blas(lda, ldb, ldc, M, N, K)) {
    tgc_gemm_loop_f64(transA, transB, A + offA, lda, B + offB, ldb, C + offC, ldc, M, N, K, alpha,
                      beta);
    return;
  }
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              (int)M, (int)N, (int)K, alpha, A + offA, blas_ld(lda), B + offB, blas_ld(ldb), beta,
              C + offC, blas_ld(ldc));
}

void tgc_rt_gemm_batched_f32(int64_t batch, int64_t transA, int64_t transB, const float *A,
                             int64_t offA, int64_t strideA, int64_t lda, const float *B,
                             int64_t offB, int64_t strideB, int64_t ldb, float *C, int64_t offC,
                             int64_t strideC, int64_t ldc, int64_t M, int64_t N, int64_t K,
                             float alpha, float beta) {
  for (int64_t b = 0; b < batch; ++b)
    tgc_rt_gemm_f32(transA, transB, A, offA + b * strideA, lda, B, offB + b * strideB, ldb, C,
                    offC + b * strideC, ldc, M, N, K, alpha, beta);
}

void tgc_rt_gemm_batched_f64(int64_t batch, int64_t transA, int64_t transB, const double *A,
                             int64_t offA, int64_t strideA, int64_t lda, const double *B,
                             int64_t offB, int64_t strideB, int64_t ldb, double *C, int64_t offC,
                             int64_t strideC, int64_t ldc, int64_t M, int64_t N, int64_t K,
                             double alpha, double beta) {
  for (int64_t b = 0; b < batch; ++b)
    tgc_rt_gemm_f64(transA, transB, A, offA + b * strideA, lda, B, offB + b * strideB, ldb, C,
                    offC + b * strideC, ldc, M, N, K, alpha, beta);
}
