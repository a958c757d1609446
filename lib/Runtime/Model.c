/* Model.c - Instance creation from the blobs, queries, state access. */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(void *) == 8, "the tgc ABI assumes 64-bit pointers");

/* Messages of failed creations, which have no instance to hold them. */
static _Thread_local char create_error[TGC_ERROR_CAPACITY];

static void free_model(tgc_model *m);

/*===--- Checking a decoded signature -------------------------------------===*/

/* Context for the checks done at creation; messages go to `error`. */
typedef struct checker {
  tgc_model *m;
  tgc_message *error;
} checker;

static const char *arg_kind_name(uint8_t kind) {
  switch (kind) {
  case TGC_ARG_PARAMETER:
    return "parameter";
  case TGC_ARG_BUFFER:
    return "buffer";
  case TGC_ARG_CONSTANT:
    return "constant";
  default:
    return "input";
  }
}

static const char *result_kind_name(uint8_t kind) {
  switch (kind) {
  case TGC_RESULT_USER_OUTPUT:
    return "output";
  case TGC_RESULT_BUFFER_MUTATION:
    return "new value of buffer";
  case TGC_RESULT_GRADIENT:
    return "gradient of";
  default:
    return "new value of input";
  }
}

static int check_fail(checker *c, const char *what, const char *name, const char *why) {
  tgc_message_append(c->error, "invalid signature: %s '%s': %s", what, name, why);
  return 1;
}

static int check_sizes(checker *c, const char *what, const char *name, const tgc_expr *sizes,
                       uint32_t rank) {
  char why[128];
  for (uint32_t d = 0; d < rank; ++d) {
    if (tgc_expr_check(&sizes[d], c->m->sig.num_symbols, why, sizeof why))
      return check_fail(c, what, name, why);
  }
  return 0;
}

static int check_dtype(checker *c, const char *what, const char *name, DLDataType dtype) {
  if (tgc_dtype_size(dtype) != 0)
    return 0;
  char dtype_name[64], why[128];
  snprintf(why, sizeof why, "unsupported dtype %s",
           tgc_dtype_name(dtype, dtype_name, sizeof dtype_name));
  return check_fail(c, what, name, why);
}

static int check_symbols(checker *c) {
  for (uint32_t i = 0; i < c->m->sig.num_symbols; ++i) {
    const tgc_symbol_sig *s = &c->m->sig.symbols[i];
    if (s->min > s->max)
      return check_fail(c, "symbol", s->name, "its minimum exceeds its maximum");
  }
  return 0;
}

static int check_arg(checker *c, const tgc_arg_sig *a) {
  const char *what = arg_kind_name(a->kind);
  if (a->kind > TGC_ARG_USER_INPUT)
    return check_fail(c, "argument", a->name, "unknown kind");
  if (check_dtype(c, what, a->name, a->dtype))
    return 1;
  return check_sizes(c, what, a->name, a->sizes, a->rank);
}

/* A result that rewrites an argument must match it in kind and dtype, and
 * each argument may be rewritten once. */
static int check_result_target(checker *c, const tgc_result_sig *r, const bool *rewritten) {
  const char *what = result_kind_name(r->kind);
  if (r->num_strides != 0) {
    if (r->kind != TGC_RESULT_USER_OUTPUT)
      return check_fail(c, what, r->name, "only user outputs have a layout");
    if (r->num_strides != r->rank)
      return check_fail(c, what, r->name, "its layout has a stride count other than its rank");
    for (uint32_t d = 0; d < r->rank; ++d)
      if (r->strides[d] < 0)
        return check_fail(c, what, r->name, "its layout has a negative stride");
  }
  if (r->kind == TGC_RESULT_USER_OUTPUT)
    return 0;
  if (r->target >= c->m->sig.num_args)
    return check_fail(c, what, r->name, "target argument out of range");
  const tgc_arg_sig *target = &c->m->sig.args[r->target];
  bool kind_ok = r->kind == TGC_RESULT_BUFFER_MUTATION ? target->kind == TGC_ARG_BUFFER
                 : r->kind == TGC_RESULT_USER_INPUT_MUTATION
                     ? target->kind == TGC_ARG_USER_INPUT
                     : target->kind == TGC_ARG_PARAMETER || target->kind == TGC_ARG_USER_INPUT;
  if (!kind_ok)
    return check_fail(c, what, r->name, "target argument has the wrong kind");
  if (!tgc_dtype_equal(target->dtype, r->dtype) || target->rank != r->rank)
    return check_fail(c, what, r->name, "dtype or rank differs from the target argument");
  if (rewritten[r->target])
    return check_fail(c, what, r->name, "target is rewritten twice");
  return 0;
}

