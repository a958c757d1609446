//===- SafetensorsTest.cpp - Tests of the safetensors reader and writer ---===//

#include "tgc/Support/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <unistd.h>

using namespace tgc;

namespace {

/// "" for a value, else the error's message (consuming it).
template <typename T> std::string messageOf(llvm::Expected<T> &value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

SafetensorsTensor makeTensor(const std::string &name, SafetensorsDType dtype,
                             std::vector<int64_t> shape) {
  SafetensorsTensor tensor;
  tensor.name = name;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  size_t nbytes = size_t(tensor.numElements()) * safetensorsDTypeSize(dtype);
  for (size_t i = 0; i < nbytes; ++i)
    tensor.data.push_back(char(i * 13 + name.size()));
  return tensor;
}

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

/// A file from a header text and data bytes, as any writer would lay it out.
std::string fileBytes(const std::string &header, const std::string &data) {
  std::string bytes;
  for (unsigned i = 0; i < 8; ++i)
    bytes.push_back(char((uint64_t(header.size()) >> (8 * i)) & 0xff));
  return bytes + header + data;
}

std::string parseError(const std::string &header, const std::string &data) {
  return errorOf(parseSafetensors(fileBytes(header, data), "t.safetensors"));
}

/// A fresh path in the system temporary directory.
std::string tempPath(const char *name) {
  llvm::SmallString<128> path;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, path);
  llvm::sys::path::append(path, std::to_string(::getpid()) + "-" + name);
  return std::string(path);
}
} // namespace

TEST_CASE("Every dtype round-trips through a file with its shape and data", "[safetensors]") {
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  for (SafetensorsDType dtype :
       {SafetensorsDType::BOOL, SafetensorsDType::U8, SafetensorsDType::I8, SafetensorsDType::I16,
        SafetensorsDType::U16, SafetensorsDType::F16, SafetensorsDType::BF16, SafetensorsDType::I32,
        SafetensorsDType::U32, SafetensorsDType::F32, SafetensorsDType::I64, SafetensorsDType::U64,
        SafetensorsDType::F64})
    file.tensors.push_back(makeTensor("t_" + safetensorsDTypeName(dtype).str(), dtype, {2, 3}));
  file.tensors.push_back(makeTensor("scalar", SafetensorsDType::F32, {}));
  file.tensors.push_back(makeTensor("empty", SafetensorsDType::F32, {0, 5}));

  std::string path = tempPath("roundtrip.safetensors");
  REQUIRE(llvm::toString(writeSafetensors(path, file)) == "");
  llvm::Expected<SafetensorsFile> parsed = readSafetensors(path);
  llvm::sys::fs::remove(path);
  REQUIRE(messageOf(parsed) == "");
  CHECK(parsed->metadata == file.metadata);
  REQUIRE(parsed->tensors.size() == file.tensors.size());
  for (const SafetensorsTensor &original : file.tensors) {
    const SafetensorsTensor *back = parsed->find(original.name);
    REQUIRE(back);
    CHECK(back->dtype == original.dtype);
    CHECK(back->shape == original.shape);
    CHECK(back->data == original.data);
  }
  CHECK(parsed->find("nope") == nullptr);
}

TEST_CASE("Dtype names and sizes follow the format", "[safetensors]") {
  CHECK(parseSafetensorsDType("BF16") == SafetensorsDType::BF16);
  CHECK(safetensorsDTypeSize(SafetensorsDType::BF16) == 2);
  CHECK(safetensorsDTypeSize(SafetensorsDType::BOOL) == 1);
  CHECK(safetensorsDTypeSize(SafetensorsDType::F64) == 8);
  CHECK_FALSE(parseSafetensorsDType("F8_E4M3"));
  CHECK_FALSE(parseSafetensorsDType("f32"));
}

TEST_CASE("Written files have an aligned header and largest dtypes first", "[safetensors]") {
  SafetensorsFile file;
  file.tensors.push_back(makeTensor("b", SafetensorsDType::U8, {3}));
  file.tensors.push_back(makeTensor("a", SafetensorsDType::F64, {1}));
  file.tensors.push_back(makeTensor("c", SafetensorsDType::I32, {1}));
  std::string bytes = *serializeSafetensors(file);
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  CHECK(headerSize % 8 == 0);
  std::string json = R"({"a":{"data_offsets":[0,8],"dtype":"F64","shape":[1]},)"
                     R"("b":{"data_offsets":[12,15],"dtype":"U8","shape":[3]},)"
                     R"("c":{"data_offsets":[8,12],"dtype":"I32","shape":[1]}})";
  CHECK(bytes.substr(8, headerSize) == json + std::string((8 - json.size() % 8) % 8, ' '));
  CHECK(bytes.size() == 8 + headerSize + 15);
  CHECK(bytes.substr(8 + headerSize, 8) == file.tensors[1].data);
  CHECK(*serializeSafetensors(file) == bytes);
}

