/* Internal.h - declarations shared by the runtime's C files (not installed).
 *
 * The files depend one way. Layers, highest first: a file uses functions of
 * its own and of files in lower layers only, never of a file in its own layer
 * or a higher one (test/Runtime/layering.py reads these lines and checks it).
 *
 *   layer 1: Model.c             instances: creation, queries, state access
 *   layer 2: Run.c Train.c       the forward and backward entry calls
 *   layer 3: Saved.c Buffer.c    saved values; a call's buffers, descriptors
 *   layer 4: Signature.c Gemm.c MemrefCopy.c
 *   layer 5: Expr.c Parallel.c   size expressions; the thread pool
 *   layer 6: Tensor.c Scratch.c  dtypes, sizes, storage, strided copies; temporaries
 *   layer 7: Message.c Cuda.c    bounded messages, tgc_fail; one call at a time;
 *                                the CUDA driver (dlopen) and a CUDA instance's device
 */
#ifndef TGC_LIB_RUNTIME_INTERNAL_H
#define TGC_LIB_RUNTIME_INTERNAL_H

#include "tgc/Runtime/tgc_runtime.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest rank the runtime accepts anywhere (PyTorch's own limit is 64). */
#define TGC_MAX_RANK 64
/* Alignment of state, outputs and scratch: a cache line and any vector. */
#define TGC_ALIGNMENT 64
/* Room for one error message. */
#define TGC_ERROR_CAPACITY 1024

/*===--- Signature (Signature.c) ------------------------------------------===*/

enum tgc_arg_kind {
  TGC_ARG_PARAMETER = 0,
  TGC_ARG_BUFFER = 1,
  TGC_ARG_CONSTANT = 2,
  TGC_ARG_USER_INPUT = 3,
};

enum tgc_result_kind {
  TGC_RESULT_USER_OUTPUT = 0,
  TGC_RESULT_BUFFER_MUTATION = 1,
  TGC_RESULT_USER_INPUT_MUTATION = 2,
  TGC_RESULT_GRADIENT = 3, /* backward entry only */
};

enum tgc_expr_opcode {
  TGC_EXPR_CONST = 0,
  TGC_EXPR_SYM = 1,
  TGC_EXPR_ADD = 2,
  TGC_EXPR_MUL = 3,
  TGC_EXPR_FLOORDIV = 4,
  TGC_EXPR_CEILDIV = 5,
  TGC_EXPR_MOD = 6,
  TGC_EXPR_NEG = 7,
};

/* The `target` of a result that overwrites nothing. */
#define TGC_NO_TARGET 0xFFFFFFFFu

typedef struct tgc_expr_op {
  uint8_t opcode;
  int64_t operand;
} tgc_expr_op;

/* A size expression: a postfix program over an i64 stack. */
typedef struct tgc_expr {
  uint32_t num_ops;
  tgc_expr_op *ops;
} tgc_expr;

typedef struct tgc_symbol_sig {
  char *name;
  int64_t min;
  int64_t max; /* INT64_MAX: unbounded */
} tgc_symbol_sig;

typedef struct tgc_arg_sig {
  uint8_t kind; /* enum tgc_arg_kind */
  DLDataType dtype;
  char *name;
  uint32_t rank;
  tgc_expr *sizes;
  uint64_t data_offset;
  uint64_t data_nbytes;
} tgc_arg_sig;

typedef struct tgc_result_sig {
  uint8_t kind; /* enum tgc_result_kind */
  DLDataType dtype;
  char *name;
  uint32_t target; /* arg index, or TGC_NO_TARGET */
  uint32_t rank;
  tgc_expr *sizes;
  /* The strides (in elements) of the layout a user output is handed out in (eager's,
   * docs/abi.md); num_strides 0: row-major, else num_strides == rank. */
  uint32_t num_strides;
  int64_t *strides;
} tgc_result_sig;

/* A value the forward keeps for the backward. */
typedef struct tgc_saved_sig {
  DLDataType dtype;
  uint32_t arg; /* parameter/constant read by reference, or TGC_NO_TARGET:
                   written by the forward entry */
  uint32_t rank;
  tgc_expr *sizes;
} tgc_saved_sig;

