// RUN: tgc-opt %s --tgc-functionalize --split-input-file --verify-diagnostics | FileCheck %s

// Each branch of a tgc.cond is functionalized on its own: an in-place op on a tensor
// the branch created becomes a pure op; the cond and its regions become value-level.
// CHECK-LABEL: func.func @branch_local_write
//  CHECK-SAME:   (%[[P:.*]]: !tgc.vtensor<[], i1>, %[[X:.*]]: !tgc.vtensor<[4], f32>)
//       CHECK:   %[[R:.*]] = tgc.cond %[[P]] inputs(%[[X]] : !tgc.vtensor<[4], f32>) {symbols = array<i64>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[4], f32> then {
//  CHECK-NEXT:   ^bb0(%[[A:.*]]: !tgc.vtensor<[4], f32>):
//  CHECK-NEXT:     %[[C:.*]] = tgc.clone %[[A]]
//       CHECK:     %[[ADD:.*]] = tgc.add %[[C]], %{{.*}} : !tgc.vtensor<[4], f32>, f64 -> !tgc.vtensor<[4], f32>
//  CHECK-NEXT:     tgc.yield %[[ADD]] : !tgc.vtensor<[4], f32>
//       CHECK:   } else {
//  CHECK-NEXT:   ^bb0(%[[B:.*]]: !tgc.vtensor<[4], f32>):
//  CHECK-NEXT:     tgc.yield %[[B]] : !tgc.vtensor<[4], f32>
//       CHECK:   return %[[R]]
func.func @branch_local_write(%p: !tgc.tensor<[], i1>, %x: !tgc.tensor<[4], f32>) -> !tgc.tensor<[4], f32> {
  %r = tgc.cond %p inputs(%x : !tgc.tensor<[4], f32>) {symbols = array<i64>} : !tgc.tensor<[], i1> -> !tgc.tensor<[4], f32> then {
  ^bb0(%a: !tgc.tensor<[4], f32>):
    %c = tgc.clone %a : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
    %one = arith.constant 1.0 : f64
    %w = tgc.add_ %c, %one : !tgc.tensor<[4], f32>, f64 -> !tgc.tensor<[4], f32>
    tgc.yield %c : !tgc.tensor<[4], f32>
  } else {
  ^bb0(%a: !tgc.tensor<[4], f32>):
    tgc.yield %a : !tgc.tensor<[4], f32>
  }
  return %r : !tgc.tensor<[4], f32>
}

// -----

// A branch writing into its input is rejected (torch.cond forbids input mutation).
func.func @branch_writes_input(%p: !tgc.tensor<[], i1>, %x: !tgc.tensor<[4], f32>) -> !tgc.tensor<[4], f32> {
  // expected-error @below {{functionalize: the else branch writes into its input #0; branches must not mutate their inputs}}
  %r = tgc.cond %p inputs(%x : !tgc.tensor<[4], f32>) {symbols = array<i64>} : !tgc.tensor<[], i1> -> !tgc.tensor<[4], f32> then {
  ^bb0(%a: !tgc.tensor<[4], f32>):
    tgc.yield %a : !tgc.tensor<[4], f32>
  } else {
  ^bb0(%a: !tgc.tensor<[4], f32>):
    %v = tgc.view %a {size = #tgc.shape<[2, 2]>} : !tgc.tensor<[4], f32> -> !tgc.tensor<[2, 2], f32>
    %one = arith.constant 1.0 : f64
    %w = tgc.add_ %v, %one : !tgc.tensor<[2, 2], f32>, f64 -> !tgc.tensor<[2, 2], f32>
    tgc.yield %a : !tgc.tensor<[4], f32>
  }
  return %r : !tgc.tensor<[4], f32>
}
