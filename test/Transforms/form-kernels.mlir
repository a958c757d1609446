// RUN: tgc-opt %s -tgc-form-kernels -split-input-file | FileCheck %s

// Elementwise chains fuse; each structured op left is a kernel with the fill of its
// output, the views its operands come through and the scalar constants it uses; the
// output tensors (tensor.empty) stay with the caller.

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %s: tensor<32xf32>) -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %cst : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %er = tensor.empty() : tensor<4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%b : tensor<4x8xf32>) outs(%fr : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %em = tensor.empty() : tensor<4x16xf32>
  %fm = linalg.fill ins(%zero : f32) outs(%em : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%b, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fm : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v = tensor.expand_shape %s [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.subf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %mm, %sum, %c : tensor<4x16xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[S:.*]]: tensor<32xf32>)
// CHECK-NOT:     linalg.
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[B:.*]] = call @forward_kernel0(%[[X]], %[[E]])
// CHECK:         %[[ER:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         %[[SUM:.*]] = call @forward_kernel1(%[[B]], %[[ER]])
// CHECK:         %[[EM:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK:         %[[MM:.*]] = call @forward_kernel2(%[[B]], %[[W]], %[[EM]])
// CHECK:         %[[C:.*]] = call @forward_kernel3(%[[S]], %[[B]], %[[E]])
// CHECK-NOT:     linalg.
// CHECK:         return %[[MM]], %[[SUM]], %[[C]]

// The two elementwise ops are one loop; the constant is the kernel's own.
// CHECK-LABEL: func.func private @forward_kernel0(
// CHECK-SAME:      %[[IN:.*]]: tensor<4x8xf32>, %[[OUT:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tgc.kernel}
// CHECK:         %[[TWO:.*]] = arith.constant 2.0
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<4x8xf32>) outs(%[[OUT]] : tensor<4x8xf32>)
// CHECK:           %[[M:.*]] = arith.mulf %{{.*}}, %[[TWO]]
// CHECK:           %[[EXP:.*]] = math.exp %[[M]]
// CHECK:           linalg.yield %[[EXP]]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]

// The reduction is generalized and initializes its own output.
// CHECK-LABEL: func.func private @forward_kernel1(
// CHECK-SAME:      %[[IN:.*]]: tensor<4x8xf32>, %[[OUT:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {tgc.kernel}
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[IN]] : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>)

// The contraction keeps its name (BLAS takes it later).
// CHECK-LABEL: func.func private @forward_kernel2(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[OUT:.*]]: tensor<4x16xf32>)
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4x16xf32>)
// CHECK:         linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)

// The view of an operand is the kernel's: it takes the viewed tensor.
// CHECK-LABEL: func.func private @forward_kernel3(
// CHECK-SAME:      %[[S:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[OUT:.*]]: tensor<4x8xf32>)
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [4, 8]
// CHECK:         linalg.generic {{.*}} ins(%[[V]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[OUT]] : tensor<4x8xf32>)

// -----

