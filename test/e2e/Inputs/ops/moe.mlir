// What transformers' mixture-of-experts layers compute (Mixtral, Qwen-MoE): histc of the
// sorted expert ids over [0, E - 1] (ids outside the range and NaN not counted), and
// grouped_mm of the rows grouped by expert with int32 offsets: an empty group, and rows
// after the last offset, which are 0.
module {
  func.func @forward(%ids: !tgc.vtensor<[12], f32> {tgc.name = "ids"},
                     %v: !tgc.vtensor<[3, 5], f32> {tgc.name = "v"},
                     %a: !tgc.vtensor<[10, 6], f32> {tgc.name = "a"},
                     %w: !tgc.vtensor<[4, 6, 3], f32> {tgc.name = "w"},
                     %offs: !tgc.vtensor<[4], i32> {tgc.name = "offs"})
      -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[7], f32>, !tgc.vtensor<[10, 3], f32>) {
    %0 = tgc.histc %ids {bins = 4 : i64, min = 0.0 : f64, max = 3.0 : f64} : !tgc.vtensor<[12], f32> -> !tgc.vtensor<[4], f32>
    %1 = tgc.histc %v {bins = 7 : i64, min = -1.5 : f64, max = 2.0 : f64} : !tgc.vtensor<[3, 5], f32> -> !tgc.vtensor<[7], f32>
    %2 = tgc.grouped_mm %a, %w, %offs : !tgc.vtensor<[10, 6], f32>, !tgc.vtensor<[4, 6, 3], f32>, !tgc.vtensor<[4], i32> -> !tgc.vtensor<[10, 3], f32>
    return %0, %1, %2 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[7], f32>, !tgc.vtensor<[10, 3], f32>
  }
}
