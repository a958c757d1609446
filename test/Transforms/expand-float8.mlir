// RUN: tgc-opt %s --split-input-file --tgc-expand-float8 | FileCheck %s

// f32 -> float8_e4m3fn as integer arithmetic on the f32 bits (c10::Float8_e4m3fn's
// rounding): the sign is split off; subnormal results let the f32 adder round (add
// 141 << 23 = 16384.0, subtract its bits); normal ones rebias the exponent
// ((7 - 127) << 23 + 0x7FFFF = -1006108673) and round the mantissa to 3 bits, ties to
// even; magnitudes below 121 << 23 are subnormal, from 1087 << 20 (464.0) up NaN (0x7F);
// the sign goes back in at bit 7 and the byte becomes the f8 value.
// CHECK-LABEL: func.func @trunc_f32
//  CHECK-SAME:   (%[[X:.*]]: f32) -> f8E4M3FN
//   CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : i32
//   CHECK-DAG:   %[[C255:.*]] = arith.constant 255 : i32
//   CHECK-DAG:   %[[NAN:.*]] = arith.constant 127 : i32
//   CHECK-DAG:   %[[OVERFLOW:.*]] = arith.constant 1139802112 : i32
//   CHECK-DAG:   %[[SMALL:.*]] = arith.constant 1015021568 : i32
//   CHECK-DAG:   %[[REBIAS:.*]] = arith.constant -1006108673 : i32
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : i32
//   CHECK-DAG:   %[[C20:.*]] = arith.constant 20 : i32
//   CHECK-DAG:   %[[MAGIC:.*]] = arith.constant 1.638400e+04 : f32
//   CHECK-DAG:   %[[MAGIC_BITS:.*]] = arith.constant 1182793728 : i32
//   CHECK-DAG:   %[[SIGN_MASK:.*]] = arith.constant -2147483648 : i32
//       CHECK:   %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
//  CHECK-NEXT:   %[[SIGN:.*]] = arith.andi %[[BITS]], %[[SIGN_MASK]] : i32
//  CHECK-NEXT:   %[[MAG:.*]] = arith.xori %[[BITS]], %[[SIGN]] : i32
//  CHECK-NEXT:   %[[MAG_F:.*]] = arith.bitcast %[[MAG]] : i32 to f32
//  CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[MAG_F]], %[[MAGIC]] : f32
//  CHECK-NEXT:   %[[SUM_BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
//  CHECK-NEXT:   %[[DENORM:.*]] = arith.subi %[[SUM_BITS]], %[[MAGIC_BITS]] : i32
//  CHECK-NEXT:   %[[SHIFTED:.*]] = arith.shrui %[[MAG]], %[[C20]] : i32
//  CHECK-NEXT:   %[[ODD:.*]] = arith.andi %[[SHIFTED]], %[[C1]] : i32
//  CHECK-NEXT:   %[[REBIASED:.*]] = arith.addi %[[MAG]], %[[REBIAS]] : i32
//  CHECK-NEXT:   %[[ROUNDED:.*]] = arith.addi %[[REBIASED]], %[[ODD]] : i32
//  CHECK-NEXT:   %[[NORMAL:.*]] = arith.shrui %[[ROUNDED]], %[[C20]] : i32
//  CHECK-NEXT:   %[[IS_SMALL:.*]] = arith.cmpi ult, %[[MAG]], %[[SMALL]] : i32
//  CHECK-NEXT:   %[[VALUE:.*]] = arith.select %[[IS_SMALL]], %[[DENORM]], %[[NORMAL]] : i32
//  CHECK-NEXT:   %[[IS_NAN:.*]] = arith.cmpi uge, %[[MAG]], %[[OVERFLOW]] : i32
//  CHECK-NEXT:   %[[FINITE:.*]] = arith.select %[[IS_NAN]], %[[NAN]], %[[VALUE]] : i32
//  CHECK-NEXT:   %[[LOW:.*]] = arith.andi %[[FINITE]], %[[C255]] : i32
//  CHECK-NEXT:   %[[SIGN8:.*]] = arith.shrui %[[SIGN]], %[[C24]] : i32
//  CHECK-NEXT:   %[[WORD:.*]] = arith.ori %[[LOW]], %[[SIGN8]] : i32
//  CHECK-NEXT:   %[[BYTE:.*]] = arith.trunci %[[WORD]] : i32 to i8
//  CHECK-NEXT:   %[[F8:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
//  CHECK-NEXT:   return %[[F8]] : f8E4M3FN
func.func @trunc_f32(%x: f32) -> f8E4M3FN {
  %0 = arith.truncf %x : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

// Wider sources are first truncated to f32, rounding to odd (the nearest f32, stepped
// toward zero when it rounded away, with the last bit set when inexact), so that the
// rounding to 8 bits is correct.
// CHECK-LABEL: func.func @trunc_f64
//  CHECK-SAME:   (%[[X:.*]]: f64) -> f8E4M3FN
//       CHECK:   %[[NEAR:.*]] = arith.truncf %[[X]] : f64 to f32
//  CHECK-NEXT:   %[[BACK:.*]] = arith.extf %[[NEAR]] : f32 to f64
//  CHECK-NEXT:   %[[INEXACT:.*]] = arith.cmpf one, %[[BACK]], %[[X]] : f64
//       CHECK:   %[[AWAY:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
//       CHECK:   %[[BITS:.*]] = arith.bitcast %[[NEAR]] : f32 to i32
//       CHECK:   %[[DOWN:.*]] = arith.subi %[[BITS]], %{{.*}} : i32
//  CHECK-NEXT:   %[[RZ:.*]] = arith.select %[[AWAY]], %[[DOWN]], %[[BITS]] : i32
//  CHECK-NEXT:   %[[ODD:.*]] = arith.ori %[[RZ]], %{{.*}} : i32
//  CHECK-NEXT:   %[[SEL:.*]] = arith.select %[[INEXACT]], %[[ODD]], %[[BITS]] : i32
//  CHECK-NEXT:   arith.bitcast %[[SEL]] : i32 to f32
//   CHECK-NOT:   arith.truncf
//       CHECK:   %[[BYTE:.*]] = arith.trunci %{{.*}} : i32 to i8
//  CHECK-NEXT:   %[[F8:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
//  CHECK-NEXT:   return %[[F8]] : f8E4M3FN
func.func @trunc_f64(%x: f64) -> f8E4M3FN {
  %0 = arith.truncf %x : f64 to f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

// float8_e4m3fn -> f32, exact: the byte goes to the top of an i32; subnormals are
// renormalized by the leading zeros past the 4 sign-and-exponent bits (math.ctlz); the
// exponent is rebiased from 7 to 127 (0x78 = 120); 0x7F/0xFF become NaN (0x7F800000
// ORed in), zero stays zero.
// CHECK-LABEL: func.func @ext_f32
//  CHECK-SAME:   (%[[X:.*]]: f8E4M3FN) -> f32
//   CHECK-DAG:   %[[ALL_ONES:.*]] = arith.constant -1 : i32
//   CHECK-DAG:   %[[C23:.*]] = arith.constant 23 : i32
//   CHECK-DAG:   %[[BIAS:.*]] = arith.constant 120 : i32
//   CHECK-DAG:   %[[C31:.*]] = arith.constant 31 : i32
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : i32
//   CHECK-DAG:   %[[INF_NAN:.*]] = arith.constant 2139095040 : i32
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : i32
//   CHECK-DAG:   %[[NAN_CARRY:.*]] = arith.constant 16777216 : i32
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : i32
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : i32
//   CHECK-DAG:   %[[NONSIGN_MASK:.*]] = arith.constant 2147483647 : i32
//   CHECK-DAG:   %[[SIGN_MASK:.*]] = arith.constant -2147483648 : i32
//   CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : i32
//       CHECK:   %[[BYTE:.*]] = arith.bitcast %[[X]] : f8E4M3FN to i8
//  CHECK-NEXT:   %[[WIDE:.*]] = arith.extui %[[BYTE]] : i8 to i32
//  CHECK-NEXT:   %[[W:.*]] = arith.shli %[[WIDE]], %[[C24]] : i32
//  CHECK-NEXT:   %[[SIGN:.*]] = arith.andi %[[W]], %[[SIGN_MASK]] : i32
//  CHECK-NEXT:   %[[NONSIGN:.*]] = arith.andi %[[W]], %[[NONSIGN_MASK]] : i32
//  CHECK-NEXT:   %[[LEADING:.*]] = math.ctlz %[[NONSIGN]] : i32
//  CHECK-NEXT:   %[[HAS_SHIFT:.*]] = arith.cmpi ugt, %[[LEADING]], %[[C4]] : i32
//  CHECK-NEXT:   %[[EXTRA:.*]] = arith.subi %[[LEADING]], %[[C4]] : i32
//  CHECK-NEXT:   %[[SHIFT:.*]] = arith.select %[[HAS_SHIFT]], %[[EXTRA]], %[[C0]] : i32
//  CHECK-NEXT:   %[[CARRY:.*]] = arith.addi %[[NONSIGN]], %[[NAN_CARRY]] : i32
//  CHECK-NEXT:   %[[SPREAD:.*]] = arith.shrsi %[[CARRY]], %[[C8]] : i32
//  CHECK-NEXT:   %[[IS_NAN:.*]] = arith.andi %[[SPREAD]], %[[INF_NAN]] : i32
//  CHECK-NEXT:   %[[MINUS1:.*]] = arith.subi %[[NONSIGN]], %[[C1]] : i32
//  CHECK-NEXT:   %[[ZERO:.*]] = arith.shrsi %[[MINUS1]], %[[C31]] : i32
//  CHECK-NEXT:   %[[NORMALIZED:.*]] = arith.shli %[[NONSIGN]], %[[SHIFT]] : i32
//  CHECK-NEXT:   %[[MANTISSA:.*]] = arith.shrui %[[NORMALIZED]], %[[C4]] : i32
//  CHECK-NEXT:   %[[EXP_FIELD:.*]] = arith.subi %[[BIAS]], %[[SHIFT]] : i32
//  CHECK-NEXT:   %[[EXPONENT:.*]] = arith.shli %[[EXP_FIELD]], %[[C23]] : i32
//  CHECK-NEXT:   %[[BODY:.*]] = arith.addi %[[MANTISSA]], %[[EXPONENT]] : i32
//  CHECK-NEXT:   %[[BODY_NAN:.*]] = arith.ori %[[BODY]], %[[IS_NAN]] : i32
//  CHECK-NEXT:   %[[NOT_ZERO:.*]] = arith.xori %[[ZERO]], %[[ALL_ONES]] : i32
//  CHECK-NEXT:   %[[MAGNITUDE:.*]] = arith.andi %[[BODY_NAN]], %[[NOT_ZERO]] : i32
//  CHECK-NEXT:   %[[RESULT:.*]] = arith.ori %[[SIGN]], %[[MAGNITUDE]] : i32
//  CHECK-NEXT:   %[[F32:.*]] = arith.bitcast %[[RESULT]] : i32 to f32
//  CHECK-NEXT:   return %[[F32]] : f32
func.func @ext_f32(%x: f8E4M3FN) -> f32 {
  %0 = arith.extf %x : f8E4M3FN to f32
  return %0 : f32
}

// -----

// Wider results are extended from the f32.
// CHECK-LABEL: func.func @ext_f64
//       CHECK:   %[[F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
//  CHECK-NEXT:   %[[F64:.*]] = arith.extf %[[F32]] : f32 to f64
//  CHECK-NEXT:   return %[[F64]] : f64
func.func @ext_f64(%x: f8E4M3FN) -> f64 {
  %0 = arith.extf %x : f8E4M3FN to f64
  return %0 : f64
}

// -----

// Other narrow floats are left alone: bf16 (arith-expand's), and float8 formats other
// than e4m3fn.
// CHECK-LABEL: func.func @other_floats
//  CHECK-SAME:   (%[[X:.*]]: f32, %[[Y:.*]]: f8E5M2)
//  CHECK-NEXT:   %[[BF16:.*]] = arith.truncf %[[X]] : f32 to bf16
//  CHECK-NEXT:   %[[E5M2:.*]] = arith.extf %[[Y]] : f8E5M2 to f32
//  CHECK-NEXT:   return %[[BF16]], %[[E5M2]] : bf16, f32
func.func @other_floats(%x: f32, %y: f8E5M2) -> (bf16, f32) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %y : f8E5M2 to f32
  return %0, %1 : bf16, f32
}

// -----

// f64 -> bf16: through f32 rounded to odd, then the f32 -> bf16 truncation that
// arith-expand turns into integer arithmetic (no __truncdfbf2 at link time).
// CHECK-LABEL: func.func @trunc_f64_bf16
//       CHECK:   arith.truncf %{{.*}} : f64 to f32
//       CHECK:   %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
//  CHECK-NEXT:   %[[B:.*]] = arith.truncf %[[ODD]] : f32 to bf16
//  CHECK-NEXT:   return %[[B]] : bf16
func.func @trunc_f64_bf16(%x: f64) -> bf16 {
  %0 = arith.truncf %x : f64 to bf16
  return %0 : bf16
}
