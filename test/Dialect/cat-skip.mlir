// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: tgc-opt %s --split-input-file --convert-tgc-to-linalg | FileCheck %s --check-prefix=LOWER

// As ATen, cat skips a 1-d operand of size 0 whatever the others' rank: the empty key
// cache that transformers' DynamicCache concatenates the first keys onto (OPT, Phi,
// Gemma, GPT-NeoX, Bart). Canonicalization drops it.
// CHECK-LABEL: func.func @empty_cache
//  CHECK-SAME:   %[[E:[^:]*]]: !tgc.vtensor<[0], f32>, %[[K:[^:]*]]: !tgc.vtensor<[2, 4, 3, 8], f32>
//       CHECK:   %[[C:.*]] = tgc.cat %[[K]] {dim = -2 : i64} : !tgc.vtensor<[2, 4, 3, 8], f32> -> !tgc.vtensor<[2, 4, 3, 8], f32>
//       CHECK:   return %[[C]]
// Lowered as it is, only the 4-d operand is inserted.
// LOWER-LABEL: func.func @empty_cache
//  LOWER-SAME:   %{{[^:]*}}: tensor<0xf32>, %[[K:[^:]*]]: tensor<2x4x3x8xf32>
//       LOWER:   tensor.insert_slice %[[K]] into %{{.*}}[0, 0, 0, 0] [2, 4, 3, 8] [1, 1, 1, 1]
//   LOWER-NOT:   tensor.insert_slice
func.func @empty_cache(%e: !tgc.vtensor<[0], f32>, %k: !tgc.vtensor<[2, 4, 3, 8], f32>) -> !tgc.vtensor<[2, 4, 3, 8], f32> {
  %0 = tgc.cat %e, %k {dim = -2 : i64} : !tgc.vtensor<[0], f32>, !tgc.vtensor<[2, 4, 3, 8], f32> -> !tgc.vtensor<[2, 4, 3, 8], f32>
  return %0 : !tgc.vtensor<[2, 4, 3, 8], f32>
}

// -----

// A skipped operand still takes part in the result's dtype (f64 here, as ATen's
// result_type): dropping it would change the type, so it stays, and the lowering casts
// and inserts the 4-d operand only.
// CHECK-LABEL: func.func @empty_cache_dtype
//       CHECK:   tgc.cat %{{.*}}, %{{.*}} {dim = 1 : i64} : !tgc.vtensor<[0], f64>, !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 3], f64>
// LOWER-LABEL: func.func @empty_cache_dtype
//       LOWER:   %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf64>)
//       LOWER:   tensor.insert_slice %[[X]] into %{{.*}}[0, 0] [2, 3] [1, 1]
//   LOWER-NOT:   tensor.insert_slice
func.func @empty_cache_dtype(%e: !tgc.vtensor<[0], f64>, %k: !tgc.vtensor<[2, 3], f32>) -> !tgc.vtensor<[2, 3], f64> {
  %0 = tgc.cat %e, %k {dim = 1 : i64} : !tgc.vtensor<[0], f64>, !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 3], f64>
  return %0 : !tgc.vtensor<[2, 3], f64>
}

// -----

// In a 1-d cat a [0] operand is an ordinary empty piece: it stays.
// CHECK-LABEL: func.func @one_d
//       CHECK:   tgc.cat %{{.*}}, %{{.*}} : !tgc.vtensor<[0], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[3], f32>
// LOWER-LABEL: func.func @one_d
func.func @one_d(%e: !tgc.vtensor<[0], f32>, %x: !tgc.vtensor<[3], f32>) -> !tgc.vtensor<[3], f32> {
  %0 = tgc.cat %e, %x : !tgc.vtensor<[0], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[3], f32>
  return %0 : !tgc.vtensor<[3], f32>
}
