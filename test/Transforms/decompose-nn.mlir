// RUN: tgc-opt %s --tgc-decompose --split-input-file | FileCheck %s

// group_norm in bf16: computed in f32 on the input viewed as [N, G, C/G * spatial];
// output, mean and rstd rounded once to bf16.
// CHECK-LABEL: func.func @group_norm
//       CHECK:   %[[X:.*]] = tgc.to_dtype %arg0 {dtype = f32}
//       CHECK:   %[[G:.*]] = tgc.view %[[X]] {size = #tgc.shape<[2, 3, 8]>}
//       CHECK:   tgc.sum %[[G]] {dim = array<i64: 2>, keepdim = true}
//       CHECK:   %[[RSTD:.*]] = tgc.rsqrt {{.*}} -> !tgc.vtensor<[2, 3, 1], f32>
//       CHECK:   %[[OUT:.*]] = tgc.view {{.*}} {size = #tgc.shape<[2, 6, 4]>}
//       CHECK:   %[[W:.*]] = tgc.view %arg1 {size = #tgc.shape<[1, 6, 1]>}
//       CHECK:   %[[SCALED:.*]] = tgc.mul %[[OUT]], %[[W]]
//       CHECK:   %[[R2:.*]] = tgc.squeeze %[[RSTD]]
//       CHECK:   %[[O:.*]] = tgc.to_dtype %[[SCALED]] {dtype = bf16}
//       CHECK:   %[[M:.*]] = tgc.to_dtype {{.*}} {dtype = bf16} : !tgc.vtensor<[2, 3], f32>
//       CHECK:   %[[R:.*]] = tgc.to_dtype %[[R2]] {dtype = bf16}
//       CHECK:   return %[[O]], %[[M]], %[[R]]
func.func @group_norm(%x: !tgc.vtensor<[2, 6, 4], bf16>, %w: !tgc.vtensor<[6], bf16>) -> (!tgc.vtensor<[2, 6, 4], bf16>, !tgc.vtensor<[2, 3], bf16>, !tgc.vtensor<[2, 3], bf16>) {
  %o, %m, %r = tgc.group_norm %x weight %w {group = 3 : i64, native} : !tgc.vtensor<[2, 6, 4], bf16>, !tgc.vtensor<[6], bf16> -> !tgc.vtensor<[2, 6, 4], bf16>, !tgc.vtensor<[2, 3], bf16>, !tgc.vtensor<[2, 3], bf16>
  return %o, %m, %r : !tgc.vtensor<[2, 6, 4], bf16>, !tgc.vtensor<[2, 3], bf16>, !tgc.vtensor<[2, 3], bf16>
}

// -----

// A transposed 2-d convolution is the input gradient of the convolution it transposes
// (onto (5 - 1) * 2 - 2 + 2 + 1 + 1 = 10), plus the bias.
// CHECK-LABEL: func.func @transposed_conv
//       CHECK:   %[[G:.*]] = tgc.convolution_backward_input %arg0, %arg1 {dilation = array<i64: 1, 1>, groups = 2 : i64, input_size = #tgc.shape<[2, 6, 10, 10]>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
//       CHECK:   %[[B:.*]] = tgc.view %arg2 {size = #tgc.shape<[1, 6, 1, 1]>}
//       CHECK:   %[[Y:.*]] = tgc.add %[[G]], %[[B]]
//       CHECK:   return %[[Y]]
func.func @transposed_conv(%x: !tgc.vtensor<[2, 4, 5, 5], f32>, %w: !tgc.vtensor<[4, 3, 3, 3], f32>, %b: !tgc.vtensor<[6], f32>) -> !tgc.vtensor<[2, 6, 10, 10], f32> {
  %y = tgc.convolution %x, %w, %b {transposed = true, stride = array<i64: 2>, padding = array<i64: 1>, output_padding = array<i64: 1, 1>, groups = 2 : i64} : !tgc.vtensor<[2, 4, 5, 5], f32>, !tgc.vtensor<[4, 3, 3, 3], f32>, !tgc.vtensor<[6], f32> -> !tgc.vtensor<[2, 6, 10, 10], f32>
  return %y : !tgc.vtensor<[2, 6, 10, 10], f32>
}

