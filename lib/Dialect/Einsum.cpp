// Parsing einsum equations (include/tgc/Dialect/Einsum.h).
#include "tgc/Dialect/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <array>

using namespace tgc;

static constexpr int kEllipsisBase = 52;

static int letterLabel(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/// The labels of one term (`ij`, `...ij`, `i...j`); `ellipsis` receives the position of
/// the ellipsis among them (-1 without one).
static bool parseTerm(llvm::StringRef term, llvm::SmallVectorImpl<int> &labels, int &ellipsis,
                      std::string &error) {
  ellipsis = -1;
  term = term.trim();
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (!term.substr(i).starts_with("...") || ellipsis >= 0) {
        error = "einsum: malformed ellipsis in '" + term.str() + "'";
        return false;
      }
      ellipsis = static_cast<int>(labels.size());
      i += 2;
      continue;
    }
    int label = letterLabel(c);
    if (label < 0) {
      error = std::string("einsum: invalid subscript '") + c + "' (letters a-z and A-Z only)";
      return false;
    }
    labels.push_back(label);
  }
  return true;
}

/// The labels with the ellipsis at `at` replaced by the last `count` of the
/// `width` ellipsis labels.
static llvm::SmallVector<int, 6> expandEllipsis(llvm::ArrayRef<int> labels, int at, int64_t count,
                                                int64_t width) {
  llvm::SmallVector<int, 6> out(labels.begin(), labels.begin() + (at < 0 ? labels.size() : at));
  if (at >= 0) {
    for (int64_t k = width - count; k < width; ++k)
      out.push_back(kEllipsisBase + static_cast<int>(k));
    out.append(labels.begin() + at, labels.end());
  }
  return out;
}

bool tgc::parseEinsum(llvm::StringRef equation, llvm::ArrayRef<int64_t> ranks, EinsumSpec &spec,
                      std::string &error) {
  auto [lhs, rhs] = equation.split("->");
  bool explicitOutput = equation.contains("->");
  llvm::SmallVector<llvm::StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size()) {
    error = "einsum: the equation '" + equation.str() + "' has " + std::to_string(terms.size()) +
            " operand(s), but " + std::to_string(ranks.size()) + " were given";
    return false;
  }
  llvm::SmallVector<llvm::SmallVector<int, 6>> labels(terms.size());
  llvm::SmallVector<int> ellipses(terms.size());
  int64_t width = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (!parseTerm(term, labels[i], ellipses[i], error))
      return false;
    int64_t explicitCount = static_cast<int64_t>(labels[i].size());
    int64_t covered = ranks[i] - explicitCount;
    if (covered < 0 || (ellipses[i] < 0 && covered != 0)) {
      error = "einsum: operand " + std::to_string(i) + " has rank " + std::to_string(ranks[i]) +
              " but its subscripts '" + term.trim().str() + "' name " +
              std::to_string(explicitCount) + " dimension(s)";
      return false;
    }
    if (ellipses[i] >= 0)
      width = std::max(width, covered);
  }
  spec.inputs.clear();
  std::array<int, kEllipsisBase> counts{};
  for (auto [i, term] : llvm::enumerate(labels)) {
    int64_t covered = ranks[i] - static_cast<int64_t>(term.size());
    spec.inputs.push_back(expandEllipsis(term, ellipses[i], covered, width));
    for (int label : term)
      ++counts[label];
  }
  spec.output.clear();
  if (explicitOutput) {
    llvm::SmallVector<int, 6> out;
    int at;
    if (!parseTerm(rhs, out, at, error))
      return false;
    spec.output = expandEllipsis(out, at, at >= 0 ? width : 0, width);
    for (auto [i, label] : llvm::enumerate(out)) {
      if (counts[label] == 0) {
        error = "einsum: output subscript '" + rhs.trim().str() + "' names a label no operand has";
        return false;
      }
      if (llvm::is_contained(llvm::ArrayRef<int>(out).drop_front(i + 1), label)) {
        error = "einsum: output subscript '" + rhs.trim().str() + "' repeats a label";
        return false;
      }
    }
    return true;
  }
  for (int64_t k = 0; k < width; ++k)
    spec.output.push_back(kEllipsisBase + static_cast<int>(k));
  for (int label = 0; label < kEllipsisBase; ++label)
    if (counts[label] == 1)
      spec.output.push_back(label);
  return true;
}
