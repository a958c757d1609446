// The graph-break markers a captured program's path holds (docs/graph-breaks.md): they
// round-trip, and malformed ones are rejected.
// RUN: tgc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @markers
// CHECK: tgc.break_branch %{{.*}} taken = true : !tgc.tensor<[1, 1], i1>
// CHECK: tgc.break_call "builtins.print"(%{{.*}}) args = ["loss", {tensor = 0 : i64}, unit, [1, 2.500000e+00], {class = "torch.Size", items = [4, 8]}] kwargs = {sep = " | "} : !tgc.tensor<[], f32>
// CHECK: tgc.break_hook %{{.*}} hook = 2 : !tgc.tensor<[], f32>
func.func @markers(%c: !tgc.tensor<[1, 1], i1>, %t: !tgc.tensor<[], f32>) {
  tgc.break_branch %c taken = true : !tgc.tensor<[1, 1], i1>
  tgc.break_call "builtins.print"(%t) args = ["loss", {tensor = 0 : i64}, unit, [1, 2.5 : f64], {class = "torch.Size", items = [4, 8]}] kwargs = {sep = " | "} : !tgc.tensor<[], f32>
  tgc.break_hook %t hook = 2 : !tgc.tensor<[], f32>
  return
}

// -----

func.func @hook_number_negative(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{hook number must be non-negative, got -1}}
  tgc.break_hook %t hook = -1 : !tgc.tensor<[], f32>
  return
}

// -----

func.func @branch_not_one_element(%c: !tgc.tensor<[2], i1>) {
  // expected-error @below {{condition must have exactly one element}}
  tgc.break_branch %c taken = false : !tgc.tensor<[2], i1>
  return
}

// -----

func.func @call_tensor_out_of_range(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{argument names tensor 1 of 1}}
  tgc.break_call "builtins.print"(%t) args = [{tensor = 1 : i64}] kwargs = {} : !tgc.tensor<[], f32>
  return
}

// -----

func.func @call_bad_argument() {
  // expected-error @below {{argument must be a constant, an array, {class = "name", items = [...]} or {tensor = i}}}
  tgc.break_call "builtins.print"() args = [{value = 1 : i64}] kwargs = {}
  return
}
