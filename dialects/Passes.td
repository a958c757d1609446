// Passes over the tgc dialect and its conversions.
#ifndef TGC_PASSES_TD
#define TGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def FunctionalizePass : Pass<"tgc-functionalize", "::mlir::ModuleOp"> {
  let summary = "Turn views and in-place ops into pure value-level ops";
  let description = [{
    Before: functions over `!tgc.tensor` (references to storage) with in-place ops and
    views. After: functions over `!tgc.vtensor` whose ops are pure; every graph input that
    was written gets one write-back: the function returns its final value as an extra
    result tagged `tgc.kind = "buffer_mutation"` / `"user_input_mutation"` (with
    `tgc.target` naming the input). A write through a view is a write to its base: the
    view is scattered back with its `buildScatter`, and later reads of other views of the
    same base are replayed on the new base value.
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

#endif // TGC_PASSES_TD
