// RUN: tgc-opt %s --tgc-decompose --split-input-file | FileCheck %s

// Reflect padding of the last dimension: mirrored single-element slices (without the
// edge) around the input; constant padding: filled tensors, after slicing away a
// negative amount.
// CHECK-LABEL: func.func @pad
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[2, 5], f32>)
//   CHECK-DAG:   %[[L2:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[3]>, start = #tgc.shape<[2]>}
//   CHECK-DAG:   %[[L1:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[2]>, start = #tgc.shape<[1]>}
//   CHECK-DAG:   %[[R1:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[4]>, start = #tgc.shape<[3]>}
//       CHECK:   %[[REFLECT:.*]] = tgc.cat %[[L2]], %[[L1]], %[[X]], %[[R1]] {dim = 1 : i64}
//  CHECK-SAME:     -> !tgc.vtensor<[2, 8], f32>
//       CHECK:   %[[CUT:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[5]>, start = #tgc.shape<[1]>}
//       CHECK:   %[[FILL:.*]] = tgc.full {dtype = f32, fill_value = 2.500000e+00 : f64, size = #tgc.shape<[2, 3]>}
//       CHECK:   %[[CONST:.*]] = tgc.cat %[[CUT]], %[[FILL]] {dim = 1 : i64}
//  CHECK-SAME:     -> !tgc.vtensor<[2, 7], f32>
//       CHECK:   return %[[REFLECT]], %[[CONST]]
func.func @pad(%x: !tgc.vtensor<[2, 5], f32>) -> (!tgc.vtensor<[2, 8], f32>, !tgc.vtensor<[2, 7], f32>) {
  %0 = tgc.pad %x {pad = array<i64: 2, 1>, mode = "reflect"} : !tgc.vtensor<[2, 5], f32> -> !tgc.vtensor<[2, 8], f32>
  %1 = tgc.pad %x {pad = array<i64: -1, 3>, value = 2.5 : f64} : !tgc.vtensor<[2, 5], f32> -> !tgc.vtensor<[2, 7], f32>
  return %0, %1 : !tgc.vtensor<[2, 8], f32>, !tgc.vtensor<[2, 7], f32>
}

// -----

// Circular padding and roll: the wrapped-around end first. Replicate: the edge repeated.
// CHECK-LABEL: func.func @circular_roll_replicate
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[s0, 6], f32>)
//       CHECK:   %[[TAIL:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[6]>, start = #tgc.shape<[4]>}
//       CHECK:   %[[HEAD:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[1]>, start = #tgc.shape<[0]>}
//       CHECK:   tgc.cat %[[TAIL]], %[[X]], %[[HEAD]] {dim = 1 : i64}
//       CHECK:   %[[RT:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[6]>, start = #tgc.shape<[4]>}
//       CHECK:   %[[RH:.*]] = tgc.slice %[[X]] {dim = 1 : i64, end = #tgc.shape<[4]>, start = #tgc.shape<[0]>}
//       CHECK:   tgc.cat %[[RT]], %[[RH]] {dim = 1 : i64}
//       CHECK:   %[[FIRST:.*]] = tgc.slice %[[X]] {end = #tgc.shape<[1]>, start = #tgc.shape<[0]>}
//       CHECK:   %[[LAST:.*]] = tgc.slice %[[X]] {end = #tgc.shape<[s0]>, start = #tgc.shape<[s0 - 1]>}
//       CHECK:   tgc.cat %[[FIRST]], %[[FIRST]], %[[X]], %[[LAST]] :
//  CHECK-SAME:     -> !tgc.vtensor<[s0 + 3, 6], f32>
func.func @circular_roll_replicate(%x: !tgc.vtensor<[s0, 6], f32>) -> (!tgc.vtensor<[s0, 9], f32>, !tgc.vtensor<[s0, 6], f32>, !tgc.vtensor<[s0 + 3, 6], f32>) {
  %0 = tgc.pad %x {pad = array<i64: 2, 1>, mode = "circular"} : !tgc.vtensor<[s0, 6], f32> -> !tgc.vtensor<[s0, 9], f32>
  %1 = tgc.roll %x {shifts = array<i64: -4>, dims = array<i64: 1>} : !tgc.vtensor<[s0, 6], f32> -> !tgc.vtensor<[s0, 6], f32>
  %2 = tgc.pad %x {pad = array<i64: 0, 0, 2, 1>, mode = "replicate"} : !tgc.vtensor<[s0, 6], f32> -> !tgc.vtensor<[s0 + 3, 6], f32>
  return %0, %1, %2 : !tgc.vtensor<[s0, 9], f32>, !tgc.vtensor<[s0, 6], f32>, !tgc.vtensor<[s0 + 3, 6], f32>
}

// -----

