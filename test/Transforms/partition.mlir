// RUN: tgc-opt %s --tgc-partition --split-input-file --verify-diagnostics | FileCheck %s

// y = relu(x) @ w, gradient of w: the backward needs relu(x). Saving x and recomputing
// relu ties with saving relu's result (128 bytes each); the earlier value is saved.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 128 : i64, tgc.saved_count = 1 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[4, 8], f32> {tgc.kind = "user_input", tgc.name = "x"}, %[[W:.*]]: !tgc.vtensor<[8, 16], f32, grad> {tgc.kind = "parameter", tgc.name = "w"})
//  CHECK-SAME:   -> (!tgc.vtensor<[4, 16], f32, grad> {tgc.kind = "user_output"}, !tgc.vtensor<[4, 8], f32> {tgc.kind = "saved"})
//       CHECK:   %[[R:.*]] = tgc.relu %[[X]]
//       CHECK:   %[[Y:.*]] = tgc.mm %[[R]], %[[W]]
//       CHECK:   return %[[Y]], %[[X]]
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SX:.*]]: !tgc.vtensor<[4, 8], f32> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[4, 16], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//  CHECK-SAME:   -> (!tgc.vtensor<[8, 16], f32> {tgc.kind = "gradient", tgc.target = "w"})
//       CHECK:   %[[R2:.*]] = tgc.relu %[[SX]]
//       CHECK:   %[[RT:.*]] = tgc.transpose %[[R2]]
//       CHECK:   %[[G:.*]] = tgc.mm %[[RT]], %[[T]]
//       CHECK:   return %[[G]]
//   CHECK-NOT: func.func @joint
func.func @joint(%x: !tgc.vtensor<[4, 8], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w: !tgc.vtensor<[8, 16], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                 %t: !tgc.vtensor<[4, 16], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 16], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[8, 16], f32> {tgc.kind = "gradient", tgc.target = "w"}) {
  %r = tgc.relu %x : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[4, 8], f32>
  %y = tgc.mm %r, %w : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8, 16], f32, grad> -> !tgc.vtensor<[4, 16], f32, grad>
  %rt = tgc.transpose %r {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[8, 4], f32>
  %gw = tgc.mm %rt, %t : !tgc.vtensor<[8, 4], f32>, !tgc.vtensor<[4, 16], f32> -> !tgc.vtensor<[8, 16], f32>
  return %y, %gw : !tgc.vtensor<[4, 16], f32, grad>, !tgc.vtensor<[8, 16], f32>
}

// -----

// y = sum(exp(sum(x, 1))), x a parameter: the backward needs e = exp(s) (16 bytes). Saving s (16
// bytes) and recomputing exp ties with saving e and is earlier; both beat saving x
// (128 bytes). partition-budget.mlir partitions this graph under a budget.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 16 : i64, tgc.saved_count = 1 : i64}
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[S:.*]] = tgc.sum %{{.*}} {dim = array<i64: 1>}
//       CHECK:   return %{{.*}}, %[[S]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SS:.*]]: !tgc.vtensor<[4], f32, grad> {tgc.kind = "saved"}
//       CHECK:   tgc.exp %[[SS]]
func.func @joint(%x: !tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "parameter", tgc.name = "x"},
                 %t: !tgc.vtensor<[], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
  %s = tgc.sum %x {dim = array<i64: 1>} : !tgc.vtensor<[4, 8], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %e = tgc.exp %s : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
  %y = tgc.sum %e : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[], f32, grad>
  %ge = tgc.mul %e, %t : !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[], f32> -> !tgc.vtensor<[4], f32>
  %u = tgc.unsqueeze %ge {dim = 1 : i64} : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4, 1], f32>
  %gx = tgc.expand %u {size = #tgc.shape<[4, 8]>} : !tgc.vtensor<[4, 1], f32> -> !tgc.vtensor<[4, 8], f32>
  return %y, %gx : !tgc.vtensor<[], f32, grad>, !tgc.vtensor<[4, 8], f32>
}

// -----

