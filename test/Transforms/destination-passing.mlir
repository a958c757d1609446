// RUN: tgc-opt %s --tgc-destination-passing --split-input-file --verify-diagnostics | FileCheck %s

// Each tensor result becomes a memref argument after the inputs (dynamic sizes
// included), written with materialize_in_destination; result attributes move with it.
// The inputs are the caller's: not writable (bufferization copies before a write).
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[X:[^:]*]]: tensor<?x4xf32> {bufferization.writable = false, tgc.kind = "user_input"},
//  CHECK-SAME:    %[[B:[^:]*]]: tensor<4xf32> {bufferization.writable = false},
//  CHECK-SAME:    %[[OUT0:[^:]*]]: memref<?x4xf32> {tgc.kind = "user_output"},
//  CHECK-SAME:    %[[OUT1:[^:]*]]: memref<4xf32> {tgc.kind = "buffer_mutation", tgc.target = "b"})
//   CHECK-NOT:   ->
//       CHECK:   bufferization.materialize_in_destination %[[X]] in restrict writable %[[OUT0]]
//       CHECK:   bufferization.materialize_in_destination %[[B]] in restrict writable %[[OUT1]]
//       CHECK:   return{{$}}
func.func @forward(%x: tensor<?x4xf32> {tgc.kind = "user_input"}, %b: tensor<4xf32>)
    -> (tensor<?x4xf32> {tgc.kind = "user_output"},
        tensor<4xf32> {tgc.kind = "buffer_mutation", tgc.target = "b"}) {
  return %x, %b : tensor<?x4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{destination passing: result #0 is not a ranked tensor}}
func.func @scalar_result(%x: f32) -> f32 {
  return %x : f32
}
