#pragma once
// YAML a command reads (configs, sweep files), checked so that no ambiguity is resolved silently.
#include <yaml-cpp/yaml.h>

#include <string>

namespace xsa {

// Throws InputError naming `source`, the line and the key when the top map of `root` or a map right under it
// (a config's sections, a sweep file's grid and set) names one key twice ("train: {steps: 5, steps: 10}"):
// yaml-cpp keeps both entries, and a reader would take one of them without a word (which one depends on how
// it looks the key up). Those two levels hold every key a reader looks up; deeper values are lists and
// numbers, and walking no further keeps an alias bomb from being expanded here.
void require_unique_keys(const YAML::Node& root, const std::string& source);

}  // namespace xsa
