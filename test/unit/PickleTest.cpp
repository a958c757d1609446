// Unit tests for the torch.save pickle reader (weights of archives from torch 2.6 - 2.8).
#include "Frontend/Export/TorchPickle.h"

#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <string>

using tgc::pt2::PickledTensor;
using tgc::pt2::PickledTensorDict;

namespace {

/// A pickle made by test/unit/Inputs/make_pickles.py with real torch.save.
std::string readInput(llvm::StringRef name) {
  auto buffer = llvm::MemoryBuffer::getFile(TGC_SOURCE_DIR "/test/unit/Inputs/" + name);
  if (!buffer)
    throw std::runtime_error("cannot read " + name.str());
  return (*buffer)->getBuffer().str();
}

/// Reads `pickle`, which must succeed.
PickledTensorDict read(llvm::StringRef pickle) {
  llvm::Expected<PickledTensorDict> tensors = tgc::pt2::readTorchSavePickle(pickle);
  if (!tensors)
    FAIL(llvm::toString(tensors.takeError()));
  return std::move(*tensors);
}

/// Reads `pickle`, which must fail, and returns the message.
std::string errorOf(llvm::StringRef pickle) {
  llvm::Expected<PickledTensorDict> tensors = tgc::pt2::readTorchSavePickle(pickle);
  if (tensors)
    FAIL("the pickle was accepted");
  return llvm::toString(tensors.takeError());
}

const PickledTensor &entry(const PickledTensorDict &tensors, llvm::StringRef key) {
  for (const auto &[name, tensor] : tensors)
    if (name == key)
      return tensor;
  FAIL("no entry " << key.str());
  throw std::logic_error("unreachable");
}

using Ints = std::vector<int64_t>;
Ints ints(llvm::ArrayRef<int64_t> values) { return Ints(values.begin(), values.end()); }

/// Builds protocol-2 pickles by hand, for what real torch.save output does not show.
struct PickleWriter {
  std::string bytes = "\x80\x02";

  PickleWriter &op(char code) {
    bytes += code;
    return *this;
  }
  PickleWriter &str(llvm::StringRef text) {
    bytes += 'X';
    for (int i = 0; i < 4; ++i)
      bytes += static_cast<char>((text.size() >> (8 * i)) & 0xff);
    bytes += text.str();
    return *this;
  }
  PickleWriter &int1(uint8_t value) {
    bytes += 'K';
    bytes += static_cast<char>(value);
    return *this;
  }
  PickleWriter &global(llvm::StringRef module, llvm::StringRef name) {
    bytes += "c" + module.str() + "\n" + name.str() + "\n";
    return *this;
  }
  /// `_rebuild_tensor_v2(<FloatStorage key "0" of `numel`>, 0, (numel,), (1,), False,
  /// OrderedDict())` with `extra` appended to the arguments.
  PickleWriter &tensor(uint8_t numel, llvm::StringRef extra = "") {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").int1(numel);
    op('t').op('Q').int1(0).int1(numel).op('\x85').int1(1).op('\x85').op('\x89');
    global("collections", "OrderedDict").op(')').op('R');
    bytes += extra.str();
    return op('t').op('R');
  }
  std::string done() { return bytes + "."; }
};

} // namespace

TEST_CASE("A protocol-2 state dict gives every tensor's storage and view", "[pickle]") {
  PickledTensorDict tensors = read(readInput("tensors_p2.pkl"));
  REQUIRE(tensors.size() == 6);
  CHECK(tensors[0].first == "w");
  CHECK(tensors[5].first == "big");

  const PickledTensor &w = entry(tensors, "w");
  CHECK(w.storageKey == "0");
  CHECK(w.dtype == "float32");
  CHECK(w.elementBytes == 4);
  CHECK(w.storageBytes == 24);
  CHECK(w.location == "cpu");
  CHECK(w.storageOffset == 0);
  CHECK(ints(w.sizes) == Ints{2, 3});
  CHECK(ints(w.strides) == Ints{3, 1});
  CHECK(w.isParameter);
  CHECK(w.requiresGrad);

  const PickledTensor &b = entry(tensors, "b");
  CHECK(b.storageKey == "1");
  CHECK(b.storageBytes == 24);
  CHECK(b.storageOffset == 2);
  CHECK(ints(b.sizes) == Ints{2});
  CHECK_FALSE(b.isParameter);
  CHECK_FALSE(b.requiresGrad);
}

