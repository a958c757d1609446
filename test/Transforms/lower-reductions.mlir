// RUN: tgc-opt %s --tgc-lower-reductions=vector-bits=0 --canonicalize | FileCheck %s
// (The scalar loops; tgc-lower-reductions-vector.mlir has the vector ones.)

// A reduction whose innermost loops reduce: an scf.parallel over the parallel loops
// loads the output element once, scf.for carries it through the reduction loops, and
// one store writes it; the combining addf may be reassociated (LLVM vectorizes it).
// CHECK-LABEL: func.func private @row_sum(
//  CHECK-SAME:     %[[A:.*]]: memref<?x512xf32>, %[[OUT:.*]]: memref<?xf64>)
//       CHECK:   %[[N:.*]] = memref.dim %[[A]], %c0
//       CHECK:   scf.parallel (%[[I:.*]]) = (%c0) to (%[[N]]) step (%c1) {
//       CHECK:     %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
//       CHECK:     %[[SUM:.*]] = scf.for %[[K:.*]] = %c0 to %c512 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f64) {
//       CHECK:       %[[X:.*]] = memref.load %[[A]][%[[I]], %[[K]]]
//       CHECK:       %[[E:.*]] = arith.extf %[[X]] : f32 to f64
//       CHECK:       %[[S:.*]] = arith.addf %[[E]], %[[ACC]] fastmath<reassoc> : f64
//       CHECK:       scf.yield %[[S]]
//       CHECK:     memref.store %[[SUM]], %[[OUT]][%[[I]]]
//   CHECK-NOT:   linalg.generic

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#win = affine_map<(d0, d1) -> (d0 * 2 + d1)>
func.func private @row_sum(%a: memref<?x512xf32>, %out: memref<?xf64>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<?x512xf32>) outs(%out : memref<?xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %e = arith.extf %in : f32 to f64
    %s = arith.addf %e, %acc : f64
    linalg.yield %s : f64
  }
  return
}
func.func private @amax(%a: memref<100xf32>, %out: memref<f32>) attributes {tgc.kernel} {

// A full reduction has no parallel loop.
// CHECK-LABEL: func.func private @amax(
//   CHECK-NOT:   scf.parallel
//       CHECK:   %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
//       CHECK:   scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
//       CHECK:     arith.maximumf %{{.*}}, %[[ACC]] fastmath<reassoc> : f32
//       CHECK:   memref.store
  linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction"]}
      ins(%a : memref<100xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Several outputs are carried together; linalg.index is the loop's induction
// variable, windowed maps become affine.apply, and ops that are not a plain combination
// of the carried value keep their flags.
// CHECK-LABEL: func.func private @windowed_argmax(
//       CHECK:   scf.parallel (%[[I:.*]]) =
//       CHECK:     %[[V0:.*]] = memref.load %{{.*}}[%[[I]]] : memref<8xf32>
//       CHECK:     %[[I0:.*]] = memref.load %{{.*}}[%[[I]]] : memref<8xi64>
//       CHECK:     %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0 to %c3 step %c1 iter_args(%[[V:.*]] = %[[V0]], %[[AT:.*]] = %[[I0]]) -> (f32, i64) {
//       CHECK:       %[[P:.*]] = affine.apply #{{.*}}(%[[I]], %[[K]])
//       CHECK:       memref.load %{{.*}}[%[[P]]] : memref<17xf32>
//       CHECK:       arith.index_cast %[[K]] : index to i64
//       CHECK:       %[[X:.*]] = arith.mulf
//   CHECK-NOT:       fastmath
//       CHECK:       arith.cmpf ogt, %[[X]], %[[V]] : f32
//       CHECK:     memref.store %[[R]]#0
//       CHECK:     memref.store %[[R]]#1
func.func private @windowed_argmax(%a: memref<17xf32>, %w: memref<3xf32>, %v: memref<8xf32>, %i: memref<8xi64>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#win, #col, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %w : memref<17xf32>, memref<3xf32>) outs(%v, %i : memref<8xf32>, memref<8xi64>) {
  ^bb0(%in: f32, %weight: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %x = arith.mulf %in, %weight : f32
    %gt = arith.cmpf ogt, %x, %best : f32
    %nv = arith.select %gt, %x, %best : f32
    %ni = arith.select %gt, %ki, %at : i64
    linalg.yield %nv, %ni : f32, i64
  }
  return
}
func.func private @column_sum(%a: memref<64x32xf32>, %out: memref<32xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}

// When the innermost loop is parallel (a reduction over rows), the loop that would
// carry the value is outside it: the op is left to linalg's lowering.
// CHECK-LABEL: func.func private @column_sum(
//       CHECK:   linalg.generic
      ins(%a : memref<64x32xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}
