// Reader for torch.export archives (.pt2): the serialized ExportedProgram to tgc IR.
#ifndef TGC_FRONTEND_EXPORT_EXPORTREADER_H
#define TGC_FRONTEND_EXPORT_EXPORTREADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace tgc::pt2 {

/// Reads a `.pt2` archive written by `torch.export.save` into a module holding
/// `func.func @forward` over capture-level `!tgc.tensor`s and one `tgc.global` per
/// parameter, buffer and constant. Failures are reported as MLIR diagnostics (on the
/// archive, or on the node with its Python source location) and yield null.
mlir::OwningOpRef<mlir::ModuleOp> readExportArchive(llvm::StringRef path, mlir::MLIRContext *ctx);

} // namespace tgc::pt2

#endif // TGC_FRONTEND_EXPORT_EXPORTREADER_H