static int check_results(checker *c) {
  tgc_signature *sig = &c->m->sig;
  bool *rewritten = calloc(sig->num_args + 1, sizeof *rewritten);
  if (!rewritten)
    return check_fail(c, "signature", "", "out of memory");
  int failed = 0;
  for (uint32_t i = 0; i < sig->num_results && !failed; ++i) {
    const tgc_result_sig *r = &sig->results[i];
    const char *what = result_kind_name(r->kind);
    if (r->kind > TGC_RESULT_USER_INPUT_MUTATION)
      failed = check_fail(c, "result", r->name, "unknown kind for a result of the forward entry");
    else
      failed = check_dtype(c, what, r->name, r->dtype) ||
               check_sizes(c, what, r->name, r->sizes, r->rank) ||
               check_result_target(c, r, rewritten);
    if (!failed && r->kind != TGC_RESULT_USER_OUTPUT)
      rewritten[r->target] = true;
  }
  free(rewritten);
  return failed;
}

/* Saved values, tangents and backward results of a trainable model: the
 * same checks as the forward's, plus what each refers to. */
static int check_backward(checker *c) {
  tgc_signature *sig = &c->m->sig;
  if ((c->m->desc->backward != NULL) != sig->has_backward)
    return check_fail(c, "signature", c->m->desc->name,
                      sig->has_backward ? "it has a backward but the descriptor has no "
                                          "backward entry"
                                        : "the descriptor has a backward entry but the "
                                          "signature has no backward");
  char name[32];
  for (uint32_t i = 0; i < sig->num_saved; ++i) {
    const tgc_saved_sig *s = &sig->saved[i];
    snprintf(name, sizeof name, "#%" PRIu32, i);
    if (check_dtype(c, "saved value", name, s->dtype) ||
        check_sizes(c, "saved value", name, s->sizes, s->rank))
      return 1;
    if (s->arg == TGC_NO_TARGET)
      continue;
    if (s->arg >= sig->num_args)
      return check_fail(c, "saved value", name, "argument out of range");
    const tgc_arg_sig *a = &sig->args[s->arg];
    if (a->kind != TGC_ARG_PARAMETER && a->kind != TGC_ARG_CONSTANT)
      return check_fail(c, "saved value", name,
                        "only parameters and constants are saved by "
                        "reference");
    if (!tgc_dtype_equal(a->dtype, s->dtype) || a->rank != s->rank)
      return check_fail(c, "saved value", name,
                        "dtype or rank differs from the argument it refers "
                        "to");
  }
  uint32_t num_outputs = 0;
  for (uint32_t i = 0; i < sig->num_results; ++i)
    num_outputs += sig->results[i].kind == TGC_RESULT_USER_OUTPUT;
  for (uint32_t i = 0; i < sig->num_tangents; ++i) {
    snprintf(name, sizeof name, "#%" PRIu32, i);
    if (sig->tangents[i] >= num_outputs)
      return check_fail(c, "tangent", name, "user output out of range");
    if (i > 0 && sig->tangents[i] <= sig->tangents[i - 1])
      return check_fail(c, "tangent", name, "user outputs are not in increasing order");
  }
  bool *rewritten = calloc(2 * (size_t)sig->num_args + 1, sizeof *rewritten);
  if (!rewritten)
    return check_fail(c, "signature", "", "out of memory");
  bool *differentiated = rewritten + sig->num_args;
  int failed = 0;
  for (uint32_t i = 0; i < sig->num_backward_results && !failed; ++i) {
    const tgc_result_sig *r = &sig->backward_results[i];
    bool *seen = r->kind == TGC_RESULT_GRADIENT ? differentiated : rewritten;
    if (r->kind == TGC_RESULT_USER_OUTPUT || r->kind > TGC_RESULT_GRADIENT)
      failed = check_fail(c, "result", r->name, "unknown kind for a result of the backward entry");
    else
      failed = check_dtype(c, result_kind_name(r->kind), r->name, r->dtype) ||
               check_sizes(c, result_kind_name(r->kind), r->name, r->sizes, r->rank) ||
               check_result_target(c, r, seen);
    if (!failed)
      seen[r->target] = true;
  }
  free(rewritten);
  return failed;
}

/* Names are how callers address inputs and state, so they must be unique
 * within each group. */
static int check_unique_names(checker *c) {
  tgc_signature *sig = &c->m->sig;
  for (uint32_t i = 0; i < sig->num_args; ++i) {
    bool input = sig->args[i].kind == TGC_ARG_USER_INPUT;
    for (uint32_t j = 0; j < i; ++j) {
      if ((sig->args[j].kind == TGC_ARG_USER_INPUT) != input)
        continue;
      if (strcmp(sig->args[i].name, sig->args[j].name) == 0)
        return check_fail(c, arg_kind_name(sig->args[i].kind), sig->args[i].name,
                          "the name is used twice");
    }
  }
  return 0;
}

