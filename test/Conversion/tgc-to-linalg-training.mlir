// RUN: tgc-opt %s --convert-tgc-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// grad_weight: im2col in the GEMM's layout [G, N, OH, OW, C/G, KH, KW], grad_output
// rearranged to [G, F/G, N*OH*OW], one batch_matmul over the groups (BLAS), reshaped to
// the weight's sizes.
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0 * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @convolution_backward_weight
//       CHECK:   %[[PAD:.*]] = tensor.pad
//       CHECK:   %[[UNFOLD:.*]] = linalg.generic {indexing_maps = [#[[$COLS]], {{.*}}]{{.*}} ins(%[[PAD]] : tensor<?x4x11x11xf32>) outs(%{{.*}} : tensor<2x?x5x5x2x3x3xf32>)
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
// weight transposed (BLAS), then col2im as a gather: input (h, w) reads column (oh, ow)
// when h + padding = oh * stride + kh. With stride 2 the reduction runs over the
// ceil(3 / 2) = 2 windows per dimension that can read an element (oh = t / 2 - j at
// kh = t - 2 oh), not over the 3 kernel offsets.
// CHECK-DAG: #[[$WT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$G:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @convolution_backward_input
//       CHECK:   %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<2x3x18xf32>) outs(%{{.*}} : tensor<?x2x3x18xf32>) dimensions = [0]
//       CHECK:   %[[WB:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2], [3]] : tensor<?x2x3x18xf32> into tensor<?x3x18xf32>
//       CHECK:   %[[GB:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3, 4]] : tensor<?x2x3x5x5xf32> into tensor<?x3x25xf32>
//       CHECK:   %[[CG:.*]] = linalg.batch_matmul indexing_maps = [#[[$WT]], #[[$G]], #[[$C]]] ins(%[[WB]], %[[GB]] : {{.*}}) outs(%{{.*}} : tensor<?x18x25xf32>)
//       CHECK:   %[[COLS:.*]] = tensor.expand_shape %[[CG]] {{\[\[}}0], [1, 2, 3], [4, 5]]{{.*}} into tensor<?x2x3x3x5x5xf32>
//       CHECK:   %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WIN]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<?x4x9x9xf32>)
//       CHECK:     %[[J:.*]] = linalg.index 4
//       CHECK:     %[[T:.*]] = arith.addi %{{.*}}, %c1
//       CHECK:     %[[Q:.*]] = arith.divsi %[[T]], %c2
//       CHECK:     %[[OH:.*]] = arith.subi %[[Q]], %[[J]]
//       CHECK:     %[[M:.*]] = arith.muli %[[OH]], %c2
//       CHECK:     %[[KH:.*]] = arith.subi %[[T]], %[[M]]
//       CHECK:     arith.cmpi sge, %[[OH]], %c0
//       CHECK:     arith.cmpi slt, %[[KH]], %c3
//       CHECK:     arith.cmpi slt, %[[OH]], %c5
//   CHECK-NOT:     arith.remsi
//       CHECK:     %[[V:.*]] = tensor.extract %[[COLS]]
//       CHECK:     %[[S:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
//       CHECK:     %[[A:.*]] = arith.addf %{{.*}}, %[[S]] : f32
//       CHECK:     linalg.yield %[[A]]
func.func @convolution_backward_input(%g: !tgc.vtensor<[s0, 6, 5, 5], f32>, %w: !tgc.vtensor<[6, 2, 3, 3], f32>) -> !tgc.vtensor<[s0, 4, 9, 9], f32> {
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[s0, 4, 9, 9]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 2 : i64} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[6, 2, 3, 3], f32> -> !tgc.vtensor<[s0, 4, 9, 9], f32>
  return %0 : !tgc.vtensor<[s0, 4, 9, 9], f32>
}

// -----

