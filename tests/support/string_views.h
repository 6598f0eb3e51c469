#pragma once
// Views made comparable: the readers of stories and documents return string_views into their file's storage;
// the tests compare them with expected strings.
#include <string>
#include <string_view>
#include <vector>

namespace xsa::testing {

inline std::vector<std::string> as_strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

}  // namespace xsa::testing
