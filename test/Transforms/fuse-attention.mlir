// RUN: tgc-opt %s --tgc-fuse-attention --split-input-file | FileCheck %s

// nanoGPT's attention: (q @ k^T) * s, masked_fill(bias == 0, -inf), softmax, @ v. It is
// one attention whose boolean mask keeps where the fill did not.
// CHECK-LABEL: func.func @nanogpt(
//  CHECK-SAME:     %[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[C:[^:]*]]: {{.*}})
//       CHECK:   %[[KEEP:.*]] = tgc.logical_not %[[C]]
//       CHECK:   %[[A:.*]] = tgc.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask %[[KEEP]] {scale = 0.17677669529663687 : f64}
//       CHECK:   return %[[A]]
//   CHECK-NOT:   tgc.softmax
func.func @nanogpt(%q: !tgc.vtensor<[2, 4, 16, 32], f32>, %k: !tgc.vtensor<[2, 4, 16, 32], f32>, %v: !tgc.vtensor<[2, 4, 16, 32], f32>, %c: !tgc.vtensor<[1, 1, 16, 16], i1>) -> !tgc.vtensor<[2, 4, 16, 32], f32> {
  %s = arith.constant 0.17677669529663687 : f64
  %inf = arith.constant 0xFFF0000000000000 : f64
  %kt = tgc.transpose %k {dim0 = -2 : i64, dim1 = -1 : i64} : !tgc.vtensor<[2, 4, 16, 32], f32> -> !tgc.vtensor<[2, 4, 32, 16], f32>
  %0 = tgc.matmul %q, %kt : !tgc.vtensor<[2, 4, 16, 32], f32>, !tgc.vtensor<[2, 4, 32, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %1 = tgc.mul %0, %s : !tgc.vtensor<[2, 4, 16, 16], f32>, f64 -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %2 = tgc.masked_fill %1, %c, %inf : !tgc.vtensor<[2, 4, 16, 16], f32>, !tgc.vtensor<[1, 1, 16, 16], i1>, f64 -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %3 = tgc.softmax %2 {dim = -1 : i64} : !tgc.vtensor<[2, 4, 16, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %4 = tgc.matmul %3, %v : !tgc.vtensor<[2, 4, 16, 16], f32>, !tgc.vtensor<[2, 4, 16, 32], f32> -> !tgc.vtensor<[2, 4, 16, 32], f32>
  return %4 : !tgc.vtensor<[2, 4, 16, 32], f32>
}

// -----

// transformers' eager attention: * scaling, + a floating mask, softmax in f32, a
// conversion back to the same dtype, dropout that drops nothing (eval), @ v.
// CHECK-LABEL: func.func @transformers(
//  CHECK-SAME:     %[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[M:[^:]*]]: {{.*}})
//       CHECK:   %[[A:.*]] = tgc.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {scale = 1.250000e-01 : f64}
//       CHECK:   return %[[A]]
func.func @transformers(%q: !tgc.vtensor<[2, 4, 16, 64], f32>, %k: !tgc.vtensor<[2, 4, 16, 64], f32>, %v: !tgc.vtensor<[2, 4, 16, 64], f32>, %m: !tgc.vtensor<[2, 1, 16, 16], f32>) -> !tgc.vtensor<[2, 4, 16, 64], f32> {
  %s = arith.constant 0.125 : f64
  %kt = tgc.transpose %k {dim0 = 2 : i64, dim1 = 3 : i64} : !tgc.vtensor<[2, 4, 16, 64], f32> -> !tgc.vtensor<[2, 4, 64, 16], f32>
  %0 = tgc.matmul %q, %kt : !tgc.vtensor<[2, 4, 16, 64], f32>, !tgc.vtensor<[2, 4, 64, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %1 = tgc.mul %0, %s : !tgc.vtensor<[2, 4, 16, 16], f32>, f64 -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %2 = tgc.add %1, %m : !tgc.vtensor<[2, 4, 16, 16], f32>, !tgc.vtensor<[2, 1, 16, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %3 = tgc.softmax %2 {dim = -1 : i64, dtype = f32} : !tgc.vtensor<[2, 4, 16, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %4 = tgc.to_dtype %3 {dtype = f32} : !tgc.vtensor<[2, 4, 16, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %5 = tgc.dropout %4 {p = 0.1 : f64, train = false} : !tgc.vtensor<[2, 4, 16, 16], f32> -> !tgc.vtensor<[2, 4, 16, 16], f32>
  %6 = tgc.matmul %5, %v : !tgc.vtensor<[2, 4, 16, 16], f32>, !tgc.vtensor<[2, 4, 16, 64], f32> -> !tgc.vtensor<[2, 4, 16, 64], f32>
  return %6 : !tgc.vtensor<[2, 4, 16, 64], f32>
}

// -----

// Scores divided by sqrt(E), no mask, 3-d.
// CHECK-LABEL: func.func @divided(
//       CHECK:   tgc.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f64}
func.func @divided(%q: !tgc.vtensor<[3, 16, 16], f32>, %k: !tgc.vtensor<[3, 20, 16], f32>, %v: !tgc.vtensor<[3, 20, 8], f32>) -> !tgc.vtensor<[3, 16, 8], f32> {
  %s = arith.constant 4.0 : f64
  %kt = tgc.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !tgc.vtensor<[3, 20, 16], f32> -> !tgc.vtensor<[3, 16, 20], f32>
  %0 = tgc.matmul %q, %kt : !tgc.vtensor<[3, 16, 16], f32>, !tgc.vtensor<[3, 16, 20], f32> -> !tgc.vtensor<[3, 16, 20], f32>
  %1 = tgc.div %0, %s : !tgc.vtensor<[3, 16, 20], f32>, f64 -> !tgc.vtensor<[3, 16, 20], f32>
  %2 = tgc.softmax %1 {dim = 2 : i64} : !tgc.vtensor<[3, 16, 20], f32> -> !tgc.vtensor<[3, 16, 20], f32>
  %3 = tgc.matmul %2, %v : !tgc.vtensor<[3, 16, 20], f32>, !tgc.vtensor<[3, 20, 8], f32> -> !tgc.vtensor<[3, 16, 8], f32>
  return %3 : !tgc.vtensor<[3, 16, 8], f32>
}

// -----

// Not attention: the probabilities are returned too (attention weights), the fill is not
// -inf, a dropout that drops in training, a key shared by all batch elements (matmul
// broadcasts it, attention does not), a softmax over another dimension.
// CHECK-LABEL: func.func @not_fused(
//   CHECK-NOT:   tgc.scaled_dot_product_attention
func.func @not_fused(%q: !tgc.vtensor<[2, 8, 16], f32>, %k: !tgc.vtensor<[2, 8, 16], f32>, %k1: !tgc.vtensor<[8, 16], f32>, %v: !tgc.vtensor<[2, 8, 16], f32>, %c: !tgc.vtensor<[8, 8], i1>) -> (!tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>) {
  %zero = arith.constant 0.0 : f64
  %kt = tgc.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 16, 8], f32>
  %s0 = tgc.matmul %q, %kt : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 16, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %p0 = tgc.softmax %s0 {dim = -1 : i64} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %o0 = tgc.matmul %p0, %v : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 8, 16], f32>

  %kt1 = tgc.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 16, 8], f32>
  %s1 = tgc.matmul %q, %kt1 : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 16, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %f1 = tgc.masked_fill %s1, %c, %zero : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[8, 8], i1>, f64 -> !tgc.vtensor<[2, 8, 8], f32>
  %p1 = tgc.softmax %f1 {dim = -1 : i64} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %o1 = tgc.matmul %p1, %v : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 8, 16], f32>

  %kt2 = tgc.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 16, 8], f32>
  %s2 = tgc.matmul %q, %kt2 : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 16, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %p2 = tgc.softmax %s2 {dim = -1 : i64} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %d2 = tgc.dropout %p2 {p = 0.1 : f64, train = true} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %o2 = tgc.matmul %d2, %v : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 8, 16], f32>

  %kt3 = tgc.transpose %k1 {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[8, 16], f32> -> !tgc.vtensor<[16, 8], f32>
  %s3 = tgc.matmul %q, %kt3 : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[16, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %p3 = tgc.softmax %s3 {dim = -1 : i64} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %o3 = tgc.matmul %p3, %v : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 8, 16], f32>

  %kt4 = tgc.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 16, 8], f32>
  %s4 = tgc.matmul %q, %kt4 : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 16, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %p4 = tgc.softmax %s4 {dim = 1 : i64} : !tgc.vtensor<[2, 8, 8], f32> -> !tgc.vtensor<[2, 8, 8], f32>
  %o4 = tgc.matmul %p4, %v : !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32> -> !tgc.vtensor<[2, 8, 16], f32>
  return %o0, %p0, %o1, %o2, %o3, %o4 : !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 8], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>, !tgc.vtensor<[2, 8, 16], f32>
}
