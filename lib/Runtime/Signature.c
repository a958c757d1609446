/* Signature.c - Bounds-checked decoding of the signature blob. */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Smallest encodings, used to reject counts that cannot fit in what is left
 * of the blob before allocating for them. */
enum {
  MIN_SYMBOL_BYTES = 4 + 8 + 8,
  MIN_ARG_BYTES = 3 + 4 + 4 + 8 + 8,
  MIN_RESULT_BYTES = 3 + 4 + 4 + 4 + 4,
  STRIDE_BYTES = 8,
  MIN_SAVED_BYTES = 2 + 4 + 4,
  TANGENT_BYTES = 4,
  MIN_EXPR_BYTES = 4,
  EXPR_OP_BYTES = 1 + 8,
};

/* A cursor over the blob; the first failure sticks and later reads are
 * no-ops, so decoders check once per entity. */
typedef struct reader {
  const uint8_t *data;
  uint64_t size;
  uint64_t pos;
  bool failed;
  tgc_message *error;
} reader;

static void reader_fail(reader *r, const char *what) {
  if (r->failed)
    return;
  r->failed = true;
  tgc_message_append(r->error, "malformed signature blob: %s (at byte %" PRIu64 " of %" PRIu64 ")",
                     what, r->pos, r->size);
}

static bool reader_take(reader *r, uint64_t n, const char *what, const uint8_t **bytes) {
  if (r->failed)
    return false;
  if (r->size - r->pos < n) {
    reader_fail(r, what);
    return false;
  }
  *bytes = r->data + r->pos;
  r->pos += n;
  return true;
}

static uint64_t read_le(reader *r, unsigned width, const char *what) {
  const uint8_t *bytes;
  if (!reader_take(r, width, what, &bytes))
    return 0;
  uint64_t value = 0;
  for (unsigned i = 0; i < width; ++i)
    value |= (uint64_t)bytes[i] << (8 * i);
  return value;
}

static uint8_t read_u8(reader *r, const char *what) { return (uint8_t)read_le(r, 1, what); }
static uint32_t read_u32(reader *r, const char *what) { return (uint32_t)read_le(r, 4, what); }
static uint64_t read_u64(reader *r, const char *what) { return read_le(r, 8, what); }
static int64_t read_i64(reader *r, const char *what) { return (int64_t)read_le(r, 8, what); }

/* Reads a count and checks that `count` entities of at least `min_bytes`
 * each can still follow, so a corrupt count never drives a huge malloc. */
static uint32_t read_count(reader *r, uint64_t min_bytes, const char *what) {
  uint32_t count = read_u32(r, what);
  if (r->failed)
    return 0;
  if ((uint64_t)count * min_bytes > r->size - r->pos) {
    char why[96];
    snprintf(why, sizeof why, "%s %" PRIu32 " is larger than the blob allows", what, count);
    reader_fail(r, why);
    return 0;
  }
  return count;
}

/* Reads a `str` into a new NUL-terminated string; names with NUL bytes
 * are rejected since the API hands them out as C strings. */
static char *read_string(reader *r, const char *what) {
  uint32_t length = read_u32(r, what);
  const uint8_t *bytes;
  if (!reader_take(r, length, what, &bytes))
    return NULL;
  if (memchr(bytes, 0, length)) {
    reader_fail(r, "a name contains a NUL byte");
    return NULL;
  }
  char *s = malloc((size_t)length + 1);
  if (!s) {
    reader_fail(r, "out of memory");
    return NULL;
  }
  memcpy(s, bytes, length);
  s[length] = '\0';
  return s;
}

static void read_expr(reader *r, tgc_expr *e) {
  uint32_t n = read_count(r, EXPR_OP_BYTES, "size expression length");
  if (r->failed)
    return;
  if (n == 0) {
    reader_fail(r, "empty size expression");
    return;
  }
  e->ops = calloc(n, sizeof *e->ops);
  if (!e->ops) {
    reader_fail(r, "out of memory");
    return;
  }
  e->num_ops = n;
  for (uint32_t i = 0; i < n; ++i) {
    e->ops[i].opcode = read_u8(r, "size expression opcode");
    e->ops[i].operand = read_i64(r, "size expression operand");
  }
}

