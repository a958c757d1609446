// RUN: tgc-opt %s --split-input-file --verify-diagnostics

func.func @conv_backward_wrong_grad(%g: !tgc.vtensor<[2, 6, 4, 4], f32>, %w: !tgc.vtensor<[6, 4, 3, 3], f32>) {
  // expected-error @below {{grad_output has sizes [2, 6, 4, 4] but the convolution's output has [2, 6, 7, 7]}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.convolution_backward_input %g, %w {input_size = #tgc.shape<[2, 4, 9, 9]>} : !tgc.vtensor<[2, 6, 4, 4], f32>, !tgc.vtensor<[6, 4, 3, 3], f32> -> !tgc.vtensor<[2, 4, 9, 9], f32>
  return
}

// -----

func.func @conv_backward_channels(%g: !tgc.vtensor<[2, 6, 7, 7], f32>, %x: !tgc.vtensor<[2, 4, 9, 9], f32>) {
  // expected-error @below {{input has 4 channels but the weight expects 6}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.convolution_backward_weight %g, %x {weight_size = #tgc.shape<[6, 3, 3, 3]>, groups = 2 : i64} : !tgc.vtensor<[2, 6, 7, 7], f32>, !tgc.vtensor<[2, 4, 9, 9], f32> -> !tgc.vtensor<[6, 3, 3, 3], f32>
  return
}

// -----

func.func @nll_float_target(%x: !tgc.vtensor<[4, 3], f32>, %t: !tgc.vtensor<[4, 3], f32>) {
  // expected-error @below {{nll_loss: target must hold class indices of sizes [4]}}
  // expected-error @below {{failed to infer returned types}}
  %0:2 = tgc.nll_loss %x, %t : !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4, 3], f32> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
  return
}

// -----

func.func @nll_bad_reduction(%x: !tgc.vtensor<[4, 3], f32>, %t: !tgc.vtensor<[4], i64>) {
  // expected-error @below {{reduction must be 0 (none), 1 (mean) or 2 (sum), got 3}}
  // expected-error @below {{failed to infer returned types}}
  %0:2 = tgc.nll_loss %x, %t {reduction = 3 : i64} : !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4], i64> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
  return
}

// -----

func.func @nll_bad_weight(%x: !tgc.vtensor<[4, 3], f32>, %t: !tgc.vtensor<[4], i64>, %w: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{weight must have one entry per class (3)}}
  // expected-error @below {{failed to infer returned types}}
  %0:2 = tgc.nll_loss %x, %t weight %w : !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4], i64>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[], f32>, !tgc.vtensor<[], f32>
  return
}

// -----

func.func @cross_entropy_smoothing(%x: !tgc.vtensor<[4, 3], f32>, %t: !tgc.vtensor<[4], i64>) {
  // expected-error @below {{label_smoothing must be in [0, 1], got 2}}
  %0 = tgc.cross_entropy_loss %x, %t {label_smoothing = 2.0 : f64} : !tgc.vtensor<[4, 3], f32>, !tgc.vtensor<[4], i64> -> !tgc.vtensor<[], f32>
  return
}

// -----

func.func @embedding_float_indices(%w: !tgc.vtensor<[10, 4], f32>, %i: !tgc.vtensor<[3], f32>) {
  // expected-error @below {{embedding: indices must be an integer tensor, got 'f32'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.embedding %w, %i : !tgc.vtensor<[10, 4], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[3, 4], f32>
  return
}

// -----

func.func @embedding_backward_padding(%g: !tgc.vtensor<[3, 4], f32>, %i: !tgc.vtensor<[3], i64>) {
  // expected-error @below {{padding_idx 10 is not below num_weights 10}}
  %0 = tgc.embedding_backward %g, %i {num_weights = 10 : i64, padding_idx = 10 : i64} : !tgc.vtensor<[3, 4], f32>, !tgc.vtensor<[3], i64> -> !tgc.vtensor<[10, 4], f32>
  return
}

// -----

func.func @rand_bad_state(%s: !tgc.vtensor<[3], i64>, %o: i64) {
  // expected-error @below {{the RNG state must be i64[2] (seed, offset)}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.rand_bernoulli %s, %o {size = #tgc.shape<[4]>, p = 0.5 : f64} : !tgc.vtensor<[3], i64> -> !tgc.vtensor<[4], i1>
  return
}

// -----

func.func @rand_bad_p(%s: !tgc.vtensor<[2], i64>, %o: i64) {
  // expected-error @below {{p must be in [0, 1], got 1.5}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.rand_bernoulli %s, %o {size = #tgc.shape<[4]>, p = 1.5 : f64} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[4], i1>
  return
}

// -----

func.func @max_pool_backward_sizes(%g: !tgc.vtensor<[1, 1, 3, 3], f32>, %x: !tgc.vtensor<[1, 1, 8, 8], f32>, %i: !tgc.vtensor<[1, 1, 3, 3], i64>) {
  // expected-error @below {{grad_output has sizes [1, 1, 3, 3] but the pooling's output has [1, 1, 4, 4]}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.max_pool2d_backward %g, %x, %i {kernel_size = array<i64: 2>} : !tgc.vtensor<[1, 1, 3, 3], f32>, !tgc.vtensor<[1, 1, 8, 8], f32>, !tgc.vtensor<[1, 1, 3, 3], i64> -> !tgc.vtensor<[1, 1, 8, 8], f32>
  return
}

// -----

func.func @avg_pool_backward_divisor(%g: !tgc.vtensor<[1, 1, 4, 4], f32>, %x: !tgc.vtensor<[1, 1, 8, 8], f32>) {
  // expected-error @below {{divisor_override must be positive}}
  %0 = tgc.avg_pool2d_backward %g, %x {kernel_size = array<i64: 2>, divisor_override = 0 : i64} : !tgc.vtensor<[1, 1, 4, 4], f32>, !tgc.vtensor<[1, 1, 8, 8], f32> -> !tgc.vtensor<[1, 1, 8, 8], f32>
  return
}
