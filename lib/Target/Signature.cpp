//===- Signature.cpp - Names and queries the signature writers share ------===//

#include "SignatureInternal.h"

#include <algorithm>
#include <map>
#include <stdexcept>

using namespace tgc;
using namespace tgc::detail;

std::string tgc::dtypeName(DType dtype) {
  static const std::map<std::pair<int, int>, const char *> names = {
      {{2, 16}, "float16"},      {{2, 32}, "float32"},     {{2, 64}, "float64"},
      {{4, 16}, "bfloat16"},     {{0, 8}, "int8"},         {{0, 16}, "int16"},
      {{0, 32}, "int32"},        {{0, 64}, "int64"},       {{1, 8}, "uint8"},
      {{1, 16}, "uint16"},       {{1, 32}, "uint32"},      {{1, 64}, "uint64"},
      {{5, 64}, "complex64"},    {{5, 128}, "complex128"}, {{6, 8}, "bool"},
      {{10, 8}, "float8_e4m3fn"}};
  auto it = names.find({dtype.code, dtype.bits});
  if (it != names.end())
    return it->second;
  return "dtype(code=" + std::to_string(dtype.code) + ", bits=" + std::to_string(dtype.bits) + ")";
}

const char *detail::argKindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Parameter:
    return "parameter";
  case ArgKind::Buffer:
    return "buffer";
  case ArgKind::Constant:
    return "constant";
  case ArgKind::UserInput:
    return "input";
  }
  return "argument";
}

const char *detail::resultKindName(ResultKind kind) {
  switch (kind) {
  case ResultKind::UserOutput:
    return "output";
  case ResultKind::BufferMutation:
    return "new value of buffer";
  case ResultKind::UserInputMutation:
    return "new value of input";
  case ResultKind::Gradient:
    return "gradient of";
  }
  return "result";
}

bool detail::isMutation(const ResultInfo &result) {
  return result.kind == ResultKind::BufferMutation || result.kind == ResultKind::UserInputMutation;
}

bool detail::isMutated(const ModelSignature &sig, size_t index) {
  auto rewrites = [&](const ResultInfo &result) {
    return isMutation(result) && result.target == index;
  };
  return std::any_of(sig.results.begin(), sig.results.end(), rewrites) ||
         (sig.backward &&
          std::any_of(sig.backward->results.begin(), sig.backward->results.end(), rewrites));
}

/// The bytes of a tensor whose sizes are constants, if they are.
static std::optional<int64_t> constantBytes(DType dtype, const std::vector<SizeExpr> &sizes) {
  int64_t bytes = dtype.bits / 8;
  for (const SizeExpr &size : sizes) {
    if (!size.isConstant() || checkProgram(size.ops(), 0))
      return std::nullopt;
    try {
      if (__builtin_mul_overflow(bytes, size.constantValue(), &bytes))
        return std::nullopt;
    } catch (const std::domain_error &) {
      return std::nullopt;
    }
  }
  return bytes;
}

std::pair<int64_t, std::optional<int64_t>> detail::savedTotals(const BackwardInfo &bw) {
  int64_t count = bw.savedCount >= 0 ? bw.savedCount : int64_t(bw.saved.size());
  if (bw.savedBytes >= 0)
    return {count, bw.savedBytes};
  int64_t total = 0;
  for (const SavedInfo &saved : bw.saved) {
    std::optional<int64_t> bytes = constantBytes(saved.dtype, saved.sizes);
    if (!bytes || __builtin_add_overflow(total, *bytes, &total))
      return {count, std::nullopt};
  }
  return {count, total};
}