// -----

// A 3-d convolution: per depth offset of the kernel, the planes it reads (stride 2) as a
// batch of 2-d images, convolved with that plane of the weight, summed.
// CHECK-LABEL: func.func @conv3d
//       CHECK:   %[[P0:.*]] = tgc.slice %arg0 {dim = 2 : i64, end = #tgc.shape<[3]>, start = #tgc.shape<[0]>, step = 2 : i64}
//       CHECK:   %[[T0:.*]] = tgc.permute %[[P0]] {dims = array<i64: 0, 2, 1, 3, 4>}
//       CHECK:   %[[I0:.*]] = tgc.view %[[T0]] {size = #tgc.shape<[2, 2, 6, 6]>}
//       CHECK:   %[[W0:.*]] = tgc.select %arg1 {dim = 2 : i64, index = 0 : i64}
//       CHECK:   %[[C0:.*]] = tgc.convolution %[[I0]], %[[W0]]
//       CHECK:   tgc.slice %arg0 {dim = 2 : i64, end = #tgc.shape<[4]>, start = #tgc.shape<[1]>, step = 2 : i64}
//       CHECK:   %[[C1:.*]] = tgc.convolution
//       CHECK:   %[[S:.*]] = tgc.add %[[C0]], %[[C1]]
//       CHECK:   %[[V:.*]] = tgc.view %[[S]] {size = #tgc.shape<[1, 2, 3, 4, 4]>}
//       CHECK:   %[[Y:.*]] = tgc.permute %[[V]] {dims = array<i64: 0, 2, 1, 3, 4>}
//       CHECK:   return %[[Y]]
func.func @conv3d(%x: !tgc.vtensor<[1, 2, 5, 6, 6], f32>, %w: !tgc.vtensor<[3, 2, 2, 3, 3], f32>) -> !tgc.vtensor<[1, 3, 2, 4, 4], f32> {
  %y = tgc.convolution %x, %w {stride = array<i64: 2, 1, 1>} : !tgc.vtensor<[1, 2, 5, 6, 6], f32>, !tgc.vtensor<[3, 2, 2, 3, 3], f32> -> !tgc.vtensor<[1, 3, 2, 4, 4], f32>
  return %y : !tgc.vtensor<[1, 3, 2, 4, 4], f32>
}

// -----

// convolution_backward of a 1-d convolution: the 2-d gradient ops on height-1 images,
// and the bias's sum over all but the channels.
// CHECK-LABEL: func.func @conv_backward
//       CHECK:   %[[G:.*]] = tgc.unsqueeze %arg0 {dim = 2 : i64}
//       CHECK:   %[[X:.*]] = tgc.unsqueeze %arg1 {dim = 2 : i64}
//       CHECK:   %[[W:.*]] = tgc.unsqueeze %arg2 {dim = 2 : i64}
//       CHECK:   %[[GI:.*]] = tgc.convolution_backward_input %[[G]], %[[W]] {{{.*}}input_size = #tgc.shape<[2, 3, 1, 8]>, padding = array<i64: 0, 1>
//       CHECK:   %[[GW:.*]] = tgc.convolution_backward_weight %[[G]], %[[X]] {{{.*}}weight_size = #tgc.shape<[4, 3, 1, 3]>}
//       CHECK:   %[[I:.*]] = tgc.squeeze %[[GI]] {dim = array<i64: 2>}
//       CHECK:   %[[WW:.*]] = tgc.squeeze %[[GW]] {dim = array<i64: 2>}
//       CHECK:   %[[B:.*]] = tgc.sum %arg0 {dim = array<i64: 0, 2>}
//       CHECK:   return %[[I]], %[[WW]], %[[B]]
func.func @conv_backward(%g: !tgc.vtensor<[2, 4, 8], f32>, %x: !tgc.vtensor<[2, 3, 8], f32>, %w: !tgc.vtensor<[4, 3, 3], f32>) -> (!tgc.vtensor<[2, 3, 8], f32>, !tgc.vtensor<[4, 3, 3], f32>, !tgc.vtensor<[4], f32>) {
  %gi, %gw, %gb = tgc.convolution_backward %g, %x, %w {padding = array<i64: 1>} : !tgc.vtensor<[2, 4, 8], f32>, !tgc.vtensor<[2, 3, 8], f32>, !tgc.vtensor<[4, 3, 3], f32> -> !tgc.vtensor<[2, 3, 8], f32>, !tgc.vtensor<[4, 3, 3], f32>, !tgc.vtensor<[4], f32>
  return %gi, %gw, %gb : !tgc.vtensor<[2, 3, 8], f32>, !tgc.vtensor<[4, 3, 3], f32>, !tgc.vtensor<[4], f32>
}

