//===- Pt2Reader.cpp - Fuzzes the torch.export archive reader -------------===//
//
// Any bytes as a .pt2: the zip, the serialized program's JSON, the pickled
// constants and the weights. The reader must answer with a module or an error.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tgc/Frontend/Export/ExportReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = tgc::fuzz::scratchFile(data, size, ".pt2");
  (void)tgc::pt2::readExportArchive(path, &tgc::fuzz::nextContext());
  return 0;
}