/* The decoded signature blob; owns every pointer in it. */
typedef struct tgc_signature {
  uint32_t num_symbols;
  tgc_symbol_sig *symbols;
  uint32_t num_args;
  tgc_arg_sig *args;
  uint32_t num_results;
  tgc_result_sig *results;
  uint64_t arena_bytes; /* the forward entry's arena (its last argument) */
  /* The backward entry (trainable models only). */
  bool has_backward;
  uint32_t num_saved;
  tgc_saved_sig *saved;
  uint32_t num_tangents;
  uint32_t *tangents; /* user output index of each tangent */
  uint32_t num_backward_results;
  tgc_result_sig *backward_results;
  uint64_t backward_arena_bytes;
} tgc_signature;

/* Decodes `blob` into *sig with bounds checks on every read. Returns 0, or
 * non-zero with a message in `error` (and *sig left empty). Only the blob's
 * syntax is checked here; Model.c checks what the fields mean. */
int tgc_signature_decode(const uint8_t *blob, uint64_t size, tgc_signature *sig, char *error,
                         size_t error_capacity);

/* Frees everything tgc_signature_decode allocated; *sig becomes empty. */
void tgc_signature_free(tgc_signature *sig);

/*===--- Size expressions (Expr.c) ----------------------------------------===*/

enum tgc_eval_status {
  TGC_EVAL_OK = 0,
  TGC_EVAL_DIVISION_BY_ZERO,
  TGC_EVAL_OVERFLOW,
  TGC_EVAL_UNBOUND_SYMBOL,
};

/* Checks that `e` is a well-formed program: known opcodes, symbol operands
 * below num_symbols, no stack underflow, exactly one value left. Returns 0,
 * or non-zero with the reason in `why`. */
int tgc_expr_check(const tgc_expr *e, uint32_t num_symbols, char *why, size_t why_capacity);

/* Evaluates a checked `e`; symbol i has value values[i] when bound[i]. */
enum tgc_eval_status tgc_expr_eval(const tgc_expr *e, const int64_t *values, const bool *bound,
                                   int64_t *result);

/* A size expression of the form coefficient * symbol + constant. */
typedef struct tgc_affine {
  bool is_affine;
  int32_t symbol; /* -1: a constant */
  int64_t coefficient;
  int64_t constant;
} tgc_affine;

/* Recognizes checked expressions that are affine in at most one symbol, so
 * that a symbol can be solved for from an input dimension. */
tgc_affine tgc_expr_affine(const tgc_expr *e);

/* True if `e` mentions symbol `symbol`. */
bool tgc_expr_uses_symbol(const tgc_expr *e, uint32_t symbol);

/* Writes a checked `e` in infix form ("2*batch + 1") for messages. */
void tgc_expr_format(const tgc_expr *e, const tgc_symbol_sig *symbols, char *buf, size_t capacity);

/* Python floor division and modulo, and ceiling division, with overflow and
 * division-by-zero reported rather than trapped. */
enum tgc_eval_status tgc_floordiv(int64_t a, int64_t b, int64_t *result);
enum tgc_eval_status tgc_ceildiv(int64_t a, int64_t b, int64_t *result);
enum tgc_eval_status tgc_mod(int64_t a, int64_t b, int64_t *result);

/*===--- Threads (Parallel.c) --------------------------------------------===*/

/* The thread count of a model instance that has not set one: TGC_NUM_THREADS
 * when it is a positive integer, else the CPUs this process may run on. */
int tgc_threads_default(void);

/* Calls made on this thread until tgc_threads_leave use `threads` threads;
 * returns the previous count, for tgc_threads_leave. */
int tgc_threads_enter(int threads);
void tgc_threads_leave(int previous);

/* The thread count of the model call running on this thread (1 outside one). */
int tgc_threads_current(void);

/*===--- Tensors and memory (Tensor.c) ------------------------------------===*/

/* Writes a dtype as PyTorch names it ("float32", "int64", "bool"). */
const char *tgc_dtype_name(DLDataType dtype, char *buf, size_t capacity);

/* Bytes per element, or 0 for dtypes the runtime cannot store (lanes != 1,
 * bits not a positive multiple of 8). */
size_t tgc_dtype_size(DLDataType dtype);

bool tgc_dtype_equal(DLDataType a, DLDataType b);

/* Product of sizes times elem_size, false on overflow or a negative size. */
bool tgc_nbytes(const int64_t *sizes, uint32_t rank, size_t elem_size, size_t *nbytes);

/* The bytes a tensor of `sizes` with non-negative `strides` (in elements) spans, from
 * element 0 to its last element (0 when it has none); false on overflow or a negative
 * size or stride. */
