/* Cuda.c - the CUDA driver of a CUDA model's instances (docs/cuda.md).
 *
 * The driver API (libcuda.so.1) is loaded with dlopen when the first CUDA instance is
 * created, so that a model.so loads on a machine without CUDA and only creation
 * fails. An instance keeps the primary context of its device (retained for the rest
 * of the process, as PyTorch does), the module loaded from the model's fatbin, its
 * kernels' functions, and the stream its calls run on: the legacy default stream,
 * which orders them after the work PyTorch queued on its default stream.
 *
 * Generated code reaches the instance of the call running on this thread (enter /
 * leave): its launches, read-backs and temporaries. A launch cannot return an error,
 * so the first failure of a call is kept and reported when the call synchronizes. */
#include "Internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API's types, as cuda.h declares them (this file needs no CUDA headers). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0

typedef struct driver {
  CUresult (*init)(unsigned);
  CUresult (*device_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*push)(CUcontext);
  CUresult (*pop)(CUcontext *);
  CUresult (*module_load)(CUmodule *, const void *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*copy_htod)(CUdeviceptr, const void *, size_t);
  CUresult (*copy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*copy_dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*error_string)(CUresult, const char **);
} driver;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static driver cu;
static char driver_error[TGC_ERROR_CAPACITY]; /* empty when the driver is usable */

/* The library's symbol `name` into *slot; false (with driver_error) if it lacks it. */
static bool resolve(void *library, void **slot, const char *name) {
  *slot = dlsym(library, name);
  if (!*slot)
    snprintf(driver_error, sizeof driver_error,
             "the CUDA driver (libcuda.so.1) lacks %s: it is older than CUDA 11", name);
  return *slot != NULL;
}

static void load_driver(void) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    snprintf(driver_error, sizeof driver_error,
             "the CUDA driver cannot be loaded (%s): this machine has no NVIDIA driver",
             why ? why : "libcuda.so.1 not found");
    return;
  }
#define TGC_RESOLVE(field, name)                                                                   \
  if (!resolve(library, (void **)&cu.field, name))                                                 \
    return;
  TGC_RESOLVE(init, "cuInit")
  TGC_RESOLVE(device_count, "cuDeviceGetCount")
  TGC_RESOLVE(device_get, "cuDeviceGet")
  TGC_RESOLVE(primary_retain, "cuDevicePrimaryCtxRetain")
  TGC_RESOLVE(push, "cuCtxPushCurrent_v2")
  TGC_RESOLVE(pop, "cuCtxPopCurrent_v2")
  TGC_RESOLVE(module_load, "cuModuleLoadData")
  TGC_RESOLVE(module_unload, "cuModuleUnload")
  TGC_RESOLVE(get_function, "cuModuleGetFunction")
  TGC_RESOLVE(launch, "cuLaunchKernel")
  TGC_RESOLVE(mem_alloc, "cuMemAlloc_v2")
  TGC_RESOLVE(mem_free, "cuMemFree_v2")
  TGC_RESOLVE(copy_htod, "cuMemcpyHtoD_v2")
  TGC_RESOLVE(copy_dtoh_async, "cuMemcpyDtoHAsync_v2")
  TGC_RESOLVE(copy_dtod_async, "cuMemcpyDtoDAsync_v2")
  TGC_RESOLVE(stream_synchronize, "cuStreamSynchronize")
  TGC_RESOLVE(error_string, "cuGetErrorString")
#undef TGC_RESOLVE
  CUresult status = cu.init(0);
  if (status != CUDA_SUCCESS) {
    const char *what = NULL;
    cu.error_string(status, &what);
    snprintf(driver_error, sizeof driver_error, "cuInit failed: %s (CUDA error %d)",
             what ? what : "unknown error", status);
  }
}

/* The primary context of each device, retained once per process. */
#define TGC_MAX_DEVICES 64
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext contexts[TGC_MAX_DEVICES];

/* cuBLAS, loaded with dlopen when the first GEMM of a CUDA call runs: the library of
 * this CUDA (or the one PyTorch already loaded into the process). */
typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;
enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
};
typedef struct blas {
  cublasStatus_t (*create)(cublasHandle_t *);
  cublasStatus_t (*destroy)(cublasHandle_t);
  cublasStatus_t (*set_stream)(cublasHandle_t, CUstream);
  cublasStatus_t (*set_math_mode)(cublasHandle_t, int);
  cublasStatus_t (*sgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *,
                          int, const float *, int, const float *, float *, int);
  cublasStatus_t (*dgemm)(cublasHandle_t, int, int, int, int, int, const double *, const double *,
                          int, const double *, int, const double *, double *, int);
  cublasStatus_t (*sgemm_batched)(cublasHandle_t, int, int, int, int, int, const float *,
                                  const float *, int, long long, const float *, int, long long,
                                  const float *, float *, int, long long, int);
  cublasStatus_t (*dgemm_batched)(cublasHandle_t, int, int, int, int, int, const double *,
                                  const double *, int, long long, const double *, int, long long,
                                  const double *, double *, int, long long, int);
} blas;

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static blas cublas;
static bool blas_loaded;

static void load_blas(void) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  void *library = NULL;
  for (size_t i = 0; !library && i < sizeof names / sizeof *names; ++i)
    library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return;
  void **slots[] = {(void **)&cublas.create,        (void **)&cublas.destroy,
                    (void **)&cublas.set_stream,    (void **)&cublas.set_math_mode,
                    (void **)&cublas.sgemm,         (void **)&cublas.dgemm,
                    (void **)&cublas.sgemm_batched, (void **)&cublas.dgemm_batched};
  const char *symbols[] = {
      "cublasCreate_v2",           "cublasDestroy_v2",         "cublasSetStream_v2",
      "cublasSetMathMode",         "cublasSgemm_v2",           "cublasDgemm_v2",
      "cublasSgemmStridedBatched", "cublasDgemmStridedBatched"};
  for (size_t i = 0; i < sizeof slots / sizeof *slots; ++i)
    if (!(*slots[i] = dlsym(library, symbols[i])))
      return;
  blas_loaded = true;
}

struct tgc_cuda {
  cublasHandle_t blas; /* created by the instance's first GEMM */
  uint64_t flags;      /* tgc_cuda_image.flags */
  int device;
  CUcontext context;
  CUmodule module;
  uint32_t num_functions;
  CUfunction *functions;
  CUstream stream;  /* the stream of the current call */
  CUstream chosen;  /* tgc_model_set_cuda_stream's; NULL: the legacy default stream */
  bool wait;        /* whether the current call waits for its work */
  CUresult failure; /* the first failure of the current call, or CUDA_SUCCESS */
  const char *failed_in;
};

/* Failures that are not the driver's (cuBLAS, sizes out of range) have this status. */
#define TGC_NOT_DRIVER (-1)

static void describe(CUresult status, const char *what, char *error, size_t capacity) {
  if (status == TGC_NOT_DRIVER) {
    snprintf(error, capacity, "%s failed", what);
    return;
  }
  const char *why = NULL;
  if (cu.error_string)
    cu.error_string(status, &why);
  snprintf(error, capacity, "%s failed: %s (CUDA error %d)", what, why ? why : "unknown error",
           status);
}

/* The device an instance runs on: TGC_CUDA_DEVICE when it is a number, else 0. */
static int chosen_device(void) {
  const char *value = getenv("TGC_CUDA_DEVICE");
  if (!value || !*value)
    return 0;
  char *end;
  long device = strtol(value, &end, 10);
  return *end || device < 0 || device >= TGC_MAX_DEVICES ? -1 : (int)device;
}

static CUcontext primary_context(int device, char *error, size_t capacity) {
  pthread_mutex_lock(&contexts_lock);
  CUcontext context = contexts[device];
  if (!context) {
    CUdevice handle;
    CUresult status = cu.device_get(&handle, device);
    if (status == CUDA_SUCCESS)
      status = cu.primary_retain(&context, handle);
    if (status != CUDA_SUCCESS) {
      describe(status, "retaining the device's primary context", error, capacity);
      context = NULL;
    }
    contexts[device] = context;
  }
  pthread_mutex_unlock(&contexts_lock);
  return context;
}

