// cumsum (what LLMs compute position ids with): f32 along the middle dimension
// (accumulated in f64), along the last of a dynamic-size tensor, int64 and bool inputs
// (summed into int64), and `reverse`, the derivative's form: the gradient of
// cumsum(x, 1) for the output gradient g, against PyTorch's autograd.
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 16>]} {
  func.func @forward(%x: !tgc.vtensor<[3, 5, 7], f32> {tgc.name = "x"},
                     %d: !tgc.vtensor<[s0, 9], f32> {tgc.name = "d"},
                     %i: !tgc.vtensor<[4, 6], i64> {tgc.name = "i"},
                     %m: !tgc.vtensor<[2, 8], i1> {tgc.name = "m"},
                     %g: !tgc.vtensor<[3, 5, 7], f32> {tgc.name = "g"})
      -> (!tgc.vtensor<[3, 5, 7], f32>, !tgc.vtensor<[s0, 9], f32>, !tgc.vtensor<[4, 6], i64>,
          !tgc.vtensor<[2, 8], i64>, !tgc.vtensor<[3, 5, 7], f32>) {
    %0 = tgc.cumsum %x {dim = 1 : i64} : !tgc.vtensor<[3, 5, 7], f32> -> !tgc.vtensor<[3, 5, 7], f32>
    %1 = tgc.cumsum %d {dim = -1 : i64} : !tgc.vtensor<[s0, 9], f32> -> !tgc.vtensor<[s0, 9], f32>
    %2 = tgc.cumsum %i {dim = 0 : i64} : !tgc.vtensor<[4, 6], i64> -> !tgc.vtensor<[4, 6], i64>
    %3 = tgc.cumsum %m {dim = 1 : i64} : !tgc.vtensor<[2, 8], i1> -> !tgc.vtensor<[2, 8], i64>
    %4 = tgc.cumsum %g {dim = 1 : i64, reverse} : !tgc.vtensor<[3, 5, 7], f32> -> !tgc.vtensor<[3, 5, 7], f32>
    return %0, %1, %2, %3, %4 : !tgc.vtensor<[3, 5, 7], f32>, !tgc.vtensor<[s0, 9], f32>, !tgc.vtensor<[4, 6], i64>, !tgc.vtensor<[2, 8], i64>, !tgc.vtensor<[3, 5, 7], f32>
  }
}
