//===- Files.cpp - Tensors between safetensors files and models -----------===//

#include "Files.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace tgc;
using namespace tgc::runner;

namespace {

struct DTypePair {
  SafetensorsDType safetensors;
  uint8_t code;
  uint8_t bits;
};

constexpr DTypePair kDTypePairs[] = {
    {SafetensorsDType::F32, kDLFloat, 32},    {SafetensorsDType::F64, kDLFloat, 64},
    {SafetensorsDType::F16, kDLFloat, 16},    {SafetensorsDType::BF16, kDLBfloat, 16},
    {SafetensorsDType::I64, kDLInt, 64},      {SafetensorsDType::I32, kDLInt, 32},
    {SafetensorsDType::I16, kDLInt, 16},      {SafetensorsDType::I8, kDLInt, 8},
    {SafetensorsDType::U8, kDLUInt, 8},       {SafetensorsDType::U16, kDLUInt, 16},
    {SafetensorsDType::U32, kDLUInt, 32},     {SafetensorsDType::U64, kDLUInt, 64},
    {SafetensorsDType::BOOL, TGC_DL_BOOL, 8},
};

DLDataType toDLDataType(SafetensorsDType dtype) {
  for (const DTypePair &pair : kDTypePairs)
    if (pair.safetensors == dtype)
      return DLDataType{pair.code, pair.bits, 1};
  return DLDataType{kDLFloat, 32, 1};
}

std::optional<SafetensorsDType> fromDLDataType(DLDataType dtype) {
  if (dtype.lanes != 1)
    return std::nullopt;
  for (const DTypePair &pair : kDTypePairs)
    if (pair.code == dtype.code && pair.bits == dtype.bits)
      return pair.safetensors;
  return std::nullopt;
}

} // namespace

Status tgc::runner::toStatus(llvm::Error error) {
  if (!error)
    return Status::success();
  return Status::error(llvm::toString(std::move(error)));
}

DLTensor tgc::runner::viewTensor(SafetensorsTensor &tensor) {
  DLTensor view{};
  view.data = tensor.data.empty() ? nullptr : &tensor.data[0];
  view.device = {kDLCPU, 0};
  view.ndim = int32_t(tensor.shape.size());
  view.dtype = toDLDataType(tensor.dtype);
  view.shape = tensor.shape.data();
  view.strides = nullptr;
  view.byte_offset = 0;
  return view;
}

Status tgc::runner::saveTensor(const std::string &name, const DLTensor &tensor,
                               SafetensorsTensor &saved) {
  std::optional<SafetensorsDType> dtype = fromDLDataType(tensor.dtype);
  if (!dtype)
    return Status::error("'" + name + "' has a dtype safetensors cannot store (code " +
                         std::to_string(tensor.dtype.code) + ", bits " +
                         std::to_string(tensor.dtype.bits) + ")");
  HostTensor copy;
  if (Status status = copyToHost(tensor, name, copy))
    return status;
  saved.name = name;
  saved.dtype = *dtype;
  saved.shape = std::move(copy.shape);
  saved.data.assign(copy.data.begin(), copy.data.end());
  return Status::success();
}

std::string tgc::runner::nonRowMajorStrides(const DLTensor &tensor) {
  if (!tensor.strides)
    return "";
  bool rowMajor = true;
  int64_t expected = 1;
  for (int32_t d = tensor.ndim - 1; d >= 0; --d) {
    rowMajor &= tensor.shape[d] == 1 || tensor.strides[d] == expected;
    expected *= tensor.shape[d];
  }
  if (rowMajor)
    return "";
  std::string text = "[";
  for (int32_t d = 0; d < tensor.ndim; ++d)
    text += (d ? ", " : "") + std::to_string(tensor.strides[d]);
  return text + "]";
}

SafetensorsTensor *tgc::runner::findInput(SafetensorsFile &file, const std::string &name,
                                          size_t index) {
  auto named = [&](const std::string &wanted) -> SafetensorsTensor * {
    auto found = std::find_if(file.tensors.begin(), file.tensors.end(),
                              [&](const SafetensorsTensor &t) { return t.name == wanted; });
    return found == file.tensors.end() ? nullptr : &*found;
  };
  if (SafetensorsTensor *found = named(name))
    return found;
  return named("input." + std::to_string(index));
}

Status tgc::runner::saveState(const std::string &name, HostTensor &value,
                              SafetensorsTensor &saved) {
  if (!fromDLDataType(value.dtype))
    return Status::error("buffer '" + name + "' has a dtype safetensors cannot store");
  return saveTensor("state." + name, value.view(), saved);
}

void tgc::runner::nameReplayTensors(nlohmann::json &value) {
  if (value.is_array()) {
    for (nlohmann::json &item : value)
      nameReplayTensors(item);
    return;
  }
  if (!value.is_object())
    return;
  if (value.value("type", "") == "tensor" && value.contains("output") &&
      value["output"].is_number_integer()) {
    value["tensor"] = "replay." + std::to_string(value["output"].get<int64_t>());
    return;
  }
  for (auto &[key, item] : value.items())
    nameReplayTensors(item);
}

Status tgc::runner::writeReplayJson(const std::string &outputPath, const nlohmann::json &value) {
  llvm::SmallString<256> path(outputPath);
  llvm::sys::path::replace_extension(path, "replay.json");
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return Status::error(path.str().str() + ": cannot write: " + ec.message());
  out << value.dump(2) << "\n";
  return Status::success();
}
