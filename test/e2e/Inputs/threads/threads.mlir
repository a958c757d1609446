// Kernels big enough to run on the thread pool (tgc-parallelize-kernels) and a GEMM big
// enough to be split across threads: a row softmax (a reduction per row), the tanh GELU,
// a column sum (a reduction over the outer dimension, which stays on one thread), x @ w,
// and a convolution whose im2col columns (2.4 MB) are split into chunks of the batch that
// run on the threads, each with its own GEMM.
module {
  func.func @forward(%x: !tgc.vtensor<[512, 256], f32> {tgc.name = "x"}, %w: !tgc.vtensor<[256, 256], f32> {tgc.name = "w"},
                     %c: !tgc.vtensor<[8, 8, 32, 32], f32> {tgc.name = "c"}, %k: !tgc.vtensor<[16, 8, 3, 3], f32> {tgc.name = "k"})
      -> (!tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[8, 16, 32, 32], f32>) {
    %0 = tgc.softmax %x {dim = 1 : i64} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    %1 = tgc.gelu %x {approximate = "tanh"} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    %2 = tgc.sum %x {dim = array<i64: 0>} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[256], f32>
    %3 = tgc.mm %x, %w : !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    %4 = tgc.convolution %c, %k {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[8, 8, 32, 32], f32>, !tgc.vtensor<[16, 8, 3, 3], f32> -> !tgc.vtensor<[8, 16, 32, 32], f32>
    return %0, %1, %2, %3, %4 : !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[8, 16, 32, 32], f32>
  }
}
