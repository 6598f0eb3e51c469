#pragma once
// Hostile YAML for the tests of bounded parsers (config and sweep files), written once.
#include <string>

namespace xsa::test_support {

// Nested YAML aliases ("billion laughs"): `depth` levels of ten references to the level below, 10^(depth+1)
// leaves in a few hundred bytes of flow YAML.
inline std::string yaml_laughs(int depth) {
  std::string s = "&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]";
  for (int d = 1; d <= depth; ++d) {
    std::string list = "&a" + std::to_string(d) + " [" + s;
    for (int i = 0; i < 9; ++i) list += ", *a" + std::to_string(d - 1);
    s = list + "]";
  }
  return s;
}

}  // namespace xsa::test_support
