//===- SignatureTest.cpp - Signature blob, model.json and model.h tests ---===//

#include "TinyModelSignature.h"

#include "tgc/Target/Signature.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace tgc;
using namespace tgc::test;

namespace {
/// Little-endian bytes, as the blob spells fixed-width fields.
std::string le(uint64_t value, unsigned width) {
  std::string bytes;
  for (unsigned i = 0; i < width; ++i)
    bytes.push_back(char((value >> (8 * i)) & 0xff));
  return bytes;
}
std::string str(const std::string &s) { return le(s.size(), 4) + s; }
std::string op(ExprOpcode opcode, int64_t operand) {
  return std::string(1, char(opcode)) + le(uint64_t(operand), 8);
}

ModelSignature tiny() {
  std::string weights;
  return tinySignature(weights);
}
} // namespace

TEST_CASE("The blob follows the documented byte layout", "[signature]") {
  SizeExpr b = SizeExpr::symbol(0);
  ModelSignature sig;
  sig.name = "m";
  sig.symbols = {{"b", 1, 8}};
  ArgInfo w;
  w.kind = ArgKind::Parameter;
  w.dtype = DType::int8();
  w.name = "w";
  w.sizes = {SizeExpr::constant(3)};
  w.dataOffset = 64;
  w.dataSize = 3;
  ArgInfo x;
  x.name = "x";
  x.sizes = {b};
  sig.args = {w, x};
  sig.results = {
      {ResultKind::UserOutput, DType::float32(), "y", 7, {b * SizeExpr::constant(2)}, {}},
      {ResultKind::UserInputMutation, DType::float32(), "x", 1, {b}, {}}};
  sig.results[0].strides = {3};
  sig.memory.arenaBytes = 4160;
  REQUIRE(verifySignature(sig) == "");

  std::string expected = "TGCS" + le(4, 4) +
                         // symbols
                         le(1, 4) + str("b") + le(1, 8) + le(8, 8) +
                         // args
                         le(2, 4) +
                         // w: parameter, int8, [3], data at 64, 3 bytes
                         std::string{0, 0, 8} + str("w") + le(1, 4) + le(1, 4) +
                         op(ExprOpcode::Const, 3) + le(64, 8) + le(3, 8) +
                         // x: user input, float32, [b], no data
                         std::string{3, 2, 32} + str("x") + le(1, 4) + le(1, 4) +
                         op(ExprOpcode::Sym, 0) + le(0, 8) + le(0, 8) +
                         // results
                         le(2, 4) +
                         // y: user output (target ignored), [b*2]
                         std::string{0, 2, 32} + str("y") + le(0xFFFFFFFF, 4) + le(1, 4) +
                         le(3, 4) + op(ExprOpcode::Sym, 0) + op(ExprOpcode::Const, 2) +
                         op(ExprOpcode::Mul, 0) +
                         // ... laid out with stride 3
                         le(1, 4) + le(3, 8) +
                         // x mutated: target arg 1, row-major (no strides)
                         std::string{2, 2, 32} + str("x") + le(1, 4) + le(1, 4) + le(1, 4) +
                         op(ExprOpcode::Sym, 0) + le(0, 4) +
                         // the forward's arena
                         le(4160, 8) +
                         // no backward
                         std::string{0};
  CHECK(encodeSignatureBlob(sig) == expected);
}

TEST_CASE("The blob is deterministic", "[signature]") {
  CHECK(encodeSignatureBlob(tiny()) == encodeSignatureBlob(tiny()));
}

TEST_CASE("Weights are appended at 64-byte boundaries", "[signature]") {
  std::string blob;
  ArgInfo a, b;
  appendWeights(blob, a, "abc");
  appendWeights(blob, b, "defg");
  CHECK(a.dataOffset == 0);
  CHECK(a.dataSize == 3);
  CHECK(b.dataOffset == 64);
  CHECK(b.dataSize == 4);
  CHECK(blob.size() == 68);
  CHECK(blob.substr(64) == "defg");
  CHECK(blob.substr(3, 61) == std::string(61, '\0'));
}

