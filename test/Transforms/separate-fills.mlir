// RUN: tgc-opt %s --tgc-separate-fills | FileCheck %s

// A zero fill that CSE shared between two GEMMs' accumulators and a loop's initial
// value: each destination but one gets its own empty and fill right before it; a use
// as an input keeps the shared one.
// CHECK-LABEL: func.func @shared(
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x4xf32>)
//       CHECK:   %[[M0:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F]] : tensor<4x4xf32>)
//       CHECK:   %[[E1:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x4xf32>)
//       CHECK:   linalg.matmul ins(%[[M0]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F1]] : tensor<4x4xf32>)
//       CHECK:   %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4x4xf32>)
//       CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[F2]])
//       CHECK:   linalg.add ins(%[[F]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
func.func @shared(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%m0, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %f) -> (tensor<4x4xf32>) {
    %n = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %n : tensor<4x4xf32>
  }
  %e2 = tensor.empty() : tensor<4x4xf32>
  %s = linalg.add ins(%f, %r : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %r, %s : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// A fill with one destination, with none (only read), or of a tensor that is not
// empty, is left alone.
// CHECK-LABEL: func.func @alone(
//   CHECK-COUNT-3:   linalg.fill
//   CHECK-NOT:   linalg.fill
func.func @alone(%a: tensor<4x4xf32>, %t: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.fill ins(%zero : f32) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%g : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%m1, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%g : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %read = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.add ins(%read, %read : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m, %m2, %s : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
