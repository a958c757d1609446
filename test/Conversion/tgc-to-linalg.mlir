// RUN: tgc-opt %s --convert-tgc-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// Elementwise ops become one linalg.generic; a size-1 dimension broadcasts (map reads
// index 0), a Python scalar is used in the body, and sizes of symbols come from the
// argument dimension that binds them.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @add_broadcast
//  CHECK-SAME:   (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<1x4xf32>) -> tensor<?x4xf32>
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[DIM:.*]] = tensor.dim %[[A]], %[[C0]]
//       CHECK:   %[[E:.*]] = tensor.empty(%[[DIM]]) : tensor<?x4xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]]
//  CHECK-SAME:     ins(%[[A]], %[[B]] : tensor<?x4xf32>, tensor<1x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
//       CHECK:     %[[S:.*]] = arith.addf
//       CHECK:     linalg.yield %[[S]]
func.func @add_broadcast(%a: !tgc.vtensor<[s0, 4], f32>, %b: !tgc.vtensor<[1, 4], f32>) -> !tgc.vtensor<[s0, 4], f32> {
  %0 = tgc.add %a, %b : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[1, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
  return %0 : !tgc.vtensor<[s0, 4], f32>
}

// -----

// An integer tensor times a Python float computes in the default float dtype.
// CHECK-LABEL: func.func @int_times_float
//       CHECK:   linalg.generic
//       CHECK:   ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
//       CHECK:     %[[F:.*]] = arith.sitofp %[[IN]] : i64 to f32
//       CHECK:     %[[S:.*]] = arith.truncf %{{.*}} : f64 to f32
//       CHECK:     arith.mulf %[[F]], %[[S]] : f32
func.func @int_times_float(%a: !tgc.vtensor<[3], i64>) -> !tgc.vtensor<[3], f32> {
  %c = arith.constant 0.5 : f64
  %0 = tgc.mul %a, %c : !tgc.vtensor<[3], i64>, f64 -> !tgc.vtensor<[3], f32>
  return %0 : !tgc.vtensor<[3], f32>
}

// -----

// Comparisons compute in their operands' dtype and produce i1.
// CHECK-LABEL: func.func @compare
//       CHECK:   arith.cmpf olt, %{{.*}}, %{{.*}} : f32
//       CHECK:   -> tensor<3xi1>
func.func @compare(%a: !tgc.vtensor<[3], f32>, %b: !tgc.vtensor<[3], f32>) -> !tgc.vtensor<[3], i1> {
  %0 = tgc.lt %a, %b : !tgc.vtensor<[3], f32>, !tgc.vtensor<[3], f32> -> !tgc.vtensor<[3], i1>
  return %0 : !tgc.vtensor<[3], i1>
}

// -----

// Shifts as ATen's kernel: a left shift outside [0, 64) gives 0; a right shift there
// shifts by 63 (arithmetic).
// CHECK-LABEL: func.func @shifts
//       CHECK:   linalg.generic
//       CHECK:     %[[L:.*]] = arith.shli %[[A:.*]], %[[B:.*]] : i64
//       CHECK:     arith.cmpi slt, %[[B]]
//       CHECK:     arith.cmpi sge, %[[B]]
//       CHECK:     arith.select %{{.*}}, %{{.*}}, %[[L]] : i64
//       CHECK:   linalg.generic
//       CHECK:     %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
//       CHECK:     arith.shrsi %{{.*}}, %[[N]] : i64
func.func @shifts(%a: !tgc.vtensor<[3], i64>, %b: !tgc.vtensor<[3], i64>) -> (!tgc.vtensor<[3], i64>, !tgc.vtensor<[3], i64>) {
  %0 = tgc.bitwise_left_shift %a, %b : !tgc.vtensor<[3], i64>, !tgc.vtensor<[3], i64> -> !tgc.vtensor<[3], i64>
  %1 = tgc.bitwise_right_shift %a, %b : !tgc.vtensor<[3], i64>, !tgc.vtensor<[3], i64> -> !tgc.vtensor<[3], i64>
  return %0, %1 : !tgc.vtensor<[3], i64>, !tgc.vtensor<[3], i64>
}

// -----

// CHECK-LABEL: func.func @mm
//       CHECK:   %[[Z:.*]] = linalg.fill
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8x4xf32>) outs(%[[Z]] : tensor<?x4xf32>)
func.func @mm(%a: !tgc.vtensor<[s0, 8], f32>, %b: !tgc.vtensor<[8, 4], f32>) -> !tgc.vtensor<[s0, 4], f32> {
  %0 = tgc.mm %a, %b : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[8, 4], f32> -> !tgc.vtensor<[s0, 4], f32>
  return %0 : !tgc.vtensor<[s0, 4], f32>
}

