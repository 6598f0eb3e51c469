#pragma once
// The spelling table of an enum: each value with the one name the files, the config and the tables spell it
// by. A module declares the table (`Choice<E> kTable[]`) and an overload `choices_of(E)` returning it, found
// by argument-dependent lookup, then names and parses values through the functions below. Used by the
// config's choice keys (xsa/config/config.h) and the sweep's point statuses (xsa/records/sweep_records.h).
#include <optional>
#include <string>
#include <vector>

namespace xsa {

template <class E>
struct Choice {
  E value;
  const char* name;
};

// The spelling of a value ("fused"), the value of a spelling (nullopt if none), every spelling in table
// order.
template <class E>
const char* choice_name(E value) {
  for (const auto& c : choices_of(E{}))
    if (c.value == value) return c.name;
  return "?";
}
template <class E>
std::optional<E> parse_choice(const std::string& name) {
  for (const auto& c : choices_of(E{}))
    if (name == c.name) return c.value;
  return std::nullopt;
}
template <class E>
std::vector<std::string> choice_names() {
  std::vector<std::string> names;
  for (const auto& c : choices_of(E{})) names.push_back(c.name);
  return names;
}

}  // namespace xsa
