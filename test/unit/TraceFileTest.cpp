// Unit tests for opening .trace files (docs/trace-format.md): the checks of the fixed
// header, the JSON header and the blobs, and the code objects the blobs marshal.
#include "Frontend/Trace/TraceFile.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace tgc;
using namespace tgc::trace;

namespace {

std::vector<uint8_t> readInput(llvm::StringRef name) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(TGC_SOURCE_DIR) +
                                                "/test/unit/Inputs/bytecode/" + name.str(),
                                            /*IsText=*/false, /*RequiresNullTerminator=*/false);
  REQUIRE(buffer);
  llvm::StringRef data = (*buffer)->getBuffer();
  return std::vector<uint8_t>(data.begin(), data.end());
}

/// The value of `expected`; fails the test with the error otherwise.
template <typename T> T &requireValue(llvm::Expected<T> &expected) {
  if (!expected)
    FAIL(llvm::toString(expected.takeError()));
  return *expected;
}

/// Builds a .trace the way tgc-capture lays it out; tests break one part of it.
struct TraceBuilder {
  std::string magic = "TGCTRACE";
  uint32_t major = 1, minor = 0;
  Json header;
  std::vector<std::vector<uint8_t>> blobs;
  /// Added to the data section's size as written into the blob table of blob 0.
  uint64_t extraBlobSize = 0;
  /// Cuts the file to this many bytes when set.
  std::optional<size_t> truncateTo;
  /// Replaces the JSON header's text when set.
  std::optional<std::string> headerText;

  TraceBuilder() {
    header = Json::parse(R"({"format": "tgc-trace", "version": [1, 0],
        "python": {"implementation": "cpython", "version": [3, 12, 1], "magic": 3531},
        "objects": [], "blobs": []})");
  }

  /// Adds a `code` object holding `marshalled`, returning its id.
  size_t addCode(std::vector<uint8_t> marshalled) {
    blobs.push_back(std::move(marshalled));
    header["objects"].push_back(
        {{"kind", "code"}, {"blob", blobs.size() - 1}, {"name", "<module>"}});
    return header["objects"].size() - 1;
  }

  std::string bytes() {
    Json json = header;
    std::string data;
    for (const std::vector<uint8_t> &blob : blobs) {
      data.resize(llvm::alignTo(data.size(), 64), '\0');
      json["blobs"].push_back({{"offset", data.size()}, {"size", blob.size()}});
      data.append(blob.begin(), blob.end());
    }
    if (!json["blobs"].empty())
      json["blobs"][0]["size"] = json["blobs"][0]["size"].get<uint64_t>() + extraBlobSize;
    std::string text = headerText ? *headerText : json.dump();
    uint64_t dataOffset = llvm::alignTo(32 + text.size(), 64);
    std::string file = magic;
    char fields[24];
    llvm::support::endian::write32le(fields, major);
    llvm::support::endian::write32le(fields + 4, minor);
    llvm::support::endian::write64le(fields + 8, text.size());
    llvm::support::endian::write64le(fields + 16, dataOffset);
    file.append(fields, sizeof(fields));
    file += text;
    file.resize(dataOffset, '\0');
    file += data;
    if (truncateTo)
      file.resize(*truncateTo);
    return file;
  }

  /// Writes the file to a fresh temporary path and returns the path.
  std::string write() {
    llvm::SmallString<128> path;
    REQUIRE(!llvm::sys::fs::createTemporaryFile("tgc-unit", "trace", path));
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    REQUIRE(!ec);
    os << bytes();
    return path.str().str();
  }

  llvm::Expected<std::unique_ptr<TraceFile>> open() {
    std::string path = write();
    auto trace = TraceFile::open(path);
    llvm::sys::fs::remove(path);
    return trace;
  }

  /// The error that opening the file gives, "" if it opens.
  std::string openError() {
    auto trace = open();
    return trace ? "" : llvm::toString(trace.takeError());
  }
};

} // namespace

TEST_CASE("TraceFile opens a well-formed trace and unmarshals its code objects") {
  TraceBuilder builder;
  builder.minor = 7;
  builder.header["objects"].push_back({{"kind", "function"}, {"code", {{"ref", 1}}}});
  size_t id = builder.addCode(readInput("loops.bin"));
  auto opened = builder.open();
  TraceFile &trace = *requireValue(opened);
  CHECK(trace.getNumObjects() == 2);
  auto object = trace.getObject(0);
  CHECK((*requireValue(object))["kind"] == "function");
  auto blob = trace.getBlob(0);
  CHECK(requireValue(blob).size() == readInput("loops.bin").size());
  auto code = trace.getCode(id);
  const py::CodeObject &codeObject = *requireValue(code);
  CHECK(codeObject.name == "<module>");
  CHECK(codeObject.filename == "f.py");
  auto again = trace.getCode(id);
  CHECK(requireValue(again).get() == &codeObject);
}

