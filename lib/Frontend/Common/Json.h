// The JSON type the frontends read their files with.
#ifndef TGC_LIB_FRONTEND_COMMON_JSON_H
#define TGC_LIB_FRONTEND_COMMON_JSON_H

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

namespace tgc::frontend {

/// A file's JSON, with object keys kept in file order so that everything derived from it
/// (symbol order, for one) is deterministic and reads like the file.
using Json = nlohmann::ordered_json;

/// `text` parsed as one JSON value; throws Json::exception (its message names the byte)
/// where it is not one. The result is what `Json::parse` gives, a repeated key's last
/// value at its first position included, without its cost: nlohmann's ordered_map is a
/// vector of pairs with a const key, which cannot move, so every growth of an object
/// deep-copies the members already read, once per enclosing object. This builds each
/// object's members first and moves them into an object of the final size.
Json parseJson(llvm::StringRef text);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_JSON_H
