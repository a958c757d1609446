// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// A custom autograd.Function: forward returns its output and a saved tensor; backward
// takes the saved tensor and the output's gradient and gives the gradient of operand 0.
// CHECK-LABEL: func.func @apply
//       CHECK:   %{{.*}}:2 = tgc.autograd_function @fwd, @bwd(%{{.*}}) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32, grad>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>)
func.func private @fwd(%x: !tgc.vtensor<[4], f32, grad>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>) {
  %y = tgc.exp %x : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  return %y, %y : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>
}
func.func private @bwd(%y: !tgc.vtensor<[4], f32, grad>, %g: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32, grad> {
  %0 = tgc.mul %g, %y : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  return %0 : !tgc.vtensor<[4], f32, grad>
}
func.func @apply(%x: !tgc.vtensor<[4], f32, grad>) -> !tgc.vtensor<[4], f32, grad> {
  %0:2 = tgc.autograd_function @fwd, @bwd(%x) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32, grad>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>)
  return %0#0 : !tgc.vtensor<[4], f32, grad>
}

// -----

// Without a backward (no input required grad at capture).
// CHECK-LABEL: func.func @inference
//       CHECK:   tgc.autograd_function @fwd(%{{.*}}) {gradient_of = array<i64>, num_outputs = 1 : i64}
func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @inference(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %0 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return %0 : !tgc.vtensor<[4], f32>
}
