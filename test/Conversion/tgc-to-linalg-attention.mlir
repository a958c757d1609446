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

// A sequence without a divisor near the tile limits (ViT's 197 tokens, a prime) is one
// tile of queries and one of keys, not 1 x 1 tiles.
// CHECK-LABEL: func.func @prime(
//       CHECK:   scf.forall (%{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) in (2, 3, 1)
//       CHECK:     scf.for
//       CHECK:       linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<197x16xf32>, tensor<197x16xf32>) outs(%{{.*}} : tensor<197x197xf32>)
func.func @prime(%q: !tgc.vtensor<[2, 3, 197, 16], f32>, %k: !tgc.vtensor<[2, 3, 197, 16], f32>, %v: !tgc.vtensor<[2, 3, 197, 16], f32>) -> !tgc.vtensor<[2, 3, 197, 16], f32> {
  %0 = tgc.scaled_dot_product_attention %q, %k, %v : !tgc.vtensor<[2, 3, 197, 16], f32>, !tgc.vtensor<[2, 3, 197, 16], f32>, !tgc.vtensor<[2, 3, 197, 16], f32> -> !tgc.vtensor<[2, 3, 197, 16], f32>
  return %0 : !tgc.vtensor<[2, 3, 197, 16], f32>
}

// With with_logsumexp, each tile of queries also writes max + log(sum) of its rows into
// the [batch..., L] result.
// CHECK-LABEL: func.func @logsumexp(
//       CHECK:   %[[LSE:.*]] = tensor.empty() : tensor<3x40xf32>
//       CHECK:   scf.forall (%[[B:[^,]*]], %[[T:[^)]*]]) in (3, 1) shared_outs(%[[SO:.*]] = %{{.*}}, %[[SL:.*]] = %[[LSE]])
//       CHECK:     %[[ROWS:.*]]:3 = scf.for
//       CHECK:     arith.divf
//       CHECK:     tensor.extract_slice %[[SL]][%[[B]], %{{.*}}] [1, 40] [1, 1] : tensor<3x40xf32> to tensor<40xf32>
//       CHECK:     linalg.generic {{.*}} ins(%[[ROWS]]#0, %[[ROWS]]#1 : tensor<40xf32>, tensor<40xf32>)
//       CHECK:       math.log
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %{{.*}} into %[[SO]][%[[B]], %{{.*}}, 0] [1, 40, 16]
//       CHECK:       tensor.parallel_insert_slice %{{.*}} into %[[SL]][%[[B]], %{{.*}}] [1, 40]
func.func @logsumexp(%q: !tgc.vtensor<[3, 40, 16], f32>, %k: !tgc.vtensor<[3, 40, 16], f32>, %v: !tgc.vtensor<[3, 40, 16], f32>) -> (!tgc.vtensor<[3, 40, 16], f32>, !tgc.vtensor<[3, 40], f32>) {
  %0:2 = tgc.scaled_dot_product_attention %q, %k, %v {with_logsumexp} : !tgc.vtensor<[3, 40, 16], f32>, !tgc.vtensor<[3, 40, 16], f32>, !tgc.vtensor<[3, 40, 16], f32> -> !tgc.vtensor<[3, 40, 16], f32>, !tgc.vtensor<[3, 40], f32>
  return %0#0, %0#1 : !tgc.vtensor<[3, 40, 16], f32>, !tgc.vtensor<[3, 40], f32>
}

