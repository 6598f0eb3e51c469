#pragma once
// UTF-8 validity of outside text, shared by the story reader (prepare), the pieces decoder (data) and every
// reader of user input: everything xsa reads ends up in JSON (results.json, summary.json) or on a terminal,
// and nlohmann's writer throws on invalid UTF-8, so readers refuse it up front. Torch-free.
#include <cstddef>
#include <string_view>

namespace xsa {

// Length (1-4) of the valid UTF-8 sequence starting at byte `at` of `text`, 0 if none starts there
// (a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, or a truncated
// sequence).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// Byte offset of the first invalid UTF-8 sequence, or std::string_view::npos if `text` is valid.
std::size_t find_invalid_utf8(std::string_view text);

}  // namespace xsa