/*===--- Symbol binders ---------------------------------------------------===*/

/* Picks, for symbol s, the first input dimension that is exactly s, else
 * the first one affine in s alone (a*s + b); returns false if none is. */
static bool find_binder(tgc_model *m, uint32_t s, tgc_binder *binder) {
  bool found = false;
  for (uint32_t i = 0; i < m->num_inputs; ++i) {
    const tgc_arg_sig *a = &m->sig.args[m->input_args[i]];
    for (uint32_t d = 0; d < a->rank; ++d) {
      tgc_affine f = tgc_expr_affine(&a->sizes[d]);
      if (!f.is_affine || f.symbol != (int32_t)s)
        continue;
      bool exact = f.coefficient == 1 && f.constant == 0;
      if (found && !exact)
        continue;
      binder->input = (int32_t)i;
      binder->dim = d;
      binder->coefficient = f.coefficient;
      binder->constant = f.constant;
      if (exact)
        return true;
      found = true;
    }
  }
  return found;
}

/* Where a symbol appears outside the user inputs' own binders, for the
 * message when it cannot be bound. */
static const char *symbol_user(const tgc_model *m, uint32_t s) {
  for (uint32_t i = 0; i < m->sig.num_args; ++i) {
    const tgc_arg_sig *a = &m->sig.args[i];
    for (uint32_t d = 0; d < a->rank; ++d)
      if (tgc_expr_uses_symbol(&a->sizes[d], s))
        return a->name;
  }
  for (uint32_t i = 0; i < m->sig.num_results; ++i) {
    const tgc_result_sig *r = &m->sig.results[i];
    for (uint32_t d = 0; d < r->rank; ++d)
      if (tgc_expr_uses_symbol(&r->sizes[d], s))
        return r->name;
  }
  for (uint32_t i = 0; i < m->sig.num_saved; ++i) {
    const tgc_saved_sig *v = &m->sig.saved[i];
    for (uint32_t d = 0; d < v->rank; ++d)
      if (tgc_expr_uses_symbol(&v->sizes[d], s))
        return "saved value";
  }
  for (uint32_t i = 0; i < m->sig.num_backward_results; ++i) {
    const tgc_result_sig *r = &m->sig.backward_results[i];
    for (uint32_t d = 0; d < r->rank; ++d)
      if (tgc_expr_uses_symbol(&r->sizes[d], s))
        return r->name;
  }
  return NULL;
}

static int find_binders(checker *c) {
  tgc_model *m = c->m;
  for (uint32_t s = 0; s < m->sig.num_symbols; ++s) {
    m->binders[s].input = -1;
    const char *user = symbol_user(m, s);
    if (!user || find_binder(m, s, &m->binders[s]))
      continue;
    tgc_message_append(c->error,
                       "invalid signature: symbol '%s' (used by '%s') is not "
                       "a size of any input dimension, so it cannot be bound",
                       m->sig.symbols[s].name, user);
    return 1;
  }
  return 0;
}

/*===--- Instance layout --------------------------------------------------===*/

/* Fills the index tables between arguments, inputs, outputs and state. */
static int build_indices(checker *c) {
  tgc_model *m = c->m;
  tgc_signature *sig = &m->sig;
  size_t n_args = sig->num_args + 1, n_results = sig->num_results + 1;
  m->input_args = calloc(n_args, sizeof *m->input_args);
  m->input_mutation = calloc(n_args, sizeof *m->input_mutation);
  m->state = calloc(n_args, sizeof *m->state);
  m->arg_state = calloc(n_args, sizeof *m->arg_state);
  m->arg_input = calloc(n_args, sizeof *m->arg_input);
  m->output_results = calloc(n_results, sizeof *m->output_results);
  m->binders = calloc(sig->num_symbols + 1, sizeof *m->binders);
  m->symbol_values = calloc(sig->num_symbols + 1, sizeof *m->symbol_values);
  m->symbol_bound = calloc(sig->num_symbols + 1, sizeof *m->symbol_bound);
  if (!m->input_args || !m->input_mutation || !m->state || !m->arg_state || !m->arg_input ||
      !m->output_results || !m->binders || !m->symbol_values || !m->symbol_bound)
    return check_fail(c, "signature", "", "out of memory");
  for (uint32_t i = 0; i < sig->num_args; ++i) {
    m->arg_state[i] = m->arg_input[i] = -1;
    if (sig->args[i].kind == TGC_ARG_USER_INPUT) {
      m->arg_input[i] = (int32_t)m->num_inputs;
      m->input_mutation[m->num_inputs] = -1;
      m->input_args[m->num_inputs++] = i;
    } else {
      m->arg_state[i] = (int32_t)m->num_state;
      m->state[m->num_state++].arg = i;
    }
  }
  for (uint32_t i = 0; i < sig->num_results; ++i) {
    const tgc_result_sig *r = &sig->results[i];
    if (r->kind == TGC_RESULT_USER_OUTPUT)
      m->output_results[m->num_outputs++] = i;
    else if (r->kind == TGC_RESULT_USER_INPUT_MUTATION)
      m->input_mutation[m->arg_input[r->target]] = (int32_t)i;
  }
  return 0;
}

