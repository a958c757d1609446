// RUN: tgc-opt %s --tgc-finalize-entries --split-input-file --verify-diagnostics | FileCheck %s

// The entry named in tgc.abi loses its argument attributes, is named <name>_forward and
// gets a C interface; tgc.abi follows the new name; the globals (whose initial values
// tgc.abi holds) are erased. Other functions keep their names and attributes.
// CHECK-LABEL: module attributes {tgc.abi = {args = [], entries = {forward = "m_forward"}, name = "m", results = [], symbols = []}} {
//   CHECK-NOT:   tgc.global
//       CHECK:   func.func @m_forward(%[[X:[^:]*]]: memref<4xf32>, %[[OUT:[^:]*]]: memref<4xf32>) attributes {llvm.emit_c_interface} {
//       CHECK:     call @helper(%[[X]], %[[OUT]])
//       CHECK:   func.func private @helper(%{{.*}}: memref<4xf32> {tgc.kind = "user_input"}, %{{.*}}: memref<4xf32>)
module attributes {tgc.abi = {args = [], entries = {forward = "main"}, name = "m", results = [], symbols = []}} {
  tgc.global @w "parameter" : !tgc.vtensor<[4], f32> = dense<1.0> : tensor<4xf32>
  func.func @main(%x: memref<4xf32> {tgc.kind = "user_input", tgc.name = "x"},
                  %out: memref<4xf32> {tgc.kind = "user_output"}) {
    func.call @helper(%x, %out) : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
  func.func private @helper(%x: memref<4xf32> {tgc.kind = "user_input"}, %out: memref<4xf32>) {
    memref.copy %x, %out : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// Kernels (tgc-form-kernels) become local to model.so and are never inlined.
// CHECK-LABEL: module attributes {tgc.abi = {args = [], entries = {forward = "k_forward"}
//       CHECK:   func.func @k_forward(
//       CHECK:     call @forward_kernel0(
//       CHECK:   func.func private @forward_kernel0(%{{.*}}: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"], tgc.kernel}
module attributes {tgc.abi = {args = [], entries = {forward = "forward"}, name = "k", results = [], symbols = []}} {
  func.func @forward(%x: memref<4xf32>) {
    func.call @forward_kernel0(%x) : (memref<4xf32>) -> ()
    return
  }
  func.func private @forward_kernel0(%x: memref<4xf32>) attributes {tgc.kernel} {
    return
  }
}

// -----

// A trainable model: both entries; an empty name keeps their names.
// CHECK-LABEL: module attributes {tgc.abi = {{{.*}}entries = {backward = "backward", forward = "forward"}, name = ""
//       CHECK:   func.func @forward(%{{[^:]*}}: memref<4xf32>) attributes {llvm.emit_c_interface}
//       CHECK:   func.func @backward(%{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>) attributes {llvm.emit_c_interface}
module attributes {tgc.abi = {args = [], backward = {results = [], saved = [], tangents = array<i64>}, entries = {backward = "backward", forward = "forward"}, name = "", results = [], symbols = []}} {
  func.func @forward(%out: memref<4xf32> {tgc.kind = "user_output"}) {
    return
  }
  func.func @backward(%dy: memref<4xf32> {tgc.kind = "tangent", tgc.output = 0 : i64},
                      %dx: memref<4xf32> {tgc.kind = "gradient", tgc.target = "x"}) {
    return
  }
}

// -----

// expected-error @below {{tgc-finalize-entries needs the tgc.abi attribute that tgc-prepare-entries records}}
module {
  func.func @forward() {
    return
  }
}

// -----

// expected-error @below {{tgc.abi names the forward entry @main, which the module does not define}}
module attributes {tgc.abi = {args = [], entries = {forward = "main"}, name = "m", results = [], symbols = []}} {
  func.func @forward() {
    return
  }
}
