// RUN: tgc-opt %s --tgc-decompose --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @linear
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[s0, 16], f32>, %[[W:.*]]: !tgc.vtensor<[32, 16], f32>, %[[B:.*]]: !tgc.vtensor<[32], f32>)
//       CHECK:   %[[WT:.*]] = tgc.transpose %[[W]] {dim0 = 0 : i64, dim1 = 1 : i64}
//       CHECK:   %[[MM:.*]] = tgc.mm %[[X]], %[[WT]]
//       CHECK:   %[[R:.*]] = tgc.add %[[MM]], %[[B]]
//       CHECK:   return %[[R]]
func.func @linear(%x: !tgc.vtensor<[s0, 16], f32>, %w: !tgc.vtensor<[32, 16], f32>, %b: !tgc.vtensor<[32], f32>) -> !tgc.vtensor<[s0, 32], f32> {
  %0 = tgc.linear %x, %w, %b : !tgc.vtensor<[s0, 16], f32>, !tgc.vtensor<[32, 16], f32>, !tgc.vtensor<[32], f32> -> !tgc.vtensor<[s0, 32], f32>
  return %0 : !tgc.vtensor<[s0, 32], f32>
}

// -----

// A batched matmul against a matrix folds the batch into the rows.
// CHECK-LABEL: func.func @matmul_3d_2d
//       CHECK:   %[[FLAT:.*]] = tgc.view %{{.*}} {size = #tgc.shape<[s0 * 8, 32]>}
//       CHECK:   %[[MM:.*]] = tgc.mm %[[FLAT]], %{{.*}} -> !tgc.vtensor<[s0 * 8, 4], f32>
//       CHECK:   tgc.view %[[MM]] {size = #tgc.shape<[s0, 8, 4]>}
func.func @matmul_3d_2d(%a: !tgc.vtensor<[s0, 8, 32], f32>, %b: !tgc.vtensor<[32, 4], f32>) -> !tgc.vtensor<[s0, 8, 4], f32> {
  %0 = tgc.matmul %a, %b : !tgc.vtensor<[s0, 8, 32], f32>, !tgc.vtensor<[32, 4], f32> -> !tgc.vtensor<[s0, 8, 4], f32>
  return %0 : !tgc.vtensor<[s0, 8, 4], f32>
}

// -----

// Batch dimensions broadcast, flatten into one and come back.
// CHECK-LABEL: func.func @matmul_4d
//       CHECK:   tgc.view %{{.*}} {size = #tgc.shape<[s0 * 4, 8, 16]>}
//       CHECK:   tgc.expand %{{.*}} {size = #tgc.shape<[s0, 4, 16, 8]>}
//       CHECK:   tgc.view %{{.*}} {size = #tgc.shape<[s0 * 4, 16, 8]>}
//       CHECK:   tgc.bmm
//       CHECK:   tgc.view %{{.*}} {size = #tgc.shape<[s0, 4, 8, 8]>}
func.func @matmul_4d(%a: !tgc.vtensor<[s0, 4, 8, 16], f32>, %b: !tgc.vtensor<[1, 4, 16, 8], f32>) -> !tgc.vtensor<[s0, 4, 8, 8], f32> {
  %0 = tgc.matmul %a, %b : !tgc.vtensor<[s0, 4, 8, 16], f32>, !tgc.vtensor<[1, 4, 16, 8], f32> -> !tgc.vtensor<[s0, 4, 8, 8], f32>
  return %0 : !tgc.vtensor<[s0, 4, 8, 8], f32>
}

// -----

// softmax = exp(x - max) / sum(exp(x - max)) along dim.
// CHECK-LABEL: func.func @softmax
//       CHECK:   %[[MAX:.*]] = tgc.amax %[[X:.*]] {dim = array<i64: 1>, keepdim = true}
//       CHECK:   %[[SH:.*]] = tgc.sub %[[X]], %[[MAX]]
//       CHECK:   %[[E:.*]] = tgc.exp %[[SH]]
//       CHECK:   %[[S:.*]] = tgc.sum %[[E]] {dim = array<i64: 1>, keepdim = true}
//       CHECK:   tgc.div %[[E]], %[[S]]
func.func @softmax(%x: !tgc.vtensor<[4, 10], f32>) -> !tgc.vtensor<[4, 10], f32> {
  %0 = tgc.softmax %x {dim = -1 : i64} : !tgc.vtensor<[4, 10], f32> -> !tgc.vtensor<[4, 10], f32>
  return %0 : !tgc.vtensor<[4, 10], f32>
}

