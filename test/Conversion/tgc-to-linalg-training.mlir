// RUN: tgc-opt %s --convert-tgc-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// grad_weight: im2col in the GEMM's layout [G, N, OH, OW, C/G, KH, KW], grad_output
// rearranged to [G, F/G, N*OH*OW], one batch_matmul over the groups (BLAS), reshaped to
// the weight's sizes.
// CHECK-DAG: #[[COLS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0 * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @convolution_backward_weight
//       CHECK:   %[[PAD:.*]] = tensor.pad
//       CHECK:   %[[UNFOLD:.*]] = linalg.generic {indexing_maps = [#[[COLS]], {{.*}}]{{.*}} ins(%[[PAD]] : tensor<?x4x11x11xf32>) outs(%{{.*}} : tensor<2x?x5x5x2x3x3xf32>)
//       CHECK:   %[[COLS2:.*]] = tensor.collapse_shape %[[UNFOLD]] {{\[\[}}0], [1, 2, 3], [4, 5, 6]] : tensor<2x?x5x5x2x3x3xf32> into tensor<2x?x18xf32>
//       CHECK:   tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]]{{.*}} into tensor<?x2x3x5x5xf32>
//       CHECK:   %[[T:.*]] = linalg.transpose {{.*}} permutation = [1, 2, 0, 3, 4]
//       CHECK:   %[[ROWS:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1], [2, 3, 4]] : tensor<2x3x?x5x5xf32> into tensor<2x3x?xf32>
//       CHECK:   %[[P:.*]] = linalg.batch_matmul ins(%[[ROWS]], %[[COLS2]] : tensor<2x3x?xf32>, tensor<2x?x18xf32>) outs(%{{.*}} : tensor<2x3x18xf32>)
//       CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2]] : tensor<2x3x18xf32> into tensor<6x18xf32>
//       CHECK:   %[[W:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2, 3]] output_shape [6, 2, 3, 3]
//       CHECK:   return %[[W]]
func.func @convolution_backward_weight(%g: !tgc.vtensor<[s0, 6, 5, 5], f32>, %x: !tgc.vtensor<[s0, 4, 9, 9], f32>) -> !tgc.vtensor<[6, 2, 3, 3], f32> {
  %0 = tgc.convolution_backward_weight %g, %x {weight_size = #tgc.shape<[6, 2, 3, 3]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 2 : i64} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[s0, 4, 9, 9], f32> -> !tgc.vtensor<[6, 2, 3, 3], f32>
  return %0 : !tgc.vtensor<[6, 2, 3, 3], f32>
}

// -----

// grad_input: weight^T @ grad_output per (batch, group) as a batch_matmul reading the
// weight transposed (BLAS), then col2im as a gather over the window: input (h, w)
// reads column (oh, ow) when h + padding - kh * dilation = oh * stride.
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[G:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @convolution_backward_input
//       CHECK:   %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<2x3x18xf32>) outs(%{{.*}} : tensor<?x2x3x18xf32>) dimensions = [0]
//       CHECK:   %[[WB:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2], [3]] : tensor<?x2x3x18xf32> into tensor<?x3x18xf32>
//       CHECK:   %[[GB:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3, 4]] : tensor<?x2x3x5x5xf32> into tensor<?x3x25xf32>
//       CHECK:   %[[CG:.*]] = linalg.batch_matmul indexing_maps = [#[[WT]], #[[G]], #[[C]]] ins(%[[WB]], %[[GB]] : {{.*}}) outs(%{{.*}} : tensor<?x18x25xf32>)
//       CHECK:   %[[COLS:.*]] = tensor.expand_shape %[[CG]] {{\[\[}}0], [1, 2, 3], [4, 5]]{{.*}} into tensor<?x2x3x3x5x5xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<?x4x9x9xf32>)
//       CHECK:     arith.remsi
//       CHECK:     arith.divsi
//       CHECK:     %[[V:.*]] = tensor.extract %[[COLS]]
//       CHECK:     %[[S:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
//       CHECK:     %[[A:.*]] = arith.addf %{{.*}}, %[[S]] : f32
//       CHECK:     linalg.yield %[[A]]
func.func @convolution_backward_input(%g: !tgc.vtensor<[s0, 6, 5, 5], f32>, %w: !tgc.vtensor<[6, 2, 3, 3], f32>) -> !tgc.vtensor<[s0, 4, 9, 9], f32> {
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[s0, 4, 9, 9]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 2 : i64} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[6, 2, 3, 3], f32> -> !tgc.vtensor<[s0, 4, 9, 9], f32>
  return %0 : !tgc.vtensor<[s0, 4, 9, 9], f32>
}

// -----

func.func @convolution_backward_3d(%g: !tgc.vtensor<[1, 2, 3, 3, 3], f32>, %w: !tgc.vtensor<[2, 1, 2, 2, 2], f32>) -> !tgc.vtensor<[1, 1, 4, 4, 4], f32> {
  // expected-error @below {{only 2-d (NCHW) convolution backward is supported so far}}
  // expected-error @below {{failed to legalize operation 'tgc.convolution_backward_input'}}
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[1, 1, 4, 4, 4]>} : !tgc.vtensor<[1, 2, 3, 3, 3], f32>, !tgc.vtensor<[2, 1, 2, 2, 2], f32> -> !tgc.vtensor<[1, 1, 4, 4, 4], f32>
  return %0 : !tgc.vtensor<[1, 1, 4, 4, 4], f32>
}
