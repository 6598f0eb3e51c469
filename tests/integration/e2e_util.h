#pragma once
// Helpers shared by the end-to-end tests that run the real executables and read what they wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "process.h"

namespace xsa::e2e {

using xsa::testing::slurp;  // tests/support/process.h
using xsa::testing::spit;

// An empty folder build/test-work/<name of the running test> (emptied first: a rerun starts clean).
inline std::filesystem::path fresh_test_folder() {
  const auto dir = std::filesystem::path(XSA_BINARY_DIR) / "test-work" /
                   ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The tiny experiment the end-to-end tests train (tests/fixtures/train/tiny.yaml) with its data folder.
inline void write_tiny_config(const std::filesystem::path& path, const std::string& data_dir) {
  std::string text = slurp(XSA_FIXTURES_DIR "/train/tiny.yaml");
  const std::string placeholder = "{dir: DATA_DIR,";
  const auto at = text.find(placeholder);
  if (at == std::string::npos) throw std::runtime_error("tests/fixtures/train/tiny.yaml: no DATA_DIR");
  text.replace(at, placeholder.size(), "{dir: " + data_dir + ",");
  spit(path, text);
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
