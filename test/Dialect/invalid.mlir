// RUN: tgc-opt %s --split-input-file --verify-diagnostics

func.func @wrong_result_sizes(%x: !tgc.vtensor<[4, 16], f32>, %w: !tgc.vtensor<[16, 32], f32>) {
  // expected-error @below {{inferred type(s) '!tgc.vtensor<[4, 32], f32>' are incompatible}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.mm %x, %w : !tgc.vtensor<[4, 16], f32>, !tgc.vtensor<[16, 32], f32> -> !tgc.vtensor<[4, 33], f32>
  return
}

// -----

func.func @bad_contraction(%x: !tgc.vtensor<[4, 16], f32>, %w: !tgc.vtensor<[32, 16], f32>) {
  // expected-error @below {{matmul: contraction sizes differ (16 vs 32)}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.mm %x, %w : !tgc.vtensor<[4, 16], f32>, !tgc.vtensor<[32, 16], f32> -> !tgc.vtensor<[4, 32], f32>
  return
}

// -----

func.func @bad_broadcast(%a: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[5], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{operand sizes do not broadcast}}
  %0 = tgc.add %a, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[5], f32> -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func @bad_view(%a: !tgc.vtensor<[4, 6], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{view: shape}}
  %0 = tgc.view %a {size = #tgc.shape<[5, 5]>} : !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[5, 5], f32>
  return
}

// -----

func.func @bad_gelu(%a: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{approximate must be 'none' or 'tanh'}}
  %0 = tgc.gelu %a {approximate = "fast"} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func @inplace_on_value(%a: !tgc.vtensor<[4], f32>) {
  %c = arith.constant 1 : i64
  // expected-error @below {{must be a capture-level !tgc.tensor}}
  %0 = tgc.add_ %a, %c : !tgc.vtensor<[4], f32>, i64 -> !tgc.vtensor<[4], f32>
  return
}

// -----

// expected-error @below {{tensor size must be non-negative}}
func.func @negative_size(%a: !tgc.vtensor<[-2], f32>) {
  return
}

// -----

func.func @bad_dim(%a: !tgc.vtensor<[4, 5], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{dimension 3 is out of range for a tensor of rank 2}}
  %0 = tgc.softmax %a {dim = 3 : i64} : !tgc.vtensor<[4, 5], f32> -> !tgc.vtensor<[4, 5], f32>
  return
}

// -----

func.func @bitwise_float(%a: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{'tgc.bitwise_and' op takes integer or bool operands, got 'f32'}}
  %0 = tgc.bitwise_and %a, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func @shift_float(%a: !tgc.vtensor<[4], f32>, %b: !tgc.vtensor<[4], i64>) {
  // expected-error @below {{'tgc.bitwise_left_shift' op takes integer or bool operands, got 'f32'}}
  %0 = tgc.bitwise_left_shift %a, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], i64> -> !tgc.vtensor<[4], f32>
  return
}

// -----

func.func @index_by_mask(%x: !tgc.vtensor<[4, 5], f32>, %m: !tgc.vtensor<[4], i1>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{index: boolean mask indices (a data-dependent shape) are not supported}}
  %0 = tgc.index %x[%m] : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[4], i1> -> !tgc.vtensor<[4, 5], f32>
  return
}

// -----

func.func @index_no_broadcast(%x: !tgc.vtensor<[4, 5], f32>, %i: !tgc.vtensor<[3], i64>, %j: !tgc.vtensor<[2], i64>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{index: index tensors of sizes [3] and [2] do not broadcast}}
  %0 = tgc.index %x[%i, %j] : !tgc.vtensor<[4, 5], f32>, !tgc.vtensor<[3], i64>, !tgc.vtensor<[2], i64> -> !tgc.vtensor<[3], f32>
  return
}

// -----

func.func @reflect_pad_too_large(%x: !tgc.vtensor<[2, 3], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{pad: reflect padding of 3 is too large for dimension 1 of size 3}}
  %0 = tgc.pad %x {pad = array<i64: 3, 0>, mode = "reflect"} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 6], f32>
  return
}

// -----

