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

/* How many descriptors tiny_forward saw that break the ABI's promises
 * (non-zero offset, non-contiguous strides, misaligned results, sizes that
 * disagree with the signature). */
int tiny_descriptor_problems(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TGC_TEST_UNIT_TINYMODEL_H */