tgc_cuda *tgc_cuda_create(const tgc_cuda_image *image, char *error, size_t capacity) {
  pthread_once(&driver_once, load_driver);
  if (driver_error[0]) {
    snprintf(error, capacity, "%s", driver_error);
    return NULL;
  }
  /* A model whose work is all GEMMs has no kernels and an empty fatbin. */
  if (!image || (image->fatbin_size != 0) != (image->kernel_names_size != 0) ||
      (image->fatbin_size && !image->fatbin) ||
      (image->kernel_names_size && image->kernel_names[image->kernel_names_size - 1] != '\0')) {
    snprintf(error, capacity, "the model's GPU binary is malformed");
    return NULL;
  }
  int device = chosen_device(), count = 0;
  if (device < 0) {
    snprintf(error, capacity, "TGC_CUDA_DEVICE must be a device number");
    return NULL;
  }
  CUresult status = cu.device_count(&count);
  if (status != CUDA_SUCCESS) {
    describe(status, "counting CUDA devices", error, capacity);
    return NULL;
  }
  if (device >= count) {
    snprintf(error, capacity, "CUDA device %d does not exist (this machine has %d)", device, count);
    return NULL;
  }
  tgc_cuda *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(error, capacity, "out of memory");
    return NULL;
  }
  c->device = device;
  c->flags = image->flags;
  c->context = primary_context(device, error, capacity);
  if (!c->context) {
    free(c);
    return NULL;
  }
  for (uint64_t i = 0; i < image->kernel_names_size; ++i)
    c->num_functions += image->kernel_names[i] == '\0';
  c->functions = calloc(c->num_functions + 1, sizeof *c->functions);
  if (!c->functions) {
    snprintf(error, capacity, "out of memory");
    tgc_cuda_destroy(c);
    return NULL;
  }
  if (c->num_functions == 0)
    return c;
  cu.push(c->context);
  /* The driver JIT-compiles the PTX when the cubin is for another architecture. */
  status = cu.module_load(&c->module, image->fatbin);
  if (status != CUDA_SUCCESS) {
    describe(status, "loading the model's GPU code (compiled for another GPU architecture?)", error,
             capacity);
  } else {
    const char *name = image->kernel_names;
    for (uint32_t k = 0; k < c->num_functions && status == CUDA_SUCCESS; ++k) {
      status = cu.get_function(&c->functions[k], c->module, name);
      if (status != CUDA_SUCCESS)
        describe(status, name, error, capacity);
      name += strlen(name) + 1;
    }
  }
  CUcontext popped;
  cu.pop(&popped);
  if (status != CUDA_SUCCESS) {
    tgc_cuda_destroy(c);
    return NULL;
  }
  return c;
}

void tgc_cuda_destroy(tgc_cuda *c) {
  if (!c)
    return;
  if (c->module || c->blas) {
    cu.push(c->context);
    if (c->blas)
      cublas.destroy(c->blas);
    if (c->module)
      cu.module_unload(c->module);
    CUcontext popped;
    cu.pop(&popped);
  }
  free(c->functions);
  free(c);
}

int tgc_cuda_device(const tgc_cuda *c) { return c->device; }

static _Thread_local tgc_cuda *current;

void tgc_cuda_choose_stream(tgc_cuda *c, void *stream) { c->chosen = (CUstream)stream; }

tgc_cuda *tgc_cuda_enter_on(tgc_cuda *c, void *stream, bool wait) {
  tgc_cuda *previous = current;
  current = c;
  c->stream = (CUstream)stream;
  c->wait = wait;
  c->failure = CUDA_SUCCESS;
  c->failed_in = NULL;
  cu.push(c->context);
  return previous;
}