TEST_CASE("Views of one storage name the same storage key", "[pickle]") {
  PickledTensorDict tensors = read(readInput("tensors_p2.pkl"));
  const PickledTensor &t = entry(tensors, "t");
  CHECK(t.storageKey == entry(tensors, "w").storageKey);
  CHECK(ints(t.sizes) == Ints{3, 2});
  CHECK(ints(t.strides) == Ints{1, 3});
}

TEST_CASE("Scalars, bools and broadcast views keep their dtype and strides", "[pickle]") {
  PickledTensorDict tensors = read(readInput("tensors_p2.pkl"));
  const PickledTensor &n = entry(tensors, "n");
  CHECK(n.dtype == "int64");
  CHECK(n.sizes.empty());
  CHECK(n.strides.empty());
  CHECK(n.storageBytes == 8);
  const PickledTensor &m = entry(tensors, "m");
  CHECK(m.dtype == "bool");
  CHECK(m.elementBytes == 1);
  CHECK(ints(m.sizes) == Ints{4});
  const PickledTensor &big = entry(tensors, "big");
  CHECK(ints(big.sizes) == Ints{3});
  CHECK(ints(big.strides) == Ints{0});
  CHECK(big.storageBytes == 8);
}

TEST_CASE("Protocol 4 reads the same as protocol 2", "[pickle]") {
  PickledTensorDict p2 = read(readInput("tensors_p2.pkl"));
  PickledTensorDict p4 = read(readInput("tensors_p4.pkl"));
  REQUIRE(p2.size() == p4.size());
  for (auto [a, b] : llvm::zip(p2, p4)) {
    CHECK(a.first == b.first);
    CHECK(a.second.storageKey == b.second.storageKey);
    CHECK(a.second.dtype == b.second.dtype);
    CHECK(a.second.storageBytes == b.second.storageBytes);
    CHECK(a.second.storageOffset == b.second.storageOffset);
    CHECK(ints(a.second.sizes) == ints(b.second.sizes));
    CHECK(ints(a.second.strides) == ints(b.second.strides));
    CHECK(a.second.isParameter == b.second.isParameter);
  }
}

TEST_CASE("Dtypes without a typed storage class come from _rebuild_tensor_v3", "[pickle]") {
  PickledTensorDict tensors = read(readInput("new_dtypes.pkl"));
  const PickledTensor &f8 = entry(tensors, "f8");
  CHECK(f8.dtype == "float8_e4m3fn");
  CHECK(f8.elementBytes == 1);
  CHECK(f8.storageBytes == 3);
  const PickledTensor &u16 = entry(tensors, "u16");
  CHECK(u16.dtype == "uint16");
  CHECK(u16.elementBytes == 2);
  // An untyped storage's size is counted in bytes.
  CHECK(u16.storageBytes == 4);
}

TEST_CASE("A module's state_dict (an OrderedDict with _metadata) is read", "[pickle]") {
  PickledTensorDict tensors = read(readInput("module_state.pkl"));
  REQUIRE(tensors.size() == 2);
  CHECK(tensors[0].first == "weight");
  CHECK(ints(tensors[0].second.sizes) == Ints{2, 3});
  CHECK(tensors[1].first == "bias");
}

TEST_CASE("An empty dict has no tensors", "[pickle]") {
  CHECK(read(PickleWriter().op('}').done()).empty());
}

TEST_CASE("A repeated key keeps its first position and its last value", "[pickle]") {
  PickleWriter w;
  w.op('}').op('(').str("a").tensor(2).str("b").tensor(3).str("a").tensor(4).op('u');
  PickledTensorDict tensors = read(w.done());
  REQUIRE(tensors.size() == 2);
  CHECK(tensors[0].first == "a");
  CHECK(tensors[0].second.storageBytes == 16);
}

TEST_CASE("Globals outside what torch.save writes for tensors are rejected", "[pickle]") {
  std::string message = errorOf(PickleWriter().global("os", "system").done());
  CHECK(message == "at byte 2, GLOBAL: global 'os.system' is not one torch.save writes for "
                   "dense tensors");
  CHECK_THAT(errorOf(PickleWriter().global("torch", "QInt8Storage").done()),
             Catch::Contains("global 'torch.QInt8Storage'"));
}