bool tgc_strided_nbytes(const int64_t *sizes, const int64_t *strides, uint32_t rank,
                        size_t elem_size, size_t *nbytes);

/* The allocation functions of generated code's temporaries and of the tensors
 * a call returns (Scratch.c): large blocks are cached by size and reused by the
 * next call. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/* A model instance holds the scratch cache from its creation to its
 * destruction; releasing the last hold frees the blocks the cache keeps. */
void tgc_scratch_retain(void);
void tgc_scratch_release(void);

/* TGC_ALIGNMENT-aligned allocation of at least one cache line; free() it. */
void *tgc_aligned_alloc(size_t nbytes);

/* Fills strides[0..rank) with the row-major strides of sizes. */
void tgc_contiguous_strides(const int64_t *sizes, uint32_t rank, int64_t *strides);

/* True if `t` is row-major contiguous (NULL strides, or strides that agree
 * with row-major wherever the size is not 1). */
bool tgc_dltensor_is_contiguous(const DLTensor *t);

/* Address of element 0 of `t` (data + byte_offset). */
char *tgc_dltensor_base(const DLTensor *t);

/* The memory `t`'s elements (elem_size bytes each) reach: [*lo, *hi) as
 * addresses, empty (*lo == *hi) when it has no elements. False when a stride
 * times a size, their sum or the address overflows: no tensor in memory has
 * such strides. The shape must have been checked (sizes >= 0). */
bool tgc_dltensor_extent(const DLTensor *t, size_t elem_size, uintptr_t *lo, uintptr_t *hi);

/* True when two elements of `t` may be one location in memory: a stride 0 (or
 * strides that do not nest) in a dimension of size > 1. False for any layout
 * in which every element has its own location, and for empty tensors. */
bool tgc_dltensor_may_overlap_itself(const DLTensor *t);

/* Copies an array of `sizes` from src to dst, each with its own strides in
 * elements (NULL: row-major). Contiguous inner runs are copied with memmove. */
void tgc_copy_strided(char *dst, const int64_t *dst_strides, const char *src,
                      const int64_t *src_strides, const int64_t *sizes, uint32_t rank,
                      size_t elem_size);

/*===--- CUDA (Cuda.c) ----------------------------------------------------===*/

/* A CUDA instance's device side: context, module, kernels, stream. */
typedef struct tgc_cuda tgc_cuda;

/* Loads the driver (once per process) and the model's GPU code on the device
 * (TGC_CUDA_DEVICE, default 0). NULL with the reason in `error` when this machine has
 * no driver or device, or the code does not load. */
tgc_cuda *tgc_cuda_create(const tgc_cuda_image *image, char *error, size_t capacity);
void tgc_cuda_destroy(tgc_cuda *c);
/* The device number an instance runs on. */
int tgc_cuda_device(const tgc_cuda *c);

/* The calls on this thread until tgc_cuda_leave run on `c` (its context is current):
 * generated code's launches, read-backs and temporaries. Returns the previous one. */
tgc_cuda *tgc_cuda_enter(tgc_cuda *c);
/* tgc_cuda_enter for one call on `stream`, which waits for its work when `wait`. */
tgc_cuda *tgc_cuda_enter_on(tgc_cuda *c, void *stream, bool wait);
/* The stream the instance's calls run on (tgc_model_set_cuda_stream): NULL, the legacy
 * default stream, whose calls wait for their work; else the caller's, whose do not. */
void tgc_cuda_choose_stream(tgc_cuda *c, void *stream);
void tgc_cuda_leave(tgc_cuda *previous);
/* The instance of the call running on this thread, or NULL. */
tgc_cuda *tgc_cuda_current(void);
/* Waits for the call's work (unless the call does not wait); 0, or 1 with the first
 * failure since tgc_cuda_enter. */
int tgc_cuda_finish(tgc_cuda *c, char *error, size_t capacity);

/* Device memory (in an entered call); NULL (recorded as the call's failure) when it
 * cannot be had. tgc_cuda_free frees in the current context, tgc_cuda_free_on in that
 * of device `device` (the deleter of a tensor handed out, which may outlive it). */
