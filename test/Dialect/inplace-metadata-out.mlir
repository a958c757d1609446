// RUN: tgc-opt %s | tgc-opt | FileCheck %s

// Metadata-changing in-place ops and out= ops round-trip, with inferred result types.
// CHECK-LABEL: func.func @roundtrip
//       CHECK:   tgc.t_ %{{.*}} : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
//       CHECK:   tgc.transpose_ %{{.*}} {dim0 = 0 : i64, dim1 = 1 : i64}
//       CHECK:   tgc.squeeze_ %{{.*}} {dim = array<i64: 0>} : !tgc.tensor<[1, 4], f32> -> !tgc.tensor<[4], f32>
//       CHECK:   tgc.squeeze_ %{{.*}} : !tgc.tensor<[1, 4], f32> -> !tgc.tensor<[4], f32>
//       CHECK:   tgc.unsqueeze_ %{{.*}} {dim = 1 : i64} : !tgc.tensor<[4], f32> -> !tgc.tensor<[4, 1], f32>
//       CHECK:   tgc.add_out %{{.*}}, %{{.*}} out %{{.*}} {alpha = 2 : i64}
//       CHECK:   tgc.sub_out
//       CHECK:   tgc.mul_out
//       CHECK:   tgc.div_out
//       CHECK:   tgc.sigmoid_out %{{.*}} out %{{.*}} : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
//       CHECK:   tgc.tanh_out
//       CHECK:   tgc.exp_out
func.func @roundtrip(%x: !tgc.tensor<[3, 4], f32>, %s: !tgc.tensor<[1, 4], f32>,
                     %v: !tgc.tensor<[4], f32>, %o: !tgc.tensor<[4], f64>) {
  %0 = tgc.t_ %x : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  %1 = tgc.transpose_ %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  %2 = tgc.squeeze_ %s {dim = array<i64: 0>} : !tgc.tensor<[1, 4], f32> -> !tgc.tensor<[4], f32>
  %3 = tgc.squeeze_ %s : !tgc.tensor<[1, 4], f32> -> !tgc.tensor<[4], f32>
  %4 = tgc.unsqueeze_ %v {dim = 1 : i64} : !tgc.tensor<[4], f32> -> !tgc.tensor<[4, 1], f32>
  %5 = tgc.add_out %v, %v out %o {alpha = 2 : i64} : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %c = arith.constant 2.0 : f64
  %6 = tgc.sub_out %v, %c out %o : !tgc.tensor<[4], f32>, f64, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %7 = tgc.mul_out %v, %v out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %8 = tgc.div_out %v, %v out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %9 = tgc.sigmoid_out %v out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %10 = tgc.tanh_out %v out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %11 = tgc.exp_out %v out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  return
}

