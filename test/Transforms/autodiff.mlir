// RUN: tgc-opt %s --tgc-autodiff --split-input-file --verify-diagnostics | FileCheck %s

// y = relu(x @ w^T) + b: one tangent for the output; gradients for w and b (they
// require grad), none for x (it does not). relu's gradient masks by its result; the
// bias gradient sums over the broadcast rows.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   (%[[W:.*]]: !tgc.vtensor<[8, 4], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
//  CHECK-SAME:    %[[B:.*]]: !tgc.vtensor<[8], f32, grad> {tgc.kind = "parameter", tgc.name = "b"},
//  CHECK-SAME:    %[[X:.*]]: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_input", tgc.name = "x"},
//  CHECK-SAME:    %[[T:.*]]: !tgc.vtensor<[s0, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//  CHECK-SAME:   -> (!tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_output"},
//  CHECK-SAME:       !tgc.vtensor<[8, 4], f32> {tgc.kind = "gradient", tgc.target = "w"},
//  CHECK-SAME:       !tgc.vtensor<[8], f32> {tgc.kind = "gradient", tgc.target = "b"})
//       CHECK:   %[[WT:.*]] = tgc.transpose %[[W]]
//       CHECK:   %[[MM:.*]] = tgc.mm %[[X]], %[[WT]]
//       CHECK:   %[[R:.*]] = tgc.relu %[[MM]]
//       CHECK:   %[[Y:.*]] = tgc.add %[[R]], %[[B]]
//       CHECK:   %[[GB:.*]] = tgc.sum %[[T]] {dim = array<i64: 0>}
//       CHECK:   %[[POS:.*]] = tgc.gt %[[R]]
//       CHECK:   %[[GR:.*]] = tgc.where %[[POS]], %[[T]]
//       CHECK:   %[[XT:.*]] = tgc.transpose %[[X]]
//       CHECK:   %[[GWT:.*]] = tgc.mm %[[XT]], %[[GR]]
//       CHECK:   %[[GW:.*]] = tgc.transpose %[[GWT]]
//       CHECK:   return %[[Y]], %[[GW]], %[[GB]]
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 64>]} {
  func.func @forward(%w: !tgc.vtensor<[8, 4], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                     %b: !tgc.vtensor<[8], f32, grad> {tgc.kind = "parameter", tgc.name = "b"},
                     %x: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_output"}) {
    %wt = tgc.transpose %w {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[8, 4], f32, grad> -> !tgc.vtensor<[4, 8], f32, grad>
    %mm = tgc.mm %x, %wt : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[s0, 8], f32, grad>
    %r = tgc.relu %mm : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 8], f32, grad>
    %y = tgc.add %r, %b : !tgc.vtensor<[s0, 8], f32, grad>, !tgc.vtensor<[8], f32, grad> -> !tgc.vtensor<[s0, 8], f32, grad>
    return %y : !tgc.vtensor<[s0, 8], f32, grad>
  }
}

// -----

// A value used twice accumulates both gradients; a buffer mutation and an integer
// output get no tangent; detach stops the gradient; an unused parameter gets zeros.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   %[[T:[a-z0-9]+]]: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 1 : i64}
//  CHECK-SAME:   {tgc.kind = "gradient", tgc.target = "p"}, !tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "unused"})
//       CHECK:   %[[E:.*]] = tgc.exp %[[P:[a-z0-9]+]]
//       CHECK:   %[[D:.*]] = tgc.detach %[[E]]
//       CHECK:   %[[M:.*]] = tgc.mul %[[E]], %[[D]]
//       CHECK:   %[[G1:.*]] = tgc.mul %[[T]], %[[D]]
//       CHECK:   %[[G2:.*]] = tgc.mul %[[G1]], %[[E]]
//       CHECK:   %[[Z:.*]] = tgc.full_like %{{.*}} {fill_value = 0.000000e+00 : f64}
//       CHECK:   return %{{.*}}, %[[M]], %{{.*}}, %[[G2]], %[[Z]]
module {
  func.func @forward(%p: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "p"},
                     %unused: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "unused"},
                     %buf: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "buf"})
      -> (!tgc.vtensor<[4], i1> {tgc.kind = "user_output"},
          !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[4], f32, grad> {tgc.kind = "buffer_mutation", tgc.target = "buf"}) {
    %e = tgc.exp %p : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    %d = tgc.detach %e : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32>
    %m = tgc.mul %e, %d : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32, grad>
    %c = tgc.gt %m, %buf : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], i1>
    %nb = tgc.add %buf, %e : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %c, %m, %nb : !tgc.vtensor<[4], i1>, !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// Compound ops must be decomposed first: they have no formula.