/* Evaluates a state argument's shape, which may not depend on symbols. */
static int state_shape(checker *c, const tgc_arg_sig *a, int64_t *sizes) {
  for (uint32_t d = 0; d < a->rank; ++d) {
    enum tgc_eval_status status =
        tgc_expr_eval(&a->sizes[d], c->m->symbol_values, c->m->symbol_bound, &sizes[d]);
    if (status == TGC_EVAL_UNBOUND_SYMBOL)
      return check_fail(c, arg_kind_name(a->kind), a->name, "its shape depends on a symbol");
    if (status != TGC_EVAL_OK || sizes[d] < 0)
      return check_fail(c, arg_kind_name(a->kind), a->name, "its shape is not a valid size");
  }
  return 0;
}

/* Allocates one state slot and copies its initial value from the weights
 * blob, after checking that the blob holds exactly the bytes the shape
 * needs. */
static int init_state_slot(checker *c, tgc_state_slot *slot, bool needs_spare) {
  const tgc_model_desc *desc = c->m->desc;
  const tgc_arg_sig *a = &c->m->sig.args[slot->arg];
  const char *what = arg_kind_name(a->kind);
  slot->sizes = calloc(a->rank + 1, sizeof *slot->sizes);
  if (!slot->sizes)
    return check_fail(c, what, a->name, "out of memory");
  if (state_shape(c, a, slot->sizes))
    return 1;
  if (!tgc_nbytes(slot->sizes, a->rank, tgc_dtype_size(a->dtype), &slot->nbytes))
    return check_fail(c, what, a->name, "its shape is too large");
  if (slot->nbytes != a->data_nbytes)
    return check_fail(c, what, a->name,
                      "its data size in the weights blob does not match "
                      "its dtype and shape");
  if (a->data_offset > desc->weights_size || desc->weights_size - a->data_offset < a->data_nbytes)
    return check_fail(c, what, a->name, "its data lies outside the weights blob");
  if (c->m->cuda) {
    tgc_cuda *previous = tgc_cuda_enter(c->m->cuda);
    slot->data = tgc_cuda_alloc(c->m->cuda, slot->nbytes);
    slot->spare = needs_spare ? tgc_cuda_alloc(c->m->cuda, slot->nbytes) : NULL;
    int failed =
        !slot->data || (needs_spare && !slot->spare) ||
        tgc_cuda_to_device(c->m->cuda, slot->data, desc->weights + a->data_offset, slot->nbytes);
    tgc_cuda_leave(previous);
    return failed ? check_fail(c, what, a->name, "out of GPU memory") : 0;
  }
  slot->data = tgc_aligned_alloc(slot->nbytes);
  slot->spare = needs_spare ? tgc_aligned_alloc(slot->nbytes) : NULL;
  if (!slot->data || (needs_spare && !slot->spare))
    return check_fail(c, what, a->name, "out of memory");
  if (slot->nbytes > 0)
    memcpy(slot->data, desc->weights + a->data_offset, slot->nbytes);
  return 0;
}

static int init_state(checker *c) {
  tgc_model *m = c->m;
  for (uint32_t i = 0; i < m->num_state; ++i) {
    bool rewritten = false;
    for (uint32_t r = 0; r < m->sig.num_results; ++r)
      rewritten |= m->sig.results[r].kind == TGC_RESULT_BUFFER_MUTATION &&
                   m->sig.results[r].target == m->state[i].arg;
    for (uint32_t r = 0; r < m->sig.num_backward_results; ++r)
      rewritten |= m->sig.backward_results[r].kind == TGC_RESULT_BUFFER_MUTATION &&
                   m->sig.backward_results[r].target == m->state[i].arg;
    if (init_state_slot(c, &m->state[i], rewritten))
      return 1;
  }
  return 0;
}

