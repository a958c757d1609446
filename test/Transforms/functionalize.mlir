// RUN: tgc-opt %s --tgc-functionalize --split-input-file --verify-diagnostics | FileCheck %s

// A user input mutated through a view and a buffer mutated directly: each gets one
// write-back result, and later reads see the new values.
// CHECK-LABEL: func.func @mutate_through_view
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[s0, 6], f32> {{.*}}, %[[B:.*]]: !tgc.vtensor<[6], f32>
//  CHECK-SAME:   {tgc.kind = "user_input_mutation", tgc.target = "x"}
//  CHECK-SAME:   {tgc.kind = "buffer_mutation", tgc.target = "running"}
//       CHECK:   %[[COL:.*]] = tgc.select %[[X]]
//       CHECK:   %[[MUL:.*]] = tgc.mul %[[COL]]
//       CHECK:   %[[NEWX:.*]] = tgc.select_scatter %[[X]], %[[MUL]] {dim = 1 : i64, index = 0 : i64}
//       CHECK:   %[[NEWB:.*]] = tgc.add %[[B]]
//       CHECK:   %[[R:.*]] = tgc.relu %[[NEWX]]
//       CHECK:   return %[[R]], %[[NEWX]], %[[NEWB]]
func.func @mutate_through_view(
    %x: !tgc.tensor<[s0, 6], f32> {tgc.kind = "user_input", tgc.name = "x"},
    %b: !tgc.tensor<[6], f32> {tgc.kind = "buffer", tgc.name = "running"})
    -> !tgc.tensor<[s0, 6], f32> {
  %s = tgc.select %x {dim = 1 : i64, index = 0 : i64} : !tgc.tensor<[s0, 6], f32> -> !tgc.tensor<[s0], f32, strides = [6]>
  %c = arith.constant 2.0 : f64
  %m = tgc.mul_ %s, %c : !tgc.tensor<[s0], f32, strides = [6]>, f64 -> !tgc.tensor<[s0], f32, strides = [6]>
  %one = arith.constant 1 : i64
  %b2 = tgc.add_ %b, %one : !tgc.tensor<[6], f32>, i64 -> !tgc.tensor<[6], f32>
  %r = tgc.relu %x : !tgc.tensor<[s0, 6], f32> -> !tgc.tensor<[s0, 6], f32>
  return %r : !tgc.tensor<[s0, 6], f32>
}

// -----

