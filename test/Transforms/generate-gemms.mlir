// RUN: tgc-opt --tgc-generate-gemms --split-input-file %s | FileCheck %s

// A product whose B is contiguous along the output row: the reduction moves outside the
// row (i, k, j), in a kernel of its own (entries are compiled unoptimized).
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @mm(
// CHECK: call @mm_gemm0(%arg0, %arg1, %arg2)
// CHECK-NOT: linalg
// CHECK-LABEL: func.func private @mm_gemm0(
// CHECK-SAME: attributes {tgc.kernel}
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @mm(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Batched, already in a kernel: rewritten in place.
// CHECK-LABEL: func.func private @bmm(
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-NOT: call
func.func private @bmm(%a: memref<2x4x8xf64>, %b: memref<2x8x16xf64>, %c: memref<2x4x16xf64>) attributes {tgc.kernel} {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf64>, memref<2x8x16xf64>) outs(%c : memref<2x4x16xf64>)
  return
}

// -----

// A @ B^T (nn.Linear): both operands run along the reduction, so it stays innermost (a
// dot product, which tgc-lower-reductions vectorizes).
// CHECK-LABEL: func.func private @linear(
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
func.func private @linear(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) attributes {tgc.kernel} {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<4x8xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Tensors are left alone (the pass runs after bufferization); so are other ops.
// CHECK-LABEL: func.func @tensors(
// CHECK: linalg.matmul
// CHECK: linalg.fill
func.func @tensors(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>, %d: memref<4xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<4xf32>)
  return %r : tensor<4x16xf32>
}
