// RUN: tgc-opt %s --split-input-file --verify-diagnostics

func.func private @fwd(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @too_many_outputs(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{num_outputs (2) plus the forward writes (0) must be at most the number of results (1)}}
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
  // expected-error @below {{gradient_of lists 1, which is not an operand index}}
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

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @forward_mutates_range(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{forward_mutates lists 2, which is not an operand index}}
  %0 = tgc.autograd_function @fwd(%x, %x) {gradient_of = array<i64>, num_outputs = 1 : i64, forward_mutates = array<i64: 2>} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @backward_mutates_twice(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{backward_mutates lists operand 1 twice}}
  %0 = tgc.autograd_function @fwd(%x, %x) {gradient_of = array<i64>, num_outputs = 1 : i64, backward_mutates = array<i64: 1, 1>} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @backward_mutates_without_backward(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{backward_mutates must be empty without a backward function}}
  %0 = tgc.autograd_function @fwd(%x, %x) {gradient_of = array<i64>, num_outputs = 1 : i64, backward_mutates = array<i64: 1>} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

// A value-level op writing operand 1 in forward has its new value as a last result.
func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %x : !tgc.vtensor<[4], f32>
}
func.func @forward_write_result(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{num_outputs (1) plus the forward writes (1) must be at most the number of results (1)}}
  %0 = tgc.autograd_function @fwd(%x, %x) {gradient_of = array<i64>, num_outputs = 1 : i64, forward_mutates = array<i64: 1>} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32>
  return
}

// -----

// The value-level backward returns the written values after the gradients.
func.func private @fwd(%x: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
  return %x, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}
func.func private @bwd(%b: !tgc.vtensor<[4], f32>, %g: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  return %g : !tgc.vtensor<[4], f32>
}
func.func @backward_write_result(%x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{@bwd must take 2 arguments and return 2 results, has 2 and 1}}
  %0:2 = tgc.autograd_function @fwd, @bwd(%x, %x) {gradient_of = array<i64: 0>, num_outputs = 1 : i64, backward_mutates = array<i64: 1>} : (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>)
  return
}