/* Reads `rank x expr` into a new array of rank expressions. */
static tgc_expr *read_sizes(reader *r, uint32_t *rank) {
  *rank = read_count(r, MIN_EXPR_BYTES, "rank");
  if (r->failed || *rank == 0)
    return NULL;
  if (*rank > TGC_MAX_RANK) {
    reader_fail(r, "rank is larger than 64");
    return NULL;
  }
  tgc_expr *sizes = calloc(*rank, sizeof *sizes);
  if (!sizes) {
    reader_fail(r, "out of memory");
    return NULL;
  }
  for (uint32_t d = 0; d < *rank && !r->failed; ++d)
    read_expr(r, &sizes[d]);
  return sizes;
}

static void read_dtype(reader *r, DLDataType *dtype) {
  dtype->code = read_u8(r, "dtype code");
  dtype->bits = read_u8(r, "dtype bits");
  dtype->lanes = 1;
}

static void read_symbol(reader *r, tgc_symbol_sig *s) {
  s->name = read_string(r, "symbol name");
  s->min = read_i64(r, "symbol minimum");
  s->max = read_i64(r, "symbol maximum");
}

static void read_arg(reader *r, tgc_arg_sig *a) {
  a->kind = read_u8(r, "argument kind");
  read_dtype(r, &a->dtype);
  a->name = read_string(r, "argument name");
  a->sizes = read_sizes(r, &a->rank);
  a->data_offset = read_u64(r, "argument data offset");
  a->data_nbytes = read_u64(r, "argument data size");
}

static void read_result(reader *r, tgc_result_sig *res) {
  res->kind = read_u8(r, "result kind");
  read_dtype(r, &res->dtype);
  res->name = read_string(r, "result name");
  res->target = read_u32(r, "result target");
  res->sizes = read_sizes(r, &res->rank);
  res->num_strides = read_count(r, STRIDE_BYTES, "result stride count");
  if (r->failed || res->num_strides == 0)
    return;
  if (res->num_strides > TGC_MAX_RANK) {
    reader_fail(r, "result stride count is larger than 64");
    res->num_strides = 0;
    return;
  }
  res->strides = calloc(res->num_strides, sizeof *res->strides);
  if (!res->strides) {
    reader_fail(r, "out of memory");
    res->num_strides = 0;
    return;
  }
  for (uint32_t d = 0; d < res->num_strides; ++d)
    res->strides[d] = read_i64(r, "result stride");
}

static void read_saved(reader *r, tgc_saved_sig *s) {
  read_dtype(r, &s->dtype);
  s->arg = read_u32(r, "saved value argument");
  s->sizes = read_sizes(r, &s->rank);
}

static void read_header(reader *r) {
  const uint8_t *magic;
  if (!reader_take(r, 4, "missing magic", &magic))
    return;
  if (memcmp(magic, "TGCS", 4) != 0) {
    r->pos = 0;
    reader_fail(r, "bad magic (expected \"TGCS\")");
    return;
  }
  uint32_t version = read_u32(r, "missing version");
  if (!r->failed && version != TGC_SIGNATURE_VERSION) {
    char why[80];
    snprintf(why, sizeof why, "version %" PRIu32 " (this runtime reads %d)", version,
             TGC_SIGNATURE_VERSION);
    reader_fail(r, why);
  }
}

/* Allocates `count` zeroed entries; on failure marks the reader. */
static void *alloc_entries(reader *r, uint32_t count, size_t size) {
  if (r->failed || count == 0)
    return NULL;
  void *entries = calloc(count, size);
  if (!entries)
    reader_fail(r, "out of memory");
  return entries;
}

