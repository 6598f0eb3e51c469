#pragma once
// Integers as the tools print them in messages and tables: digits grouped by three with commas ("1,048,576").
#include <string>

namespace xsa {

template <class Int>
std::string with_commas(Int value) {
  const std::string text = std::to_string(value);
  const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
  std::string out = text.substr(0, sign);
  for (std::size_t i = sign; i < text.size(); ++i) {
    if (i > sign && (text.size() - i) % 3 == 0) out += ',';
    out += text[i];
  }
  return out;
}

}  // namespace xsa
