//===- Safetensors.cpp - Reading and writing safetensors files ------------===//

#include "tgc/Support/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <tuple>

using namespace tgc;

namespace {
/// The reference implementation's limit on the JSON header.
constexpr uint64_t kMaxHeaderSize = 100 * 1000 * 1000;
constexpr const char *kMetadataKey = "__metadata__";

struct DTypeInfo {
  SafetensorsDType dtype;
  const char *name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {SafetensorsDType::BOOL, "BOOL", 1}, {SafetensorsDType::U8, "U8", 1},
    {SafetensorsDType::I8, "I8", 1},     {SafetensorsDType::I16, "I16", 2},
    {SafetensorsDType::U16, "U16", 2},   {SafetensorsDType::F16, "F16", 2},
    {SafetensorsDType::BF16, "BF16", 2}, {SafetensorsDType::I32, "I32", 4},
    {SafetensorsDType::U32, "U32", 4},   {SafetensorsDType::F32, "F32", 4},
    {SafetensorsDType::I64, "I64", 8},   {SafetensorsDType::U64, "U64", 8},
    {SafetensorsDType::F64, "F64", 8},
};

const DTypeInfo &info(SafetensorsDType dtype) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.dtype == dtype)
      return entry;
  return kDTypes[0];
}
} // namespace

llvm::StringRef tgc::safetensorsDTypeName(SafetensorsDType dtype) { return info(dtype).name; }

std::optional<SafetensorsDType> tgc::parseSafetensorsDType(llvm::StringRef name) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.name)
      return entry.dtype;
  return std::nullopt;
}

size_t tgc::safetensorsDTypeSize(SafetensorsDType dtype) { return info(dtype).size; }

int64_t SafetensorsTensor::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

const SafetensorsTensor *SafetensorsFile::find(llvm::StringRef name) const {
  for (const SafetensorsTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// A tensor's header entry before its bytes are taken.
struct Entry {
  SafetensorsTensor tensor;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// Parses the JSON header and the data section of one file, reporting the
/// first problem as an llvm::Error that names the source.
class Parser {
public:
  Parser(llvm::StringRef bytes, llvm::StringRef sourceName)
      : bytes(bytes), source(sourceName.str()) {}

  llvm::Expected<SafetensorsFile> parse();

private:
  llvm::Error fail(const llvm::Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), source + ": " + message);
  }
  llvm::Error failTensor(const std::string &name, const llvm::Twine &message) const {
    return fail("tensor '" + name + "': " + message);
  }

  llvm::Expected<nlohmann::json> parseHeader(uint64_t &dataStart);
  llvm::Error parseMetadata(const nlohmann::json &value, SafetensorsFile &file);
  llvm::Expected<Entry> parseEntry(const std::string &name, const nlohmann::json &value);
  llvm::Error parseShape(Entry &entry, const nlohmann::json &value, uint64_t &nbytes);
  llvm::Error checkLayout(std::vector<Entry> &entries, uint64_t dataSize);

  llvm::StringRef bytes;
  std::string source;
};
} // namespace

llvm::Expected<nlohmann::json> Parser::parseHeader(uint64_t &dataStart) {
  if (bytes.size() < 8)
    return fail("truncated: no header length (file has " + llvm::Twine(bytes.size()) + " bytes)");
  uint64_t headerSize = 0;
  for (unsigned i = 0; i < 8; ++i)
    headerSize |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  if (headerSize > kMaxHeaderSize)
    return fail("header length " + llvm::Twine(headerSize) + " exceeds the 100 MB limit");
  if (headerSize > bytes.size() - 8)
    return fail("truncated: header length " + llvm::Twine(headerSize) + " but only " +
                llvm::Twine(bytes.size() - 8) + " bytes follow");
  llvm::StringRef header = bytes.substr(8, headerSize);
  if (!header.starts_with("{"))
    return fail("the header is not a JSON object");
  dataStart = 8 + headerSize;
  try {
    nlohmann::json json = nlohmann::json::parse(header.begin(), header.end());
    if (!json.is_object())
      return fail("the header is not a JSON object");
    return json;
  } catch (const nlohmann::json::exception &error) {
    return fail(llvm::Twine("invalid JSON header: ") + error.what());
  }
}