void *tgc_cuda_alloc(tgc_cuda *c, size_t nbytes);
void tgc_cuda_free(void *p);
void tgc_cuda_free_on(int device, void *p);
/* Copies (in an entered call); 0, or 1 recorded as the call's failure. to_host waits. */
int tgc_cuda_to_device(tgc_cuda *c, void *dst, const void *src, size_t nbytes);
int tgc_cuda_to_host(tgc_cuda *c, void *dst, const void *src, size_t nbytes);
int tgc_cuda_on_device(tgc_cuda *c, void *dst, const void *src, size_t nbytes);

/* C = alpha * op(A) op(B) + beta * C on the device with cuBLAS (loaded with dlopen on
 * first use), as tgc_rt_gemm_batched_*: row-major, strides in elements, `batch`
 * products (stride 0 broadcasts). A failure is the call's. */
void tgc_cuda_gemm(tgc_cuda *c, bool f64, int64_t batch, int64_t transA, int64_t transB,
                   const void *A, int64_t strideA, int64_t lda, const void *B, int64_t strideB,
                   int64_t ldb, void *C, int64_t strideC, int64_t ldc, int64_t M, int64_t N,
                   int64_t K, double alpha, double beta);

/*===--- Messages (Message.c) ---------------------------------------------===*/

/* A bounded string being appended to; output past the capacity is dropped. */
typedef struct tgc_message {
  char *buf;
  size_t capacity;
  size_t length;
} tgc_message;

void tgc_message_init(tgc_message *msg, char *buf, size_t capacity);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
void tgc_message_append(tgc_message *msg, const char *format, ...);
void tgc_message_append_shape(tgc_message *msg, const int64_t *sizes, uint32_t rank);

/* Claims `m` for one call (0), or refuses the call (1) while another call holds it: an
 * instance serves one call at a time, and a second thread's call at once is refused
 * rather than racing it (docs/abi.md). A refused call's message is kept for its own
 * thread (tgc_model_last_error), since m->error belongs to the call that holds `m`. */
int tgc_model_claim(tgc_model *m);
/* Ends the call that claimed `m`. */
void tgc_model_release(tgc_model *m);
/* The message of this thread's last call on `m` if it was refused, else NULL. */
const char *tgc_model_refusal(const tgc_model *m);

/* Records a failure of a call on `m`; returns 1 for `return tgc_fail(...)`. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
int tgc_fail(tgc_model *m, const char *format, ...);

/*===--- Instances --------------------------------------------------------===*/

/* One parameter, buffer or constant of an instance. */
typedef struct tgc_state_slot {
  uint32_t arg;   /* its signature argument */
  int64_t *sizes; /* its constant shape, arg.rank entries */
  size_t nbytes;
  void *data;  /* TGC_ALIGNMENT-aligned */
  void *spare; /* for buffers a run rewrites: the next value is written
                  here and then swapped with data */
} tgc_state_slot;

/* How a symbol gets its value: from dimension `dim` of user input `input`,
 * whose size is coefficient * symbol + constant. input < 0: not needed. */
typedef struct tgc_binder {
  int32_t input;
  uint32_t dim;
  int64_t coefficient;
  int64_t constant;
} tgc_binder;

/* Buffers for one tgc_model_run, allocated once per instance since an
 * instance runs one call at a time. */
typedef struct tgc_run_scratch {
  void **packed_args;        /* the forward entry's descriptor pointers */
  int64_t *descriptor_words; /* all descriptors, back to back */
  int64_t *result_sizes;     /* evaluated result shapes, back to back */
  uint32_t *result_sizes_at; /* where each result's shape starts */
  size_t *result_nbytes;
  void **result_data;               /* where the entry writes each result */
  DLManagedTensor **result_managed; /* user outputs not yet handed out */
  void **input_data;                /* what the entry reads for each input */
  void **input_packed;              /* contiguous copies made for this run */
} tgc_run_scratch;

/* What a trainable instance keeps between the forward and the backward, and
 * the scratch of a backward call. Arrays are indexed by saved value unless
 * noted. */