// One group: one GEMM over the whole batch, weight^T [C*KH*KW, F] times grad_output
// transposed to [F, N*OH*OW]; the columns are viewed as [C, KH, KW, N, OH, OW] and
// gathered. The weight is never copied per image.
// CHECK-LABEL: func.func @convolution_backward_input_one_group
//       CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<6x4x3x3xf32> into tensor<6x36xf32>
//       CHECK:   %[[WT:.*]] = linalg.transpose ins(%[[FLAT]] : tensor<6x36xf32>) outs(%{{.*}} : tensor<36x6xf32>) permutation = [1, 0]
//   CHECK-NOT:   linalg.broadcast
//       CHECK:   %[[GT:.*]] = linalg.transpose ins(%{{.*}} : tensor<?x6x5x5xf32>) outs(%{{.*}} : tensor<6x?x5x5xf32>) permutation = [1, 0, 2, 3]
//       CHECK:   %[[G:.*]] = tensor.collapse_shape %[[GT]] {{\[\[}}0], [1, 2, 3]] : tensor<6x?x5x5xf32> into tensor<6x?xf32>
//       CHECK:   %[[CG:.*]] = linalg.matmul ins(%[[WT]], %[[G]] : tensor<36x6xf32>, tensor<6x?xf32>) outs(%{{.*}} : tensor<36x?xf32>)
//       CHECK:   %[[COLS:.*]] = tensor.expand_shape %[[CG]] {{\[\[}}0, 1, 2], [3, 4, 5]] {{.*}} : tensor<36x?xf32> into tensor<4x3x3x?x5x5xf32>
//       CHECK:   tensor.extract %[[COLS]]
func.func @convolution_backward_input_one_group(%g: !tgc.vtensor<[s0, 6, 5, 5], f32>, %w: !tgc.vtensor<[6, 4, 3, 3], f32>) -> !tgc.vtensor<[s0, 4, 9, 9], f32> {
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[s0, 4, 9, 9]>, stride = array<i64: 2>, padding = array<i64: 1>} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[6, 4, 3, 3], f32> -> !tgc.vtensor<[s0, 4, 9, 9], f32>
  return %0 : !tgc.vtensor<[s0, 4, 9, 9], f32>
}

// -----

func.func @convolution_backward_3d(%g: !tgc.vtensor<[1, 2, 3, 3, 3], f32>, %w: !tgc.vtensor<[2, 1, 2, 2, 2], f32>) -> !tgc.vtensor<[1, 1, 4, 4, 4], f32> {
  // expected-error @below {{only 2-d (NCHW) convolution backward is supported so far}}
  // expected-error @below {{failed to legalize operation 'tgc.convolution_backward_input'}}
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[1, 1, 4, 4, 4]>} : !tgc.vtensor<[1, 2, 3, 3, 3], f32>, !tgc.vtensor<[2, 1, 2, 2, 2], f32> -> !tgc.vtensor<[1, 1, 4, 4, 4], f32>
  return %0 : !tgc.vtensor<[1, 1, 4, 4, 4], f32>
}

// -----

// nll_loss with mean: one reduction generic over the targets accumulating the loss and
// the weight sum (0-d outputs); the log-probability and class weight are read at the
// clamped target class; ignored elements add nothing. Mean divides the two.
// CHECK-LABEL: func.func @nll_loss_mean
//  CHECK-SAME:   (%[[X:.*]]: tensor<?x5xf32>, %[[T:.*]]: tensor<?xi64>, %[[W:.*]]: tensor<5xf32>)
//       CHECK:   %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[T]] : tensor<?xi64>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
//       CHECK:     %[[IGN:.*]] = arith.cmpi eq, %{{.*}}, %c-100_i64
//       CHECK:     arith.minsi
//       CHECK:     %[[CLS:.*]] = arith.maxsi
//       CHECK:     %[[LP:.*]] = tensor.extract %[[X]][%{{.*}}, %[[CLS]]]
//       CHECK:     %[[WV:.*]] = tensor.extract %[[W]][%[[CLS]]]
//       CHECK:     %[[WS:.*]] = arith.select %[[IGN]], %{{.*}}, %[[WV]]
//       CHECK:     %[[M:.*]] = arith.mulf %[[WS]], %[[LP]]
//       CHECK:     arith.negf %[[M]]
//       CHECK:   %[[SUM:.*]] = tensor.extract %[[R]]#0[]
//       CHECK:   %[[TOT:.*]] = tensor.extract %[[R]]#1[]
//       CHECK:   %[[MEAN:.*]] = arith.divf %[[SUM]], %[[TOT]]
//       CHECK:   %[[OUT:.*]] = tensor.from_elements %[[MEAN]]
//       CHECK:   return %[[OUT]], %[[R]]#1
func.func @nll_loss_mean(%x: !tgc.vtensor<[s0, 5], f32>, %t: !tgc.vtensor<[s0], i64>, %w: !tgc.vtensor<[5], f32>) -> (!tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>) {
  %0:2 = tgc.nll_loss %x, %t weight %w : !tgc.vtensor<[s0, 5], f32>, !tgc.vtensor<[s0], i64>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
  return %0#0, %0#1 : !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
}