module {
  func.func @forward(%p: !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "parameter", tgc.name = "p"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}) {
    // expected-error @+1 {{'tgc.var' op has no derivative formula (needed by --train)}}
    %v = tgc.var %p {dim = array<i64: 1>} : !tgc.vtensor<[4, 3], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %v : !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// expected-error @+1 {{tgc-autodiff: the module has no @forward function}}
module {
  func.func @main() {
    return
  }
}

// -----

// A gradient hook (register_hook) doubles the gradient flowing into %e before it reaches
// %p; forward no longer sees the hook, and the hook function is gone.
// CHECK-LABEL: func.func @joint
//       CHECK:   %[[E:.*]] = tgc.exp %[[P:[a-z0-9]+]]
//   CHECK-NOT:   tgc.grad_hook
//       CHECK:   %[[TWO:.*]] = arith.constant 2.0
//       CHECK:   %[[H:.*]] = tgc.mul %[[T:[a-z0-9]+]], %[[TWO]] : !tgc.vtensor<[4], f32>, f64
//       CHECK:   %[[G:.*]] = tgc.mul %[[H]], %[[E]]
//       CHECK:   return %[[E]], %[[G]]
//   CHECK-NOT:   func.func private @double
module {
  func.func private @double(%g: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    %two = arith.constant 2.0 : f64
    %0 = tgc.mul %g, %two : !tgc.vtensor<[1], f32>, f64 -> !tgc.vtensor<[1], f32>
    return %0 : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%p: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "p"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}) {
    %e = tgc.exp %p : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    %h = tgc.grad_hook %e @double : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %h : !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// gather's gradient scatters back through a one-hot comparison with the positions of
// `dim`; full_like depends on sizes only and passes no gradient.
// CHECK-LABEL: func.func @joint
//       CHECK:   %[[AR:.*]] = tgc.arange {dtype = i64, end = 5 : i64}
//       CHECK:   %[[ARV:.*]] = tgc.view %[[AR]] {size = #tgc.shape<[1, 1, 5]>}
//       CHECK:   %[[IU:.*]] = tgc.unsqueeze %[[I:[a-z0-9]+]] {dim = 2 : i64}
//       CHECK:   %[[HIT:.*]] = tgc.eq %[[IU]], %[[ARV]] : {{.*}} -> !tgc.vtensor<[6, 1, 5], i1>
//       CHECK:   %[[S:.*]] = tgc.sum %{{.*}} {dim = array<i64: 1>} : !tgc.vtensor<[6, 1, 5], f32> -> !tgc.vtensor<[6, 5], f32>
//       CHECK:   %[[G:.*]] = tgc.permute %[[S]] {dims = array<i64: 0, 1>}
//       CHECK:   %[[R:.*]] = tgc.mul %[[G]], %{{.*}}
//       CHECK:   return %{{.*}}, %[[R]]
module {
  func.func @forward(%p: !tgc.vtensor<[6, 5], f32, grad> {tgc.kind = "parameter", tgc.name = "p"},
                     %i: !tgc.vtensor<[6, 1], i64> {tgc.kind = "user_input", tgc.name = "i"})
      -> (!tgc.vtensor<[6, 1], f32, grad> {tgc.kind = "user_output"}) {
    %z = tgc.full_like %p {fill_value = 1.0 : f64} : !tgc.vtensor<[6, 5], f32, grad> -> !tgc.vtensor<[6, 5], f32, grad>
    %q = tgc.mul %p, %z : !tgc.vtensor<[6, 5], f32, grad>, !tgc.vtensor<[6, 5], f32, grad> -> !tgc.vtensor<[6, 5], f32, grad>
    %g = tgc.gather %q, %i {dim = 1 : i64} : !tgc.vtensor<[6, 5], f32, grad>, !tgc.vtensor<[6, 1], i64> -> !tgc.vtensor<[6, 1], f32, grad>
    return %g : !tgc.vtensor<[6, 1], f32, grad>
  }
}

// -----

// A custom autograd.Function (a custom exp that saves its output, and a second input
// with no gradient): the backward template is instantiated on the saved result and the
// tangent, and gives the gradient of operand 0 only (the other gets zeros); the op stays
// for tgc-inline-autograd-functions, the templates too.
// CHECK-LABEL: func.func private @fwd
// CHECK-LABEL: func.func private @bwd
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   (%[[P:.*]]: !tgc.vtensor<[4], f32, grad> {{.*}}, %[[Q:.*]]: !tgc.vtensor<[4], f32, grad> {{.*}}, %[[T:.*]]: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//       CHECK:   %[[F:.*]]:2 = tgc.autograd_function @fwd, @bwd(%[[P]], %[[Q]])
//       CHECK:   %[[G:.*]] = tgc.mul %[[T]], %[[F]]#1
//       CHECK:   %[[Z:.*]] = tgc.full_like %[[Q]] {fill_value = 0.0
//       CHECK:   return %[[F]]#0, %[[G]], %[[Z]]
module {
  func.func private @fwd(%x: !tgc.vtensor<[4], f32, grad>, %u: !tgc.vtensor<[4], f32, grad>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>) {
    %y = tgc.exp %x : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %y, %y : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>
  }
  func.func private @bwd(%y: !tgc.vtensor<[4], f32, grad>, %g: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32, grad> {
    %0 = tgc.mul %g, %y : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %0 : !tgc.vtensor<[4], f32, grad>
  }
  func.func @forward(%p: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "p"},
                     %q: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "q"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}) {
    %0:2 = tgc.autograd_function @fwd, @bwd(%p, %q) {gradient_of = array<i64: 0>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32, grad>)
    return %0#0 : !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// A Function captured without a backward cannot be differentiated.
module {
  func.func private @fwd(%x: !tgc.vtensor<[4], f32, grad>) -> !tgc.vtensor<[4], f32, grad> {
    return %x : !tgc.vtensor<[4], f32, grad>
  }
  func.func @forward(%p: !tgc.vtensor<[4], f32, grad> {tgc.kind = "parameter", tgc.name = "p"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}) {
    // expected-error @below {{has no backward function (no input required grad at capture)}}
    %0 = tgc.autograd_function @fwd(%p) {gradient_of = array<i64>, num_outputs = 1 : i64} : (!tgc.vtensor<[4], f32, grad>) -> !tgc.vtensor<[4], f32, grad>
    return %0 : !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// A Function writing buffer %b in forward (its new value is the op's last result, the
// @forward's buffer mutation) and in backward (@bwd returns the saved buffer times 2
// after the gradient): the backward write is a mutation result of @joint placed in
// backward, after the gradients.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.target = "b"}
//  CHECK-SAME:   {tgc.kind = "gradient", tgc.target = "x"}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "b"}
//       CHECK:   %[[F:.*]]:3 = tgc.autograd_function @fwd, @bwd
//       CHECK:   %[[G:.*]] = tgc.mul %{{.*}}, %[[F]]#1
//       CHECK:   %[[W:.*]] = tgc.mul %[[F]]#1, %{{.*}} : !tgc.vtensor<[4], f32>, f64
//       CHECK:   return %[[F]]#0, %[[F]]#2, %[[G]], %[[W]]
module {
  func.func private @fwd(%x: !tgc.vtensor<[4], f32, grad>, %b: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
    %c = arith.constant 1.0 : f64
    %nb = tgc.add %b, %c : !tgc.vtensor<[4], f32>, f64 -> !tgc.vtensor<[4], f32>
    %y = tgc.mul %x, %nb : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32, grad>
    return %y, %nb, %nb : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
  }
  func.func private @bwd(%b: !tgc.vtensor<[4], f32>, %g: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
    %c = arith.constant 2.0 : f64
    %0 = tgc.mul %g, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    %1 = tgc.mul %b, %c : !tgc.vtensor<[4], f32>, f64 -> !tgc.vtensor<[4], f32>
    return %0, %1 : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                     %b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
    %0:3 = tgc.autograd_function @fwd, @bwd(%x, %b) {gradient_of = array<i64: 0>, num_outputs = 1 : i64, forward_mutates = array<i64: 1>, backward_mutates = array<i64: 1>} : (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>)
    return %0#0, %0#2 : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
  }
}

// -----

// The buffer is written again after the Function's forward: eager's backward would see
// that later value, the saved one is older, so it is an error.
module {
  func.func private @fwd(%x: !tgc.vtensor<[4], f32, grad>, %b: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>) {
    return %x, %b : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
  }
  func.func private @bwd(%b: !tgc.vtensor<[4], f32>, %g: !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>) {
    return %g, %b : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                     %b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
    %c = arith.constant 1.0 : f64
    // expected-error @below {{backward writes into operand 1, which is not a graph input whose final forward value is the one the op leaves}}
    %0:2 = tgc.autograd_function @fwd, @bwd(%x, %b) {gradient_of = array<i64: 0>, num_outputs = 1 : i64, backward_mutates = array<i64: 1>} : (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>) -> (!tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>)
    %1 = tgc.add %b, %c : !tgc.vtensor<[4], f32>, f64 -> !tgc.vtensor<[4], f32>
    return %0#0, %1 : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
  }
}

// -----

// cumsum's gradient is the cumulative sum of the output gradient from the other end.
// CHECK-LABEL: func.func @joint
//       CHECK:   %[[Y:.*]] = tgc.cumsum %{{.*}} {dim = 1 : i64}
//       CHECK:   %[[GW:.*]] = tgc.cumsum %{{.*}} {dim = 1 : i64, reverse}
//       CHECK:   return %[[Y]], %[[GW]]
module {
  func.func @forward(%w: !tgc.vtensor<[2, 5], f32, grad> {tgc.kind = "parameter", tgc.name = "w"})
      -> (!tgc.vtensor<[2, 5], f32, grad> {tgc.kind = "user_output"}) {
    %0 = tgc.cumsum %w {dim = 1 : i64} : !tgc.vtensor<[2, 5], f32, grad> -> !tgc.vtensor<[2, 5], f32, grad>
    return %0 : !tgc.vtensor<[2, 5], f32, grad>
  }
}

// -----

// A fused attention's backward is tgc.scaled_dot_product_attention_backward, from the
// output and the row log-sum-exp: the forward attention's users take one that returns
// it instead (the old op is left dead for the canonicalizer). A floating mask that requires grad gets the gradient of the scores
// (with_mask_grad), summed over the dimensions it broadcasts by.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   (%[[Q:[^:]*]]: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "q"},
//  CHECK-SAME:    %[[K:[^:]*]]: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {{.*}}, %[[V:[^:]*]]: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {{.*}}, %[[M:[^:]*]]: !tgc.vtensor<[1, 4, 16, 16], f32, grad> {{.*}}, %[[T:[^:]*]]: !tgc.vtensor<[2, 4, 16, 8], f32> {tgc.kind = "tangent"
//       CHECK:   %[[A:.*]]:2 = tgc.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {is_causal = true, scale = 2.500000e-01 : f64, with_logsumexp}
//  CHECK-SAME:     -> !tgc.vtensor<[2, 4, 16, 8], f32, grad>, !tgc.vtensor<[2, 4, 16], f32>
//       CHECK:   %[[G:.*]]:4 = tgc.scaled_dot_product_attention_backward %[[T]], %[[Q]], %[[K]], %[[V]], %[[A]]#0, %[[A]]#1 mask %[[M]] {is_causal = true, scale = 2.500000e-01 : f64, with_mask_grad}
//  CHECK-SAME:     -> !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 8], f32>, !tgc.vtensor<[2, 4, 16, 16], f32>
//       CHECK:   %[[GM:.*]] = tgc.sum %[[G]]#3 {dim = array<i64: 0>, keepdim = true}
//       CHECK:   return %[[A]]#0, %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[GM]]
module {
  func.func @forward(%q: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "q"},
                     %k: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "k"},
                     %v: !tgc.vtensor<[2, 4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "v"},
                     %m: !tgc.vtensor<[1, 4, 16, 16], f32, grad> {tgc.kind = "parameter", tgc.name = "m"})
      -> (!tgc.vtensor<[2, 4, 16, 8], f32, grad> {tgc.kind = "user_output"}) {
    %0 = tgc.scaled_dot_product_attention %q, %k, %v mask %m {is_causal = true, scale = 0.25 : f64} : !tgc.vtensor<[2, 4, 16, 8], f32, grad>, !tgc.vtensor<[2, 4, 16, 8], f32, grad>, !tgc.vtensor<[2, 4, 16, 8], f32, grad>, !tgc.vtensor<[1, 4, 16, 16], f32, grad> -> !tgc.vtensor<[2, 4, 16, 8], f32, grad>
    return %0 : !tgc.vtensor<[2, 4, 16, 8], f32, grad>
  }
}

// -----

// An attention that already returns its log-sum-exp (core ATen's CPU flash attention)
// is differentiated as it is; a boolean mask gets no gradient, and the default scale is
// 1/sqrt(E).
// CHECK-LABEL: func.func @joint
//       CHECK:   %[[A:.*]]:2 = tgc.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {with_logsumexp}
//   CHECK-NOT:   tgc.scaled_dot_product_attention %
//       CHECK:   tgc.scaled_dot_product_attention_backward %{{.*}}, %[[A]]#0, %[[A]]#1 mask %{{.*}} {scale = 0.35355339059327373 : f64}
//  CHECK-SAME:     -> !tgc.vtensor<[4, 16, 8], f32>, !tgc.vtensor<[4, 16, 8], f32>, !tgc.vtensor<[4, 16, 8], f32>{{$}}
module {
  func.func @forward(%q: !tgc.vtensor<[4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "q"},
                     %k: !tgc.vtensor<[4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "k"},
                     %v: !tgc.vtensor<[4, 16, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "v"},
                     %m: !tgc.vtensor<[16, 16], i1> {tgc.kind = "user_input", tgc.name = "m"})
      -> (!tgc.vtensor<[4, 16, 8], f32, grad> {tgc.kind = "user_output"}) {
    %0:2 = tgc.scaled_dot_product_attention %q, %k, %v mask %m {with_logsumexp} : !tgc.vtensor<[4, 16, 8], f32, grad>, !tgc.vtensor<[4, 16, 8], f32, grad>, !tgc.vtensor<[4, 16, 8], f32, grad>, !tgc.vtensor<[16, 16], i1> -> !tgc.vtensor<[4, 16, 8], f32, grad>, !tgc.vtensor<[4, 16], f32>
    return %0#0 : !tgc.vtensor<[4, 16, 8], f32, grad>
  }
}
