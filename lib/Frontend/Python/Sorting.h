// Sorting constants as Python does, for sorted() and list.sort().
#ifndef TGC_LIB_FRONTEND_PYTHON_SORTING_H
#define TGC_LIB_FRONTEND_PYTHON_SORTING_H

#include "Variables.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgc::py {

/// The `reverse=` of sorted() / list.sort(), and in `key` their key function (null for
/// none): nullopt, with the keyword in `unsupported`, for any other keyword.
std::optional<bool> sortReverse(const std::vector<std::pair<std::string, Var>> &keywords,
                                std::string &unsupported, Var &key);

/// Sorts `items` stably as Python would, by `keys` (one per item) when given; false when
/// their order is not known at capture time (constant numbers, strings and tuples of them
/// sort).
bool sortConstants(std::vector<Var> &items, bool reverse, const std::vector<Var> *keys = nullptr);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_SORTING_H
