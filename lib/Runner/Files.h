//===- Files.h - Tensors between safetensors files and models ---*- C++ -*-===//
//
// What `tgc run` needs to feed a model from a safetensors file and save what it
// returns: dtypes both ways, views and copies, the replay list's JSON file.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_RUNNER_FILES_H
#define TGC_LIB_RUNNER_FILES_H

#include "tgc/Runner/Status.h"
#include "tgc/Runner/Tensor.h"
#include "tgc/Support/Safetensors.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

namespace tgc::runner {

/// The message of `error` as a Status (success when there is none).
Status toStatus(llvm::Error error);

/// A DLTensor viewing a safetensors tensor's bytes (contiguous, CPU).
DLTensor viewTensor(SafetensorsTensor &tensor);

/// Copies a (possibly strided) host tensor into a safetensors tensor `name`.
Status saveTensor(const std::string &name, const DLTensor &tensor, SafetensorsTensor &saved);

/// The strides of a tensor whose layout is not row-major, as JSON text ("[1, 3]", in
/// elements), which `tgc run` records in the outputs' metadata as `strides.<name>`
/// (safetensors stores tensors row-major); "" for a row-major tensor.
std::string nonRowMajorStrides(const DLTensor &tensor);

/// The tensor of `file` named `name`, else `input.<index>`, or null.
SafetensorsTensor *findInput(SafetensorsFile &file, const std::string &name, size_t index);

/// Saves state `name` of a host tensor as `state.<name>`.
Status saveState(const std::string &name, HostTensor &value, SafetensorsTensor &saved);

/// Names each tensor value of a replay list by the safetensors key `tgc run`
/// writes it under: `"tensor": "replay.<output>"`.
void nameReplayTensors(nlohmann::json &value);

struct RunOptions;
/// `tgc run` of a program with graph breaks (model.json has a "program").
Status runProgram(const RunOptions &options);

/// Writes `value` to `<output stem>.replay.json` beside the outputs file.
Status writeReplayJson(const std::string &outputPath, const nlohmann::json &value);

} // namespace tgc::runner

#endif // TGC_LIB_RUNNER_FILES_H
