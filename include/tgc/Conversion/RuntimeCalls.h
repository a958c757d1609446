// Calls of the runtime's helpers from generated code (docs/abi.md): their declarations
// and the plain pointers they take.
#ifndef TGC_CONVERSION_RUNTIMECALLS_H
#define TGC_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace tgc {

/// The private declaration `func.func @name(args)` of runtime helper `name` in `module`,
/// added the first time it is asked for.
inline mlir::func::FuncOp declareRuntimeHelper(mlir::OpBuilder &b, mlir::ModuleOp module,
                                               llvm::StringRef name, mlir::TypeRange args) {
  if (auto existing = module.lookupSymbol<mlir::func::FuncOp>(name))
    return existing;
  return mlir::func::createFnDecl(b, module, name, b.getFunctionType(args, {}),
                                  /*setPrivate=*/true);
}

/// `memref`'s aligned pointer as an `!llvm.ptr`, for a plain C call.
inline mlir::Value alignedPointer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value memref) {
  mlir::Value address = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  mlir::Value asInt = mlir::arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return mlir::LLVM::IntToPtrOp::create(b, loc, mlir::LLVM::LLVMPointerType::get(b.getContext()),
                                        asInt);
}

} // namespace tgc

#endif // TGC_CONVERSION_RUNTIMECALLS_H
