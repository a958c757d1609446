// f32 -> float8_e4m3fn -> f32 (what --pack-saved=fp8 does to a saved value), and
// f32 -> bfloat16 -> f32 (--pack-saved=bf16); make_expected.py has PyTorch's results.
module {
  func.func @forward(%x: !tgc.vtensor<[64], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[64], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[64], f32> {tgc.kind = "user_output"}) {
    %p8 = tgc.to_dtype %x {dtype = f8E4M3FN} : !tgc.vtensor<[64], f32> -> !tgc.vtensor<[64], f8E4M3FN>
    %u8 = tgc.to_dtype %p8 {dtype = f32} : !tgc.vtensor<[64], f8E4M3FN> -> !tgc.vtensor<[64], f32>
    %p16 = tgc.to_dtype %x {dtype = bf16} : !tgc.vtensor<[64], f32> -> !tgc.vtensor<[64], bf16>
    %u16 = tgc.to_dtype %p16 {dtype = f32} : !tgc.vtensor<[64], bf16> -> !tgc.vtensor<[64], f32>
    return %u8, %u16 : !tgc.vtensor<[64], f32>, !tgc.vtensor<[64], f32>
  }
}