typedef struct tgc_train_state {
  /* Written by each forward call (run and run_train). */
  void **call_data;    /* buffers of copied values; NULL: by reference */
  int64_t *call_sizes; /* evaluated shapes, back to back */
  uint32_t *sizes_at;  /* where each saved value's shape starts */
  size_t *call_nbytes;
  /* Pending for the backward after a successful run_train. */
  bool pending;
  void **pending_data;
  int64_t *pending_sizes;
  int64_t *pending_symbols; /* the forward's symbol values */
  size_t saved_bytes;       /* of the last run_train */
  /* The caller's tensors of inputs the backward mutates (per user input;
   * shape and strides copied into pending_input_dims). */
  DLTensor *pending_inputs;
  int64_t *pending_input_dims; /* 2 * TGC_MAX_RANK words per user input */
  /* Index tables. */
  uint32_t num_gradients;
  uint32_t *gradient_results; /* gradient -> backward result */
  int32_t *output_tangent;    /* user output -> tangent, or -1 */
  int32_t *input_mutation;    /* user input -> backward result, or -1 */
  /* Scratch of one backward call. */
  void **packed_args;
  int64_t *descriptor_words;
  int64_t *result_sizes;
  uint32_t *result_sizes_at;
  size_t *result_nbytes;
  void **result_data;
  DLManagedTensor **result_managed;
  void **tangent_data;
  void **tangent_packed;
} tgc_train_state;

struct tgc_model {
  const tgc_model_desc *desc;
  tgc_signature sig;
  uint32_t num_inputs;
  uint32_t *input_args;    /* user input -> argument */
  int32_t *input_mutation; /* user input -> result that rewrites it, or -1 */
  uint32_t num_outputs;
  uint32_t *output_results; /* user output -> result */
  uint32_t num_state;
  tgc_state_slot *state;
  int32_t *arg_state;     /* argument -> state slot, or -1 */
  int32_t *arg_input;     /* argument -> user input, or -1 */
  tgc_binder *binders;    /* one per symbol */
  int64_t *symbol_values; /* bound by the current run */
  bool *symbol_bound;
  tgc_run_scratch run;
  tgc_train_state train; /* all zero unless sig.has_backward */
  /* The entries' temporaries (TGC_ALIGNMENT): at least the larger entry's static
   * arena_bytes; an entry with temporaries of dynamic size stores the bytes it
   * needed into arena_request, and the arena grows to that after the call. */
  void *arena;
  uint64_t arena_capacity;
  int64_t arena_request;
  int num_threads; /* threads of this instance's calls */
  tgc_cuda *cuda;  /* a CUDA model's device side; NULL on the CPU. State, the arena,
                      inputs, results and saved values are then device memory. */
  /* A call holds the instance (tgc_model_claim, the only code that touches it, with
   * <stdatomic.h>; `_Atomic` rather than atomic_int keeps this header C++'s too). */
  _Atomic int busy;
  char error[TGC_ERROR_CAPACITY];
};

/*===--- Buffers and descriptors of a call (Buffer.c) ---------------------===*/

/* Words of a rank-r memref descriptor: allocated, aligned, offset, sizes,
 * strides. */
size_t tgc_descriptor_words(uint32_t rank);

/* Writes a contiguous memref descriptor for `data` at `words`; returns the
 * word after it. */
int64_t *tgc_write_descriptor(int64_t *words, void *data, const int64_t *sizes, uint32_t rank);

/* Where an entry writes result `res` (evaluated `sizes`, `nbytes`): the
 * target's spare buffer for a buffer mutation, scratch for a user input
 * mutation, else a new tensor in *managed (user outputs, gradients).
 * Returns 1 if out of memory. */
int tgc_result_buffer(tgc_model *m, const tgc_result_sig *res, const int64_t *sizes, size_t nbytes,
                      void **data, DLManagedTensor **managed);

/* Moves the row-major elements the entry wrote into `managed` (a user output with a
 * layout, res->strides) to new storage in that layout, which `managed` then has.
 * Returns 1 if out of memory (`managed` is unchanged). */
int tgc_result_relayout(const tgc_result_sig *res, DLManagedTensor *managed);

/* tgc_result_relayout of a CUDA instance's output (through host memory). */
int tgc_result_relayout_cuda(tgc_model *m, const tgc_result_sig *res, DLManagedTensor *managed);

/* Frees what tgc_result_buffer allocated and was not handed out. */
void tgc_result_buffer_free(tgc_model *m, const tgc_result_sig *res, void **data,
                            DLManagedTensor **managed);

/* A new DLManagedTensor owning TGC_ALIGNMENT-aligned storage (a scratch
 * block) for a contiguous CPU tensor; its deleter frees everything. NULL if
 * out of memory. */
DLManagedTensor *tgc_managed_tensor_new(DLDataType dtype, const int64_t *sizes, uint32_t rank,
                                        size_t nbytes);

