// RUN: tgc-opt %s --split-input-file --tgc-elide-result-copies | FileCheck %s

// A temporary copied into an out-parameter at the end is computed there: the kernel
// writes %out, and neither the allocation nor the copy is left. Views of the temporary
// (the collapse) take the out-parameter's place too.
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:     %[[X:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   call @k(%[[X]], %[[OUT]])
//       CHECK:   %[[FLAT:.*]] = memref.collapse_shape %[[OUT]]
//       CHECK:   call @k1(%[[FLAT]])
//   CHECK-NOT:   memref.copy
//       CHECK:   return
func.func private @k(memref<4x8xf32>, memref<4x8xf32>)
func.func private @k1(memref<32xf32>)
func.func @forward(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  call @k(%x, %t) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %flat = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  call @k1(%flat) : (memref<32xf32>) -> ()
  memref.copy %t, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// Dynamic sizes: the out-parameter has the temporary's type. A temporary copied into
// two out-parameters is computed in the last one; the first copy then reads it there.
// CHECK-LABEL: func.func @two_results(
//  CHECK-SAME:     %[[X:.*]]: memref<?xf32>, %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   call @k(%[[X]], %[[B]])
//       CHECK:   memref.copy %[[B]], %[[A]]
//   CHECK-NOT:   memref.copy
func.func private @k(memref<?xf32>, memref<?xf32>)
func.func @two_results(%x: memref<?xf32>, %a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %t = memref.alloc(%n) : memref<?xf32>
  call @k(%x, %t) : (memref<?xf32>, memref<?xf32>) -> ()
  memref.copy %t, %a : memref<?xf32> to memref<?xf32>
  memref.copy %t, %b : memref<?xf32> to memref<?xf32>
  return
}

// -----

// These copies stay:
// - %t is read after its copy (into %v, which goes to %o4 later);
// - %o2 is also read by a kernel, so it is not only an out-parameter;
// - %u's copy goes to a layout of another type;
// - the source is an argument, not a temporary (an input saved for the backward);
//   %v's copy is then not %o4's only use either;
// - kernels are left alone (their arguments may alias).
// CHECK-LABEL: func.func @kept(
//  CHECK-COUNT-4:   memref.alloc
//  CHECK-COUNT-5:   memref.copy
//      CHECK-NOT:   memref.copy
// CHECK-LABEL: func.func @kernel(
//          CHECK:   memref.alloc
//          CHECK:   memref.copy
func.func private @k(memref<8xf32>, memref<8xf32>)
func.func private @ks(memref<8xf32>, memref<8xf32, strided<[1], offset: ?>>)
func.func @kept(%x: memref<8xf32>, %o1: memref<8xf32>, %o2: memref<8xf32>,
                %o3: memref<8xf32, strided<[1], offset: ?>>, %o4: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %s = memref.alloc() : memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  %v = memref.alloc() : memref<8xf32>
  call @k(%x, %t) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %t, %o1 : memref<8xf32> to memref<8xf32>
  call @k(%t, %v) : (memref<8xf32>, memref<8xf32>) -> ()
  call @k(%o2, %s) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %s, %o2 : memref<8xf32> to memref<8xf32>
  call @k(%x, %u) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %u, %o3 : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.copy %x, %o4 : memref<8xf32> to memref<8xf32>
  memref.copy %v, %o4 : memref<8xf32> to memref<8xf32>
  return
}
func.func @kernel(%x: memref<8xf32>, %out: memref<8xf32>) attributes {tgc.kernel} {
  %t = memref.alloc() : memref<8xf32>
  call @k(%x, %t) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %t, %out : memref<8xf32> to memref<8xf32>
  return
}