/* A value saved by reference has its argument's (constant) shape. */
static int check_saved_references(checker *c) {
  tgc_model *m = c->m;
  char name[32];
  for (uint32_t i = 0; i < m->sig.num_saved; ++i) {
    const tgc_saved_sig *s = &m->sig.saved[i];
    if (s->arg == TGC_NO_TARGET)
      continue;
    const tgc_state_slot *slot = &m->state[m->arg_state[s->arg]];
    for (uint32_t d = 0; d < s->rank; ++d) {
      int64_t size;
      if (tgc_expr_eval(&s->sizes[d], m->symbol_values, m->symbol_bound, &size) != TGC_EVAL_OK ||
          size != slot->sizes[d]) {
        snprintf(name, sizeof name, "#%" PRIu32, i);
        return check_fail(c, "saved value", name,
                          "its shape differs from the argument it refers to");
      }
    }
  }
  return 0;
}

static int check_desc(const tgc_model_desc *desc, tgc_message *error) {
  if (!desc) {
    tgc_message_append(error, "invalid model descriptor: NULL");
    return 1;
  }
  if (desc->abi_version != TGC_ABI_VERSION) {
    tgc_message_append(
        error, "model ABI version %" PRIu64 " is not supported by this runtime (version %d)",
        desc->abi_version, TGC_ABI_VERSION);
    return 1;
  }
  if (!desc->name || !desc->forward || !desc->signature ||
      (!desc->weights && desc->weights_size != 0)) {
    tgc_message_append(error, "invalid model descriptor: a pointer is NULL");
    return 1;
  }
  return 0;
}

static int init_model(tgc_model *m, tgc_message *error) {
  checker c = {m, error};
  if (tgc_signature_decode(m->desc->signature, m->desc->signature_size, &m->sig, error->buf,
                           error->capacity))
    return 1;
  for (uint32_t i = 0; i < m->sig.num_args; ++i)
    if (check_arg(&c, &m->sig.args[i]))
      return 1;
  if (check_symbols(&c) || check_results(&c) || check_backward(&c) || check_unique_names(&c) ||
      build_indices(&c) || find_binders(&c) || init_state(&c) || check_saved_references(&c))
    return 1;
  if (tgc_run_scratch_init(m) || tgc_train_init(m)) {
    tgc_message_append(error, "out of memory");
    return 1;
  }
  return 0;
}

/* Creates an instance; with `image`, a CUDA one, whose device side comes first. */
static int create(const tgc_model_desc *desc, const tgc_cuda_image *image, tgc_model **out) {
  tgc_message error;
  tgc_message_init(&error, create_error, sizeof create_error);
  if (!out) {
    tgc_message_append(&error, "tgc_rt_create: NULL output pointer");
    return 1;
  }
  *out = NULL;
  if (check_desc(desc, &error))
    return 1;
  tgc_model *m = calloc(1, sizeof *m);
  if (!m) {
    tgc_message_append(&error, "out of memory");
    return 1;
  }
  m->desc = desc;
  if (image) {
    char why[TGC_ERROR_CAPACITY / 2];
    m->cuda = tgc_cuda_create(image, why, sizeof why);
    if (!m->cuda) {
      tgc_message_append(&error, "model '%s' runs on CUDA: %s", desc->name, why);
      free(m);
      return 1;
    }
  }
  tgc_scratch_retain();
  m->num_threads = tgc_threads_default();
  tgc_gemm_init();
  if (init_model(m, &error)) {
    free_model(m);
    return 1;
  }
  *out = m;
  return 0;
}

int tgc_rt_create(const tgc_model_desc *desc, tgc_model **out) { return create(desc, NULL, out); }

/* Whether this CPU has feature `name` (`length` bytes): 1 or 0, or -1 for a name the
 * runtime cannot test. The features that change the code LLVM generates for kernels. */
static int cpu_has(const char *name, size_t length) {
#if defined(__x86_64__) && defined(__clang__)
  __builtin_cpu_init();
#define TGC_CPU_FEATURE(s)                                                                         \
  if (length == sizeof(s) - 1 && memcmp(name, s, length) == 0)                                     \
    return __builtin_cpu_supports(s) ? 1 : 0;
  TGC_CPU_FEATURE("sse4.1")
  TGC_CPU_FEATURE("sse4.2")
  TGC_CPU_FEATURE("popcnt")
  TGC_CPU_FEATURE("avx")
  TGC_CPU_FEATURE("avx2")
  TGC_CPU_FEATURE("fma")
  TGC_CPU_FEATURE("f16c")
  TGC_CPU_FEATURE("bmi")
  TGC_CPU_FEATURE("bmi2")
  TGC_CPU_FEATURE("avxvnni")
  TGC_CPU_FEATURE("avx512f")
  TGC_CPU_FEATURE("avx512vl")
  TGC_CPU_FEATURE("avx512bw")
  TGC_CPU_FEATURE("avx512dq")
  TGC_CPU_FEATURE("avx512cd")
  TGC_CPU_FEATURE("avx512vnni")
  TGC_CPU_FEATURE("avx512bf16")
  TGC_CPU_FEATURE("avx512fp16")
  TGC_CPU_FEATURE("avx512vbmi")
  TGC_CPU_FEATURE("avx512vbmi2")
  TGC_CPU_FEATURE("avx512ifma")
  TGC_CPU_FEATURE("avx512vpopcntdq")
  TGC_CPU_FEATURE("avx512bitalg")
  TGC_CPU_FEATURE("gfni")
  TGC_CPU_FEATURE("vpclmulqdq")
#undef TGC_CPU_FEATURE
#else
  (void)name;
  (void)length;
#endif
  return -1;
}