func.func @pad_unknown_mode(%x: !tgc.vtensor<[2, 3], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{pad: unknown mode 'mirror'}}
  %0 = tgc.pad %x {pad = array<i64: 1, 1>, mode = "mirror"} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 5], f32>
  return
}

// -----

func.func @as_strided_out_of_range(%x: !tgc.vtensor<[2, 3], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{as_strided: position 6 is outside the input's 6 elements}}
  %0 = tgc.as_strided %x {size = #tgc.shape<[2, 2]>, stride = #tgc.shape<[3, 3]>} : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 2], f32>
  return
}

// -----

func.func @roll_symbolic(%x: !tgc.vtensor<[s0, 3], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{roll: dimension 0 must have a static size}}
  %0 = tgc.roll %x {shifts = array<i64: 1>, dims = array<i64: 0>} : !tgc.vtensor<[s0, 3], f32> -> !tgc.vtensor<[s0, 3], f32>
  return
}

// -----

func.func @upsample_integer(%x: !tgc.vtensor<[1, 1, 2, 2], i64>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{upsample: the input must be floating point, got 'i64'}}
  %0 = tgc.upsample %x {output_size = array<i64: 4, 4>} : !tgc.vtensor<[1, 1, 2, 2], i64> -> !tgc.vtensor<[1, 1, 4, 4], i64>
  return
}

// -----

func.func @upsample_cubic_3d(%x: !tgc.vtensor<[1, 1, 2, 2, 2], f32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{upsample: cubic resampling is 2-d, got 3 resampled dimensions}}
  %0 = tgc.upsample %x {mode = "cubic", output_size = array<i64: 4, 4, 4>} : !tgc.vtensor<[1, 1, 2, 2, 2], f32> -> !tgc.vtensor<[1, 1, 4, 4, 4], f32>
  return
}

// -----

func.func @index_dims_order(%x: !tgc.vtensor<[2, 3, 4], f32>, %i: !tgc.vtensor<[5], i64>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{index: dims must increase within the rank 3}}
  %0 = tgc.index %x[%i, %i] {dims = array<i64: 2, 1>} : !tgc.vtensor<[2, 3, 4], f32>, !tgc.vtensor<[5], i64>, !tgc.vtensor<[5], i64> -> !tgc.vtensor<[5, 2], f32>
  return
}

// -----

// Only a 1-d operand of size 0 is skipped: a non-empty one of another rank is an error.
func.func @cat_ranks(%a: !tgc.vtensor<[2], f32>, %b: !tgc.vtensor<[2, 3], f32>) -> !tgc.vtensor<[4, 3], f32> {
  // expected-error @below {{cat/stack operands must have equal ranks}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.cat %a, %b : !tgc.vtensor<[2], f32>, !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[4, 3], f32>
  return %0 : !tgc.vtensor<[4, 3], f32>
}

// -----

// A subscript repeated within an einsum operand (a diagonal) needs equal sizes there.
func.func @einsum_diagonal_sizes(%x: !tgc.vtensor<[4, 5], f32>) -> !tgc.vtensor<[4], f32> {
  // expected-error @below {{einsum 'ii->i': a subscript repeated in operand 0 has sizes 4 and 5}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.einsum %x {equation = "ii->i"} : !tgc.vtensor<[4, 5], f32> -> !tgc.vtensor<[4], f32>
  return %0 : !tgc.vtensor<[4], f32>
}

// -----

// channels_last lays out 4-d tensors only.
func.func @channels_last_rank(%x: !tgc.tensor<[2, 3, 4], f32>) {
  // expected-error @below {{required rank 4 tensor to use channels_last format}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.clone %x {memory_format = "channels_last"} : !tgc.tensor<[2, 3, 4], f32> -> !tgc.tensor<[2, 3, 4], f32>
  return
}

// -----

func.func @unknown_memory_format(%x: !tgc.tensor<[2, 3], f32>) {
  // expected-error @below {{unknown memory format 'row_major'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = tgc.to_dtype %x {memory_format = "row_major"} : !tgc.tensor<[2, 3], f32> -> !tgc.tensor<[2, 3], f32>
  return
}