// A matmul is never recomputed: the backward of y = m * m / 2, m = x @ w, reads m
// (1024 bytes) and x (32 bytes). Recomputing m from x and w (a parameter, passed by
// reference) would be cheaper but is not allowed, so m is saved, and w is not.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 1056 : i64, tgc.saved_count = 2 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[4, 2], f32> {{.*}}, %[[W:.*]]: !tgc.vtensor<[2, 64], f32, grad>
//       CHECK:   %[[M:.*]] = tgc.mm %[[X]], %[[W]]
//       CHECK:   return %{{.*}}, %[[X]], %[[M]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SX:.*]]: !tgc.vtensor<[4, 2], f32> {tgc.kind = "saved"}, %[[SM:.*]]: !tgc.vtensor<[4, 64], f32, grad> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[4, 64], f32>
//       CHECK:   %[[GM:.*]] = tgc.mul %[[T]], %[[SM]]
//       CHECK:   %[[XT:.*]] = tgc.transpose %[[SX]]
//       CHECK:   tgc.mm %[[XT]], %[[GM]]
func.func @joint(%x: !tgc.vtensor<[4, 2], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w: !tgc.vtensor<[2, 64], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                 %t: !tgc.vtensor<[4, 64], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 64], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[2, 64], f32> {tgc.kind = "gradient", tgc.target = "w"}) {
  %half = arith.constant 0.5 : f64
  %m = tgc.mm %x, %w : !tgc.vtensor<[4, 2], f32>, !tgc.vtensor<[2, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %sq = tgc.mul %m, %m : !tgc.vtensor<[4, 64], f32, grad>, !tgc.vtensor<[4, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %y = tgc.mul %sq, %half : !tgc.vtensor<[4, 64], f32, grad>, f64 -> !tgc.vtensor<[4, 64], f32, grad>
  %gm = tgc.mul %t, %m : !tgc.vtensor<[4, 64], f32>, !tgc.vtensor<[4, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32>
  %xt = tgc.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[2, 4], f32>
  %gw = tgc.mm %xt, %gm : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[4, 64], f32> -> !tgc.vtensor<[2, 64], f32>
  return %y, %gw : !tgc.vtensor<[4, 64], f32, grad>, !tgc.vtensor<[2, 64], f32>
}

// -----

// A boolean mask (1 byte per element) is cheaper to save than the f32 values it is
// computed from: relu(x @ w)'s backward saves m > 0 (256 bytes), not m, and x (32).
// CHECK-LABEL: module attributes {tgc.saved_bytes = 288 : i64, tgc.saved_count = 2 : i64}
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[M:.*]] = tgc.mm
//       CHECK:   %[[MASK:.*]] = tgc.gt %[[M]]
//       CHECK:   return %{{.*}}, %{{.*}}, %[[MASK]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%{{.*}}: !tgc.vtensor<[4, 2], f32> {tgc.kind = "saved"}, %[[SMASK:.*]]: !tgc.vtensor<[4, 64], i1> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[4, 64], f32>
//       CHECK:   tgc.mul %[[T]], %[[SMASK]]
func.func @joint(%x: !tgc.vtensor<[4, 2], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w: !tgc.vtensor<[2, 64], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                 %t: !tgc.vtensor<[4, 64], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 64], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[2, 64], f32> {tgc.kind = "gradient", tgc.target = "w"}) {
  %c0 = arith.constant 0 : i64
  %m = tgc.mm %x, %w : !tgc.vtensor<[4, 2], f32>, !tgc.vtensor<[2, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %y = tgc.relu %m : !tgc.vtensor<[4, 64], f32, grad> -> !tgc.vtensor<[4, 64], f32, grad>
  %mask = tgc.gt %m, %c0 : !tgc.vtensor<[4, 64], f32, grad>, i64 -> !tgc.vtensor<[4, 64], i1>
  %gm = tgc.mul %t, %mask : !tgc.vtensor<[4, 64], f32>, !tgc.vtensor<[4, 64], i1> -> !tgc.vtensor<[4, 64], f32>
  %xt = tgc.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 2], f32> -> !tgc.vtensor<[2, 4], f32>
  %gw = tgc.mm %xt, %gm : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[4, 64], f32> -> !tgc.vtensor<[2, 64], f32>
  return %y, %gw : !tgc.vtensor<[4, 64], f32, grad>, !tgc.vtensor<[2, 64], f32>
}

// -----

// Batch-norm style running statistic: the forward mutation stays in @forward with its
// attributes. Its value (rm * 0.9, 32 bytes) is also read by the backward: it is saved,
// not recomputed from rm (which would tie at 32 bytes and come earlier), and counts in
// saved_bytes because rm is overwritten. The parameter g is passed by reference (0 bytes).
// CHECK-LABEL: module attributes {tgc.saved_bytes = 32 : i64, tgc.saved_count = 2 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: {{.*}}, %[[G:.*]]: {{.*}}, %[[$RM:.*]]: !tgc.vtensor<[8], f32> {tgc.kind = "buffer", tgc.name = "bn.running_mean"})
//  CHECK-SAME:   -> (!tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_output"}, !tgc.vtensor<[8], f32> {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "bn.running_mean", tgc.version = 1 : i64}, !tgc.vtensor<[8], f32, grad> {tgc.kind = "saved"}, !tgc.vtensor<[8], f32> {tgc.kind = "saved"})
//       CHECK:   %[[NEW:.*]] = tgc.mul %[[$RM]]
//       CHECK:   return %{{.*}}, %[[NEW]], %[[G]], %[[NEW]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SG:.*]]: !tgc.vtensor<[8], f32, grad> {tgc.kind = "saved"}, %[[SNEW:.*]]: !tgc.vtensor<[8], f32> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[4, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//  CHECK-SAME:   -> (!tgc.vtensor<[4, 8], f32> {tgc.kind = "gradient", tgc.target = "x"})
//   CHECK-NOT:   %[[$RM]]
//       CHECK:   %[[A:.*]] = tgc.mul %[[T]], %[[SG]]
//       CHECK:   tgc.mul %[[A]], %[[SNEW]]
func.func @joint(%x: !tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %g: !tgc.vtensor<[8], f32, grad> {tgc.kind = "parameter", tgc.name = "g"},
                 %rm: !tgc.vtensor<[8], f32> {tgc.kind = "buffer", tgc.name = "bn.running_mean"},
                 %t: !tgc.vtensor<[4, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[8], f32> {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "bn.running_mean", tgc.version = 1 : i64},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
  %c = arith.constant 0.9 : f64
  %new = tgc.mul %rm, %c : !tgc.vtensor<[8], f32>, f64 -> !tgc.vtensor<[8], f32>
  %a = tgc.mul %x, %g : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[8], f32, grad> -> !tgc.vtensor<[4, 8], f32, grad>
  %y = tgc.mul %a, %new : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[8], f32> -> !tgc.vtensor<[4, 8], f32, grad>
  %ga = tgc.mul %t, %g : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], f32, grad> -> !tgc.vtensor<[4, 8], f32>
  %gx = tgc.mul %ga, %new : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8], f32> -> !tgc.vtensor<[4, 8], f32>
  return %y, %new, %gx : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[8], f32>, !tgc.vtensor<[4, 8], f32>
}

