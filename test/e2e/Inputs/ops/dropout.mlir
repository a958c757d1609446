// Dropout with the instance's RNG state (tgc-materialize-rng adds it): the kept fraction
// of 100000 elements (all 1.5) is 1 - p, every output is 0 or x / (1 - p), and a second dropout
// draws the Philox numbers after the first one's (make_expected.py recomputes them).
// The state comes back advanced by the 100064 numbers drawn.
module {
  func.func @forward(%y: !tgc.vtensor<[64], f32> {tgc.name = "y"})
      -> (!tgc.vtensor<[], f32>, !tgc.vtensor<[], i1>, !tgc.vtensor<[64], i1>) {
    %x = tgc.full {fill_value = 1.5 : f64, size = #tgc.shape<[1000, 100]>} : !tgc.vtensor<[1000, 100], f32>
    %out, %mask = tgc.native_dropout %x {p = 0.3 : f64, train = true} : !tgc.vtensor<[1000, 100], f32> -> !tgc.vtensor<[1000, 100], f32>, !tgc.vtensor<[1000, 100], i1>
    %kept = tgc.to_dtype %mask {dtype = f32} : !tgc.vtensor<[1000, 100], i1> -> !tgc.vtensor<[1000, 100], f32>
    %fraction = tgc.mean %kept : !tgc.vtensor<[1000, 100], f32> -> !tgc.vtensor<[], f32>
    %scale = arith.constant 1.4285714285714286 : f64
    %zero = arith.constant 0.0 : f64
    %scaled = tgc.mul %x, %scale : !tgc.vtensor<[1000, 100], f32>, f64 -> !tgc.vtensor<[1000, 100], f32>
    %is_scaled = tgc.eq %out, %scaled : !tgc.vtensor<[1000, 100], f32>, !tgc.vtensor<[1000, 100], f32> -> !tgc.vtensor<[1000, 100], i1>
    %is_zero = tgc.eq %out, %zero : !tgc.vtensor<[1000, 100], f32>, f64 -> !tgc.vtensor<[1000, 100], i1>
    %either = tgc.logical_or %is_scaled, %is_zero : !tgc.vtensor<[1000, 100], i1>, !tgc.vtensor<[1000, 100], i1> -> !tgc.vtensor<[1000, 100], i1>
    %all = tgc.all %either : !tgc.vtensor<[1000, 100], i1> -> !tgc.vtensor<[], i1>
    %out2, %mask2 = tgc.native_dropout %y {p = 0.5 : f64, train = true} : !tgc.vtensor<[64], f32> -> !tgc.vtensor<[64], f32>, !tgc.vtensor<[64], i1>
    return %fraction, %all, %mask2 : !tgc.vtensor<[], f32>, !tgc.vtensor<[], i1>, !tgc.vtensor<[64], i1>
  }
}
