// RUN: tgc-opt %s --tgc-autodiff --split-input-file --verify-diagnostics | FileCheck %s

// Scoped saved-tensor hooks: exp's derivative (g * exp(x)) reads its result, which the
// op of scope 0 saved: through unpack(pack(.)) (bf16 and back). The second exp is not in
// the scope: its derivative reads its result as is. The tags, the hook op and its
// templates are gone.
// CHECK-LABEL: module {
//   CHECK-NOT:   tgc.saved_tensors_hooks
//   CHECK-NOT:   tgc.saved_hooks_scope
//       CHECK: func.func @joint(%[[X:.*]]: !tgc.vtensor<[4], f32, grad> {{.*}}, %[[T:.*]]: !tgc.vtensor<[4], f32> {tgc.kind = "tangent"
//       CHECK:   %[[E:.*]] = tgc.exp %[[X]]
//       CHECK:   %[[F:.*]] = tgc.exp %[[E]]
//       CHECK:   %[[GE:.*]] = tgc.mul %[[T]], %[[F]]
//       CHECK:   %[[P:.*]] = tgc.to_dtype %[[E]] {dtype = bf16}
//       CHECK:   %[[U:.*]] = tgc.to_dtype %[[P]] {dtype = f32}
//       CHECK:   %[[GX:.*]] = tgc.mul %[[GE]], %[[U]]
//       CHECK:   return %[[F]], %[[GX]]
//   CHECK-NOT: func.func private
module {
  tgc.saved_tensors_hooks pack = @pack, unpack = @unpack scope 0
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], bf16> {
    %0 = tgc.to_dtype %x {dtype = bf16} : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], bf16>
    return %0 : !tgc.vtensor<[1], bf16>
  }
  func.func private @unpack(%x: !tgc.vtensor<[1], bf16>) -> !tgc.vtensor<[1], f32> {
    %0 = tgc.to_dtype %x {dtype = f32} : !tgc.vtensor<[1], bf16> -> !tgc.vtensor<[1], f32>
    return %0 : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[4], f32, grad> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[4], f32, grad> {tgc.kind = "user_output"}) {
    %e = tgc.exp %x {tgc.saved_hooks_scope = 0 : i64} : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    %f = tgc.exp %e : !tgc.vtensor<[4], f32, grad> -> !tgc.vtensor<[4], f32, grad>
    return %f : !tgc.vtensor<[4], f32, grad>
  }
}

// -----

// The derivative of a matmul in the scope reads the graph input x through the hooks (as
// PyTorch's mm saves x when the other operand requires grad); pack doubles it here.
// CHECK-LABEL: module {
//       CHECK: func.func @joint(%[[W:.*]]: !tgc.vtensor<[3, 4], f32, grad> {{.*}}, %[[X:.*]]: !tgc.vtensor<[2, 3], f32> {{.*}}, %[[T:.*]]: !tgc.vtensor<[2, 4], f32> {tgc.kind = "tangent"
//       CHECK:   tgc.mm %[[X]], %[[W]]
//       CHECK:   %[[PX:.*]] = tgc.mul %[[X]], %{{.*}} : !tgc.vtensor<[2, 3], f32>, f64
//       CHECK:   %[[XT:.*]] = tgc.transpose %[[PX]]
//       CHECK:   %[[GW:.*]] = tgc.mm %[[XT]], %[[T]]
//       CHECK:   return %{{.*}}, %[[GW]]
module {
  tgc.saved_tensors_hooks pack = @pack, unpack = @unpack scope 3
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    %two = arith.constant 2.000000e+00 : f64
    %0 = tgc.mul %x, %two : !tgc.vtensor<[1], f32>, f64 -> !tgc.vtensor<[1], f32>
    return %0 : !tgc.vtensor<[1], f32>
  }
  func.func private @unpack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    return %x : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%w: !tgc.vtensor<[3, 4], f32, grad> {tgc.kind = "parameter", tgc.name = "w"},
                     %x: !tgc.vtensor<[2, 3], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2, 4], f32, grad> {tgc.kind = "user_output"}) {
    %y = tgc.mm %x, %w {tgc.saved_hooks_scope = 3 : i64} : !tgc.vtensor<[2, 3], f32>, !tgc.vtensor<[3, 4], f32, grad> -> !tgc.vtensor<[2, 4], f32, grad>
    return %y : !tgc.vtensor<[2, 4], f32, grad>
  }
}

// -----

// The unpack hook must give back what was saved.
module {
  tgc.saved_tensors_hooks pack = @pack, unpack = @unpack scope 0
  func.func private @pack(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f16> {
    %0 = tgc.to_dtype %x {dtype = f16} : !tgc.vtensor<[1], f32> -> !tgc.vtensor<[1], f16>
    return %0 : !tgc.vtensor<[1], f16>
  }
  // expected-error @+1 {{'func.func' op must give back a tensor of the saved value's sizes and dtype}}
  func.func private @unpack(%x: !tgc.vtensor<[1], f16>) -> !tgc.vtensor<[1], f16> {
    return %x : !tgc.vtensor<[1], f16>
  }
  func.func @forward(%x: !tgc.vtensor<[2], f32, grad> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2], f32, grad> {tgc.kind = "user_output"}) {
    %e = tgc.exp %x {tgc.saved_hooks_scope = 0 : i64} : !tgc.vtensor<[2], f32, grad> -> !tgc.vtensor<[2], f32, grad>
    return %e : !tgc.vtensor<[2], f32, grad>
  }
}

// -----

// One pair per scope and dtype.
module {
  tgc.saved_tensors_hooks pack = @id, unpack = @id scope 0
  // expected-error @+1 {{'tgc.saved_tensors_hooks' op is a second pair for scope 0 and dtype 'f32'}}
  tgc.saved_tensors_hooks pack = @id, unpack = @id scope 0
  func.func private @id(%x: !tgc.vtensor<[1], f32>) -> !tgc.vtensor<[1], f32> {
    return %x : !tgc.vtensor<[1], f32>
  }
  func.func @forward(%x: !tgc.vtensor<[2], f32, grad> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2], f32, grad> {tgc.kind = "user_output"}) {
    %e = tgc.exp %x {tgc.saved_hooks_scope = 0 : i64} : !tgc.vtensor<[2], f32, grad> -> !tgc.vtensor<[2], f32, grad>
    return %e : !tgc.vtensor<[2], f32, grad>
  }
}

// -----

// Hooks must be functions of one tensor.
module {
  // expected-error @+1 {{'tgc.saved_tensors_hooks' op pack and unpack must be functions of one tensor}}
  tgc.saved_tensors_hooks pack = @missing, unpack = @missing scope 0
  func.func @forward(%x: !tgc.vtensor<[2], f32, grad> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.vtensor<[2], f32, grad> {tgc.kind = "user_output"}) {
    return %x : !tgc.vtensor<[2], f32, grad>
  }
}
