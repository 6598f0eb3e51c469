#pragma once
// UTF-8 validity of outside text. Everything xsa reads from a user ends up in JSON (results.json,
// summary.json) or on a terminal, and nlohmann's writer throws on invalid UTF-8, so readers refuse it up
// front.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xsa {

// Index of the first byte that does not belong to a valid UTF-8 sequence (RFC 3629: no overlong forms,
// surrogates or code points above U+10FFFF), or std::string_view::npos if all of `text` is valid.
inline std::size_t find_invalid_utf8(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const auto c = static_cast<unsigned char>(text[at]);
    std::size_t length;
    std::uint32_t code_point;
    if (c < 0x80) {
      ++at;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      length = 2, code_point = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3, code_point = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4, code_point = c & 0x07;
    } else {
      return at;
    }
    if (text.size() - at < length) return at;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[at + k]);
      if ((next & 0xC0) != 0x80) return at;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if ((length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000) ||
        (code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF)
      return at;
    at += length;
  }
  return std::string_view::npos;
}

}  // namespace xsa
