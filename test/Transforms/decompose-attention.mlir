// RUN: tgc-opt %s --tgc-decompose | FileCheck %s --check-prefix=DECOMPOSED
// RUN: tgc-opt %s --tgc-decompose=keep-attention | FileCheck %s --check-prefix=KEPT

// Without keep-attention, attention is decomposed (q k^T, softmax, p v). The pipeline
// sets keep-attention: the attentions the lowering takes as fused kernels stay (training
// differentiates them with tgc.scaled_dot_product_attention_backward, fused too).
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

// Grouped-query attention: 2 key/value heads serve 6 query heads, so each is repeated 3
// times (repeat_interleave: unsqueeze, expand, view) and the attention stays fused.
// KEPT-LABEL: func.func @grouped(
//  KEPT-SAME:     %[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}})
//       KEPT:   %[[KU:.*]] = tgc.unsqueeze %[[K]] {dim = 2 : i64} : !tgc.vtensor<[1, 2, 16, 8], f32> -> !tgc.vtensor<[1, 2, 1, 16, 8], f32>
//       KEPT:   %[[KE:.*]] = tgc.expand %[[KU]] {size = #tgc.shape<[1, 2, 3, 16, 8]>}
//       KEPT:   %[[KR:.*]] = tgc.view %[[KE]] {size = #tgc.shape<[1, 6, 16, 8]>}
//       KEPT:   %[[VR:.*]] = tgc.view %{{.*}} {size = #tgc.shape<[1, 6, 16, 8]>}
//       KEPT:   tgc.scaled_dot_product_attention %[[Q]], %[[KR]], %[[VR]] {is_causal = true} :
//   KEPT-NOT:   enable_gqa

// The decomposition of an attention that returns its row log-sum-exp: the probabilities
// are exp(scores - lse), lse = log(sum(exp(scores - max))) + max.
// DECOMPOSED-LABEL: func.func @symbolic_logsumexp(
//       DECOMPOSED:   %[[MAX:.*]] = tgc.amax %[[S:.*]] {dim = array<i64: 2>, keepdim = true}
//       DECOMPOSED:   %[[SUM:.*]] = tgc.sum %{{.*}} {dim = array<i64: 2>, keepdim = true}
//       DECOMPOSED:   %[[LOG:.*]] = tgc.log %[[SUM]]
//       DECOMPOSED:   %[[LSE:.*]] = tgc.add %[[LOG]], %[[MAX]]
//       DECOMPOSED:   %[[SHIFTED:.*]] = tgc.sub %[[S]], %[[LSE]]
//       DECOMPOSED:   %[[P:.*]] = tgc.exp %[[SHIFTED]]
//       DECOMPOSED:   tgc.bmm
//       DECOMPOSED:   %[[ROWS:.*]] = tgc.squeeze %[[LSE]] {dim = array<i64: 2>} : !tgc.vtensor<[2, s0, 1], f32> -> !tgc.vtensor<[2, s0], f32>
//       DECOMPOSED:   return %{{.*}}, %[[ROWS]]
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 64>]} {
func.func @attention(%q: !tgc.vtensor<[2, 4, 16, 8], f32>, %k: !tgc.vtensor<[2, 4, 16, 8], f32>, %v: !tgc.vtensor<[2, 4, 16, 8], f32>) -> !tgc.vtensor<[2, 4, 16, 8], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v {is_causal = true} : !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32> -> !tgc.vtensor<[2, 4, 16, 8], f32>
  return %0 : !tgc.vtensor<[2, 4, 16, 8], f32>
}
func.func @symbolic(%q: !tgc.vtensor<[2, s0, 8], f32>, %k: !tgc.vtensor<[2, s0, 8], f32>, %v: !tgc.vtensor<[2, s0, 8], f32>) -> !tgc.vtensor<[2, s0, 8], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v : !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32> -> !tgc.vtensor<[2, s0, 8], f32>
  return %0 : !tgc.vtensor<[2, s0, 8], f32>
}
func.func @symbolic_logsumexp(%q: !tgc.vtensor<[2, s0, 8], f32>, %k: !tgc.vtensor<[2, s0, 8], f32>, %v: !tgc.vtensor<[2, s0, 8], f32>) -> (!tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0], f32>) {
  %0:2 = tgc.scaled_dot_product_attention %q, %k, %v {with_logsumexp} : !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0, 8], f32> -> !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0], f32>
  return %0#0, %0#1 : !tgc.vtensor<[2, s0, 8], f32>, !tgc.vtensor<[2, s0], f32>
}
func.func @grouped(%q: !tgc.vtensor<[1, 6, 16, 8], f32>, %k: !tgc.vtensor<[1, 2, 16, 8], f32>, %v: !tgc.vtensor<[1, 2, 16, 8], f32>) -> !tgc.vtensor<[1, 6, 16, 8], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v {is_causal = true, enable_gqa = true} : !tgc.vtensor<[1, 6, 16, 8], f32>, !tgc.vtensor<[1, 2, 16, 8], f32>, !tgc.vtensor<[1, 2, 16, 8], f32> -> !tgc.vtensor<[1, 6, 16, 8], f32>
  return %0 : !tgc.vtensor<[1, 6, 16, 8], f32>
}
}
