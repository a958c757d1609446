// Embedding and its weight gradient (with and without padding_idx; repeated indices
// accumulate), against PyTorch.
module {
  func.func @forward(%w: !tgc.vtensor<[10, 4], f32> {tgc.name = "w"},
                     %i: !tgc.vtensor<[3, 5], i64> {tgc.name = "i"},
                     %g: !tgc.vtensor<[3, 5, 4], f32> {tgc.name = "g"})
      -> (!tgc.vtensor<[3, 5, 4], f32>, !tgc.vtensor<[10, 4], f32>, !tgc.vtensor<[10, 4], f32>) {
    %0 = tgc.embedding %w, %i {padding_idx = 0 : i64} : !tgc.vtensor<[10, 4], f32>, !tgc.vtensor<[3, 5], i64> -> !tgc.vtensor<[3, 5, 4], f32>
    %1 = tgc.embedding_backward %g, %i {num_weights = 10 : i64, padding_idx = 0 : i64} : !tgc.vtensor<[3, 5, 4], f32>, !tgc.vtensor<[3, 5], i64> -> !tgc.vtensor<[10, 4], f32>
    %2 = tgc.embedding_backward %g, %i {num_weights = 10 : i64} : !tgc.vtensor<[3, 5, 4], f32>, !tgc.vtensor<[3, 5], i64> -> !tgc.vtensor<[10, 4], f32>
    return %0, %1, %2 : !tgc.vtensor<[3, 5, 4], f32>, !tgc.vtensor<[10, 4], f32>, !tgc.vtensor<[10, 4], f32>
  }
}