TEST_CASE("Size expressions evaluate with Python semantics", "[signature]") {
  SizeExpr s = SizeExpr::symbol(0), t = SizeExpr::symbol(1);
  CHECK(SizeExpr::floorDiv(s, t).evaluate({-7, 2}) == -4);
  CHECK(SizeExpr::floorDiv(s, t).evaluate({7, -2}) == -4);
  CHECK(SizeExpr::floorDiv(s, t).evaluate({7, 2}) == 3);
  CHECK(SizeExpr::ceilDiv(s, t).evaluate({7, 2}) == 4);
  CHECK(SizeExpr::ceilDiv(s, t).evaluate({-7, 2}) == -3);
  CHECK(SizeExpr::mod(s, t).evaluate({-7, 2}) == 1);
  CHECK(SizeExpr::mod(s, t).evaluate({7, -2}) == -1);
  CHECK((s * t + -s).evaluate({3, 5}) == 12);
  CHECK(SizeExpr::constant(5).isConstant());
  CHECK_FALSE(s.isConstant());
  CHECK((SizeExpr::constant(6) * SizeExpr::constant(7)).constantValue() == 42);
  CHECK_THROWS_AS(SizeExpr::floorDiv(s, t).evaluate({1, 0}), std::domain_error);
  CHECK_THROWS_AS((s * t).evaluate({std::numeric_limits<int64_t>::max(), 2}), std::domain_error);
  CHECK_THROWS_AS(s.evaluate({}), std::domain_error);
}

TEST_CASE("Size expressions print in infix with few parentheses", "[signature]") {
  std::vector<SymbolInfo> symbols = {{"s0"}, {"s1"}};
  SizeExpr s0 = SizeExpr::symbol(0), s1 = SizeExpr::symbol(1);
  SizeExpr two = SizeExpr::constant(2);
  auto print = [&](const SizeExpr &e) { return printSizeExpr(e, symbols); };
  CHECK(print(s0 * SizeExpr::constant(4)) == "s0*4");
  CHECK(print(two * s0 + SizeExpr::constant(1)) == "2*s0 + 1");
  CHECK(print(s0 + SizeExpr::constant(-1)) == "s0 - 1");
  CHECK(print(s0 + -s1) == "s0 - s1");
  CHECK(print(s0 + -(s1 + two)) == "s0 - (s1 + 2)");
  CHECK(print(SizeExpr::floorDiv(s0 + s1, two)) == "(s0 + s1)//2");
  CHECK(print(SizeExpr::floorDiv(s0, s1 * two)) == "s0//(s1*2)");
  CHECK(print(SizeExpr::mod(s0, two)) == "s0%2");
  CHECK(print(SizeExpr::ceilDiv(s0 + s1, SizeExpr::constant(4))) == "ceildiv(s0 + s1, 4)");
  CHECK(print(-(s0 * s1)) == "-(s0*s1)");
  CHECK(print(-SizeExpr::constant(-3)) == "-(-3)");
  CHECK(print(s0 * (s1 + two)) == "s0*(s1 + 2)");
  CHECK(print(SizeExpr::fromOps({{ExprOpcode::Add, 0}})) ==
        "<malformed: stack underflow at operation 0>");
}

TEST_CASE("dtypes are named as PyTorch names them", "[signature]") {
  CHECK(dtypeName(DType::float32()) == "float32");
  CHECK(dtypeName(DType::bfloat16()) == "bfloat16");
  CHECK(dtypeName(DType::int64()) == "int64");
  CHECK(dtypeName(DType::uint8()) == "uint8");
  CHECK(dtypeName(DType::boolean()) == "bool");
  CHECK(dtypeName(DType{9, 8}) == "dtype(code=9, bits=8)");
}

