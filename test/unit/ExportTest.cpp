// Unit tests for the .pt2 reader's algorithms: sympy size expressions, strided copies,
// autocast's cast policies, the JSON parse.
#include "Frontend/Common/Autocast.h"
#include "Frontend/Common/Json.h"
#include "Frontend/Common/StridedCopy.h"
#include "Frontend/Export/ExportFormat.h"
#include "Frontend/Export/SympyExpr.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// Parses sympy text with symbols numbered in order of first appearance, as the reader
/// numbers them; the expression prints as MLIR does (`s0 * 8`), or as `error: ...`.
struct SympyFixture {
  MLIRContext ctx;
  std::vector<std::string> symbols;

  std::string parse(llvm::StringRef text) {
    auto getSymbol = [&](llvm::StringRef name) {
      auto it = std::find(symbols.begin(), symbols.end(), name.str());
      if (it == symbols.end())
        it = symbols.insert(symbols.end(), name.str());
      return getAffineSymbolExpr(it - symbols.begin(), &ctx);
    };
    llvm::Expected<AffineExpr> expr = tgc::pt2::parseSympyExpr(text, &ctx, getSymbol);
    if (!expr)
      return "error: " + llvm::toString(expr.takeError());
    std::string printed;
    llvm::raw_string_ostream os(printed);
    expr->print(os);
    return printed;
  }
};

std::string floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

std::vector<float> asFloats(const std::vector<char> &bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  if (!bytes.empty()) // an empty vector's data() may be NULL, which memcpy may not take
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

/// Copies the view of `storage` (floats) and returns the floats, or throws the error.
std::vector<float> gather(const std::string &storage, llvm::ArrayRef<int64_t> sizes,
                          llvm::ArrayRef<int64_t> strides, int64_t offset) {
  llvm::Expected<std::vector<char>> data =
      tgc::frontend::copyStridedToContiguous(storage, sizes, strides, offset, sizeof(float));
  if (!data)
    throw std::runtime_error(llvm::toString(data.takeError()));
  return asFloats(*data);
}

std::string gatherError(const std::string &storage, llvm::ArrayRef<int64_t> sizes,
                        llvm::ArrayRef<int64_t> strides, int64_t offset) {
  llvm::Expected<std::vector<char>> data =
      tgc::frontend::copyStridedToContiguous(storage, sizes, strides, offset, sizeof(float));
  return data ? "" : llvm::toString(data.takeError());
}

} // namespace

//===----------------------------------------------------------------------===//
// parseSympyExpr
//===----------------------------------------------------------------------===//

TEST_CASE("An Integer is a constant size", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("Integer(8)") == "8");
  CHECK(f.parse("Integer(-1)") == "-1");
  CHECK(f.parse(" 42 ") == "42");
}

TEST_CASE("A Symbol is an affine symbol and its assumptions are ignored", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("Symbol('s77', positive=True, integer=True)") == "s0");
  CHECK(f.parse("Symbol(\"s3\")") == "s1");
  CHECK(f.symbols == std::vector<std::string>{"s77", "s3"});
}

TEST_CASE("Symbols keep their position across expressions", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("Add(Symbol('s1'), Symbol('s0'))") == "s0 + s1");
  CHECK(f.parse("Symbol('s0')") == "s1");
}

TEST_CASE("Mul and Add build affine expressions", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("Mul(Integer(8), Symbol('s77', positive=True, integer=True))") == "s0 * 8");
  CHECK(f.parse("Add(Mul(Integer(8), Symbol('s77')), Integer(-1))") == "s0 * 8 - 1");
  CHECK(f.parse("Mul(Integer(-1), Symbol('s77'))") == "-s0");
  CHECK(f.parse("Add(Integer(1), Integer(2), Integer(3))") == "6");
}

TEST_CASE("FloorDiv and Mod by a positive integer are supported", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("FloorDiv(Symbol('s0'), Integer(2))") == "s0 floordiv 2");
  CHECK(f.parse("CleanDiv(Mul(Integer(4), Symbol('s0')), Integer(2))") == "s0 * 2");
  CHECK(f.parse("Mod(Symbol('s0'), Integer(3))") == "s0 mod 3");
  CHECK(f.parse("PythonMod(Symbol('s0'), Integer(3))") == "s0 mod 3");
}

TEST_CASE("Pow with a small integer exponent multiplies", "[export][sympy]") {
  SympyFixture f;
  CHECK(f.parse("Pow(Symbol('s0'), Integer(2))") == "s0 * s0");
  CHECK(f.parse("Pow(Symbol('s0'), Integer(0))") == "1");
}

