// RUN: tgc-opt %s --tgc-approximate-math | FileCheck %s

// f32 exp, tanh and erf become arithmetic (no math call is left); log, f64 and
// the other functions are kept for libm.
// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return
func.func @approximated(%x: f32, %v: vector<8xf32>) -> (f32, f32, vector<8xf32>) {
  %0 = math.exp %x : f32
  %1 = math.tanh %0 : f32
  %2 = math.erf %v : vector<8xf32>
  return %0, %1, %2 : f32, f32, vector<8xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK: math.log %{{.*}} : f32
// CHECK: math.log1p %{{.*}} : f32
// CHECK: math.expm1 %{{.*}} : f32
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f64
func.func @kept(%x: f32, %d: f64) -> (f32, f32, f32, f32, f64, f64) {
  %0 = math.log %x : f32
  %1 = math.log1p %x : f32
  %2 = math.expm1 %x : f32
  %3 = math.sin %x : f32
  %4 = math.exp %d : f64
  %5 = math.tanh %d : f64
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f64, f64
}
