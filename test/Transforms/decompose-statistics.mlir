// RUN: tgc-opt %s --tgc-decompose=one-pass-statistics --split-input-file | FileCheck %s
// RUN: tgc-opt %s --tgc-decompose --split-input-file | FileCheck %s --check-prefix=TWO

// Inference (one-pass-statistics): an f32 batch norm reads x once, for the sums of x and
// x^2 widened to f64; variance = E[x^2] - E[x]^2, clamped at 0, back to f32.
// CHECK-LABEL: func.func @batch_norm
//       CHECK:   %[[X64:.*]] = tgc.to_dtype %[[X:.*]] {dtype = f64}
//   CHECK-DAG:   %[[SUM:.*]] = tgc.sum %[[X64]] {dim = array<i64: 0, 2, 3>, keepdim = true}
//   CHECK-DAG:   %[[SQ:.*]] = tgc.mul %[[X64]], %[[X64]]
//   CHECK-DAG:   %[[SQSUM:.*]] = tgc.sum %[[SQ]] {dim = array<i64: 0, 2, 3>, keepdim = true}
//       CHECK:   %[[VAR:.*]] = tgc.relu
//       CHECK:   tgc.to_dtype %[[VAR]] {dtype = f32}
// The training decomposition (differentiated by autodiff) takes two passes: the mean,
// then the mean of (x - mean)^2.
// TWO-LABEL: func.func @batch_norm
//   TWO-NOT:   tgc.to_dtype
//       TWO:   tgc.sub %[[X:.*]], %[[MEAN:.*]] :
//       TWO:   tgc.mul
//       TWO:   tgc.sum
//   TWO-NOT:   tgc.relu
func.func @batch_norm(%x: !tgc.vtensor<[2, 3, 4, 4], f32>, %rm: !tgc.vtensor<[3], f32>, %rv: !tgc.vtensor<[3], f32>)
    -> !tgc.vtensor<[2, 3, 4, 4], f32> {
  %y:5 = tgc.batch_norm %x running %rm, %rv {training = true, momentum = 0.1 : f64, eps = 1.0e-5 : f64, functional} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>
  return %y#0 : !tgc.vtensor<[2, 3, 4, 4], f32>
}

// -----

// An f64 layer norm keeps the two-pass form (one pass in f64 would lose precision).
// CHECK-LABEL: func.func @layer_norm_f64
//   CHECK-NOT:   tgc.to_dtype
//   CHECK-NOT:   tgc.relu
//       CHECK:   return
func.func @layer_norm_f64(%x: !tgc.vtensor<[4, 8], f64>) -> !tgc.vtensor<[4, 8], f64> {
  %0 = tgc.layer_norm %x {normalized_shape = array<i64: 8>, eps = 1.0e-5 : f64} : !tgc.vtensor<[4, 8], f64> -> !tgc.vtensor<[4, 8], f64>
  return %0 : !tgc.vtensor<[4, 8], f64>
}

// -----

// linalg_vector_norm, 2-norm over dim 1 (keepdim): sqrt of the sum of squares, taken as
// where(s == 0, 0, sqrt(where(s == 0, 1, s))) so that an all-zero row has gradient 0.
// CHECK-LABEL: func.func @vector_norm_2
//       CHECK:   %[[SQ:.*]] = tgc.mul %arg0, %arg0
//       CHECK:   %[[S:.*]] = tgc.sum %[[SQ]] {dim = array<i64: 1>, keepdim = true}
//       CHECK:   %[[Z:.*]] = tgc.eq %[[S]], %{{.*}}
//       CHECK:   %[[SAFE:.*]] = tgc.where %[[Z]], %{{.*}}, %[[S]]
//       CHECK:   %[[R:.*]] = tgc.sqrt %[[SAFE]]
//       CHECK:   %[[N:.*]] = tgc.where %[[Z]], %{{.*}}, %[[R]]
//       CHECK:   return %[[N]]
func.func @vector_norm_2(%x: !tgc.vtensor<[4, 8], f32>) -> !tgc.vtensor<[4, 1], f32> {
  %0 = tgc.vector_norm %x {dim = array<i64: 1>, keepdim = true} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[4, 1], f32>
  return %0 : !tgc.vtensor<[4, 1], f32>
}

// -----

// The inf-norm is the largest magnitude; the p-norm of a half-precision input with a
// dtype is computed in that dtype.
// CHECK-LABEL: func.func @vector_norm_inf
//       CHECK:   %[[A:.*]] = tgc.abs %arg0
//       CHECK:   tgc.amax %[[A]] :
// CHECK-LABEL: func.func @vector_norm_p
//       CHECK:   %[[X:.*]] = tgc.to_dtype %arg0 {dtype = f32}
//       CHECK:   %[[A:.*]] = tgc.abs %[[X]]
//       CHECK:   tgc.pow %[[A]], %{{.*}}
//       CHECK:   tgc.sum
//       CHECK:   tgc.pow
func.func @vector_norm_inf(%x: !tgc.vtensor<[4, 8], f32>) -> !tgc.vtensor<[], f32> {
  %0 = tgc.vector_norm %x {ord = 0x7FF0000000000000 : f64} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[], f32>
  return %0 : !tgc.vtensor<[], f32>
}
func.func @vector_norm_p(%x: !tgc.vtensor<[4, 8], bf16>) -> !tgc.vtensor<[8], f32> {
  %0 = tgc.vector_norm %x {ord = 3.0 : f64, dim = array<i64: 0>, dtype = f32} : !tgc.vtensor<[4, 8], bf16> -> !tgc.vtensor<[8], f32>
  return %0 : !tgc.vtensor<[8], f32>
}
