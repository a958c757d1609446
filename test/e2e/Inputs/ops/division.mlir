// Rounded division (floor_divide, `//`, div with rounding_mode): int64 operands stay
// int64, floor rounds toward -inf and trunc toward 0 for every sign combination; f32
// floor division; broadcasting of a divisor row; a zero divisor (0) and INT64_MIN / -1
// (wraps), which ATen rejects or x86 traps on: the program does not crash.
module {
  func.func @forward(%a: !tgc.vtensor<[4, 8], i64> {tgc.name = "a"},
                     %b: !tgc.vtensor<[4, 8], i64> {tgc.name = "b"},
                     %r: !tgc.vtensor<[8], i64> {tgc.name = "r"},
                     %x: !tgc.vtensor<[4, 8], f32> {tgc.name = "x"},
                     %y: !tgc.vtensor<[4, 8], f32> {tgc.name = "y"},
                     %n: !tgc.vtensor<[8], i64> {tgc.name = "n"},
                     %z: !tgc.vtensor<[8], i64> {tgc.name = "z"})
      -> (!tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64>,
          !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], i64>) {
    %0 = tgc.div %a, %b {rounding_mode = "floor"} : !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64> -> !tgc.vtensor<[4, 8], i64>
    %1 = tgc.div %a, %b {rounding_mode = "trunc"} : !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64> -> !tgc.vtensor<[4, 8], i64>
    %2 = tgc.div %a, %r {rounding_mode = "floor"} : !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[8], i64> -> !tgc.vtensor<[4, 8], i64>
    %3 = tgc.div %x, %y {rounding_mode = "floor"} : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[4, 8], f32>
    %4 = tgc.div %x, %y {rounding_mode = "trunc"} : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[4, 8], f32>
    %5 = tgc.div %n, %z {rounding_mode = "floor"} : !tgc.vtensor<[8], i64>, !tgc.vtensor<[8], i64> -> !tgc.vtensor<[8], i64>
    return %0, %1, %2, %3, %4, %5 : !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], i64>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], i64>
  }
}