// -----

// A backward mutation (a buffer accumulating the tangent) is a result of @backward,
// after the gradients, with its attributes; the buffer's value is saved.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 16 : i64, tgc.saved_count = 1 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}, !tgc.vtensor<[4], f32> {tgc.kind = "saved"})
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[ACC:.*]]: !tgc.vtensor<[4], f32> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//  CHECK-SAME:   -> (!tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "x"}, !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "acc", tgc.version = 1 : i64})
//       CHECK:   %[[NEW:.*]] = tgc.add %[[ACC]], %[[T]]
//       CHECK:   return %[[T]], %[[NEW]]
func.func @joint(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                 %acc: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "acc"},
                 %t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "backward", tgc.target = "acc", tgc.version = 1 : i64},
        !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
  %c = arith.constant 1 : i64
  %y = tgc.add %x, %c : !tgc.vtensor<[4], f32, grad>, i64 -> !tgc.vtensor<[4], f32, grad>
  %new = tgc.add %acc, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %new, %y, %t : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32, grad>, !tgc.vtensor<[4], f32>
}

// -----

// Dynamic batch: y = x * sum(x, 1). The backward reads x and s = sum(x, 1); saving x
// alone (3 * 8 * 4 bytes at the hint) and recomputing s is cheapest.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 96 : i64, tgc.saved_count = 1 : i64, tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:.*]]: !tgc.vtensor<[s0, 8], f32, grad>
//   CHECK-NOT:   tgc.sym_size
//       CHECK:   return %{{.*}}, %[[X]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SX:.*]]: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "saved"}, %[[T:.*]]: !tgc.vtensor<[s0, 8], f32>
//       CHECK:   tgc.sum %[[SX]]
//       CHECK:   tgc.sym_size %[[SX]] {dim = 0 : i64}
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[s0, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %s = tgc.sum %x {dim = array<i64: 1>, keepdim = true} : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 1], f32, grad>
    %y = tgc.mul %x, %s : !tgc.vtensor<[s0, 8], f32, grad>, !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 8], f32, grad>
    %n = tgc.sym_size %x {dim = 0 : i64} : !tgc.vtensor<[s0, 8], f32, grad>
    %a = tgc.mul %t, %s : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 8], f32>
    %b = tgc.mul %t, %x : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 8], f32>
    %c = tgc.div %b, %n : !tgc.vtensor<[s0, 8], f32>, i64 -> !tgc.vtensor<[s0, 8], f32>
    %g = tgc.add %a, %c : !tgc.vtensor<[s0, 8], f32>, !tgc.vtensor<[s0, 8], f32> -> !tgc.vtensor<[s0, 8], f32>
    return %y, %g : !tgc.vtensor<[s0, 8], f32, grad>, !tgc.vtensor<[s0, 8], f32>
  }
}

