//===- Run.h - `tgc run`: run a model.so on safetensors files ---*- C++ -*-===//
//
// `tgc run model.so --inputs in.safetensors -o out.safetensors` loads a
// compiled model, feeds it the named tensors of a safetensors file and saves
// its outputs, mutated inputs and buffers, so models can be checked against
// PyTorch without writing C. With --train it also runs the backward on the
// gradients of --grad-outputs and saves the gradients. A program with graph
// breaks runs through the program executor (Program.h).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNNER_RUN_H
#define TGC_RUNNER_RUN_H

#include "tgc/Runner/Status.h"

#include <string>

namespace tgc::runner {

/// What `tgc run` was asked to do.
struct RunOptions {
  /// The compiled model (X.so; its name is read from X.json beside it).
  std::string soPath;
  /// Inputs by signature name, or `input.N` by position.
  std::string inputsPath;
  /// Receives `output.N`, `mutated.<input>`, `state.<buffer fqn>` and
  /// `replay.N` (outputs that hold Python state); the replay list goes to
  /// `<stem>.replay.json` beside it (docs/replay.md).
  std::string outputPath;
  /// Run forward (keeping saved values) and backward, and also write
  /// `grad.<name>` per gradient; the model must be trainable.
  bool train = false;
  /// With `train`: the gradient of each output with one, named `output.N`.
  std::string gradOutputsPath;
  /// --device: where the model must run ("cpu" or "cuda"; "": wherever it was compiled
  /// for). A CUDA model's inputs are copied to the device and its results back.
  std::string device;
};

/// Runs the model (or the program with graph breaks) once and writes the
/// results; the caller reports a failure as `error: <message>`.
Status runModel(const RunOptions &options);

} // namespace tgc::runner

#endif // TGC_RUNNER_RUN_H
