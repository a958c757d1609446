// What torch.export writes into a .pt2's JSON, independent of the IR built from it.
#include "ExportFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::pt2;

std::string tgc::pt2::unionKind(const Json &value) {
  if (!value.is_object() || value.size() != 1)
    return "";
  return value.begin().key();
}

const Json &tgc::pt2::unionValue(const Json &value) {
  static const Json null;
  return unionKind(value).empty() ? null : value.begin().value();
}

std::optional<double> tgc::pt2::parseFloat(const Json &value) {
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

std::string tgc::pt2::quoteNonFiniteLiterals(llvm::StringRef text) {
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
    // Only a token's first character starts a comparison: this runs over every byte.
    const auto *token = std::end(kTokens);
    if (c == 'N' || c == 'I' || c == '-')
      token = llvm::find_if(kTokens,
                            [&](llvm::StringRef t) { return text.drop_front(i).starts_with(t); });
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

std::optional<std::pair<std::string, unsigned>>
tgc::pt2::findUserFrame(llvm::StringRef stackTrace) {
  auto frames = stackFrames(stackTrace);
  auto user = llvm::find_if(llvm::reverse(frames),
                            [](const auto &frame) { return !isTorchFrame(frame.first); });
  if (user != llvm::reverse(frames).end())
    return *user;
  if (!frames.empty())
    return frames.back();
  return std::nullopt;
}
