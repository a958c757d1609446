/* tgc_runtime.h - the C ABI of a tgc-compiled model.so and of its runtime. */
/*
 * This header has three parts (docs/abi.md is the specification):
 *   1. the user API of a model.so (`tgc_model_*`), the declarations that the
 *      generated model.h carries too; exported from every model.so;
 *   2. the interface between generated code and the runtime: `tgc_model_desc`
 *      and `tgc_rt_create`, hidden inside the model.so;
 *   3. helpers that generated code calls with plain LLVM types (`memrefCopy`,
 *      `tgc_rt_gemm_*`), hidden inside the model.so.
 * The runtime is plain C11 and depends only on libc, libm and OpenBLAS.
 */
#ifndef TGC_RUNTIME_TGC_RUNTIME_H
#define TGC_RUNTIME_TGC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the user API: the runtime is built with -fvisibility=hidden, so only
 * these functions (and the generated `<name>_create`) leave a model.so. */
#if defined(__GNUC__) || defined(__clang__)
#define TGC_EXPORT __attribute__((visibility("default")))
#else
#define TGC_EXPORT
#endif

/* Version of `tgc_model_desc` and of the calling convention of the packed
 * entry; the runtime refuses descriptors of another version. */
#define TGC_ABI_VERSION 2
/* Version stored in the signature blob after the magic "TGCS". */
#define TGC_SIGNATURE_VERSION 4

/* Kinds of instance state, as returned by tgc_model_state_kind. */
#define TGC_STATE_PARAMETER 0
#define TGC_STATE_BUFFER 1
#define TGC_STATE_CONSTANT 2

/* DLPack >= 0.8 names booleans kDLBool (6); the 0.6 headers Debian ships do
 * not, so tgc spells it out. Boolean tensors are {TGC_DL_BOOL, 8, 1}. */
#define TGC_DL_BOOL 6
/* DLPack 1.1's kDLFloat8_e4m3fn: the dtype of saved values that --pack-saved=fp8
 * compresses (they never cross the API). */
#define TGC_DL_FLOAT8_E4M3FN 10

/*===------------------------------------------------------------------===*
 * 1. User API (also declared by every generated model.h).
 *===------------------------------------------------------------------===*/
#ifndef TGC_MODEL_API_V2
#define TGC_MODEL_API_V2

/** One instance of a compiled model: its own copy of parameters, buffers and
 *  constants, and its own last-error string. Not thread-safe: use one
 *  instance per thread, or serialize calls on an instance. */
typedef struct tgc_model tgc_model;

/** Frees an instance and its state. NULL is allowed. Outputs returned by
 *  tgc_model_run stay valid (they own their memory). */
TGC_EXPORT void tgc_model_destroy(tgc_model *m);

/** The message of the last failed call on `m` ("" if none). With m == NULL,
 *  the message of the last failed `<name>_create` on this thread, which has
 *  no instance to hold it. The string lives until the next call on `m`. */
TGC_EXPORT const char *tgc_model_last_error(const tgc_model *m);

/** The model's name (the `<name>` of `<name>_create`). */
TGC_EXPORT const char *tgc_model_name(const tgc_model *m);

/** Number of user inputs tgc_model_run expects, in signature order. */
TGC_EXPORT int64_t tgc_model_num_inputs(const tgc_model *m);

/** Number of user outputs tgc_model_run returns. */
TGC_EXPORT int64_t tgc_model_num_outputs(const tgc_model *m);

/** Name of user input i (NULL if out of range), e.g. for keyword lookup. */
TGC_EXPORT const char *tgc_model_input_name(const tgc_model *m, int64_t i);

/** Name of user output i (NULL if out of range). */
TGC_EXPORT const char *tgc_model_output_name(const tgc_model *m, int64_t i);

/** 1 if tgc_model_run (or, for trainable models, tgc_model_backward) writes
 *  new values into user input i in place, 0 if not, -1 if i is out of range:
 *  callers that share inputs need to know. */
TGC_EXPORT int tgc_model_input_is_mutated(const tgc_model *m, int64_t i);

/** Runs the forward entry (one call at a time per instance: a call while another
 *  holds the instance fails, docs/abi.md). `inputs` holds num_inputs CPU tensors (strided is
 *  fine); `outputs` receives num_outputs new contiguous tensors, each freed
 *  by the caller with out->deleter(out). Mutated buffers are updated in the
 *  instance; mutated user inputs are written back into the caller's tensors.
 *  Returns 0, or non-zero with a message (and every outputs[i] == NULL).
 *  On a trainable model the values saved for the backward are dropped (those
 *  of an earlier tgc_model_run_train stay pending). */
