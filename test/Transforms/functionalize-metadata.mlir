// RUN: tgc-opt %s --tgc-functionalize --split-input-file --verify-diagnostics | FileCheck %s

// t_ then a read: the result is the pure transpose of the input; the input is not
// written back (its values did not change).
// CHECK-LABEL: func.func @t_read
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[3, 4], f32> {{.*}}) -> !tgc.vtensor<[4, 3], f32> {
//       CHECK:   %[[T:.*]] = tgc.t %[[X]]
//       CHECK:   %[[R:.*]] = tgc.relu %[[T]]
//       CHECK:   return %[[R]] :
func.func @t_read(%x: !tgc.tensor<[3, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> !tgc.tensor<[4, 3], f32> {
  %y = tgc.t_ %x : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  %r = tgc.relu %y : !tgc.tensor<[4, 3], f32, strides = [1, 4]> -> !tgc.tensor<[4, 3], f32>
  return %r : !tgc.tensor<[4, 3], f32>
}

// -----

// `y = x.t_(); y.add_(1)`: the write goes back to x in x's original layout (the
// transpose of the new value), and the write-back result keeps x's sizes.
// CHECK-LABEL: func.func @t_then_write
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[3, 4], f32> {{.*}}) -> (!tgc.vtensor<[3, 4], f32>
//  CHECK-SAME:   {tgc.kind = "user_input_mutation", tgc.target = "x"})
//       CHECK:   %[[T:.*]] = tgc.t %[[X]]
//       CHECK:   %[[A:.*]] = tgc.add %[[T]]
//       CHECK:   %[[NEWX:.*]] = tgc.t %[[A]] : !tgc.vtensor<[4, 3], f32> -> !tgc.vtensor<[3, 4], f32>
//       CHECK:   return %[[NEWX]]
func.func @t_then_write(%x: !tgc.tensor<[3, 4], f32> {tgc.kind = "user_input", tgc.name = "x"}) {
  %y = tgc.t_ %x : !tgc.tensor<[3, 4], f32> -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  %one = arith.constant 1.0 : f64
  %a = tgc.add_ %y, %one : !tgc.tensor<[4, 3], f32, strides = [1, 4]>, f64 -> !tgc.tensor<[4, 3], f32, strides = [1, 4]>
  return
}

// -----

// transpose_ on a fresh tensor, written through, then read through the result.
// CHECK-LABEL: func.func @transpose_fresh
//       CHECK:   %[[Z:.*]] = tgc.relu %{{.*}} : !tgc.vtensor<[2, 3], f32>
//       CHECK:   %[[T:.*]] = tgc.transpose %[[Z]] {dim0 = 0 : i64, dim1 = 1 : i64}
//       CHECK:   %[[M:.*]] = tgc.mul %[[T]]
//       CHECK:   %[[NEWZ:.*]] = tgc.transpose %[[M]] {dim0 = 0 : i64, dim1 = 1 : i64}
//       CHECK:   %[[T2:.*]] = tgc.transpose %[[NEWZ]] {dim0 = 0 : i64, dim1 = 1 : i64}
//       CHECK:   return %[[T2]] :
func.func @transpose_fresh(%x: !tgc.tensor<[2, 3], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> !tgc.tensor<[3, 2], f32, strides = [1, 3]> {
  %z = tgc.relu %x : !tgc.tensor<[2, 3], f32> -> !tgc.tensor<[2, 3], f32>
  %y = tgc.transpose_ %z {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.tensor<[2, 3], f32> -> !tgc.tensor<[3, 2], f32, strides = [1, 3]>
  %two = arith.constant 2.0 : f64
  %m = tgc.mul_ %y, %two : !tgc.tensor<[3, 2], f32, strides = [1, 3]>, f64 -> !tgc.tensor<[3, 2], f32, strides = [1, 3]>
  return %y : !tgc.tensor<[3, 2], f32, strides = [1, 3]>
}

// -----

// squeeze_ / unsqueeze_ chains on an input, written through: the new value is viewed
// back to the input's original sizes.
// CHECK-LABEL: func.func @squeeze_chain
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[1, 4, 1], f32> {{.*}}) -> (!tgc.vtensor<[4], f32>, !tgc.vtensor<[1, 4, 1], f32>
//       CHECK:   %[[S:.*]] = tgc.squeeze %[[X]] {dim = array<i64: 0>}
//       CHECK:   %[[U:.*]] = tgc.unsqueeze %[[S]] {dim = 0 : i64}
//       CHECK:   %[[S2:.*]] = tgc.squeeze %[[U]] :
//       CHECK:   %[[R:.*]] = tgc.sigmoid %[[S2]]
//       CHECK:   %[[V1:.*]] = tgc.view %[[R]] {size = #tgc.shape<[1, 4, 1]>}
//       CHECK:   %[[V2:.*]] = tgc.view %[[V1]] {size = #tgc.shape<[4, 1]>}
//       CHECK:   %[[NEWX:.*]] = tgc.view %[[V2]] {size = #tgc.shape<[1, 4, 1]>}
//       CHECK:   %[[S3:.*]] = tgc.squeeze %[[NEWX]] {dim = array<i64: 0>}
//       CHECK:   %[[U3:.*]] = tgc.unsqueeze %[[S3]] {dim = 0 : i64}
//       CHECK:   %[[OUT:.*]] = tgc.squeeze %[[U3]] :
//       CHECK:   return %[[OUT]], %[[NEWX]]
func.func @squeeze_chain(%x: !tgc.tensor<[1, 4, 1], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> !tgc.tensor<[4], f32> {
  %a = tgc.squeeze_ %x {dim = array<i64: 0>} : !tgc.tensor<[1, 4, 1], f32> -> !tgc.tensor<[4, 1], f32>
  %b = tgc.unsqueeze_ %a {dim = 0 : i64} : !tgc.tensor<[4, 1], f32> -> !tgc.tensor<[1, 4, 1], f32>
  %c = tgc.squeeze_ %b : !tgc.tensor<[1, 4, 1], f32> -> !tgc.tensor<[4], f32>
  %d = tgc.sigmoid_ %c : !tgc.tensor<[4], f32> -> !tgc.tensor<[4], f32>
  return %c : !tgc.tensor<[4], f32>
}

// -----

// out= into a graph input: the functional result is written back to the input.
// CHECK-LABEL: func.func @out_into_input
//  CHECK-SAME:   (%[[A:[^:]*]]: !tgc.vtensor<[4], f32> {{.*}}, %[[B:[^:]*]]: !tgc.vtensor<[4], f32> {{.*}}, %[[O:[^:]*]]: !tgc.vtensor<[4], f64>
//  CHECK-SAME:   {tgc.kind = "user_input_mutation", tgc.target = "o"}
//       CHECK:   %[[ADD:.*]] = tgc.add %[[A]], %[[B]] {alpha = 2 : i64}
//       CHECK:   %[[NEWO:.*]] = tgc.to_dtype %[[ADD]] {dtype = f64}
//       CHECK:   %[[E:.*]] = tgc.exp %[[NEWO]]
//       CHECK:   %[[R:.*]] = tgc.relu %[[E]]
//       CHECK:   return %[[R]], %[[E]]
func.func @out_into_input(%a: !tgc.tensor<[4], f32> {tgc.kind = "user_input", tgc.name = "a"},
                          %b: !tgc.tensor<[4], f32> {tgc.kind = "user_input", tgc.name = "b"},
                          %o: !tgc.tensor<[4], f64> {tgc.kind = "user_input", tgc.name = "o"})
    -> !tgc.tensor<[4], f64> {
  %r = tgc.add_out %a, %b out %o {alpha = 2 : i64} : !tgc.tensor<[4], f32>, !tgc.tensor<[4], f32>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %e = tgc.exp_out %r out %o : !tgc.tensor<[4], f64>, !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  %y = tgc.relu %o : !tgc.tensor<[4], f64> -> !tgc.tensor<[4], f64>
  return %y : !tgc.tensor<[4], f64>
}

// -----

// out= into a fresh tensor (and into a view of one): no write-back result.
// CHECK-LABEL: func.func @out_into_fresh
//  CHECK-SAME:   -> !tgc.vtensor<[2, 3], f32>
//       CHECK:   %[[E:.*]] = tgc.full
//       CHECK:   %[[M:.*]] = tgc.mul %{{.*}}, %{{.*}} :
//       CHECK:   %[[S:.*]] = tgc.select %[[M]]
//       CHECK:   %[[T:.*]] = tgc.tanh %[[S]]
//       CHECK:   %[[SC:.*]] = tgc.select_scatter %[[M]], %[[T]]
//       CHECK:   return %[[SC]] :
func.func @out_into_fresh(%a: !tgc.tensor<[2, 3], f32> {tgc.kind = "user_input", tgc.name = "a"})
    -> !tgc.tensor<[2, 3], f32> {
  %e = tgc.full {size = #tgc.shape<[2, 3]>, dtype = f32, fill_value = 0.0 : f64} : !tgc.tensor<[2, 3], f32>
  %m = tgc.mul_out %a, %a out %e : !tgc.tensor<[2, 3], f32>, !tgc.tensor<[2, 3], f32>, !tgc.tensor<[2, 3], f32> -> !tgc.tensor<[2, 3], f32>
  %row = tgc.select %e {dim = 0 : i64, index = 1 : i64} : !tgc.tensor<[2, 3], f32> -> !tgc.tensor<[3], f32>
  %t = tgc.tanh_out %row out %row : !tgc.tensor<[3], f32>, !tgc.tensor<[3], f32> -> !tgc.tensor<[3], f32>
  return %e : !tgc.tensor<[2, 3], f32>
}

// -----

func.func @out_resize(%a: !tgc.tensor<[2, 3], f32> {tgc.kind = "user_input", tgc.name = "a"},
                      %o: !tgc.tensor<[3], f32> {tgc.kind = "user_input", tgc.name = "o"}) {
  %one = arith.constant 1.0 : f64
  // expected-error @below {{out= with a resize is not supported: the result has sizes #tgc.shape<[2, 3]>, out has #tgc.shape<[3]>}}
  %r = tgc.sub_out %a, %one out %o : !tgc.tensor<[2, 3], f32>, f64, !tgc.tensor<[3], f32> -> !tgc.tensor<[3], f32>
  return
}

// -----

func.func @out_resize_unary(%a: !tgc.tensor<[4], f32> {tgc.kind = "user_input", tgc.name = "a"},
                            %o: !tgc.tensor<[0], f32> {tgc.kind = "user_input", tgc.name = "o"}) {
  // expected-error @below {{out= with a resize is not supported}}
  %r = tgc.sigmoid_out %a out %o : !tgc.tensor<[4], f32>, !tgc.tensor<[0], f32> -> !tgc.tensor<[0], f32>
  return
}

// -----

// expected-error @+1 {{functionalize: the program writes into parameter 'w'}}
func.func @out_into_parameter(%a: !tgc.tensor<[3], f32> {tgc.kind = "user_input", tgc.name = "a"},
                              %w: !tgc.tensor<[3], f32> {tgc.kind = "parameter", tgc.name = "w"}) {
  %r = tgc.div_out %a, %a out %w : !tgc.tensor<[3], f32>, !tgc.tensor<[3], f32>, !tgc.tensor<[3], f32> -> !tgc.tensor<[3], f32>
  return
}

// -----

func.func @t_of_expanded_then_write(%x: !tgc.tensor<[3], f32> {tgc.kind = "user_input", tgc.name = "x"}) {
  // expected-error @below {{cannot write through an expanded view}}
  %e = tgc.expand %x {size = #tgc.shape<[2, 3]>} : !tgc.tensor<[3], f32> -> !tgc.tensor<[2, 3], f32, strides = [0, 1]>
  %t = tgc.t_ %e : !tgc.tensor<[2, 3], f32, strides = [0, 1]> -> !tgc.tensor<[3, 2], f32, strides = [1, 0]>
  %one = arith.constant 1.0 : f64
  %a = tgc.add_ %t, %one : !tgc.tensor<[3, 2], f32, strides = [1, 0]>, f64 -> !tgc.tensor<[3, 2], f32, strides = [1, 0]>
  return
}
