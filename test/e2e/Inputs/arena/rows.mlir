// A program whose temporaries all have the dynamic batch size s0 (test/e2e/arena.test):
// h = x * w, softmax(h) * gelu(h) + h. Each output row depends on its input row
// only, computed the same way whatever the batch (no library GEMM: those pick their
// kernels, and so their summation order, by the number of rows).
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 64>]} {
  func.func @forward(%x: !tgc.vtensor<[s0, 64], f32> {tgc.name = "x"}, %w: !tgc.vtensor<[64], f32> {tgc.name = "w"})
      -> !tgc.vtensor<[s0, 64], f32> {
    %h = tgc.mul %x, %w : !tgc.vtensor<[s0, 64], f32>, !tgc.vtensor<[64], f32> -> !tgc.vtensor<[s0, 64], f32>
    %a = tgc.softmax %h {dim = 1 : i64} : !tgc.vtensor<[s0, 64], f32> -> !tgc.vtensor<[s0, 64], f32>
    %b = tgc.gelu %h {approximate = "tanh"} : !tgc.vtensor<[s0, 64], f32> -> !tgc.vtensor<[s0, 64], f32>
    %p = tgc.mul %a, %b : !tgc.vtensor<[s0, 64], f32>, !tgc.vtensor<[s0, 64], f32> -> !tgc.vtensor<[s0, 64], f32>
    %y = tgc.add %p, %h : !tgc.vtensor<[s0, 64], f32>, !tgc.vtensor<[s0, 64], f32> -> !tgc.vtensor<[s0, 64], f32>
    return %y : !tgc.vtensor<[s0, 64], f32>
  }
}
