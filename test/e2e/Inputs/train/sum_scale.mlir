// A partitioned training program whose backward uses the batch symbol that none of its
// saved values or tangents has: loss = sum(x * w) returns a scalar, and
// grad x = expand(dy * w, [batch, 3]). The backward entry gets the symbol's value from
// the runtime (docs/abi.md, the backward's symbol arguments). w is saved by reference.
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>]} {
  tgc.global @w "parameter" : !tgc.vtensor<[3], f32> = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>

  func.func @forward(
      %w: !tgc.vtensor<[3], f32> {tgc.kind = "parameter", tgc.name = "w", tgc.global = @w},
      %x: !tgc.vtensor<[s0, 3], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[3], f32> {tgc.kind = "saved"}) {
    %p = tgc.mul %x, %w : !tgc.vtensor<[s0, 3], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[s0, 3], f32>
    %s = tgc.sum %p : !tgc.vtensor<[s0, 3], f32> -> !tgc.vtensor<[], f32>
    return %s, %w : !tgc.vtensor<[], f32>, !tgc.vtensor<[3], f32>
  }

  func.func @backward(
      %w: !tgc.vtensor<[3], f32> {tgc.kind = "saved"},
      %dy: !tgc.vtensor<[], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 3], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %g = tgc.mul %dy, %w : !tgc.vtensor<[], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[3], f32>
    %e = tgc.expand %g {size = #tgc.shape<[s0, 3]>} : !tgc.vtensor<[3], f32> -> !tgc.vtensor<[s0, 3], f32>
    return %e : !tgc.vtensor<[s0, 3], f32>
  }
}
