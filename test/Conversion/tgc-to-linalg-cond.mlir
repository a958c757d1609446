// RUN: tgc-opt %s --convert-tgc-to-linalg --split-input-file | FileCheck %s

// tgc.cond becomes scf.if on the predicate's element: the branches are inlined on the
// cond's operands, and their symbolic sizes are bound by the function's arguments
// (read at its entry).
// CHECK-LABEL: func.func @cond
//  CHECK-SAME:   (%[[P:.*]]: tensor<1xi1>, %[[X:.*]]: tensor<?x4xf32>)
//       CHECK:   %[[D:.*]] = tensor.dim %[[X]], %{{.*}}
//       CHECK:   %[[E:.*]] = tensor.extract %[[P]][%{{.*}}] : tensor<1xi1>
//       CHECK:   %[[R:.*]] = scf.if %[[E]] -> (tensor<?x4xf32>) {
//       CHECK:     tensor.empty(%[[D]]) : tensor<?x4xf32>
//       CHECK:     math.exp
//       CHECK:     scf.yield %{{.*}} : tensor<?x4xf32>
//       CHECK:   } else {
//       CHECK:     scf.yield %[[X]] : tensor<?x4xf32>
//       CHECK:   return %[[R]]
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1>]} {
func.func @cond(%p: !tgc.vtensor<[1], i1>, %x: !tgc.vtensor<[s0, 4], f32>) -> !tgc.vtensor<[s0, 4], f32> {
  %n = tgc.sym_size %x {dim = 0 : i64} : !tgc.vtensor<[s0, 4], f32>
  %r = tgc.cond %p inputs(%x : !tgc.vtensor<[s0, 4], f32>) sizes(%n) {symbols = array<i64: 0>} : !tgc.vtensor<[1], i1> -> !tgc.vtensor<[s0, 4], f32> then {
  ^bb0(%a: !tgc.vtensor<[s0, 4], f32>, %s: i64):
    %e = tgc.exp %a : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
    tgc.yield %e : !tgc.vtensor<[s0, 4], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[s0, 4], f32>, %s: i64):
    tgc.yield %a : !tgc.vtensor<[s0, 4], f32>
  }
  return %r : !tgc.vtensor<[s0, 4], f32>
}
}

// -----

// A float predicate is true when it is not 0 (NaN included: `une`).
// CHECK-LABEL: func.func @float_pred
//       CHECK:   %[[E:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
//       CHECK:   %[[B:.*]] = arith.cmpf une, %[[E]], %{{.*}} : f32
//       CHECK:   scf.if %[[B]] -> (tensor<4xf32>)
func.func @float_pred(%p: !tgc.vtensor<[], f32>, %x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %r = tgc.cond %p inputs(%x : !tgc.vtensor<[4], f32>) {symbols = array<i64>} : !tgc.vtensor<[], f32> -> !tgc.vtensor<[4], f32> then {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    %e = tgc.neg %a : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
    tgc.yield %e : !tgc.vtensor<[4], f32>
  } else {
  ^bb0(%a: !tgc.vtensor<[4], f32>):
    tgc.yield %a : !tgc.vtensor<[4], f32>
  }
  return %r : !tgc.vtensor<[4], f32>
}

// -----

// An unbacked symbol (tgc.bind_symbol) is read from its tensor where a size needs it.
// CHECK-LABEL: func.func @unbacked
//  CHECK-SAME:   (%[[N:.*]]: tensor<i64>, %[[X:.*]]: tensor<8xf32>)
//       CHECK:   %[[V:.*]] = tensor.extract %[[N]][] : tensor<i64>
//       CHECK:   %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
//       CHECK:   tensor.extract_slice %[[X]][0] [%[[I]]] [1] : tensor<8xf32> to tensor<?xf32>
module attributes {tgc.symbols = [#tgc.symbol<"u0", min = 0, max = 8>]} {
func.func @unbacked(%n: !tgc.vtensor<[], i64>, %x: !tgc.vtensor<[8], f32>) -> !tgc.vtensor<[], f32> {
  %s = tgc.bind_symbol %n {symbol = 0 : i64} : !tgc.vtensor<[], i64>
  %y = tgc.slice %x {end = #tgc.shape<[s0]>} : !tgc.vtensor<[8], f32> -> !tgc.vtensor<[s0], f32>
  %r = tgc.sum %y : !tgc.vtensor<[s0], f32> -> !tgc.vtensor<[], f32>
  return %r : !tgc.vtensor<[], f32>
}
}