// -----

// A mean over a symbolic dimension divides by the size read at run time.
// CHECK-LABEL: func.func @mean_symbolic
//       CHECK:   %[[SUM:.*]] = tgc.sum %[[X:.*]] {dim = array<i64: 0>
//       CHECK:   %[[N:.*]] = tgc.sym_size %[[X]] {dim = 0 : i64}
//       CHECK:   tgc.div %[[SUM]], %[[N]]
func.func @mean_symbolic(%x: !tgc.vtensor<[s0, 6], f32>) -> !tgc.vtensor<[6], f32> {
  %0 = tgc.mean %x {dim = array<i64: 0>} : !tgc.vtensor<[s0, 6], f32> -> !tgc.vtensor<[6], f32>
  return %0 : !tgc.vtensor<[6], f32>
}

// -----

// Training-mode batch norm: batch statistics normalize; the functional form also
// updates the running statistics with momentum and the unbiased variance (n / (n - 1)).
// CHECK-LABEL: func.func @batch_norm
//   CHECK-DAG:   %[[BESSEL:.*]] = arith.constant 1.032258064516129 : f64
//   CHECK-DAG:   %[[N:.*]] = arith.constant 32 : i64
//       CHECK:   %[[SUM:.*]] = tgc.sum %[[X:.*]] {dim = array<i64: 0, 2, 3>, keepdim = true}
//       CHECK:   %[[MEAN:.*]] = tgc.div %[[SUM]], %[[N]]
//       CHECK:   tgc.rsqrt
//       CHECK:   tgc.mul %{{.*}}, %[[BESSEL]]
//       CHECK:   return %{{.*}}, %{{.*}}, %{{.*}} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>
func.func @batch_norm(%x: !tgc.vtensor<[2, 3, 4, 4], f32>, %rm: !tgc.vtensor<[3], f32>, %rv: !tgc.vtensor<[3], f32>)
    -> (!tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>) {
  %y:5 = tgc.batch_norm %x running %rm, %rv {training = true, momentum = 0.1 : f64, eps = 1.0e-5 : f64, functional} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>
  return %y#0, %y#3, %y#4 : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32>
}

// -----

// A 1-d convolution runs as a 2-d one over a height-1 image.
// CHECK-LABEL: func.func @conv1d
//       CHECK:   %[[X:.*]] = tgc.unsqueeze %{{.*}} {dim = 2 : i64} {{.*}} -> !tgc.vtensor<[2, 4, 1, 17], f32>
//       CHECK:   %[[W:.*]] = tgc.unsqueeze %{{.*}} {dim = 2 : i64} {{.*}} -> !tgc.vtensor<[6, 4, 1, 3], f32>
//       CHECK:   %[[C:.*]] = tgc.convolution %[[X]], %[[W]] {dilation = array<i64: 1, 1>, padding = array<i64: 0, 1>, stride = array<i64: 1, 2>}
//  CHECK-SAME:     -> !tgc.vtensor<[2, 6, 1, 9], f32>
//       CHECK:   tgc.squeeze %[[C]] {dim = array<i64: 2>}
func.func @conv1d(%x: !tgc.vtensor<[2, 4, 17], f32>, %w: !tgc.vtensor<[6, 4, 3], f32>) -> !tgc.vtensor<[2, 6, 9], f32> {
  %0 = tgc.convolution %x, %w {stride = array<i64: 2>, padding = array<i64: 1>} : !tgc.vtensor<[2, 4, 17], f32>, !tgc.vtensor<[6, 4, 3], f32> -> !tgc.vtensor<[2, 6, 9], f32>
  return %0 : !tgc.vtensor<[2, 6, 9], f32>
}

// -----