/* Fails naming the CPU features the host code needs that this machine lacks. */
static int check_cpu(const tgc_model_desc *desc, const char *features) {
  tgc_message error;
  tgc_message_init(&error, create_error, sizeof create_error);
  int missing = 0;
  for (const char *f = features ? features : ""; *f;) {
    const char *end = strchr(f, ',');
    size_t length = end ? (size_t)(end - f) : strlen(f);
    if (length && cpu_has(f, length) == 0) {
      if (!missing)
        tgc_message_append(&error, "model '%s' was compiled for CPU features this machine lacks: ",
                           desc && desc->name ? desc->name : "?");
      tgc_message_append(&error, "%s%.*s", missing ? ", " : "", (int)length, f);
      ++missing;
    }
    f = end ? end + 1 : f + length;
  }
  if (missing) {
    tgc_message_append(&error, " (compile it on this machine, or with a portable --cpu such as "
                               "x86-64-v2 or x86-64-v3)");
    return 1;
  }
  return 0;
}

int tgc_rt_create_for_cpu(const tgc_model_desc *desc, const char *features, tgc_model **out) {
  if (out)
    *out = NULL;
  if (check_cpu(desc, features))
    return 1;
  return create(desc, NULL, out);
}

int tgc_rt_create_for_cuda(const tgc_model_desc *desc, const char *features,
                           const tgc_cuda_image *image, tgc_model **out) {
  if (out)
    *out = NULL;
  if (check_cpu(desc, features))
    return 1;
  if (!image) {
    tgc_message error;
    tgc_message_init(&error, create_error, sizeof create_error);
    tgc_message_append(&error, "tgc_rt_create_for_cuda: NULL GPU image");
    return 1;
  }
  return create(desc, image, out);
}

TGC_EXPORT void tgc_model_set_num_threads(tgc_model *m, int n) {
  if (m)
    m->num_threads = n < 1 ? tgc_threads_default() : n;
}

TGC_EXPORT int tgc_model_num_threads(const tgc_model *m) { return m ? m->num_threads : 0; }

/* Frees an instance. Internal calls use this rather than the exported
 * tgc_model_destroy, which another model.so in the process may interpose. */
static void free_model(tgc_model *m) {
  if (!m)
    return;
  tgc_run_scratch_free(m);
  tgc_train_free(m);
  tgc_cuda *previous = m->cuda ? tgc_cuda_enter(m->cuda) : NULL;
  for (uint32_t i = 0; i < m->num_state; ++i) {
    free(m->state[i].sizes);
    if (m->cuda) {
      tgc_cuda_free(m->state[i].data);
      tgc_cuda_free(m->state[i].spare);
    } else {
      free(m->state[i].data);
      free(m->state[i].spare);
    }
  }
  if (m->cuda) {
    tgc_cuda_leave(previous);
    tgc_cuda_destroy(m->cuda);
  }
  tgc_signature_free(&m->sig);
  free(m->input_args);
  free(m->input_mutation);
  free(m->output_results);
  free(m->state);
  free(m->arg_state);
  free(m->arg_input);
  free(m->binders);
  free(m->symbol_values);
  free(m->symbol_bound);
  free(m);
  /* After the instance's saved values went back to the cache. */
  tgc_scratch_release();
}

TGC_EXPORT void tgc_model_destroy(tgc_model *m) { free_model(m); }

/*===--- Queries ----------------------------------------------------------===*/

TGC_EXPORT const char *tgc_model_last_error(const tgc_model *m) {
  const char *refusal = tgc_model_refusal(m);
  if (refusal)
    return refusal;
  return m ? m->error : create_error;
}

TGC_EXPORT const char *tgc_model_name(const tgc_model *m) { return m ? m->desc->name : NULL; }

