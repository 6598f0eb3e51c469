#pragma once
// JSON a command reads from a file, parsed so that no ambiguity is resolved silently.
#include <nlohmann/json.hpp>
#include <string>

namespace xsa {

// Parses `text` like json::parse(text, nullptr, allow_exceptions): a syntax error gives a discarded value for
// the caller to report (or, with `allow_exceptions`, nlohmann's exception, which says where). An object that
// names one key twice is an InputError naming `source` and the key: nlohmann keeps the last value without a
// word, so a file holding two values under one name (a tensor, a config key, a result) would be read as
// whichever came last.
nlohmann::json parse_json_input(const std::string& text, const std::string& source,
                                bool allow_exceptions = false);

}  // namespace xsa