// The ops a decomposition makes keep the saved-tensor hooks scope of the op they replace.
// CHECK-LABEL: func.func @linear_in_hooks_scope
//       CHECK:   tgc.transpose {{.*}}tgc.saved_hooks_scope = 1 : i64
//       CHECK:   tgc.mm {{.*}}tgc.saved_hooks_scope = 1 : i64
//       CHECK:   tgc.add {{.*}}tgc.saved_hooks_scope = 1 : i64
//       CHECK:   tgc.transpose
//   CHECK-NOT:     tgc.saved_hooks_scope
//       CHECK:   return
func.func @linear_in_hooks_scope(%x: !tgc.vtensor<[2, 3], f32>, %w: !tgc.vtensor<[4, 3], f32>, %b: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[3, 4], f32>) {
  %0 = tgc.linear %x, %w, %b {tgc.saved_hooks_scope = 1 : i64} : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[2, 4], f32>
  %1 = tgc.t %w : !tgc.vtensor<[4, 3], f32> -> !tgc.vtensor<[3, 4], f32>
  return %0, %1 : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[3, 4], f32>
}

// -----

// baddbmm: beta * self + alpha * bmm, self broadcasting over the product's rows.
// CHECK-LABEL: func.func @baddbmm
//   CHECK-DAG:   %[[BETA:.*]] = arith.constant 5.000000e-01 : f64
//   CHECK-DAG:   %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f64
//       CHECK:   %[[P:.*]] = tgc.bmm %arg1, %arg2
//       CHECK:   %[[AP:.*]] = tgc.mul %[[P]], %[[ALPHA]]
//       CHECK:   %[[BS:.*]] = tgc.mul %arg0, %[[BETA]]
//       CHECK:   %[[R:.*]] = tgc.add %[[AP]], %[[BS]] {{.*}} -> !tgc.vtensor<[2, 3, 5], f32>
//       CHECK:   return %[[R]]
func.func @baddbmm(%s: !tgc.vtensor<[2, 1, 5], f32>, %a: !tgc.vtensor<[2, 3, 4], f32>, %b: !tgc.vtensor<[2, 4, 5], f32>) -> !tgc.vtensor<[2, 3, 5], f32> {
  %r = tgc.baddbmm %s, %a, %b {beta = 0.5 : f64, alpha = 2 : i64} : !tgc.vtensor<[2, 1, 5], f32>, !tgc.vtensor<[2, 3, 4], f32>, !tgc.vtensor<[2, 4, 5], f32> -> !tgc.vtensor<[2, 3, 5], f32>
  return %r : !tgc.vtensor<[2, 3, 5], f32>
}

// -----

// repeat_interleave by a constant count: each element repeated along a new dimension
// after `dim`, merged into it; without `dim`, of the flattened input.
// CHECK-LABEL: func.func @repeat_interleave
//       CHECK:   %[[U:.*]] = tgc.unsqueeze %arg0 {dim = 2 : i64}
//       CHECK:   %[[E:.*]] = tgc.expand %[[U]] {size = #tgc.shape<[2, 3, 3]>}
//       CHECK:   %[[R:.*]] = tgc.view %[[E]] {size = #tgc.shape<[2, 9]>}
//       CHECK:   %[[F:.*]] = tgc.view %arg0 {size = #tgc.shape<[6]>}
//       CHECK:   %[[U2:.*]] = tgc.unsqueeze %[[F]] {dim = 1 : i64}
//       CHECK:   %[[E2:.*]] = tgc.expand %[[U2]] {size = #tgc.shape<[6, 2]>}
//       CHECK:   %[[R2:.*]] = tgc.view %[[E2]] {size = #tgc.shape<[12]>}
//       CHECK:   return %[[R]], %[[R2]]
func.func @repeat_interleave(%x: !tgc.vtensor<[2, 3], f32>) -> (!tgc.vtensor<[2, 9], f32>, !tgc.vtensor<[12], f32>) {
  %r = tgc.repeat_interleave %x {repeats = 3 : i64, dim = -1 : i64} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 9], f32>
  %f = tgc.repeat_interleave %x {repeats = 2 : i64} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[12], f32>
  return %r, %f : !tgc.vtensor<[2, 9], f32>, !tgc.vtensor<[12], f32>
}

// -----