// x[:, i] (a None entry first): the indexed dimension permuted to the front, a leading
// index, and the broadcast dimensions moved back in place of dimension 1. Separated
// indexed dimensions put the broadcast dimensions first (no permute back).
// index_select is an index of one dimension.
// CHECK-LABEL: func.func @index_dims
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[2, 3, 4], f32>, %[[I:.*]]: !tgc.vtensor<[5], i64>)
//       CHECK:   %[[P:.*]] = tgc.permute %[[X]] {dims = array<i64: 1, 0, 2>}
//       CHECK:   %[[G:.*]] = tgc.index %[[P]][%[[I]]] {{.*}} -> !tgc.vtensor<[5, 2, 4], f32>
//       CHECK:   %[[R:.*]] = tgc.permute %[[G]] {dims = array<i64: 1, 0, 2>} {{.*}} -> !tgc.vtensor<[2, 5, 4], f32>
//       CHECK:   %[[P2:.*]] = tgc.permute %[[X]] {dims = array<i64: 0, 2, 1>}
//       CHECK:   %[[S:.*]] = tgc.index %[[P2]][%[[I]], %[[I]]] {{.*}} -> !tgc.vtensor<[5, 3], f32>
//       CHECK:   %[[P3:.*]] = tgc.permute %[[X]] {dims = array<i64: 2, 0, 1>}
//       CHECK:   %[[G3:.*]] = tgc.index %[[P3]][%[[I]]] {{.*}} -> !tgc.vtensor<[5, 2, 3], f32>
//       CHECK:   %[[R3:.*]] = tgc.permute %[[G3]] {dims = array<i64: 1, 2, 0>}
//       CHECK:   return %[[R]], %[[S]], %[[R3]]
func.func @index_dims(%x: !tgc.vtensor<[2, 3, 4], f32>, %i: !tgc.vtensor<[5], i64>) -> (!tgc.vtensor<[2, 5, 4], f32>, !tgc.vtensor<[5, 3], f32>, !tgc.vtensor<[2, 3, 5], f32>) {
  %0 = tgc.index %x[%i] {dims = array<i64: 1>} : !tgc.vtensor<[2, 3, 4], f32>, !tgc.vtensor<[5], i64> -> !tgc.vtensor<[2, 5, 4], f32>
  %1 = tgc.index %x[%i, %i] {dims = array<i64: 0, 2>} : !tgc.vtensor<[2, 3, 4], f32>, !tgc.vtensor<[5], i64>, !tgc.vtensor<[5], i64> -> !tgc.vtensor<[5, 3], f32>
  %2 = tgc.index_select %x, %i {dim = -1 : i64} : !tgc.vtensor<[2, 3, 4], f32>, !tgc.vtensor<[5], i64> -> !tgc.vtensor<[2, 3, 5], f32>
  return %0, %1, %2 : !tgc.vtensor<[2, 5, 4], f32>, !tgc.vtensor<[5, 3], f32>, !tgc.vtensor<[2, 3, 5], f32>
}

// -----

// repeat: [1, size] views expanded to [repeats, size], copied and flattened.
// copy: src expanded and converted to self's sizes and dtype.
// CHECK-LABEL: func.func @repeat_copy
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[2, 3], f32>, %[[S:.*]]: !tgc.vtensor<[3], f64>)
//       CHECK:   %[[V:.*]] = tgc.view %[[X]] {size = #tgc.shape<[1, 1, 1, 2, 1, 3]>}
//       CHECK:   %[[E:.*]] = tgc.expand %[[V]] {size = #tgc.shape<[4, 1, 1, 2, 2, 3]>}
//       CHECK:   %[[C:.*]] = tgc.clone %[[E]]
//       CHECK:   %[[R:.*]] = tgc.view %[[C]] {size = #tgc.shape<[4, 2, 6]>}
//       CHECK:   %[[SE:.*]] = tgc.expand %[[S]] {size = #tgc.shape<[2, 3]>}
//       CHECK:   %[[SC:.*]] = tgc.to_dtype %[[SE]] {dtype = f32}
//       CHECK:   %[[CP:.*]] = tgc.clone %[[SC]]
//       CHECK:   return %[[R]], %[[CP]]
func.func @repeat_copy(%x: !tgc.vtensor<[2, 3], f32>, %s: !tgc.vtensor<[3], f64>) -> (!tgc.vtensor<[4, 2, 6], f32>, !tgc.vtensor<[2, 3], f32>) {
  %0 = tgc.repeat %x {repeats = array<i64: 4, 1, 2>} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[4, 2, 6], f32>
  %1 = tgc.copy %x, %s : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[3], f64> -> !tgc.vtensor<[2, 3], f32>
  return %0, %1 : !tgc.vtensor<[4, 2, 6], f32>, !tgc.vtensor<[2, 3], f32>
}

// -----

// Upsampling: products with constant interpolation matrices, the last dimension from
// the right ([in, out]), the one before from the left ([out, in]). Bilinear 2 -> 3 with
// align_corners: output 1 is the mean of inputs 0 and 1.
// CHECK-LABEL: func.func @upsample
//   CHECK-DAG:   %[[W:.*]] = tgc.constant dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.666666686, 0.333333343], [0.333333343, 0.666666686], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
//   CHECK-DAG:   %[[WT:.*]] = tgc.constant dense<{{\[}}[1.000000e+00, 5.000000e-01, 0.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00]]> : tensor<2x3xf32>
//       CHECK:   tgc.mm %{{.*}}, %[[WT]]
//       CHECK:   tgc.expand %[[W]]
//       CHECK:   tgc.bmm
func.func @upsample(%x: !tgc.vtensor<[1, 1, 2, 2], f32>) -> !tgc.vtensor<[1, 1, 4, 3], f32> {
  %0 = tgc.upsample %x {mode = "linear", output_size = array<i64: 4, 3>, align_corners = true} : !tgc.vtensor<[1, 1, 2, 2], f32> -> !tgc.vtensor<[1, 1, 4, 3], f32>
  return %0 : !tgc.vtensor<[1, 1, 4, 3], f32>
}

