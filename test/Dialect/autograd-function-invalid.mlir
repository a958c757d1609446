// RUN: tgc-opt %s --split-input-file --verify-diagnostics

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @too_many_outputs(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{num_outputs (2) must be between 0 and the number of results (1)}}
  %0 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64>, num_outputs = 2 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %y: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func private @bwd(%g: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
  return %g, %g : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}
func.func @gradient_order(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{gradient_of must list operand indices in increasing order, got 0}}
  %0 = tgc.autograd_function @fwd, @bwd(%x, %x) {gradient_of = array<i64: 1, 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @gradient_out_of_range(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{gradient_of must list operand indices in increasing order, got 1}}
  %0 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64: 1>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @gradients_without_backward(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{gradient_of must be empty without a backward function}}
  %0 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func @missing_forward(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{@nowhere is not a function}}
  %0 = tgc.autograd_function @nowhere(%x) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @forward_results(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{@fwd must take 1 arguments and return 2 results, has 1 and 1}}
  %0:2 = tgc.autograd_function @fwd(%x) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>)
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
  return %x, %x : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}
func.func private @bwd(%g: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %g : !tgc.vtensor<[4], f32>
}
func.func @backward_arguments(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{@bwd must take 2 arguments and return 1 results, has 1 and 1}}
  %0:2 = tgc.autograd_function @fwd, @bwd(%x) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>)
  return
}
