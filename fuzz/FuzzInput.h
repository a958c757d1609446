//===- FuzzInput.h - What the libFuzzer harnesses share ---------*- C++ -*-===//
//
// Readers that take a path get the input through a scratch file; readers that
// report through MLIR diagnostics get a fresh context whose diagnostics are
// dropped (an error is a correct answer to a malformed input; a crash, a
// sanitizer report or a hang is not).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_FUZZ_FUZZINPUT_H
#define TGC_FUZZ_FUZZINPUT_H

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace tgc::fuzz {

/// `data` written to a scratch file of this process with extension `ext`; its path.
inline std::string scratchFile(const uint8_t *data, size_t size, const char *ext) {
  std::string path = "/tmp/tgc-fuzz-" + std::to_string(getpid()) + ext;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  out.close();
  if (!out) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

/// A single-threaded MLIR context with the tgc dialect, dropping diagnostics.
struct QuietContext {
  mlir::MLIRContext ctx{mlir::MLIRContext::Threading::DISABLED};
  mlir::ScopedDiagnosticHandler quiet{&ctx, [](mlir::Diagnostic &) { return mlir::success(); }};
  QuietContext() { ctx.loadDialect<tgc::TgcDialect>(); }
};

/// The context for the next input of a reader harness. A fresh one costs about 7 ms
/// under the sanitizers (most of it the tgc dialect's registration), which is most of
/// a small input's time, so consecutive inputs share one: it is replaced every
/// TGC_FUZZ_INPUTS_PER_CONTEXT inputs (default 64; 1 gives each input its own, which
/// is how a crash that needs what earlier inputs left in the context shows itself
/// when its artifact alone does not reproduce it). Replacing it bounds what the
/// inputs leave behind: uniqued attributes and types, weight blobs.
inline mlir::MLIRContext &nextContext() {
  static const unsigned perContext = [] {
    const char *value = std::getenv("TGC_FUZZ_INPUTS_PER_CONTEXT");
    int n = value ? std::atoi(value) : 64;
    return n > 0 ? unsigned(n) : 1u;
  }();
  static QuietContext *context = nullptr;
  static unsigned uses = 0;
  if (!context || uses == perContext) {
    delete context;
    context = new QuietContext;
    uses = 0;
  }
  ++uses;
  return context->ctx;
}

} // namespace tgc::fuzz

#endif // TGC_FUZZ_FUZZINPUT_H
