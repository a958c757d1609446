// tgc.cond (docs/bytecode.md, "torch.cond"), and tgc.bind_symbol: two isolated branch subgraphs whose free
// tensors are lifted into `inputs` and whose free size symbols are lifted into `sizes`
// exactly once. It round-trips; malformed ones are rejected.
// RUN: tgc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @cond
// CHECK: %[[N:.*]] = tgc.sym_size %{{.*}} {dim = 0 : i64}
// CHECK: tgc.cond %{{.*}} inputs(%{{.*}}, %{{.*}} : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[8], f32>) sizes(%[[N]]) {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 8], f32> then {
// CHECK-NEXT: ^bb0(%{{.*}}: !tgc.vtensor<[s0, 8], f32>, %{{.*}}: !tgc.vtensor<[8], f32>, %{{.*}}: i64):
// CHECK: tgc.yield %{{.*}} : !tgc.vtensor<[s0, 8], f32>
// CHECK: } else {
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>]} {
func.func @cond(%p: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[s0, 8], f32>,
                %b: !tgc.vtensor<[8], f32>) -> !tgc.vtensor<[s0, 8], f32> {
  %n = tgc.sym_size %x {dim = 0 : i64} : !tgc.vtensor<[s0, 8], f32>
  %r = tgc.cond %p inputs(%x, %b : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[8], f32>) sizes(%n)
      {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 8], f32>
  then {
  ^bb0(%a: !tgc.vtensor<[s0, 8], f32>, %c: !tgc.vtensor<[8], f32>, %s: i64):
    %t = tgc.add %a, %c : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[8], f32> -> !tgc.vtensor<[s0, 8], f32>
    tgc.yield %t : !tgc.vtensor<[s0, 8], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[s0, 8], f32>, %c: !tgc.vtensor<[8], f32>, %s: i64):
    tgc.yield %a : !tgc.vtensor<[s0, 8], f32>
  }
  return %r : !tgc.vtensor<[s0, 8], f32>
}
}

// -----

// A branch with no inputs and no results.
// CHECK-LABEL: func.func @empty
// CHECK: tgc.cond %{{.*}} : !tgc.tensor<[1], i1> then {
func.func @empty(%p: !tgc.tensor<[1], i1>) {
  tgc.cond %p {symbols = array<i64>} : !tgc.tensor<[1], i1> then {
    tgc.yield
  } else {
    tgc.yield
  }
  return
}

// -----

func.func @pred_elements(%p: !tgc.vtensor<[2], i1>) {
  // expected-error @below {{predicate must have exactly one element}}
  tgc.cond %p {symbols = array<i64>} : !tgc.vtensor<[2], i1> then {
    tgc.yield
  } else {
    tgc.yield
  }
  return
}

// -----

func.func @symbol_twice(%p: !tgc.vtensor<[], i1>, %n: i64) {
  // expected-error @below {{lifts symbol s0 more than once}}
  tgc.cond %p sizes(%n, %n) {symbols = array<i64: 0, 0>} : !tgc.vtensor<[], i1> then {
  ^bb0(%a: i64, %b: i64):
    tgc.yield
  } else {
  ^bb0(%a: i64, %b: i64):
    tgc.yield
  }
  return
}

// -----

func.func @symbol_not_lifted(%p: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[s0], f32>) -> !tgc.vtensor<[s0], f32> {
  // expected-error @below {{the then region uses size symbol s0, which is not lifted into `sizes`}}
  %r = tgc.cond %p inputs(%x : !tgc.vtensor<[s0], f32>) {symbols = array<i64>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0], f32> then {
  ^bb0(%a: !tgc.vtensor<[s0], f32>):
    tgc.yield %a : !tgc.vtensor<[s0], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[s0], f32>):
    tgc.yield %a : !tgc.vtensor<[s0], f32>
  }
  return %r : !tgc.vtensor<[s0], f32>
}

// -----

func.func @yield_type(%p: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %r = tgc.cond %p inputs(%x : !tgc.vtensor<[4], f32>) {symbols = array<i64>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[4], f32> then {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    tgc.yield %a : !tgc.vtensor<[4], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    %s = tgc.sum %a {dim = array<i64: 0>, keepdim = true} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[1], f32>
    // expected-error @below {{value #0 has type '!tgc.vtensor<[1], f32>', which differs from the result's sizes, dtype or form}}
    tgc.yield %s : !tgc.vtensor<[1], f32>
  }
  return %r : !tgc.vtensor<[4], f32>
}

// -----

func.func @arguments(%p: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[4], f32>) {
  // expected-error @below {{the then region's arguments must be the inputs' types, then one i64 per size}}
  tgc.cond %p inputs(%x : !tgc.vtensor<[4], f32>) {symbols = array<i64>} : !tgc.vtensor<[], i1> then {
    tgc.yield
  } else {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    tgc.yield
  }
  return
}

// -----

func.func @isolated(%p: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  // expected-note @below {{required by region isolation constraints}}
  %r = tgc.cond %p {symbols = array<i64>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[4], f32> then {
    // expected-error @below {{using value defined outside the region}}
    tgc.yield %x : !tgc.vtensor<[4], f32>
  } else {
    tgc.yield %x : !tgc.vtensor<[4], f32>
  }
  return %r : !tgc.vtensor<[4], f32>
}

// -----

// tgc.bind_symbol: an unbacked size symbol bound to a one-element integer tensor.
// CHECK-LABEL: func.func @bind
// CHECK: %{{.*}} = tgc.bind_symbol %{{.*}} {symbol = 0 : i64} : !tgc.vtensor<[], i64>
module attributes {tgc.symbols = [#tgc.symbol<"u0", min = 0, max = 8>]} {
func.func @bind(%n: !tgc.vtensor<[], i64>, %x: !tgc.vtensor<[8], f32>) -> !tgc.vtensor<[s0], f32> {
  %s = tgc.bind_symbol %n {symbol = 0 : i64} : !tgc.vtensor<[], i64>
  %y = tgc.slice %x {end = #tgc.shape<[s0]>} : !tgc.vtensor<[8], f32> -> !tgc.vtensor<[s0], f32>
  return %y : !tgc.vtensor<[s0], f32>
}
}

// -----

func.func @bind_float(%n: !tgc.vtensor<[], f64>) {
  // expected-error @below {{value must be an integer tensor}}
  %s = tgc.bind_symbol %n {symbol = 0 : i64} : !tgc.vtensor<[], f64>
  return
}

// -----

func.func @bind_elements(%n: !tgc.vtensor<[2], i64>) {
  // expected-error @below {{value must have exactly one element}}
  %s = tgc.bind_symbol %n {symbol = 0 : i64} : !tgc.vtensor<[2], i64>
  return
}

// -----

func.func @bind_negative(%n: !tgc.vtensor<[], i64>) {
  // expected-error @below {{symbol must not be negative}}
  %s = tgc.bind_symbol %n {symbol = -1 : i64} : !tgc.vtensor<[], i64>
  return
}
