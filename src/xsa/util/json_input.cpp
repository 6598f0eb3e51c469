#include "xsa/util/json_input.h"

#include <set>
#include <vector>

#include "xsa/util/error.h"

namespace xsa {

nlohmann::json parse_json_input(const std::string& text, const std::string& source, bool allow_exceptions) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> open_objects;  // the keys seen so far in each enclosing object
  std::string duplicate;
  bool has_duplicate = false;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty() &&
               !open_objects.back().insert(parsed.get<std::string>()).second && !has_duplicate) {
      has_duplicate = true;
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json doc = json::parse(text, check, allow_exceptions);
  if (has_duplicate && !doc.is_discarded())
    throw InputError(source + ": the key \"" + duplicate +
                     "\" appears twice in one object; expected each key once (which value is meant?)");
  return doc;
}

}  // namespace xsa
