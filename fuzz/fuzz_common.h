#pragma once
// Shared by the fuzz targets. The contract every reader of outside input keeps: bad input is an InputError
// (exit 2, one line); anything else escaping a reader (another exception type, a crash, a sanitizer report,
// a hang, a huge allocation) is a bug, and libFuzzer saves the input that caused it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "xsa/util/error.h"

namespace xsa::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// An accepted input broke a property the rest of the program relies on: abort so libFuzzer keeps it.
[[noreturn]] inline void invariant_failed(const std::string& what) {
  std::fprintf(stderr, "invariant failed: %s\n", what.c_str());
  std::abort();
}

// Everything the tools store or print ends up in JSON or a terminal, so accepted text must be valid UTF-8
// (nlohmann's dump() throws on anything else, which the CLIs would report as a runtime failure).
inline bool is_valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace xsa::fuzz
