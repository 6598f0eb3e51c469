#include "xsa/util/yaml_keys.h"

#include <set>

#include "xsa/util/error.h"

namespace xsa {

namespace {

void require_unique_keys_of(const YAML::Node& map, const std::string& source) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && !seen.insert(entry.first.Scalar()).second)
      throw InputError(source + ":" + std::to_string(entry.first.Mark().line + 1) + ": the key '" +
                       entry.first.Scalar() + "' appears twice in one map; expected each key once");
  }
}

}  // namespace

void require_unique_keys(const YAML::Node& root, const std::string& source) {
  if (!root.IsMap()) return;
  require_unique_keys_of(root, source);
  for (const auto& entry : root)
    if (entry.second.IsMap()) require_unique_keys_of(entry.second, source);
}

}  // namespace xsa
