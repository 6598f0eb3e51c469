#include "xsa/sweep/sweep.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "xsa/config/config.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/number_text.h"
#include "xsa/util/yaml_keys.h"
#include "xsa/util/yaml_text.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

// Keeps run ids usable as folder names and in shells.
std::string filesystem_safe(const std::string& text) {
  std::string out;
  for (char ch : text) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
              ch == ',' || ch == '+' || ch == '-' || ch == '_';
    out += ok ? ch : '-';
  }
  if (out.empty()) return "empty";
  if (out[0] == '.') out[0] = '-';  // never a hidden folder or ".."
  return out;
}

// Takes what a value just built holds from the file's budget: the value, its arg and id text, and its JSON
// (`json_bytes`, a copy of its elements' JSON for a list). yaml-cpp keeps an alias as a second reference to
// its anchor's node, so a few hundred bytes of nested aliases ("billion laughs") are a tree of 10^9 leaves to
// walk, and a list holds its elements' text and JSON again at every level of nesting. Charged bottom-up, so
// no more than the budget is ever built.
void charge(const SweepValue& v, std::size_t json_bytes, std::size_t& budget, const std::string& where) {
  const std::size_t bytes = sizeof(SweepValue) + v.arg.size() + v.id.size() + json_bytes;
  if (bytes > budget)
    throw InputError(where + ": the values take more than " + std::to_string(kMaxSweepValueBytes >> 20) +
                     " MiB once expanded (YAML aliases repeat their anchor's value, nested lists their "
                     "elements'), expected at most " +
                     std::to_string(kMaxSweepValueBytes >> 20) + " MiB for one sweep file");
  budget -= bytes;
}

// Converts one YAML value of a grid/set key; InputError names the file and key. `budget`: the memory the
// file's values may still take (kMaxSweepValueBytes in all); `json_bytes` is set to what the value's JSON
// takes.
SweepValue to_value(const YAML::Node& n, const std::string& where, std::size_t& budget,
                    std::size_t& json_bytes) {
  SweepValue v;
  if (!n || n.IsNull()) throw InputError(where + ": got no value, expected a scalar or a list");
  if (n.IsMap()) throw InputError(where + ": got a map, expected a scalar or a list");
  json_bytes = sizeof(nlohmann::json);
  if (n.IsSequence()) {
    std::string arg = "[", id;
    v.json = nlohmann::json::array();
    for (std::size_t i = 0; i < n.size(); ++i) {
      std::size_t item_json_bytes = 0;
      SweepValue item = to_value(n[i], where, budget, item_json_bytes);
      arg += (i ? "," : "") + item.arg;
      id += (i ? "," : "") + item.id;
      v.json.push_back(item.json);
      v.items.push_back(std::move(item));
      json_bytes += item_json_bytes;
    }
    v.arg = arg + "]";
    v.id = id.empty() ? "empty" : id;
    charge(v, json_bytes, budget, where);
    return v;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") {  // quoted: stays a string for the trainer
    v.arg = nlohmann::json(s).dump();
    v.json = s;
  } else if (auto i = parse_plain_integer(s)) {
    v.arg = s;
    v.json = *i;
  } else if (auto d = parse_plain_number(s)) {
    v.arg = s;
    v.json = *d;
  } else if (s == "true" || s == "false") {
    v.arg = s;
    v.json = (s == "true");
  } else {
    v.arg = s;
    v.json = s;
  }
  // Canonical id text: 0.0 and 0 -> "0", 0.250 -> "0.25", so ids do not depend on how numbers were typed.
  if (v.json.is_number_float())
    v.id = filesystem_safe(shortest_number(v.json.get<double>()));
  else
    v.id = filesystem_safe(v.json.is_string() ? s : v.json.dump());
  if (v.json.is_string()) json_bytes += sizeof(std::string) + s.size();
  charge(v, json_bytes, budget, where);
  return v;
}

SweepValue to_value(const YAML::Node& n, const std::string& where, std::size_t& budget) {
  std::size_t json_bytes = 0;
  return to_value(n, where, budget, json_bytes);
}

std::string leaf(const std::string& dotted) {
  auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace

std::vector<std::string> linked_keys(const std::string& grid_key) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    auto plus = grid_key.find('+', start);
    keys.push_back(grid_key.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) return keys;
    start = plus + 1;
  }
}

