// RUN: tgc-opt %s --split-input-file --tgc-lower-gpu-to-runtime --verify-diagnostics | FileCheck %s

// The fatbin becomes data in `.nv_fatbin` and the kernels' names a table in the order of
// their first launch; a launch passes one stack slot per kernel parameter: a memref's
// descriptor fields (the aligned pointer twice), an index as i64, an f32 as it is.
// CHECK-NOT: gpu.container_module
// CHECK-LABEL: func.func @entry(
//  CHECK-SAME:     %[[A:.*]]: memref<4x8xf32, strided<[16, 1], offset: 2>>, %[[N:.*]]: index, %[[S:.*]]: f32,
//       CHECK:   %[[NINE:.*]] = llvm.mlir.constant(9 : i64) : i64
//       CHECK:   %[[ARRAY:.*]] = llvm.alloca %[[NINE]] x !llvm.ptr
//       CHECK:   %[[BASE:.*]], %[[OFFSET:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
//       CHECK:   %[[ALIGNED:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
//       CHECK:   %[[P:.*]] = llvm.inttoptr
//       CHECK:   llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
//       CHECK:   llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
//       CHECK:   llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
//       CHECK:   llvm.store %[[S]], %{{.*}} : f32, !llvm.ptr
//       CHECK:   call @tgc_rt_cuda_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ARRAY]]) : (i32, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr) -> ()
//       CHECK:   %[[K1:.*]] = arith.constant 1 : i32
//       CHECK:   call @tgc_rt_cuda_launch(%[[K1]],
// A read-back of one element: the addresses of both (aligned pointer plus offset) and
// its bytes.
//       CHECK:   %[[HOST:.*]] = memref.alloca() : memref<1xi64>
//       CHECK:   %[[BYTES:.*]] = arith.constant 8 : i64
//       CHECK:   call @tgc_rt_cuda_read(%{{.*}}, %{{.*}}, %[[BYTES]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
//       CHECK:   memref.load %[[HOST]]
//   CHECK-NOT:   gpu.
//   CHECK-DAG: llvm.mlir.global internal constant @tgc_cuda_fatbin("FATBIN") {addr_space = 0 : i32, alignment = 8 : i64, section = ".nv_fatbin"}
//   CHECK-DAG: llvm.mlir.global internal constant @tgc_cuda_kernel_names("second\00first\00")
module attributes {gpu.container_module} {
  func.func @entry(%a: memref<4x8xf32, strided<[16, 1], offset: 2>>, %n: index, %s: f32, %v: memref<4xi64>) -> i64 {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    gpu.launch_func @tgc_kernels::@second blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4x8xf32, strided<[16, 1], offset: 2>>, %n : index, %s : f32)
    gpu.launch_func @tgc_kernels::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : index)
    %e = memref.subview %v[1] [1] [1] : memref<4xi64> to memref<1xi64, strided<[1], offset: 1>>
    %h = memref.alloca() : memref<1xi64>
    gpu.memcpy %h, %e : memref<1xi64>, memref<1xi64, strided<[1], offset: 1>>
    %x = memref.load %h[%c0] : memref<1xi64>
    return %x : i64
  }
  gpu.binary @tgc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "FATBIN">]
}

// -----

// A model without launches (its work all GEMMs) still gets an image, an empty one: it
// is a CUDA model.
// CHECK-LABEL: func.func @gemms_only(
//   CHECK-DAG: llvm.mlir.global internal constant @tgc_cuda_fatbin("") {addr_space = 0 : i32, alignment = 8 : i64, section = ".nv_fatbin"}
//   CHECK-DAG: llvm.mlir.global internal constant @tgc_cuda_kernel_names("")
//   CHECK-DAG: llvm.mlir.global internal constant @tgc_cuda_flags(0 : i64)
module {
  func.func @gemms_only() {
    return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{expected a fatbin object in the GPU binary}}
  gpu.binary @tgc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "PTX">]
}