// The fused backward: an scf.forall over the batch elements; D = rowsum(dO * O); an
// scf.for over tiles of 96 keys carrying dQ, dK and dV of the batch element and, inside,
// an scf.for over the tiles of 48 queries that see the key tile (causal: from the tile
// holding its first key) carrying dQ and the key tile's dK and dV. Per pair of tiles: the
// probabilities recomputed from the log-sum-exp, then five GEMMs: dV += P^T dO,
// dP = dO V^T, dK += dS^T Q, dQ += dS K (scores q k^T first). No [L, S] tensor.
// CHECK-LABEL: func.func @backward(
//  CHECK-SAME:     %[[G:[^:]*]]: tensor<2x4x96x16xf32>, %[[Q:[^:]*]]: tensor<2x4x96x32xf32>, %[[K:[^:]*]]: tensor<2x4x192x32xf32>, %[[V:[^:]*]]: tensor<2x4x192x16xf32>, %[[O:[^:]*]]: tensor<2x4x96x16xf32>, %[[L:[^:]*]]: tensor<2x4x96xf32>)
//       CHECK:   scf.forall (%[[B:[^,]*]], %[[H:[^)]*]]) in (2, 4) shared_outs(%[[SQ:[^ ]*]] = %{{.*}}, %[[SK:[^ ]*]] = %{{.*}}, %[[SV:[^ ]*]] = %{{.*}})
//       CHECK:     %[[OR:.*]] = tensor.extract_slice %[[O]][%[[B]], %[[H]], 0, 0] [1, 1, 96, 16]
//       CHECK:     %[[GR:.*]] = tensor.extract_slice %[[G]][%[[B]], %[[H]], 0, 0] [1, 1, 96, 16]
//       CHECK:     %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[GR]], %[[OR]] : tensor<96x16xf32>, tensor<96x16xf32>) outs(%{{.*}} : tensor<96xf32>)
//       CHECK:     %[[ALL:.*]]:3 = scf.for %[[K0:[^ ]*]] = {{.*}} -> (tensor<96x32xf32>, tensor<192x32xf32>, tensor<192x16xf32>)
//       CHECK:       %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 96, 32]
//       CHECK:       %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 96, 16]
//       CHECK:       %[[START:.*]] = affine.apply #{{.*}}(%[[K0]])
//       CHECK:       %[[TILE:.*]]:3 = scf.for %[[Q0:[^ ]*]] = %[[START]] to {{.*}} -> (tensor<96x32xf32>, tensor<96x32xf32>, tensor<96x16xf32>)
//       CHECK:         %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 48, 32]
//       CHECK:         %[[GT:.*]] = tensor.extract_slice %[[G]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, 48, 16]
//       CHECK:         tensor.extract_slice %[[L]][%[[B]], %[[H]], %[[Q0]]] [1, 1, 48]
//       CHECK:         tensor.extract_slice %[[D]][%[[Q0]]] [48] [1]
//       CHECK:         linalg.matmul {{.*}} ins(%[[QT]], %[[KT]] : tensor<48x32xf32>, tensor<96x32xf32>) outs(%{{.*}} : tensor<48x96xf32>)
//       CHECK:         %[[P:.*]] = linalg.generic
//       CHECK:           arith.cmpi ule
//       CHECK:           math.exp
//       CHECK:         linalg.matmul {{.*}} ins(%[[P]], %[[GT]] : tensor<48x96xf32>, tensor<48x16xf32>) outs(%{{.*}} : tensor<96x16xf32>)
//       CHECK:         linalg.matmul {{.*}} ins(%[[GT]], %[[VT]] : tensor<48x16xf32>, tensor<96x16xf32>) outs(%{{.*}} : tensor<48x96xf32>)
//       CHECK:         %[[DS:.*]] = linalg.generic
//       CHECK:         %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[DS]] : tensor<48x96xf32>)
//       CHECK:         linalg.matmul {{.*}} ins(%[[SCALED]], %[[QT]] : tensor<48x96xf32>, tensor<48x32xf32>) outs(%{{.*}} : tensor<96x32xf32>)
//       CHECK:         %[[DQ:.*]] = tensor.extract_slice %{{.*}}[%[[Q0]], 0] [48, 32] [1, 1] : tensor<96x32xf32> to tensor<48x32xf32>
//       CHECK:         %[[DQT:.*]] = linalg.matmul ins(%[[SCALED]], %[[KT]] : tensor<48x96xf32>, tensor<96x32xf32>) outs(%[[DQ]] : tensor<48x32xf32>)
//       CHECK:         tensor.insert_slice %[[DQT]] into %{{.*}}[%[[Q0]], 0] [48, 32] [1, 1]
//       CHECK:       tensor.insert_slice %[[TILE]]#1 into %{{.*}}[%[[K0]], 0] [96, 32] [1, 1]
//       CHECK:       tensor.insert_slice %[[TILE]]#2 into %{{.*}}[%[[K0]], 0] [96, 16] [1, 1]
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[ALL]]#0 into %[[SQ]][%[[B]], %[[H]], 0, 0] [1, 1, 96, 32]
//       CHECK:       tensor.parallel_insert_slice %[[ALL]]#1 into %[[SK]][%[[B]], %[[H]], 0, 0] [1, 1, 192, 32]
//       CHECK:       tensor.parallel_insert_slice %[[ALL]]#2 into %[[SV]][%[[B]], %[[H]], 0, 0] [1, 1, 192, 16]
//   CHECK-NOT:   tensor<96x192xf32>
func.func @backward(%g: !tgc.vtensor<[2, 4, 96, 16], f32>, %q: !tgc.vtensor<[2, 4, 96, 32], f32>, %k: !tgc.vtensor<[2, 4, 192, 32], f32>, %v: !tgc.vtensor<[2, 4, 192, 16], f32>, %o: !tgc.vtensor<[2, 4, 96, 16], f32>, %l: !tgc.vtensor<[2, 4, 96], f32>) -> (!tgc.vtensor<[2, 4, 96, 32], f32>, !tgc.vtensor<[2, 4, 192, 32], f32>, !tgc.vtensor<[2, 4, 192, 16], f32>) {
  %0:3 = tgc.scaled_dot_product_attention_backward %g, %q, %k, %v, %o, %l {is_causal = true, scale = 0.125 : f64} : !tgc.vtensor<[2, 4, 96, 16], f32>, !tgc.vtensor<[2, 4, 96, 32], f32>, !tgc.vtensor<[2, 4, 192, 32], f32>, !tgc.vtensor<[2, 4, 192, 16], f32>, !tgc.vtensor<[2, 4, 96, 16], f32>, !tgc.vtensor<[2, 4, 96], f32> -> !tgc.vtensor<[2, 4, 96, 32], f32>, !tgc.vtensor<[2, 4, 192, 32], f32>, !tgc.vtensor<[2, 4, 192, 16], f32>
  return %0#0, %0#1, %0#2 : !tgc.vtensor<[2, 4, 96, 32], f32>, !tgc.vtensor<[2, 4, 192, 32], f32>, !tgc.vtensor<[2, 4, 192, 16], f32>
}

