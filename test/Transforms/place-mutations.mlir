// RUN: tgc-opt %s --tgc-place-mutations --split-input-file --verify-diagnostics | FileCheck %s

// Batch-norm running statistics: written in forward from forward values only.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "user_output"}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "bn.running_mean", tgc.version = 1 : i64}
//  CHECK-SAME:   {tgc.kind = "gradient", tgc.target = "x"}
func.func @joint(%x: !tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %rm: !tgc.vtensor<[8], f32> {tgc.kind = "buffer", tgc.name = "bn.running_mean"},
                 %t: !tgc.vtensor<[4, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[8], f32> {tgc.kind = "buffer_mutation", tgc.target = "bn.running_mean"},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
  %c = arith.constant 0.9 : f64
  %0 = tgc.relu %x : !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[4, 8], f32, grad>
  %1 = tgc.sum %x {dim = array<i64: 0>} : !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[8], f32>
  %2 = tgc.mul %rm, %c : !tgc.vtensor<[8], f32>, f64 -> !tgc.vtensor<[8], f32>
  %3 = tgc.add %2, %1 : !tgc.vtensor<[8], f32>, !tgc.vtensor<[8], f32> -> !tgc.vtensor<[8], f32>
  %4 = tgc.mul %t, %0 : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[4, 8], f32>
  return %0, %3, %4 : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[8], f32>, !tgc.vtensor<[4, 8], f32>
}

// -----

// A buffer written from a tangent (a gradient accumulator): backward.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "acc", tgc.version = 1 : i64}
func.func @joint(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %acc: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "acc"},
                 %t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "acc"}) {
  %0 = tgc.relu %x : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %1 = tgc.add %acc, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %0, %1 : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
}

// -----

// Written in both passes: version 1 in forward, version 2 in backward from version 1.
// The backward write comes first among the results; versions follow the passes.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "b", tgc.version = 2 : i64}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 1 : i64}
func.func @joint(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"},
                 %t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  %c = arith.constant 1 : i64
  %0 = tgc.relu %x : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %1 = tgc.add %b, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  %2 = tgc.add %1, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %0, %2, %1 : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// Two forward writes of one target, the second computed from the first (a buffer
// updated twice in forward, kept as two results): versions follow the data flow.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 2 : i64}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 1 : i64}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  %c = arith.constant 1 : i64
  %0 = tgc.add %b, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  %1 = tgc.mul %0, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  return %1, %0 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// A user input written through a view (`x[1:3] = y * 2` after functionalization): the
// write is a slice_scatter of forward values, so it is a forward write.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "user_input_mutation", tgc.pass = "forward", tgc.target = "x", tgc.version = 1 : i64}
func.func @joint(%x: !tgc.vtensor<[4, 8], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %y: !tgc.vtensor<[2, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "y"},
                 %t: !tgc.vtensor<[2, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[2, 8], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "user_input_mutation", tgc.target = "x"},
        !tgc.vtensor<[2, 8], f32> {tgc.kind = "gradient", tgc.target = "y"}) {
  %c = arith.constant 2 : i64
  %0 = tgc.mul %y, %c : !tgc.vtensor<[2, 8], f32, grad>, i64 -> !tgc.vtensor<[2, 8], f32, grad>
  %1 = tgc.slice_scatter %x, %0 {dim = 0 : i64, start = #tgc.shape<[1]>, end = #tgc.shape<[3]>} : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[2, 8], f32, grad> -> !tgc.vtensor<[4, 8], f32>
  %2 = tgc.mul %t, %c : !tgc.vtensor<[2, 8], f32>, i64 -> !tgc.vtensor<[2, 8], f32>
  return %0, %1, %2 : !tgc.vtensor<[2, 8], f32, grad>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[2, 8], f32>
}

// -----

// A user input written in backward with its own gradient.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "user_input_mutation", tgc.pass = "backward", tgc.target = "x", tgc.version = 1 : i64}
func.func @joint(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4], f32> {tgc.kind = "user_input_mutation", tgc.target = "x"}) {
  %0 = tgc.relu %x : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %1 = tgc.sub %x, %t : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %0, %1 : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{results 0 and 1 both write 'b' in forward and neither is computed from the other: the final value of 'b' is ambiguous}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  %c = arith.constant 1 : i64
  %0 = tgc.add %b, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  %1 = tgc.mul %b, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  return %0, %1 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{results 0 and 1 both write 'b' in backward and neither is computed from the other: the final value of 'b' is ambiguous}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"},
                 %t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  %0 = tgc.add %b, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  %1 = tgc.mul %b, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %0, %1 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{mutation result 0 writes 'nope', which no argument of @joint is named}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "nope"}) {
  return %b : !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{mutation result 0 has no 'tgc.target' naming the argument it writes}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation"}) {
  return %b : !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{expected a func.func @joint (the joint forward-backward graph tgc-autodiff produces)}}
module {
  func.func @forward() {
    return
  }
}

// -----

// A write placed in backward by its producer (a custom autograd.Function's backward
// writing a buffer from forward values only) stays in backward, after the forward write.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 1 : i64}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "b", tgc.version = 2 : i64}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "b"}) {
  %c = arith.constant 1 : i64
  %0 = tgc.add %b, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  %1 = tgc.mul %0, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  return %0, %1 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// A preset pass that is neither.
// expected-error @below {{mutation result 0 has tgc.pass = 'sideways', expected 'forward' or 'backward'}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "sideways", tgc.target = "b"}) {
  return %b : !tgc.vtensor<[4], f32>
}