TGC_EXPORT int tgc_model_run(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                             DLManagedTensor **outputs, int64_t num_outputs);

/** tgc_model_run on CUDA stream `stream` (a CUstream / cudaStream_t; NULL: the legacy
 *  default stream) for a CUDA model: the call queues its work there and returns without
 *  waiting for it (a value the program branches on is still read back), so the outputs
 *  are ready when the stream reaches that point. Errors the device reports later fail a
 *  later call. A CPU model takes NULL and runs as tgc_model_run. The instance's calls
 *  must be ordered (one stream, or synchronized): they share its temporaries. */
TGC_EXPORT int tgc_model_run_async(tgc_model *m, void *stream, DLTensor *const *inputs,
                                   int64_t num_inputs, DLManagedTensor **outputs,
                                   int64_t num_outputs);

/** The CUDA stream this instance's calls (run, run_train, backward) run on, as
 *  tgc_model_run_async's: NULL restores the legacy default stream, on which calls wait
 *  for their work. Fails for a CPU model unless `stream` is NULL. */
TGC_EXPORT int tgc_model_set_cuda_stream(tgc_model *m, void *stream);

/** Where the model runs: kDLCPU (1) or kDLCUDA (2); 0 for NULL. */
TGC_EXPORT int tgc_model_device_type(const tgc_model *m);

/** A new contiguous copy of CPU tensor `src` (any strides) on the model's device (a CPU
 *  tensor for a CPU model), in *out; free it with its deleter. For a C program or
 *  `tgc run` that has its data on the host. Returns 0, or non-zero with a message. */
TGC_EXPORT int tgc_model_copy_to_device(tgc_model *m, const DLTensor *src, DLManagedTensor **out);

/** A new contiguous CPU copy of `src`, a tensor on the model's device (any strides), in
 *  *out. */
TGC_EXPORT int tgc_model_copy_to_host(tgc_model *m, const DLTensor *src, DLManagedTensor **out);

/** Sets the number of threads this instance's calls run on (kernels and
 *  GEMMs); n < 1 restores the default: TGC_NUM_THREADS when it is set to a
 *  positive integer, else the CPUs the process may run on. For a given count,
 *  results are bit-identical from call to call. Separate instances may run
 *  concurrently; the process has one thread pool, and a call that finds it
 *  busy runs on its own thread. */
TGC_EXPORT void tgc_model_set_num_threads(tgc_model *m, int n);

/** The number of threads this instance's calls run on. */
TGC_EXPORT int tgc_model_num_threads(const tgc_model *m);

/** Number of state entries: parameters, buffers and constants. */
TGC_EXPORT int64_t tgc_model_num_state(const tgc_model *m);

/** Fully qualified name of state entry i (NULL if out of range). */
TGC_EXPORT const char *tgc_model_state_name(const tgc_model *m, int64_t i);

/** TGC_STATE_PARAMETER, _BUFFER or _CONSTANT for state entry i; -1 if out of
 *  range. Tools save buffers (which runs change) but not parameters. */
TGC_EXPORT int tgc_model_state_kind(const tgc_model *m, int64_t i);

/** Stores the dtype of state `name` in *dtype, so callers can allocate a
 *  destination for tgc_model_get_state. */
TGC_EXPORT int tgc_model_state_dtype(tgc_model *m, const char *name, DLDataType *dtype);

/** Stores the rank of state `name` in *rank and, when it is at most
 *  max_rank, its sizes in sizes[0..rank). Fails (after setting *rank) when
 *  the rank exceeds max_rank, so a caller can retry with more room. */
TGC_EXPORT int tgc_model_state_shape(tgc_model *m, const char *name, int64_t *rank, int64_t *sizes,
                                     int64_t max_rank);

/** Copies state `name` into dst (same dtype and shape, CPU, any strides). */
TGC_EXPORT int tgc_model_get_state(tgc_model *m, const char *name, DLTensor *dst);

/** Replaces state `name` with a copy of src (same dtype and shape, CPU, any
 *  strides): loads new weights or resets buffers. */
TGC_EXPORT int tgc_model_set_state(tgc_model *m, const char *name, const DLTensor *src);

/* Training (models compiled with `tgc compile --train`). */

/** 1 if the model has a backward entry, else 0. */
TGC_EXPORT int tgc_model_is_trainable(const tgc_model *m);