// with_mask_grad: the scores' gradient of each pair of tiles goes into a [L, S] tensor
// per batch element (its fourth result), zero where no query sees the key.
// CHECK-LABEL: func.func @mask_grad(
//       CHECK:   scf.forall (%[[B:[^)]*]]) in (2) shared_outs({{.*}}, %[[SM:[^ ]*]] = %{{.*}})
//       CHECK:     linalg.fill {{.*}} -> tensor<24x30xf32>
//       CHECK:     %[[ALL:.*]]:4 = scf.for
//       CHECK:       scf.for {{.*}} -> (tensor<24x8xf32>, tensor<30x8xf32>, tensor<30x8xf32>, tensor<24x30xf32>)
//       CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] [24, 30] [1, 1] : tensor<24x30xf32> into tensor<24x30xf32>
//       CHECK:     tensor.parallel_insert_slice %[[ALL]]#3 into %[[SM]][%[[B]], 0, 0] [1, 24, 30]
func.func @mask_grad(%g: !tgc.vtensor<[2, 24, 8], f32>, %q: !tgc.vtensor<[2, 24, 8], f32>, %k: !tgc.vtensor<[2, 30, 8], f32>, %v: !tgc.vtensor<[2, 30, 8], f32>, %o: !tgc.vtensor<[2, 24, 8], f32>, %l: !tgc.vtensor<[2, 24], f32>, %m: !tgc.vtensor<[24, 30], f32>) -> !tgc.vtensor<[2, 24, 30], f32> {
  %0:4 = tgc.scaled_dot_product_attention_backward %g, %q, %k, %v, %o, %l mask %m {scale = 0.5 : f64, with_mask_grad} : !tgc.vtensor<[2, 24, 8], f32>, !tgc.vtensor<[2, 24, 8], f32>, !tgc.vtensor<[2, 30, 8], f32>, !tgc.vtensor<[2, 30, 8], f32>, !tgc.vtensor<[2, 24, 8], f32>, !tgc.vtensor<[2, 24], f32>, !tgc.vtensor<[24, 30], f32> -> !tgc.vtensor<[2, 24, 8], f32>, !tgc.vtensor<[2, 30, 8], f32>, !tgc.vtensor<[2, 30, 8], f32>, !tgc.vtensor<[2, 24, 30], f32>
  return %0#3 : !tgc.vtensor<[2, 24, 30], f32>
}
