// Object emission: a lowered model translated to LLVM IR, given its model interface,
// optimized and compiled in process for the host.
#ifndef TGC_LIB_TARGET_OBJECTEMISSION_H
#define TGC_LIB_TARGET_OBJECTEMISSION_H

#include "SignatureReader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <string>
#include <vector>

namespace tgc {

/// The CPU code is generated for: `tgc compile --cpu`.
struct CpuTarget {
  std::string triple;
  /// An LLVM CPU name (the host's for `native`).
  std::string cpu;
  /// Explicit +/- features (all of the host's for `native`; none for a named CPU,
  /// whose features are implied).
  std::string features;
  /// The features code may use, sorted: what model.json records.
  std::vector<std::string> enabledFeatures;
};

/// `native` (or empty): the machine that compiles, with every feature it has; else an
/// LLVM CPU name for the host triple (`x86-64-v3`, `skylake-avx512`): portable code for
/// every machine that has at least its features. An unknown name is an error.
mlir::FailureOr<CpuTarget> resolveCpuTarget(llvm::StringRef cpu, mlir::Location loc);

/// Translates `module` (the LLVM dialect, as the pipeline's llvm phase leaves it) to
/// LLVM IR, adds the interface of `model` (addModelInterface), splits it into parts that
/// are optimized and compiled for `target` in parallel, and returns their object
/// files, `<objectStem>.<i>.o`. With `timing`, the steps are timed under it.
mlir::FailureOr<std::vector<std::string>>
emitModelObjects(mlir::ModuleOp module, const ModelAbi &model, llvm::StringRef objectStem,
                 const CpuTarget &target, mlir::TimingScope *timing = nullptr);

} // namespace tgc

#endif // TGC_LIB_TARGET_OBJECTEMISSION_H