TEST_CASE("TraceFile rejects a file without the TGCTRACE magic") {
  TraceBuilder builder;
  builder.magic = "PK\x03\x04xxxx";
  CHECK_THAT(builder.openError(), Catch::EndsWith("': not a .trace file (bad magic)"));
}

TEST_CASE("TraceFile rejects a truncated header") {
  TraceBuilder builder;
  builder.truncateTo = 20;
  CHECK_THAT(builder.openError(), Catch::Contains("truncated header (20 bytes"));
  builder.truncateTo = 40;
  CHECK_THAT(builder.openError(), Catch::Contains("the JSON header"));
  CHECK_THAT(builder.openError(), Catch::Contains("runs past the end of the file (40 bytes)"));
}

TEST_CASE("TraceFile rejects another major format version") {
  TraceBuilder builder;
  builder.major = 2;
  CHECK_THAT(builder.openError(),
             Catch::Contains("trace format version 2 is not supported (tgc reads 1.x)"));
}

TEST_CASE("TraceFile rejects a trace captured with another Python") {
  TraceBuilder builder;
  for (int minor : {11, 12, 13}) {
    builder.header["python"]["version"] = {3, minor, 4};
    CHECK(builder.openError() == "");
  }
  for (int minor : {10, 14}) {
    builder.header["python"]["version"] = {3, minor, 0};
    CHECK_THAT(builder.openError(),
               Catch::Contains("captured with Python 3." + std::to_string(minor) +
                               "; tgc interprets the bytecode of Python 3.11 to 3.13"));
  }
  builder.header.erase("python");
  CHECK_THAT(builder.openError(), Catch::Contains("the header has no 'python' entry"));
}

TEST_CASE("TraceFile rejects a malformed JSON header") {
  TraceBuilder builder;
  builder.headerText = "{\"objects\": [";
  CHECK_THAT(builder.openError(), Catch::Contains("the JSON header is malformed"));
  builder.headerText = "[1, 2]";
  CHECK_THAT(builder.openError(), Catch::Contains("the JSON header is not an object"));
  builder.headerText.reset();
  builder.header.erase("objects");
  CHECK_THAT(builder.openError(), Catch::Contains("the header has no 'objects' list"));
}

TEST_CASE("TraceFile rejects blobs that lie outside the file") {
  TraceBuilder builder;
  builder.addCode(readInput("loops.bin"));
  builder.addCode(readInput("loops.bin"));
  builder.extraBlobSize = 1000;
  CHECK_THAT(builder.openError(), Catch::Contains("blob 0 lies outside the file"));
  builder.extraBlobSize = 0;
  builder.truncateTo = builder.bytes().size() - 1;
  CHECK_THAT(builder.openError(), Catch::Contains("blob 1 lies outside the file"));
}

TEST_CASE("TraceFile reports missing objects and objects that are not code") {
  TraceBuilder builder;
  builder.header["objects"].push_back({{"kind", "function"}});
  builder.addCode({'N'});
  auto opened = builder.open();
  TraceFile *trace = requireValue(opened).get();
  auto missing = trace->getObject(9);
  CHECK_THAT(llvm::toString(missing.takeError()),
             Catch::Contains("object 9 does not exist (the trace has 2)"));
  auto function = trace->getCode(0);
  CHECK_THAT(llvm::toString(function.takeError()),
             Catch::Contains("object 0 is not a code object (it is a 'function')"));
  auto none = trace->getCode(1);
  CHECK_THAT(llvm::toString(none.takeError()),
             Catch::Contains("the blob of object 1 does not marshal a code object"));
  auto blob = trace->getBlob(5);
  CHECK_THAT(llvm::toString(blob.takeError()), Catch::Contains("blob 5 does not exist"));
}

TEST_CASE("TraceFile reports malformed marshal data of a code object") {
  TraceBuilder builder;
  std::vector<uint8_t> marshalled = readInput("loops.bin");
  marshalled.resize(marshalled.size() / 2);
  builder.addCode(marshalled);
  auto opened = builder.open();
  TraceFile *trace = requireValue(opened).get();
  auto code = trace->getCode(0);
  CHECK_THAT(llvm::toString(code.takeError()),
             Catch::Contains("code object 0: bad marshal data at offset"));
}
