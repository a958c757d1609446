// Object emission: a lowered model translated to LLVM IR, given its model interface,
// optimized and compiled in process for the host.
#ifndef TGC_LIB_TARGET_OBJECTEMISSION_H
#define TGC_LIB_TARGET_OBJECTEMISSION_H

#include "SignatureReader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <string>
#include <utility>
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

/// An object file of a model: a file at `path`, or an anonymous memory file (Linux
/// `memfd_create`) that `path` names through /proc while this object lives. The
/// weights of a model linked right away go to memory: written to disk, hundreds of MB
/// cost seconds, only to be read back by the linker once.
class ObjectFile {
public:
  explicit ObjectFile(std::string path, int memoryFd = -1)
      : path_(std::move(path)), memoryFd_(memoryFd) {}
  ObjectFile(ObjectFile &&other) noexcept
      : path_(std::move(other.path_)), memoryFd_(std::exchange(other.memoryFd_, -1)) {}
  ObjectFile &operator=(ObjectFile &&) = delete;
  ObjectFile(const ObjectFile &) = delete;
  ObjectFile &operator=(const ObjectFile &) = delete;
  ~ObjectFile();

  const std::string &path() const { return path_; }
  bool inMemory() const { return memoryFd_ >= 0; }

private:
  std::string path_;
  int memoryFd_;
};

/// Translates `module` (the LLVM dialect, as the pipeline's llvm phase leaves it) to
/// LLVM IR, adds the interface of `model` (addModelInterface), splits it into parts that
/// are optimized and compiled for `target` in parallel, and returns their object
/// files, `<objectStem>.<i>.o`, and the object of its weights and large constants,
/// `<objectStem>.data.o`, which is a memory file when `dataInMemory` (and the system
/// has them). With `timing`, the steps are timed under it.
mlir::FailureOr<std::vector<ObjectFile>>
emitModelObjects(mlir::ModuleOp module, const ModelAbi &model, llvm::StringRef objectStem,
                 const CpuTarget &target, bool dataInMemory, mlir::TimingScope *timing = nullptr);

/// The object `<objectStem>.json.o` that defines the exported, NUL-terminated string
/// `<modelName>_json_sha256`: the SHA-256 of `jsonText` (model.json) in lower-case hex,
/// which tgc.load compares with the model.json beside the library (docs/abi.md).
mlir::FailureOr<ObjectFile> emitJsonHashObject(llvm::StringRef modelName, llvm::StringRef jsonText,
                                               llvm::StringRef objectStem, const CpuTarget &target,
                                               mlir::Location loc);

} // namespace tgc

#endif // TGC_LIB_TARGET_OBJECTEMISSION_H
