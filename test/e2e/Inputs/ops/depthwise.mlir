// Depthwise convolutions, computed directly as sums of their taps (compiled and run by
// test/e2e/ops.test; expected values from make_expected.py), and their gradients:
//   1. 3x3, stride 2, padding 1, a bias, a symbolic batch, odd padded width;
//   2. 5x5, padding 2, dilation (1, 2);
//   3. 3x3, stride (2, 3), padding (1, 2), dilation (1, 2): three column phases;
//   4. two filters per channel (groups 3 of 6 filters): the grouped convolution.
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 8>]} {
  func.func @forward(%x1: !tgc.vtensor<[s0, 6, 11, 13], f32> {tgc.name = "x1"},
                     %w1: !tgc.vtensor<[6, 1, 3, 3], f32> {tgc.name = "w1"},
                     %b1: !tgc.vtensor<[6], f32> {tgc.name = "b1"},
                     %g1: !tgc.vtensor<[s0, 6, 6, 7], f32> {tgc.name = "g1"},
                     %x2: !tgc.vtensor<[2, 5, 9, 9], f32> {tgc.name = "x2"},
                     %w2: !tgc.vtensor<[5, 1, 5, 5], f32> {tgc.name = "w2"},
                     %g2: !tgc.vtensor<[2, 5, 9, 5], f32> {tgc.name = "g2"},
                     %x3: !tgc.vtensor<[2, 3, 8, 20], f32> {tgc.name = "x3"},
                     %w3: !tgc.vtensor<[3, 1, 3, 3], f32> {tgc.name = "w3"},
                     %g3: !tgc.vtensor<[2, 3, 4, 7], f32> {tgc.name = "g3"},
                     %x4: !tgc.vtensor<[2, 3, 6, 6], f32> {tgc.name = "x4"},
                     %w4: !tgc.vtensor<[6, 1, 3, 3], f32> {tgc.name = "w4"})
      -> (!tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[s0, 6, 11, 13], f32>, !tgc.vtensor<[6, 1, 3, 3], f32>,
          !tgc.vtensor<[2, 5, 9, 5], f32>, !tgc.vtensor<[2, 5, 9, 9], f32>, !tgc.vtensor<[5, 1, 5, 5], f32>,
          !tgc.vtensor<[2, 3, 4, 7], f32>, !tgc.vtensor<[2, 3, 8, 20], f32>, !tgc.vtensor<[3, 1, 3, 3], f32>,
          !tgc.vtensor<[2, 6, 4, 4], f32>) {
    %0 = tgc.convolution %x1, %w1, %b1 {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 11, 13], f32>, !tgc.vtensor<[6, 1, 3, 3], f32>, !tgc.vtensor<[6], f32> -> !tgc.vtensor<[s0, 6, 6, 7], f32>
    %1 = tgc.convolution_backward_input %g1, %w1 {input_size = #tgc.shape<[s0, 6, 11, 13]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[6, 1, 3, 3], f32> -> !tgc.vtensor<[s0, 6, 11, 13], f32>
    %2 = tgc.convolution_backward_weight %g1, %x1 {weight_size = #tgc.shape<[6, 1, 3, 3]>, stride = array<i64: 2>, padding = array<i64: 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[s0, 6, 11, 13], f32> -> !tgc.vtensor<[6, 1, 3, 3], f32>
    %3 = tgc.convolution %x2, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 2>, groups = 5 : i64} : !tgc.vtensor<[2, 5, 9, 9], f32>, !tgc.vtensor<[5, 1, 5, 5], f32> -> !tgc.vtensor<[2, 5, 9, 5], f32>
    %4 = tgc.convolution_backward_input %g2, %w2 {input_size = #tgc.shape<[2, 5, 9, 9]>, padding = array<i64: 2>, dilation = array<i64: 1, 2>, groups = 5 : i64} : !tgc.vtensor<[2, 5, 9, 5], f32>, !tgc.vtensor<[5, 1, 5, 5], f32> -> !tgc.vtensor<[2, 5, 9, 9], f32>
    %5 = tgc.convolution_backward_weight %g2, %x2 {weight_size = #tgc.shape<[5, 1, 5, 5]>, padding = array<i64: 2>, dilation = array<i64: 1, 2>, groups = 5 : i64} : !tgc.vtensor<[2, 5, 9, 5], f32>, !tgc.vtensor<[2, 5, 9, 9], f32> -> !tgc.vtensor<[5, 1, 5, 5], f32>
    %6 = tgc.convolution %x3, %w3 {stride = array<i64: 2, 3>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 2>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 8, 20], f32>, !tgc.vtensor<[3, 1, 3, 3], f32> -> !tgc.vtensor<[2, 3, 4, 7], f32>
    %7 = tgc.convolution_backward_input %g3, %w3 {input_size = #tgc.shape<[2, 3, 8, 20]>, stride = array<i64: 2, 3>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 2>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 4, 7], f32>, !tgc.vtensor<[3, 1, 3, 3], f32> -> !tgc.vtensor<[2, 3, 8, 20], f32>
    %8 = tgc.convolution_backward_weight %g3, %x3 {weight_size = #tgc.shape<[3, 1, 3, 3]>, stride = array<i64: 2, 3>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 2>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 4, 7], f32>, !tgc.vtensor<[2, 3, 8, 20], f32> -> !tgc.vtensor<[3, 1, 3, 3], f32>
    %9 = tgc.convolution %x4, %w4 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 6, 6], f32>, !tgc.vtensor<[6, 1, 3, 3], f32> -> !tgc.vtensor<[2, 6, 4, 4], f32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : !tgc.vtensor<[s0, 6, 6, 7], f32>, !tgc.vtensor<[s0, 6, 11, 13], f32>, !tgc.vtensor<[6, 1, 3, 3], f32>, !tgc.vtensor<[2, 5, 9, 5], f32>, !tgc.vtensor<[2, 5, 9, 9], f32>, !tgc.vtensor<[5, 1, 5, 5], f32>, !tgc.vtensor<[2, 3, 4, 7], f32>, !tgc.vtensor<[2, 3, 8, 20], f32>, !tgc.vtensor<[3, 1, 3, 3], f32>, !tgc.vtensor<[2, 6, 4, 4], f32>
  }
}
