// RUN: tgc-opt %s --tgc-decompose --split-input-file | FileCheck %s

// sort (descending) along dimension 1: the element at i (dimension 2 of the pair
// tensor) is ranked by the count of elements j (dimension 1) that go before it: larger,
// NaN where it is not, or equal (or both NaN) at a lower position. The index of rank k
// sums the positions whose rank is k; the values are gathered there.
// CHECK-LABEL: func.func @sort
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[2, 5], f32>)
//       CHECK:   %[[XI:.*]] = tgc.unsqueeze %[[X]] {dim = 1 : i64} : {{.*}} -> !tgc.vtensor<[2, 1, 5], f32>
//       CHECK:   %[[XJ:.*]] = tgc.unsqueeze %[[X]] {dim = 2 : i64} : {{.*}} -> !tgc.vtensor<[2, 5, 1], f32>
//       CHECK:   tgc.isnan %[[XI]]
//       CHECK:   tgc.isnan %[[XJ]]
//       CHECK:   tgc.gt %[[XJ]], %[[XI]]
//       CHECK:   tgc.eq %[[XJ]], %[[XI]]
//       CHECK:   %[[BEFORE:.*]] = tgc.logical_or {{.*}} -> !tgc.vtensor<[2, 5, 5], i1>
//       CHECK:   %[[RANK:.*]] = tgc.sum %{{.*}} {dim = array<i64: 1>, dtype = i64} : {{.*}} -> !tgc.vtensor<[2, 5], i64>
//       CHECK:   %[[HIT:.*]] = tgc.eq {{.*}} -> !tgc.vtensor<[2, 5, 5], i1>
//       CHECK:   %[[PICK:.*]] = tgc.where %[[HIT]]
//  CHECK-NEXT:   %[[IDX:.*]] = tgc.sum %[[PICK]] {dim = array<i64: 2>, dtype = i64}
//  CHECK-NEXT:   %[[VAL:.*]] = tgc.gather %[[X]], %[[IDX]] {dim = 1 : i64}
//  CHECK-NEXT:   return %[[VAL]], %[[IDX]]
func.func @sort(%x: !tgc.vtensor<[2, 5], f32>) -> (!tgc.vtensor<[2, 5], f32>, !tgc.vtensor<[2, 5], i64>) {
  %v, %i = tgc.sort %x {dim = 1 : i64, descending = true} : !tgc.vtensor<[2, 5], f32> -> !tgc.vtensor<[2, 5], f32>, !tgc.vtensor<[2, 5], i64>
  return %v, %i : !tgc.vtensor<[2, 5], f32>, !tgc.vtensor<[2, 5], i64>
}

// -----

// topk: the first k of a descending sort.
// CHECK-LABEL: func.func @topk
//       CHECK:   tgc.gt
//       CHECK:   %[[V:.*]] = tgc.gather
//       CHECK:   %[[TV:.*]] = tgc.slice %[[V]] {end = #tgc.shape<[2]>, start = #tgc.shape<[0]>}
//       CHECK:   %[[TI:.*]] = tgc.slice %{{.*}} {end = #tgc.shape<[2]>, start = #tgc.shape<[0]>}
//       CHECK:   return %[[TV]], %[[TI]]
func.func @topk(%x: !tgc.vtensor<[6, 3], f32>) -> (!tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[2, 3], i64>) {
  %v, %i = tgc.topk %x {k = 2 : i64, dim = 0 : i64} : !tgc.vtensor<[6, 3], f32> -> !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[2, 3], i64>
  return %v, %i : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[2, 3], i64>
}

// -----

// flip: the reversed positions (arange from size - 1 down), an index selection.
// CHECK-LABEL: func.func @flip
//       CHECK:   %[[REV:.*]] = tgc.arange {dtype = i64, end = -1 : i64, start = 3 : i64, step = -1 : i64} : !tgc.vtensor<[4], i64>
//       CHECK:   tgc.index %{{.*}}[%[[REV]]]
func.func @flip(%x: !tgc.vtensor<[3, 4], f32>) -> !tgc.vtensor<[3, 4], f32> {
  %0 = tgc.flip %x {dims = array<i64: 1>} : !tgc.vtensor<[3, 4], f32> -> !tgc.vtensor<[3, 4], f32>
  return %0 : !tgc.vtensor<[3, 4], f32>
}

// -----

// diagonal with offset 1: dims 0 and 1 indexed by (i, i + 1), the diagonal moved last.
// CHECK-LABEL: func.func @diagonal
//       CHECK:   %[[R:.*]] = tgc.arange {dtype = i64, end = 3 : i64, start = 0 : i64, step = 1 : i64}
//       CHECK:   %[[C:.*]] = tgc.arange {dtype = i64, end = 4 : i64, start = 1 : i64, step = 1 : i64}
//       CHECK:   %[[D:.*]] = tgc.index %{{.*}}[%[[R]], %[[C]]] : {{.*}} -> !tgc.vtensor<[3, 2], f32>
//       CHECK:   tgc.permute %[[D]] {dims = array<i64: 1, 0>} : {{.*}} -> !tgc.vtensor<[2, 3], f32>
func.func @diagonal(%x: !tgc.vtensor<[3, 4, 2], f32>) -> !tgc.vtensor<[2, 3], f32> {
  %0 = tgc.diagonal %x {offset = 1 : i64} : !tgc.vtensor<[3, 4, 2], f32> -> !tgc.vtensor<[2, 3], f32>
  return %0 : !tgc.vtensor<[2, 3], f32>
}

// -----

// einsum with a subscript repeated within an operand: the operand's diagonal of the two
// dimensions (tgc.diagonal, itself an index by two aranges), then the contraction; `ii`
// (implicit output: nothing) sums it, the trace.
// CHECK-LABEL: func.func @einsum_trace
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[4, 4], f32>)
//   CHECK-NOT:   tgc.einsum
//       CHECK:   %[[I:.*]] = tgc.arange {{.*}}end = 4
//       CHECK:   %[[J:.*]] = tgc.arange {{.*}}end = 4
//       CHECK:   %[[D:.*]] = tgc.index %{{.*}}[%[[I]], %[[J]]] : {{.*}} -> !tgc.vtensor<[4], f32>
//       CHECK:   %[[S:.*]] = tgc.sum %{{.*}} {dim = array<i64: 0>} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[], f32>
//       CHECK:   return %[[S]]
func.func @einsum_trace(%x: !tgc.vtensor<[4, 4], f32>) -> !tgc.vtensor<[], f32> {
  %0 = tgc.einsum %x {equation = "ii"} : !tgc.vtensor<[4, 4], f32> -> !tgc.vtensor<[], f32>
  return %0 : !tgc.vtensor<[], f32>
}
