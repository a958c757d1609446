// RUN: tgc-opt %s --split-input-file --tgc-inline-saved-hooks="pack-dtype=bf16" --verify-diagnostics | FileCheck %s

// --pack-saved=bf16: the built-in hooks cast saved f32 activations to bf16 and back; the
// parameter stays saved by reference (activations only), the i1 mask is left alone.
// CHECK-LABEL: module attributes {tgc.saved_bytes = 18 : i64
// CHECK:       func.func @forward
// CHECK-SAME:    !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "saved"}, !tgc.vtensor<[2, 3], bf16> {tgc.kind = "saved"}, !tgc.vtensor<[2, 3], i1> {tgc.kind = "saved"})
// CHECK:         %[[P:.*]] = tgc.to_dtype %{{.*}} {dtype = bf16}
// CHECK:         return %{{.*}}, %arg0, %[[P]], %{{.*}} :
// CHECK:       func.func @backward
// CHECK:         tgc.to_dtype %arg1 {dtype = f32} : !tgc.vtensor<[2, 3], bf16> -> !tgc.vtensor<[2, 3], f32>
// CHECK-NOT:   func.func private
module attributes {tgc.saved_bytes = 30 : i64, tgc.saved_count = 3 : i64} {
  func.func @forward(%w: !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                     %x: !tgc.vtensor<[2, 4], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2, 3], f32> {tgc.kind = "user_output"},
          !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "saved"},
          !tgc.vtensor<[2, 3], f32> {tgc.kind = "saved"},
          !tgc.vtensor<[2, 3], i1> {tgc.kind = "saved"}) {
    %zero = arith.constant 0.000000e+00 : f64
    %mm = tgc.mm %x, %w : !tgc.vtensor<[2, 4], f32>, !tgc.vtensor<[4, 3], f32, grad> -> !tgc.vtensor<[2, 3], f32>
    %pos = tgc.gt %mm, %zero : !tgc.vtensor<[2, 3], f32>, f64 -> !tgc.vtensor<[2, 3], i1>
    %e = tgc.exp %mm : !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 3], f32>
    return %e, %w, %e, %pos : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[4, 3], f32, grad>, !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[2, 3], i1>
  }
  func.func @backward(%sw: !tgc.vtensor<[4, 3], f32, grad> {tgc.kind = "saved"},
                      %se: !tgc.vtensor<[2, 3], f32> {tgc.kind = "saved"},
                      %spos: !tgc.vtensor<[2, 3], i1> {tgc.kind = "saved"},
                      %t: !tgc.vtensor<[2, 3], f32> {tgc.kind = "tangent", tgc.output = 0 : i64})
      -> (!tgc.vtensor<[2, 4], f32> {tgc.kind = "gradient", tgc.target = "x"}) {
    %zero = arith.constant 0.000000e+00 : f64
    %g0 = tgc.mul %t, %se : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[2, 3], f32> -> !tgc.vtensor<[2, 3], f32>
    %g = tgc.where %spos, %g0, %zero : !tgc.vtensor<[2, 3], i1>, !tgc.vtensor<[2, 3], f32>, f64 -> !tgc.vtensor<[2, 3], f32>
    %wt = tgc.transpose %sw {dim0 = 0 : i64, dim1 = 1 : i64} : !tgc.vtensor<[4, 3], f32, grad> -> !tgc.vtensor<[3, 4], f32, grad>
    %gx = tgc.mm %g, %wt : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[3, 4], f32, grad> -> !tgc.vtensor<[2, 4], f32>
    return %gx : !tgc.vtensor<[2, 4], f32>
  }
}

// -----

// The built-in hooks and the program's own do not mix.
module {
  // expected-error @+1 {{'tgc.saved_tensors_hooks' op conflicts with --pack-saved=bf16}}
  tgc.saved_tensors_hooks pack = @p, unpack = @u
}
