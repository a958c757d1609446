// RUN: tgc-opt %s --tgc-lower-reductions=vector-bits=512 --canonicalize --cse | FileCheck %s

// A reduction along the innermost loop is vector code: 4 registers' worth of f32 lanes
// per step (128 = 2 steps of 64: no one-register loop and no scalar tail), the loop's
// linalg.index a vector of indices, uniform values scalars broadcast where they meet
// vectors, the accumulator starting at the combiner's identity and combined by halves
// at the end, then with the output's element.
// CHECK-LABEL: func.func private @causal_row_max(
//  CHECK-SAME:     %[[A:.*]]: memref<64x128xf32>, %[[OUT:.*]]: memref<64xf32>, %[[Q0:.*]]: index)
//   CHECK-DAG:   %[[LANES:.*]] = arith.constant dense<[0, 1, 2, {{.*}}, 63]> : vector<64xindex>
//   CHECK-DAG:   %[[NINF:.*]] = arith.constant dense<0xFF800000> : vector<64xf32>
//       CHECK:   scf.parallel (%[[I:.*]]) =
//       CHECK:     %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
//       CHECK:     %[[V:.*]] = scf.for %[[J:.*]] = %c0 to %c128 step %c64 iter_args(%[[ACC:.*]] = %[[NINF]]) -> (vector<64xf32>) {
//       CHECK:       %[[X:.*]] = vector.load %[[A]][%[[I]], %[[J]]] : memref<64x128xf32>, vector<64xf32>
//       CHECK:       %[[J0:.*]] = vector.broadcast %[[J]] : index to vector<64xindex>
//       CHECK:       %[[JS:.*]] = arith.addi %[[J0]], %[[LANES]] : vector<64xindex>
//       CHECK:       arith.mulf %[[X]], %{{.*}} : vector<64xf32>
//       CHECK:       %[[QI:.*]] = arith.addi %[[I]], %[[Q0]] : index
//       CHECK:       %[[QV:.*]] = vector.broadcast %[[QI]] : index to vector<64xindex>
//       CHECK:       %[[SEEN:.*]] = arith.cmpi ule, %[[JS]], %[[QV]] : vector<64xindex>
//       CHECK:       %[[S:.*]] = arith.select %[[SEEN]], %{{.*}}, %[[NINF]] : vector<64xi1>, vector<64xf32>
//       CHECK:       %[[M:.*]] = arith.maximumf %[[S]], %[[ACC]] : vector<64xf32>
//       CHECK:       scf.yield %[[M]]
//   CHECK-NOT:     scf.for
//       CHECK:     vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [32], strides = [1]}
//       CHECK:     arith.maximumf {{.*}} : vector<32xf32>
//       CHECK:     arith.maximumf {{.*}} : vector<16xf32>
//       CHECK:     arith.maximumf {{.*}} : vector<1xf32>
//       CHECK:     %[[H:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
//       CHECK:     %[[R:.*]] = arith.maximumf %[[INIT]], %[[H]] : f32
//       CHECK:     memref.store %[[R]], %[[OUT]][%[[I]]]
//   CHECK-NOT:   linalg.generic

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#first3 = affine_map<(d0, d1, d2) -> (d0)>
func.func private @causal_row_max(%a: memref<64x128xf32>, %out: memref<64xf32>, %q0: index) attributes {tgc.kernel} {
  %scale = arith.constant 0.17 : f32
  %ninf = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x128xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %x = arith.mulf %in, %scale : f32
    %qi = arith.addi %i, %q0 : index
    %seen = arith.cmpi ule, %j, %qi : index
    %s = arith.select %seen, %x, %ninf : f32
    %m = arith.maximumf %s, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// A dynamic row: vectors of 4 registers (8 f64 lanes each: the accumulator is the
// widest element), then of one, then scalars; the two vector accumulators meet before
// the last halves. A row weight broadcast along the loop is one scalar load.
// CHECK-LABEL: func.func private @weighted_row_sum(
//  CHECK-SAME:     %[[A:.*]]: memref<?x?xf32>, %[[W:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf64>)
//       CHECK:   scf.parallel (%[[I:.*]]) =
//       CHECK:     %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
//       CHECK:     %[[WIDE:.*]] = scf.for %[[J:.*]] = %c0 to %{{.*}} step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<32xf64>) {
//       CHECK:       vector.load %[[A]][%[[I]], %[[J]]] : memref<?x?xf32>, vector<32xf32>
//       CHECK:       %[[WI:.*]] = memref.load %[[W]][%[[I]]] : memref<?xf32>
//       CHECK:       vector.broadcast %[[WI]] : f32 to vector<32xf32>
//       CHECK:       arith.mulf {{.*}} : vector<32xf32>
//       CHECK:       arith.extf {{.*}} : vector<32xf32> to vector<32xf64>
//       CHECK:       arith.addf %{{.*}}, %[[ACC]] : vector<32xf64>
//       CHECK:     %[[ONE:.*]] = scf.for {{.*}} step %c8 iter_args({{.*}}) -> (vector<8xf64>) {
//       CHECK:       vector.load {{.*}} vector<8xf32>
//       CHECK:     %[[TAIL:.*]] = scf.for {{.*}} step %c1 iter_args(%[[S:.*]] = %[[INIT]]) -> (f64) {
//       CHECK:       arith.addf %{{.*}}, %[[S]] fastmath<reassoc> : f64
//       CHECK:     arith.addf {{.*}} : vector<16xf64>
//       CHECK:     %[[BOTH:.*]] = arith.addf %{{.*}}, %[[ONE]] : vector<8xf64>
//       CHECK:     vector.extract_strided_slice %[[BOTH]]
//       CHECK:     %[[H:.*]] = vector.extract {{.*}}[0] : f64 from vector<1xf64>
//       CHECK:     %[[R:.*]] = arith.addf %[[TAIL]], %[[H]] : f64
//       CHECK:     memref.store %[[R]], %[[OUT]][%[[I]]]
func.func private @weighted_row_sum(%a: memref<?x?xf32>, %w: memref<?xf32>, %out: memref<?xf64>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %w : memref<?x?xf32>, memref<?xf32>) outs(%out : memref<?xf64>) {
  ^bb0(%in: f32, %weight: f32, %acc: f64):
    %x = arith.mulf %in, %weight : f32
    %e = arith.extf %x : f32 to f64
    %s = arith.addf %e, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// Outer reduction loops carry the vector and scalar accumulators (20 columns: one
// 16-lane step, a loop of one iteration that canonicalization removes, then 4
// scalars); an integer sum starts at 0.
// CHECK-LABEL: func.func private @channel_sum(
//       CHECK:   scf.parallel (%[[C:.*]]) =
//       CHECK:     %[[INIT:.*]] = memref.load
//       CHECK:     %[[R:.*]]:2 = scf.for %[[H:.*]] = %c0 to %c6 step %c1 iter_args(%[[V:.*]] = %{{.*}}, %[[S:.*]] = %[[INIT]]) -> (vector<16xi32>, i32) {
//       CHECK:       %[[X:.*]] = vector.load %{{.*}}[%[[C]], %[[H]], %c0] : memref<8x6x20xi32>, vector<16xi32>
//       CHECK:       arith.addi %[[X]], %[[V]] : vector<16xi32>
//       CHECK:       scf.for {{.*}} = %c16 to %c20 step %c1 iter_args(%{{.*}} = %[[S]]) -> (i32)
//       CHECK:         memref.load
//       CHECK:         arith.addi {{.*}} : i32
//       CHECK:     vector.extract_strided_slice %[[R]]#0 {offsets = [0], sizes = [8], strides = [1]}
//       CHECK:     arith.addi %[[R]]#1, %{{.*}} : i32
func.func private @channel_sum(%a: memref<8x6x20xi32>, %out: memref<8xi32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id3, #first3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%a : memref<8x6x20xi32>) outs(%out : memref<8xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  }
  return
}

// Scalar loops remain for a strided read along the loop, for a row shorter than one
// register, and for an output that the body uses besides combining it (argmax).
// CHECK-LABEL: func.func private @scalar_cases(
//   CHECK-NOT:   vector
//       CHECK:   scf.for {{.*}} -> (f32)
//       CHECK:   scf.for {{.*}} -> (f32)
//       CHECK:   scf.for {{.*}} -> (f32, i64)
//   CHECK-NOT:   vector
//       CHECK:   return
func.func private @scalar_cases(%a: memref<64x32xf32>, %short: memref<4x8xf32>, %out: memref<32xf32>, %out4: memref<4xf32>, %v: memref<4xf32>, %at: memref<4xi64>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x32xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<4x8xf32>) outs(%out4 : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<4x8xf32>) outs(%v, %at : memref<4xf32>, memref<4xi64>) {
  ^bb0(%in: f32, %best: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %in, %best : f32
    %nv = arith.select %gt, %in, %best : f32
    %ni = arith.select %gt, %ki, %i : i64
    linalg.yield %nv, %ni : f32, i64
  }
  return
}
