#pragma once
// The config key table behind config.h (internal to src/xsa/config): one Key per dotted key, with how to
// read it from YAML (type and range checks, the error naming file, key and allowed values) and how to write
// it back, in file order; and the lookups parse, --set and the unknown-key messages use. A new key is one
// entry in keys() (key_table.cpp).
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "xsa/config/config.h"

namespace xsa::key_table {

// Where a value came from, for messages: the file, or the file plus the --set that replaced the value.
struct Context {
  std::string source;
  std::map<std::string, std::string> overridden;  // dotted key -> "key=value" as given to --set

  std::string where(const std::string& key) const {
    auto it = overridden.find(key);
    return it == overridden.end() ? source : source + " (--set " + it->second + ")";
  }
};

// InputError "<where>: <key>: <what>".
[[noreturn]] void fail(const Context& ctx, const std::string& key, const std::string& what);
// How a node looks to the user, for "got ..." messages.
std::string describe(const YAML::Node& n);
// InputError "<where>: <key>: got <node>, expected <expected>".
[[noreturn]] void fail_got(const Context& ctx, const std::string& key, const YAML::Node& n,
                           const std::string& expected);

// Parses one variant spelling (xsa/config/variant.h): a keyword, a number in [0,1], either with "@<layers>".
// `why` as parse_variant_keyword's: what is wrong with the layer list, when that is why it is refused.
std::optional<VariantSpec> as_variant(const YAML::Node& n, std::string* why = nullptr);

// One config key: how to read it from YAML (with its range check) and how to write it back.
struct Key {
  std::string dotted;
  std::function<void(Config&, const YAML::Node&, const Context&)> read;
  std::function<nlohmann::json(const Config&)> write;
};

const std::vector<Key>& keys();                     // every key, in file order
const Key* find_key(const std::string& dotted);     // null if there is none
std::string section_of(const std::string& dotted);  // "train" of "train.steps"; "" at the top level
std::string leaf_of(const std::string& dotted);     // "steps" of "train.steps"
// Names allowed directly under `section` ("" = top level: scalar keys and section names), in file order.
std::vector<std::string> known_names(const std::string& section);
bool is_section(const std::string& name);

}  // namespace xsa::key_table