// -----

// A size is read from an argument of that size, not from the tensor it measures: the
// backward divides by the batch size of h = exp(x) and reads it from the tangent, so
// nothing is saved. A static size becomes a constant.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 0 : i64, tgc.saved_count = 0 : i64
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[T:.*]]: !tgc.vtensor<[s0], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//       CHECK:   %[[N:.*]] = tgc.sym_size %[[T]] {dim = 0 : i64}
//       CHECK:   %[[EIGHT:.*]] = arith.constant 8 : i64
//       CHECK:   %[[Q:.*]] = tgc.div %[[T]], %[[N]]
//       CHECK:   tgc.mul %[[Q]], %[[EIGHT]]
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[s0], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %h = tgc.exp %x : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 8], f32, grad>
    %y = tgc.sum %h {dim = array<i64: 1>} : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0], f32, grad>
    %n = tgc.sym_size %h {dim = 0 : i64} : !tgc.vtensor<[s0, 8], f32, grad>
    %m = tgc.sym_size %h {dim = 1 : i64} : !tgc.vtensor<[s0, 8], f32, grad>
    %q = tgc.div %t, %n : !tgc.vtensor<[s0], f32>, i64 -> !tgc.vtensor<[s0], f32>
    %r = tgc.mul %q, %m : !tgc.vtensor<[s0], f32>, i64 -> !tgc.vtensor<[s0], f32>
    %u = tgc.unsqueeze %r {dim = 1 : i64} : !tgc.vtensor<[s0], f32> -> !tgc.vtensor<[s0, 1], f32>
    %g = tgc.expand %u {size = #tgc.shape<[s0, 8]>} : !tgc.vtensor<[s0, 1], f32> -> !tgc.vtensor<[s0, 8], f32>
    return %y, %g : !tgc.vtensor<[s0], f32, grad>, !tgc.vtensor<[s0, 8], f32>
  }
}

// -----

// A slice's gradient scatters into zeros shaped like the sliced tensor h = x * 2: the
// backward builds them with tgc.full of h's sizes instead of keeping h (or x) alive.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 0 : i64, tgc.saved_count = 0 : i64
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[T:.*]]: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//       CHECK:   %[[Z:.*]] = tgc.full {device = #tgc.device<"cuda" : 0>, dtype = f32, fill_value = 0.000000e+00 : f64, size = #tgc.shape<[s0, 8]>} : !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad>
//       CHECK:   tgc.slice_scatter %[[Z]], %[[T]]
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[s0, 4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 4], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %c2 = arith.constant 2 : i64
    %h = tgc.mul %x, %c2 : !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad>, i64 -> !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad>
    %y = tgc.slice %h {dim = 1 : i64, start = #tgc.shape<[0]>, end = #tgc.shape<[4]>} : !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad> -> !tgc.vtensor<[s0, 4], f32, grad>
    %z = tgc.full_like %h {fill_value = 0.0 : f64} : !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad> -> !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad>
    %gh = tgc.slice_scatter %z, %t {dim = 1 : i64, start = #tgc.shape<[0]>, end = #tgc.shape<[4]>} : !tgc.vtensor<[s0, 8], f32, device = cuda:0, grad>, !tgc.vtensor<[s0, 4], f32> -> !tgc.vtensor<[s0, 8], f32>
    %gx = tgc.mul %gh, %c2 : !tgc.vtensor<[s0, 8], f32>, i64 -> !tgc.vtensor<[s0, 8], f32>
    return %y, %gx : !tgc.vtensor<[s0, 4], f32, grad>, !tgc.vtensor<[s0, 8], f32>
  }
}