TEST_CASE("verifySignature accepts well-formed signatures", "[signature]") {
  CHECK(verifySignature(tiny()) == "");
  CHECK(verifySignature(halvesSignature()) == "");
}

TEST_CASE("verifySignature reports what the runtime would reject", "[signature]") {
  ModelSignature sig = tiny();
  auto problem = [&] { return verifySignature(sig); };
  SECTION("a name that is not a C identifier") {
    sig.name = "my-model";
    CHECK(problem() == "model 'my-model': the name is not a C identifier");
  }
  SECTION("an empty symbol range") {
    sig.symbols[0].min = 9;
    sig.symbols[0].max = 3;
    CHECK(problem() == "symbol 'batch': its minimum exceeds its maximum");
  }
  SECTION("a symbolic state shape") {
    sig.args[0].sizes = {SizeExpr::symbol(0)};
    CHECK(problem() == "parameter 'w': its shape depends on a symbol");
  }
  SECTION("a data size that does not match the state's shape") {
    sig.args[0].dataSize = 4;
    CHECK(problem() == "parameter 'w': dataSize 4 does not match its dtype "
                       "and shape (16 bytes)");
  }
  SECTION("a mutation whose dtype differs from its target") {
    sig.results[3].dtype = DType::float64();
    CHECK(problem() == "new value of input 'x': dtype or rank differs from "
                       "the target argument");
  }
  SECTION("two mutations of one target") {
    sig.results.push_back(sig.results[2]);
    CHECK(problem() == "new value of buffer 'count': target is rewritten "
                       "twice");
  }
  SECTION("a target out of range") {
    sig.results[2].target = 17;
    CHECK(problem() == "new value of buffer 'count': target argument out of range");
  }
  SECTION("a symbol index out of range") {
    sig.results[0].sizes[0] = SizeExpr::symbol(3);
    CHECK(problem() == "output 'out': malformed size expression: symbol index 3 out of "
                       "range");
  }
  SECTION("duplicate state names") {
    sig.args[2].name = "w";
    CHECK(problem() == "constant 'w': the name is used twice");
  }
  SECTION("a symbol no input dimension determines") {
    sig.args[4].sizes = {SizeExpr::symbol(0) * SizeExpr::symbol(0)};
    sig.args[3].sizes[0] = SizeExpr::constant(1) + SizeExpr::symbol(0) * SizeExpr::symbol(0);
    CHECK(problem() == "symbol 'batch': (used by 'x') is not a size of any "
                       "input dimension, so it cannot be bound");
  }
  SECTION("an unsupported dtype") {
    sig.args[3].dtype = DType{2, 4};
    CHECK(problem() == "input 'x': unsupported dtype dtype(code=2, bits=4)");
  }
  SECTION("a layout of a mutation") {
    sig.results[3].strides = {1, 2};
    CHECK(problem() == "new value of input 'x': only user outputs have a layout");
  }
  SECTION("a layout with a stride per dimension but one") {
    sig.results[0].strides = {1};
    CHECK(problem() == "output 'out': its layout has a stride count other than its rank");
  }
  SECTION("a layout with a negative stride") {
    sig.results[0].strides = {-4, 1};
    CHECK(problem() == "output 'out': its layout has a negative stride");
  }
}