// An elementwise producer with one use fuses into the reduction after it (softmax's
// exp and sum). Dynamic sizes reach the kernel as the output's tensor and the index
// values its operands' views need.

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @prologue(%x: tensor<?x8xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.reduce ins(%a : tensor<?x8xf32>) outs(%fr : tensor<?xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %shape = tensor.from_elements %n, %c1 : tensor<2xindex>
  %r = tensor.reshape %sum(%shape) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x1xf32>
  %e2 = tensor.empty(%n) : tensor<?x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<?x1xf32>) outs(%e2 : tensor<?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.log %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @prologue(
// CHECK-SAME:      %[[X:.*]]: tensor<?x8xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK:         %[[ER:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK:         %[[SUM:.*]] = call @prologue_kernel0(%[[X]], %[[ER]])
// CHECK:         %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x1xf32>
// CHECK:         %[[Y:.*]] = call @prologue_kernel1(%[[SUM]], %[[N]], %[[E2]])
// CHECK:         return %[[Y]]

// CHECK-LABEL: func.func private @prologue_kernel0(
// CHECK:         linalg.fill
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic

// CHECK-LABEL: func.func private @prologue_kernel1(
// CHECK-SAME:      %[[SUM:.*]]: tensor<?xf32>, %[[N:.*]]: index, %[[OUT:.*]]: tensor<?x1xf32>)
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %[[N]], %{{.*}} : tensor<2xindex>
// CHECK:         %[[R:.*]] = tensor.reshape %[[SUM]](%[[SHAPE]])
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : tensor<?x1xf32>) outs(%[[OUT]] : tensor<?x1xf32>)
// CHECK:           math.log

// -----

// Groups inside a region are called from there.

#id = affine_map<(d0) -> (d0)>
func.func @branch(%p: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %p -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = math.exp %in : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @branch(
// CHECK:         scf.if
// CHECK:           %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:           %[[A:.*]] = func.call @branch_kernel0(%{{.*}}, %[[E]])
// CHECK:           scf.yield %[[A]]
// CHECK-LABEL: func.func private @branch_kernel0(
// CHECK:         math.exp

// -----

// An output that comes through a view (grouped convolution writes a 5-d view of a 4-d
// result) is the kernel's argument as viewed: the view stays with the caller, so the
// kernel's result is its argument, written in place. Its fill is the kernel's.

func.func @viewed_output(%x: tensor<2x4x1x6x6xf32>, %w: tensor<4x1x1x3x3xf32>) -> tensor<2x4x1x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x4xf32>
  %v = tensor.expand_shape %e [[0], [1, 2], [3], [4]] output_shape [2, 4, 1, 4, 4] : tensor<2x4x4x4xf32> into tensor<2x4x1x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%v : tensor<2x4x1x4x4xf32>) -> tensor<2x4x1x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x4x1x6x6xf32>, tensor<4x1x1x3x3xf32>) outs(%f : tensor<2x4x1x4x4xf32>) -> tensor<2x4x1x4x4xf32>
  return %c : tensor<2x4x1x4x4xf32>
}

// CHECK-LABEL: func.func @viewed_output(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4x4x4xf32>
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[E]]
// CHECK:         %[[C:.*]] = call @viewed_output_kernel0(%{{.*}}, %{{.*}}, %[[V]])
// CHECK:         return %[[C]]
// CHECK-LABEL: func.func private @viewed_output_kernel0(
// CHECK-SAME:      %[[OUT:[^:]*]]: tensor<2x4x1x4x4xf32>) -> tensor<2x4x1x4x4xf32>
// CHECK-NOT:     expand_shape
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<2x4x1x4x4xf32>)
// CHECK:         linalg.conv_2d_ngchw_gfchw {{.*}} outs(%[[F]] : tensor<2x4x1x4x4xf32>)

// -----

// A GEMM reads a transposed operand through its indexing map (no transposed copy), and
// a transposed GEMM result is the GEMM of the swapped operands, (A B)^T = B^T A^T,
// written straight into the transpose's output.

func.func @transposed_input(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%t, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// CHECK-DAG: #[[$KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @transposed_input(
// CHECK-NOT:     linalg.transpose
// CHECK-LABEL: func.func private @transposed_input_kernel0(
// CHECK-SAME:      %[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[OUT:.*]]: tensor<4x16xf32>)
// CHECK:         linalg.matmul indexing_maps = [#[[$KM]], #[[$KN]], #[[$MN]]] ins(%[[A]], %[[B]] : tensor<8x4xf32>, tensor<8x16xf32>)

func.func @transposed_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %et = tensor.empty() : tensor<16x4xf32>
  %t = linalg.transpose ins(%m : tensor<4x16xf32>) outs(%et : tensor<16x4xf32>) permutation = [1, 0]
  return %t : tensor<16x4xf32>
}

// CHECK-LABEL: func.func @transposed_result(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<16x4xf32>
// CHECK:         %[[R:.*]] = call @transposed_result_kernel0(%[[B]], %[[A]], %[[E]])
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]]
// CHECK-LABEL: func.func private @transposed_result_kernel0(
// CHECK-SAME:      %[[B:.*]]: tensor<8x16xf32>, %[[A:.*]]: tensor<4x8xf32>, %[[OUT:.*]]: tensor<16x4xf32>)
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<16x4xf32>)
// CHECK:         linalg.matmul indexing_maps = [#[[$KM]], #[[$NK]], #[[$MN]]] ins(%[[B]], %[[A]] : tensor<8x16xf32>, tensor<4x8xf32>) outs(%[[F]] : tensor<16x4xf32>)

// -----

// A reduction's parallel dimensions go outermost (the loop that runs on threads), the
// innermost dimension stays innermost: batch norm's mean over (n, c, h, w) becomes
// (c, n, h, w). A column sum, whose innermost dimension is the parallel one, keeps its
// order.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func private @bn_mean_kernel0(
//       CHECK:   linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
// CHECK-LABEL: func.func private @column_sum_kernel0(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]}
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @bn_mean(%x: tensor<4x8x16x16xf32>) -> tensor<8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#nchw, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<4x8x16x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

