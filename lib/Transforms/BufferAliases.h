// The uses of a bufferized temporary through its views, shared by the passes that
// reason about when a buffer's memory is last touched (tgc-plan-memory,
// tgc-elide-result-copies).
#ifndef TGC_TRANSFORMS_BUFFERALIASES_H
#define TGC_TRANSFORMS_BUFFERALIASES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace tgc {

/// Calls `visit` on every user of `buffer` and of its views (the results of
/// ViewLikeOpInterface ops whose source it is, transitively). Returns false when an
/// alias may outlive those users: a user is a terminator (the buffer is returned or
/// yielded) or a dealloc, or has a memref or tensor result that is not a view of it.
bool visitAliasUsers(mlir::Value buffer, llvm::function_ref<void(mlir::Operation *)> visit);

} // namespace tgc

#endif // TGC_TRANSFORMS_BUFFERALIASES_H