// -----

// layer_norm_backward: rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad * w;
// the weight's gradient sums grad * xhat over the rows, the bias's grad.
// CHECK-LABEL: func.func @layer_norm_backward
//       CHECK:   %[[G:.*]] = tgc.mul %arg0, %arg4
//       CHECK:   %[[C:.*]] = tgc.sub %arg1, %arg2
//       CHECK:   %[[XHAT:.*]] = tgc.mul %[[C]], %arg3
//       CHECK:   %[[MG:.*]] = tgc.div
//       CHECK:   tgc.mul %[[G]], %[[XHAT]]
//       CHECK:   %[[MGX:.*]] = tgc.div
//       CHECK:   %[[D:.*]] = tgc.sub %[[G]], %[[MG]]
//       CHECK:   %[[E:.*]] = tgc.mul %[[XHAT]], %[[MGX]]
//       CHECK:   %[[F:.*]] = tgc.sub %[[D]], %[[E]]
//       CHECK:   %[[GI:.*]] = tgc.mul %arg3, %[[F]]
//       CHECK:   %[[GX:.*]] = tgc.mul %arg0, %[[XHAT]]
//       CHECK:   %[[GW:.*]] = tgc.sum %[[GX]] {dim = array<i64: 0>}
//       CHECK:   %[[GB:.*]] = tgc.sum %arg0 {dim = array<i64: 0>}
//       CHECK:   return %[[GI]], %[[GW]], %[[GB]]
func.func @layer_norm_backward(%g: !tgc.vtensor<[4, 8], f32>, %x: !tgc.vtensor<[4, 8], f32>, %m: !tgc.vtensor<[4, 1], f32>, %r: !tgc.vtensor<[4, 1], f32>, %w: !tgc.vtensor<[8], f32>) -> (!tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], f32>, !tgc.vtensor<[8], f32>) {
  %gi, %gw, %gb = tgc.layer_norm_backward %g, %x, %m, %r weight %w {normalized_shape = array<i64: 8>} : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 1], f32>, !tgc.vtensor<[4, 1], f32>, !tgc.vtensor<[8], f32> -> !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], f32>, !tgc.vtensor<[8], f32>
  return %gi, %gw, %gb : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], f32>, !tgc.vtensor<[8], f32>
}

// -----

// Functional batch norm in eval mode: the running statistics come back unchanged (this
// replaced 5 results with 3 and crashed).
// CHECK-LABEL: func.func @batch_norm_eval_functional
//       CHECK:   %[[Y:.*]] = tgc.mul
//       CHECK:   return %[[Y]], %arg1, %arg2
func.func @batch_norm_eval_functional(%x: !tgc.vtensor<[3, 2, 4], f32>, %rm: !tgc.vtensor<[2], f32>, %rv: !tgc.vtensor<[2], f32>) -> (!tgc.vtensor<[3, 2, 4], f32>, !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32>) {
  %o, %m, %s, %nm, %nv = tgc.batch_norm %x running %rm, %rv {training = false, momentum = 0.1 : f64, eps = 1.0e-5 : f64, functional} : !tgc.vtensor<[3, 2, 4], f32>, !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32> -> !tgc.vtensor<[3, 2, 4], f32>, !tgc.vtensor<[0], f32>, !tgc.vtensor<[0], f32>, !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32>
  return %o, %nm, %nv : !tgc.vtensor<[3, 2, 4], f32>, !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32>
}

// -----