TEST_CASE("model.json lists inputs, outputs, state, symbols and mutations", "[signature]") {
  const char *expected = R"({
  "name": "tiny",
  "abi_version": 2,
  "inputs": [
    {
      "name": "x",
      "dtype": "float32",
      "shape": [
        "batch",
        4
      ],
      "mutated": true
    },
    {
      "name": "y",
      "dtype": "float32",
      "shape": [
        "batch"
      ],
      "mutated": false
    }
  ],
  "outputs": [
    {
      "name": "out",
      "dtype": "float32",
      "shape": [
        "batch",
        4
      ]
    },
    {
      "name": "ys",
      "dtype": "float32",
      "shape": [
        "2*batch + 1"
      ]
    }
  ],
  "state": [
    {
      "name": "w",
      "dtype": "float32",
      "shape": [
        4
      ],
      "kind": "parameter"
    },
    {
      "name": "count",
      "dtype": "int64",
      "shape": [],
      "kind": "buffer"
    },
    {
      "name": "bias",
      "dtype": "float32",
      "shape": [],
      "kind": "constant"
    }
  ],
  "symbols": [
    {
      "name": "batch",
      "min": 1,
      "max": 64
    }
  ],
  "mutations": [
    {
      "kind": "buffer",
      "target": "count"
    },
    {
      "kind": "user_input",
      "target": "x"
    }
  ],
  "memory": {
    "arena_bytes": 4160,
    "forward": {
      "arena_bytes": 4160,
      "buffers": 3,
      "buffer_bytes": 6208,
      "dynamic_buffers": 2,
      "unplanned": 1
    }
  }
}
)";
  ModelSignature sig = tiny();
  sig.memory = {4160, 3, 6208, 1, 2};
  CHECK(writeSignatureJson(sig) == expected);
}

TEST_CASE("model.json writes an unbounded symbol maximum as null", "[signature]") {
  CHECK(writeSignatureJson(halvesSignature()).find(R"("max": null)") != std::string::npos);
}

namespace {
/// The declarations of the TGC_MODEL_API_V2 block, without comments,
/// export macros or line breaks, one per statement.
std::set<std::string> apiDeclarations(const std::string &text) {
  size_t begin = text.find("#define TGC_MODEL_API_V2");
  size_t end = text.find("#endif /* TGC_MODEL_API_V2 */");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string block = text.substr(begin, end - begin);
  block = block.substr(block.find('\n'));
  block = std::regex_replace(block, std::regex(R"(/\*[\s\S]*?\*/)"), " ");
  block = std::regex_replace(block, std::regex("TGC_EXPORT"), " ");
  block = std::regex_replace(block, std::regex(R"(\s+)"), " ");
  std::set<std::string> declarations;
  std::stringstream statements(block);
  std::string statement;
  while (std::getline(statements, statement, ';')) {
    statement = std::regex_replace(statement, std::regex(R"(^ +| +$)"), "");
    if (!statement.empty())
      declarations.insert(statement);
  }
  return declarations;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
} // namespace

TEST_CASE("model.h declares the same API as the runtime header", "[signature]") {
  std::string runtimeHeader = readFile(TGC_SOURCE_DIR "/include/tgc/Runtime/tgc_runtime.h");
  std::set<std::string> runtime = apiDeclarations(runtimeHeader);
  CHECK(runtime.size() == 32); // the typedef and 31 functions
  CHECK(apiDeclarations(writeModelHeader(tiny())) == runtime);
}

TEST_CASE("model.h declares <name>_create and documents inputs and outputs", "[signature]") {
  std::string header = writeModelHeader(tiny());
  CHECK(header.find("#ifndef TGC_MODEL_TINY_H") != std::string::npos);
  CHECK(header.find("#include <dlpack/dlpack.h>") != std::string::npos);
  CHECK(header.find("int tiny_create(tgc_model **out);") != std::string::npos);
  CHECK(header.find("x: float32[batch, 4]  (updated in place)") != std::string::npos);
  CHECK(header.find("y: float32[batch]\n") != std::string::npos);
  CHECK(header.find("ys: float32[2*batch + 1]") != std::string::npos);
  CHECK(header.find("Symbol batch in [1, 64]") != std::string::npos);
  CHECK(header.find("extern \"C\"") != std::string::npos);
}

TEST_CASE("model.h comments cannot be closed by names", "[signature]") {
  ModelSignature sig = tiny();
  sig.args[3].name = "evil*/name";
  std::string header = writeModelHeader(sig);
  CHECK(header.find("evil*/") == std::string::npos);
  CHECK(header.find("evil* /name") != std::string::npos);
}