TEST_CASE("Forms that are not affine are errors naming the function", "[export][sympy]") {
  SympyFixture f;
  CHECK_THAT(f.parse("Max(Symbol('s0'), Integer(2))"),
             Catch::StartsWith("error: 'Max' is not supported in sizes"));
  CHECK_THAT(f.parse("Rational(1, 2)"), Catch::StartsWith("error: 'Rational' is not supported"));
  CHECK_THAT(f.parse("FloorDiv(Integer(4), Symbol('s0'))"),
             Catch::StartsWith("error: 'FloorDiv' is supported by a positive integer only"));
  CHECK_THAT(f.parse("Mod(Symbol('s0'), Integer(0))"),
             Catch::StartsWith("error: 'Mod' is supported by a positive integer only"));
  CHECK_THAT(f.parse("Pow(Symbol('s0'), Symbol('s1'))"), Catch::StartsWith("error: Pow"));
}

TEST_CASE("Malformed text is an error, never a crash", "[export][sympy]") {
  SympyFixture f;
  for (const char *text : {"", "Mul(", "Mul(Integer(1)", "Symbol(s0)", "Symbol('s0",
                           "Integer(99999999999999999999)", "Integer(1) junk", "Integer(x)",
                           "Symbol()", "Add()", "Mul(Integer(1),)", "(", "Integer('1')"})
    CHECK_THAT(f.parse(text), Catch::StartsWith("error: "));
  std::string deep;
  for (int i = 0; i < 10000; ++i)
    deep += "Add(";
  CHECK_THAT(f.parse(deep), Catch::Contains("nested too deeply"));
}

//===----------------------------------------------------------------------===//
// copyStridedToContiguous
//===----------------------------------------------------------------------===//

