#pragma once
// Helpers shared by the end-to-end tests that run the real executables and read what they wrote.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace xsa::e2e {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The numbers of a results.json (what determinism promises: bit-identical on a rerun or a resume), without
// the environment, the runtime settings and the timings, which may differ.
inline nlohmann::json deterministic_numbers(nlohmann::json r) {
  r.erase("environment");
  r["config"].erase("runtime");
  for (auto& run : r["runs"]) run.erase("timing");
  return r;
}

}  // namespace xsa::e2e
