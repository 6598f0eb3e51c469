#include "xsa/util/utf8.h"

#include <cstdint>

namespace xsa {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = byte(at);
  std::size_t length;
  std::uint32_t code_point;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, code_point = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3, code_point = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, code_point = c & 0x07;
  } else {
    return 0;  // a continuation byte without a lead byte, an overlong 2-byte lead, or > U+10FFFF
  }
  if (at + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(at + k) & 0x3F);
  }
  if ((length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000) ||
      (code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF) {
    return 0;  // overlong, a UTF-16 surrogate, or beyond Unicode
  }
  return length;
}

std::size_t find_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace xsa