// The gradient of a tensor used through slices (split into q, k, v): each slice's
// gradient written into zeros, summed. The sums become writes into one tensor, and
// slices that cover the dimension become a cat: no zeros, no sums.
// CHECK-LABEL: func.func @slice_gradients
//  CHECK-SAME:   (%[[A:.*]]: !tgc.vtensor<[4, 2], f32>, %[[B:.*]]: !tgc.vtensor<[4, 2], f32>, %[[C:.*]]: !tgc.vtensor<[4, 2], f32>)
//   CHECK-NOT:   tgc.add
//       CHECK:   %[[CAT:.*]] = tgc.cat %[[C]], %[[B]], %[[A]] {dim = 1 : i64}
//  CHECK-NEXT:   return %[[CAT]]
func.func @slice_gradients(%a: !tgc.vtensor<[4, 2], f32>, %b: !tgc.vtensor<[4, 2], f32>, %c: !tgc.vtensor<[4, 2], f32>) -> !tgc.vtensor<[4, 6], f32> {
  %z = tgc.full {dtype = f32, fill_value = 0.000000e+00 : f64, size = #tgc.shape<[4, 6]>} : !tgc.vtensor<[4, 6], f32>
  %0 = tgc.slice_scatter %z, %a {dim = 1 : i64, start = #tgc.shape<[4]>, end = #tgc.shape<[6]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %1 = tgc.slice_scatter %z, %b {dim = -1 : i64, start = #tgc.shape<[2]>, end = #tgc.shape<[4]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %2 = tgc.add %0, %1 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  %3 = tgc.slice_scatter %z, %c {dim = 1 : i64, end = #tgc.shape<[2]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %4 = tgc.add %3, %2 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  return %4 : !tgc.vtensor<[4, 6], f32>
}

// -----

// Overlapping slices are summed; a gap keeps the zeros (the slices are written into
// them, not concatenated); a sum with a nonzero tensor or with alpha stays a sum.
// CHECK-LABEL: func.func @slice_gradients_kept
//       CHECK:   %[[Z:.*]] = tgc.full
//       CHECK:   %[[S0:.*]] = tgc.slice_scatter %[[Z]], %arg0 {{.*}}start = #tgc.shape<[0]>
//       CHECK:   %[[S1:.*]] = tgc.slice_scatter %[[Z]], %arg1 {{.*}}start = #tgc.shape<[1]>
//       CHECK:   tgc.add %[[S0]], %[[S1]]
//       CHECK:   %[[G:.*]] = tgc.slice_scatter %[[Z]], %arg1 {{.*}}start = #tgc.shape<[4]>
//       CHECK:   %[[G2:.*]] = tgc.slice_scatter %[[G]], %arg0 {{.*}}start = #tgc.shape<[0]>
//       CHECK:   tgc.add %arg2, %[[S0]]
//       CHECK:   tgc.add %[[S0]], %[[G]] {alpha = 2.000000e+00 : f64}
//   CHECK-NOT:   tgc.cat
func.func @slice_gradients_kept(%a: !tgc.vtensor<[4, 2], f32>, %b: !tgc.vtensor<[4, 2], f32>, %x: !tgc.vtensor<[4, 6], f32>)
    -> (!tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>) {
  %z = tgc.full {dtype = f32, fill_value = 0.000000e+00 : f64, size = #tgc.shape<[4, 6]>} : !tgc.vtensor<[4, 6], f32>
  %0 = tgc.slice_scatter %z, %a {dim = 1 : i64, start = #tgc.shape<[0]>, end = #tgc.shape<[2]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %1 = tgc.slice_scatter %z, %b {dim = 1 : i64, start = #tgc.shape<[1]>, end = #tgc.shape<[3]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %2 = tgc.add %0, %1 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  %3 = tgc.slice_scatter %z, %b {dim = 1 : i64, start = #tgc.shape<[4]>, end = #tgc.shape<[6]>} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[4, 6], f32>
  %4 = tgc.add %3, %0 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  %5 = tgc.add %x, %0 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  %6 = tgc.add %0, %3 {alpha = 2.0 : f64} : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 6], f32>
  return %2, %4, %5, %6 : !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>, !tgc.vtensor<[4, 6], f32>
}
