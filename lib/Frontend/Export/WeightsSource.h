// Where a .pt2 archive stores the initial values of parameters, buffers and constants.
#ifndef TGC_LIB_FRONTEND_EXPORT_WEIGHTSSOURCE_H
#define TGC_LIB_FRONTEND_EXPORT_WEIGHTSSOURCE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>

namespace tgc::pt2 {

class Pt2Archive;

/// One parameter, buffer or constant as stored: a strided view of a whole storage.
struct StoredTensor {
  /// The storage's bytes; owned by the source and valid while it lives.
  llvm::StringRef storage;
  mlir::Type dtype;
  /// The view, in elements.
  llvm::SmallVector<int64_t> sizes;
  llvm::SmallVector<int64_t> strides;
  int64_t storageOffset = 0;
};

/// The stored tensors of one program, whichever way the archive holds them, so that
/// the reader builds globals the same way for every torch release (docs/pt2-format.md
/// §8, §10).
class WeightsSource {
public:
  virtual ~WeightsSource();
  /// The stored tensor named `fqn` (a state-dict key or a constant's name); a
  /// diagnostic at `loc` when the archive has none or it cannot be read.
  virtual mlir::FailureOr<StoredTensor> lookup(llvm::StringRef fqn, mlir::Location loc) = 0;
};

/// torch >= 2.9: `data/weights/<program>_weights_config.json` and
/// `data/constants/<program>_constants_config.json` map each fqn to a raw storage file
/// beside them and the view of it. A missing config means no tensors of that kind.
mlir::FailureOr<std::unique_ptr<WeightsSource>>
createPayloadConfigSource(const Pt2Archive &archive, llvm::StringRef program, mlir::Location loc);

/// torch 2.6 - 2.8: `torch.save` zips of `dict[str, Tensor]` stored as the archive's
/// `members` (the state dict, then the constants), searched in that order. Each is
/// opened and unpickled when a lookup first needs it; a member that is missing or
/// empty holds no tensors, as for torch's own loader.
std::unique_ptr<WeightsSource> createPickledSource(const Pt2Archive &archive,
                                                   llvm::ArrayRef<std::string> members,
                                                   mlir::MLIRContext *ctx);

} // namespace tgc::pt2

#endif // TGC_LIB_FRONTEND_EXPORT_WEIGHTSSOURCE_H
