// model.json's "program": how the caller runs the graphs of a program with graph breaks
// (docs/graph-breaks.md), written from the attributes the .trace reader records on them.
#ifndef TGC_TARGET_PROGRAMJSON_H
#define TGC_TARGET_PROGRAMJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace tgc {

/// The program whose nodes are `graphs` (node 0 runs first) as compact JSON text:
/// `{"inputs": [...], "nodes": [{"graph", "inputs", "outputs", "then"}...]}`, graph i
/// named `graphNames[i]`. Reads each graph's `program::kGraphInputs`, `kGraphOutputs` and
/// `kStep` and the first graph's `kProgramInputs` (include/tgc/Dialect/Attributes.h);
/// a missing or malformed one is a diagnostic on that graph.
mlir::FailureOr<std::string> writeProgramJson(llvm::ArrayRef<mlir::ModuleOp> graphs,
                                              llvm::ArrayRef<std::string> graphNames);

} // namespace tgc

#endif // TGC_TARGET_PROGRAMJSON_H
