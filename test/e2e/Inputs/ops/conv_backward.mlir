// Convolution gradients (compiled and run by test/e2e/ops.test; expected values from
// make_expected.py): a plain 3x3 convolution over a symbolic batch, and a grouped,
// strided, padded, dilated one whose last input rows no window reads.
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 8>]} {
  func.func @forward(%g1: !tgc.vtensor<[s0, 4, 6, 6], f32> {tgc.name = "g1"},
                     %w1: !tgc.vtensor<[4, 3, 3, 3], f32> {tgc.name = "w1"},
                     %x1: !tgc.vtensor<[s0, 3, 8, 8], f32> {tgc.name = "x1"},
                     %g2: !tgc.vtensor<[2, 6, 4, 4], f32> {tgc.name = "g2"},
                     %w2: !tgc.vtensor<[6, 2, 3, 3], f32> {tgc.name = "w2"},
                     %x2: !tgc.vtensor<[2, 4, 10, 10], f32> {tgc.name = "x2"})
      -> (!tgc.vtensor<[s0, 3, 8, 8], f32>, !tgc.vtensor<[4, 3, 3, 3], f32>,
          !tgc.vtensor<[2, 4, 10, 10], f32>, !tgc.vtensor<[6, 2, 3, 3], f32>) {
    %0 = tgc.convolution_backward_input %g1, %w1 {input_size = #tgc.shape<[s0, 3, 8, 8]>} : !tgc.vtensor<[s0, 4, 6, 6], f32>, !tgc.vtensor<[4, 3, 3, 3], f32> -> !tgc.vtensor<[s0, 3, 8, 8], f32>
    %1 = tgc.convolution_backward_weight %g1, %x1 {weight_size = #tgc.shape<[4, 3, 3, 3]>} : !tgc.vtensor<[s0, 4, 6, 6], f32>, !tgc.vtensor<[s0, 3, 8, 8], f32> -> !tgc.vtensor<[4, 3, 3, 3], f32>
    %2 = tgc.convolution_backward_input %g2, %w2 {input_size = #tgc.shape<[2, 4, 10, 10]>, stride = array<i64: 2, 3>, padding = array<i64: 1, 2>, dilation = array<i64: 2, 1>, groups = 2 : i64} : !tgc.vtensor<[2, 6, 4, 4], f32>, !tgc.vtensor<[6, 2, 3, 3], f32> -> !tgc.vtensor<[2, 4, 10, 10], f32>
    %3 = tgc.convolution_backward_weight %g2, %x2 {weight_size = #tgc.shape<[6, 2, 3, 3]>, stride = array<i64: 2, 3>, padding = array<i64: 1, 2>, dilation = array<i64: 2, 1>, groups = 2 : i64} : !tgc.vtensor<[2, 6, 4, 4], f32>, !tgc.vtensor<[2, 4, 10, 10], f32> -> !tgc.vtensor<[6, 2, 3, 3], f32>
    return %0, %1, %2, %3 : !tgc.vtensor<[s0, 3, 8, 8], f32>, !tgc.vtensor<[4, 3, 3, 3], f32>, !tgc.vtensor<[2, 4, 10, 10], f32>, !tgc.vtensor<[6, 2, 3, 3], f32>
  }
}
