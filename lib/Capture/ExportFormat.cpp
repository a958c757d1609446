// What torch.export writes into a .pt2's JSON, independent of the IR built from it.
#include "ExportFormat.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

std::string tgc::unionKind(const Json &value) {
  if (!value.is_object() || value.size() != 1)
    return "";
  return value.begin().key();
}

const Json &tgc::unionValue(const Json &value) {
  static const Json null;
  return unionKind(value).empty() ? null : value.begin().value();
}

namespace {
struct DTypeCode {
  int64_t code;
  llvm::StringLiteral name;
  Type (*get)(MLIRContext *);
};
} // namespace

template <unsigned width, IntegerType::SignednessSemantics signedness = IntegerType::Signless>
static Type integerType(MLIRContext *ctx) {
  return IntegerType::get(ctx, width, signedness);
}
template <typename T> static Type floatType(MLIRContext *ctx) { return T::get(ctx); }

/// Signed integers are signless in tgc (as its i64 scalars are); unsigned ones say so.
static const DTypeCode kDTypes[] = {
    {1, "uint8", integerType<8, IntegerType::Unsigned>},
    {2, "int8", integerType<8>},
    {3, "int16", integerType<16>},
    {4, "int32", integerType<32>},
    {5, "int64", integerType<64>},
    {6, "float16", floatType<Float16Type>},
    {7, "float32", floatType<Float32Type>},
    {8, "float64", floatType<Float64Type>},
    {9, "complex32", nullptr},
    {10, "complex64", nullptr},
    {11, "complex128", nullptr},
    {12, "bool", integerType<1>},
    {13, "bfloat16", floatType<BFloat16Type>},
    {28, "uint16", integerType<16, IntegerType::Unsigned>},
    {29, "float8_e4m3fn", floatType<Float8E4M3FNType>},
    {30, "float8_e5m2", floatType<Float8E5M2Type>},
    {31, "float8_e4m3fnuz", floatType<Float8E4M3FNUZType>},
    {32, "float8_e5m2fnuz", floatType<Float8E5M2FNUZType>},
    {33, "float8_e8m0fnu", floatType<Float8E8M0FNUType>},
    {34, "uint32", integerType<32, IntegerType::Unsigned>},
    {35, "uint64", integerType<64, IntegerType::Unsigned>},
};

std::optional<ExportDType> tgc::lookupDType(int64_t code, MLIRContext *ctx) {
  const auto *it = llvm::find_if(kDTypes, [&](const DTypeCode &d) { return d.code == code; });
  if (it == std::end(kDTypes))
    return std::nullopt;
  return ExportDType{it->name, it->get ? it->get(ctx) : Type()};
}

std::optional<ExportDType> tgc::lookupDTypeByName(llvm::StringRef name, MLIRContext *ctx) {
  const auto *it = llvm::find_if(kDTypes, [&](const DTypeCode &d) { return d.name == name; });
  if (it == std::end(kDTypes))
    return std::nullopt;
  return ExportDType{it->name, it->get ? it->get(ctx) : Type()};
}

std::optional<ExportDType> tgc::lookupDTypeByType(Type type) {
  if (!type)
    return std::nullopt;
  for (const DTypeCode &d : kDTypes)
    if (d.get && d.get(type.getContext()) == type)
      return ExportDType{d.name, type};
  return std::nullopt;
}

unsigned tgc::getElementBytes(Type dtype) {
  return std::max(1u, dtype.getIntOrFloatBitWidth() / 8);
}

std::optional<double> tgc::parseFloat(const Json &value) {
  if (value.is_number())
    return value.get<double>();
  if (!value.is_string())
    return std::nullopt;
  const std::string &text = value.get_ref<const std::string &>();
  if (text == "Infinity")
    return INFINITY;
  if (text == "-Infinity")
    return -INFINITY;
  if (text == "NaN")
    return NAN;
  return std::nullopt;
}

std::string tgc::quoteNonFiniteLiterals(llvm::StringRef text) {
  static constexpr llvm::StringLiteral kTokens[] = {"NaN", "Infinity", "-Infinity"};
  std::string out;
  out.reserve(text.size());
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        inString = false;
      continue;
    }
    const auto *token = llvm::find_if(
        kTokens, [&](llvm::StringRef t) { return text.drop_front(i).starts_with(t); });
    if (token == std::end(kTokens)) {
      inString = c == '"';
      out += c;
      continue;
    }
    out += '"' + token->str() + '"';
    i += token->size() - 1;
  }
  return out;
}

/// `File "<path>", line <N>` frames of a Python stack trace, outermost first.
static llvm::SmallVector<std::pair<std::string, unsigned>> stackFrames(llvm::StringRef trace) {
  static constexpr llvm::StringLiteral kFile = "File \"", kLine = "\", line ";
  llvm::SmallVector<std::pair<std::string, unsigned>> frames;
  for (size_t at = trace.find(kFile); at != llvm::StringRef::npos; at = trace.find(kFile, at + 1)) {
    llvm::StringRef rest = trace.drop_front(at + kFile.size());
    size_t end = rest.find(kLine);
    if (end == llvm::StringRef::npos)
      break;
    llvm::StringRef digits = rest.drop_front(end + kLine.size());
    digits = digits.take_while([](char c) { return llvm::isDigit(c); });
    unsigned line = 0;
    if (!digits.getAsInteger(10, line))
      frames.push_back({rest.take_front(end).str(), line});
  }
  return frames;
}

/// Whether a frame is inside PyTorch itself rather than in the user's model code.
static bool isTorchFrame(llvm::StringRef file) {
  return file.starts_with("torch/") || file.starts_with("<") ||
         file.contains("/site-packages/torch/") || file.contains("/dist-packages/torch/");
}

std::optional<std::pair<std::string, unsigned>> tgc::findUserFrame(llvm::StringRef stackTrace) {
  auto frames = stackFrames(stackTrace);
  auto user = llvm::find_if(llvm::reverse(frames),
                            [](const auto &frame) { return !isTorchFrame(frame.first); });
  if (user != llvm::reverse(frames).end())
    return *user;
  if (!frames.empty())
    return frames.back();
  return std::nullopt;
}

std::string tgc::getResourceName(llvm::StringRef fqn) {
  std::string name = fqn.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()) || name.front() == '.')
    name.insert(0, "_");
  return name;
}

DictionaryAttr tgc::getGraphInputAttrs(MLIRContext *ctx, llvm::StringRef kind,
                                       llvm::StringRef name) {
  Builder builder(ctx);
  NamedAttrList attrs;
  attrs.set(attr::kKind, builder.getStringAttr(kind));
  attrs.set(attr::kName, builder.getStringAttr(name));
  if (kind != "user_input")
    attrs.set(attr::kGlobal, FlatSymbolRefAttr::get(ctx, name));
  return attrs.getDictionary(ctx);
}
