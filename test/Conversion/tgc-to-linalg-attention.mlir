// RUN: tgc-opt %s --convert-tgc-to-linalg | FileCheck %s

// scaled_dot_product_attention is one fused, tiled kernel: an scf.forall over the batch
// dimensions and tiles of 48 queries; each tile runs an online softmax over tiles of 96
// keys (an scf.for carrying the row maximum, the row sum and the output), with the
// scores of a tile q k^T and the update p v as GEMMs; causal masking compares the
// tile's positions and stops at the last key tile the query tile can see. No [L, S]
// tensor is created.
// CHECK-LABEL: func.func @causal(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<2x4x96x32xf32>, %[[K:[^:]*]]: tensor<2x4x192x32xf32>, %[[V:[^:]*]]: tensor<2x4x192x16xf32>)
//       CHECK:   %[[OUT:.*]] = tensor.empty() : tensor<2x4x96x16xf32>
//       CHECK:   scf.forall (%[[B:[^,]*]], %[[H:[^,]*]], %[[T:[^)]*]]) in (2, 4, 2) shared_outs(%[[SHARED:.*]] = %[[OUT]])
//       CHECK:     %[[Q0:.*]] = affine.apply #{{.*}}(%[[T]])
//       CHECK:     %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 48, 32] [1, 1, 1, 1] : tensor<2x4x96x32xf32> to tensor<48x32xf32>
//       CHECK:     %[[END:.*]] = affine.min #{{.*}}(%[[Q0]])
//       CHECK:     scf.for %[[K0:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<48xf32>, tensor<48xf32>, tensor<48x16xf32>)
//       CHECK:       %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 96, 32]
//       CHECK:       %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 96, 16]
//       CHECK:       linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[QT]], %[[KT]] : tensor<48x32xf32>, tensor<96x32xf32>) outs(%{{.*}} : tensor<48x96xf32>)
//       CHECK:       arith.cmpi ule
//       CHECK:       arith.maximumf
//       CHECK:       math.exp
//       CHECK:       linalg.matmul ins(%{{.*}}, %[[VT]] : tensor<48x96xf32>, tensor<96x16xf32>) outs(%{{.*}} : tensor<48x16xf32>)
//       CHECK:       scf.yield
//       CHECK:     arith.divf
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %{{.*}} into %[[SHARED]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 48, 16]
//   CHECK-NOT:   tensor<96x192xf32>
func.func @causal(%q: !tgc.vtensor<[2, 4, 96, 32], f32>, %k: !tgc.vtensor<[2, 4, 192, 32], f32>, %v: !tgc.vtensor<[2, 4, 192, 16], f32>) -> !tgc.vtensor<[2, 4, 96, 16], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v {is_causal = true} : !tgc.vtensor<[2, 4, 96, 32], f32>, !tgc.vtensor<[2, 4, 192, 32], f32>, !tgc.vtensor<[2, 4, 192, 16], f32> -> !tgc.vtensor<[2, 4, 96, 16], f32>
  return %0 : !tgc.vtensor<[2, 4, 96, 16], f32>
}

// A mask broadcast over heads is read a [queries, keys] tile at a time.
// CHECK-LABEL: func.func @masked(
//  CHECK-SAME:     %[[M:[^:]*]]: tensor<2x1x40x150xf32>)
//       CHECK:   scf.forall (%[[B:[^,]*]], %[[H:[^,]*]], %[[T:[^)]*]]) in (2, 3, 1)
//       CHECK:     scf.for %[[K0:[^ ]*]] =
//       CHECK:       tensor.extract_slice %[[M]][%[[B]], 0, %{{.*}}, %[[K0]]] [1, 1, 40, 75] [1, 1, 1, 1] : tensor<2x1x40x150xf32> to tensor<40x75xf32>
//       CHECK:       arith.addf
func.func @masked(%q: !tgc.vtensor<[2, 3, 40, 16], f32>, %k: !tgc.vtensor<[2, 3, 150, 16], f32>, %v: !tgc.vtensor<[2, 3, 150, 16], f32>, %m: !tgc.vtensor<[2, 1, 40, 150], f32>) -> !tgc.vtensor<[2, 3, 40, 16], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v mask %m : !tgc.vtensor<[2, 3, 40, 16], f32>, !tgc.vtensor<[2, 3, 150, 16], f32>, !tgc.vtensor<[2, 3, 150, 16], f32>, !tgc.vtensor<[2, 1, 40, 150], f32> -> !tgc.vtensor<[2, 3, 40, 16], f32>
  return %0 : !tgc.vtensor<[2, 3, 40, 16], f32>
}
