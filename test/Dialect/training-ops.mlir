// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// The ops training adds: backward ops, losses, embedding, random numbers. Each result
// type below is the one inference gives (the verifier rejects any other).

// CHECK-LABEL: func.func @convolution_backward
//       CHECK:   tgc.convolution_backward_input {{.*}} -> !tgc.vtensor<[s0, 4, 9, 9], f32, grad>
//       CHECK:   tgc.convolution_backward_weight {{.*}} -> !tgc.vtensor<[6, 2, 3, 3], f32>
func.func @convolution_backward(%g: !tgc.vtensor<[s0, 6, 5, 5], f32>,
                                %w: !tgc.vtensor<[6, 2, 3, 3], f32, grad>,
                                %x: !tgc.vtensor<[s0, 4, 9, 9], f32>) {
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[s0, 4, 9, 9]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 2 : i64} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[6, 2, 3, 3], f32, grad> -> !tgc.vtensor<[s0, 4, 9, 9], f32, grad>
  %1 = tgc.convolution_backward_weight %g, %x {weight_size = #tgc.shape<[6, 2, 3, 3]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 2 : i64} : !tgc.vtensor<[s0, 6, 5, 5], f32>, !tgc.vtensor<[s0, 4, 9, 9], f32> -> !tgc.vtensor<[6, 2, 3, 3], f32>
  return
}

// -----

// CHECK-LABEL: func.func @losses
//       CHECK:   tgc.nll_loss {{.*}} -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
//       CHECK:   tgc.nll_loss {{.*}} -> !tgc.vtensor<[s0, 5], f32>, !tgc.vtensor<[], f32>
//       CHECK:   tgc.nll_loss_backward {{.*}} -> !tgc.vtensor<[s0, 3], f32>
//       CHECK:   tgc.cross_entropy_loss {{.*}} -> !tgc.vtensor<[s0], f32>
func.func @losses(%x: !tgc.vtensor<[s0, 3], f32>, %t: !tgc.vtensor<[s0], i64>,
                  %w: !tgc.vtensor<[3], f32>, %img: !tgc.vtensor<[s0, 3, 5], f32>,
                  %timg: !tgc.vtensor<[s0, 5], i64>) {
  %0:2 = tgc.nll_loss %x, %t weight %w {ignore_index = 1 : i64} : !tgc.vtensor<[s0, 3], f32>, !tgc.vtensor<[s0], i64>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
  %1:2 = tgc.nll_loss %img, %timg {reduction = 0 : i64} : !tgc.vtensor<[s0, 3, 5], f32>, !tgc.vtensor<[s0, 5], i64> -> !tgc.vtensor<[s0, 5], f32>, !tgc.vtensor<[], f32>
  %2 = tgc.nll_loss_backward %0#0, %x, %t weight %w total %0#1 : !tgc.vtensor<[], f32>, !tgc.vtensor<[s0, 3], f32>, !tgc.vtensor<[s0], i64>, !tgc.vtensor<[3], f32>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[s0, 3], f32>
  %3 = tgc.cross_entropy_loss %x, %t {reduction = 0 : i64} : !tgc.vtensor<[s0, 3], f32>, !tgc.vtensor<[s0], i64> -> !tgc.vtensor<[s0], f32>
  return
}

// -----

// CHECK-LABEL: func.func @embedding
//       CHECK:   tgc.embedding {{.*}} -> !tgc.vtensor<[s0, 7, 4], f32, grad>
//       CHECK:   tgc.embedding_backward {{.*}} -> !tgc.vtensor<[10, 4], f32>
func.func @embedding(%w: !tgc.vtensor<[10, 4], f32, grad>, %i: !tgc.vtensor<[s0, 7], i64>,
                     %g: !tgc.vtensor<[s0, 7, 4], f32>) {
  %0 = tgc.embedding %w, %i {padding_idx = 0 : i64} : !tgc.vtensor<[10, 4], f32, grad>, !tgc.vtensor<[s0, 7], i64> -> !tgc.vtensor<[s0, 7, 4], f32, grad>
  %1 = tgc.embedding_backward %g, %i {num_weights = 10 : i64, padding_idx = 0 : i64} : !tgc.vtensor<[s0, 7, 4], f32>, !tgc.vtensor<[s0, 7], i64> -> !tgc.vtensor<[10, 4], f32>
  return
}

// -----

// CHECK-LABEL: func.func @random
//       CHECK:   tgc.native_dropout {{.*}} -> !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[s0, 8], i1>
//       CHECK:   tgc.rand_bernoulli {{.*}} -> !tgc.vtensor<[s0, 8], i1>
func.func @random(%x: !tgc.vtensor<[s0, 8], f32>, %state: !tgc.vtensor<[2], i64>) {
  %0:2 = tgc.native_dropout %x {p = 0.5 : f64, train = true} : !tgc.vtensor<[s0, 8], f32> -> !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[s0, 8], i1>
  %c = arith.constant 16 : i64
  %1 = tgc.rand_bernoulli %state, %c {size = #tgc.shape<[s0, 8]>, p = 0.25 : f64} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[s0, 8], i1>
  return
}

// -----

// CHECK-LABEL: func.func @pooling_backward
//       CHECK:   tgc.max_pool2d_backward {{.*}} -> !tgc.vtensor<[2, 3, 9, 9], f32>
//       CHECK:   tgc.avg_pool2d_backward {{.*}} -> !tgc.vtensor<[2, 3, 9, 9], f32>
func.func @pooling_backward(%x: !tgc.vtensor<[2, 3, 9, 9], f32>) {
  %0:2 = tgc.max_pool2d %x {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, ceil_mode = true, with_indices} : !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 5, 5], f32>, !tgc.vtensor<[2, 3, 5, 5], i64>
  %1 = tgc.max_pool2d_backward %0#0, %x, %0#1 {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, ceil_mode = true} : !tgc.vtensor<[2, 3, 5, 5], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 5, 5], i64> -> !tgc.vtensor<[2, 3, 9, 9], f32>
  %2 = tgc.avg_pool2d %x {kernel_size = array<i64: 2>} : !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 4, 4], f32>
  %3 = tgc.avg_pool2d_backward %2, %x {kernel_size = array<i64: 2>} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 9, 9], f32>
  return
}
