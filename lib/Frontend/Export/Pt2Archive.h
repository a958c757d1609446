// Read access to the members of a .pt2 zip archive (libzip), with errors as diagnostics.
#ifndef TGC_LIB_FRONTEND_EXPORT_PT2ARCHIVE_H
#define TGC_LIB_FRONTEND_EXPORT_PT2ARCHIVE_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>

struct zip;

namespace tgc::pt2 {

/// An opened `.pt2` archive, or a `torch.save` zip stored in one. torch.export puts every
/// member under one top folder named after the file's stem (`train/models/model.json`),
/// torch.save under `archive/`; members are addressed relative to that folder, which is
/// discovered rather than assumed (torch <= 2.7's archives have none).
class Pt2Archive {
public:
  /// Opens `path`; reports why it cannot be read (not a zip, truncated, unreadable) at
  /// `loc` and returns null on failure.
  static std::unique_ptr<Pt2Archive> open(llvm::StringRef path, mlir::Location loc);
  /// Opens a zip held in memory: the `torch.save` zips that older archives store as
  /// members (`serialized_state_dict.pt`). `name` (the member) names it in diagnostics.
  static std::unique_ptr<Pt2Archive> openBuffer(std::string data, llvm::StringRef name,
                                                mlir::Location loc);
  ~Pt2Archive();
  Pt2Archive(const Pt2Archive &) = delete;
  Pt2Archive &operator=(const Pt2Archive &) = delete;

  /// Whether the member `name` (relative to the top folder) exists.
  bool contains(llvm::StringRef name) const;
  /// The whole content of member `name`; a diagnostic at `loc` when it is missing or
  /// cannot be read (bad CRC, truncated data).
  mlir::FailureOr<std::string> read(llvm::StringRef name, mlir::Location loc) const;
  /// Names (relative to the top folder) of the members directly or indirectly under
  /// `folder`, in archive order.
  llvm::SmallVector<std::string> list(llvm::StringRef folder) const;

private:
  Pt2Archive(struct zip *handle, uint64_t fileSize, std::string buffer, std::string outerName);
  std::string fullName(llvm::StringRef name) const;
  /// "member '<full name>'", plus " of '<outer member>'" for an archive in a buffer.
  std::string describeMember(llvm::StringRef name) const;

  struct zip *handle;
  /// The bytes of an archive opened from memory (libzip reads them in place).
  std::string buffer;
  /// The member of the enclosing archive that `buffer` came from; "" for a file.
  std::string outerName;
  /// "<stem>/", or "" for archives whose members are not in a folder.
  std::string prefix;
  /// Bounds member sizes claimed by the (untrusted) central directory.
  uint64_t fileSize;
};

} // namespace tgc::pt2

#endif // TGC_LIB_FRONTEND_EXPORT_PT2ARCHIVE_H
