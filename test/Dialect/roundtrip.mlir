// RUN: tgc-opt %s | tgc-opt | FileCheck %s

// CHECK-LABEL: func.func @types
//  CHECK-SAME: !tgc.tensor<[s0, 4], f32, strides = [4, 1], offset = 2, device = cuda:0, grad>
//  CHECK-SAME: !tgc.vtensor<[s0 * 2, 3], bf16>
func.func @types(%a: !tgc.tensor<[s0, 4], f32, strides = [4, 1], offset = 2, device = cuda:0, grad>,
                 %b: !tgc.vtensor<[s0 * 2, 3], bf16>) {
  return
}

// CHECK-LABEL: func.func @ops
func.func @ops(%x: !tgc.vtensor<[s0, 16], f32>, %w: !tgc.vtensor<[32, 16], f32>,
               %b: !tgc.vtensor<[32], f32>) -> !tgc.vtensor<[s0 * 2, 16], f32> {
  // CHECK: tgc.linear %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> !tgc.vtensor<[s0, 32], f32>
  %0 = tgc.linear %x, %w, %b : !tgc.vtensor<[s0, 16], f32>, !tgc.vtensor<[32, 16], f32>, !tgc.vtensor<[32], f32> -> !tgc.vtensor<[s0, 32], f32>
  // CHECK: tgc.view {{.*}} -> !tgc.vtensor<[s0 * 2, 16], f32>
  %1 = tgc.view %0 {size = #tgc.shape<[-1, 16]>} : !tgc.vtensor<[s0, 32], f32> -> !tgc.vtensor<[s0 * 2, 16], f32>
  %c = arith.constant 2 : i64
  // CHECK: tgc.mul {{.*}} -> !tgc.vtensor<[s0 * 2, 16], f32>
  %2 = tgc.mul %1, %c : !tgc.vtensor<[s0 * 2, 16], f32>, i64 -> !tgc.vtensor<[s0 * 2, 16], f32>
  return %2 : !tgc.vtensor<[s0 * 2, 16], f32>
}

// CHECK-LABEL: func.func @views
func.func @views(%x: !tgc.tensor<[2, 3, 4], f32>) {
  // CHECK: -> !tgc.tensor<[4, 2, 3], f32, strides = [1, 12, 4]>
  %0 = tgc.permute %x {dims = array<i64: 2, 0, 1>} : !tgc.tensor<[2, 3, 4], f32> -> !tgc.tensor<[4, 2, 3], f32, strides = [1, 12, 4]>
  // CHECK: -> !tgc.tensor<[2, 2, 4], f32, strides = [12, 4, 1], offset = 4>
  %1 = tgc.slice %x {dim = 1 : i64, start = #tgc.shape<[1]>, end = #tgc.shape<[9223372036854775807]>} : !tgc.tensor<[2, 3, 4], f32> -> !tgc.tensor<[2, 2, 4], f32, strides = [12, 4, 1], offset = 4>
  // CHECK: -> !tgc.tensor<[5, 2, 3, 4], f32, strides = [0, 12, 4, 1]>
  %2 = tgc.expand %x {size = #tgc.shape<[5, -1, -1, -1]>} : !tgc.tensor<[2, 3, 4], f32> -> !tgc.tensor<[5, 2, 3, 4], f32, strides = [0, 12, 4, 1]>
  return
}

// CHECK-LABEL: func.func @promotion
func.func @promotion(%i: !tgc.vtensor<[3], i64>, %h: !tgc.vtensor<[], f64>) {
  %f = arith.constant 1.5 : f64
  // An integer tensor and a Python float give the default float dtype.
  // CHECK: -> !tgc.vtensor<[3], f32>
  %0 = tgc.mul %i, %f : !tgc.vtensor<[3], i64>, f64 -> !tgc.vtensor<[3], f32>
  // A 0-d float tensor promotes an integer tensor to its own dtype.
  // CHECK: -> !tgc.vtensor<[3], f64>
  %1 = tgc.add %i, %h : !tgc.vtensor<[3], i64>, !tgc.vtensor<[], f64> -> !tgc.vtensor<[3], f64>
  // CHECK: -> !tgc.vtensor<[3], i1>
  %2 = tgc.eq %i, %i : !tgc.vtensor<[3], i64>, !tgc.vtensor<[3], i64> -> !tgc.vtensor<[3], i1>
  return
}
