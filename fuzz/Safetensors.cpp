//===- Safetensors.cpp - Fuzzes the safetensors reader ---------------------===//
//
// Any bytes as a safetensors file must parse or give an error; what parses must
// serialize to bytes that parse again to the same tensors.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Safetensors.h"

#include "llvm/Support/Error.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<tgc::SafetensorsFile> file = tgc::parseSafetensors(bytes, "input");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  llvm::Expected<std::string> written = tgc::serializeSafetensors(*file);
  if (!written) { // e.g. an empty name, which the writer refuses
    llvm::consumeError(written.takeError());
    return 0;
  }
  llvm::Expected<tgc::SafetensorsFile> again = tgc::parseSafetensors(*written, "written");
  if (!again) {
    llvm::errs() << "written file does not parse: " << llvm::toString(again.takeError()) << "\n";
    std::abort();
  }
  if (again->tensors.size() != file->tensors.size() || again->metadata != file->metadata)
    std::abort();
  for (const tgc::SafetensorsTensor &tensor : file->tensors) {
    const tgc::SafetensorsTensor *read = again->find(tensor.name);
    if (!read || read->shape != tensor.shape || read->dtype != tensor.dtype ||
        read->data != tensor.data)
      std::abort();
  }
  return 0;
}
