// Cross-entropy (class indices with and without weights and ignore_index, 3-d logits,
// class probabilities) and nll_loss with its gradient, against PyTorch.
module {
  func.func @forward(%x: !tgc.vtensor<[4, 5], f32> {tgc.name = "x"},
                     %t: !tgc.vtensor<[4], i64> {tgc.name = "t"},
                     %w: !tgc.vtensor<[5], f32> {tgc.name = "w"},
                     %img: !tgc.vtensor<[2, 5, 3], f32> {tgc.name = "img"},
                     %timg: !tgc.vtensor<[2, 3], i64> {tgc.name = "timg"},
                     %p: !tgc.vtensor<[4, 5], f32> {tgc.name = "p"},
                     %g: !tgc.vtensor<[], f32> {tgc.name = "g"},
                     %gn: !tgc.vtensor<[4], f32> {tgc.name = "gn"})
      -> (!tgc.vtensor<[], f32>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[], f32>,
          !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>,
          !tgc.vtensor<[], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4, 5], f32>,
          !tgc.vtensor<[2, 5, 3], f32>) {
    %0 = tgc.cross_entropy_loss %x, %t : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64> -> !tgc.vtensor<[], f32>
    %1 = tgc.cross_entropy_loss %x, %t weight %w {reduction = 0 : i64, ignore_index = 2 : i64} : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[4], f32>
    %2 = tgc.cross_entropy_loss %x, %t weight %w {ignore_index = 2 : i64} : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[], f32>
    %3 = tgc.cross_entropy_loss %img, %timg {reduction = 2 : i64} : !tgc.vtensor<[2, 5, 3], f32>, !tgc.vtensor<[2, 3], i64> -> !tgc.vtensor<[], f32>
    %4 = tgc.cross_entropy_loss %x, %p weight %w : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[], f32>
    %5:2 = tgc.nll_loss %x, %t weight %w {ignore_index = 2 : i64} : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
    %6 = tgc.nll_loss_backward %g, %x, %t weight %w total %5#1 {ignore_index = 2 : i64} : !tgc.vtensor<[], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[5], f32>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[4, 5], f32>
    %7 = tgc.nll_loss_backward %gn, %x, %t total %5#1 {reduction = 0 : i64} : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[4, 5], f32>
    %8:2 = tgc.nll_loss %img, %timg {reduction = 2 : i64} : !tgc.vtensor<[2, 5, 3], f32>, !tgc.vtensor<[2, 3], i64> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
    %9 = tgc.nll_loss_backward %g, %img, %timg total %8#1 {reduction = 2 : i64} : !tgc.vtensor<[], f32>, !tgc.vtensor<[2, 5, 3], f32>, !tgc.vtensor<[2, 3], i64>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[2, 5, 3], f32>
    return %0, %1, %2, %3, %4, %5#0, %5#1, %6, %7, %9 : !tgc.vtensor<[], f32>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[2, 5, 3], f32>
  }
}
