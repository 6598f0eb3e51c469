#pragma once
// Small string helpers shared by the tools.
#include <string>

namespace xsa {

// `s` without trailing spaces, tabs and line ends: a line read from a file or a command's output.
inline std::string trim_trailing_whitespace(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  return s;
}

}  // namespace xsa