TEST_CASE("Files as the reference writer lays them out are read", "[safetensors]") {
  // safetensors.torch.save_file({"w": torch.tensor([1., 2.])},
  //                             metadata={"format": "pt"})
  std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32",)"
                       R"("shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  float values[2] = {1.0f, 2.0f};
  std::string data(reinterpret_cast<const char *>(values), sizeof values);
  llvm::Expected<SafetensorsFile> file =
      parseSafetensors(fileBytes(header, data), "ref.safetensors");
  REQUIRE(messageOf(file) == "");
  CHECK(file->metadata.at("format") == "pt");
  REQUIRE(file->tensors.size() == 1);
  CHECK(file->tensors[0].name == "w");
  CHECK(file->tensors[0].shape == std::vector<int64_t>{2});
  CHECK(file->tensors[0].data == data);
}

TEST_CASE("Malformed files are rejected with the file name and the problem", "[safetensors]") {
  std::string ok = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string eight(8, '\0');
  CHECK(errorOf(parseSafetensors("abc", "t.safetensors")) ==
        "t.safetensors: truncated: no header length (file has 3 bytes)");
  CHECK(errorOf(parseSafetensors(fileBytes(ok, eight).substr(0, 20), "t.safetensors")) ==
        "t.safetensors: truncated: header length 54 but only 12 bytes follow");
  CHECK(parseError(ok, eight) == "");
  CHECK(parseError("[1, 2]", "") == "t.safetensors: the header is not a JSON object");
  CHECK(parseError("{\"x\": ", "").rfind("t.safetensors: invalid JSON header: ", 0) == 0);
  CHECK(parseError(R"({"x":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", "ab") ==
        "t.safetensors: tensor 'x': unsupported dtype 'F8_E4M3'");
  CHECK(parseError(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd") ==
        "t.safetensors: tensor 'x': data_offsets [0, 4] do not hold the 8 "
        "bytes its dtype and shape need");
  CHECK(parseError(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight) ==
        "t.safetensors: tensor 'x': shape entries must "
        "be non-negative integers");
  CHECK(parseError(R"({"x":{"dtype":"F32","shape":[2]}})", eight) ==
        "t.safetensors: tensor 'x': needs dtype, shape and data_offsets");
  CHECK(parseError(ok, eight.substr(0, 4)) ==
        "t.safetensors: truncated: tensor data needs 8 bytes but only 4 "
        "follow");
  CHECK(parseError(ok, eight + "zz") == "t.safetensors: 2 bytes after the last tensor's data");
  CHECK(parseError(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                   R"("y":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                   "abc") == "t.safetensors: tensor 'y': its data overlaps another tensor's");
  CHECK(parseError(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})", "abc") ==
        "t.safetensors: tensor 'x': there is a gap before its data");
  CHECK(parseError(R"({"__metadata__":{"k":1}})", "") ==
        "t.safetensors: __metadata__ entry 'k' is not a string");
  uint64_t huge = uint64_t(1) << 40;
  std::string hugeHeader(reinterpret_cast<const char *>(&huge), 8);
  CHECK(errorOf(parseSafetensors(hugeHeader, "t.safetensors")) ==
        "t.safetensors: header length 1099511627776 exceeds the 100 MB limit");
}

TEST_CASE("A missing file is reported with its path", "[safetensors]") {
  std::string path = tempPath("does-not-exist.safetensors");
  std::string error = errorOf(readSafetensors(path));
  CHECK(error.rfind(path + ": cannot read: ", 0) == 0);
}

TEST_CASE("Writing rejects inconsistent tensors and unwritable paths", "[safetensors]") {
  SafetensorsFile file;
  file.tensors.push_back(makeTensor("x", SafetensorsDType::F32, {2}));
  SECTION("duplicate names") {
    file.tensors.push_back(file.tensors[0]);
    CHECK(errorOf(serializeSafetensors(file)) == "tensor 'x': the name is used twice");
  }
  SECTION("data that does not match the shape") {
    file.tensors[0].data.pop_back();
    CHECK(errorOf(serializeSafetensors(file)) ==
          "tensor 'x': has 7 bytes of data, but its dtype and shape need 8");
  }
  SECTION("an unwritable path") {
    std::string path = tempPath("no-such-dir/out.safetensors");
    std::string error = llvm::toString(writeSafetensors(path, file));
    CHECK(error.rfind(path + ": cannot write: ", 0) == 0);
  }
}