/** tgc_model_run that also keeps the forward's saved values in the instance
 *  for one tgc_model_backward (replacing values still pending from an
 *  earlier call). Inputs that the backward mutates must stay valid (their
 *  data, shape and strides) until that backward. */
TGC_EXPORT int tgc_model_run_train(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                                   DLManagedTensor **outputs, int64_t num_outputs);

/** Number of gradients tgc_model_backward returns. */
TGC_EXPORT int64_t tgc_model_num_gradients(const tgc_model *m);

/** What gradient i differentiates: the fqn of a parameter, or `input.N` for
 *  user input N (NULL if out of range). */
TGC_EXPORT const char *tgc_model_gradient_name(const tgc_model *m, int64_t i);

/** Runs the backward entry on the values saved by the last
 *  tgc_model_run_train and consumes them. grad_outputs holds one tensor per
 *  user output (num_outputs entries), with that output's dtype and shape;
 *  entries of outputs that have no gradient (non-differentiable) are
 *  ignored and may be NULL. `grads` receives num_gradients new tensors
 *  (freed with deleter). Buffers and user inputs the backward mutates are
 *  updated. Returns 0, or non-zero with a message; on failure nothing has
 *  changed and the saved values stay pending. */
TGC_EXPORT int tgc_model_backward(tgc_model *m, DLTensor *const *grad_outputs,
                                  int64_t num_grad_outputs, DLManagedTensor **grads,
                                  int64_t num_grads);

/** 1 if user output i has a gradient input in tgc_model_backward, 0 if it
 *  is not differentiable, -1 if i is out of range. */
TGC_EXPORT int tgc_model_output_has_gradient(const tgc_model *m, int64_t i);

/** Number of values the forward saves for the backward (those passed by
 *  reference included); 0 for models that are not trainable. */
TGC_EXPORT int64_t tgc_model_saved_count(const tgc_model *m);

/** Bytes the last successful tgc_model_run_train allocated for saved values
 *  (values passed by reference cost nothing); 0 before any. */
TGC_EXPORT int64_t tgc_model_saved_bytes(const tgc_model *m);

#endif /* TGC_MODEL_API_V2 */

/*===------------------------------------------------------------------===*
 * 2. Generated code -> runtime (hidden inside model.so).
 *===------------------------------------------------------------------===*/

/** What the generated `<name>_create` hands the runtime: the embedded blobs
 *  and the packed entry. Every field is 8 bytes wide so that code generators
 *  can lay it out as { i64, ptr, ptr, i64, ptr, i64, ptr, ptr }. */
typedef struct tgc_model_desc {
  uint64_t abi_version;          /* TGC_ABI_VERSION */
  const char *name;              /* NUL-terminated model name */
  const uint8_t *signature;      /* signature blob (docs/abi.md) */
  uint64_t signature_size;       /* its size in bytes */
  const uint8_t *weights;        /* weights blob; NULL allowed if size is 0 */
  uint64_t weights_size;         /* its size in bytes */
  void (*forward)(void **args);  /* packed entry tgc_entry_forward */
  void (*backward)(void **args); /* packed entry tgc_entry_backward; NULL
                                    for models that are not trainable */
} tgc_model_desc;

/** Creates an instance from `desc`: decodes and checks the signature blob
 *  (a malformed blob is an error, never a crash) and copies the initial
 *  state out of the weights blob. On failure *out is NULL and
 *  tgc_model_last_error(NULL) says why. `desc` must outlive the instance. */
int tgc_rt_create(const tgc_model_desc *desc, tgc_model **out);

/** tgc_rt_create after checking that this machine's CPU has `features` (a
 *  comma-separated list of LLVM x86 feature names: what the code was generated for,
 *  model.json "target"); fails with an error naming the missing ones instead of letting
 *  the model die on an illegal instruction. Names the runtime cannot test are skipped. */
int tgc_rt_create_for_cpu(const tgc_model_desc *desc, const char *features, tgc_model **out);

/** A CUDA model's GPU code (`tgc compile --target=cuda`): the fatbin (a cubin and PTX),
 *  the names of its kernels, each NUL-terminated, in the order generated code numbers
 *  them, and its options. */
typedef struct tgc_cuda_image {
  const uint8_t *fatbin;
  uint64_t fatbin_size;
  const char *kernel_names;
  uint64_t kernel_names_size;
  uint64_t flags; /* TGC_CUDA_ALLOW_TF32: fp32 GEMMs may round their inputs to TF32 */
} tgc_cuda_image;

/** tgc_cuda_image.flags: `tgc compile --allow-tf32`. */
#define TGC_CUDA_ALLOW_TF32 1u