// -----

// nll_loss_backward: a parallel generic over self; the target is read without the class
// dimension, grad_output (mean: a scalar) divided by the total weight, and the value is
// written where the class index equals the (not ignored) target.
// CHECK-DAG: #[[$ELEM:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @nll_loss_backward
//       CHECK:   linalg.generic {indexing_maps = [#[[$ELEM]], #[[$SCALAR]], #[[$SCALAR]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
//       CHECK:     %[[C:.*]] = linalg.index 1
//       CHECK:     arith.cmpi eq, %[[C]], %{{.*}}
//       CHECK:     arith.divf
//       CHECK:     arith.select
func.func @nll_loss_backward(%g: !tgc.vtensor<[], f32>, %x: !tgc.vtensor<[2, 5, 3], f32>, %t: !tgc.vtensor<[2, 3], i64>, %tw: !tgc.vtensor<[], f32>) -> !tgc.vtensor<[2, 5, 3], f32> {
  %0 = tgc.nll_loss_backward %g, %x, %t total %tw : !tgc.vtensor<[], f32>, !tgc.vtensor<[2, 5, 3], f32>, !tgc.vtensor<[2, 3], i64>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[2, 5, 3], f32>
  return %0 : !tgc.vtensor<[2, 5, 3], f32>
}

// -----

// embedding: a generic over the result reading the indices through its map and the
// weight row with tensor.extract (row clamped into range).
// CHECK-DAG: #[[$IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding
//  CHECK-SAME:   (%[[W:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<?x7xi64>)
//       CHECK:   linalg.generic {indexing_maps = [#[[$IDX]], {{.*}}]{{.*}} ins(%[[I]] : tensor<?x7xi64>) outs(%{{.*}} : tensor<?x7x4xf32>)
//       CHECK:     %[[ROW:.*]] = arith.maxsi
//       CHECK:     %[[COL:.*]] = linalg.index 2
//       CHECK:     tensor.extract %[[W]][%[[ROW]], %[[COL]]]
func.func @embedding(%w: !tgc.vtensor<[10, 4], f32>, %i: !tgc.vtensor<[s0, 7], i64>) -> !tgc.vtensor<[s0, 7, 4], f32> {
  %0 = tgc.embedding %w, %i : !tgc.vtensor<[10, 4], f32>, !tgc.vtensor<[s0, 7], i64> -> !tgc.vtensor<[s0, 7, 4], f32>
  return %0 : !tgc.vtensor<[s0, 7, 4], f32>
}

// -----

// embedding_backward: zeros, then a loop over the flattened indices adding each
// gradient row into its row (a slice updated in place), skipping padding_idx and
// out-of-range indices.
// CHECK-LABEL: func.func @embedding_backward
//       CHECK:   %[[Z:.*]] = linalg.fill
//       CHECK:   %[[I:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x7xi64> into tensor<?xi64>
//       CHECK:   %[[G:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x7x4xf32> into tensor<?x4xf32>
//       CHECK:   scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<10x4xf32>)
//       CHECK:     %[[V:.*]] = tensor.extract %[[I]][%[[K]]]
//       CHECK:     arith.cmpi ne, %{{.*}}, %c3
//       CHECK:     scf.if
//       CHECK:       %[[ROW:.*]] = tensor.extract_slice %[[ACC]][%{{.*}}, 0] [1, 4] [1, 1]
//       CHECK:       %[[GROW:.*]] = tensor.extract_slice %[[G]][%[[K]], 0] [1, 4] [1, 1]
//       CHECK:       %[[S:.*]] = linalg.add ins(%[[ROW]], %[[GROW]] {{.*}}) outs(%[[ROW]]
//       CHECK:       tensor.insert_slice %[[S]] into %[[ACC]]
func.func @embedding_backward(%g: !tgc.vtensor<[s0, 7, 4], f32>, %i: !tgc.vtensor<[s0, 7], i64>) -> !tgc.vtensor<[10, 4], f32> {
  %0 = tgc.embedding_backward %g, %i {num_weights = 10 : i64, padding_idx = 3 : i64} : !tgc.vtensor<[s0, 7, 4], f32>, !tgc.vtensor<[s0, 7], i64> -> !tgc.vtensor<[10, 4], f32>
  return %0 : !tgc.vtensor<[10, 4], f32>
}

