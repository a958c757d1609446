//===- Signature.cpp - Fuzzes the runtime's signature decoder -------------===//
//
// Any bytes as the signature blob a model.so embeds: tgc_signature_decode must
// decode or refuse them, and tgc_rt_create (which checks what the fields mean
// and copies the state out of the weights blob) must create an instance or
// fail with a message, never read outside the blobs.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
void noEntry(void **) { std::abort(); } // never run: the harness only creates
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy of exactly `size` bytes, so reads past the blob are reported.
  std::vector<uint8_t> blob(data, data + size);
  tgc_signature sig;
  char error[256];
  if (tgc_signature_decode(blob.data(), blob.size(), &sig, error, sizeof error) == 0)
    tgc_signature_free(&sig);

  alignas(64) static uint8_t weights[256];
  tgc_model_desc desc = {TGC_ABI_VERSION, "fuzz",         blob.data(), blob.size(),
                         weights,         sizeof weights, noEntry,     nullptr};
  tgc_model *model = nullptr;
  if (tgc_rt_create(&desc, &model) != 0) {
    if (model || std::strlen(tgc_model_last_error(nullptr)) == 0)
      std::abort(); // a failure without a message, or with an instance
    return 0;
  }
  for (int64_t i = 0, n = tgc_model_num_inputs(model); i < n; ++i)
    (void)tgc_model_input_name(model, i);
  for (int64_t i = 0, n = tgc_model_num_state(model); i < n; ++i)
    (void)tgc_model_state_name(model, i);
  tgc_model_destroy(model);
  return 0;
}
