// RUN: tgc-opt %s --tgc-materialize-rng --split-input-file --verify-diagnostics | FileCheck %s

// Two random dropouts: the function takes the RNG state (a buffer, before the user
// inputs) and returns it advanced by all the numbers drawn; each dropout draws from its
// own offset range and becomes input * mask * 1/(1-p). Eval-mode dropout is left to
// tgc-decompose.
// CHECK: tgc.global @tgc.rng_state "buffer" : !tgc.vtensor<[2], i64> = dense<0> : tensor<2xi64>
// CHECK-LABEL: func.func @dropouts
//  CHECK-SAME:   (%[[W:.*]]: !tgc.vtensor<[4], f32> {tgc.kind = "parameter", tgc.name = "w"},
//  CHECK-SAME:    %[[S:.*]]: !tgc.vtensor<[2], i64> {tgc.global = @tgc.rng_state, tgc.kind = "buffer", tgc.name = "tgc.rng_state"},
//  CHECK-SAME:    %[[X:.*]]: !tgc.vtensor<[s0, 8], f32> {tgc.kind = "user_input", tgc.name = "x"})
//  CHECK-SAME:   -> (!tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[4], i1>, !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[2], i64> {tgc.kind = "buffer_mutation", tgc.target = "tgc.rng_state"})
//       CHECK:   %[[O0:.*]] = arith.constant 0 : i64
//       CHECK:   %[[M1:.*]] = tgc.rand_bernoulli %[[S]], %[[O0]] {p = 0.69999999999999996 : f64, size = #tgc.shape<[s0, 8]>}
//       CHECK:   %[[K1:.*]] = tgc.mul %[[X]], %[[M1]]
//       CHECK:   %[[D1:.*]] = tgc.mul %[[K1]], %{{.*}} : !tgc.vtensor<[s0, 8], f32>, f64
//       CHECK:   %[[N:.*]] = tgc.sym_size %[[X]] {dim = 0 : i64}
//       CHECK:   %[[N8:.*]] = arith.muli %[[N]], %c8_i64
//       CHECK:   %[[O1:.*]] = arith.addi %[[O0]], %[[N8]]
//       CHECK:   %[[M2:.*]] = tgc.rand_bernoulli %[[S]], %[[O1]] {p = 5.000000e-01 : f64, size = #tgc.shape<[4]>}
//       CHECK:   %[[O2:.*]] = arith.addi %[[O1]], %c4_i64
//       CHECK:   %[[E:.*]] = tgc.dropout %[[X]] {p = 5.000000e-01 : f64, train = false}
//       CHECK:   %[[UNIT:.*]] = tgc.constant dense<[0, 1]>
//       CHECK:   %[[ADV:.*]] = tgc.mul %[[UNIT]], %[[O2]]
//       CHECK:   %[[NEW:.*]] = tgc.add %[[S]], %[[ADV]]
//       CHECK:   return %[[D1]], %[[M2]], %[[E]], %[[NEW]]
func.func @dropouts(%w: !tgc.vtensor<[4], f32> {tgc.kind = "parameter", tgc.name = "w"},
                    %x: !tgc.vtensor<[s0, 8], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> (!tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[4], i1>, !tgc.vtensor<[s0, 8], f32>) {
  %0 = tgc.dropout %x {p = 0.3 : f64, train = true} : !tgc.vtensor<[s0, 8], f32> -> !tgc.vtensor<[s0, 8], f32>
  %1:2 = tgc.native_dropout %w {p = 0.5 : f64, train = true} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], i1>
  %2 = tgc.dropout %x {p = 0.5 : f64, train = false} : !tgc.vtensor<[s0, 8], f32> -> !tgc.vtensor<[s0, 8], f32>
  return %0, %1#1, %2 : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[4], i1>, !tgc.vtensor<[s0, 8], f32>
}

// -----

// Nothing random: nothing changes.
// CHECK-NOT: tgc.global
// CHECK-LABEL: func.func @deterministic
//  CHECK-SAME:   (%{{.*}}: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
//   CHECK-NOT:   rand_bernoulli
func.func @deterministic(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %0 = tgc.dropout %x {p = 0.0 : f64, train = true} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %0 : !tgc.vtensor<[4], f32>
}

// -----

func.func @capture_level(%x: !tgc.tensor<[4], f32>) -> !tgc.tensor<[4], f32> {
  // expected-error @below {{needs the RNG state, which tgc-materialize-rng adds to value-level functions of one block only}}
  %0 = tgc.dropout %x {p = 0.5 : f64, train = true} : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
  return %0 : !tgc.tensor<[4], f32>
}

// -----

