// The graph-break markers a captured program's path holds (docs/graph-breaks.md): they
// round-trip, and malformed ones are rejected.
// RUN: tgc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @markers
// CHECK: tgc.break_branch %{{.*}} taken = true : !tgc.tensor<[1, 1], i1>
// CHECK: tgc.break_call "builtins.print"(%{{.*}}) args = ["loss", {tensor = 0 : i64}, unit, [1, 2.500000e+00], {class = "torch.Size", items = [4, 8]}] kwargs = {sep = " | "} : !tgc.tensor<[], f32>
// CHECK: tgc.break_hook %{{.*}} hook = 2 : !tgc.tensor<[], f32>
// CHECK: %[[IN:.*]]:2 = tgc.break_module_hook "input" hook = 3(%{{.*}}, %{{.*}}) positions = [0, 2] arity = 3 : (!tgc.tensor<[], f32>, !tgc.tensor<[1, 1], i1>) -> (!tgc.tensor<[], f32>, !tgc.tensor<[1, 1], i1>)
// CHECK: tgc.break_module_hook "output" hook = 3(%[[IN]]#0) positions = [0] arity = 1 : (!tgc.tensor<[], f32>) -> !tgc.tensor<[], f32>
// CHECK: tgc.break_module_hook "input" hook = 4() positions = [] arity = 1 : () -> ()
func.func @markers(%c: !tgc.tensor<[1, 1], i1>, %t: !tgc.tensor<[], f32>) {
  tgc.break_branch %c taken = true : !tgc.tensor<[1, 1], i1>
  tgc.break_call "builtins.print"(%t) args = ["loss", {tensor = 0 : i64}, unit, [1, 2.5 : f64], {class = "torch.Size", items = [4, 8]}] kwargs = {sep = " | "} : !tgc.tensor<[], f32>
  tgc.break_hook %t hook = 2 : !tgc.tensor<[], f32>
  %in:2 = tgc.break_module_hook "input" hook = 3 (%t, %c) positions = [0, 2] arity = 3 : (!tgc.tensor<[], f32>, !tgc.tensor<[1, 1], i1>) -> (!tgc.tensor<[], f32>, !tgc.tensor<[1, 1], i1>)
  %out = tgc.break_module_hook "output" hook = 3 (%in#0) positions = [0] arity = 1 : (!tgc.tensor<[], f32>) -> !tgc.tensor<[], f32>
  tgc.break_module_hook "input" hook = 4 () positions = [] arity = 1 : () -> ()
  return
}

// -----

func.func @hook_number_negative(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{hook number must be non-negative, got -1}}
  tgc.break_hook %t hook = -1 : !tgc.tensor<[], f32>
  return
}

// -----

func.func @module_hook_stage(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{stage must be "input" or "output", got "inputs"}}
  %r = tgc.break_module_hook "inputs" hook = 0 (%t) positions = [0] arity = 1 : (!tgc.tensor<[], f32>) -> !tgc.tensor<[], f32>
  return
}

// -----

func.func @module_hook_positions(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{positions must increase within [0, arity = 2)}}
  %r:2 = tgc.break_module_hook "input" hook = 0 (%t, %t) positions = [1, 1] arity = 2 : (!tgc.tensor<[], f32>, !tgc.tensor<[], f32>) -> (!tgc.tensor<[], f32>, !tgc.tensor<[], f32>)
  return
}

// -----

func.func @module_hook_types(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{results must have the types of the operands}}
  %r = tgc.break_module_hook "output" hook = 0 (%t) positions = [0] arity = 1 : (!tgc.tensor<[], f32>) -> !tgc.tensor<[], f64>
  return
}

// -----

func.func @module_hook_count(%t: !tgc.tensor<[], f32>) {
  // expected-error @below {{has 1 tensors but 2 positions}}
  %r = tgc.break_module_hook "output" hook = 0 (%t) positions = [0, 1] arity = 2 : (!tgc.tensor<[], f32>) -> !tgc.tensor<[], f32>
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
