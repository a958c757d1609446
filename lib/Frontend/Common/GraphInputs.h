// How both readers describe the arguments of the @forward they build.
#ifndef TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H
#define TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tgc::frontend {

/// The attributes of a graph input argument of @forward (`tgc.kind`, `tgc.name` and,
/// for parameters, buffers and constants, `tgc.global` naming its global), as both
/// readers write them.
mlir::DictionaryAttr getGraphInputAttrs(mlir::MLIRContext *ctx, llvm::StringRef kind,
                                        llvm::StringRef name);

/// A resource name for `fqn` (a parameter's dotted name) that is a valid identifier in
/// the IR's text form, for the dense_resource blobs of `tgc.global`s.
std::string getResourceName(llvm::StringRef fqn);

/// An allocator for copyStrided that makes `blob` a heap blob of the bytes asked for,
/// 64-byte aligned as archives store tensors (consumers may map the data directly);
/// the copy is then the only write of a weight's bytes.
struct BlobAllocator {
  mlir::AsmResourceBlob &blob;
  char *operator()(size_t bytes) const {
    blob = mlir::HeapAsmResourceBlob::allocate(bytes, /*align=*/64);
    return blob.getMutableData().data();
  }
};

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H
