// Convolutions whose im2col columns exceed 1 MiB for the whole batch, so that they run
// in chunks of the batch (compiled and run by test/e2e/ops.test; expected values from
// make_expected.py): two chunks of 2 images, strided along the width; three chunks of
// one image, with a bias.
module {
  func.func @forward(%x1: !tgc.vtensor<[4, 2, 32, 64], f32> {tgc.name = "x1"},
                     %w1: !tgc.vtensor<[2, 2, 7, 7], f32> {tgc.name = "w1"},
                     %x2: !tgc.vtensor<[3, 4, 40, 40], f32> {tgc.name = "x2"},
                     %w2: !tgc.vtensor<[2, 4, 5, 5], f32> {tgc.name = "w2"},
                     %b2: !tgc.vtensor<[2], f32> {tgc.name = "b2"})
      -> (!tgc.vtensor<[4, 2, 26, 29], f32>, !tgc.vtensor<[3, 2, 36, 36], f32>) {
    %0 = tgc.convolution %x1, %w1 {stride = array<i64: 1, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[4, 2, 32, 64], f32>, !tgc.vtensor<[2, 2, 7, 7], f32> -> !tgc.vtensor<[4, 2, 26, 29], f32>
    %1 = tgc.convolution %x2, %w2, %b2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[3, 4, 40, 40], f32>, !tgc.vtensor<[2, 4, 5, 5], f32>, !tgc.vtensor<[2], f32> -> !tgc.vtensor<[3, 2, 36, 36], f32>
    return %0, %1 : !tgc.vtensor<[4, 2, 26, 29], f32>, !tgc.vtensor<[3, 2, 36, 36], f32>
  }
}