// Adaptive pooling to sizes that do not divide the input's: per pooled dimension a
// product with its averaging matrix ([in, out]; row 1 of the 5 -> 3 one overlaps two
// windows: 1/2 and 1/3).
// CHECK-LABEL: func.func @adaptive_pool
//   CHECK-DAG:   %[[W:.*]] = tgc.constant dense<{{\[\[}}5.000000e-01, 0.000000e+00], [5.000000e-01, 0.000000e+00], [0.000000e+00, 5.000000e-01], [0.000000e+00, 5.000000e-01]]> : tensor<4x2xf32>
//   CHECK-DAG:   %[[H:.*]] = tgc.constant dense<{{\[\[}}5.000000e-01, 0.000000e+00, 0.000000e+00], [5.000000e-01, 0.333333343, 0.000000e+00]{{.*}}> : tensor<5x3xf32>
//       CHECK:   tgc.transpose %arg0 {dim0 = 2 : i64, dim1 = 3 : i64}
//       CHECK:   tgc.mm %{{.*}}, %[[H]] : !tgc.vtensor<[24, 5], f32>, !tgc.vtensor<[5, 3], f32>
//       CHECK:   tgc.mm %{{.*}}, %[[W]] : !tgc.vtensor<[18, 4], f32>, !tgc.vtensor<[4, 2], f32>
func.func @adaptive_pool(%x: !tgc.vtensor<[2, 3, 5, 4], f32>) -> !tgc.vtensor<[2, 3, 3, 2], f32> {
  %0 = tgc.adaptive_avg_pool %x {output_size = array<i64: 3, 2>} : !tgc.vtensor<[2, 3, 5, 4], f32> -> !tgc.vtensor<[2, 3, 3, 2], f32>
  return %0 : !tgc.vtensor<[2, 3, 3, 2], f32>
}

// -----

// max_pool3d: one strided slice per window position (8), stacked; the maximum over
// them and, for the indices, the window origin (d * 16 + h * 4 + w) plus the winning
// position's offset.
// CHECK-LABEL: func.func @max_pool3d
//   CHECK-DAG:   %[[OFF:.*]] = tgc.constant dense<[0, 1, 4, 5, 16, 17, 20, 21]> : tensor<8xi64>
//   CHECK-DAG:   %[[ORIGIN:.*]] = tgc.constant dense<{{\[\[\[}}0, 2], [8, 10]], {{\[\[}}16, 18], [24, 26]]]> : tensor<2x2x2xi64>
// CHECK-COUNT-24:   tgc.slice
//       CHECK:   %[[ALL:.*]] = tgc.cat {{.*}} {dim = 5 : i64}
//       CHECK:   %[[V:.*]], %[[K:.*]] = tgc.max_dim %[[ALL]] {dim = 5 : i64}
//       CHECK:   %[[O:.*]] = tgc.index %[[OFF]][%[[K]]]
//       CHECK:   %[[I:.*]] = tgc.add %[[O]], %[[ORIGIN]]
//       CHECK:   return %[[V]], %[[I]]
func.func @max_pool3d(%x: !tgc.vtensor<[1, 2, 3, 4, 4], f32>) -> (!tgc.vtensor<[1, 2, 2, 2, 2], f32>, !tgc.vtensor<[1, 2, 2, 2, 2], i64>) {
  %0, %1 = tgc.max_pool3d %x {kernel_size = array<i64: 2, 2, 2>, stride = array<i64: 1, 2, 2>, with_indices} : !tgc.vtensor<[1, 2, 3, 4, 4], f32> -> !tgc.vtensor<[1, 2, 2, 2, 2], f32>, !tgc.vtensor<[1, 2, 2, 2, 2], i64>
  return %0, %1 : !tgc.vtensor<[1, 2, 2, 2, 2], f32>, !tgc.vtensor<[1, 2, 2, 2, 2], i64>
}

// -----

