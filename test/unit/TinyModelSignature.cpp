//===- TinyModelSignature.cpp - Signatures of the hand-written test models ===//

#include "TinyModelSignature.h"

using namespace tgc;

namespace {
template <typename T> std::string_view bytesOf(const T &value) {
  return {reinterpret_cast<const char *>(&value), sizeof value};
}

ArgInfo stateArg(ArgKind kind, DType dtype, const std::string &name, std::vector<SizeExpr> sizes) {
  ArgInfo arg;
  arg.kind = kind;
  arg.dtype = dtype;
  arg.name = name;
  arg.sizes = std::move(sizes);
  return arg;
}
} // namespace

ModelSignature test::tinySignature(std::string &weights) {
  SizeExpr batch = SizeExpr::symbol(0), four = SizeExpr::constant(4);
  ModelSignature sig;
  sig.name = "tiny";
  sig.symbols = {{"batch", kTinyBatchMin, kTinyBatchMax}};

  ArgInfo w = stateArg(ArgKind::Parameter, DType::float32(), "w", {four});
  ArgInfo count = stateArg(ArgKind::Buffer, DType::int64(), "count", {});
  ArgInfo bias = stateArg(ArgKind::Constant, DType::float32(), "bias", {});
  int64_t zero = 0;
  weights.clear();
  appendWeights(weights, w, bytesOf(kTinyW));
  appendWeights(weights, count, bytesOf(zero));
  appendWeights(weights, bias, bytesOf(kTinyBias));
  ArgInfo x = stateArg(ArgKind::UserInput, DType::float32(), "x", {batch, four});
  ArgInfo y = stateArg(ArgKind::UserInput, DType::float32(), "y", {batch});
  sig.args = {w, count, bias, x, y};

  sig.results = {
      {ResultKind::UserOutput, DType::float32(), "out", kNoTarget, {batch, four}, {}},
      {ResultKind::UserOutput,
       DType::float32(),
       "ys",
       kNoTarget,
       {SizeExpr::constant(2) * batch + SizeExpr::constant(1)},
       {}},
      {ResultKind::BufferMutation, DType::int64(), "count", 1, {}, {}},
      {ResultKind::UserInputMutation, DType::float32(), "x", 3, {batch, four}, {}},
  };
  return sig;
}

ModelSignature test::scaleSignature(std::string &weights) {
  SizeExpr batch = SizeExpr::symbol(0), four = SizeExpr::constant(4);
  ModelSignature sig;
  sig.name = "scale";
  sig.symbols = {{"batch", 1, 16}};
  ArgInfo w = stateArg(ArgKind::Parameter, DType::float32(), "w", {four});
  ArgInfo calls = stateArg(ArgKind::Buffer, DType::int64(), "calls", {});
  ArgInfo acc = stateArg(ArgKind::Buffer, DType::float32(), "acc", {four});
  int64_t zero = 0;
  weights.clear();
  appendWeights(weights, w, bytesOf(kScaleW));
  appendWeights(weights, calls, bytesOf(zero));
  appendWeights(weights, acc, bytesOf(kScaleAcc));
  ArgInfo x = stateArg(ArgKind::UserInput, DType::float32(), "x", {batch, four});
  sig.args = {w, calls, acc, x};
  sig.results = {
      {ResultKind::UserOutput, DType::float32(), "output.0", kNoTarget, {batch, four}, {}},
      {ResultKind::UserOutput, DType::int64(), "output.1", kNoTarget, {}, {}},
      {ResultKind::BufferMutation, DType::int64(), "calls", 1, {}, {}},
  };
  BackwardInfo bw;
  bw.saved = {{DType::float32(), {four}, 0},
              {DType::float32(), {batch, four}, kNoTarget},
              {DType::float32(), {four}, kNoTarget}};
  bw.tangents = {0};
  bw.results = {
      {ResultKind::Gradient, DType::float32(), "w", 0, {four}, {}},
      {ResultKind::Gradient, DType::float32(), "input.0", 3, {batch, four}, {}},
      {ResultKind::BufferMutation, DType::float32(), "acc", 2, {four}, {}},
      {ResultKind::UserInputMutation, DType::float32(), "x", 3, {batch, four}, {}},
  };
  sig.backward = bw;
  return sig;
}

ModelSignature test::halvesSignature() {
  SizeExpr n = SizeExpr::symbol(0);
  ModelSignature sig;
  sig.name = "halves";
  sig.symbols = {{"n", 0, std::numeric_limits<int64_t>::max()}};
  ArgInfo z;
  z.kind = ArgKind::UserInput;
  z.name = "z";
  z.sizes = {SizeExpr::constant(2) * n + SizeExpr::constant(1)};
  sig.args = {z};
  sig.results = {{ResultKind::UserOutput, DType::float32(), "out", kNoTarget, {n}, {}}};
  return sig;
}
