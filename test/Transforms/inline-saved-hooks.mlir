// RUN: tgc-opt %s --split-input-file --tgc-inline-saved-hooks --verify-diagnostics | FileCheck %s

// A user pack/unpack pair (x * 0.5 stored as f16, restored as f32 * 2): packed at the end
// of @forward for each f32 saved value (the parameter too: no activations_only), unpacked
// at the start of @backward; the saved types and bytes are the packed ones.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 36 : i64
// CHECK-NOT:   tgc.saved_tensors_hooks
// CHECK:       func.func @forward(%[[W:.*]]: !tgc.vtensor<[4, 3], f32, grad> {{.*}}, %[[X:.*]]: !tgc.vtensor<[2, 4], f32>
// CHECK-SAME:    !tgc.vtensor<[4, 3], f16, grad> {tgc.kind = "saved"}, !tgc.vtensor<[2, 3], f16> {tgc.kind = "saved"})
// CHECK:         %[[R:.*]] = tgc.relu
// CHECK:         %[[HW:.*]] = tgc.mul %[[W]], %{{.*}} : !tgc.vtensor<[4, 3], f32, grad>, f64
// CHECK:         %[[PW:.*]] = tgc.to_dtype %[[HW]] {dtype = f16}
// CHECK:         %[[HR:.*]] = tgc.mul %[[R]], %{{.*}} : !tgc.vtensor<[2, 3], f32>, f64
// CHECK:         %[[PR:.*]] = tgc.to_dtype %[[HR]] {dtype = f16}
// CHECK:         return %[[R]], %[[PW]], %[[PR]]
// CHECK:       func.func @backward(%[[SW:.*]]: !tgc.vtensor<[4, 3], f16, grad> {tgc.kind = "saved"}, %[[SR:.*]]: !tgc.vtensor<[2, 3], f16> {tgc.kind = "saved"}
// CHECK:         %[[UW:.*]] = tgc.to_dtype %[[SW]] {dtype = f32}
// CHECK:         %[[W2:.*]] = tgc.mul %[[UW]], %{{.*}}
// CHECK:         %[[UR:.*]] = tgc.to_dtype %[[SR]] {dtype = f32}
// CHECK:         %[[R2:.*]] = tgc.mul %[[UR]], %{{.*}}
// CHECK:         tgc.gt %[[R2]]
// CHECK:         tgc.transpose %[[W2]]
// CHECK-NOT:   func.func private

module attributes {tgc.saved_bytes = 72 : i64, tgc.saved_count = 2 : i64} {
  tgc.saved_tensors_hooks pack = @pack, unpack = @unpack
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f16> {
    %half = arith.constant 5.000000e-01 : f64
    %0 = tgc.mul %x, %half : !tgc.vtensor<[1], f32>, f64 -> !tgc.vtensor<[1], f32>
    %1 = tgc.to_dtype %0 {dtype = f16} : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], f16>
    return %1 : !tgc.vtensor<[1], f16>
  }
  func.func private @unpack(%x: !tgc.vtensor<[1], f16>) -> !tgc.vtensor<[1], f32> {
    %two = arith.constant 2.000000e+00 : f64
    %0 = tgc.to_dtype %x {dtype = f32} : !tgc.vtensor<[1], f16> -> !tgc.vtensor<[1], f32>
    %1 = tgc.mul %0, %two : !tgc.vtensor<[1], f32>, f64 -> !tgc.vtensor<[1], f32>
    return %1 : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%w: !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                     %x: !tgc.vtensor<[2, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2, 3], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "saved"},
          !tgc.vtensor<[2, 3], f32> {tgc.kind = "saved"}) {
    %mm = tgc.mm %x, %w : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[4, 3], f32, grad> -> !tgc.vtensor<[2, 3], f32>
    %r = tgc.relu %mm : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 3], f32>
    return %r, %w, %r : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[4, 3], f32, grad>, !tgc.vtensor<[2, 3], f32>
  }
  func.func @backward(%sw: !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "saved"},
                      %sr: !tgc.vtensor<[2, 3], f32> {tgc.kind = "saved"},
                      %t: !tgc.vtensor<[2, 3], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[2, 4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %zero = arith.constant 0.000000e+00 : f64
    %pos = tgc.gt %sr, %zero : !tgc.vtensor<[2, 3], f32>, f64 -> !tgc.vtensor<[2, 3], i1>
    %g = tgc.where %pos, %t, %zero : !tgc.vtensor<[2, 3], i1>, !tgc.vtensor<[2, 3], f32>, f64 -> !tgc.vtensor<[2, 3], f32>
    %wt = tgc.transpose %sw {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 3], f32, grad> -> !tgc.vtensor<[3, 4], f32, grad>
    %gx = tgc.mm %g, %wt : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[3, 4], f32, grad> -> !tgc.vtensor<[2, 4], f32>
    return %gx : !tgc.vtensor<[2, 4], f32>
  }
}

// -----

// The unpack hook must give back what was saved.
module {
  tgc.saved_tensors_hooks pack = @pack, unpack = @unpack
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f16> {
    %0 = tgc.to_dtype %x {dtype = f16} : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], f16>
    return %0 : !tgc.vtensor<[1], f16>
  }
  // expected-error @+1 {{'func.func' op must give back a tensor of the saved value's sizes and dtype}}
  func.func private @unpack(%x: !tgc.vtensor<[1], f16>) -> !tgc.vtensor<[1], f16> {
    return %x : !tgc.vtensor<[1], f16>
  }
  func.func @forward(%x: !tgc.vtensor<[2], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2], f32> {tgc.kind = "user_output"}, !tgc.vtensor<[2], f32> {tgc.kind = "saved"}) {
    %e = tgc.exp %x : !tgc.vtensor<[2], f32> -> !tgc.vtensor<[2], f32>
    return %e, %e : !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32>
  }
  func.func @backward(%s: !tgc.vtensor<[2], f32> {tgc.kind = "saved"},
                      %t: !tgc.vtensor<[2], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[2], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %g = tgc.mul %t, %s : !tgc.vtensor<[2], f32>, !tgc.vtensor<[2], f32> -> !tgc.vtensor<[2], f32>
    return %g : !tgc.vtensor<[2], f32>
  }
}

// -----

// Scoped hooks are applied by tgc-autodiff, before the partition.
module {
  // expected-error @+1 {{'tgc.saved_tensors_hooks' op applies to the ops of scope 2, which tgc-autodiff applies (run it first)}}
  tgc.saved_tensors_hooks pack = @id, unpack = @id scope 2
  func.func private @id(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    return %x : !tgc.vtensor<[1], f32>
  }
}