// -----

// Sizes count at the symbol's hint: s = sum(x, 1) takes 3 * 4 bytes.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 12 : i64, tgc.saved_count = 1 : i64
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[s0, 1], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 1], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 1], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %s = tgc.sum %x {dim = array<i64: 1>, keepdim = true} : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 1], f32, grad>
    %e = tgc.exp %s : !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 1], f32, grad>
    %g = tgc.mul %t, %e : !tgc.vtensor<[s0, 1], f32>, !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 1], f32>
    return %e, %g : !tgc.vtensor<[s0, 1], f32, grad>, !tgc.vtensor<[s0, 1], f32>
  }
}

// -----

// Without a hint a symbol counts as min(max, 1024): 64 here, so s takes 256 bytes.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 256 : i64, tgc.saved_count = 1 : i64
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[s0, 1], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[s0, 1], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 1], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %s = tgc.sum %x {dim = array<i64: 1>, keepdim = true} : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[s0, 1], f32, grad>
    %e = tgc.exp %s : !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 1], f32, grad>
    %g = tgc.mul %t, %e : !tgc.vtensor<[s0, 1], f32>, !tgc.vtensor<[s0, 1], f32, grad> -> !tgc.vtensor<[s0, 1], f32>
    return %e, %g : !tgc.vtensor<[s0, 1], f32, grad>, !tgc.vtensor<[s0, 1], f32>
  }
}

// -----

// The backward of sum(x) over a dynamic batch only expands the tangent: nothing is
// saved, although its type uses the batch size (the artifact passes every symbol to the
// backward, docs/abi.md).
// CHECK-LABEL: module attributes {tgc.saved_bytes = 0 : i64, tgc.saved_count = 0 : i64
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[T:.*]]: !tgc.vtensor<[], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
//       CHECK:   tgc.expand %[[T]]
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64, hint = 3>]} {
  func.func @joint(%x: !tgc.vtensor<[s0, 8], f32, grad> {tgc.kind = "user_input", tgc.name = "x"},
                   %t: !tgc.vtensor<[], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[], f32, grad> {tgc.kind = "user_output"},
          !tgc.vtensor<[s0, 8], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %y = tgc.sum %x : !tgc.vtensor<[s0, 8], f32, grad> -> !tgc.vtensor<[], f32, grad>
    %g = tgc.expand %t {size = #tgc.shape<[s0, 8]>} : !tgc.vtensor<[], f32> -> !tgc.vtensor<[s0, 8], f32>
    return %y, %g : !tgc.vtensor<[], f32, grad>, !tgc.vtensor<[s0, 8], f32>
  }
}

// -----

// Nothing to differentiate: an empty @backward, and the forward mutation in @forward.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 0 : i64, tgc.saved_count = 0 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}, !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 1 : i64})
// CHECK-LABEL: func.func @backward()
//  CHECK-NEXT:   return
func.func @joint(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"},
        !tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.pass = "forward", tgc.target = "b", tgc.version = 1 : i64}) {
  %y = tgc.relu %x : !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  %n = tgc.add %b, %y : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32> -> !tgc.vtensor<[4], f32>
  return %y, %n : !tgc.vtensor<[4], f32>, !tgc.vtensor<[4], f32>
}

// -----