namespace {

void check_key(const std::string& path, const std::string& section, const std::string& key) {
  if (!is_config_key(key))
    throw InputError(path + ": " + section + "." + key + ": '" + key +
                     "' is not a config key, expected a dotted key such as train.steps or attention.lambda");
}

}  // namespace

SweepSpec parse_sweep(const std::string& yaml_text, const std::string& path) {
  require_yaml_text(yaml_text, path);  // values end up in summary.json
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": invalid YAML: " + e.msg);
  }
  if (!root || !root.IsMap()) throw InputError(path + ": expected a map with keys base, name, grid, set");
  require_unique_keys(root, path);

  SweepSpec spec;
  spec.path = path;
  spec.name = fs::path(path).stem().string();
  std::size_t budget = kMaxSweepValueBytes;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    const YAML::Node& value = entry.second;
    if (key == "base" || key == "name") {
      if (!value.IsScalar() || value.Scalar().empty())
        throw InputError(path + ": " + key + ": expected a non-empty string");
      (key == "base" ? spec.base : spec.name) = value.Scalar();
    } else if (key == "grid" || key == "set") {
      if (value.IsNull() && key == "set") continue;
      if (!value.IsMap()) throw InputError(path + ": " + key + ": expected a map of dotted config keys");
      for (const auto& kv : value) {
        const std::string dotted = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        const std::string where = path + ": " + key + "." + dotted;
        if (key == "set") {
          check_key(path, key, dotted);
          spec.set.emplace_back(dotted, to_value(kv.second, where, budget));
          continue;
        }
        const std::vector<std::string> keys = linked_keys(dotted);
        std::set<std::string> distinct;
        for (const auto& k : keys) {
          check_key(path, key, k);
          if (!distinct.insert(k).second)
            throw InputError(where + ": '" + k + "' appears twice, expected distinct linked keys");
        }
        std::vector<SweepValue> values;
        if (kv.second.IsSequence()) {
          for (std::size_t i = 0; i < kv.second.size(); ++i)
            values.push_back(to_value(kv.second[i], where, budget));
        } else {
          values.push_back(to_value(kv.second, where, budget));  // a bare scalar is a one-value list
        }
        if (values.empty()) throw InputError(where + ": empty list of values, expected at least one");
        if (keys.size() > 1)
          for (const auto& v : values)
            if (!v.json.is_array() || v.items.size() != keys.size())
              throw InputError(where + ": value " + v.json.dump() + " is not a list of " +
                               std::to_string(keys.size()) + " values, expected one value per linked key");
        spec.grid.emplace_back(dotted, values);
      }
    } else {
      throw InputError(path + ": unknown key '" + key + "' (known: base, name, grid, set)");
    }
  }
  if (spec.base.empty()) throw InputError(path + ": base: missing, expected the base config file");
  if (spec.grid.empty()) throw InputError(path + ": grid: missing or empty, expected at least one key");
  std::set<std::string> grid_keys;
  for (const auto& [gkey, values] : spec.grid)
    for (const auto& k : linked_keys(gkey))
      if (!grid_keys.insert(k).second)
        throw InputError(path + ": grid." + gkey + ": '" + k +
                         "' is set by two grid keys, expected each once");
  for (const auto& [key, value] : spec.set)
    if (grid_keys.count(key))
      throw InputError(path + ": set." + key +
                       ": also a grid key, expected each key in grid or set, not both");
  if (spec.name != filesystem_safe(spec.name))
    throw InputError(path + ": name: '" + spec.name + "', expected letters, digits, '.', '_', '-' only");
  fs::path base(spec.base);
  spec.base_path =
      base.is_absolute() ? spec.base : (fs::path(path).parent_path() / base).lexically_normal().string();
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  return parse_sweep(read_file(path), path);
}