// A write through a view of a view scatters back through both, and an alias created
// before the write sees the new value.
// CHECK-LABEL: func.func @view_of_view
//       CHECK:   %[[V:.*]] = tgc.view %[[X:.*]] {size = #tgc.shape<[12]>}
//       CHECK:   %[[S:.*]] = tgc.slice %[[V]]
//       CHECK:   %[[ADD:.*]] = tgc.add %[[S]]
//       CHECK:   %[[SC:.*]] = tgc.slice_scatter %[[V]], %[[ADD]]
//       CHECK:   %[[NEWX:.*]] = tgc.view %[[SC]] {size = #tgc.shape<[3, 4]>}
//       CHECK:   %[[T:.*]] = tgc.transpose %[[NEWX]]
//       CHECK:   return %[[T]], %[[NEWX]]
func.func @view_of_view(%x: !tgc.tensor<[3, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> !tgc.tensor<[4, 3], f32, strides = [1, 4]> {
  %t = tgc.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  %v = tgc.view %x {size = #tgc.shape<[12]>} : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[12], f32>
  %s = tgc.slice %v {dim = 0 : i64, start = #tgc.shape<[0]>, end = #tgc.shape<[3]>} : !tgc.tensor<[12], f32> -> !tgc.tensor<[3], f32, strides = [1]>
  %one = arith.constant 1.0 : f64
  %a = tgc.add_ %s, %one : !tgc.tensor<[3], f32, strides = [1]>, f64 -> !tgc.tensor<[3], f32, strides = [1]>
  return %t : !tgc.tensor<[4, 3], f32, strides = [1, 4]>
}

// -----

// Batch norm in training mode writes its running statistics.
// CHECK-LABEL: func.func @batch_norm_training
//       CHECK:   %[[BN:.*]]:5 = tgc.batch_norm {{.*}}functional
//       CHECK:   return %[[BN]]#0, %[[BN]]#3, %[[BN]]#4
func.func @batch_norm_training(
    %x: !tgc.tensor<[2, 3, 4, 4], f32> {tgc.kind = "user_input", tgc.name = "x"},
    %rm: !tgc.tensor<[3], f32> {tgc.kind = "buffer", tgc.name = "bn.running_mean"},
    %rv: !tgc.tensor<[3], f32> {tgc.kind = "buffer", tgc.name = "bn.running_var"})
    -> !tgc.tensor<[2, 3, 4, 4], f32> {
  %y:3 = tgc.batch_norm %x running %rm, %rv {training = true, momentum = 0.1 : f64, eps = 1.0e-5 : f64} : !tgc.tensor<[2, 3, 4, 4], f32>, !tgc.tensor<[3], f32>, !tgc.tensor<[3], f32> -> !tgc.tensor<[2, 3, 4, 4], f32>, !tgc.tensor<[3], f32>, !tgc.tensor<[3], f32>
  return %y#0 : !tgc.tensor<[2, 3, 4, 4], f32>
}

// -----

// expected-error @+1 {{functionalize: the program writes into parameter 'w'}}
func.func @write_parameter(%w: !tgc.tensor<[3], f32> {tgc.kind = "parameter", tgc.name = "w"}) {
  %one = arith.constant 1.0 : f64
  %a = tgc.add_ %w, %one : !tgc.tensor<[3], f32>, f64 -> !tgc.tensor<[3], f32>
  return
}

// -----

func.func @write_expanded(%x: !tgc.tensor<[3], f32> {tgc.kind = "user_input", tgc.name = "x"}) {
  // expected-error @below {{cannot write through an expanded view}}
  %e = tgc.expand %x {size = #tgc.shape<[2, 3]>} : !tgc.tensor<[3], f32> -> !tgc.tensor<[2, 3], f32, strides = [0, 1]>
  %one = arith.constant 1.0 : f64
  %a = tgc.add_ %e, %one : !tgc.tensor<[2, 3], f32, strides = [0, 1]>, f64 -> !tgc.tensor<[2, 3], f32, strides = [0, 1]>
  return
}

// -----

// In-place unary ops and masked_fill_ become their functional forms on the current
// value, and the input is written back once.
// CHECK-LABEL: func.func @inplace_activation
//  CHECK-SAME:   (%[[X:[^:]*]]: !tgc.vtensor<[4], f32> {{.*}}, %[[M:[^:]*]]: !tgc.vtensor<[4], i1>
//       CHECK:   %[[R:.*]] = tgc.relu %[[X]]
//       CHECK:   %[[F:.*]] = tgc.masked_fill %[[R]], %[[M]]
//       CHECK:   %[[C:.*]] = tgc.clamp %[[F]] {max = 2.000000e+00 : f64}
//       CHECK:   %[[D:.*]] = tgc.dropout %[[C]] {p = 5.000000e-01 : f64, train = false}
//       CHECK:   return %[[D]]
func.func @inplace_activation(%x: !tgc.tensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"},
                              %m: !tgc.tensor<[4], i1> {tgc.kind = "user_input", tgc.name = "m"}) {
  %0 = tgc.relu_ %x : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
  %v = arith.constant 0.5 : f64
  %1 = tgc.masked_fill_ %0, %m, %v : !tgc.tensor<[4], f32>, !tgc.tensor<[4], i1>, f64 -> !tgc.tensor<[4], f32>
  %2 = tgc.clamp_ %x {max = 2.0 : f64} : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
  %3 = tgc.dropout_ %x {p = 0.5 : f64, train = false} : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
  return
}

// -----

// Reshape of a transposed matrix is a view where the storage allows one (splitting a
// dimension: the write reaches x) and a copy where it does not (flattening: the write
// reaches only the copy, and y is not written back).
// CHECK-LABEL: func.func @reshape_view_or_copy
//  CHECK-SAME:   (%[[X:[^:]*]]: {{.*}}, %[[Y:[^:]*]]: {{.*}}tgc.name = "y"})
//  CHECK-SAME:   -> (!tgc.vtensor<[20], f32>, !tgc.vtensor<[4, 5], f32> {tgc.kind = "user_input_mutation", tgc.target = "x"}) {
//       CHECK:   %[[YT:.*]] = tgc.transpose %[[Y]]
//       CHECK:   %[[YF:.*]] = tgc.view %[[YT]] {size = #tgc.shape<[20]>}
//       CHECK:   %[[YA:.*]] = tgc.add %[[YF]]
//       CHECK:   return %[[YA]], %{{.*}} :
func.func @reshape_view_or_copy(%x: !tgc.tensor<[4, 5], f32> {tgc.kind = "user_input", tgc.name = "x"},
                                %y: !tgc.tensor<[4, 5], f32> {tgc.kind = "user_input", tgc.name = "y"})
    -> !tgc.tensor<[20], f32> {
  %one = arith.constant 1.0 : f64
  %xt = tgc.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[5, 4], f32, strides = [1, 5]>
  %xv = tgc.view %xt {size = #tgc.shape<[5, 2, 2]>} : !tgc.tensor<[5, 4], f32, strides = [1, 5]> -> !tgc.tensor<[5, 2, 2], f32, strides = [1, 10, 5]>
  %a = tgc.add_ %xv, %one : !tgc.tensor<[5, 2, 2], f32, strides = [1, 10, 5]>, f64 -> !tgc.tensor<[5, 2, 2], f32, strides = [1, 10, 5]>
  %yt = tgc.transpose %y {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[5, 4], f32, strides = [1, 5]>
  %yf = tgc.view %yt {size = #tgc.shape<[20]>} : !tgc.tensor<[5, 4], f32, strides = [1, 5]> -> !tgc.tensor<[20], f32>
  %b = tgc.add_ %yf, %one : !tgc.tensor<[20], f32>, f64 -> !tgc.tensor<[20], f32>
  return %yf : !tgc.tensor<[20], f32>
}

// -----

// diagonal() is a view in eager and a copy in tgc: a write through it is refused.
func.func @write_through_diagonal(%x: !tgc.tensor<[4, 5], f32> {tgc.kind = "user_input", tgc.name = "x"}) {
  %one = arith.constant 1.0 : f64
  // expected-error @below {{writing through the result of diagonal() is not supported}}
  %d = tgc.diagonal %x : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[4], f32, strides = [6]>
  %a = tgc.add_ %d, %one : !tgc.tensor<[4], f32, strides = [6]>, f64 -> !tgc.tensor<[4], f32, strides = [6]>
  return
}
