// RUN: tgc-opt %s --tgc-parallelize-kernels --canonicalize | FileCheck %s

// A kernel's top-level scf.parallel with enough work becomes a call of
// tgc_rt_parallel_for over its outer dimension; the task runs outer iterations
// [begin, end) with the inner dimension as a loop of its own (it vectorizes), and
// reads the memrefs and scalars it uses from the context record.
// CHECK-LABEL: func.func private @k_kernel0(
//  CHECK-SAME:     %[[A:.*]]: memref<256x512xf32>, %[[B:.*]]: memref<256x512xf32>, %[[S:.*]]: f32)
//   CHECK-DAG:   %[[N:.*]] = arith.constant 256 : i64
//   CHECK-DAG:   %[[F:.*]] = constant @k_kernel0_par0 : (!llvm.ptr, i64, i64) -> ()
//   CHECK-DAG:   %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
//       CHECK:   %[[DA:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<256x512xf32> to !llvm.struct
//       CHECK:   %[[R0:.*]] = llvm.insertvalue %[[DA]], %{{.*}}[0]
//       CHECK:   %[[R1:.*]] = llvm.insertvalue %[[S]], %[[R0]][1]
//       CHECK:   %[[R2:.*]] = llvm.insertvalue %{{.*}}, %[[R1]][2]
//       CHECK:   llvm.store %[[R2]], %[[SLOT]]
//       CHECK:   %[[FP:.*]] = builtin.unrealized_conversion_cast %[[F]] : (!llvm.ptr, i64, i64) -> () to !llvm.ptr
//       CHECK:   call @tgc_rt_parallel_for(%[[FP]], %[[SLOT]], %[[N]])
//   CHECK-NOT:   scf.parallel
//       CHECK:   return

// CHECK-LABEL: func.func private @k_kernel0_par0(
//  CHECK-SAME:     %[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
//  CHECK-SAME:     llvm.linkage = #llvm.linkage<internal>
//       CHECK:   %[[REC:.*]] = llvm.load %[[CTX]]
//       CHECK:   %[[IN:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<256x512xf32>
//       CHECK:   %[[SC:.*]] = llvm.extractvalue %[[REC]][1]
//       CHECK:   %[[OUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<256x512xf32>
//       CHECK:   %[[LO:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
//       CHECK:   %[[HI:.*]] = arith.index_cast %[[END]] : i64 to index
//       CHECK:   scf.for %[[I:.*]] = %[[LO]] to %[[HI]]
//       CHECK:     scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%{{.*}}) step
//       CHECK:       %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]]
//       CHECK:       %[[Y:.*]] = arith.mulf %[[X]], %[[SC]]
//       CHECK:       memref.store %[[Y]], %[[OUT]][%[[I]], %[[J]]]

// A small loop (32 iterations) stays where it is.
// CHECK-LABEL: func.func private @k_kernel1(
//       CHECK:   scf.parallel
//   CHECK-NOT:   tgc_rt_parallel_for
//       CHECK:   return

// A function that is not a kernel is left alone.
// CHECK-LABEL: func.func @entry(
//       CHECK:   scf.parallel
//   CHECK-NOT:   tgc_rt_parallel_for
//       CHECK:   return
// CHECK: func.func private @tgc_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64)
module {
  func.func private @k_kernel0(%a: memref<256x512xf32>, %b: memref<256x512xf32>, %s: f32) attributes {tgc.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c512) step (%c1, %c1) {
      %x = memref.load %a[%i, %j] : memref<256x512xf32>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %b[%i, %j] : memref<256x512xf32>
      scf.reduce
    }
    return
  }
  func.func private @k_kernel1(%a: memref<4x8xf32>) attributes {tgc.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %cst = arith.constant 0.0 : f32
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
      memref.store %cst, %a[%i, %j] : memref<4x8xf32>
      scf.reduce
    }
    return
  }
  func.func @entry(%a: memref<256x512xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    %cst = arith.constant 0.0 : f32
    scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c512) step (%c1, %c1) {
      memref.store %cst, %a[%i, %j] : memref<256x512xf32>
      scf.reduce
    }
    return
  }
}
