// torch.autocast's dtype rules for the ATen calls of a region that runs under autocast:
// what both frontends apply where a program enters `torch.autocast(...)`.
#ifndef TGC_LIB_FRONTEND_COMMON_AUTOCAST_H
#define TGC_LIB_FRONTEND_COMMON_AUTOCAST_H

#include "AtenCall.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tgc::frontend {

/// One `torch.autocast(device_type, dtype, enabled)` region.
struct AutocastRegion {
  std::string deviceType; ///< "cpu", "cuda", ...: autocast acts on this device's tensors
  mlir::Type dtype;       ///< the lower-precision type (bf16 on the CPU, f16 on CUDA by default)
  bool enabled = true;
};

/// How autocast treats an op's floating-point tensor arguments (ATen's cast policies).
enum class AutocastPolicy {
  None,           ///< untouched
  LowerPrecision, ///< cast to the region's dtype (matmuls, convolutions, attention)
  Fp32,           ///< cast to f32 (losses, norms, exp/log on CUDA, ...)
  Fp32OptDType,   ///< reductions with a `dtype` argument: dtype = f32 unless one is given
  Promote,        ///< cast to the widest floating type among them (cat, stack, ...)
};

/// The policy of `target` (`aten.linear.default`) on `deviceType`, as torch registers
/// it for the device's Autocast dispatch key.
AutocastPolicy getAutocastPolicy(llvm::StringRef deviceType, llvm::StringRef target);

/// The autocast region that governs tensors on `deviceType`: the innermost of `regions`
/// (outermost first) for that device, or null.
const AutocastRegion *findAutocastRegion(llvm::ArrayRef<AutocastRegion> regions,
                                         llvm::StringRef deviceType);

/// Rewrites the arguments of a call of `target` the way autocast dispatch does before
/// the op runs: floating-point tensors (not f64) on an autocast device are cast
/// (`aten._to_copy`) to the policy's dtype. Does nothing outside an enabled region.
mlir::LogicalResult applyAutocast(AtenCallBuilder &calls, mlir::Location loc,
                                  llvm::ArrayRef<AutocastRegion> regions, llvm::StringRef target,
                                  std::vector<AtenArgument> &arguments,
                                  const AtenCallBuilder::ErrorFn &emitError);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_AUTOCAST_H
