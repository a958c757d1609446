// RUN: tgc-opt %s --tgc-prepare-entries="model-name=m" --split-input-file --verify-diagnostics | FileCheck %s

// An inference model: its one public function is the forward entry. tgc.abi lists the
// arguments (kind, name, value tensor type; state with the initial value of its
// tgc.global; an unnamed input is input.N) and the results (outputs named output.N, a
// python_state output with its slot and output index, a mutation with the index of its
// target); tgc.symbols moves into it. The function is unchanged.
// CHECK-LABEL: module attributes {tgc.abi = {
//  CHECK-SAME:   args = [{kind = "parameter", name = "w", type = !tgc.vtensor<[4], f32>, value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>},
//  CHECK-SAME:           {kind = "buffer", name = "steps", type = !tgc.vtensor<[], i64>, value = dense<7> : tensor<i64>},
//  CHECK-SAME:           {kind = "user_input", name = "x", type = !tgc.vtensor<[s0, 4], f32>},
//  CHECK-SAME:           {kind = "user_input", name = "input.3", type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:   entries = {forward = "main"}, name = "m",
//  CHECK-SAME:   results = [{kind = "user_output", name = "output.0", type = !tgc.vtensor<[s0, 4], f32>},
//  CHECK-SAME:              {kind = "python_state", name = "output.1", output = 3 : i64, slot = "fn.cache", type = !tgc.vtensor<[s0, 4], f32>},
//  CHECK-SAME:              {kind = "buffer_mutation", name = "steps", target = 1 : i64, type = !tgc.vtensor<[], i64>},
//  CHECK-SAME:              {kind = "user_output", name = "output.3", type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:   symbols = [#tgc.symbol<"batch", min = 1, max = 64>]}} {
//   CHECK-NOT:   tgc.symbols
//       CHECK:   tgc.global @w
//       CHECK:   func.func @main(%[[W:.*]]: !tgc.vtensor<[4], f32> {tgc.global = @w, tgc.kind = "parameter", tgc.name = "w"},
//       CHECK:   return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>]} {
  tgc.global @w "parameter" : !tgc.vtensor<[4], f32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  tgc.global @steps "buffer" : !tgc.vtensor<[], i64> = dense<7> : tensor<i64>
  func.func @main(
      %w: !tgc.vtensor<[4], f32> {tgc.kind = "parameter", tgc.name = "w", tgc.global = @w},
      %steps: !tgc.vtensor<[], i64> {tgc.kind = "buffer", tgc.name = "steps", tgc.global = @steps},
      %x: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_input", tgc.name = "x"},
      %y: !tgc.vtensor<[s0, 4], f32>)
      -> (!tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 4], f32> {tgc.kind = "python_state", tgc.name = "fn.cache", tgc.output = 3 : i64},
          !tgc.vtensor<[], i64> {tgc.kind = "buffer_mutation", tgc.target = "steps"},
          !tgc.vtensor<[s0, 4], f32>) {
    %one = arith.constant 1 : i64
    %steps1 = tgc.add %steps, %one : !tgc.vtensor<[], i64>, i64 -> !tgc.vtensor<[], i64>
    %z = tgc.add %x, %w : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[s0, 4], f32>
    return %z, %x, %steps1, %y : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[], i64>, !tgc.vtensor<[s0, 4], f32>
  }
}

// -----

