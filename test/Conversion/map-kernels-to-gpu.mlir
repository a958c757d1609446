// RUN: tgc-opt %s --split-input-file --tgc-map-kernels-to-gpu --canonicalize --verify-diagnostics | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tgc-map-kernels-to-gpu="block-size=64" --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=BLOCK64
// As the gpu phase runs it, after tgc-lower-reductions (scalar): a reduction's thread
// carries its accumulator in a register.
// RUN: tgc-opt %s --split-input-file --tgc-lower-reductions="vector-bits=0" --tgc-map-kernels-to-gpu --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=REG

// An elementwise kernel: one thread per element in blocks of 256 (the grid covers the
// 8x1000 elements: 32 blocks), numbered row-major so that the innermost index is the
// fastest; the last block's excess threads do nothing.
// CHECK-LABEL: func.func private @add_kernel0(
//  CHECK-SAME:     %[[A:.*]]: memref<8x1000xf32>, %[[B:.*]]: memref<1000xf32>, %[[C:.*]]: memref<8x1000xf32>)
//   CHECK-DAG:   %[[C8000:.*]] = arith.constant 8000 : index
//   CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
//   CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   CHECK-DAG:   %[[C1000:.*]] = arith.constant 1000 : index
//       CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
//       CHECK:     %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
//       CHECK:     %[[LIN:.*]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:     %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[C8000]]
//       CHECK:     scf.if %[[IN]] {
//       CHECK:       %[[J:.*]] = arith.remui %[[LIN]], %[[C1000]]
//       CHECK:       %[[I:.*]] = arith.divui %[[LIN]], %[[C1000]]
//       CHECK:       memref.load %[[A]][%[[I]], %[[J]]]
//       CHECK:       memref.load %[[B]][%[[J]]]
//       CHECK:       arith.addf
//       CHECK:       memref.store %{{.*}}, %[[C]][%[[I]], %[[J]]]
//       CHECK:     gpu.terminator
//   CHECK-NOT:   linalg.
//       CHECK:   return
// BLOCK64-LABEL: func.func private @add_kernel0(
//   BLOCK64-DAG:   %[[C125:.*]] = arith.constant 125 : index
//   BLOCK64-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       BLOCK64:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C125]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[C64]],
func.func private @add_kernel0(%a: memref<8x1000xf32>, %b: memref<1000xf32>, %c: memref<8x1000xf32>) attributes {tgc.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<8x1000xf32>, memref<1000xf32>) outs(%c : memref<8x1000xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row sum: a thread per row, which runs the reduction loop over its row; fewer rows
// than a block's threads make one block of that many.
// The fill is a launch of its own, before the reduction's.
// CHECK-LABEL: func.func private @sum_kernel0(
//       CHECK:   %[[C6:.*]] = arith.constant 6 : index
//       CHECK:   %[[C1:.*]] = arith.constant 1 : index
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C1]], {{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C6]],
//       CHECK:     memref.store %{{.*}}, %{{.*}}[%[[T]]] : memref<6xf32>
//       CHECK:   gpu.launch
//       CHECK:     scf.if
//       CHECK:       scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//       CHECK:         memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<6x300xf32>
//       CHECK:         arith.addf
//       CHECK:         memref.store %{{.*}} : memref<6xf32>
// REG-LABEL: func.func private @sum_kernel0(
//       REG:   gpu.launch
//       REG:   gpu.launch
//       REG:     %[[INIT:.*]] = memref.load %{{.*}} : memref<6xf32>
//       REG:     %[[SUM:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
//       REG:       %[[X:.*]] = memref.load %{{.*}} : memref<6x300xf32>
//       REG:       %[[NEXT:.*]] = arith.addf %[[X]], %[[ACC]] fastmath<reassoc> : f32
//       REG:       scf.yield %[[NEXT]] : f32
//       REG:     memref.store %[[SUM]], %{{.*}} : memref<6xf32>
// BLOCK64-LABEL: func.func private @sum_kernel0(
func.func private @sum_kernel0(%a: memref<6x300xf32>, %out: memref<6xf32>) attributes {tgc.kernel} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x300xf32>) outs(%out : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 0-d kernel and a copy of a constant: the scalar work runs on one thread; the copy is
// a launch that reads the constant through its own get_global. Dynamic sizes: the grid
// is computed on the host.
// CHECK-LABEL: func.func @entry(
//       CHECK:   gpu.launch
//       CHECK:     memref.get_global @cst : memref<4xf32>
//       CHECK:     memref.store
//       CHECK:   %[[D:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?xf32>
//       CHECK:   %[[G:.*]] = arith.ceildivui %[[D]], %{{.*}}
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G]],
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads({{.*}}) in (%{{.*}} = %[[ONE]],
//       CHECK:     %[[X:.*]] = memref.load %{{.*}}[] : memref<f32>
//       CHECK:     %[[Y:.*]] = arith.mulf %[[X]], %[[X]]
//       CHECK:     memref.store %[[Y]], %{{.*}}[] : memref<f32>
//       CHECK:   return
memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @entry(%out: memref<4xf32>, %v: memref<?xf32>, %w: memref<?xf32>, %s: memref<f32>, %t: memref<f32>) {
  %cst = memref.get_global @cst : memref<4xf32>
  memref.copy %cst, %out : memref<4xf32> to memref<4xf32>
  memref.copy %v, %w : memref<?xf32> to memref<?xf32>
  %x = memref.load %s[] : memref<f32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %t[] : memref<f32>
  return
}

// -----

// A value read from a buffer that steers host code (`.item()`, a branch on a tensor's
// value) is copied back to a host stack buffer after the device work before it.
// CHECK-LABEL: func.func @branch(
//  CHECK-SAME:     %[[P:.*]]: memref<4xi1>, %[[A:.*]]: memref<4xf32>)
//       CHECK:   %[[ELEMENT:.*]] = memref.subview %[[P]][2] [1] [1]
//       CHECK:   %[[HOST:.*]] = memref.alloca() : memref<1xi1>
//       CHECK:   gpu.memcpy %[[HOST]], %[[ELEMENT]]
//       CHECK:   %[[C:.*]] = memref.load %[[HOST]][%{{.*}}] : memref<1xi1>
//       CHECK:   scf.if %[[C]] {
//       CHECK:     gpu.launch
//       CHECK:       memref.store
func.func @branch(%p: memref<4xi1>, %a: memref<4xf32>) {
  %i = arith.constant 2 : index
  %c = memref.load %p[%i] : memref<4xi1>
  scf.if %c {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  }
  return
}

// -----

// A scatter's sequential loop (loads steering stores) is device work as a whole: one
// thread runs it.
// CHECK-LABEL: func.func private @scatter_kernel0(
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads({{.*}}) in (%{{.*}} = %[[ONE]],
//       CHECK:     scf.for
//       CHECK:       memref.load %{{.*}} : memref<6xi64>
//       CHECK:       scf.if
//       CHECK:         memref.store %{{.*}} : memref<8xf32>
//       CHECK:     gpu.terminator
func.func private @scatter_kernel0(%index: memref<6xi64>, %src: memref<6xf32>, %out: memref<8xf32>) attributes {tgc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %k = memref.load %index[%i] : memref<6xi64>
    %j = arith.index_cast %k : i64 to index
    %in = arith.cmpi ult, %j, %c8 : index
    scf.if %in {
      %v = memref.load %src[%i] : memref<6xf32>
      memref.store %v, %out[%j] : memref<8xf32>
    }
  }
  return
}

// -----

// A reshape to sizes the host wrote into a shape buffer is a view with those sizes: the
// buffer is never read (nor kept).
// CHECK-LABEL: func.func @reshape(
//  CHECK-SAME:     %[[X:.*]]: memref<?x32xf32>, %[[N:.*]]: index,
//   CHECK-NOT:   memref.alloc
//       CHECK:   %[[V:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 4, 8], strides: [32, 8, 1] : memref<?x32xf32> to memref<?x4x8xf32>
//   CHECK-NOT:   memref.store
//       CHECK:   gpu.launch
func.func @reshape(%x: memref<?x32xf32>, %n: index, %out: memref<?x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %shape = memref.alloc() : memref<3xindex>
  memref.store %n, %shape[%c0] : memref<3xindex>
  memref.store %c4, %shape[%c1] : memref<3xindex>
  memref.store %c8, %shape[%c2] : memref<3xindex>
  %v = memref.reshape %x(%shape) : (memref<?x32xf32>, memref<3xindex>) -> memref<?x4x8xf32>
  memref.dealloc %shape : memref<3xindex>
  memref.copy %v, %out : memref<?x4x8xf32> to memref<?x4x8xf32>
  return
}

// -----

// A value the device computes and the host uses otherwise is an error.
func.func @escape(%a: memref<4xf32>, %b: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  // expected-error @below {{'memref.atomic_rmw' computes on the device a value that the host uses, which --target=cuda does not support yet}}
  %y = memref.atomic_rmw addf %x, %b[%c0] : (f32, memref<4xf32>) -> f32
  return %y : f32
}

// -----

// A constant tensor that host code hands on (to a kernel function) is copied into a
// device buffer when the function starts, by a launch that reads the global itself, and
// freed before it returns.
// CHECK-LABEL: func.func @hand_on(
//  CHECK-SAME:     %[[OUT:.*]]: memref<3xf32>)
//       CHECK:   %[[BUFFER:.*]] = memref.alloc() : memref<3xf32>
//       CHECK:   gpu.launch
//       CHECK:     %[[GLOBAL:.*]] = memref.get_global @table : memref<3xf32>
//       CHECK:     memref.load %[[GLOBAL]]
//       CHECK:     memref.store %{{.*}}, %[[BUFFER]]
//       CHECK:   call @hand_on_kernel0(%[[BUFFER]], %[[OUT]])
//       CHECK:   memref.dealloc %[[BUFFER]]
//  CHECK-NEXT:   return
memref.global "private" constant @table : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
func.func private @hand_on_kernel0(%t: memref<3xf32>, %o: memref<3xf32>) attributes {tgc.kernel} {
  memref.copy %t, %o : memref<3xf32> to memref<3xf32>
  return
}
func.func @hand_on(%o: memref<3xf32>) {
  %g = memref.get_global @table : memref<3xf32>
  call @hand_on_kernel0(%g, %o) : (memref<3xf32>, memref<3xf32>) -> ()
  return
}
