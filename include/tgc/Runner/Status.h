//===- Status.h - Success or an error message, for the runner ---*- C++ -*-===//
//
// The runner is plain C++ with no LLVM dependency (it is also built into
// libtgc_runner.so, which Python loads), so it reports errors with this small
// type instead of llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNNER_STATUS_H
#define TGC_RUNNER_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace tgc::runner {

/// Success, or the message of what failed. Converts to true on failure, as
/// llvm::Error does: `if (Status status = f()) return status;`.
class [[nodiscard]] Status {
public:
  /// The success value.
  static Status success() { return Status(); }
  /// A failure that says `message` (without an `error:` prefix).
  static Status error(std::string message) {
    Status status;
    status.text = std::move(message);
    return status;
  }

  /// True on failure.
  explicit operator bool() const { return text.has_value(); }
  /// The failure's message ("" on success).
  const std::string &message() const {
    static const std::string none;
    return text ? *text : none;
  }

private:
  std::optional<std::string> text;
};

} // namespace tgc::runner

#endif // TGC_RUNNER_STATUS_H
