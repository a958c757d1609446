//===- Json.cpp - Parsing the frontends' JSON in file order ---------------===//

#include "Frontend/Common/Json.h"

#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>
#include <vector>

using namespace tgc::frontend;

namespace {

/// nlohmann's SAX events built into a Json whose objects are filled once.
class OrderedBuilder final : public nlohmann::json_sax<Json> {
public:
  Json result;

  bool null() override { return add(Json(nullptr)); }
  bool boolean(bool value) override { return add(Json(value)); }
  bool number_integer(number_integer_t value) override { return add(Json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return add(Json(value)); }
  bool number_float(number_float_t value, const string_t &) override { return add(Json(value)); }
  bool string(string_t &value) override { return add(Json(std::move(value))); }
  bool binary(binary_t &value) override { return add(Json(std::move(value))); }

  bool start_object(std::size_t) override {
    open.push_back(Open{true, {}, {}, Json::array()});
    return true;
  }
  bool key(string_t &name) override {
    open.back().key = std::move(name);
    return true;
  }
  bool end_object() override {
    Open done = std::move(open.back());
    open.pop_back();
    return add(makeObject(std::move(done.members)));
  }
  bool start_array(std::size_t) override {
    open.push_back(Open{false, {}, {}, Json::array()});
    return true;
  }
  bool end_array() override {
    Json array = std::move(open.back().array);
    open.pop_back();
    return add(std::move(array));
  }

  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &error) override {
    // Json::exception is the base of what the parser reports: what Json::parse throws.
    throw error;
  }

private:
  using Members = std::vector<std::pair<std::string, Json>>;
  struct Open {
    bool object;
    std::string key;
    Members members;
    Json array;
  };
  std::vector<Open> open;

  bool add(Json value) {
    if (open.empty())
      result = std::move(value);
    else if (open.back().object)
      open.back().members.emplace_back(std::move(open.back().key), std::move(value));
    else
      open.back().array.get_ref<Json::array_t &>().push_back(std::move(value));
    return true;
  }

  /// The object of `members` in order; a repeated key keeps its first position and its
  /// last value, as nlohmann's own parser leaves it.
  static Json makeObject(Members members) {
    Json object = Json::object();
    auto &map = object.get_ref<Json::object_t &>();
    map.reserve(members.size()); // no growth below, so nothing is copied
    llvm::StringMap<size_t> position;
    for (auto &[name, value] : members) {
      auto [it, inserted] = position.try_emplace(name, map.size());
      if (inserted)
        map.emplace_back(std::move(name), std::move(value));
      else
        std::next(map.begin(), std::ptrdiff_t(it->second))->second = std::move(value);
    }
    return object;
  }
};

} // namespace

Json tgc::frontend::parseJson(llvm::StringRef text) {
  OrderedBuilder builder;
  Json::sax_parse(text.begin(), text.end(), &builder);
  return std::move(builder.result);
}
