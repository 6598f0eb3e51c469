#pragma once
// UTF-8 validity of outside text, the one validator of the project: the story reader (prepare), the pieces
// decoder and every reader of user input use it. Everything xsa reads from a user ends up in JSON
// (results.json, summary.json) or on a terminal, and nlohmann's writer throws on invalid UTF-8, so readers
// refuse it up front.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xsa {

// Length (1-4) of the valid UTF-8 sequence starting at byte `at` (< text.size()) of `text`, 0 if none starts
// there (RFC 3629: a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF or a
// truncated sequence).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto c = static_cast<unsigned char>(text[at]);
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
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[at + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if ((length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000) ||
      (code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF)
    return 0;
  return length;
}

// Index of the first byte that does not belong to a valid UTF-8 sequence, or std::string_view::npos if all
// of `text` is valid.
inline std::size_t find_invalid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    if (length == 0) return at;
    at += length;
  }
  return std::string_view::npos;
}

// `text` as a message or JSON may carry it: every byte outside a valid UTF-8 sequence and every control
// character (below 0x20, and 0x7F) as \xNN, so a message naming a user's file stays one line of valid UTF-8.
// Equal to `text` exactly when `text` needs no escaping.
inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    const auto c = static_cast<unsigned char>(text[at]);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7F))) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace xsa
