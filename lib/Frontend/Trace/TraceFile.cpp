// Opening a .trace file (docs/trace-format.md): the fixed header, the JSON header, the
// blobs and the code objects they marshal.
#include "TraceFile.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using namespace tgc::trace;

namespace {

constexpr llvm::StringLiteral kMagic = "TGCTRACE";
/// Magic, major, minor, header_size, data_offset.
constexpr size_t kFixedHeaderSize = 32;
constexpr uint32_t kMajorVersion = 1;
constexpr uint64_t kDataAlignment = 64;

/// A non-negative integer of the JSON header, or nullopt.
std::optional<uint64_t> getUnsigned(const Json &object, llvm::StringRef key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key.str());
  if (it == object.end() || !it->is_number_unsigned())
    return std::nullopt;
  return it->get<uint64_t>();
}

} // namespace

/// An error naming the file.
static llvm::Error fileError(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "'" + path + "': " + message);
}

/// The minor version of the CPython 3 the header says the program was captured with, or
/// an error if tgc does not read its bytecode.
static llvm::Expected<int> checkPythonVersion(llvm::StringRef path, const Json &json) {
  auto python = json.find("python");
  if (python == json.end() || !python->is_object())
    return fileError(path, "the header has no 'python' entry");
  auto version = python->find("version");
  if (version == python->end() || !version->is_array() || version->size() < 2 ||
      !(*version)[0].is_number_integer() || !(*version)[1].is_number_integer())
    return fileError(path, "the header's python.version is not [major, minor, ...]");
  int64_t major = (*version)[0].get<int64_t>(), minor = (*version)[1].get<int64_t>();
  if (major != 3 || !py::isSupportedPythonMinor(int(minor)))
    return fileError(path,
                     llvm::formatv("captured with Python {0}.{1}; tgc interprets the "
                                   "bytecode of Python 3.{2} to 3.{3}",
                                   major, minor, py::kOldestPythonMinor, py::kNewestPythonMinor));
  return int(minor);
}

llvm::Expected<std::unique_ptr<TraceFile>> TraceFile::open(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(path, "cannot open: " + buffer.getError().message());
  std::unique_ptr<TraceFile> trace(new TraceFile());
  trace->path = path.str();
  trace->buffer = std::move(*buffer);
  llvm::StringRef data = trace->buffer->getBuffer();
  uint64_t fileSize = data.size();

  if (!data.starts_with(kMagic))
    return fileError(path, "not a .trace file (bad magic)");
  if (fileSize < kFixedHeaderSize)
    return fileError(path, llvm::formatv("truncated header ({0} bytes, the fixed header "
                                         "alone takes {1})",
                                         fileSize, kFixedHeaderSize));
  const char *fixed = data.data();
  using namespace llvm::support::endian;
  uint32_t major = read32le(fixed + 8);
  uint64_t headerSize = read64le(fixed + 16);
  uint64_t dataOffset = read64le(fixed + 24);
  if (major != kMajorVersion)
    return fileError(path, llvm::formatv("trace format version {0} is not supported (tgc "
                                         "reads {1}.x)",
                                         major, kMajorVersion));
  if (headerSize > fileSize - kFixedHeaderSize)
    return fileError(path, llvm::formatv("the JSON header ({0} bytes) runs past the end of "
                                         "the file ({1} bytes)",
                                         headerSize, fileSize));
  if (dataOffset % kDataAlignment || dataOffset < kFixedHeaderSize + headerSize ||
      dataOffset > fileSize)
    return fileError(path, llvm::formatv("bad data offset {0} (it must be a multiple of {1} "
                                         "after the header and inside the file)",
                                         dataOffset, kDataAlignment));
  trace->dataOffset = dataOffset;

  try {
    trace->json = parseJson(data.substr(kFixedHeaderSize, headerSize));
  } catch (const nlohmann::json::exception &e) {
    return fileError(path, llvm::Twine("the JSON header is malformed: ") + e.what());
  }
  const Json &json = trace->json;
  if (!json.is_object())
    return fileError(path, "the JSON header is not an object");
  llvm::Expected<int> pythonMinor = checkPythonVersion(path, json);
  if (!pythonMinor)
    return pythonMinor.takeError();
  trace->pythonMinor = *pythonMinor;
  auto objects = json.find("objects");
  if (objects == json.end() || !objects->is_array())
    return fileError(path, "the header has no 'objects' list");
  auto blobs = json.find("blobs");
  if (blobs == json.end() || !blobs->is_array())
    return fileError(path, "the header has no 'blobs' list");

  uint64_t dataSize = fileSize - dataOffset;
  for (size_t index = 0; index < blobs->size(); ++index) {
    std::optional<uint64_t> offset = getUnsigned((*blobs)[index], "offset");
    std::optional<uint64_t> size = getUnsigned((*blobs)[index], "size");
    if (!offset || !size)
      return fileError(path, llvm::formatv("blob {0} has no offset and size", index));
    if (*offset > dataSize || *size > dataSize - *offset)
      return fileError(path, llvm::formatv("blob {0} lies outside the file", index));
    if (*offset % kDataAlignment)
      return fileError(
          path, llvm::formatv("blob {0} is not aligned to {1} bytes", index, kDataAlignment));
  }
  return trace;
}

size_t TraceFile::getNumObjects() const { return json["objects"].size(); }

llvm::Expected<const Json *> TraceFile::getObject(size_t id) const {
  const Json &objects = json["objects"];
  if (id >= objects.size())
    return fileError(
        path, llvm::formatv("object {0} does not exist (the trace has {1})", id, objects.size()));
  const Json &object = objects[id];
  if (!object.is_object() || !object.contains("kind") || !object["kind"].is_string())
    return fileError(path, llvm::formatv("object {0} has no kind", id));
  return &object;
}

llvm::Expected<llvm::ArrayRef<uint8_t>> TraceFile::getBlob(size_t index) const {
  const Json &blobs = json["blobs"];
  if (index >= blobs.size())
    return fileError(
        path, llvm::formatv("blob {0} does not exist (the trace has {1})", index, blobs.size()));
  // open() checked the bounds of every blob.
  uint64_t offset = *getUnsigned(blobs[index], "offset");
  uint64_t size = *getUnsigned(blobs[index], "size");
  const auto *start =
      reinterpret_cast<const uint8_t *>(buffer->getBufferStart()) + dataOffset + offset;
  return llvm::ArrayRef<uint8_t>(start, size);
}

llvm::Expected<py::CodeRef> TraceFile::getCode(size_t id) const {
  if (auto it = codes.find(id); it != codes.end())
    return it->second;
  auto object = getObject(id);
  if (!object)
    return object.takeError();
  std::string kind = (**object)["kind"].get<std::string>();
  if (kind != "code")
    return fileError(path,
                     llvm::formatv("object {0} is not a code object (it is a '{1}')", id, kind));
  std::optional<uint64_t> blobIndex = getUnsigned(**object, "blob");
  if (!blobIndex)
    return fileError(path, llvm::formatv("code object {0} has no blob", id));
  auto blob = getBlob(*blobIndex);
  if (!blob)
    return blob.takeError();
  auto constant = py::readMarshal(*blob, pythonMinor);
  if (!constant)
    return fileError(
        path, llvm::formatv("code object {0}: {1}", id, llvm::toString(constant.takeError())));
  if ((*constant)->kind != py::Constant::Kind::Code)
    return fileError(path,
                     llvm::formatv("the blob of object {0} does not marshal a code object", id));
  py::CodeRef code = (*constant)->code;
  codes[id] = code;
  return code;
}
