// Pooling gradients: max pooling through the forward's indices (padding, ceil_mode,
// dilation) and average pooling (without padding in the count, with a divisor
// override), against PyTorch's autograd.
module {
  func.func @forward(%x: !tgc.vtensor<[2, 3, 9, 9], f32> {tgc.name = "x"},
                     %g1: !tgc.vtensor<[2, 3, 4, 4], f32> {tgc.name = "g1"},
                     %g2: !tgc.vtensor<[2, 3, 5, 5], f32> {tgc.name = "g2"},
                     %g3: !tgc.vtensor<[2, 3, 4, 4], f32> {tgc.name = "g3"})
      -> (!tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>) {
    %0:2 = tgc.max_pool2d %x {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 2>, ceil_mode = true, with_indices} : !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[2, 3, 4, 4], i64>
    %1 = tgc.max_pool2d_backward %g1, %x, %0#1 {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 2>, ceil_mode = true} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 4, 4], i64> -> !tgc.vtensor<[2, 3, 9, 9], f32>
    %2 = tgc.avg_pool2d_backward %g2, %x {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, ceil_mode = true, count_include_pad = false} : !tgc.vtensor<[2, 3, 5, 5], f32>, !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 9, 9], f32>
    %3 = tgc.avg_pool2d_backward %g3, %x {kernel_size = array<i64: 2>, divisor_override = 3 : i64} : !tgc.vtensor<[2, 3, 4, 4], f32>, !tgc.vtensor<[2, 3, 9, 9], f32> -> !tgc.vtensor<[2, 3, 9, 9], f32>
    return %1, %2, %3 : !tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>, !tgc.vtensor<[2, 3, 9, 9], f32>
  }
}