/* A call on a stream of the caller's queues its work there and returns; on the legacy
 * default stream it waits for it. */
tgc_cuda *tgc_cuda_enter(tgc_cuda *c) { return tgc_cuda_enter_on(c, c->chosen, c->chosen == NULL); }

void tgc_cuda_leave(tgc_cuda *previous) {
  CUcontext popped;
  if (current)
    cu.pop(&popped);
  current = previous;
}

tgc_cuda *tgc_cuda_current(void) { return current; }

static void record(tgc_cuda *c, CUresult status, const char *what) {
  if (status != CUDA_SUCCESS && c->failure == CUDA_SUCCESS) {
    c->failure = status;
    c->failed_in = what;
  }
}

int tgc_cuda_finish(tgc_cuda *c, char *error, size_t capacity) {
  if (c->wait)
    record(c, cu.stream_synchronize(c->stream), "waiting for the GPU");
  if (c->failure == CUDA_SUCCESS)
    return 0;
  describe(c->failure, c->failed_in, error, capacity);
  return 1;
}

void *tgc_cuda_alloc(tgc_cuda *c, size_t nbytes) {
  CUdeviceptr p = 0;
  CUresult status = cu.mem_alloc(&p, nbytes ? nbytes : 1);
  if (status != CUDA_SUCCESS) {
    record(c, status, "allocating GPU memory");
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

void tgc_cuda_free(void *p) {
  if (p)
    cu.mem_free((CUdeviceptr)(uintptr_t)p);
}

void tgc_cuda_free_on(int device, void *p) {
  if (!p || device < 0 || device >= TGC_MAX_DEVICES)
    return;
  pthread_mutex_lock(&contexts_lock);
  CUcontext context = contexts[device];
  pthread_mutex_unlock(&contexts_lock);
  if (!context)
    return;
  cu.push(context);
  cu.mem_free((CUdeviceptr)(uintptr_t)p);
  CUcontext popped;
  cu.pop(&popped);
}

int tgc_cuda_to_device(tgc_cuda *c, void *dst, const void *src, size_t nbytes) {
  CUresult status = nbytes ? cu.copy_htod((CUdeviceptr)(uintptr_t)dst, src, nbytes) : 0;
  record(c, status, "copying to the GPU");
  return status != CUDA_SUCCESS;
}

int tgc_cuda_to_host(tgc_cuda *c, void *dst, const void *src, size_t nbytes) {
  CUresult status = CUDA_SUCCESS;
  if (nbytes) {
    status = cu.copy_dtoh_async(dst, (CUdeviceptr)(uintptr_t)src, nbytes, c->stream);
    if (status == CUDA_SUCCESS)
      status = cu.stream_synchronize(c->stream);
  }
  record(c, status, "copying from the GPU");
  return status != CUDA_SUCCESS;
}

int tgc_cuda_on_device(tgc_cuda *c, void *dst, const void *src, size_t nbytes) {
  CUresult status = nbytes ? cu.copy_dtod_async((CUdeviceptr)(uintptr_t)dst,
                                                (CUdeviceptr)(uintptr_t)src, nbytes, c->stream)
                           : CUDA_SUCCESS;
  record(c, status, "copying on the GPU");
  return status != CUDA_SUCCESS;
}

/* A leading dimension cuBLAS accepts: at least the rows of the column-major matrix,
 * which only a matrix of one column can lack (its leading dimension is never used). */
static int blas_ld(int64_t ld, int64_t rows, int64_t cols) {
  if (cols <= 1 && ld < rows)
    ld = rows;
  return ld < 1 ? 1 : (int)ld;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= 0x7fffffff; }

void tgc_cuda_gemm(tgc_cuda *c, bool f64, int64_t batch, int64_t transA, int64_t transB,
                   const void *A, int64_t strideA, int64_t lda, const void *B, int64_t strideB,
                   int64_t ldb, void *C, int64_t strideC, int64_t ldc, int64_t M, int64_t N,
                   int64_t K, double alpha, double beta) {
  if (c->failure != CUDA_SUCCESS || batch <= 0 || M <= 0 || N <= 0)
    return;
  pthread_once(&blas_once, load_blas);
  if (!blas_loaded) {
    record(c, TGC_NOT_DRIVER, "loading cuBLAS (libcublas.so.13 or .12) for a matrix product");
    return;
  }
  if (!c->blas &&
      (cublas.create(&c->blas) != 0 ||
       cublas.set_math_mode(c->blas, c->flags & TGC_CUDA_ALLOW_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                    : CUBLAS_DEFAULT_MATH) != 0)) {
    c->blas = NULL;
    record(c, TGC_NOT_DRIVER, "creating a cuBLAS handle");
    return;
  }
  if (cublas.set_stream(c->blas, c->stream) != 0) {
    record(c, TGC_NOT_DRIVER, "setting cuBLAS's stream");
    return;
  }
  if (!fits_int(batch) || !fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(lda) ||
      !fits_int(ldb) || !fits_int(ldc)) {
    record(c, TGC_NOT_DRIVER, "a matrix product within cuBLAS's int sizes");
    return;
  }
  /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS multiplies B by
   * A, each read as stored, transposed where it is stored transposed. */
  int opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ldA = blas_ld(lda, transA ? M : K, transA ? K : M);
  int ldB = blas_ld(ldb, transB ? K : N, transB ? N : K);
  int ldC = blas_ld(ldc, N, M);
  cublasStatus_t status;
  if (f64) {
    double a = alpha, b = beta;
    status = batch == 1
                 ? cublas.dgemm(c->blas, opB, opA, (int)N, (int)M, (int)K, &a, B, ldB, A, ldA, &b,
                                C, ldC)
                 : cublas.dgemm_batched(c->blas, opB, opA, (int)N, (int)M, (int)K, &a, B, ldB,
                                        strideB, A, ldA, strideA, &b, C, ldC, strideC, (int)batch);
  } else {
    float a = (float)alpha, b = (float)beta;
    status = batch == 1
                 ? cublas.sgemm(c->blas, opB, opA, (int)N, (int)M, (int)K, &a, B, ldB, A, ldA, &b,
                                C, ldC)
                 : cublas.sgemm_batched(c->blas, opB, opA, (int)N, (int)M, (int)K, &a, B, ldB,
                                        strideB, A, ldA, strideA, &b, C, ldC, strideC, (int)batch);
  }
  if (status != 0)
    record(c, TGC_NOT_DRIVER, "a cuBLAS matrix product");
}

/*===--- Called by generated code ------------------------------------------===*/

void tgc_rt_cuda_launch(int32_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                        int64_t bz, int32_t shared, void **params) {
  tgc_cuda *c = current;
  if (!c || c->failure != CUDA_SUCCESS)
    return;
  /* An empty grid launches nothing (a loop over a dimension of size 0). */
  if (gx <= 0 || gy <= 0 || gz <= 0)
    return;
  if (kernel < 0 || (uint32_t)kernel >= c->num_functions || gx > 0x7fffffff || gy > 65535 ||
      gz > 65535 || bx <= 0 || by <= 0 || bz <= 0 || bx * by * bz > 1024) {
    record(c, TGC_NOT_DRIVER, "launching a kernel within CUDA's grid and block limits");
    return;
  }
  record(c,
         cu.launch(c->functions[kernel], (unsigned)gx, (unsigned)gy, (unsigned)gz, (unsigned)bx,
                   (unsigned)by, (unsigned)bz, (unsigned)shared, c->stream, params, NULL),
         "launching a kernel");
}

void tgc_rt_cuda_read(void *dst, const void *src, int64_t nbytes) {
  tgc_cuda *c = current;
  if (!c || c->failure != CUDA_SUCCESS || nbytes <= 0) {
    if (nbytes > 0)
      memset(dst, 0, (size_t)nbytes);
    return;
  }
  if (tgc_cuda_to_host(c, dst, src, (size_t)nbytes))
    memset(dst, 0, (size_t)nbytes);
}
