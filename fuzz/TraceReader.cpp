//===- TraceReader.cpp - Fuzzes the .trace reader --------------------------===//
//
// Any bytes as a .trace: the header's JSON, the marshalled code objects and the
// object graph, then the symbolic interpretation of whatever bytecode they hold.
// The reader must answer with a module or an error, in bounded time.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tgc/Frontend/Trace/TraceReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = tgc::fuzz::scratchFile(data, size, ".trace");
  (void)tgc::trace::readTrace(path, &tgc::fuzz::nextContext());
  return 0;
}