std::vector<SweepPoint> expand_grid(const SweepSpec& spec) {
  // Short names for run ids; fall back to the full dotted key where two keys share a last component.
  std::map<std::string, int> leaf_count;
  for (const auto& [key, values] : spec.grid)
    for (const auto& k : linked_keys(key)) leaf_count[leaf(k)]++;

  // Each point is a training run: a grid beyond kMaxSweepPoints is a mistake, and building its points would
  // exhaust memory (ten keys of ten values are 10^10 points from a 200-byte file).
  std::size_t total = 1;
  for (const auto& [key, values] : spec.grid) {
    if (values.size() > kMaxSweepPoints / total)
      throw InputError(spec.path + ": grid: more than " + std::to_string(kMaxSweepPoints) +
                       " points, expected at most " + std::to_string(kMaxSweepPoints) + " (split the sweep)");
    total *= values.size();
  }
  // Every point holds the set's overrides and one value of each grid key ("key=value" text, and the value's
  // id in the run id): the bytes over all points, counted before any is built. A long set value times many
  // points would otherwise take gigabytes from a file of a megabyte or two.
  std::size_t bytes = 0;
  for (const auto& [key, value] : spec.set) bytes += total * (key.size() + 1 + value.arg.size());
  for (const auto& [key, values] : spec.grid) {
    const std::vector<std::string> keys = linked_keys(key);
    std::size_t per_round = 0;  // every value once: each is in total / values.size() points
    for (const auto& v : values)
      for (std::size_t j = 0; j < keys.size(); ++j) {
        const SweepValue& part = keys.size() > 1 ? v.items[j] : v;
        per_round += 2 * keys[j].size() + 3 + part.arg.size() + part.id.size();
      }
    bytes += total / values.size() * per_round;
  }
  if (bytes > kMaxSweepPointBytes)
    throw InputError(spec.path + ": grid: its " + with_commas(total) +
                     " points' overrides and run ids take " + with_commas(bytes) +
                     " bytes, expected at most " + with_commas(kMaxSweepPointBytes) +
                     " (shorten the set or grid values, or split the sweep)");

  std::vector<SweepPoint> points;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < total; ++i) {
    SweepPoint p;
    p.index = i;
    p.values = nlohmann::json::object();
    for (const auto& [key, value] : spec.set) p.overrides.push_back(key + "=" + value.arg);
    // Mixed-radix decomposition of i with the last key varying fastest.
    std::vector<std::size_t> choice(spec.grid.size());
    std::size_t rest = i;
    for (std::size_t k = spec.grid.size(); k-- > 0;) {
      choice[k] = rest % spec.grid[k].second.size();
      rest /= spec.grid[k].second.size();
    }
    std::string id;
    for (std::size_t k = 0; k < spec.grid.size(); ++k) {
      const auto& [key, values] = spec.grid[k];
      const SweepValue& v = values[choice[k]];
      const std::vector<std::string> keys = linked_keys(key);
      for (std::size_t j = 0; j < keys.size(); ++j) {
        const SweepValue& part = keys.size() > 1 ? v.items[j] : v;
        p.overrides.push_back(keys[j] + "=" + part.arg);
        p.values[keys[j]] = part.json;
        if (values.size() > 1) {
          std::string name = leaf_count[leaf(keys[j])] > 1 ? keys[j] : leaf(keys[j]);
          id += (id.empty() ? "" : "_") + name + "=" + part.id;
        }
      }
    }
    p.run_id = id.empty() ? "single" : id;
    if (!seen.insert(p.run_id).second)
      throw InputError(spec.path + ": grid: two points get the run id '" + p.run_id +
                       "', expected distinct values per key");
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<std::string> child_runtime_overrides() {
  return {"runtime.workers=1", "runtime.threads=1"};
}

void validate_points(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::string base_text;
  try {
    base_text = read_file(spec.base_path);
  } catch (const InputError& e) {
    throw InputError(spec.path + ": base: " + e.what());
  }
  for (const auto& p : points) {
    std::vector<std::string> overrides = p.overrides;
    for (const auto& o : child_runtime_overrides()) overrides.push_back(o);
    try {
      parse_config(base_text, spec.base_path, overrides);
    } catch (const InputError& e) {
      throw InputError(spec.path + ": point " + p.run_id + ": " + e.what());
    }
  }
}

Shard parse_shard(const std::string& text) {
  const std::string expected = "--shard '" + text +
                               "': expected K/N with integers 0 <= K < N <= " + with_commas(kMaxShards) +
                               " (e.g. 0/4)";
  auto slash = text.find('/');
  if (slash == std::string::npos) throw InputError(expected);
  auto k = parse_plain_integer(text.substr(0, slash));
  auto n = parse_plain_integer(text.substr(slash + 1));
  if (!k || !n || text[0] == '+' || *n < 1 || *k < 0 || *k >= *n || *n > kMaxShards)
    throw InputError(expected);
  return Shard{static_cast<int>(*k), static_cast<int>(*n)};
}

std::vector<SweepPoint> shard_points(const std::vector<SweepPoint>& points, const Shard& shard) {
  std::vector<SweepPoint> out;
  for (const auto& p : points)
    if (p.index % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index))
      out.push_back(p);
  return out;
}

}  // namespace xsa