// avg_pool3d without counting the padding: the sum over the window slices of the
// zero-padded input (the pad is concatenated zeros), divided by each window's count of
// input elements (corner windows see 1 element, the middle one 8).
// CHECK-LABEL: func.func @avg_pool3d
//       CHECK:   %[[D:.*]] = tgc.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 1.000000e+00], [2.000000e+00, 4.000000e+00, 2.000000e+00]{{.*}}8.000000e+00{{.*}}> : tensor<3x3x3xf32>
//       CHECK:   %[[S:.*]] = tgc.add
//       CHECK:   %[[Y:.*]] = tgc.div %{{.*}}, %[[D]]
//       CHECK:   return %[[Y]]
func.func @avg_pool3d(%x: !tgc.vtensor<[1, 1, 2, 2, 2], f32>) -> !tgc.vtensor<[1, 1, 3, 3, 3], f32> {
  %0 = tgc.avg_pool3d %x {kernel_size = array<i64: 2>, stride = array<i64: 1>, padding = array<i64: 1>, count_include_pad = false} : !tgc.vtensor<[1, 1, 2, 2, 2], f32> -> !tgc.vtensor<[1, 1, 3, 3, 3], f32>
  return %0 : !tgc.vtensor<[1, 1, 3, 3, 3], f32>
}

// -----

// grid_sampler_2d, nearest with border padding and align_corners: x and y unnormalized
// (x * (7 - 1) / 2 + 3), clamped to the image, rounded; the tap reads image[n, y, x]
// (the input viewed [N, H, W, C]) by advanced indexing, 0 outside the image.
// CHECK-LABEL: func.func @grid_sampler_nearest
//   CHECK-DAG:   %[[THREE:.*]] = arith.constant 3.0
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.0
//       CHECK:   %[[IMAGE:.*]] = tgc.permute %arg0 {dims = array<i64: 0, 2, 3, 1>}
//       CHECK:   %[[N:.*]] = tgc.arange {dtype = i64, end = #tgc.shape<[2]>
//       CHECK:   %[[BATCH:.*]] = tgc.view %[[N]] {size = #tgc.shape<[2, 1, 1]>}
//       CHECK:   %[[GX:.*]] = tgc.select %arg1 {dim = 3 : i64, index = 0 : i64}
//       CHECK:   %[[SX:.*]] = tgc.mul %[[GX]], %[[THREE]]
//       CHECK:   %[[UX:.*]] = tgc.add %[[SX]], %[[THREE]]
//       CHECK:   %[[CX:.*]] = tgc.clamp %[[UX]] {max = 6.0{{.*}}, min = 0.0
//       CHECK:   %[[RX:.*]] = tgc.round %[[CX]]
//       CHECK:   %[[RY:.*]] = tgc.round
//       CHECK:   %[[INX:.*]] = tgc.logical_and
//       CHECK:   %[[INY:.*]] = tgc.logical_and
//       CHECK:   %[[INSIDE:.*]] = tgc.logical_and %[[INX]], %[[INY]]
//       CHECK:   %[[X:.*]] = tgc.where %[[INSIDE]], %[[RX]], %[[ZERO]]
//       CHECK:   %[[XI:.*]] = tgc.to_dtype %[[X]] {dtype = i64}
//       CHECK:   %[[YI:.*]] = tgc.to_dtype {{.*}} {dtype = i64}
//       CHECK:   %[[TAP:.*]] = tgc.index %[[IMAGE]][%[[BATCH]], %[[YI]], %[[XI]]] {{.*}} -> !tgc.vtensor<[2, 4, 6, 3], f32>
//       CHECK:   %[[KEEP:.*]] = tgc.unsqueeze %[[INSIDE]] {dim = 3 : i64}
//       CHECK:   %[[V:.*]] = tgc.where %[[KEEP]], %[[TAP]], %[[ZERO]]
//       CHECK:   %[[OUT:.*]] = tgc.permute %[[V]] {dims = array<i64: 0, 3, 1, 2>}
//       CHECK:   return %[[OUT]]
func.func @grid_sampler_nearest(%x: !tgc.vtensor<[2, 3, 5, 7], f32>, %g: !tgc.vtensor<[2, 4, 6, 2], f32>) -> !tgc.vtensor<[2, 3, 4, 6], f32> {
  %y = tgc.grid_sampler_2d %x, %g {interpolation_mode = 1 : i64, padding_mode = 1 : i64, align_corners = true} : !tgc.vtensor<[2, 3, 5, 7], f32>, !tgc.vtensor<[2, 4, 6, 2], f32> -> !tgc.vtensor<[2, 3, 4, 6], f32>
  return %y : !tgc.vtensor<[2, 3, 4, 6], f32>
}

