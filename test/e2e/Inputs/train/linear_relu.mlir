// A hand-written partitioned training program (what tgc-partition produces, see
// docs/training.md) for
//     y = relu(x @ W^T + b),  mask = y > 0
// with buffer `steps` += 1 in the forward and buffer `gsq` += grad_b^2 in the backward.
// Saved: W (a parameter returned as is: passed by reference), mask, x (a user input:
// copied) and gsq (a buffer the backward reads: copied). Outputs: y (differentiable,
// tangent 0) and mask (bool, no tangent). Gradients: W, b and x. The batch is
// symbolic (saved_bytes is at batch = 2). make_linear_relu.py computes the expected
// values with PyTorch.
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>],
                   tgc.saved_count = 4 : i64, tgc.saved_bytes = 96 : i64} {
  tgc.global @fc.weight "parameter" : !tgc.vtensor<[4, 3], f32> =
      dense<[[0.5, -1.0, 0.25], [1.5, 0.5, -0.5], [-0.75, 0.25, 1.0], [0.1, 0.2, 0.3]]> : tensor<4x3xf32>
  tgc.global @fc.bias "parameter" : !tgc.vtensor<[4], f32> =
      dense<[0.1, -0.2, 0.3, -2.0]> : tensor<4xf32>
  tgc.global @steps "buffer" : !tgc.vtensor<[], i64> = dense<7> : tensor<i64>
  tgc.global @gsq "buffer" : !tgc.vtensor<[4], f32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>

  func.func @forward(
      %w: !tgc.vtensor<[4, 3], f32> {tgc.kind = "parameter", tgc.name = "fc.weight", tgc.global = @fc.weight},
      %b: !tgc.vtensor<[4], f32> {tgc.kind = "parameter", tgc.name = "fc.bias", tgc.global = @fc.bias},
      %steps: !tgc.vtensor<[], i64> {tgc.kind = "buffer", tgc.name = "steps", tgc.global = @steps},
      %gsq: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "gsq", tgc.global = @gsq},
      %x: !tgc.vtensor<[s0, 3], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 4], i1> {tgc.kind = "user_output"},
          !tgc.vtensor<[], i64> {tgc.kind = "buffer_mutation", tgc.target = "steps",
                                 tgc.pass = "forward", tgc.version = 1 : i64},
          !tgc.vtensor<[4, 3], f32> {tgc.kind = "saved"},
          !tgc.vtensor<[s0, 4], i1> {tgc.kind = "saved"},
          !tgc.vtensor<[s0, 3], f32> {tgc.kind = "saved"},
          !tgc.vtensor<[4], f32> {tgc.kind = "saved"}) {
    %wt = tgc.permute %w {dims = array<i64: 1, 0>} : !tgc.vtensor<[4, 3], f32> -> !tgc.vtensor<[3, 4], f32>
    %mm = tgc.mm %x, %wt : !tgc.vtensor<[s0, 3], f32>, !tgc.vtensor<[3, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
    %z = tgc.add %mm, %b : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[s0, 4], f32>
    %y = tgc.relu %z : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
    %zero = arith.constant 0.0 : f64
    %mask = tgc.gt %y, %zero : !tgc.vtensor<[s0, 4], f32>, f64 -> !tgc.vtensor<[s0, 4], i1>
    %one = arith.constant 1 : i64
    %steps1 = tgc.add %steps, %one : !tgc.vtensor<[], i64>, i64 -> !tgc.vtensor<[], i64>
    return %y, %mask, %steps1, %w, %mask, %x, %gsq
        : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[s0, 4], i1>, !tgc.vtensor<[], i64>,
          !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[s0, 4], i1>, !tgc.vtensor<[s0, 3], f32>,
          !tgc.vtensor<[4], f32>
  }

  func.func @backward(
      %w: !tgc.vtensor<[4, 3], f32> {tgc.kind = "saved"},
      %mask: !tgc.vtensor<[s0, 4], i1> {tgc.kind = "saved"},
      %x: !tgc.vtensor<[s0, 3], f32> {tgc.kind = "saved"},
      %gsq: !tgc.vtensor<[4], f32> {tgc.kind = "saved"},
      %dy: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[4, 3], f32> {tgc.kind = "gradient", tgc.target = "fc.weight"},
          !tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "fc.bias"},
          !tgc.vtensor<[s0, 3], f32> {tgc.kind = "gradient", tgc.target = "x"},
          !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "gsq",
                                  tgc.pass = "backward", tgc.version = 1 : i64}) {
    %zero = arith.constant 0.0 : f64
    %dz = tgc.where %mask, %dy, %zero : !tgc.vtensor<[s0, 4], i1>, !tgc.vtensor<[s0, 4], f32>, f64 -> !tgc.vtensor<[s0, 4], f32>
    %gx = tgc.mm %dz, %w : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4, 3], f32> -> !tgc.vtensor<[s0, 3], f32>
    %dzt = tgc.permute %dz {dims = array<i64: 1, 0>} : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[4, s0], f32>
    %gw = tgc.mm %dzt, %x : !tgc.vtensor<[4, s0], f32>, !tgc.vtensor<[s0, 3], f32> -> !tgc.vtensor<[4, 3], f32>
    %gb = tgc.sum %dz {dim = array<i64: 0>} : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[4], f32>
    %sq = tgc.mul %gb, %gb : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    %gsq1 = tgc.add %gsq, %sq : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    return %gw, %gb, %gx, %gsq1
        : !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[s0, 3], f32>,
          !tgc.vtensor<[4], f32>
  }
}