// A two-layer MLP, relu(x @ w1^T + b1) @ w2^T + b2, with its parameter gradients. The
// backward needs r = relu(a), a = h + b1 (for w2's gradient and relu's mask): saving a
// and recomputing relu is the cheapest cut (saving h and b1 would cost b1 as well). x is
// saved (256 bytes), w2 passed by reference; w1, b1 and b2 are not needed.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 768 : i64, tgc.saved_count = 3 : i64}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:[^:]*]]: {{.*}}, %[[W1:[^:]*]]: {{.*}}, %[[B1:[^:]*]]: {{.*}}, %[[W2:[^:]*]]: {{.*}}, %{{[^:]*}}: {{.*}})
//       CHECK:   %[[H:.*]] = tgc.mm %[[X]]
//       CHECK:   %[[A:.*]] = tgc.add %[[H]], %[[B1]]
//       CHECK:   return %{{.*}}, %[[X]], %[[W2]], %[[A]] :
// CHECK-LABEL: func.func @backward
//  CHECK-SAME:   (%[[SX:[^:]*]]: !tgc.vtensor<[4, 16], f32> {tgc.kind = "saved"}, %[[SW2:[^:]*]]: !tgc.vtensor<[8, 32], f32, grad> {tgc.kind = "saved"}, %[[SA:[^:]*]]: !tgc.vtensor<[4, 32], f32, grad> {tgc.kind = "saved"}, %[[T:[^:]*]]: !tgc.vtensor<[4, 8], f32>
//       CHECK:   %[[R:.*]] = tgc.relu %[[SA]]
//       CHECK:   tgc.mm %{{.*}}, %[[R]]
//       CHECK:   tgc.mm %[[T]], %[[SW2]]
//       CHECK:   tgc.gt %[[R]]
//       CHECK:   tgc.mm %{{.*}}, %[[SX]]
func.func @joint(%x: !tgc.vtensor<[4, 16], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w1: !tgc.vtensor<[32, 16], f32, grad> {tgc.kind = "parameter", tgc.name = "w1"},
                 %b1: !tgc.vtensor<[32], f32, grad> {tgc.kind = "parameter", tgc.name = "b1"},
                 %w2: !tgc.vtensor<[8, 32], f32, grad> {tgc.kind = "parameter", tgc.name = "w2"},
                 %b2: !tgc.vtensor<[8], f32, grad> {tgc.kind = "parameter", tgc.name = "b2"},
                 %t: !tgc.vtensor<[4, 8], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 8], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[32, 16], f32> {tgc.kind = "gradient", tgc.target = "w1"},
        !tgc.vtensor<[32], f32> {tgc.kind = "gradient", tgc.target = "b1"},
        !tgc.vtensor<[8, 32], f32> {tgc.kind = "gradient", tgc.target = "w2"},
        !tgc.vtensor<[8], f32> {tgc.kind = "gradient", tgc.target = "b2"}) {
  %c0 = arith.constant 0 : i64
  %w1t = tgc.transpose %w1 {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[32, 16], f32, grad> -> !tgc.vtensor<[16, 32], f32, grad>
  %h = tgc.mm %x, %w1t : !tgc.vtensor<[4, 16], f32>, !tgc.vtensor<[16, 32], f32, grad> -> !tgc.vtensor<[4, 32], f32, grad>
  %a = tgc.add %h, %b1 : !tgc.vtensor<[4, 32], f32, grad>, !tgc.vtensor<[32], f32, grad> -> !tgc.vtensor<[4, 32], f32, grad>
  %r = tgc.relu %a : !tgc.vtensor<[4, 32], f32, grad> -> !tgc.vtensor<[4, 32], f32, grad>
  %w2t = tgc.transpose %w2 {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[8, 32], f32, grad> -> !tgc.vtensor<[32, 8], f32, grad>
  %o = tgc.mm %r, %w2t : !tgc.vtensor<[4, 32], f32, grad>, !tgc.vtensor<[32, 8], f32, grad> -> !tgc.vtensor<[4, 8], f32, grad>
  %y = tgc.add %o, %b2 : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[8], f32, grad> -> !tgc.vtensor<[4, 8], f32, grad>
  %gb2 = tgc.sum %t {dim = array<i64: 0>} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[8], f32>
  %tt = tgc.transpose %t {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[8, 4], f32>
  %gw2 = tgc.mm %tt, %r : !tgc.vtensor<[8, 4], f32>, !tgc.vtensor<[4, 32], f32, grad> -> !tgc.vtensor<[8, 32], f32>
  %gr = tgc.mm %t, %w2 : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8, 32], f32, grad> -> !tgc.vtensor<[4, 32], f32>
  %mask = tgc.gt %r, %c0 : !tgc.vtensor<[4, 32], f32, grad>, i64 -> !tgc.vtensor<[4, 32], i1>
  %ga = tgc.mul %gr, %mask : !tgc.vtensor<[4, 32], f32>, !tgc.vtensor<[4, 32], i1> -> !tgc.vtensor<[4, 32], f32>
  %gb1 = tgc.sum %ga {dim = array<i64: 0>} : !tgc.vtensor<[4, 32], f32> -> !tgc.vtensor<[32], f32>
  %gat = tgc.transpose %ga {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 32], f32> -> !tgc.vtensor<[32, 4], f32>
  %gw1 = tgc.mm %gat, %x : !tgc.vtensor<[32, 4], f32>, !tgc.vtensor<[4, 16], f32> -> !tgc.vtensor<[32, 16], f32>
  return %y, %gw1, %gb1, %gw2, %gb2 : !tgc.vtensor<[4, 8], f32, grad>, !tgc.vtensor<[32, 16], f32>, !tgc.vtensor<[32], f32>, !tgc.vtensor<[8, 32], f32>, !tgc.vtensor<[8], f32>
}

// -----

// expected-error @below {{expected a func.func @joint (the joint forward-backward graph tgc-autodiff produces)}}
module {
}

// -----

// expected-error @below {{mutation result 0 has no 'tgc.pass' = "forward" | "backward"; run tgc-place-mutations first}}
func.func @joint(%b: !tgc.vtensor<[4], f32> {tgc.kind = "buffer", tgc.name = "b"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  return %b : !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{forward result 0 depends on a tangent}}
func.func @joint(%t: !tgc.vtensor<[4], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "user_output"}) {
  return %t : !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{result 0 of @joint has tgc.kind 'saved'; expected user_output, python_state, gradient or a mutation}}
func.func @joint(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"})
    -> (!tgc.vtensor<[4], f32> {tgc.kind = "saved"}) {
  return %x : !tgc.vtensor<[4], f32>
}

// -----

// expected-error @below {{@joint cannot be partitioned into a module that already has @forward or @backward}}
module {
  func.func @forward() {
    return
  }
  func.func @joint() {
    return
  }
}

// -----

func.func @joint(%x: !tgc.vtensor<[4], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %r: !tgc.tensor<[4], f32> {tgc.kind = "user_input", tgc.name = "r"}) {
  // expected-error @below {{tgc-partition supports ops with results and no regions (but tgc.cond) only}}
  tgc.overwrite %x into %r : !tgc.vtensor<[4], f32> into !tgc.tensor<[4], f32>
  return
}

// -----

// A python_state result (docs/replay.md) is a forward result like a user output, with its
// attributes; it takes no tangent.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   -> (!tgc.vtensor<[4, 16], f32, grad> {tgc.kind = "user_output"}, !tgc.vtensor<[4, 8], f32> {tgc.kind = "python_state", tgc.name = "fn.cache", tgc.output = 1 : i64}, !tgc.vtensor<[4, 8], f32> {tgc.kind = "saved"})
//       CHECK:   %[[R:.*]] = tgc.relu
//       CHECK:   return %{{.*}}, %[[R]], %{{.*}} :
// CHECK-LABEL: func.func @backward
func.func @joint(%x: !tgc.vtensor<[4, 8], f32> {tgc.kind = "user_input", tgc.name = "x"},
                 %w: !tgc.vtensor<[8, 16], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                 %t: !tgc.vtensor<[4, 16], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
    -> (!tgc.vtensor<[4, 16], f32, grad> {tgc.kind = "user_output"},
        !tgc.vtensor<[4, 8], f32> {tgc.kind = "python_state", tgc.name = "fn.cache", tgc.output = 1 : i64},
        !tgc.vtensor<[8, 16], f32> {tgc.kind = "gradient", tgc.target = "w"}) {
  %r = tgc.relu %x : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[4, 8], f32>
  %y = tgc.mm %r, %w : !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8, 16], f32, grad> -> !tgc.vtensor<[4, 16], f32, grad>
  %rt = tgc.transpose %r {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 8], f32> -> !tgc.vtensor<[8, 4], f32>
  %gw = tgc.mm %rt, %t : !tgc.vtensor<[8, 4], f32>, !tgc.vtensor<[4, 16], f32> -> !tgc.vtensor<[8, 16], f32>
  return %y, %r, %gw : !tgc.vtensor<[4, 16], f32, grad>, !tgc.vtensor<[4, 8], f32>, !tgc.vtensor<[8, 16], f32>
}
