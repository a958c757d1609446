// RUN: tgc-opt %s --tgc-decompose | FileCheck %s --check-prefix=DECOMPOSED
// RUN: tgc-opt %s --tgc-decompose=keep-attention | FileCheck %s --check-prefix=KEPT

// Training differentiates attention's decomposition (q k^T, softmax, p v). Inference
// (keep-attention) keeps the attentions the lowering takes as fused kernels.
// DECOMPOSED-LABEL: func.func @attention(
//   DECOMPOSED-NOT:   tgc.scaled_dot_product_attention
//       DECOMPOSED:   tgc.bmm
//       DECOMPOSED:   tgc.exp
//       DECOMPOSED:   tgc.bmm
// KEPT-LABEL: func.func @attention(
//       KEPT:   tgc.scaled_dot_product_attention %{{.*}} {is_causal = true}
//   KEPT-NOT:   tgc.exp

// A symbolic sequence length (no static tiles) is decomposed in both.
// DECOMPOSED-LABEL: func.func @symbolic(
//       DECOMPOSED:   tgc.exp
// KEPT-LABEL: func.func @symbolic(
//   KEPT-NOT:   tgc.scaled_dot_product_attention
//       KEPT:   tgc.exp
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 64>]} {
func.func @attention(%q: !tgc.vtensor<[2, 4, 16, 8], f32>, %k: !tgc.vtensor<[2, 4, 16, 8], f32>, %v: !tgc.vtensor<[2, 4, 16, 8], f32>) -> !tgc.vtensor<[2, 4, 16, 8], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v {is_causal = true} : !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32> -> !tgc.vtensor<[2, 4, 16, 8], f32>
  return %0 : !tgc.vtensor<[2, 4, 16, 8], f32>
}
func.func @symbolic(%q: !tgc.vtensor<[2, s0, 8], f32>, %k: !tgc.vtensor<[2, s0, 8], f32>, %v: !tgc.vtensor<[2, s0, 8], f32>) -> !tgc.vtensor<[2, s0, 8], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v : !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32> -> !tgc.vtensor<[2, s0, 8], f32>
  return %0 : !tgc.vtensor<[2, s0, 8], f32>
}
}