#rc = affine_map<(r, c) -> (r, c)>
#col = affine_map<(r, c) -> (c)>
func.func @column_sum(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#rc, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<64x32xf32>) outs(%z : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  return %s : tensor<32xf32>
}

// -----

// Identical groups are one kernel: both calls call the first; a group that differs
// only in a constant is a kernel of its own.
// CHECK-LABEL: func.func @repeated(
//       CHECK:   call @repeated_kernel0(%{{.*}}, %{{.*}})
//       CHECK:   call @repeated_kernel0(%{{.*}}, %{{.*}})
//       CHECK:   call @repeated_kernel2(%{{.*}}, %{{.*}})
// CHECK-LABEL: func.func private @repeated_kernel0(
//   CHECK-NOT: func.func private @repeated_kernel1(
//       CHECK: func.func private @repeated_kernel2(
//       CHECK:   arith.constant 3.000000e+00 : f32
#id = affine_map<(i) -> (i)>
func.func @repeated(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %e0 = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c2 : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c2 : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c3 : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  return %a, %b, %c : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// A cheap elementwise producer with several uses (batch norm's x - mean, one input
// read in full, the mean broadcast) is recomputed in each consumer instead of being
// written once and read back: the variance's reduction and the normalization each
// read x and the mean. An expensive one (exp) and one that reads two tensors in full
// (a residual add) are computed once, in a kernel of their own. (The two column sums
// are one kernel: they have the same body.)

#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
#cr = affine_map<(d0, d1) -> (d1)>
func.func @recompute(%x: tensor<64x8xf32>, %mean: tensor<8xf32>, %y: tensor<64x8xf32>)
    -> (tensor<8xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<8xf32>, tensor<64x8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x8xf32>
  %centered = linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<64x8xf32>, tensor<8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  %er = tensor.empty() : tensor<8xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %var = linalg.generic {indexing_maps = [#x, #cr], iterator_types = ["reduction", "parallel"]}
      ins(%centered : tensor<64x8xf32>) outs(%fr : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %scaled = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%centered : tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  %exp = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  %sum = linalg.generic {indexing_maps = [#x, #cr], iterator_types = ["reduction", "parallel"]}
      ins(%exp : tensor<64x8xf32>) outs(%fr : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %residual = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<64x8xf32>, tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  %rsum = linalg.generic {indexing_maps = [#x, #cr], iterator_types = ["reduction", "parallel"]}
      ins(%residual : tensor<64x8xf32>) outs(%fr : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %var, %scaled, %exp, %sum, %residual, %rsum
      : tensor<8xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<8xf32>, tensor<64x8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @recompute(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<64x8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[Y:[^:]*]]: tensor<64x8xf32>)
//       CHECK:   %[[VAR:.*]] = call @recompute_kernel0(%[[X]], %[[MEAN]],
//       CHECK:   %[[SCALED:.*]] = call @recompute_kernel1(%[[X]], %[[MEAN]],
//       CHECK:   %[[EXP:.*]] = call @recompute_kernel2(%[[X]],
//       CHECK:   %[[SUM:.*]] = call @recompute_kernel3(%[[EXP]],
//       CHECK:   %[[RES:.*]] = call @recompute_kernel4(%[[X]], %[[Y]],
//       CHECK:   %[[RSUM:.*]] = call @recompute_kernel3(%[[RES]],
//       CHECK:   return %[[VAR]], %[[SCALED]], %[[EXP]], %[[SUM]], %[[RES]], %[[RSUM]]
// CHECK-LABEL: func.func private @recompute_kernel0(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
//       CHECK:     arith.subf
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
// CHECK-LABEL: func.func private @recompute_kernel1(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
//       CHECK:     arith.subf
//       CHECK:     arith.mulf

// -----

// A loop over slices of a tensor (a convolution chunked over the batch): the GEMM whose
// output is a filled slice of the loop-carried tensor, inserted back at the same place,
// is a kernel that takes the whole tensor and the slice's offset and returns the
// tensor, so bufferization writes the slice in place. The unfolding kernel takes the
// input and the chunk's offset: a slice of an input is a view the kernel makes itself.

#read = affine_map<(d0, d1) -> (d1, d0)>
#write = affine_map<(d0, d1) -> (d0, d1)>
func.func @chunks(%x: tensor<64x8xf32>, %w: tensor<4x8xf32>) -> tensor<4x64xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %r = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %empty) -> (tensor<4x64xf32>) {
    %chunk = tensor.extract_slice %x[%i, 0] [16, 8] [1, 1] : tensor<64x8xf32> to tensor<16x8xf32>
    %e = tensor.empty() : tensor<8x16xf32>
    %col = linalg.generic {indexing_maps = [#read, #write], iterator_types = ["parallel", "parallel"]}
        ins(%chunk : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x16xf32>
    %slice = tensor.extract_slice %acc[0, %i] [4, 16] [1, 1] : tensor<4x64xf32> to tensor<4x16xf32>
    %filled = linalg.fill ins(%zero : f32) outs(%slice : tensor<4x16xf32>) -> tensor<4x16xf32>
    %gemm = linalg.matmul ins(%w, %col : tensor<4x8xf32>, tensor<8x16xf32>) outs(%filled : tensor<4x16xf32>) -> tensor<4x16xf32>
    %next = tensor.insert_slice %gemm into %acc[0, %i] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<4x64xf32>
    scf.yield %next : tensor<4x64xf32>
  }
  return %r : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @chunks(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<64x8xf32>, %[[W:[^:]*]]: tensor<4x8xf32>)
//       CHECK:   scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x64xf32>) {
//       CHECK:     %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
//       CHECK:     %[[COL:.*]] = func.call @chunks_kernel0(%[[X]], %[[I]], %[[E]])
//       CHECK:     %[[NEXT:.*]] = func.call @chunks_kernel1(%[[W]], %[[COL]], %[[ACC]], %[[I]]) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x64xf32>, index) -> tensor<4x64xf32>
//       CHECK:     scf.yield %[[NEXT]]
// CHECK-LABEL: func.func private @chunks_kernel0(
//       CHECK:   tensor.extract_slice
//       CHECK:   linalg.generic
// CHECK-LABEL: func.func private @chunks_kernel1(
//  CHECK-SAME:     %[[W:[^:]*]]: tensor<4x8xf32>, %[[COL:[^:]*]]: tensor<8x16xf32>, %[[ACC:[^:]*]]: tensor<4x64xf32>, %[[I:[^:]*]]: index) -> tensor<4x64xf32>
//       CHECK:   %[[SLICE:.*]] = tensor.extract_slice %[[ACC]][0, %[[I]]] [4, 16] [1, 1]
//       CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[SLICE]] : tensor<4x16xf32>)
//       CHECK:   %[[G:.*]] = linalg.matmul ins(%[[W]], %[[COL]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
//       CHECK:   %[[R:.*]] = tensor.insert_slice %[[G]] into %[[ACC]][0, %[[I]]] [4, 16] [1, 1]
//       CHECK:   return %[[R]]

// -----

// A producer that a consumer reads broadcast would be recomputed for every element it is
// broadcast to: one with an rsqrt (eval-mode batch norm's per-channel scale) stays a
// kernel over its 8 channels; a cheap one (a multiplication) still fuses.

#px = affine_map<(d0, d1) -> (d0, d1)>
#ch = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0) -> (d0)>
func.func @broadcast(%x: tensor<64x8xf32>, %var: tensor<8xf32>, %w: tensor<8xf32>)
    -> (tensor<64x8xf32>, tensor<64x8xf32>) {
  %e8 = tensor.empty() : tensor<8xf32>
  %scale = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%var : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.rsqrt %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %double = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%w : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  %y = linalg.generic {indexing_maps = [#px, #ch, #px], iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale : tensor<64x8xf32>, tensor<8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.mulf %a, %s : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  %z = linalg.generic {indexing_maps = [#px, #ch, #px], iterator_types = ["parallel", "parallel"]}
      ins(%x, %double : tensor<64x8xf32>, tensor<8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.mulf %a, %s : f32
    linalg.yield %0 : f32
  } -> tensor<64x8xf32>
  return %y, %z : tensor<64x8xf32>, tensor<64x8xf32>
}

// CHECK-LABEL: func.func @broadcast(
//       CHECK:   %[[SCALE:.*]] = call @broadcast_kernel0(
//       CHECK:   call @broadcast_kernel1(%{{.*}}, %[[SCALE]],
//       CHECK:   call @broadcast_kernel2(
// CHECK-LABEL: func.func private @broadcast_kernel0(
//       CHECK:   math.rsqrt
// CHECK-LABEL: func.func private @broadcast_kernel1(
//   CHECK-NOT:   math.rsqrt
//       CHECK:   arith.mulf
// CHECK-LABEL: func.func private @broadcast_kernel2(
//       CHECK:   arith.addf
//       CHECK:   arith.mulf

// -----

// Sibling reductions (the same loops, a common tensor read the same way: batch norm's
// backward sums of dy and of dy * x) are one op with both outputs, one kernel, one pass
// over dy; each output gets its own destination. A reduction over other loops stays
// apart.

#nc = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @siblings(%dy: tensor<64x8xf32>, %x: tensor<64x8xf32>, %y: tensor<8x64xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#nc, #c], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<64x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %dot = linalg.generic {indexing_maps = [#nc, #nc, #c], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x : tensor<64x8xf32>, tensor<64x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %rows = linalg.generic {indexing_maps = [#nc, #r], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %sum, %dot, %rows : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @siblings(
//  CHECK-SAME:     %[[DY:[^:]*]]: tensor<64x8xf32>, %[[X:[^:]*]]: tensor<64x8xf32>, %[[Y:[^:]*]]: tensor<8x64xf32>)
//       CHECK:   %[[BOTH:.*]]:2 = call @siblings_kernel0(%[[DY]], %[[X]], %{{.*}}, %{{.*}}) : (tensor<64x8xf32>, tensor<64x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
//       CHECK:   %[[ROWS:.*]] = call @siblings_kernel1(%[[Y]],
//       CHECK:   return %[[BOTH]]#0, %[[BOTH]]#1, %[[ROWS]]
// CHECK-LABEL: func.func private @siblings_kernel0(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
//       CHECK:     arith.addf
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:     linalg.yield %{{.*}}, %{{.*}} : f32, f32

// -----

// Outputs that start from one tensor.empty (CSE merges equal ones: here an scf.forall's
// three outputs) each get an empty, and an argument, of their own: inside the kernel
// no two outputs are then one tensor, which bufferization would copy for each.
// CHECK-LABEL: func.func @forward(
//       CHECK:   %[[E0:.*]] = tensor.empty() : tensor<4x8xf32>
//       CHECK:   %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
//       CHECK:   %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
//       CHECK:   call @forward_kernel0(%[[E2]], %[[E0]], %[[E1]], %{{.*}})
// CHECK-LABEL: func.func private @forward_kernel0(
//  CHECK-SAME:     %[[A0:[^:]*]]: tensor<4x8xf32>, %[[A1:[^:]*]]: tensor<4x8xf32>, %[[A2:[^:]*]]: tensor<4x8xf32>, %[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %[[A0]], %{{.*}} = %[[A1]], %{{.*}} = %[[A2]])
func.func @forward(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r:3 = scf.forall (%i) in (4) shared_outs(%o0 = %e, %o1 = %e, %o2 = %e) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o0[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
      tensor.parallel_insert_slice %row into %o1[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
      tensor.parallel_insert_slice %row into %o2[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
    }
  }
  return %r#0, %r#1, %r#2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A consumer that permutes its operand (ConvNeXt's permute to channels-last after a
// depthwise convolution) does not take a producer that reads two or more tensors along
// its innermost loop: fused, every one of them would be read across the consumer's
// innermost loop. A producer that reads one tensor so still fuses into a permuting
// consumer.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#perm = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-2: call @forward_kernel
// CHECK-NOT: call @forward_kernel
// CHECK-LABEL: func.func private @forward_kernel0(
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: arith.negf
// CHECK-LABEL: func.func private @forward_kernel1(
// CHECK: arith.negf
func.func @forward(%a: tensor<2x8x16xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x16x8xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %0, %x : f32
    linalg.yield %1 : f32
  } -> tensor<2x8x16xf32>
  %et = tensor.empty() : tensor<2x16x8xf32>
  %t = linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<2x8x16xf32>) outs(%et : tensor<2x16x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.negf %x : f32
    linalg.yield %0 : f32
  } -> tensor<2x16x8xf32>
  return %t : tensor<2x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-1: call @forward_kernel
// CHECK-NOT: call @forward_kernel
// CHECK-LABEL: func.func private @forward_kernel0(
// CHECK: arith.mulf
// CHECK: arith.negf
func.func @forward(%a: tensor<2x8x16xf32>, %s: tensor<2x8xf32>) -> tensor<2x16x8xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %s : tensor<2x8x16xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<2x8x16xf32>
  %et = tensor.empty() : tensor<2x16x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scaled : tensor<2x8x16xf32>) outs(%et : tensor<2x16x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.negf %x : f32
    linalg.yield %0 : f32
  } -> tensor<2x16x8xf32>
  return %t : tensor<2x16x8xf32>
}