/** tgc_rt_create_for_cpu for a CUDA model: also loads the CUDA driver (with dlopen:
 *  a machine without one fails here, with an error saying so), loads `image` on the
 *  device (TGC_CUDA_DEVICE, default 0) and keeps the state there. */
int tgc_rt_create_for_cuda(const tgc_model_desc *desc, const char *features,
                           const tgc_cuda_image *image, tgc_model **out);

/*===------------------------------------------------------------------===*
 * 3. Helpers called by generated code (hidden inside model.so).
 *===------------------------------------------------------------------===*/

/** MLIR's unranked memref: `descriptor` points at a ranked descriptor
 *  { void *allocated; void *aligned; int64_t offset; int64_t sizes[rank];
 *    int64_t strides[rank]; }. */
typedef struct tgc_unranked_memref {
  int64_t rank;
  void *descriptor;
} tgc_unranked_memref;

/** Copies src into dst element by element (sizes from src, each side with
 *  its own strides): the exact semantics of MLIR's CRunnerUtils memrefCopy,
 *  which `memref.copy` lowers to for non-contiguous layouts. Defined here so
 *  that a model.so needs no MLIR runtime library. */
void memrefCopy(int64_t elem_size, tgc_unranked_memref *src, tgc_unranked_memref *dst);

/** C[offC..] = alpha * op(A) * op(B) + beta * C, row-major, through
 *  cblas_sgemm. op(A) is M x K (A is stored K x M when transA != 0), op(B) is
 *  K x N (stored N x K when transB != 0), C is M x N. Offsets and leading
 *  dimensions are in elements. With beta == 0, C is not read (NaNs in C are
 *  overwritten). Sizes beyond 32-bit BLAS ints use a plain loop. */
void tgc_rt_gemm_f32(int64_t transA, int64_t transB, const float *A, int64_t offA, int64_t lda,
                     const float *B, int64_t offB, int64_t ldb, float *C, int64_t offC, int64_t ldc,
                     int64_t M, int64_t N, int64_t K, float alpha, float beta);

/** tgc_rt_gemm_f32 for `batch` independent products; matrix b of each
 *  operand starts at off + b * stride (elements). A stride of 0 broadcasts
 *  an operand over the batch. */
void tgc_rt_gemm_batched_f32(int64_t batch, int64_t transA, int64_t transB, const float *A,
                             int64_t offA, int64_t strideA, int64_t lda, const float *B,
                             int64_t offB, int64_t strideB, int64_t ldb, float *C, int64_t offC,
                             int64_t strideC, int64_t ldc, int64_t M, int64_t N, int64_t K,
                             float alpha, float beta);

/** Double-precision tgc_rt_gemm_f32 (cblas_dgemm). */
void tgc_rt_gemm_f64(int64_t transA, int64_t transB, const double *A, int64_t offA, int64_t lda,
                     const double *B, int64_t offB, int64_t ldb, double *C, int64_t offC,
                     int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha, double beta);

/** A parallel loop of generated code: calls fn(ctx, begin, end) on disjoint
 *  chunks covering [0, n), one per thread of the current model call, the
 *  first on the calling thread; returns when all are done. */
typedef void (*tgc_task_fn)(void *ctx, int64_t begin, int64_t end);
void tgc_rt_parallel_for(tgc_task_fn fn, void *ctx, int64_t n);

/** CUDA models: launches kernel number `kernel` of the instance's GPU code with a grid
 *  of gx*gy*gz blocks of bx*by*bz threads, `shared` bytes of dynamic shared memory and
 *  `params[i]` pointing at parameter i, on the call's stream. A failure is kept and
 *  fails the call. */
void tgc_rt_cuda_launch(int32_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                        int64_t bz, int32_t shared, void **params);

/** CUDA models: copies `nbytes` from device memory to host memory, after the call's
 *  work so far (a value the host code branches on). */
void tgc_rt_cuda_read(void *dst, const void *src, int64_t nbytes);

/** Double-precision tgc_rt_gemm_batched_f32. */
void tgc_rt_gemm_batched_f64(int64_t batch, int64_t transA, int64_t transB, const double *A,
                             int64_t offA, int64_t strideA, int64_t lda, const double *B,
                             int64_t offB, int64_t strideB, int64_t ldb, double *C, int64_t offC,
                             int64_t strideC, int64_t ldc, int64_t M, int64_t N, int64_t K,
                             double alpha, double beta);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TGC_RUNTIME_TGC_RUNTIME_H */