TGC_EXPORT int64_t tgc_model_num_inputs(const tgc_model *m) { return m ? m->num_inputs : 0; }

TGC_EXPORT int64_t tgc_model_num_outputs(const tgc_model *m) { return m ? m->num_outputs : 0; }

TGC_EXPORT const char *tgc_model_input_name(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_inputs)
    return NULL;
  return m->sig.args[m->input_args[i]].name;
}

TGC_EXPORT const char *tgc_model_output_name(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_outputs)
    return NULL;
  return m->sig.results[m->output_results[i]].name;
}

TGC_EXPORT int tgc_model_input_is_mutated(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_inputs)
    return -1;
  return m->input_mutation[i] >= 0 || (m->train.input_mutation && m->train.input_mutation[i] >= 0);
}

TGC_EXPORT int64_t tgc_model_num_state(const tgc_model *m) { return m ? m->num_state : 0; }

TGC_EXPORT const char *tgc_model_state_name(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_state)
    return NULL;
  return m->sig.args[m->state[i].arg].name;
}

TGC_EXPORT int tgc_model_state_kind(const tgc_model *m, int64_t i) {
  if (!m || i < 0 || i >= m->num_state)
    return -1;
  return m->sig.args[m->state[i].arg].kind;
}

/*===--- State access -----------------------------------------------------===*/

static tgc_state_slot *find_state(tgc_model *m, const char *name) {
  if (!name) {
    tgc_fail(m, "state name is NULL");
    return NULL;
  }
  for (uint32_t i = 0; i < m->num_state; ++i)
    if (strcmp(m->sig.args[m->state[i].arg].name, name) == 0)
      return &m->state[i];
  tgc_fail(m, "unknown state '%s'", name);
  return NULL;
}

static int query_state_dtype(tgc_model *m, const char *name, DLDataType *dtype) {
  m->error[0] = '\0';
  tgc_state_slot *slot = find_state(m, name);
  if (!slot)
    return 1;
  if (!dtype)
    return tgc_fail(m, "tgc_model_state_dtype: NULL dtype pointer");
  *dtype = m->sig.args[slot->arg].dtype;
  return 0;
}

static int query_state_shape(tgc_model *m, const char *name, int64_t *rank, int64_t *sizes,
                             int64_t max_rank) {
  m->error[0] = '\0';
  tgc_state_slot *slot = find_state(m, name);
  if (!slot)
    return 1;
  if (!rank)
    return tgc_fail(m, "tgc_model_state_shape: NULL rank pointer");
  uint32_t r = m->sig.args[slot->arg].rank;
  *rank = r;
  if (r > max_rank || (r > 0 && !sizes))
    return tgc_fail(m, "state '%s' has rank %" PRIu32 ", more than room for %" PRId64 " sizes",
                    name, r, max_rank);
  if (r > 0)
    memcpy(sizes, slot->sizes, r * sizeof *sizes);
  return 0;
}

/* Checks that `t` can stand for state `slot` in a copy: same dtype and
 * shape, on the CPU, with data. */
static int check_state_tensor(tgc_model *m, const tgc_state_slot *slot, const DLTensor *t) {
  const tgc_arg_sig *a = &m->sig.args[slot->arg];
  if (!t)
    return tgc_fail(m, "state '%s': the tensor is NULL", a->name);
  if (t->device.device_type != kDLCPU &&
      !(m->cuda && t->device.device_type == kDLCUDA &&
        t->device.device_id == tgc_cuda_device(m->cuda) && tgc_dltensor_is_contiguous(t)))
    return tgc_fail(m,
                    m->cuda ? "state '%s': expected a CPU tensor or a contiguous tensor on the "
                              "model's CUDA device, got device type %d"
                            : "state '%s': expected a CPU tensor, got device type %d",
                    a->name, (int)t->device.device_type);
  if (!tgc_dtype_equal(t->dtype, a->dtype)) {
    char expected[64], got[64];
    return tgc_fail(m, "state '%s': expected dtype %s, got %s", a->name,
                    tgc_dtype_name(a->dtype, expected, sizeof expected),
                    tgc_dtype_name(t->dtype, got, sizeof got));
  }
  bool same_shape =
      t->ndim == (int32_t)a->rank &&
      (a->rank == 0 || (t->shape && memcmp(t->shape, slot->sizes, a->rank * sizeof(int64_t)) == 0));
  if (!same_shape) {
    tgc_message msg;
    tgc_message_init(&msg, m->error, sizeof m->error);
    tgc_message_append(&msg, "state '%s': expected shape ", a->name);
    tgc_message_append_shape(&msg, slot->sizes, a->rank);
    if (t->ndim >= 0 && t->ndim <= TGC_MAX_RANK && (t->shape || t->ndim == 0)) {
      tgc_message_append(&msg, ", got ");
      tgc_message_append_shape(&msg, t->shape, (uint32_t)t->ndim);
    }
    return 1;
  }
  if (!t->data && slot->nbytes > 0)
    return tgc_fail(m, "state '%s': the tensor's data is NULL", a->name);
  return 0;
}