// A trainable model: the saved parameter `w` (returned as is) is saved by reference,
// so @forward no longer returns it; @backward gets one argument per size symbol; the
// gradient of user input 0 is input.0; the partition's totals move into tgc.abi.
// CHECK-LABEL: module attributes {tgc.abi = {
//  CHECK-SAME:   args = [{kind = "parameter", name = "w", {{.*}}}, {kind = "user_input", name = "x", type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:   backward = {results = [{kind = "gradient", name = "input.0", target = 1 : i64, type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:               saved = [{arg = 0 : i64, type = !tgc.vtensor<[4], f32>}, {type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:               saved_bytes = 48 : i64, saved_count = 2 : i64, tangents = array<i64: 0>},
//  CHECK-SAME:   entries = {backward = "backward", forward = "forward"}, name = "m",
//  CHECK-SAME:   results = [{kind = "user_output", name = "output.0", type = !tgc.vtensor<[s0, 4], f32>}],
//  CHECK-SAME:   symbols = [#tgc.symbol<"batch", min = 1, max = 64>]}} {
//   CHECK-NOT:   tgc.saved_
//       CHECK:   func.func @forward(%[[W:[^:]*]]: {{.*}}, %[[X:[^:]*]]: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
//  CHECK-SAME:       -> (!tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_output"}, !tgc.vtensor<[s0, 4], f32> {tgc.kind = "saved"}) {
//       CHECK:     %[[Y:.*]] = tgc.mul %[[X]], %[[W]]
//       CHECK:     return %[[Y]], %[[X]] :
//       CHECK:   func.func @backward({{.*}} {tgc.kind = "tangent", tgc.output = 0 : i64}, %{{.*}}: !tgc.vtensor<[s0], i8>)
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>],
                   tgc.saved_count = 2 : i64, tgc.saved_bytes = 48 : i64} {
  tgc.global @w "parameter" : !tgc.vtensor<[4], f32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  func.func @forward(
      %w: !tgc.vtensor<[4], f32> {tgc.kind = "parameter", tgc.name = "w", tgc.global = @w},
      %x: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[4], f32> {tgc.kind = "saved"},
          !tgc.vtensor<[s0, 4], f32> {tgc.kind = "saved"}) {
    %y = tgc.mul %x, %w : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[s0, 4], f32>
    return %y, %w, %x : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[s0, 4], f32>
  }
  func.func @backward(
      %w: !tgc.vtensor<[4], f32> {tgc.kind = "saved"},
      %x: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "saved"},
      %dy: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %dx = tgc.mul %dy, %w : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[s0, 4], f32>
    return %dx : !tgc.vtensor<[s0, 4], f32>
  }
}

// -----

// expected-error @below {{the program has more than one entry function}}
module {
  func.func @a(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
  func.func @b(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

// expected-error @below {{the program has no entry function}}
module {
  func.func private @a(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{@backward without a @forward}}
  func.func @backward(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{unknown argument kind 'weight'}}
  func.func @forward(%x: !tgc.vtensor<[4], f32> {tgc.kind = "weight"}) -> !tgc.vtensor<[4], f32> {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{argument #0 must be a value tensor, got '!tgc.tensor<[4], f32>'}}
  func.func @forward(%x: !tgc.tensor<[4], f32>) -> !tgc.tensor<[4], f32> {
    return %x : !tgc.tensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{unknown result kind 'saved'}}
  func.func @forward(%x: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32> {tgc.kind = "saved"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{result #0 of @forward targets unknown 'nothing'}}
  func.func @forward(%x: !tgc.vtensor<[4], f32>)
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_input_mutation", tgc.target = "nothing"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{result #0 of @forward names no target}}
  func.func @forward(%x: !tgc.vtensor<[4], f32>)
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_input_mutation"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  // expected-error @below {{python_state result #0 needs tgc.name and tgc.output}}
  func.func @forward(%x: !tgc.vtensor<[4], f32>)
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "python_state"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  func.func @forward(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}, !tgc.vtensor<[4], f32> {tgc.kind = "saved"}) {
    return %x, %x : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
  }
  // expected-error @+2 {{tangent argument #1 needs tgc.output, the index of a user output}}
  func.func @backward(%s: !tgc.vtensor<[4], f32> {tgc.kind = "saved"},
                      %dy: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 1 : i64})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    return %dy : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  func.func @forward(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}, !tgc.vtensor<[4], f32> {tgc.kind = "saved"}) {
    return %x, %x : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
  }
  // expected-error @below {{argument #0 of @backward must be saved value #0}}
  func.func @backward(%dy: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64},
                      %s: !tgc.vtensor<[4], f32> {tgc.kind = "saved"})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    return %dy : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  func.func @forward(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
  // expected-error @below {{result #0 of @backward has kind 'user_output': expected gradient, buffer_mutation or user_input_mutation}}
  func.func @backward(%dy: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}) {
    return %dy : !tgc.vtensor<[4], f32>
  }
}

// -----

module {
  func.func @forward(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}) {
    return %x : !tgc.vtensor<[4], f32>
  }
  // expected-error @below {{tangent #0 is '!tgc.vtensor<[4], f64>' but user output #0 is '!tgc.vtensor<[4], f32>'}}
  func.func @backward(%dy: !tgc.vtensor<[4], f64> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %0 = tgc.mul %dy, %dy : !tgc.vtensor<[4], f64>, !tgc.vtensor<[4], f64> -> !tgc.vtensor<[4], f64>
    %1 = tgc.to_dtype %0 {dtype = f32} : !tgc.vtensor<[4], f64> -> !tgc.vtensor<[4], f32>
    return %1 : !tgc.vtensor<[4], f32>
  }
}
