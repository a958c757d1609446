// `tgc inspect model.so`: the signature of a compiled model, from its model.json.
#ifndef TGC_TOOLS_INSPECT_H
#define TGC_TOOLS_INSPECT_H

#include "llvm/Support/raw_ostream.h"

#include <string>

/// Prints the model's inputs, outputs, state, gradients, dynamic size ranges, memory and
/// target to `os`; returns 0, or 1 after an `error:` line on `errs`.
int inspectModel(const std::string &soPath, llvm::raw_ostream &os, llvm::raw_ostream &errs);

#endif // TGC_TOOLS_INSPECT_H