TEST_CASE("Opcodes outside the subset are errors naming the opcode and offset", "[pickle]") {
  CHECK(errorOf(PickleWriter().op('}').op('0').done()) ==
        "at byte 3, POP: this opcode is not one torch.save writes for a dict of tensors");
  CHECK_THAT(errorOf(PickleWriter().op('\xff').done()), Catch::Contains("at byte 2, 0xff:"));
  CHECK_THAT(errorOf("\x80\x01}."), Catch::Contains("PROTO: protocol 1"));
}

TEST_CASE("Calls other than tensor rebuilds are rejected", "[pickle]") {
  // A storage class is a global that may be named but not called.
  PickleWriter w;
  w.global("torch", "FloatStorage").op(')').op('R');
  CHECK_THAT(errorOf(w.done()), Catch::Contains("REDUCE: cannot call a storage class"));
}

TEST_CASE("Tensors with hooks or extra metadata are rejected", "[pickle]") {
  // _rebuild_tensor_v2's optional 7th argument: a non-empty metadata dict.
  std::string metadata = PickleWriter().op('}').str("conj").op('\x88').op('s').bytes.substr(2);
  PickleWriter w;
  w.op('}').str("x").tensor(2, metadata).op('s');
  CHECK_THAT(errorOf(w.done()), Catch::Contains("extra metadata"));
}

TEST_CASE("Values that are not tensors are named in the error", "[pickle]") {
  PickleWriter w;
  w.op('}').str("step").int1(3).op('s');
  CHECK(errorOf(w.done()) == "entry 'step' is of type int, not a tensor");
  CHECK(errorOf(PickleWriter().op(']').done()) ==
        "the pickle holds a value of type list, not a dict of tensors");
}

TEST_CASE("Malformed pickles are errors: underflow, memo, marks, truncation", "[pickle]") {
  CHECK(errorOf(PickleWriter().op('R').done()) == "at byte 2, REDUCE: the stack is empty");
  CHECK(errorOf(PickleWriter().op('h').op('\x05').done()) ==
        "at byte 2, BINGET: memo entry 5 was never stored");
  CHECK(errorOf(PickleWriter().op('}').op('u').done()) == "at byte 3, SETITEMS: there is no MARK");
  CHECK(errorOf(PickleWriter().op('}').bytes) == "the pickle ends at byte 3 without STOP");
  CHECK(errorOf(PickleWriter().op('X').op('\xff').done()) ==
        "at byte 2, BINUNICODE: needs 4 more bytes, but the pickle ends after 2");
  // Values pushed after a MARK cannot be taken by an opcode that pops below it.
  CHECK(errorOf(PickleWriter().int1(1).op('(').op('\x85').done()) ==
        "at byte 5, TUPLE1: needs 1 value on the stack");
}

TEST_CASE("Storage persistent ids are checked", "[pickle]") {
  PickleWriter w;
  w.op('(').str("storage").global("torch", "FloatStorage").str("../x").str("cpu").int1(1);
  w.op('t').op('Q');
  CHECK_THAT(errorOf(w.done()), Catch::Contains("storage key '../x' is not a file name"));
  PickleWriter pid;
  pid.op('(').str("storage").int1(1).op('t').op('Q');
  CHECK_THAT(errorOf(pid.done()), Catch::Contains("the persistent id is not ('storage'"));
}

TEST_CASE("Corrupted pickles never crash the reader", "[pickle][fuzz]") {
  // Every truncation and, at every byte, a few replacement values: each input is
  // either read or rejected with a message (run under a sanitizer to catch more).
  for (llvm::StringRef name :
       {"tensors_p2.pkl", "tensors_p4.pkl", "new_dtypes.pkl", "module_state.pkl"}) {
    std::string pickle = readInput(name);
    for (size_t length = 0; length < pickle.size(); ++length)
      llvm::consumeError(
          tgc::pt2::readTorchSavePickle(llvm::StringRef(pickle).take_front(length)).takeError());
    for (size_t at = 0; at < pickle.size(); ++at)
      for (int replacement :
           {0x00, 0x01, 0x7f, 0x80, 0xff, int('('), int('t'), int('R'), int('h'), int('q')}) {
        std::string mutated = pickle;
        mutated[at] = static_cast<char>(replacement);
        llvm::Expected<PickledTensorDict> tensors = tgc::pt2::readTorchSavePickle(mutated);
        if (tensors)
          continue;
        CHECK_FALSE(llvm::toString(tensors.takeError()).empty());
      }
  }
}
