// RUN: tgc-opt %s --tgc-autodiff | FileCheck %s
// RUN: tgc-opt %s --tgc-pipeline="train=1 compile-to=partition" | FileCheck %s --check-prefix=SPLIT

// The derivative of tgc.cond (a nested one in its then branch, symbolic sizes): the
// forward cond also returns each branch's saved values (tanh's result, exp's result;
// zeros from the branch not taken, the nested cond's own saved value passed out), and a
// second cond on the same predicate runs the taken branch's backward on the tangent,
// the saved values and the inputs it reads (q for the nested cond; not x). Only the
// taken branch runs, in forward and in backward.
// CHECK-LABEL: func.func @joint
//  CHECK-SAME:   (%[[P:.*]]: !tgc.vtensor<[], i1> {{.*}}, %[[Q:.*]]: !tgc.vtensor<[], i1> {{.*}}, %[[X:.*]]: !tgc.vtensor<[s0, 4], f32, grad> {{.*}}, %[[T:.*]]: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//       CHECK:   %[[N:.*]] = tgc.sym_size %[[X]]
//       CHECK:   %[[F:.*]]:3 = tgc.cond %[[P]] inputs(%[[Q]], %[[X]] : {{.*}}) sizes(%[[N]])
//       CHECK:     %[[IN:.*]]:2 = tgc.cond
//       CHECK:       %[[TANH:.*]] = tgc.tanh
//       CHECK:       tgc.yield %[[TANH]], %[[TANH]]
//       CHECK:       %[[NEG:.*]] = tgc.neg
//       CHECK:       %[[Z0:.*]] = tgc.full {dtype = f32, fill_value = 0.000000e+00 : f64, size = #tgc.shape<[s0, 4]>}
//       CHECK:       tgc.yield %[[NEG]], %[[Z0]]
//       CHECK:     %[[Z1:.*]] = tgc.full
//       CHECK:     tgc.yield %[[IN]]#0, %[[IN]]#1, %[[Z1]]
//       CHECK:     %[[EXP:.*]] = tgc.exp
//       CHECK:     %[[Z2:.*]] = tgc.full
//       CHECK:     tgc.yield %[[EXP]], %[[Z2]], %[[EXP]]
//       CHECK:   %[[G:.*]] = tgc.cond %[[P]] inputs(%[[T]], %[[F]]#1, %[[F]]#2, %[[Q]] : {{.*}}) sizes(%[[N]])
//       CHECK:   ^bb0(%[[BT:.*]]: !tgc.vtensor<[s0, 4], f32>, %[[S1:.*]]: !tgc.vtensor<[s0, 4], f32, grad>, %{{.*}}: !tgc.vtensor<[s0, 4], f32, grad>, %[[BQ:.*]]: !tgc.vtensor<[], i1>, %[[BN:.*]]: i64):
//       CHECK:     %[[GI:.*]] = tgc.cond %[[BQ]] inputs(%[[BT]], %[[S1]] : {{.*}}) sizes(%[[BN]])
//       CHECK:       tgc.mul
//       CHECK:       tgc.rsub
//       CHECK:       tgc.mul
//       CHECK:       tgc.neg
//       CHECK:     tgc.yield %[[GI]]
//       CHECK:   ^bb0(%[[ET:.*]]: !tgc.vtensor<[s0, 4], f32>, %{{.*}}: !tgc.vtensor<[s0, 4], f32, grad>, %[[S2:.*]]: !tgc.vtensor<[s0, 4], f32, grad>, %{{.*}}: !tgc.vtensor<[], i1>, %{{.*}}: i64):
//       CHECK:     %[[GE:.*]] = tgc.mul %[[ET]], %[[S2]]
//       CHECK:     tgc.yield %[[GE]]
//       CHECK:   return %[[F]]#0, %[[G]]

// The partition keeps the forward cond in @forward (it is not recomputed) and saves its
// values and the predicates; @backward runs the backward cond.
// SPLIT-LABEL: func.func @forward
//       SPLIT:   %[[F:.*]]:3 = tgc.cond
//       SPLIT:   return %[[F]]#0, %arg0, %arg1, %[[F]]#1, %[[F]]#2 :
// SPLIT-LABEL: func.func @backward
//   SPLIT-NOT:   tgc.exp
//       SPLIT:   tgc.cond %arg0 inputs(%arg4, %arg2, %arg3, %arg1 :
module attributes {tgc.symbols = [#tgc.symbol<"s0", min = 1, max = 64>]} {
  func.func @forward(%p: !tgc.vtensor<[], i1> {tgc.kind = "user_input", tgc.name = "p"},
                     %q: !tgc.vtensor<[], i1> {tgc.kind = "user_input", tgc.name = "q"},
                     %x: !tgc.vtensor<[s0, 4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[s0, 4], f32, grad> {tgc.kind = "user_output"}) {
    %n = tgc.sym_size %x {dim = 0 : i64} : !tgc.vtensor<[s0, 4], f32, grad>
    %r = tgc.cond %p inputs(%q, %x : !tgc.vtensor<[], i1>, !tgc.vtensor<[s0, 4], f32, grad>) sizes(%n) {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 4], f32, grad> then {
    ^bb0(%q1: !tgc.vtensor<[], i1>, %a: !tgc.vtensor<[s0, 4], f32, grad>, %s: i64):
      %i = tgc.cond %q1 inputs(%a : !tgc.vtensor<[s0, 4], f32, grad>) sizes(%s) {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 4], f32, grad> then {
      ^bb0(%b: !tgc.vtensor<[s0, 4], f32, grad>, %s2: i64):
        %t = tgc.tanh %b : !tgc.vtensor<[s0, 4], f32, grad> -> !tgc.vtensor<[s0, 4], f32, grad>
        tgc.yield %t : !tgc.vtensor<[s0, 4], f32, grad>
      } else {
      ^bb0(%b: !tgc.vtensor<[s0, 4], f32, grad>, %s2: i64):
        %e = tgc.neg %b : !tgc.vtensor<[s0, 4], f32, grad> -> !tgc.vtensor<[s0, 4], f32, grad>
        tgc.yield %e : !tgc.vtensor<[s0, 4], f32, grad>
      }
      tgc.yield %i : !tgc.vtensor<[s0, 4], f32, grad>
    } else {
    ^bb0(%q1: !tgc.vtensor<[], i1>, %a: !tgc.vtensor<[s0, 4], f32, grad>, %s: i64):
      %f = tgc.exp %a : !tgc.vtensor<[s0, 4], f32, grad> -> !tgc.vtensor<[s0, 4], f32, grad>
      tgc.yield %f : !tgc.vtensor<[s0, 4], f32, grad>
    }
    return %r : !tgc.vtensor<[s0, 4], f32, grad>
  }
}
