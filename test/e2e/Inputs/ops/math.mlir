// Transcendental functions over their whole fp32 domain, against PyTorch: exp, tanh and erf
// are inline polynomials in tgc's code (tgc-approximate-math), sigmoid, silu and both
// GELUs are built from them; log calls libm.
module {
  func.func @forward(%x: !tgc.vtensor<[8020], f32> {tgc.name = "x"}, %pos: !tgc.vtensor<[2010], f32> {tgc.name = "pos"})
      -> (!tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[2010], f32>) {
    %0 = tgc.exp %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %1 = tgc.tanh %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %2 = tgc.erf %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %3 = tgc.sigmoid %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %4 = tgc.silu %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %5 = tgc.gelu %x : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %6 = tgc.gelu %x {approximate = "tanh"} : !tgc.vtensor<[8020], f32> -> !tgc.vtensor<[8020], f32>
    %7 = tgc.log %pos : !tgc.vtensor<[2010], f32> -> !tgc.vtensor<[2010], f32>
    return %0, %1, %2, %3, %4, %5, %6, %7 : !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[8020], f32>, !tgc.vtensor<[2010], f32>
  }
}
