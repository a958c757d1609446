// What LLM mask building uses (transformers' create_causal_mask): advanced indexing by
// broadcasting index tensors (negative indices count from the end; one index tensor
// keeps the trailing dimensions), diff with prepend (int64), of bool (!=) and twice (f32),
// and the bitwise ops of bool and int64 tensors with broadcasting.
module {
  func.func @forward(%x: !tgc.vtensor<[4, 6, 5], f32> {tgc.name = "x"},
                     %rows: !tgc.vtensor<[3, 1], i64> {tgc.name = "rows"},
                     %cols: !tgc.vtensor<[1, 2], i64> {tgc.name = "cols"},
                     %p: !tgc.vtensor<[2, 7], i64> {tgc.name = "p"},
                     %first: !tgc.vtensor<[2, 1], i64> {tgc.name = "first"},
                     %m: !tgc.vtensor<[3, 8], i1> {tgc.name = "m"},
                     %n: !tgc.vtensor<[3, 8], i1> {tgc.name = "n"},
                     %i: !tgc.vtensor<[3, 8], i64> {tgc.name = "i"},
                     %j: !tgc.vtensor<[8], i64> {tgc.name = "j"})
      -> (!tgc.vtensor<[3, 2, 5], f32>, !tgc.vtensor<[3, 1, 6, 5], f32>, !tgc.vtensor<[2, 7], i64>,
          !tgc.vtensor<[3, 7], i1>, !tgc.vtensor<[2, 5], f32>, !tgc.vtensor<[3, 8], i1>,
          !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1>,
          !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[3, 8], i64>,
          !tgc.vtensor<[3, 8], i64>) {
    %0 = tgc.index %x[%rows, %cols] : !tgc.vtensor<[4, 6, 5], f32>, !tgc.vtensor<[3, 1], i64>, !tgc.vtensor<[1, 2], i64> -> !tgc.vtensor<[3, 2, 5], f32>
    %1 = tgc.index %x[%rows] : !tgc.vtensor<[4, 6, 5], f32>, !tgc.vtensor<[3, 1], i64> -> !tgc.vtensor<[3, 1, 6, 5], f32>
    %2 = tgc.diff %p prepend %first {dim = -1 : i64} : !tgc.vtensor<[2, 7], i64>, !tgc.vtensor<[2, 1], i64> -> !tgc.vtensor<[2, 7], i64>
    %3 = tgc.diff %m {dim = 1 : i64} : !tgc.vtensor<[3, 8], i1> -> !tgc.vtensor<[3, 7], i1>
    %pf = tgc.to_dtype %p {dtype = f32} : !tgc.vtensor<[2, 7], i64> -> !tgc.vtensor<[2, 7], f32>
    %4 = tgc.diff %pf {n = 2 : i64, dim = 1 : i64} : !tgc.vtensor<[2, 7], f32> -> !tgc.vtensor<[2, 5], f32>
    %5 = tgc.bitwise_and %m, %n : !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1> -> !tgc.vtensor<[3, 8], i1>
    %6 = tgc.bitwise_or %m, %n : !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1> -> !tgc.vtensor<[3, 8], i1>
    %7 = tgc.bitwise_xor %m, %n : !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1> -> !tgc.vtensor<[3, 8], i1>
    %8 = tgc.bitwise_not %m : !tgc.vtensor<[3, 8], i1> -> !tgc.vtensor<[3, 8], i1>
    %9 = tgc.bitwise_and %i, %j : !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[8], i64> -> !tgc.vtensor<[3, 8], i64>
    %10 = tgc.bitwise_or %i, %j : !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[8], i64> -> !tgc.vtensor<[3, 8], i64>
    %11 = tgc.bitwise_xor %i, %j : !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[8], i64> -> !tgc.vtensor<[3, 8], i64>
    %12 = tgc.bitwise_not %i : !tgc.vtensor<[3, 8], i64> -> !tgc.vtensor<[3, 8], i64>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : !tgc.vtensor<[3, 2, 5], f32>, !tgc.vtensor<[3, 1, 6, 5], f32>, !tgc.vtensor<[2, 7], i64>, !tgc.vtensor<[3, 7], i1>, !tgc.vtensor<[2, 5], f32>, !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i1>, !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[3, 8], i64>, !tgc.vtensor<[3, 8], i64>
  }
}