llvm::Error Parser::parseMetadata(const nlohmann::json &value, SafetensorsFile &file) {
  if (!value.is_object())
    return fail("__metadata__ is not an object");
  for (const auto &[key, item] : value.items()) {
    if (!item.is_string())
      return fail("__metadata__ entry '" + key + "' is not a string");
    file.metadata[key] = item.get<std::string>();
  }
  return llvm::Error::success();
}

llvm::Error Parser::parseShape(Entry &entry, const nlohmann::json &value, uint64_t &nbytes) {
  const std::string &name = entry.tensor.name;
  if (!value.is_array())
    return failTensor(name, "shape is not a list");
  nbytes = safetensorsDTypeSize(entry.tensor.dtype);
  bool overflow = false;
  for (const nlohmann::json &size : value) {
    if (!size.is_number_unsigned() && !(size.is_number_integer() && size.get<int64_t>() >= 0))
      return failTensor(name, "shape entries must be non-negative integers");
    uint64_t dim = size.get<uint64_t>();
    if (dim > uint64_t(INT64_MAX))
      return failTensor(name, "a dimension is too large");
    entry.tensor.shape.push_back(int64_t(dim));
    overflow |= __builtin_mul_overflow(nbytes, dim, &nbytes);
  }
  if (overflow)
    return failTensor(name, "the shape is too large");
  return llvm::Error::success();
}

llvm::Expected<Entry> Parser::parseEntry(const std::string &name, const nlohmann::json &value) {
  Entry entry;
  entry.tensor.name = name;
  if (!value.is_object())
    return failTensor(name, "the entry is not an object");
  auto dtype = value.find("dtype"), shape = value.find("shape"),
       offsets = value.find("data_offsets");
  if (dtype == value.end() || shape == value.end() || offsets == value.end())
    return failTensor(name, "needs dtype, shape and data_offsets");
  if (!dtype->is_string())
    return failTensor(name, "dtype is not a string");
  std::optional<SafetensorsDType> parsed = parseSafetensorsDType(dtype->get<std::string>());
  if (!parsed)
    return failTensor(name, "unsupported dtype '" + dtype->get<std::string>() + "'");
  entry.tensor.dtype = *parsed;
  uint64_t nbytes = 0;
  if (llvm::Error error = parseShape(entry, *shape, nbytes))
    return error;
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return failTensor(name, "data_offsets must be two non-negative integers");
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.end < entry.begin || entry.end - entry.begin != nbytes)
    return failTensor(name, "data_offsets [" + llvm::Twine(entry.begin) + ", " +
                                llvm::Twine(entry.end) + "] do not hold the " +
                                llvm::Twine(nbytes) + " bytes its dtype and shape need");
  return entry;
}

/// The data section must be covered exactly, without gaps or overlaps, as
/// the format requires.
llvm::Error Parser::checkLayout(std::vector<Entry> &entries, uint64_t dataSize) {
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.tensor.name) < std::tie(b.begin, b.end, b.tensor.name);
  });
  uint64_t expected = 0;
  for (const Entry &entry : entries) {
    if (entry.begin != expected)
      return failTensor(entry.tensor.name, entry.begin < expected
                                               ? "its data overlaps another tensor's"
                                               : "there is a gap before its data");
    expected = entry.end;
  }
  if (expected > dataSize)
    return fail("truncated: tensor data needs " + llvm::Twine(expected) + " bytes but only " +
                llvm::Twine(dataSize) + " follow");
  if (expected < dataSize)
    return fail(llvm::Twine(dataSize - expected) + " bytes after the last tensor's data");
  return llvm::Error::success();
}