/* tgc_managed_tensor_new on the instance's device: for a CUDA instance (in a call), a
 * kDLCUDA tensor in device memory, freed in its device's context by its deleter. */
DLManagedTensor *tgc_managed_tensor_on_device(tgc_model *m, DLDataType dtype, const int64_t *sizes,
                                              uint32_t rank, size_t nbytes);

/* Applies a mutation result an entry wrote at `data` (user outputs and
 * gradients: nothing): swaps it in as the buffer's value, or copies it into
 * the caller's tensor `input` through its strides. */
void tgc_apply_mutation(tgc_model *m, const tgc_result_sig *res, void *data, const DLTensor *input);

/* Sets *data to t's elements as generated code reads them: t's own memory
 * when contiguous and element-aligned, else a packed copy also stored in
 * *packed (the caller frees it). Returns 1 if out of memory. */
int tgc_contiguous_data(const DLTensor *t, void **data, void **packed);

/* Whether `t` is on the instance's device (kDLCPU, or kDLCUDA on its CUDA device);
 * appends why not to `msg` and returns 1. */
int tgc_check_device(const tgc_model *m, const DLTensor *t, tgc_message *msg);
/* For a CUDA instance: whether `t` (dtype checked) is contiguous and element-aligned, as
 * generated code reads it (no packing on the device yet); else as tgc_check_device. */
int tgc_check_cuda_layout(const tgc_model *m, const DLTensor *t, tgc_message *msg);

/* For a CUDA instance in a call: waits for the call's work and fails the call (1, with
 * `model '<name>' failed on the GPU: ...`) if a launch, allocation or copy failed. 0 on
 * the CPU. */
int tgc_cuda_call_failed(tgc_model *m);

/* Writes the descriptors of the instance's arena (rank 1, its capacity) and of
 * its request (rank 0) at `words`, pointed at by slot[0] and slot[1]. */
void tgc_arena_descriptors(tgc_model *m, void **slot, int64_t *words);

/* Grows the arena to what the last call requested; keeps the old one if that
 * allocation fails (the entry then allocates per call). */
void tgc_arena_grow(tgc_model *m);

/*===--- Saved values (Saved.c) -------------------------------------------===*/

/* Drops the values pending for a backward. */
void tgc_saved_drop_pending(tgc_model *m);

/* Evaluates the saved values' shapes for the current forward call and
 * allocates buffers for those the forward writes. */
int tgc_saved_prepare_call(tgc_model *m);

/* Frees the buffers of the current forward call that were not kept. */
void tgc_saved_release_call(tgc_model *m);

/* After a successful forward call: keeps its saved values pending for the
 * backward (and remembers the inputs the backward mutates). */
void tgc_saved_keep_call(tgc_model *m, DLTensor *const *inputs);

/*===--- Entry calls (Run.c, Train.c) -------------------------------------===*/

/* Allocates m->run for the instance's signature. */
int tgc_run_scratch_init(tgc_model *m);
void tgc_run_scratch_free(tgc_model *m);

/* Allocates m->train's tables and scratch; 0 on success. */
int tgc_train_init(tgc_model *m);
void tgc_train_free(tgc_model *m);

/*===--- GEMM libraries and fallback (Gemm.c) ----------------------------===*/

/* Keeps OpenBLAS single-threaded (GEMMs run on the runtime's pool) and loads
 * oneDNN for f32 products when it can (once per process). */
void tgc_gemm_init(void);

/* The library larger f32 products go to after tgc_gemm_init: "onednn" or
 * "openblas". */
const char *tgc_gemm_f32_library(void);
/* The multiply-adds from which an f32 product goes to oneDNN (-1 without it). */
double tgc_gemm_f32_onednn_min_work(void);

/* The plain-loop kernels behind tgc_rt_gemm_* for sizes beyond BLAS ints;
 * exposed for tests. */
void tgc_gemm_loop_f32(int64_t transA, int64_t transB, const float *A, int64_t lda, const float *B,
                       int64_t ldb, float *C, int64_t ldc, int64_t M, int64_t N, int64_t K,
                       float alpha, float beta);
void tgc_gemm_loop_f64(int64_t transA, int64_t transB, const double *A, int64_t lda,
                       const double *B, int64_t ldb, double *C, int64_t ldc, int64_t M, int64_t N,
                       int64_t K, double alpha, double beta);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TGC_LIB_RUNTIME_INTERNAL_H */
