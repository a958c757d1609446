// RUN: tgc-opt %s --tgc-partition="activation-budget=8" --split-input-file --verify-diagnostics | FileCheck %s

// partition.mlir partitions this graph without a budget and saves s = sum(x, 1) (16
// bytes). With an 8-byte budget, saving activations becomes 16 times as costly as
// saving inputs: x (a parameter, passed by reference: 0 bytes) is saved and the backward
// recomputes s.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 0 : i64, tgc.saved_count = 1 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[4, 8], f32, grad>
//       CHECK:   return %{{.*}}, %[[X]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SX:.*]]: !tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "saved"}
//       CHECK:   %[[S:.*]] = tgc.sum %[[SX]]
//       CHECK:   tgc.exp %[[S]]
func.func @joint(%x: !tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "x"},
                 %t: !tgc.vtensor<[], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
  %s = tgc.sum %x {dim = array<i64: 1>} : !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %e = tgc.exp %s : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %y = tgc.sum %e : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[], f32, grad>
  %ge = tgc.mul %e, %t : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[4], f32>
  %u = tgc.unsqueeze %ge {dim = 1 : i64} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4, 1], f32>
  %gx = tgc.expand %u {size = #tgc.shape<[4, 8]>} : !tgc.vtensor<[4, 1], f32> -> !tgc.vtensor<[4, 8], f32>
  return %y, %gx : !tgc.vtensor<[], f32, grad>, !tgc.vtensor<[4, 8], f32>
}

// -----

// A matmul result the backward reads cannot be recomputed: the budget cannot be met,
// which is a warning, and the partition is the one that saves the least.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 1056 : i64, tgc.saved_count = 2 : i64}
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[M:.*]] = tgc.mm
//       CHECK:   return %{{.*}}, %{{.*}}, %[[M]] :
// expected-warning @below {{the saved values take 1056 bytes, over the activation budget of 8 bytes, even with all cheap ops recomputed}}
func.func @joint(%x: !tgc.vtensor<[4, 2], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w: !tgc.vtensor<[2, 64], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                 %t: !tgc.vtensor<[4, 64], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 64], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[2, 64], f32> {tgc.kind = "gradient", tgc.target = "w"}) {
  %half = arith.constant 0.5 : f64
  %m = tgc.mm %x, %w : !tgc.vtensor<[4, 2], f32>, !tgc.vtensor<[2, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %sq = tgc.mul %m, %m : !tgc.vtensor<[4, 64], f32, grad>, !tgc.vtensor<[4, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %y = tgc.mul %sq, %half : !tgc.vtensor<[4, 64], f32, grad>, f64 -> !tgc.vtensor<[4, 64], f32, grad>
  %gm = tgc.mul %t, %m : !tgc.vtensor<[4, 64], f32>, !tgc.vtensor<[4, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32>
  %xt = tgc.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[2, 4], f32>
  %gw = tgc.mm %xt, %gm : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[4, 64], f32> -> !tgc.vtensor<[2, 64], f32>
  return %y, %gw : !tgc.vtensor<[4, 64], f32, grad>, !tgc.vtensor<[2, 64], f32>
}
