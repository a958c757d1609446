// RUN: tgc-opt %s --tgc-lower-deallocations-on-host | FileCheck %s

// The lowering's bookkeeping (the pointers to free and to keep, and ownership flags) is
// on the host stack, never freed; the model's buffer, allocated before, stays an alloc.
// CHECK-LABEL: func.func @free_two(
//       CHECK:   %[[BUFFER:.*]] = memref.alloc() : memref<8xf32>
//   CHECK-DAG:   memref.alloca() : memref<2xindex>
//   CHECK-DAG:   memref.alloca() : memref<1xindex>
//   CHECK-DAG:   memref.alloca() : memref<2xi1>
//   CHECK-NOT:   memref.alloc()
//       CHECK:   call @dealloc_helper(
//       CHECK:   memref.dealloc %{{.*}} : memref<2xf32>
//       CHECK:   memref.dealloc %{{.*}} : memref<2xf32>
//   CHECK-NOT:   memref.dealloc
//       CHECK:   return
func.func @free_two(%a: memref<2xf32>, %b: memref<2xf32>, %p: i1, %q: i1, %keep: memref<2xf32>) -> (memref<8xf32>, i1) {
  %buffer = memref.alloc() : memref<8xf32>
  %owned = bufferization.dealloc (%a, %b : memref<2xf32>, memref<2xf32>) if (%p, %q) retain (%keep : memref<2xf32>)
  return %buffer, %owned : memref<8xf32>, i1
}