// -----

// Bilinear sampling reads four taps; bicubic sixteen.
// CHECK-LABEL: func.func @grid_sampler_taps
//   CHECK-COUNT-4:   tgc.index
//       CHECK:   return
// CHECK-LABEL: func.func @grid_sampler_bicubic
//   CHECK-COUNT-16:   tgc.index
//       CHECK:   return
func.func @grid_sampler_taps(%x: !tgc.vtensor<[1, 2, 4, 4], f32>, %g: !tgc.vtensor<[1, 3, 3, 2], f32>) -> !tgc.vtensor<[1, 2, 3, 3], f32> {
  %y = tgc.grid_sampler_2d %x, %g {interpolation_mode = 0 : i64, padding_mode = 2 : i64, align_corners = false} : !tgc.vtensor<[1, 2, 4, 4], f32>, !tgc.vtensor<[1, 3, 3, 2], f32> -> !tgc.vtensor<[1, 2, 3, 3], f32>
  return %y : !tgc.vtensor<[1, 2, 3, 3], f32>
}
func.func @grid_sampler_bicubic(%x: !tgc.vtensor<[1, 2, 4, 4], f32>, %g: !tgc.vtensor<[1, 3, 3, 2], f32>) -> !tgc.vtensor<[1, 2, 3, 3], f32> {
  %y = tgc.grid_sampler_2d %x, %g {interpolation_mode = 2 : i64, padding_mode = 0 : i64, align_corners = false} : !tgc.vtensor<[1, 2, 4, 4], f32>, !tgc.vtensor<[1, 3, 3, 2], f32> -> !tgc.vtensor<[1, 2, 3, 3], f32>
  return %y : !tgc.vtensor<[1, 2, 3, 3], f32>
}

// -----

// embedding_bag, mean, padding_idx 2: each entry's bag is the running count of offsets
// at or before it, minus one; padding entries go to the extra bag 4. The rows are
// scatter-added into 5 bags, the first 4 kept and divided by their sizes (at least 1).
// CHECK-LABEL: func.func @embedding_bag_mean
//   CHECK-DAG:   %[[TWO:.*]] = arith.constant 2 : i64
//   CHECK-DAG:   %[[FOUR:.*]] = arith.constant 4 : i64
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant 1 : i64
//       CHECK:   %[[Z:.*]] = tgc.full {{.*}} : !tgc.vtensor<[9], i64>
//       CHECK:   %[[ONES:.*]] = tgc.full {dtype = i64, fill_value = 1 : i64, size = #tgc.shape<[4]>}
//       CHECK:   %[[STARTS:.*]] = tgc.scatter_add %[[Z]], %arg2, %[[ONES]] {dim = 0 : i64}
//       CHECK:   %[[RUNNING:.*]] = tgc.cumsum %[[STARTS]]
//       CHECK:   %[[HEAD:.*]] = tgc.slice %[[RUNNING]] {end = #tgc.shape<[8]>
//       CHECK:   %[[BAG:.*]] = tgc.sub %[[HEAD]], %[[ONE]]
//       CHECK:   %[[IN:.*]] = tgc.lt %[[BAG]], %[[FOUR]]
//       CHECK:   %[[NOTPAD:.*]] = tgc.ne %arg1, %[[TWO]]
//       CHECK:   %[[KEPT:.*]] = tgc.logical_and %[[IN]], %[[NOTPAD]]
//       CHECK:   %[[B:.*]] = tgc.where %[[KEPT]], %[[BAG]], %[[FOUR]]
//       CHECK:   %[[ROWS:.*]] = tgc.embedding %arg0, %arg1
//       CHECK:   %[[RB:.*]] = tgc.expand {{.*}} {size = #tgc.shape<[8, 3]>}
//       CHECK:   %[[SIZES:.*]] = tgc.scatter_add {{.*}}, %[[B]], {{.*}} -> !tgc.vtensor<[5], i64>
//       CHECK:   %[[SUMS:.*]] = tgc.scatter_add {{.*}}, %[[RB]], %[[ROWS]] {dim = 0 : i64} {{.*}} -> !tgc.vtensor<[5, 3], f32>
//       CHECK:   %[[KEEP:.*]] = tgc.slice %[[SUMS]] {end = #tgc.shape<[4]>
//       CHECK:   %[[N:.*]] = tgc.clamp {{.*}} {min = 1 : i64}
//       CHECK:   %[[D:.*]] = tgc.to_dtype %[[N]] {dtype = f32}
//       CHECK:   %[[DV:.*]] = tgc.unsqueeze %[[D]] {dim = 1 : i64}
//       CHECK:   %[[MEAN:.*]] = tgc.div %[[KEEP]], %[[DV]]
//       CHECK:   return %[[MEAN]]
func.func @embedding_bag_mean(%w: !tgc.vtensor<[10, 3], f32>, %i: !tgc.vtensor<[8], i64>, %o: !tgc.vtensor<[4], i64>) -> !tgc.vtensor<[4, 3], f32> {
  %r:4 = tgc.embedding_bag %w, %i, %o {mode = 1 : i64, padding_idx = 2 : i64} : !tgc.vtensor<[10, 3], f32>, !tgc.vtensor<[8], i64>, !tgc.vtensor<[4], i64> -> !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[8], i64>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[4], i64>
  return %r#0 : !tgc.vtensor<[4, 3], f32>
}

