/* TinyModel.h - Hand-written packed entries standing in for generated code. */
#ifndef TGC_TEST_UNIT_TINYMODEL_H
#define TGC_TEST_UNIT_TINYMODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Packed entry of the "tiny" model (signature in TinyModelSignature.cpp):
 *   out   = 2*x + w + y[:, None] + bias        float32[batch, 4]
 *   ys    = concat(y, y, [count])              float32[2*batch + 1]
 *   count = count + 1                          (buffer mutation)
 *   x[0, :] += 1                               (user input mutation) */
void tiny_forward(void **args);

/* Packed entry of the "halves" model: out[i] = z[2*i + 1], with z of size
 * 2*n + 1 and out of size n. */
void halves_forward(void **args);

/* Packed entries of the trainable "scale" model (scaleSignature):
 *   forward:  out = x * w[None, :]   float32[batch, 4], tangent 0
 *             calls_out = calls       int64[] (no gradient)
 *             calls = calls + 1       (forward buffer mutation)
 *             saved: w (by reference), x, acc
 *   backward: grad w = sum_i dy[i, :] * x[i, :];  grad x = dy * w
 *             acc = acc + grad w      (backward buffer mutation)
 *             x = x - grad x          (backward user input mutation)
 *   The backward's arguments end with the data-less symbol argument
 *   i8[batch] (only its size is read). */
void scale_forward(void **args);
void scale_backward(void **args);

/* How many descriptors tiny_forward saw that break the ABI's promises
 * (non-zero offset, non-contiguous strides, misaligned results, sizes that
 * disagree with the signature). */
int tiny_descriptor_problems(void);

/* How many descriptors the scale entries saw that break the ABI's promises. */
int scale_descriptor_problems(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TGC_TEST_UNIT_TINYMODEL_H */
