// Sorting constants as Python does, for sorted() and list.sort().
#include "Sorting.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace tgc;
using namespace tgc::py;

/// Python's ordering of two constants: numbers, strings, tuples item by item; nullopt
/// when it is not known at capture time (a tie reaching a non-constant).
static std::optional<int> compareConstants(const Var &a, const Var &b) {
  if (a->is(Variable::Kind::Str) && b->is(Variable::Kind::Str))
    return a->name < b->name ? -1 : b->name < a->name ? 1 : 0;
  std::optional<double> x = a->getNumber(), y = b->getNumber();
  if (x && y)
    return *x < *y ? -1 : *y < *x ? 1 : 0;
  if (a->is(Variable::Kind::Tuple) && b->is(Variable::Kind::Tuple)) {
    for (size_t i = 0; i < a->items.size() && i < b->items.size(); ++i) {
      std::optional<int> c = compareConstants(a->items[i], b->items[i]);
      if (!c || *c != 0)
        return c;
    }
    return a->items.size() < b->items.size() ? -1 : int(a->items.size() > b->items.size());
  }
  return std::nullopt;
}

std::optional<bool> tgc::py::sortReverse(const std::vector<std::pair<std::string, Var>> &keywords,
                                         std::string &unsupported, Var &key) {
  bool reverse = false;
  key = nullptr;
  for (const auto &[keyword, value] : keywords) {
    if (keyword == "reverse" && value->is(Variable::Kind::Bool)) {
      reverse = value->boolValue;
    } else if (keyword == "key") {
      key = value->is(Variable::Kind::None) ? nullptr : value;
    } else {
      unsupported = keyword;
      return std::nullopt;
    }
  }
  return reverse;
}

bool tgc::py::sortConstants(std::vector<Var> &items, bool reverse, const std::vector<Var> *keys) {
  bool decided = true;
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const std::vector<Var> &by = keys ? *keys : items;
  // Stable, as Python's sort: equal keys keep their positions' order.
  llvm::sort(order, [&](size_t a, size_t b) {
    std::optional<int> c = compareConstants(by[a], by[b]);
    decided &= c.has_value();
    if (c && *c != 0)
      return reverse ? *c > 0 : *c < 0;
    return a < b;
  });
  std::vector<Var> sorted;
  for (size_t i : order)
    sorted.push_back(items[i]);
  items = std::move(sorted);
  return decided;
}
