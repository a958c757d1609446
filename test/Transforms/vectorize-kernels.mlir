// RUN: tgc-opt %s --tgc-vectorize-kernels --canonicalize --cse | FileCheck %s
// RUN: tgc-opt %s --tgc-vectorize-kernels=vector-bits=256 --canonicalize | FileCheck %s --check-prefix=AVX2

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id1 = affine_map<(d0) -> (d0)>

// A static elementwise op whose rows are whole vectors: one scf.parallel over rows and
// 16-lane steps, 1-d vector loads, arithmetic and a store; no remainder.
// CHECK-LABEL: func.func private @gelu_bias(
//  CHECK-SAME:     %[[X:.*]]: memref<8x64xf32>, %[[B:.*]]: memref<64xf32>, %[[Y:.*]]: memref<8x64xf32>)
//       CHECK:   scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c8, %c64) step (%c1, %c16) {
//       CHECK:     %[[XV:.*]] = vector.transfer_read %[[X]][%[[I]], %[[J]]]{{.*}} : memref<8x64xf32>, vector<16xf32>
//       CHECK:     %[[BV:.*]] = vector.transfer_read %[[B]][%[[J]]]{{.*}} : memref<64xf32>, vector<16xf32>
//       CHECK:     %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<16xf32>
//       CHECK:     %[[T:.*]] = math.tanh %[[S]] : vector<16xf32>
//       CHECK:     vector.transfer_write %[[T]], %[[Y]][%[[I]], %[[J]]]{{.*}} : vector<16xf32>, memref<8x64xf32>
//   CHECK-NOT:   linalg.generic
func.func private @gelu_bias(%x: memref<8x64xf32>, %b: memref<64xf32>, %y: memref<8x64xf32>)
    attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<8x64xf32>, memref<64xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  return
}

// A dynamic row length: full vectors up to n - n mod 16, then the op on the remaining
// columns (a scalar loop later); a value broadcast along the row is read once per row;
// linalg.index is the tile's offset plus a lane index; transfers index the kernel's
// memrefs, not subviews.
// CHECK-LABEL: func.func private @scale_rows(
//  CHECK-SAME:     %[[X:.*]]: memref<?x?xf64>, %[[S:.*]]: memref<?xf64>, %[[Y:.*]]: memref<?x?xf64>)
//       CHECK:   %[[M:.*]] = memref.dim %[[X]], %c0
//       CHECK:   %[[N:.*]] = memref.dim %[[X]], %c1
//       CHECK:   %[[R:.*]] = arith.remui %[[N]], %c8
//       CHECK:   %[[END:.*]] = arith.subi %[[N]], %[[R]]
//       CHECK:   scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%[[M]], %[[END]]) step (%c1, %c8) {
//       CHECK:     vector.transfer_read %[[X]]{{.*}} vector<8xf64>
//       CHECK:     %[[SV:.*]] = vector.transfer_read %[[S]][%[[I]]]{{.*}} vector<f64>
//       CHECK:     vector.broadcast %[[SV]] : vector<f64> to vector<8xf64>
//       CHECK:     vector.step : vector<8xindex>
//       CHECK:     arith.mulf {{.*}} : vector<8xf64>
//       CHECK:     vector.transfer_write {{.*}} : vector<8xf64>, memref<?x?xf64>
//       CHECK:   %[[REST:.*]] = arith.subi %[[N]], %[[END]]
//       CHECK:   %[[XT:.*]] = memref.subview %[[X]][0, %[[END]]] [%[[M]], %[[REST]]] [1, 1]
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[XT]]
//       CHECK:     %[[K:.*]] = linalg.index 1
//       CHECK:     affine.apply #{{.*}}()[%[[K]], %[[END]]]
func.func private @scale_rows(%x: memref<?x?xf64>, %s: memref<?xf64>, %y: memref<?x?xf64>)
    attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xf64>, memref<?xf64>) outs(%y : memref<?x?xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f64
    %p = arith.mulf %a, %c : f64
    %q = arith.addf %p, %jf : f64
    linalg.yield %q : f64
  }
  return
}

// 256-bit vectors: 8 f32 lanes.
// AVX2-LABEL: func.func private @gelu_bias(
//       AVX2:   scf.parallel {{.*}} step (%c1, %c8)
//       AVX2:   vector<8xf32>

// Left as they are: a transposed read (not contiguous along the vector), bf16 (its
// conversions are expanded on scalars), i1 memory (a vector load would read packed
// bits), a row shorter than a vector, a reduction, and an op outside a kernel.
// CHECK-LABEL: func.func private @transposed(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func private @transposed(%x: memref<64x64xf32>, %y: memref<64x64xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
// CHECK-LABEL: func.func private @narrow(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func private @narrow(%x: memref<64xbf16>, %y: memref<64xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<64xbf16>) outs(%y : memref<64xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  }
  return
}
// CHECK-LABEL: func.func private @bool_mask(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func private @bool_mask(%m: memref<64xi1>, %x: memref<64xf32>, %y: memref<64xf32>) attributes {tgc.kernel} {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%m, %x : memref<64xi1>, memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%k: i1, %a: f32, %o: f32):
    %s = arith.select %k, %a, %z : f32
    linalg.yield %s : f32
  }
  return
}
// Rows shorter than a register get the widest power-of-two vectors that fit them, and
// so does a static remainder: 4 of the 7 columns as vector<4xf32>, 2 as vector<2xf32>,
// the last one scalar.
// CHECK-LABEL: func.func private @short_rows(
//       CHECK:   scf.parallel
//       CHECK:     vector.transfer_read {{.*}} : memref<64x7xf32>, vector<4xf32>
//       CHECK:     arith.negf {{.*}} : vector<4xf32>
//       CHECK:   scf.parallel
//       CHECK:     vector.transfer_read %{{.*}}[%{{.*}}, %c4]{{.*}} : memref<64x7xf32>, vector<2xf32>
//       CHECK:     arith.negf {{.*}} : vector<2xf32>
//       CHECK:   memref.subview %{{.*}}[0, 6] [64, 1] [1, 1]
//       CHECK:   linalg.generic
//       CHECK:     arith.negf {{.*}} : f32
func.func private @short_rows(%x: memref<64x7xf32>, %y: memref<64x7xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x7xf32>) outs(%y : memref<64x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}
// CHECK-LABEL: func.func private @row_sum(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func private @row_sum(%x: memref<8x64xf32>, %y: memref<8xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @entry(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func @entry(%x: memref<64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// A single column is no vector.
// CHECK-LABEL: func.func private @one_column(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
func.func private @one_column(%x: memref<64x1xf32>, %y: memref<64x1xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x1xf32>) outs(%y : memref<64x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}