// -----

// Bicubic 4 -> 2 without align_corners: source positions 0.5 and 2.5, cubic convolution
// (A = -0.75) weights -0.09375, 0.59375, 0.59375, -0.09375 at floor - 1 .. floor + 2, the
// positions outside the input clamped to its border (so the border inputs sum two
// weights: 0.5).
// CHECK-LABEL: func.func @upsample_bicubic
//   CHECK-DAG:   %[[W:.*]] = tgc.constant dense<{{\[}}[5.000000e-01, 5.937500e-01, -9.375000e-02, 0.000000e+00], [0.000000e+00, -9.375000e-02, 5.937500e-01, 5.000000e-01]]> : tensor<2x4xf32>
//   CHECK-DAG:   %[[WT:.*]] = tgc.constant dense<{{\[}}[5.000000e-01, 0.000000e+00], [5.937500e-01, -9.375000e-02], [-9.375000e-02, 5.937500e-01], [0.000000e+00, 5.000000e-01]]> : tensor<4x2xf32>
//       CHECK:   tgc.mm %{{.*}}, %[[WT]]
//       CHECK:   tgc.expand %[[W]]
func.func @upsample_bicubic(%x: !tgc.vtensor<[1, 1, 4, 4], f32>) -> !tgc.vtensor<[1, 1, 2, 2], f32> {
  %0 = tgc.upsample %x {mode = "cubic", output_size = array<i64: 2, 2>} : !tgc.vtensor<[1, 1, 4, 4], f32> -> !tgc.vtensor<[1, 1, 2, 2], f32>
  return %0 : !tgc.vtensor<[1, 1, 2, 2], f32>
}

// -----

// Trilinear: the depth is resampled on the input viewed as [N, C, D, H*W].
// CHECK-LABEL: func.func @upsample_trilinear
//       CHECK:   %[[V:.*]] = tgc.view %{{.*}} {size = #tgc.shape<[1, 2, 2, 12]>}
//       CHECK:   %[[P:.*]] = tgc.bmm %{{.*}}, %{{.*}} : {{.*}} -> !tgc.vtensor<[2, 4, 12], f32>
//       CHECK:   tgc.view %{{.*}} {size = #tgc.shape<[1, 2, 4, 3, 4]>}
func.func @upsample_trilinear(%x: !tgc.vtensor<[1, 2, 2, 3, 2], f32>) -> !tgc.vtensor<[1, 2, 4, 3, 4], f32> {
  %0 = tgc.upsample %x {mode = "linear", output_size = array<i64: 4, 3, 4>} : !tgc.vtensor<[1, 2, 2, 3, 2], f32> -> !tgc.vtensor<[1, 2, 4, 3, 4], f32>
  return %0 : !tgc.vtensor<[1, 2, 4, 3, 4], f32>
}

// -----

// as_strided that only changes the strides of size-1 dimensions is a copy.
// CHECK-LABEL: func.func @as_strided_restride
//       CHECK:   %[[C:.*]] = tgc.clone %arg0
//       CHECK:   return %[[C]]
func.func @as_strided_restride(%x: !tgc.vtensor<[2, 64, 1, 1], f32>) -> !tgc.vtensor<[2, 64, 1, 1], f32> {
  %0 = tgc.as_strided %x {size = #tgc.shape<[2, 64, 1, 1]>, stride = #tgc.shape<[64, 1, 64, 64]>} : !tgc.vtensor<[2, 64, 1, 1], f32> -> !tgc.vtensor<[2, 64, 1, 1], f32>
  return %0 : !tgc.vtensor<[2, 64, 1, 1], f32>
}

// -----

// unbind: one select per index of the dimension.
// CHECK-LABEL: func.func @unbind
//       CHECK:   %[[A:.*]] = tgc.select %arg0 {dim = 1 : i64, index = 0 : i64}
//       CHECK:   %[[B:.*]] = tgc.select %arg0 {dim = 1 : i64, index = 1 : i64}
//       CHECK:   return %[[A]], %[[B]]
func.func @unbind(%x: !tgc.vtensor<[3, 2, 4], f32>) -> (!tgc.vtensor<[3, 4], f32>, !tgc.vtensor<[3, 4], f32>) {
  %0:2 = tgc.unbind %x {dim = 1 : i64} : !tgc.vtensor<[3, 2, 4], f32> -> !tgc.vtensor<[3, 4], f32>, !tgc.vtensor<[3, 4], f32>
  return %0#0, %0#1 : !tgc.vtensor<[3, 4], f32>, !tgc.vtensor<[3, 4], f32>
}