// bernoulli (the functional x.bernoulli_(p)): a rand_bernoulli of the input's shape
// with probability p, converted to the input's dtype; it draws from its own range.
// CHECK-LABEL: func.func @bernoulli
//  CHECK-SAME:   (%[[S:.*]]: !tgc.vtensor<[2], i64> {{.*}}, %[[X:.*]]: !tgc.vtensor<[3, 1, 1], f32>
//       CHECK:   %[[O0:.*]] = arith.constant 0 : i64
//       CHECK:   %[[M:.*]] = tgc.rand_bernoulli %[[S]], %[[O0]] {p = 8.000000e-01 : f64, size = #tgc.shape<[3, 1, 1]>} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[3, 1, 1], i1>
//       CHECK:   %[[F:.*]] = tgc.to_dtype %[[M]] {dtype = f32} : !tgc.vtensor<[3, 1, 1], i1> -> !tgc.vtensor<[3, 1, 1], f32>
//       CHECK:   %[[O1:.*]] = arith.addi %[[O0]], %{{.*}}
//       CHECK:   return %[[F]],
func.func @bernoulli(%x: !tgc.vtensor<[3, 1, 1], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> !tgc.vtensor<[3, 1, 1], f32> {
  %0 = tgc.bernoulli %x {p = 0.8 : f64} : !tgc.vtensor<[3, 1, 1], f32> -> !tgc.vtensor<[3, 1, 1], f32>
  return %0 : !tgc.vtensor<[3, 1, 1], f32>
}

// -----

// Attention with dropout: the explicit causal softmax of the scaled scores, whose
// probabilities the dropout masks with numbers from the state, times the values.
// CHECK-LABEL: func.func @attention_dropout
//  CHECK-SAME:   %[[S:.*]]: !tgc.vtensor<[2], i64> {tgc.global = @tgc.rng_state
//  CHECK-SAME:   %[[Q:[^:]*]]: !tgc.vtensor<[1, 2, 6, 4], f32> {tgc.kind = "user_input"
//       CHECK:   %[[KT:.*]] = tgc.transpose %{{.*}} {dim0 = 2 : i64, dim1 = 3 : i64}
//       CHECK:   %[[QK:.*]] = tgc.matmul %[[Q]], %[[KT]]
//       CHECK:   %[[SC:.*]] = tgc.mul %[[QK]], %{{.*}} : !tgc.vtensor<[1, 2, 6, 6], f32>, f64
//       CHECK:   tgc.tril
//       CHECK:   %[[MASKED:.*]] = tgc.masked_fill %[[SC]]
//       CHECK:   %[[P:.*]] = tgc.softmax %[[MASKED]] {dim = 3 : i64}
//       CHECK:   %[[M:.*]] = tgc.rand_bernoulli %[[S]], %{{.*}} {p = 9.000000e-01 : f64, size = #tgc.shape<[1, 2, 6, 6]>}
//       CHECK:   %[[PM:.*]] = tgc.mul %[[P]], %[[M]]
//       CHECK:   %[[PD:.*]] = tgc.mul %[[PM]], %{{.*}}
//       CHECK:   %[[O:.*]] = tgc.matmul %[[PD]], %{{.*}}
//       CHECK:   return %[[O]]
func.func @attention_dropout(%q: !tgc.vtensor<[1, 2, 6, 4], f32> {tgc.kind = "user_input", tgc.name = "q"},
                             %k: !tgc.vtensor<[1, 2, 6, 4], f32> {tgc.kind = "user_input", tgc.name = "k"},
                             %v: !tgc.vtensor<[1, 2, 6, 4], f32> {tgc.kind = "user_input", tgc.name = "v"})
    -> !tgc.vtensor<[1, 2, 6, 4], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.1 : f64, is_causal = true} : !tgc.vtensor<[1, 2, 6, 4], f32>, !tgc.vtensor<[1, 2, 6, 4], f32>, !tgc.vtensor<[1, 2, 6, 4], f32> -> !tgc.vtensor<[1, 2, 6, 4], f32>
  return %0 : !tgc.vtensor<[1, 2, 6, 4], f32>
}

// -----

// rand and randn draw tgc.rand_draw numbers of their dtype; randperm is the stable
// ascending sort of n f64 keys, its indices converted to the requested dtype. Each draws
// its own offset range.
// CHECK-LABEL: func.func @factories
//  CHECK-SAME:   (%[[S:.*]]: !tgc.vtensor<[2], i64> {{.*}}tgc.name = "tgc.rng_state"}
//       CHECK:   %[[O0:.*]] = arith.constant 0 : i64
//       CHECK:   %[[U:.*]] = tgc.rand_draw %[[S]], %[[O0]] {dtype = bf16, size = #tgc.shape<[3, 4]>} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[3, 4], bf16>
//       CHECK:   %[[O1:.*]] = arith.addi %[[O0]], %c12_i64
//       CHECK:   %[[N:.*]] = tgc.rand_draw %[[S]], %[[O1]] {dtype = f32, normal, size = #tgc.shape<[5]>}
//       CHECK:   %[[O2:.*]] = arith.addi %[[O1]], %c5_i64
//       CHECK:   %[[K:.*]] = tgc.rand_draw %[[S]], %[[O2]] {dtype = f64, size = #tgc.shape<[7]>}
//       CHECK:   %[[O3:.*]] = arith.addi %[[O2]], %c7_i64
//       CHECK:   %{{.*}}, %[[I:.*]] = tgc.sort %[[K]] {dim = 0 : i64, stable = true}
//       CHECK:   %[[P:.*]] = tgc.to_dtype %[[I]] {dtype = i32}
//       CHECK:   %[[ADV:.*]] = tgc.mul %{{.*}}, %[[O3]]
//       CHECK:   return %[[U]], %[[N]], %[[P]]
func.func @factories() -> (!tgc.vtensor<[3, 4], bf16>, !tgc.vtensor<[5], f32>, !tgc.vtensor<[7], i32>) {
  %0 = tgc.rand {size = #tgc.shape<[3, 4]>, dtype = bf16} : !tgc.vtensor<[3, 4], bf16>
  %1 = tgc.rand {size = #tgc.shape<[5]>, normal} : !tgc.vtensor<[5], f32>
  %2 = tgc.randperm {n = 7 : i64, dtype = i32} : !tgc.vtensor<[7], i32>
  return %0, %1, %2 : !tgc.vtensor<[3, 4], bf16>, !tgc.vtensor<[5], f32>, !tgc.vtensor<[7], i32>
}
