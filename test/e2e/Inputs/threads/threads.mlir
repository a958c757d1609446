// Kernels big enough to run on the thread pool (tgc-parallelize-kernels) and a GEMM big
// enough to be split across threads: a row softmax (a reduction per row), the tanh GELU,
// a column sum (a reduction over the outer dimension, which stays on one thread), and
// x @ w.
module {
  func.func @forward(%x: !tgc.vtensor<[512, 256], f32> {tgc.name = "x"}, %w: !tgc.vtensor<[256, 256], f32> {tgc.name = "w"})
      -> (!tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256], f32>, !tgc.vtensor<[512, 256], f32>) {
    %0 = tgc.softmax %x {dim = 1 : i64} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    %1 = tgc.gelu %x {approximate = "tanh"} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    %2 = tgc.sum %x {dim = array<i64: 0>} : !tgc.vtensor<[512, 256], f32> -> !tgc.vtensor<[256], f32>
    %3 = tgc.mm %x, %w : !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256, 256], f32> -> !tgc.vtensor<[512, 256], f32>
    return %0, %1, %2, %3 : !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[512, 256], f32>, !tgc.vtensor<[256], f32>, !tgc.vtensor<[512, 256], f32>
  }
}
