// How both readers describe the arguments of the @forward they build.
#ifndef TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H
#define TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H

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

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_GRAPHINPUTS_H
