// Reader for tgc traces (.trace): the captured CPython bytecode, interpreted into tgc IR.
#ifndef TGC_FRONTEND_TRACE_TRACEREADER_H
#define TGC_FRONTEND_TRACE_TRACEREADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace tgc::trace {

/// Reads a `.trace` written by tgc-capture (docs/trace-format.md) and interprets its
/// entry call symbolically (docs/bytecode.md) into a module holding `func.func @forward`
/// over capture-level `!tgc.tensor`s — the entry module's parameters and buffers (each
/// with a `tgc.global`), then the example inputs — like the .pt2 reader's. Errors are
/// diagnostics at the user's file:line and yield null. Without `training` (a compile
/// with no backward), submodule backward hooks are ignored: they never run.
mlir::OwningOpRef<mlir::ModuleOp> readTrace(llvm::StringRef path, mlir::MLIRContext *ctx,
                                            bool training = true);

} // namespace tgc::trace

#endif // TGC_FRONTEND_TRACE_TRACEREADER_H
