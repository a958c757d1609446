/* TinyModel.c - Hand-written packed entries standing in for generated code. */
#include "TinyModel.h"

#include <stdbool.h>
#include <stddef.h>

/* MLIR's memref descriptors for the ranks the models use. */
typedef struct memref0 {
  void *allocated;
  void *aligned;
  int64_t offset;
} memref0;

typedef struct memref1 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} memref1;

typedef struct memref2 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} memref2;

static int problems;

int tiny_descriptor_problems(void) { return problems; }

static void expect(bool ok) {
  if (!ok)
    ++problems;
}

static void expect_dense1(const memref1 *m, int64_t size) {
  expect(m->offset == 0 && m->sizes[0] == size && m->strides[0] == 1);
}

static void expect_dense2(const memref2 *m, int64_t rows, int64_t cols) {
  expect(m->offset == 0 && m->sizes[0] == rows && m->sizes[1] == cols && m->strides[0] == cols &&
         m->strides[1] == 1);
}

static void expect_aligned(const void *p) { expect((uintptr_t)p % 64 == 0); }

void tiny_forward(void **args) {
  const memref1 *w = args[0];
  const memref0 *count = args[1];
  const memref0 *bias = args[2];
  const memref2 *x = args[3];
  const memref1 *y = args[4];
  memref2 *out = args[5];
  memref1 *ys = args[6];
  memref0 *new_count = args[7];
  memref2 *new_x = args[8];

  int64_t batch = x->sizes[0];
  expect_dense1(w, 4);
  expect_dense2(x, batch, 4);
  expect_dense1(y, batch);
  expect_dense2(out, batch, 4);
  expect_dense1(ys, 2 * batch + 1);
  expect_dense2(new_x, batch, 4);
  expect(count->offset == 0 && new_count->offset == 0 && bias->offset == 0);
  expect_aligned(out->aligned);
  expect_aligned(ys->aligned);
  expect_aligned(new_count->aligned);
  expect_aligned(new_x->aligned);

  float b = *(const float *)bias->aligned;
  int64_t c = *(const int64_t *)count->aligned;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < 4; ++j)
      out->aligned[i * 4 + j] = 2 * x->aligned[i * 4 + j] + w->aligned[j] + y->aligned[i] + b;
  for (int64_t i = 0; i < 2 * batch; ++i)
    ys->aligned[i] = y->aligned[i % batch];
  ys->aligned[2 * batch] = (float)c;
  *(int64_t *)new_count->aligned = c + 1;
  for (int64_t i = 0; i < batch * 4; ++i)
    new_x->aligned[i] = x->aligned[i] + (i < 4 ? 1.0f : 0.0f);
}

void halves_forward(void **args) {
  const memref1 *z = args[0];
  memref1 *out = args[1];
  for (int64_t i = 0; i < out->sizes[0]; ++i)
    out->aligned[i] = z->aligned[2 * i + 1];
}

static int scale_problems;

int scale_descriptor_problems(void) { return scale_problems; }

static void scale_expect(bool ok) {
  if (!ok)
    ++scale_problems;
}

void scale_forward(void **args) {
  const memref1 *w = args[0];
  const memref0 *calls = args[1];
  const memref1 *acc = args[2];
  const memref2 *x = args[3];
  memref2 *out = args[4];
  memref0 *calls_out = args[5];
  memref0 *new_calls = args[6];
  memref2 *saved_x = args[7];
  memref1 *saved_acc = args[8];
  int64_t batch = x->sizes[0];
  scale_expect(w->sizes[0] == 4 && acc->sizes[0] == 4);
  scale_expect(out->sizes[0] == batch && saved_x->sizes[0] == batch && saved_x->sizes[1] == 4 &&
               saved_acc->sizes[0] == 4);
  scale_expect((uintptr_t)saved_x->aligned % 64 == 0 && (uintptr_t)saved_acc->aligned % 64 == 0);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < 4; ++j)
      out->aligned[i * 4 + j] = x->aligned[i * 4 + j] * w->aligned[j];
  int64_t c = *(const int64_t *)calls->aligned;
  *(int64_t *)calls_out->aligned = c;
  *(int64_t *)new_calls->aligned = c + 1;
  for (int64_t i = 0; i < batch * 4; ++i)
    saved_x->aligned[i] = x->aligned[i];
  for (int64_t j = 0; j < 4; ++j)
    saved_acc->aligned[j] = acc->aligned[j];
}

void scale_backward(void **args) {
  const memref1 *w = args[0];
  const memref2 *x = args[1];
  const memref1 *acc = args[2];
  const memref2 *dy = args[3];
  const memref1 *batch_size = args[4];
  memref1 *grad_w = args[5];
  memref2 *grad_x = args[6];
  memref1 *new_acc = args[7];
  memref2 *new_x = args[8];
  int64_t batch = x->sizes[0];
  scale_expect(batch_size->sizes[0] == batch && batch_size->strides[0] == 1);
  scale_expect(dy->sizes[0] == batch && dy->sizes[1] == 4 && dy->strides[0] == 4 &&
               dy->strides[1] == 1 && dy->offset == 0);
  scale_expect(grad_x->sizes[0] == batch && new_x->sizes[0] == batch && grad_w->sizes[0] == 4 &&
               new_acc->sizes[0] == 4);
  for (int64_t j = 0; j < 4; ++j) {
    float sum = 0;
    for (int64_t i = 0; i < batch; ++i)
      sum += dy->aligned[i * 4 + j] * x->aligned[i * 4 + j];
    grad_w->aligned[j] = sum;
    new_acc->aligned[j] = acc->aligned[j] + sum;
  }
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      float g = dy->aligned[i * 4 + j] * w->aligned[j];
      grad_x->aligned[i * 4 + j] = g;
      new_x->aligned[i * 4 + j] = x->aligned[i * 4 + j] - g;
    }
}
