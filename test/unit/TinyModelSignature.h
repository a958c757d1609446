//===- TinyModelSignature.h - Signatures of the hand-written test models --===//
//
// The signatures and weights of the models in TinyModel.c, built with the
// compiler's own ModelSignature so tests exercise the real blob encoding.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TEST_UNIT_TINYMODELSIGNATURE_H
#define TGC_TEST_UNIT_TINYMODELSIGNATURE_H

#include "tgc/Target/Signature.h"

#include <string>

namespace tgc::test {

/// Initial weights of the tiny model.
constexpr float kTinyW[4] = {0.5f, 1.0f, 1.5f, 2.0f};
constexpr float kTinyBias = 0.25f;
constexpr int64_t kTinyBatchMin = 1, kTinyBatchMax = 64;

/// The "tiny" model: symbol batch in [1, 64]; parameter w f32[4], buffer
/// count i64[], constant bias f32[], inputs x f32[batch, 4] (mutated) and
/// y f32[batch]; outputs out f32[batch, 4] and ys f32[2*batch + 1].
/// Fills `weights` with the weights blob.
ModelSignature tinySignature(std::string &weights);

/// Initial state of the trainable "scale" model.
constexpr float kScaleW[4] = {1.0f, 2.0f, 3.0f, 4.0f};
constexpr float kScaleAcc[4] = {0.5f, 0.5f, 0.5f, 0.5f};

/// The trainable "scale" model (scale_forward / scale_backward in
/// TinyModel.c): symbol batch in [1, 16]; parameter w f32[4], buffers calls
/// i64[] and acc f32[4], input x f32[batch, 4]; outputs out f32[batch, 4]
/// (tangent 0) and calls_out i64[]; saved w (by reference), x, acc;
/// gradients of w and x; backward mutations of acc and x.
ModelSignature scaleSignature(std::string &weights);

/// The "halves" model: symbol n >= 0, input z f32[2*n + 1], output
/// out f32[n].
ModelSignature halvesSignature();

} // namespace tgc::test

#endif // TGC_TEST_UNIT_TINYMODELSIGNATURE_H
