// RUN: tgc-opt %s --tgc-widen-accumulators | FileCheck %s

// A bf16 matmul (here with a transposed right operand) sums in an f32 accumulator,
// filled with the same zero, and rounds once; an f32 matmul stays as it is.
// CHECK-LABEL: func.func @matmul_bf16
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<2x5xf32>
//       CHECK:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<2x5xf32>)
//       CHECK:   %[[P:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %arg1 : tensor<2x8xbf16>, tensor<5x8xbf16>) outs(%[[F]] : tensor<2x5xf32>)
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<2x5xf32>) outs(%{{.*}} : tensor<2x5xbf16>)
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   return %[[R]]
func.func @matmul_bf16(%a: tensor<2x8xbf16>, %b: tensor<5x8xbf16>) -> tensor<2x5xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x5xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x5xbf16>) -> tensor<2x5xbf16>
  %p = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<2x8xbf16>, tensor<5x8xbf16>) outs(%f : tensor<2x5xbf16>) -> tensor<2x5xbf16>
  return %p : tensor<2x5xbf16>
}

// CHECK-LABEL: func.func @matmul_f32
//   CHECK-NOT:   linalg.generic
//       CHECK:   linalg.matmul ins(%arg0, %arg1 : tensor<2x8xf32>, tensor<8x5xf32>) outs(%{{.*}} : tensor<2x5xf32>)
func.func @matmul_f32(%a: tensor<2x8xf32>, %b: tensor<8x5xf32>, %c: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<2x8xf32>, tensor<8x5xf32>) outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %p : tensor<2x5xf32>
}

// An f16 convolution accumulating into a tensor that is not a constant fill: the
// accumulator is that tensor widened.
// CHECK-LABEL: func.func @conv_f16
//       CHECK:   %[[W:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<1x1x2x3x3xf16>)
//       CHECK:     arith.extf %{{.*}} : f16 to f32
//       CHECK:   %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<1x1x1x5x5xf16>, tensor<1x2x1x3x3xf16>) outs(%[[W]] : tensor<1x1x2x3x3xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[C]] : tensor<1x1x2x3x3xf32>)
//       CHECK:     arith.truncf %{{.*}} : f32 to f16
func.func @conv_f16(%x: tensor<1x1x1x5x5xf16>, %w: tensor<1x2x1x3x3xf16>, %acc: tensor<1x1x2x3x3xf16>) -> tensor<1x1x2x3x3xf16> {
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x1x5x5xf16>, tensor<1x2x1x3x3xf16>) outs(%acc : tensor<1x1x2x3x3xf16>) -> tensor<1x1x2x3x3xf16>
  return %c : tensor<1x1x2x3x3xf16>
}

// An f32 product of operands widened from bf16 (what tgc-decompose writes for a bf16
// linear with bias) reads the bf16 operands; a widened operand that is also transposed
// (not an identity-indexed extf) stays as it is.
// CHECK-LABEL: func.func @widened_operands
//       CHECK:   linalg.matmul ins(%arg0, %arg1 : tensor<2x8xbf16>, tensor<8x5xbf16>) outs(%{{.*}} : tensor<2x5xf32>)
//       CHECK:   %[[T:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x5xbf16>) outs(%{{.*}} : tensor<5x8xf32>)
//       CHECK:   linalg.matmul ins(%{{.*}}, %[[T]] : tensor<2x5xf32>, tensor<5x8xf32>)
func.func @widened_operands(%a: tensor<2x8xbf16>, %b: tensor<8x5xbf16>, %c: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %ea = tensor.empty() : tensor<2x8xf32>
  %wa = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x8xbf16>) outs(%ea : tensor<2x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x8xf32>
  %eb = tensor.empty() : tensor<8x5xf32>
  %wb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x5xbf16>) outs(%eb : tensor<8x5xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<8x5xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<2x8xf32>, tensor<8x5xf32>) outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  %et = tensor.empty() : tensor<5x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x5xbf16>) outs(%et : tensor<5x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<5x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %q = linalg.matmul ins(%p, %t : tensor<2x5xf32>, tensor<5x8xf32>) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %q : tensor<2x8xf32>
}
