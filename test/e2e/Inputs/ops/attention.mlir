// scaled_dot_product_attention as one fused, tiled kernel (compiled and run by
// test/e2e/ops.test; expected values from make_expected.py): causal, over tiles of 40
// queries and 80 keys (the first query tile reads one key tile); a float mask broadcast
// over heads, two key tiles of 75 and values wider than the keys, with a scale; a
// boolean mask over [L, S] on 3-d operands.
module {
  func.func @forward(%q1: !tgc.vtensor<[1, 2, 160, 8], f32> {tgc.name = "q1"},
                     %k1: !tgc.vtensor<[1, 2, 160, 8], f32> {tgc.name = "k1"},
                     %v1: !tgc.vtensor<[1, 2, 160, 8], f32> {tgc.name = "v1"},
                     %q2: !tgc.vtensor<[1, 2, 40, 16], f32> {tgc.name = "q2"},
                     %k2: !tgc.vtensor<[1, 2, 150, 16], f32> {tgc.name = "k2"},
                     %v2: !tgc.vtensor<[1, 2, 150, 24], f32> {tgc.name = "v2"},
                     %m2: !tgc.vtensor<[1, 1, 40, 150], f32> {tgc.name = "m2"},
                     %q3: !tgc.vtensor<[1, 40, 16], f32> {tgc.name = "q3"},
                     %k3: !tgc.vtensor<[1, 70, 16], f32> {tgc.name = "k3"},
                     %v3: !tgc.vtensor<[1, 70, 16], f32> {tgc.name = "v3"},
                     %m3: !tgc.vtensor<[40, 70], i1> {tgc.name = "m3"})
      -> (!tgc.vtensor<[1, 2, 160, 8], f32>, !tgc.vtensor<[1, 2, 40, 24], f32>,
          !tgc.vtensor<[1, 40, 16], f32>) {
    %0 = tgc.scaled_dot_product_attention %q1, %k1, %v1 {is_causal = true} : !tgc.vtensor<[1, 2, 160, 8], f32>, !tgc.vtensor<[1, 2, 160, 8], f32>, !tgc.vtensor<[1, 2, 160, 8], f32> -> !tgc.vtensor<[1, 2, 160, 8], f32>
    %1 = tgc.scaled_dot_product_attention %q2, %k2, %v2 mask %m2 {scale = 0.3 : f64} : !tgc.vtensor<[1, 2, 40, 16], f32>, !tgc.vtensor<[1, 2, 150, 16], f32>, !tgc.vtensor<[1, 2, 150, 24], f32>, !tgc.vtensor<[1, 1, 40, 150], f32> -> !tgc.vtensor<[1, 2, 40, 24], f32>
    %2 = tgc.scaled_dot_product_attention %q3, %k3, %v3 mask %m3 : !tgc.vtensor<[1, 40, 16], f32>, !tgc.vtensor<[1, 70, 16], f32>, !tgc.vtensor<[1, 70, 16], f32>, !tgc.vtensor<[40, 70], i1> -> !tgc.vtensor<[1, 40, 16], f32>
    return %0, %1, %2 : !tgc.vtensor<[1, 2, 160, 8], f32>, !tgc.vtensor<[1, 2, 40, 24], f32>, !tgc.vtensor<[1, 40, 16], f32>
  }
}