// -----

func.func @embedding_backward_freq(%g: !tgc.vtensor<[7, 4], f32>, %i: !tgc.vtensor<[7], i64>) -> !tgc.vtensor<[10, 4], f32> {
  // expected-error @below {{scale_grad_by_freq is not supported yet}}
  // expected-error @below {{failed to legalize operation 'tgc.embedding_backward'}}
  %0 = tgc.embedding_backward %g, %i {num_weights = 10 : i64, scale_grad_by_freq = true} : !tgc.vtensor<[7, 4], f32>, !tgc.vtensor<[7], i64> -> !tgc.vtensor<[10, 4], f32>
  return %0 : !tgc.vtensor<[10, 4], f32>
}

// -----

// rand_bernoulli: a generic with no inputs; each element's counter is the state's
// offset + offset + its row-major index, Philox4x32-10 (10 rounds of two 32 x 32 -> 64-bit
// multiplications, as i64 products of zero-extended words) keyed by the seed, and the top
// 24 bits as a number in [0, 1).
// CHECK-LABEL: func.func @rand_bernoulli
//  CHECK-SAME:   (%[[S:.*]]: tensor<2xi64>, %[[O:.*]]: i64, %[[X:.*]]: tensor<?x8xf32>)
//       CHECK:   %[[SEED:.*]] = tensor.extract %[[S]][%c0
//       CHECK:   %[[OFF:.*]] = tensor.extract %[[S]][%c1
//       CHECK:   %[[BASE:.*]] = arith.addi %[[OFF]], %[[O]]
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<?x8xi1>)
//       CHECK:     arith.addi %[[BASE]]
// CHECK-COUNT-20:  arith.muli %{{.*}}, %{{.*}} : i64
//       CHECK:     arith.shrui %{{.*}}, %c8_i32
//       CHECK:     arith.uitofp
//       CHECK:     arith.cmpf olt, %{{.*}}, %cst
func.func @rand_bernoulli(%s: !tgc.vtensor<[2], i64>, %o: i64, %x: !tgc.vtensor<[s0, 8], f32>) -> !tgc.vtensor<[s0, 8], i1> {
  %0 = tgc.rand_bernoulli %s, %o {size = #tgc.shape<[s0, 8]>, p = 0.75 : f64} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[s0, 8], i1>
  return %0 : !tgc.vtensor<[s0, 8], i1>
}

// -----

// rand_draw: uniform bf16 numbers are the top 8 bits of the block's first word times
// 2^-8 (exact, below 1); normal f32 ones come from two words by Box-Muller.
// CHECK-LABEL: func.func @rand_draw
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<3xbf16>)
// CHECK-COUNT-20:  arith.muli %{{.*}}, %{{.*}} : i64
//       CHECK:     arith.shrui %{{.*}}, %c24_i32
//       CHECK:     %[[U:.*]] = arith.uitofp %{{.*}} : i32 to f32
//       CHECK:     %[[S:.*]] = arith.mulf %[[U]], %cst{{.*}} : f32
//       CHECK:     arith.truncf %[[S]] : f32 to bf16
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<5xf32>)
//       CHECK:     math.log
//       CHECK:     math.sqrt
//       CHECK:     math.cos
func.func @rand_draw(%s: !tgc.vtensor<[2], i64>, %o: i64) -> (!tgc.vtensor<[3], bf16>, !tgc.vtensor<[5], f32>) {
  %0 = tgc.rand_draw %s, %o {size = #tgc.shape<[3]>, dtype = bf16} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[3], bf16>
  %1 = tgc.rand_draw %s, %o {size = #tgc.shape<[5]>, dtype = f32, normal} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[5], f32>
  return %0, %1 : !tgc.vtensor<[3], bf16>, !tgc.vtensor<[5], f32>
}

// -----

// max_pool2d_backward: the window gather over the input; a window contributes its
// gradient where its argmax (flat h * W + w) is this element.
// CHECK-LABEL: func.func @max_pool2d_backward
//  CHECK-SAME:   (%[[G:.*]]: tensor<1x2x4x4xf32>, %[[X:.*]]: tensor<1x2x8x8xf32>, %[[I:.*]]: tensor<1x2x4x4xi64>)
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<1x2x8x8xf32>)
//       CHECK:     %[[A:.*]] = tensor.extract %[[I]]
//       CHECK:     %[[H:.*]] = arith.muli %{{.*}}, %c8
//       CHECK:     %[[F:.*]] = arith.addi %[[H]]
//       CHECK:     %[[F64:.*]] = arith.index_cast %[[F]] : index to i64
//       CHECK:     %[[HIT:.*]] = arith.cmpi eq, %[[A]], %[[F64]]
//       CHECK:     %[[GV:.*]] = tensor.extract %[[G]]
//       CHECK:     arith.select %[[HIT]], %[[GV]]
func.func @max_pool2d_backward(%g: !tgc.vtensor<[1, 2, 4, 4], f32>, %x: !tgc.vtensor<[1, 2, 8, 8], f32>, %i: !tgc.vtensor<[1, 2, 4, 4], i64>) -> !tgc.vtensor<[1, 2, 8, 8], f32> {
  %0 = tgc.max_pool2d_backward %g, %x, %i {kernel_size = array<i64: 2>} : !tgc.vtensor<[1, 2, 4, 4], f32>, !tgc.vtensor<[1, 2, 8, 8], f32>, !tgc.vtensor<[1, 2, 4, 4], i64> -> !tgc.vtensor<[1, 2, 8, 8], f32>
  return %0 : !tgc.vtensor<[1, 2, 8, 8], f32>
}

// -----

// avg_pool2d_backward of a global average pool (kernel = stride = the 8x8 image, as
// adaptive_avg_pool2d to 1x1 becomes): each element is read by one window, so the
// reduction runs once, not over the 64 kernel offsets.
// CHECK-LABEL: func.func @global_avg_pool2d_backward
//       CHECK:   %[[WIN:.*]] = tensor.empty() : tensor<1x1xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[WIN]] : tensor<1x1xf32>) outs(%{{.*}} : tensor<2x3x8x8xf32>)
//       CHECK:     arith.divsi %{{.*}}, %c8
//       CHECK:     arith.divf
func.func @global_avg_pool2d_backward(%g: !tgc.vtensor<[2, 3, 1, 1], f32>, %x: !tgc.vtensor<[2, 3, 8, 8], f32>) -> !tgc.vtensor<[2, 3, 8, 8], f32> {
  %0 = tgc.avg_pool2d_backward %g, %x {kernel_size = array<i64: 8>, stride = array<i64: 8>} : !tgc.vtensor<[2, 3, 1, 1], f32>, !tgc.vtensor<[2, 3, 8, 8], f32> -> !tgc.vtensor<[2, 3, 8, 8], f32>
  return %0 : !tgc.vtensor<[2, 3, 8, 8], f32>
}

// -----

// grad_input of a depthwise convolution: grad_output spread with the stride (2) into
// zeros from q = (K - 1) * dilation - padding = 0, then a stride-1 sum of taps with the
// flipped kernel: tap (kh, kw) reads the spread rows from (kh, kw) and weight[:, 0, 1 -
// kh, 1 - kw]. No GEMM, no columns.
// CHECK-LABEL: func.func @depthwise_backward_input
//       CHECK:   %[[Z:.*]] = linalg.fill ins(%{{.*}}) outs(%{{.*}} : tensor<?x6x12x14xf32>)
//       CHECK:   %[[SP:.*]] = tensor.insert_slice %{{.*}} into %[[Z]][0, 0, 0, 0] [%{{.*}}, 6, 6, 7] [1, 1, 2, 2]
//       CHECK:   %[[V:.*]] = tensor.expand_shape %[[SP]] {{.*}} into tensor<?x6x12x1x14xf32>
//       CHECK:   tensor.extract_slice %[[V]][0, 0, 0, 0, 0] [%{{.*}}, 6, 11, 1, 13] [1, 1, 1, 1, 1]
//       CHECK:   tensor.extract_slice %{{.*}}[0, 0, 1, 1] [6, 1, 1, 1]
//       CHECK:   tensor.extract_slice %[[V]][0, 0, 1, 0, 1] [%{{.*}}, 6, 11, 1, 13] [1, 1, 1, 1, 1]
//       CHECK:   tensor.extract_slice %{{.*}}[0, 0, 0, 0] [6, 1, 1, 1]
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//   CHECK-NOT:   linalg.batch_matmul
//   CHECK-NOT:   tensor.extract %
//       CHECK:   return
func.func @depthwise_backward_input(%g: !tgc.vtensor<[s0, 6, 6, 7], f32>, %w: !tgc.vtensor<[6, 1, 2, 2], f32>) -> !tgc.vtensor<[s0, 6, 11, 13], f32> {
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[s0, 6, 11, 13]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[6, 1, 2, 2], f32> -> !tgc.vtensor<[s0, 6, 11, 13], f32>
  return %0 : !tgc.vtensor<[s0, 6, 11, 13], f32>
}

// -----

// grad_weight of a depthwise convolution: one reduction over (c | n, oh, ow) with an
// output per tap, reading grad_output and the tap windows of the padded input's column
// phases; the [C] sums are placed in [C, 1, KH, KW].
// CHECK-DAG: #[[$NC:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @depthwise_backward_weight
//       CHECK:   tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 2]
//       CHECK:   linalg.transpose {{.*}} permutation = [0, 1, 2, 4, 3]
//       CHECK:   %[[S:.*]]:4 = linalg.generic {indexing_maps = [#[[$NC]], #[[$NC]], #[[$NC]], #[[$NC]], #[[$NC]], #[[$C]], #[[$C]], #[[$C]], #[[$C]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
//       CHECK:     ^bb0(%[[G:[a-z0-9_]+]]: f32, %[[T0:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %[[O0:[a-z0-9_]+]]: f32,
//       CHECK:       %[[M:.*]] = arith.mulf %[[G]], %[[T0]]
//       CHECK:       arith.addf %[[O0]], %[[M]]
//       CHECK:   %[[R0:.*]] = tensor.insert_slice %[[S]]#0 into %{{.*}}[0, 0, 0, 0] [6, 1, 1, 1]
//       CHECK:   %[[R1:.*]] = tensor.insert_slice %[[S]]#1 into %[[R0]][0, 0, 0, 1] [6, 1, 1, 1]
//       CHECK:   %[[R2:.*]] = tensor.insert_slice %[[S]]#2 into %[[R1]][0, 0, 1, 0] [6, 1, 1, 1]
//       CHECK:   %[[R3:.*]] = tensor.insert_slice %[[S]]#3 into %[[R2]][0, 0, 1, 1] [6, 1, 1, 1]
//       CHECK:   return %[[R3]]
func.func @depthwise_backward_weight(%g: !tgc.vtensor<[s0, 6, 6, 7], f32>, %x: !tgc.vtensor<[s0, 6, 11, 13], f32>) -> !tgc.vtensor<[6, 1, 2, 2], f32> {
  %0 = tgc.convolution_backward_weight %g, %x {weight_size = #tgc.shape<[6, 1, 2, 2]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[s0, 6, 11, 13], f32> -> !tgc.vtensor<[6, 1, 2, 2], f32>
  return %0 : !tgc.vtensor<[6, 1, 2, 2], f32>
}

// -----

// bf16: the per-tap sums accumulate in f32 and are rounded to bf16 once, at the end.
// CHECK-LABEL: func.func @depthwise_backward_weight_bf16
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6xf32>)
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]
//       CHECK:     %[[DY:.*]] = arith.extf %{{.*}} : bf16 to f32
//       CHECK:     %[[X:.*]] = arith.extf %{{.*}} : bf16 to f32
//       CHECK:     %[[P:.*]] = arith.mulf %[[DY]], %[[X]] : f32
//       CHECK:     arith.addf %{{.*}}, %[[P]] : f32
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}} : tensor<6x1x2x2xf32>) outs(%{{.*}} : tensor<6x1x2x2xbf16>)
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
func.func @depthwise_backward_weight_bf16(%g: !tgc.vtensor<[2, 6, 6, 7], bf16>, %x: !tgc.vtensor<[2, 6, 11, 13], bf16>) -> !tgc.vtensor<[6, 1, 2, 2], bf16> {
  %0 = tgc.convolution_backward_weight %g, %x {weight_size = #tgc.shape<[6, 1, 2, 2]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 6 : i64} : !tgc.vtensor<[2, 6, 6, 7], bf16>, !tgc.vtensor<[2, 6, 11, 13], bf16> -> !tgc.vtensor<[6, 1, 2, 2], bf16>
  return %0 : !tgc.vtensor<[6, 1, 2, 2], bf16>
}