llvm::Expected<SafetensorsFile> Parser::parse() {
  uint64_t dataStart = 0;
  llvm::Expected<nlohmann::json> header = parseHeader(dataStart);
  if (!header)
    return header.takeError();
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto &[name, value] : header->items()) {
    if (name == kMetadataKey) {
      if (llvm::Error error = parseMetadata(value, file))
        return error;
      continue;
    }
    llvm::Expected<Entry> entry = parseEntry(name, value);
    if (!entry)
      return entry.takeError();
    entries.push_back(std::move(*entry));
  }
  llvm::StringRef data = bytes.substr(dataStart);
  if (llvm::Error error = checkLayout(entries, data.size()))
    return error;
  for (Entry &entry : entries) {
    entry.tensor.data = data.substr(entry.begin, entry.end - entry.begin).str();
    file.tensors.push_back(std::move(entry.tensor));
  }
  return file;
}

llvm::Expected<SafetensorsFile> tgc::parseSafetensors(llvm::StringRef bytes,
                                                      llvm::StringRef sourceName) {
  return Parser(bytes, sourceName).parse();
}

llvm::Expected<SafetensorsFile> tgc::readSafetensors(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   path + ": cannot read: " + buffer.getError().message());
  return parseSafetensors((*buffer)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static llvm::Error checkTensor(const SafetensorsTensor &tensor, std::set<std::string> &names) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + tensor.name + "': " + message);
  };
  if (tensor.name.empty() || tensor.name == kMetadataKey)
    return fail("invalid tensor name");
  if (!names.insert(tensor.name).second)
    return fail("the name is used twice");
  uint64_t nbytes = safetensorsDTypeSize(tensor.dtype);
  for (int64_t size : tensor.shape)
    if (size < 0 || __builtin_mul_overflow(nbytes, uint64_t(size), &nbytes))
      return fail("invalid shape");
  if (nbytes != tensor.data.size())
    return fail("has " + llvm::Twine(tensor.data.size()) +
                " bytes of data, but its dtype and shape need " + llvm::Twine(nbytes));
  return llvm::Error::success();
}

llvm::Expected<std::string> tgc::serializeSafetensors(const SafetensorsFile &file) {
  std::set<std::string> names;
  std::vector<const SafetensorsTensor *> order;
  for (const SafetensorsTensor &tensor : file.tensors) {
    if (llvm::Error error = checkTensor(tensor, names))
      return error;
    order.push_back(&tensor);
  }
  // Largest elements first keeps every tensor aligned to its element size.
  std::sort(order.begin(), order.end(), [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
    size_t sa = safetensorsDTypeSize(a->dtype), sb = safetensorsDTypeSize(b->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty())
    header[kMetadataKey] = file.metadata;
  uint64_t offset = 0;
  for (const SafetensorsTensor *tensor : order) {
    header[tensor->name] = {{"dtype", safetensorsDTypeName(tensor->dtype).str()},
                            {"shape", tensor->shape},
                            {"data_offsets", {offset, offset + tensor->data.size()}}};
    offset += tensor->data.size();
  }
  std::string json = header.dump();
  // Pad with spaces so the data starts 8-byte aligned, as the reference
  // writer does.
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out;
  for (unsigned i = 0; i < 8; ++i)
    out.push_back(char((uint64_t(json.size()) >> (8 * i)) & 0xff));
  out += json;
  for (const SafetensorsTensor *tensor : order)
    out += tensor->data;
  return out;
}

llvm::Error tgc::writeSafetensors(llvm::StringRef path, const SafetensorsFile &file) {
  llvm::Expected<std::string> bytes = serializeSafetensors(file);
  if (!bytes)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + llvm::toString(bytes.takeError()));
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, path + ": cannot write: " + ec.message());
  out << *bytes;
  out.close();
  if (out.has_error()) {
    std::error_code error = out.error();
    out.clear_error();
    return llvm::createStringError(error, path + ": cannot write: " + error.message());
  }
  return llvm::Error::success();
}