// -----

// Reductions fill the identity and reduce; keepdim reshapes back to rank (a static
// reshape that splits or merges dimensions is an expand_shape or collapse_shape).
// CHECK-LABEL: func.func @amax_keepdim
//       CHECK:   %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
//       CHECK:   %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x10xf32>) outs(%[[INIT]] : tensor<4xf32>) dimensions = [1]
//       CHECK:     arith.maximumf
//       CHECK:   tensor.expand_shape %[[R]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
func.func @amax_keepdim(%x: !tgc.vtensor<[4, 10], f32>) -> !tgc.vtensor<[4, 1], f32> {
  %0 = tgc.amax %x {dim = array<i64: 1>, keepdim = true} : !tgc.vtensor<[4, 10], f32> -> !tgc.vtensor<[4, 1], f32>
  return %0 : !tgc.vtensor<[4, 1], f32>
}

// -----

// Views: a slice with a symbolic end becomes an extract_slice, a transpose a
// linalg.transpose, and writing a column back an insert_slice.
// CHECK-LABEL: func.func @views
//       CHECK:   tensor.extract_slice %{{.*}}[0, 1] [%{{.*}}, 3] [1, 1] : tensor<?x4xf32> to tensor<?x3xf32>
//       CHECK:   linalg.transpose ins(%{{.*}} : tensor<?x3xf32>) outs(%{{.*}} : tensor<3x?xf32>) permutation = [1, 0]
//       CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 1] [1, 1] : tensor<?xf32> into tensor<?x4xf32>
func.func @views(%x: !tgc.vtensor<[s0, 4], f32>, %c: !tgc.vtensor<[s0], f32>) -> (!tgc.vtensor<[3, s0], f32>, !tgc.vtensor<[s0, 4], f32>) {
  %0 = tgc.slice %x {dim = 1 : i64, start = #tgc.shape<[1]>, end = #tgc.shape<[9223372036854775807]>} : !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 3], f32>
  %1 = tgc.transpose %0 {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[s0, 3], f32> -> !tgc.vtensor<[3, s0], f32>
  %2 = tgc.select_scatter %x, %c {dim = 1 : i64, index = 0 : i64} : !tgc.vtensor<[s0, 4], f32>, !tgc.vtensor<[s0], f32> -> !tgc.vtensor<[s0, 4], f32>
  return %1, %2 : !tgc.vtensor<[3, s0], f32>, !tgc.vtensor<[s0, 4], f32>
}

// -----

// A view to symbolic sizes computes them from the symbols' values.
// CHECK-LABEL: func.func @view_symbolic
//       CHECK:   %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x8x32xf32>
//       CHECK:   %[[$ROWS:.*]] = affine.apply #{{.*}}()[%[[D]]]
//       CHECK:   %[[SHAPE:.*]] = tensor.from_elements %[[$ROWS]], %{{.*}} : tensor<2xindex>
//       CHECK:   tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?x8x32xf32>, tensor<2xindex>) -> tensor<?x32xf32>
func.func @view_symbolic(%x: !tgc.vtensor<[s0, 8, 32], f32>) -> !tgc.vtensor<[s0 * 8, 32], f32> {
  %0 = tgc.view %x {size = #tgc.shape<[-1, 32]>} : !tgc.vtensor<[s0, 8, 32], f32> -> !tgc.vtensor<[s0 * 8, 32], f32>
  return %0 : !tgc.vtensor<[s0 * 8, 32], f32>
}

// -----

// Creation: a causal mask from arange-free triangles.
// CHECK-LABEL: func.func @tril
//       CHECK:   linalg.generic
//       CHECK:     %[[I:.*]] = linalg.index 0
//       CHECK:     %[[J:.*]] = linalg.index 1
//       CHECK:     %[[D:.*]] = arith.subi %[[J]], %[[I]]
//       CHECK:     arith.cmpi sle, %[[D]]
func.func @tril(%x: !tgc.vtensor<[4, 4], f32>) -> !tgc.vtensor<[4, 4], f32> {
  %0 = tgc.tril %x : !tgc.vtensor<[4, 4], f32> -> !tgc.vtensor<[4, 4], f32>
  return %0 : !tgc.vtensor<[4, 4], f32>
}

// -----

// A symbol that no argument dimension binds cannot be computed.
func.func @unbound_symbol(%x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[s0], f32> {
  // expected-error @below {{size symbol s0 is not a dimension of any function argument}}
  // expected-error @below {{failed to legalize operation 'tgc.full'}}
  %0 = tgc.full {size = #tgc.shape<[s0]>, fill_value = 1.0 : f64} : !tgc.vtensor<[s0], f32>
  return %0 : !tgc.vtensor<[s0], f32>
}

// -----

// A transposed operand (linear's t(weight), core IR's permute) is read through the
// product's indexing map (the transpose left behind is dead code for the canonicalizer).
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mm_transposed_weight
//  CHECK-SAME:   (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<32x16xf32>)
//       CHECK:   linalg.matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[X]], %[[W]] : tensor<4x16xf32>, tensor<32x16xf32>)
func.func @mm_transposed_weight(%x: !tgc.vtensor<[4, 16], f32>, %w: !tgc.vtensor<[32, 16], f32>) -> !tgc.vtensor<[4, 32], f32> {
  %t = tgc.permute %w {dims = array<i64: 1, 0>} : !tgc.vtensor<[32, 16], f32> -> !tgc.vtensor<[16, 32], f32>
  %0 = tgc.mm %x, %t : !tgc.vtensor<[4, 16], f32>, !tgc.vtensor<[16, 32], f32> -> !tgc.vtensor<[4, 32], f32>
  return %0 : !tgc.vtensor<[4, 32], f32>
}

// -----

// Saved-tensor hooks left for lowering have no backward to apply to (an inference build):
// the hook op and its templates are dropped.
// CHECK-LABEL: module {
//   CHECK-NOT:   tgc.saved_tensors_hooks
//   CHECK-NOT:   @pack
//       CHECK:   func.func @forward
module {
  tgc.saved_tensors_hooks pack = @pack, unpack = @pack scope 0
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    return %x : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[2], f32>) -> !tgc.vtensor<[2], f32> {
    %e = tgc.exp %x {tgc.saved_hooks_scope = 0 : i64} : !tgc.vtensor<[2], f32> -> !tgc.vtensor<[2], f32>
    return %e : !tgc.vtensor<[2], f32>
  }
}

// -----

// A convolution is im2col (an affine copy into [C*KH*KW, N*OH*OW]) and one GEMM over
// the whole batch with the flattened weight; the product [F, N*OH*OW] is viewed as
// [F, N, OH, OW] and transposed to NCHW.
// CHECK-LABEL: func.func @conv(
//  CHECK-SAME:     %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
//       CHECK:   %[[UNFOLD:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3x8x8xf32>) outs(%{{.*}} : tensor<3x3x3x2x6x6xf32>)
//       CHECK:   %[[COL:.*]] = tensor.collapse_shape %[[UNFOLD]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<3x3x3x2x6x6xf32> into tensor<27x72xf32>
//       CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
//   CHECK-NOT:   linalg.broadcast
//       CHECK:   %[[GEMM:.*]] = linalg.matmul ins(%[[FLAT]], %[[COL]] : tensor<4x27xf32>, tensor<27x72xf32>)
//       CHECK:   %[[VIEW:.*]] = tensor.expand_shape %[[GEMM]] {{\[\[}}0], [1, 2, 3]] output_shape [4, 2, 6, 6] : tensor<4x72xf32> into tensor<4x2x6x6xf32>
//       CHECK:   %[[OUT:.*]] = linalg.transpose ins(%[[VIEW]] : tensor<4x2x6x6xf32>) outs(%{{.*}} : tensor<2x4x6x6xf32>) permutation = [1, 0, 2, 3]
//       CHECK:   return %[[OUT]]
func.func @conv(%x: !tgc.vtensor<[2, 3, 8, 8], f32>, %w: !tgc.vtensor<[4, 3, 3, 3], f32>) -> !tgc.vtensor<[2, 4, 6, 6], f32> {
  %0 = tgc.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[2, 3, 8, 8], f32>, !tgc.vtensor<[4, 3, 3, 3], f32> -> !tgc.vtensor<[2, 4, 6, 6], f32>
  return %0 : !tgc.vtensor<[2, 4, 6, 6], f32>
}

// -----

// When the columns of the whole batch exceed 1 MiB, the batch is split into chunks whose
// columns fit (here 8 of 16 images: 27 x 8*1024 floats): an scf.forall over the chunks
// (they run on the threads) unfolds a chunk of the input and multiplies it into the
// chunk's columns of the product, a slice that is filled, computed and inserted back.
// CHECK-LABEL: func.func @conv_chunked(
//  CHECK-SAME:     %[[X:.*]]: tensor<16x3x34x34xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
//       CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
//       CHECK:   %[[EMPTY:.*]] = tensor.empty() : tensor<4x16384xf32>
//       CHECK:   %[[PRODUCT:.*]] = scf.forall (%[[I:.*]]) in (2) shared_outs(%[[ACC:.*]] = %[[EMPTY]]) -> (tensor<4x16384xf32>) {
//       CHECK:     %[[N:.*]] = affine.apply #{{.*}}(%[[I]])
//       CHECK:     %[[CHUNK:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, 0, 0] [8, 3, 34, 34] [1, 1, 1, 1]
//       CHECK:     %[[UNFOLD:.*]] = linalg.generic {{.*}} ins(%[[CHUNK]] : tensor<8x3x34x34xf32>) outs(%{{.*}} : tensor<3x3x3x8x32x32xf32>)
//       CHECK:     %[[COL:.*]] = tensor.collapse_shape %[[UNFOLD]] {{.*}} into tensor<27x8192xf32>
//       CHECK:     %[[AT:.*]] = affine.apply #{{.*}}(%[[I]])
//       CHECK:     %[[SLICE:.*]] = tensor.extract_slice %[[ACC]][0, %[[AT]]] [4, 8192] [1, 1]
//       CHECK:     %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[SLICE]] : tensor<4x8192xf32>)
//       CHECK:     %[[GEMM:.*]] = linalg.matmul ins(%[[FLAT]], %[[COL]] : tensor<4x27xf32>, tensor<27x8192xf32>) outs(%[[ZERO]] : tensor<4x8192xf32>)
//       CHECK:     scf.forall.in_parallel {
//       CHECK:       tensor.parallel_insert_slice %[[GEMM]] into %[[ACC]][0, %[[AT]]] [4, 8192] [1, 1]
//       CHECK:   %[[VIEW:.*]] = tensor.expand_shape %[[PRODUCT]] {{\[\[}}0], [1, 2, 3]] output_shape [4, 16, 32, 32] : tensor<4x16384xf32> into tensor<4x16x32x32xf32>
//       CHECK:   linalg.transpose ins(%[[VIEW]] : tensor<4x16x32x32xf32>) outs(%{{.*}} : tensor<16x4x32x32xf32>) permutation = [1, 0, 2, 3]
func.func @conv_chunked(%x: !tgc.vtensor<[16, 3, 34, 34], f32>, %w: !tgc.vtensor<[4, 3, 3, 3], f32>) -> !tgc.vtensor<[16, 4, 32, 32], f32> {
  %0 = tgc.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[16, 3, 34, 34], f32>, !tgc.vtensor<[4, 3, 3, 3], f32> -> !tgc.vtensor<[16, 4, 32, 32], f32>
  return %0 : !tgc.vtensor<[16, 4, 32, 32], f32>
}

// -----

// When one image's columns exceed 1 MiB (144 x 64*64 floats here), a chunk is a block of
// an image's output rows: 16 rows of 64 (1024 columns, 576 KiB), 4 blocks per image.
// A block unfolds the input rows it reads ((16 - 1) * stride 2 + 3 = 33, from row 32
// times its block) into the product's consecutive columns of its rows.
// CHECK-DAG: #[[$IMAGE:.*]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-DAG: #[[$ROWBLOCK:.*]] = affine_map<(d0) -> ((d0 mod 4) * 32)>
// CHECK-DAG: #[[$COLUMN:.*]] = affine_map<(d0) -> (d0 * 1024)>
// CHECK-LABEL: func.func @conv_row_chunks(
//  CHECK-SAME:     %[[X:.*]]: tensor<2x16x130x130xf32>, %[[W:.*]]: tensor<8x16x3x3xf32>)
//       CHECK:   scf.forall (%[[I:.*]]) in (8) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<8x8192xf32>) {
//       CHECK:     %[[N:.*]] = affine.apply #[[$IMAGE]](%[[I]])
//       CHECK:     %[[R:.*]] = affine.apply #[[$ROWBLOCK]](%[[I]])
//       CHECK:     %[[CHUNK:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, %[[R]], 0] [1, 16, 33, 130] [1, 1, 1, 1]
//       CHECK:     linalg.generic {{.*}} ins(%[[CHUNK]] : tensor<1x16x33x130xf32>) outs(%{{.*}} : tensor<16x3x3x1x16x64xf32>)
//       CHECK:     %[[AT:.*]] = affine.apply #[[$COLUMN]](%[[I]])
//       CHECK:     linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x144xf32>, tensor<144x1024xf32>) outs(%{{.*}} : tensor<8x1024xf32>)
//       CHECK:       tensor.parallel_insert_slice %{{.*}} into %[[ACC]][0, %[[AT]]] [8, 1024] [1, 1]
func.func @conv_row_chunks(%x: !tgc.vtensor<[2, 16, 130, 130], f32>, %w: !tgc.vtensor<[8, 16, 3, 3], f32>) -> !tgc.vtensor<[2, 8, 64, 64], f32> {
  %0 = tgc.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : !tgc.vtensor<[2, 16, 130, 130], f32>, !tgc.vtensor<[8, 16, 3, 3], f32> -> !tgc.vtensor<[2, 8, 64, 64], f32>
  return %0 : !tgc.vtensor<[2, 8, 64, 64], f32>
}

// -----

// A float sum accumulates in f64 and rounds to the result's dtype once.
// CHECK-LABEL: func.func @sum_f32(
//  CHECK-SAME:     %[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
//       CHECK:   %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<8xf64>)
//       CHECK:   %[[SUM:.*]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[ACC]] : tensor<8xf64>) dimensions = [0]
//       CHECK:       %[[WIDE:.*]] = arith.extf %{{.*}} : f32 to f64
//       CHECK:       arith.addf %[[WIDE]], %{{.*}} : f64
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf64>) outs(%{{.*}} : tensor<8xf32>)
//       CHECK:       arith.truncf %{{.*}} : f64 to f32
//       CHECK:   return %[[R]]
func.func @sum_f32(%x: !tgc.vtensor<[4, 8], f32>) -> !tgc.vtensor<[8], f32> {
  %0 = tgc.sum %x {dim = array<i64: 0>} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[8], f32>
  return %0 : !tgc.vtensor<[8], f32>
}

// -----

// max.dim: one linalg.generic reducing `dim` with two accumulators (value, index); an
// element is taken when greater, or equal at a lower index, or NaN (a NaN beats any
// number; of two NaNs the lower index wins), so the order of the visit does not matter.
// keepdim reshapes both results.
// CHECK-LABEL: func.func @max_dim
//       CHECK:   %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[V0:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
//       CHECK:   %[[IMAX:.*]] = arith.constant 9223372036854775807 : i64
//       CHECK:   %[[I0:.*]] = linalg.fill ins(%[[IMAX]] : i64)
//       CHECK:   %[[R:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[V0]], %[[I0]] : tensor<4xf32>, tensor<4xi64>)
//       CHECK:     ^bb0(%[[IN:.*]]: f32, %[[V:.*]]: f32, %[[I:.*]]: i64):
//       CHECK:     %[[POS:.*]] = arith.index_cast %{{.*}} : index to i64
//       CHECK:     %[[EARLIER:.*]] = arith.cmpi slt, %[[POS]], %[[I]] : i64
//       CHECK:     %[[GT:.*]] = arith.cmpf ogt, %[[IN]], %[[V]] : f32
//       CHECK:     arith.cmpf oeq, %[[IN]], %[[V]] : f32
//       CHECK:     arith.cmpf uno, %[[IN]], %[[IN]] : f32
//       CHECK:     %[[NV:.*]] = arith.select %[[TAKE:[^,]*]], %[[IN]], %[[V]] : f32
//  CHECK-NEXT:     %[[NI:.*]] = arith.select %[[TAKE]], %[[POS]], %[[I]] : i64
//       CHECK:     linalg.yield %[[NV]], %[[NI]] : f32, i64
//       CHECK:   tensor.expand_shape %[[R]]#0
//       CHECK:   tensor.expand_shape %[[R]]#1
func.func @max_dim(%x: !tgc.vtensor<[4, 6], f32>) -> (!tgc.vtensor<[4, 1], f32>, !tgc.vtensor<[4, 1], i64>) {
  %v, %i = tgc.max_dim %x {dim = 1 : i64, keepdim = true} : !tgc.vtensor<[4, 6], f32> -> !tgc.vtensor<[4, 1], f32>, !tgc.vtensor<[4, 1], i64>
  return %v, %i : !tgc.vtensor<[4, 1], f32>, !tgc.vtensor<[4, 1], i64>
}

// -----

// argmin without a dim: the linear index over every dimension (row-major strides of
// the input's sizes); integers compare signed, with no NaN case.
// CHECK-LABEL: func.func @argmin
//       CHECK:   %[[S1:.*]] = arith.muli %{{.*}}, %{{.*}} : index
//       CHECK:   linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
//       CHECK:     %[[J:.*]] = linalg.index 1 : index
//       CHECK:     %[[I:.*]] = linalg.index 0 : index
//       CHECK:     arith.muli %[[I]], %[[S1]] : index
//       CHECK:     arith.cmpi slt, %{{.*}}, %{{.*}} : i32
//   CHECK-NOT:     arith.cmpf
//       CHECK:     linalg.yield
func.func @argmin(%x: !tgc.vtensor<[3, 5], i32>) -> !tgc.vtensor<[], i64> {
  %i = tgc.argmin %x : !tgc.vtensor<[3, 5], i32> -> !tgc.vtensor<[], i64>
  return %i : !tgc.vtensor<[], i64>
}

// -----

// A side-effect-free op whose result has no elements computes nothing: tensor.empty
// (a slice at offset 0 of a size-0 dimension is not even valid tensor.extract_slice).
// CHECK-LABEL: func.func @empty_result
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<0x3x6xf32>
//  CHECK-NEXT:   return %[[E]]
func.func @empty_result(%x: !tgc.vtensor<[0, 3, 3], f32>) -> !tgc.vtensor<[0, 3, 6], f32> {
  %0 = tgc.pad %x {pad = array<i64: 1, 2>, mode = "reflect"} : !tgc.vtensor<[0, 3, 3], f32> -> !tgc.vtensor<[0, 3, 6], f32>
  return %0 : !tgc.vtensor<[0, 3, 6], f32>
}

// -----

// item (_local_scalar_dense): the one element, as a Python float (f64), used as the
// scalar operand of an add.
// CHECK-LABEL: func.func @item
//  CHECK-SAME:   (%[[S:.*]]: tensor<1x1xf32>, %[[X:.*]]: tensor<4xf32>)
//       CHECK:   %[[E:.*]] = tensor.extract %[[S]][%c0, %c0] : tensor<1x1xf32>
//       CHECK:   %[[F:.*]] = arith.extf %[[E]] : f32 to f64
//       CHECK:   linalg.generic
//       CHECK:     arith.truncf %[[F]] : f64 to f32
func.func @item(%s: !tgc.vtensor<[1, 1], f32>, %x: !tgc.vtensor<[4], f32>) -> !tgc.vtensor<[4], f32> {
  %0 = tgc.item %s : !tgc.vtensor<[1, 1], f32> -> f64
  %1 = tgc.add %x, %0 : !tgc.vtensor<[4], f32>, f64 -> !tgc.vtensor<[4], f32>
  return %1 : !tgc.vtensor<[4], f32>
}

// -----

// cat with an empty piece (a rotary half of size 0): it inserts nothing, so no
// insert_slice at the result's end offset (which the verifier rejects).
// CHECK-LABEL: func.func @cat_empty_piece
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<2x16xf32>
//       CHECK:   %[[R:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [2, 16] [1, 1]
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R]]
func.func @cat_empty_piece(%a: !tgc.vtensor<[2, 16], f32>, %b: !tgc.vtensor<[2, 0], f32>) -> !tgc.vtensor<[2, 16], f32> {
  %c = tgc.cat %a, %b {dim = 1 : i64} : !tgc.vtensor<[2, 16], f32>, !tgc.vtensor<[2, 0], f32> -> !tgc.vtensor<[2, 16], f32>
  return %c : !tgc.vtensor<[2, 16], f32>
}

// -----

// slice_scatter of an empty source (the gradient of a cat's empty piece): self.
// CHECK-LABEL: func.func @slice_scatter_empty
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %arg0
func.func @slice_scatter_empty(%a: !tgc.vtensor<[2, 16], f32>, %b: !tgc.vtensor<[2, 0], f32>) -> !tgc.vtensor<[2, 16], f32> {
  %c = tgc.slice_scatter %a, %b {dim = 1 : i64, start = #tgc.shape<[16]>, end = #tgc.shape<[9223372036854775807]>} : !tgc.vtensor<[2, 16], f32>, !tgc.vtensor<[2, 0], f32> -> !tgc.vtensor<[2, 16], f32>
  return %c : !tgc.vtensor<[2, 16], f32>
}

// -----

// A depthwise convolution (one channel per group) is the sum of its taps: the input is
// padded (the right padding rounded up to a multiple of the column stride, 15 -> 16) and
// split into its 2 column phases, [N, C, H, 2, W/2]; tap (kh, kw) reads phase kw % 2
// from column kw / 2 with unit stride, every second row, as an [N, C, OH, OW] tensor, and
// weight[:, 0, kh, kw] per channel. One elementwise generic sums the products in tap
// order.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @depthwise_convolution
//  CHECK-SAME:   %[[X:.*]]: tensor<?x6x11x13xf32>, %[[W:.*]]: tensor<6x1x2x2xf32>
//       CHECK:   %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 2]
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2], [3, 4]] {{.*}} into tensor<?x6x13x8x2xf32>
//       CHECK:   %[[PH:.*]] = linalg.transpose ins(%[[E]] : tensor<?x6x13x8x2xf32>) outs(%{{.*}} : tensor<?x6x13x2x8xf32>) permutation = [0, 1, 2, 4, 3]
//       CHECK:   %[[T0:.*]] = tensor.extract_slice %[[PH]][0, 0, 0, 0, 0] [%{{.*}}, 6, 6, 1, 7] [1, 1, 2, 1, 1] : tensor<?x6x13x2x8xf32> to tensor<?x6x6x7xf32>
//       CHECK:   %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [6, 1, 1, 1] [1, 1, 1, 1] : tensor<6x1x2x2xf32> to tensor<6xf32>
//       CHECK:   %[[T1:.*]] = tensor.extract_slice %[[PH]][0, 0, 0, 1, 0] [%{{.*}}, 6, 6, 1, 7] [1, 1, 2, 1, 1]
//       CHECK:   %[[W1:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 1] [6, 1, 1, 1]
//       CHECK:   %[[T2:.*]] = tensor.extract_slice %[[PH]][0, 0, 1, 0, 0] [%{{.*}}, 6, 6, 1, 7] [1, 1, 2, 1, 1]
//       CHECK:   %[[W2:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 0] [6, 1, 1, 1]
//       CHECK:   %[[T3:.*]] = tensor.extract_slice %[[PH]][0, 0, 1, 1, 0] [%{{.*}}, 6, 6, 1, 7] [1, 1, 2, 1, 1]
//       CHECK:   %[[W3:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 1] [6, 1, 1, 1]
//       CHECK:   %[[S:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[T0]], %[[T1]], %[[T2]], %[[T3]], %[[W0]], %[[W1]], %[[W2]], %[[W3]] :
//       CHECK:     ^bb0(%[[A0:[a-z0-9_]+]]: f32, %[[A1:[a-z0-9_]+]]: f32, %[[A2:[a-z0-9_]+]]: f32, %[[A3:[a-z0-9_]+]]: f32, %[[B0:[a-z0-9_]+]]: f32, %[[B1:[a-z0-9_]+]]: f32, %[[B2:[a-z0-9_]+]]: f32, %[[B3:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
//       CHECK:       %[[M0:.*]] = arith.mulf %[[A0]], %[[B0]]
//       CHECK:       %[[M1:.*]] = arith.mulf %[[A1]], %[[B1]]
//       CHECK:       %[[S1:.*]] = arith.addf %[[M0]], %[[M1]]
//       CHECK:       %[[M2:.*]] = arith.mulf %[[A2]], %[[B2]]
//       CHECK:       %[[S2:.*]] = arith.addf %[[S1]], %[[M2]]
//       CHECK:       %[[M3:.*]] = arith.mulf %[[A3]], %[[B3]]
//       CHECK:       %[[S3:.*]] = arith.addf %[[S2]], %[[M3]]
//       CHECK:       linalg.yield %[[S3]]
//   CHECK-NOT:   linalg.conv_2d_ngchw_gfchw
//       CHECK:   return %[[S]]
func.func @depthwise_convolution(%x: !tgc.vtensor<[s0, 6, 11, 13], f32>, %w: !tgc.vtensor<[6, 1, 2, 2], f32>) -> !tgc.vtensor<[s0, 6, 6, 7], f32> {
  %0 = tgc.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 6 : i64} : !tgc.vtensor<[s0, 6, 11, 13], f32>, !tgc.vtensor<[6, 1, 2, 2], f32> -> !tgc.vtensor<[s0, 6, 6, 7], f32>
  return %0 : !tgc.vtensor<[s0, 6, 6, 7], f32>
}

