// RUN: tgc-opt %s --tgc-pipeline="compile-to=functionalize" | FileCheck %s --check-prefix=FUNC
// RUN: tgc-opt %s --tgc-pipeline="compile-to=lower" | FileCheck %s --check-prefix=LOWER
// RUN: tgc-opt %s --tgc-pipeline="compile-to=bufferize" | FileCheck %s --check-prefix=BUF
// RUN: tgc-opt %s --tgc-pipeline | FileCheck %s --check-prefix=LLVM

// Every phase, stopping after each: capture-level tgc -> value-level tgc with the
// buffer write-back -> linalg on tensors -> memrefs with a destination-passing entry ->
// LLVM dialect with GEMM calls into the runtime.

// FUNC-LABEL: func.func @forward
//  FUNC-SAME:   !tgc.vtensor<[s0, 16], f32>
//  FUNC-SAME:   {tgc.kind = "buffer_mutation", tgc.target = "steps"}
//   FUNC-NOT:   !tgc.tensor

// LOWER-LABEL: func.func @forward
//       LOWER:   linalg.matmul
//       LOWER:   linalg.reduce
//   LOWER-NOT:   tgc.

// BUF-LABEL: func.func @forward
//  BUF-SAME:   %{{.*}}: memref<?x16xf32> {tgc.kind = "user_input", tgc.name = "x"}
//  BUF-SAME:   %{{.*}}: memref<?x32xf32> {tgc.kind = "user_output"}
//  BUF-SAME:   %{{.*}}: memref<i64> {tgc.kind = "buffer_mutation", tgc.target = "steps"}
//  BUF-SAME:   %{{.*}}: memref<?xi8> {tgc.kind = "arena"}, %{{.*}}: memref<i64> {tgc.kind = "arena_request"}) {
//   BUF-NOT:   tensor<

// LLVM: llvm.func @tgc_rt_gemm_f32
// LLVM: llvm.func @forward
// LLVM: llvm.call @tgc_rt_gemm_f32
// LLVM-NOT: linalg.
module attributes {tgc.symbols = [#tgc.symbol<"batch", min = 1, max = 64>]} {
  func.func @forward(
      %w: !tgc.tensor<[32, 16], f32> {tgc.kind = "parameter", tgc.name = "fc.weight"},
      %steps: !tgc.tensor<[], i64> {tgc.kind = "buffer", tgc.name = "steps"},
      %x: !tgc.tensor<[s0, 16], f32> {tgc.kind = "user_input", tgc.name = "x"})
      -> (!tgc.tensor<[s0, 32], f32> {tgc.kind = "user_output"}) {
    %0 = tgc.linear %x, %w : !tgc.tensor<[s0, 16], f32>, !tgc.tensor<[32, 16], f32> -> !tgc.tensor<[s0, 32], f32>
    %1 = tgc.log_softmax %0 {dim = 1 : i64} : !tgc.tensor<[s0, 32], f32> -> !tgc.tensor<[s0, 32], f32>
    %one = arith.constant 1 : i64
    %2 = tgc.add_ %steps, %one : !tgc.tensor<[], i64>, i64 -> !tgc.tensor<[], i64>
    return %1 : !tgc.tensor<[s0, 32], f32>
  }
}