/* Copies between a CUDA instance's state slot and `t` (a CPU tensor, through host
 * memory, or a contiguous one on the device); `to_state` says which way. */
static int copy_cuda_state(tgc_model *m, tgc_state_slot *slot, const DLTensor *t, bool to_state) {
  const tgc_arg_sig *a = &m->sig.args[slot->arg];
  size_t elem = tgc_dtype_size(a->dtype);
  tgc_cuda *previous = tgc_cuda_enter(m->cuda);
  int failed;
  if (t->device.device_type == kDLCUDA) {
    failed = to_state ? tgc_cuda_on_device(m->cuda, slot->data, tgc_dltensor_base(t), slot->nbytes)
                      : tgc_cuda_on_device(m->cuda, tgc_dltensor_base(t), slot->data, slot->nbytes);
  } else {
    char *host = malloc(slot->nbytes ? slot->nbytes : 1);
    failed = !host;
    if (!failed && to_state) {
      tgc_copy_strided(host, NULL, tgc_dltensor_base(t), t->strides, slot->sizes, a->rank, elem);
      failed = tgc_cuda_to_device(m->cuda, slot->data, host, slot->nbytes);
    } else if (!failed) {
      failed = tgc_cuda_to_host(m->cuda, host, slot->data, slot->nbytes);
      if (!failed)
        tgc_copy_strided(tgc_dltensor_base(t), t->strides, host, NULL, slot->sizes, a->rank, elem);
    }
    free(host);
  }
  char why[TGC_ERROR_CAPACITY / 2];
  failed |= tgc_cuda_finish(m->cuda, why, sizeof why);
  tgc_cuda_leave(previous);
  return failed ? tgc_fail(m, "state '%s': copying failed on the GPU", a->name) : 0;
}

static int get_state(tgc_model *m, const char *name, DLTensor *dst) {
  m->error[0] = '\0';
  tgc_state_slot *slot = find_state(m, name);
  if (!slot || check_state_tensor(m, slot, dst))
    return 1;
  if (m->cuda)
    return copy_cuda_state(m, slot, dst, false);
  const tgc_arg_sig *a = &m->sig.args[slot->arg];
  tgc_copy_strided(tgc_dltensor_base(dst), dst->strides, slot->data, NULL, slot->sizes, a->rank,
                   tgc_dtype_size(a->dtype));
  return 0;
}

static int set_state(tgc_model *m, const char *name, const DLTensor *src) {
  m->error[0] = '\0';
  tgc_state_slot *slot = find_state(m, name);
  if (!slot || check_state_tensor(m, slot, src))
    return 1;
  const tgc_arg_sig *a = &m->sig.args[slot->arg];
  if (m->cuda) {
    if (copy_cuda_state(m, slot, src, true))
      return 1;
  } else {
    tgc_copy_strided(slot->data, NULL, tgc_dltensor_base(src), src->strides, slot->sizes, a->rank,
                     tgc_dtype_size(a->dtype));
  }
  /* The backward must not see a parameter the forward did not: values
   * saved by reference to this state are no longer valid. */
  for (uint32_t i = 0; i < m->sig.num_saved; ++i)
    if (m->sig.saved[i].arg == slot->arg)
      tgc_saved_drop_pending(m);
  return 0;
}

/* The state calls, one at a time per instance (tgc_model_claim). */

TGC_EXPORT int tgc_model_state_dtype(tgc_model *m, const char *name, DLDataType *dtype) {
  if (!m || tgc_model_claim(m))
    return 1;
  int rc = query_state_dtype(m, name, dtype);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_state_shape(tgc_model *m, const char *name, int64_t *rank, int64_t *sizes,
                                     int64_t max_rank) {
  if (!m || tgc_model_claim(m))
    return 1;
  int rc = query_state_shape(m, name, rank, sizes, max_rank);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_get_state(tgc_model *m, const char *name, DLTensor *dst) {
  if (!m || tgc_model_claim(m))
    return 1;
  int rc = get_state(m, name, dst);
  tgc_model_release(m);
  return rc;
}

TGC_EXPORT int tgc_model_set_state(tgc_model *m, const char *name, const DLTensor *src) {
  if (!m || tgc_model_claim(m))
    return 1;
  int rc = set_state(m, name, src);
  tgc_model_release(m);
  return rc;
}
