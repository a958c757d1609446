// RUN: tgc-opt %s --split-input-file --tgc-inline-autograd-functions --verify-diagnostics | FileCheck %s

// Each op becomes its forward template's body, re-inferred on its operands (the template
// was traced at [1]); the templates are erased. A template applying another Function is
// inlined too.
// CHECK-NOT:   func.func private
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[4], f32>)
//       CHECK:   %[[E:.*]] = tgc.exp %[[X]] : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
//       CHECK:   %[[N:.*]] = tgc.neg %[[E]] : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
//       CHECK:   %[[S:.*]] = tgc.add %[[N]], %[[E]]
//       CHECK:   return %[[S]]
//   CHECK-NOT:   tgc.autograd_function
module {
  func.func private @neg_fwd(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    %0 = tgc.neg %x : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], f32>
    return %0 : !tgc.vtensor<[1], f32>
  }
  func.func private @fwd(%x: !tgc.vtensor<[1], f32>) -> (!tgc.vtensor<[1], f32>, !tgc.vtensor<[1], f32>) {
    %y = tgc.exp %x : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], f32>
    %n = tgc.autograd_function @neg_fwd(%y) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32>
    return %n, %y : !tgc.vtensor<[1], f32>, !tgc.vtensor<[1], f32>
  }
  func.func private @bwd(%y: !tgc.vtensor<[1], f32>, %g: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    return %g : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    %0:2 = tgc.autograd_function @fwd, @bwd(%x) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>)
    %1 = tgc.add %0#0, %0#1 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    return %1 : !tgc.vtensor<[4], f32>
  }
}

// -----

// A template another function still refers to stays.
// CHECK-LABEL: func.func private @shared
// CHECK-LABEL: func.func @forward
//       CHECK:   call @shared
module {
  func.func private @shared(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    %0 = tgc.autograd_function @shared(%x) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
    %1 = func.call @shared(%0) : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
    return %1 : !tgc.vtensor<[4], f32>
  }
}

// -----

// A forward template of another dtype than the operand is an error.
module {
  func.func private @fwd(%x: !tgc.vtensor<[4], f64>) -> !tgc.vtensor<[4], f64> {
    return %x : !tgc.vtensor<[4], f64>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f64> {
    // expected-error @below {{hook @fwd takes 'f64' tensors, applied to 'f32'}}
    %0 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f64>
    return %0 : !tgc.vtensor<[4], f64>
  }
}