// -----

// Stride 1: one column phase, a view of the padded input (no transpose). Two filters per
// channel are not depthwise: the grouped convolution.
// CHECK-LABEL: func.func @depthwise_stride_one
//       CHECK:   %[[P:.*]] = tensor.pad
//       CHECK:   tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 3, 8, 1, 8] : tensor<2x3x8x8xf32> into tensor<2x3x8x1x8xf32>
//   CHECK-NOT:   linalg.transpose
//       CHECK:   linalg.generic
//       CHECK:   linalg.conv_2d_ngchw_gfchw
func.func @depthwise_stride_one(%x: !tgc.vtensor<[2, 3, 6, 6], f32>, %w: !tgc.vtensor<[3, 1, 3, 3], f32>, %w2: !tgc.vtensor<[6, 1, 3, 3], f32>) -> (!tgc.vtensor<[2, 3, 6, 6], f32>, !tgc.vtensor<[2, 6, 4, 4], f32>) {
  %0 = tgc.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 6, 6], f32>, !tgc.vtensor<[3, 1, 3, 3], f32> -> !tgc.vtensor<[2, 3, 6, 6], f32>
  %1 = tgc.convolution %x, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64} : !tgc.vtensor<[2, 3, 6, 6], f32>, !tgc.vtensor<[6, 1, 3, 3], f32> -> !tgc.vtensor<[2, 6, 4, 4], f32>
  return %0, %1 : !tgc.vtensor<[2, 3, 6, 6], f32>, !tgc.vtensor<[2, 6, 4, 4], f32>
}
