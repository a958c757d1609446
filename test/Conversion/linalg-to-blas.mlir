// RUN: tgc-opt %s --convert-linalg-to-blas --split-input-file | FileCheck %s

// C += A @ B on f32 buffers calls the runtime's GEMM with pointers, offsets, leading
// dimensions (row strides) and sizes, alpha = beta = 1.
// CHECK-LABEL: func.func private @tgc_rt_gemm_f32(i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, f32, f32)
// CHECK-LABEL: func.func @mm
//  CHECK-SAME:   (%[[A:.*]]: memref<?x16xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<?x32xf32>)
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//   CHECK-DAG:   %[[NO:.*]] = arith.constant 0 : i64
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : i64
//   CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : i64
//       CHECK:   %[[AI:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
//       CHECK:   %[[AI64:.*]] = arith.index_cast %[[AI]] : index to i64
//       CHECK:   %[[AP:.*]] = llvm.inttoptr %[[AI64]] : i64 to !llvm.ptr
//       CHECK:   %[[BP:.*]] = llvm.inttoptr
//       CHECK:   %[[CP:.*]] = llvm.inttoptr
//       CHECK:   %[[DIM:.*]] = memref.dim %[[C]]
//       CHECK:   %[[M:.*]] = arith.index_cast %[[DIM]] : index to i64
//       CHECK:   call @tgc_rt_gemm_f32(%[[NO]], %[[NO]], %[[AP]], %[[NO]], %[[C16]], %[[BP]], %[[NO]], %[[C32]], %[[CP]], %[[NO]], %[[C32]], %[[M]], %[[C32]], %[[C16]], %[[ONE]], %[[ONE]])
//   CHECK-NOT:   linalg.matmul
func.func @mm(%a: memref<?x16xf32>, %b: memref<16x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x16xf32>, memref<16x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @bmm
//       CHECK:   call @tgc_rt_gemm_batched_f64
func.func @bmm(%a: memref<4x8x16xf64>, %b: memref<4x16x2xf64>, %c: memref<4x8x2xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x16xf64>, memref<4x16x2xf64>) outs(%c : memref<4x8x2xf64>)
  return
}

// -----

// A batched product whose A leaves out the batch dimension (a convolution's weight, read
// by every image) passes A with a batch stride of 0 and its row stride as lda.
// CHECK-LABEL: func.func @bmm_broadcast_a(
//  CHECK-SAME:     %[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<4x16x2xf32>, %[[C:.*]]: memref<4x8x2xf32>)
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0 : i64
//   CHECK-DAG:   %[[LDA:.*]] = arith.constant 16 : i64
//   CHECK-DAG:   %[[SB:.*]] = arith.constant 32 : i64
//       CHECK:   call @tgc_rt_gemm_batched_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[LDA]], %{{.*}}, %{{.*}}, %[[SB]],
#bA = affine_map<(b, m, n, k) -> (m, k)>
#bB = affine_map<(b, m, n, k) -> (b, k, n)>
#bC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @bmm_broadcast_a(%a: memref<8x16xf32>, %b: memref<4x16x2xf32>, %c: memref<4x8x2xf32>) {
  linalg.batch_matmul indexing_maps = [#bA, #bB, #bC] ins(%a, %b : memref<8x16xf32>, memref<4x16x2xf32>) outs(%c : memref<4x8x2xf32>)
  return
}

// -----

// Integer products and tensors stay linalg.
// CHECK-LABEL: func.func @not_blas
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x4xi64>, memref<4x4xi64>)
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
//   CHECK-NOT:   call
func.func @not_blas(%a: memref<4x4xi64>, %c: memref<4x4xi64>, %t: tensor<4x4xf32>) -> tensor<4x4xf32> {
  linalg.matmul ins(%a, %a : memref<4x4xi64>, memref<4x4xi64>) outs(%c : memref<4x4xi64>)
  %r = linalg.matmul ins(%t, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// B read transposed: transB = 1, ldb is the stored matrix's row stride.
// CHECK-LABEL: func.func @mm_transposed
//   CHECK-DAG:   %[[NO:.*]] = arith.constant 0 : i64
//   CHECK-DAG:   %[[YES:.*]] = arith.constant 1 : i64
//       CHECK:   call @tgc_rt_gemm_f32(%[[NO]], %[[YES]],
func.func @mm_transposed(%a: memref<4x16xf32>, %b: memref<32x16xf32>, %c: memref<4x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<4x16xf32>, memref<32x16xf32>) outs(%c : memref<4x32xf32>)
  return
}

// -----

// A zero fill of C right before the product goes with it: the GEMM overwrites C
// (beta = 0) and no loop zeroes C first. A fill of another value, of another buffer,
// or with an op in between stays, and its product accumulates (beta = 1).
// CHECK-LABEL: func.func @mm_zeroed
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//   CHECK-NOT:   linalg.fill
//       CHECK:   call @tgc_rt_gemm_f32({{.*}}, %[[ONE]], %[[ZERO]])
//   CHECK-NOT:   linalg.fill
//       CHECK:   return
func.func @mm_zeroed(%a: memref<4x16xf32>, %b: memref<16x32xf32>, %c: memref<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x32xf32>)
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%c : memref<4x32xf32>)
  return
}

// CHECK-LABEL: func.func @mm_kept_fills
//  CHECK-SAME:   (%{{.*}}: memref<4x16xf32>, %{{.*}}: memref<16x32xf32>, %[[C:.*]]: memref<4x32xf32>, %[[D:.*]]: memref<4x32xf32>)
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[C]]
//       CHECK:   call @tgc_rt_gemm_f32({{.*}}, %[[ONE]], %[[ONE]])
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[D]]
//       CHECK:   call @tgc_rt_gemm_f32({{.*}}, %[[ONE]], %[[ONE]])
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[C]]
//       CHECK:   memref.store
//       CHECK:   call @tgc_rt_gemm_f32({{.*}}, %[[ONE]], %[[ONE]])
func.func @mm_kept_fills(%a: memref<4x16xf32>, %b: memref<16x32xf32>, %c: memref<4x32xf32>, %d: memref<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%half : f32) outs(%c : memref<4x32xf32>)
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%c : memref<4x32xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<4x32xf32>)
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%c : memref<4x32xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x32xf32>)
  memref.store %half, %c[%i, %i] : memref<4x32xf32>
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%c : memref<4x32xf32>)
  return
}