TEST_CASE("A contiguous view is copied as stored", "[capture][strided]") {
  std::string storage = floats({1, 2, 3, 4, 5, 6});
  CHECK(gather(storage, {2, 3}, {3, 1}, 0) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("A view into a shared storage starts at its offset", "[capture][strided]") {
  std::string storage = floats({1, 2, 3, 4, 5, 6});
  CHECK(gather(storage, {3}, {1}, 2) == std::vector<float>{3, 4, 5});
  CHECK(gather(storage, {}, {}, 5) == std::vector<float>{6});
}

TEST_CASE("A transposed view is gathered in row-major order", "[capture][strided]") {
  std::string storage = floats({1, 2, 3, 4, 5, 6}); // [[1, 2, 3], [4, 5, 6]]
  CHECK(gather(storage, {3, 2}, {1, 3}, 0) == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("A strided and broadcast view repeats and skips elements", "[capture][strided]") {
  std::string storage = floats({1, 2, 3, 4, 5, 6});
  CHECK(gather(storage, {2, 2}, {0, 2}, 1) == std::vector<float>{2, 4, 2, 4});
}

TEST_CASE("An empty view needs no storage", "[capture][strided]") {
  CHECK(gather("", {0, 4}, {4, 1}, 0).empty());
}

TEST_CASE("A view that does not fit its storage is an error", "[capture][strided]") {
  std::string storage = floats({1, 2, 3, 4});
  CHECK_THAT(gatherError(storage, {2, 3}, {3, 1}, 0),
             Catch::Contains("needs 24 bytes of storage but the archive holds 16"));
  CHECK_THAT(gatherError(storage, {4}, {1}, 1), Catch::Contains("needs 20 bytes"));
  CHECK_THAT(gatherError(storage, {2}, {-1}, 1), Catch::Contains("negative or overflowing"));
  CHECK_THAT(gatherError(storage, {2}, {1}, -1), Catch::Contains("negative or overflowing"));
  CHECK_THAT(gatherError(storage, {INT64_MAX, 4}, {4, 1}, 0),
             Catch::Contains("negative or overflowing"));
  CHECK_THAT(gatherError(storage, {2}, {1, 1}, 0), Catch::Contains("1 sizes but 2 strides"));
}

TEST_CASE("Autocast policies are looked up by schema name and overload, per device",
          "[export][autocast]") {
  using tgc::frontend::AutocastPolicy;
  using tgc::frontend::getAutocastPolicy;
  // The default overload is the plain name; other overloads keep theirs.
  CHECK(getAutocastPolicy("cpu", "aten.linear.default") == AutocastPolicy::LowerPrecision);
  CHECK(getAutocastPolicy("cpu", "aten.conv2d.padding") == AutocastPolicy::LowerPrecision);
  CHECK(getAutocastPolicy("cpu", "aten.conv_transpose2d.input") == AutocastPolicy::LowerPrecision);
  CHECK(getAutocastPolicy("cpu", "aten.cat.default") == AutocastPolicy::Promote);
  CHECK(getAutocastPolicy("cpu", "aten.mse_loss.default") == AutocastPolicy::Fp32);
  CHECK(getAutocastPolicy("cpu", "aten.linalg_inv.default") == AutocastPolicy::Fp32);
  // Not registered for the CPU: runs as it is.
  CHECK(getAutocastPolicy("cpu", "aten.softmax.int") == AutocastPolicy::None);
  CHECK(getAutocastPolicy("cpu", "aten.exp.default") == AutocastPolicy::None);
  CHECK(getAutocastPolicy("cpu", "aten.add.Tensor") == AutocastPolicy::None);
  // CUDA's lists differ.
  CHECK(getAutocastPolicy("cuda", "aten.softmax.int") == AutocastPolicy::Fp32OptDType);
  CHECK(getAutocastPolicy("cuda", "aten.exp.default") == AutocastPolicy::Fp32);
  CHECK(getAutocastPolicy("cuda", "aten.pow.Tensor_Scalar") == AutocastPolicy::Fp32);
  CHECK(getAutocastPolicy("cuda", "aten.pow.Scalar_Scalar") == AutocastPolicy::None);
  CHECK(getAutocastPolicy("cuda", "aten.cat.default") == AutocastPolicy::None);
  CHECK(getAutocastPolicy("cuda", "aten.scatter_add.default") == AutocastPolicy::Promote);
  CHECK(getAutocastPolicy("cuda", "aten.einsum.default") == AutocastPolicy::LowerPrecision);
  CHECK(getAutocastPolicy("mps", "aten.linear.default") == AutocastPolicy::None);
  CHECK(getAutocastPolicy("cpu", "transformers.grouped_mm_fallback.default") ==
        AutocastPolicy::None);
}

TEST_CASE("The innermost autocast block of the tensor's device governs it", "[export][autocast]") {
  using tgc::frontend::AutocastRegion;
  MLIRContext ctx;
  std::vector<AutocastRegion> regions = {
      {"cuda", Type(), true}, {"cpu", Type(), true}, {"cpu", Type(), false}};
  const AutocastRegion *cpu = tgc::frontend::findAutocastRegion(regions, "cpu");
  REQUIRE(cpu);
  CHECK(!cpu->enabled); // the nested block that turns autocast off
  const AutocastRegion *cuda = tgc::frontend::findAutocastRegion(regions, "cuda");
  REQUIRE(cuda);
  CHECK(cuda->enabled);
  CHECK(!tgc::frontend::findAutocastRegion(regions, "xpu"));
}

TEST_CASE("parseJson gives what Json::parse gives, in file order", "[export][json]") {
  using tgc::frontend::Json;
  using tgc::frontend::parseJson;
  const char *documents[] = {
      R"({"b": 1, "a": [true, null, -3, 18446744073709551615, 2.5, "s"], "c": {}})",
      R"([[], [[{"z": {"y": {"x": [1, {"w": 2}]}}}]], {}, ""])",
      R"({"k": 1, "j": {"n": [1, 2]}, "k": {"m": 3}, "i": 0})", // k: last value, first place
      R"("\u00e9\n")",
      R"(-0.0)",
  };
  for (const char *text : documents) {
    Json ours = parseJson(text);
    Json theirs = Json::parse(text);
    CHECK(ours == theirs);
    CHECK(ours.dump() == theirs.dump()); // the same key order
  }
  CHECK(parseJson(R"({"k": 1, "j": 2, "k": 3})").dump() == R"({"k":3,"j":2})");

  // Objects with many members (a program's tensor_values) keep their order.
  std::string big = "{";
  for (int i = 999; i >= 0; --i)
    big += "\"v" + std::to_string(i) + "\": {\"n\": " + std::to_string(i) + "}" + (i ? ", " : "}");
  Json parsed = parseJson(big);
  REQUIRE(parsed.size() == 1000);
  CHECK(parsed.begin().key() == "v999");
  CHECK(parsed.back().at("n") == 0);
  CHECK(parsed.dump() == Json::parse(big).dump());

  for (const char *bad : {"", "{", R"({"a" 1})", "[1,]", "{} x", "nul"}) {
    std::string ours, theirs;
    try {
      parseJson(bad);
    } catch (const Json::exception &e) {
      ours = e.what();
    }
    try {
      (void)Json::parse(bad);
    } catch (const Json::exception &e) {
      theirs = e.what();
    }
    CHECK(!ours.empty());
    CHECK(ours == theirs); // the same message, with its byte position
  }
}

TEST_CASE("quoteNonFiniteLiterals quotes bare NaN and infinities only", "[export][json]") {
  using tgc::pt2::quoteNonFiniteLiterals;
  CHECK(quoteNonFiniteLiterals(R"({"a": NaN, "b": [-Infinity, Infinity, -1]})") ==
        R"({"a": "NaN", "b": ["-Infinity", "Infinity", -1]})");
  CHECK(quoteNonFiniteLiterals(R"({"NaN": "Infinity \" NaN", "c": -2})") ==
        R"({"NaN": "Infinity \" NaN", "c": -2})");
}
