// The JSON type the frontends read their files with.
#ifndef TGC_LIB_FRONTEND_COMMON_JSON_H
#define TGC_LIB_FRONTEND_COMMON_JSON_H

#include <nlohmann/json.hpp>

namespace tgc::frontend {

/// A file's JSON, with object keys kept in file order so that everything derived from it
/// (symbol order, for one) is deterministic and reads like the file.
using Json = nlohmann::ordered_json;

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_JSON_H
