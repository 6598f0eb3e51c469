#pragma once
// The check every YAML reader (config files, --set values, sweep files) makes before yaml-cpp sees the text.
#include <algorithm>
#include <string>
#include <string_view>

#include "xsa/util/error.h"
#include "xsa/util/utf8.h"

namespace xsa {

// Throws InputError naming `source`, the line and the byte unless `text` is UTF-8 without NUL bytes.
// Why both: every string read from YAML is later written as JSON (results.json, summary.json), which must be
// UTF-8; and a NUL byte makes yaml-cpp guess UTF-16/32 and decode valid UTF-8 into bytes that are not (found
// by fuzz_config and fuzz_sweep). YAML text never contains a NUL.
inline void require_yaml_text(std::string_view text, const std::string& source) {
  const auto line_of = [&](std::size_t at) {
    return std::to_string(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1);
  };
  if (auto bad = find_invalid_utf8(text); bad != std::string_view::npos)
    throw InputError(source + ":" + line_of(bad) + ": byte " + std::to_string(bad) +
                     " is not UTF-8, expected UTF-8 text");
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(source + ":" + line_of(nul) + ": byte " + std::to_string(nul) +
                     " is a NUL byte, expected UTF-8 text");
}

}  // namespace xsa