/* The saved values, tangents and backward results of a trainable model. */
static void decode_backward(reader *r, tgc_signature *sig) {
  sig->has_backward = true;
  uint32_t num_saved = read_count(r, MIN_SAVED_BYTES, "saved value count");
  sig->saved = alloc_entries(r, num_saved, sizeof *sig->saved);
  if (sig->saved)
    sig->num_saved = num_saved;
  for (uint32_t i = 0; i < sig->num_saved && !r->failed; ++i)
    read_saved(r, &sig->saved[i]);

  uint32_t num_tangents = read_count(r, TANGENT_BYTES, "tangent count");
  sig->tangents = alloc_entries(r, num_tangents, sizeof *sig->tangents);
  if (sig->tangents)
    sig->num_tangents = num_tangents;
  for (uint32_t i = 0; i < sig->num_tangents && !r->failed; ++i)
    sig->tangents[i] = read_u32(r, "tangent output");

  uint32_t num_results = read_count(r, MIN_RESULT_BYTES, "backward result count");
  sig->backward_results = alloc_entries(r, num_results, sizeof *sig->backward_results);
  if (sig->backward_results)
    sig->num_backward_results = num_results;
  for (uint32_t i = 0; i < sig->num_backward_results && !r->failed; ++i)
    read_result(r, &sig->backward_results[i]);
  sig->backward_arena_bytes = read_u64(r, "backward arena size");
}

static void decode(reader *r, tgc_signature *sig) {
  read_header(r);
  uint32_t num_symbols = read_count(r, MIN_SYMBOL_BYTES, "symbol count");
  sig->symbols = alloc_entries(r, num_symbols, sizeof *sig->symbols);
  if (sig->symbols)
    sig->num_symbols = num_symbols;
  for (uint32_t i = 0; i < sig->num_symbols && !r->failed; ++i)
    read_symbol(r, &sig->symbols[i]);

  uint32_t num_args = read_count(r, MIN_ARG_BYTES, "argument count");
  sig->args = alloc_entries(r, num_args, sizeof *sig->args);
  if (sig->args)
    sig->num_args = num_args;
  for (uint32_t i = 0; i < sig->num_args && !r->failed; ++i)
    read_arg(r, &sig->args[i]);

  uint32_t num_results = read_count(r, MIN_RESULT_BYTES, "result count");
  sig->results = alloc_entries(r, num_results, sizeof *sig->results);
  if (sig->results)
    sig->num_results = num_results;
  for (uint32_t i = 0; i < sig->num_results && !r->failed; ++i)
    read_result(r, &sig->results[i]);
  sig->arena_bytes = read_u64(r, "arena size");

  uint8_t has_backward = read_u8(r, "backward flag");
  if (!r->failed && has_backward > 1)
    reader_fail(r, "backward flag is neither 0 nor 1");
  if (!r->failed && has_backward)
    decode_backward(r, sig);

  if (!r->failed && r->pos != r->size)
    reader_fail(r, "trailing bytes after the signature");
}

int tgc_signature_decode(const uint8_t *blob, uint64_t size, tgc_signature *sig, char *error,
                         size_t error_capacity) {
  tgc_message message;
  tgc_message_init(&message, error, error_capacity);
  memset(sig, 0, sizeof *sig);
  if (!blob && size != 0) {
    tgc_message_append(&message, "malformed signature blob: NULL data");
    return 1;
  }
  reader r = {blob, size, 0, false, &message};
  decode(&r, sig);
  if (!r.failed)
    return 0;
  tgc_signature_free(sig);
  return 1;
}

static void free_sizes(tgc_expr *sizes, uint32_t rank) {
  if (!sizes)
    return;
  for (uint32_t d = 0; d < rank; ++d)
    free(sizes[d].ops);
  free(sizes);
}

void tgc_signature_free(tgc_signature *sig) {
  for (uint32_t i = 0; i < sig->num_symbols; ++i)
    free(sig->symbols[i].name);
  for (uint32_t i = 0; i < sig->num_args; ++i) {
    free(sig->args[i].name);
    free_sizes(sig->args[i].sizes, sig->args[i].rank);
  }
  for (uint32_t i = 0; i < sig->num_results; ++i) {
    free(sig->results[i].name);
    free_sizes(sig->results[i].sizes, sig->results[i].rank);
    free(sig->results[i].strides);
  }
  for (uint32_t i = 0; i < sig->num_saved; ++i)
    free_sizes(sig->saved[i].sizes, sig->saved[i].rank);
  for (uint32_t i = 0; i < sig->num_backward_results; ++i) {
    free(sig->backward_results[i].name);
    free_sizes(sig->backward_results[i].sizes, sig->backward_results[i].rank);
    free(sig->backward_results[i].strides);
  }
  free(sig->symbols);
  free(sig->args);
  free(sig->results);
  free(sig->saved);
  free(sig->tangents);
  free(sig->backward_results);
  memset(sig, 0, sizeof *sig);
}