// -----

// affine_grid_generator (align_corners, 2 x 3 output): the base grid of (x, y, 1)
// with x fastest, times theta transposed.
// CHECK-LABEL: func.func @affine_grid
//       CHECK:   %[[BASE:.*]] = tgc.constant dense<{{\[\[}}[-1.000000e+00, -1.000000e+00, 1.000000e+00], [0.000000e+00, -1.000000e+00, 1.000000e+00], [1.000000e+00, -1.000000e+00, 1.000000e+00], [-1.000000e+00, 1.000000e+00, 1.000000e+00], [0.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]]>
//       CHECK:   %[[B:.*]] = tgc.expand %[[BASE]] {size = #tgc.shape<[2, 6, 3]>}
//       CHECK:   %[[T:.*]] = tgc.transpose %arg0 {dim0 = 1 : i64, dim1 = 2 : i64}
//       CHECK:   %[[G:.*]] = tgc.bmm %[[B]], %[[T]]
//       CHECK:   tgc.view %[[G]] {size = #tgc.shape<[2, 2, 3, 2]>}
func.func @affine_grid(%t: !tgc.vtensor<[2, 2, 3], f32>) -> !tgc.vtensor<[2, 2, 3, 2], f32> {
  %y = tgc.affine_grid %t {size = array<i64: 2, 1, 2, 3>, align_corners = true} : !tgc.vtensor<[2, 2, 3], f32> -> !tgc.vtensor<[2, 2, 3, 2], f32>
  return %y : !tgc.vtensor<[2, 2, 3, 2], f32>
}

// -----

// _weight_norm (dim 2): v * (g / sqrt(sum(v^2))) with the sum over the other dimensions.
// CHECK-LABEL: func.func @weight_norm
//       CHECK:   %[[SQ:.*]] = tgc.mul %arg0, %arg0
//       CHECK:   %[[SUM:.*]] = tgc.sum %[[SQ]] {dim = array<i64: 0, 1>, keepdim = true}
//       CHECK:   %[[NORM:.*]] = tgc.sqrt %[[SUM]]
//       CHECK:   %[[SCALE:.*]] = tgc.div %arg1, %[[NORM]]
//       CHECK:   %[[W:.*]] = tgc.mul %arg0, %[[SCALE]]
//       CHECK:   return %[[W]]
func.func @weight_norm(%v: !tgc.vtensor<[8, 4, 3], f32>, %g: !tgc.vtensor<[1, 1, 3], f32>) -> !tgc.vtensor<[8, 4, 3], f32> {
  %w = tgc.weight_norm %v, %g {dim = 2 : i64} : !tgc.vtensor<[8, 4, 3], f32>, !tgc.vtensor<[1, 1, 3], f32> -> !tgc.vtensor<[8, 4, 3], f32>
  return %w : !tgc.vtensor<[8, 4, 3], f32>
}
