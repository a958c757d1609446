// RUN: tgc-opt %s --tgc-if-convert-cond --split-input-file | FileCheck %s

// Both branches are inlined on the cond's inputs and sizes (a nested cond first), and
// each result is where(pred, then, else) with the predicate viewed as 0-d.
// CHECK-LABEL: func.func @nested
//  CHECK-SAME:   (%[[P:.*]]: !tgc.vtensor<[1], i1>, %[[Q:.*]]: !tgc.vtensor<[], i1>, %[[X:.*]]: !tgc.vtensor<[s0, 4], f32>)
//   CHECK-NOT:   tgc.cond
//       CHECK:   %[[N:.*]] = tgc.sym_size %[[X]]
//       CHECK:   %[[T:.*]] = tgc.mul %[[X]], %[[N]]
//       CHECK:   %[[E:.*]] = tgc.neg %[[X]]
//       CHECK:   %[[Q0:.*]] = tgc.view %[[Q]] {size = #tgc.shape<[]>}
//       CHECK:   %[[IN:.*]] = tgc.where %[[Q0]], %[[T]], %[[E]]
//       CHECK:   %[[F:.*]] = tgc.exp %[[X]]
//       CHECK:   %[[P0:.*]] = tgc.view %[[P]] {size = #tgc.shape<[]>}
//       CHECK:   %[[R:.*]] = tgc.where %[[P0]], %[[IN]], %[[F]] : !tgc.vtensor<[], i1>, !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
//       CHECK:   return %[[R]]
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1>]} {
func.func @nested(%p: !tgc.vtensor<[1], i1>, %q: !tgc.vtensor<[], i1>, %x: !tgc.vtensor<[s0, 4], f32>) -> !tgc.vtensor<[s0, 4], f32> {
  %n = tgc.sym_size %x {dim = 0 : i64} : !tgc.vtensor<[s0, 4], f32>
  %r = tgc.cond %p inputs(%q, %x : !tgc.vtensor<[], i1>, !tgc.vtensor<[s0, 4], f32>) sizes(%n) {symbols = array<i64: 0>} : !tgc.vtensor<[1], i1> -> !tgc.vtensor<[s0, 4], f32> then {
  ^bb0(%q1: !tgc.vtensor<[], i1>, %a: !tgc.vtensor<[s0, 4], f32>, %s: i64):
    %i = tgc.cond %q1 inputs(%a : !tgc.vtensor<[s0, 4], f32>) sizes(%s) {symbols = array<i64: 0>} : !tgc.vtensor<[], i1> -> !tgc.vtensor<[s0, 4], f32> then {
    ^bb0(%b: !tgc.vtensor<[s0, 4], f32>, %s2: i64):
      %t = tgc.mul %b, %s2 : !tgc.vtensor<[s0, 4], f32>, i64 -> !tgc.vtensor<[s0, 4], f32>
      tgc.yield %t : !tgc.vtensor<[s0, 4], f32>
    } else {
    ^bb0(%b: !tgc.vtensor<[s0, 4], f32>, %s2: i64):
      %e = tgc.neg %b : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
      tgc.yield %e : !tgc.vtensor<[s0, 4], f32>
    }
    tgc.yield %i : !tgc.vtensor<[s0, 4], f32>
  } else {
  ^bb0(%q1: !tgc.vtensor<[], i1>, %a: !tgc.vtensor<[s0, 4], f32>, %s: i64):
    %f = tgc.exp %a : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
    tgc.yield %f : !tgc.vtensor<[s0, 4], f32>
  }
  return %r : !tgc.vtensor<[s0, 4], f32>
}
}

// -----

// A predicate of another dtype is compared with 0 (Python's bool()).
// CHECK-LABEL: func.func @float_pred
//       CHECK:   %[[P0:.*]] = tgc.view %{{.*}} {size = #tgc.shape<[]>} : !tgc.vtensor<[], f32>
//       CHECK:   %[[B:.*]] = tgc.ne %[[P0]], %{{.*}} : !tgc.vtensor<[], f32>, i64 -> !tgc.vtensor<[], i1>
//       CHECK:   tgc.where %[[B]]
func.func @float_pred(%p: !tgc.vtensor<[], f32>, %x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %r = tgc.cond %p inputs(%x : !tgc.vtensor<[4], f32>) {symbols = array<i64>} : !tgc.vtensor<[], f32> -> !tgc.vtensor<[4], f32> then {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    %e = tgc.exp %a : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    tgc.yield %e : !tgc.vtensor<[4], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    tgc.yield %a : !tgc.vtensor<[4], f32>
  }
  return %r : !tgc.vtensor<[4], f32>
}
