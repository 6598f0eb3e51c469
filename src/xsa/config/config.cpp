#include "xsa/config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "xsa/config/key_table.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/utf8.h"
#include "xsa/util/yaml_keys.h"
#include "xsa/util/yaml_text.h"

namespace xsa {

std::string shortest_number(double v) {
  if (v == 0.0) return "0";  // also folds -0
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::optional<long long> parse_plain_integer(const std::string& s) {
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  long long v = 0;
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || begin == end) return std::nullopt;
  return v;
}

std::optional<double> parse_plain_number(const std::string& s) {
  // strtod also takes hex floats, "inf" and "nan": only decimal notation is a YAML number here.
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

using namespace key_table;  // the key table (key_table.h)

const std::string kLambdaKey = "attention.lambda";

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

[[noreturn]] void fail_unknown(const std::string& where, const std::string& dotted) {
  std::string section = section_of(dotted);
  if (!section.empty() && !is_section(section)) section.clear();  // "foo.bar": foo itself is unknown
  throw InputError(where + ": unknown key '" + dotted + "' (known" +
                   (section.empty() ? "" : " in " + section) + ": " + join(known_names(section), ", ") + ")");
}

// Applies one "dotted.key=value" override to the YAML tree, recording it for messages.
void apply_override(YAML::Node& root, const std::string& text, Context& ctx) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(ctx.source + ": --set '" + text + "': expected key=value (e.g. train.steps=50)");
  const std::string key = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  if (!is_config_key(key)) fail_unknown(ctx.source + " (--set " + text + ")", key);
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError(ctx.source + ": --set " + text + ": value is not valid YAML (" + e.msg + ")");
  }
  ctx.overridden[key] = text;
  const std::string section = section_of(key);
  if (section.empty()) {
    root[key] = parsed;
    return;
  }
  if (!root[section] || root[section].IsNull()) root[section] = YAML::Node(YAML::NodeType::Map);
  if (!root[section].IsMap()) {
    throw InputError(ctx.source + ": " + section + ": got " + describe(root[section]) +
                     ", expected a map of " + section + " keys");
  }
  root[section][leaf_of(key)] = parsed;
  // An override replaces whatever the file said about the variants, whichever spelling either used.
  if (key == kLambdaKey) {
    if (ctx.overridden.count("attention.variants"))
      throw InputError(ctx.source + ": --set " + text +
                       ": attention.lambda and attention.variants both set, expected only one");
    root[section].remove("variants");
  } else if (key == "attention.variants") {
    if (ctx.overridden.count(kLambdaKey))
      throw InputError(ctx.source + ": --set " + text +
                       ": attention.lambda and attention.variants both set, expected only one");
    root[section].remove("lambda");
  }
}

std::string key_text(const YAML::Node& k) {
  return k.IsScalar() ? k.Scalar() : "<" + describe(k) + ">";
}

void read_tree(const YAML::Node& root, Config& c, const Context& ctx) {
  if (!root || root.IsNull()) return;  // an empty file means all defaults
  if (!root.IsMap())
    throw InputError(ctx.source + ": got " + describe(root) + ", expected a map of config keys");
  for (const auto& top : root) {
    const std::string name = key_text(top.first);
    if (const Key* k = find_key(name)) {
      k->read(c, top.second, ctx);
      continue;
    }
    if (!is_section(name)) fail_unknown(ctx.source, name);
    if (top.second.IsNull()) continue;  // "train:" with nothing under it
    if (!top.second.IsMap()) fail_got(ctx, name, top.second, "a map of " + name + " keys");
    for (const auto& entry : top.second) {
      const std::string dotted = name + "." + key_text(entry.first);
      if (dotted == kLambdaKey) {
        if (top.second["variants"])
          fail(ctx, kLambdaKey, "attention.lambda and attention.variants both given, expected only one");
        std::string why;
        auto v = as_variant(entry.second, &why);
        if (!v && !why.empty()) fail(ctx, kLambdaKey, describe(entry.second) + ": " + why);
        if (!v) fail_got(ctx, kLambdaKey, entry.second, variant_spellings());
        VariantSpec sa{VariantSpec::Kind::kFixed, 0.0, true, {}};
        if (v->name() == sa.name())
          fail(ctx, kLambdaKey, "got 'sa', expected a variant other than the sa baseline it is paired with");
        c.attention.variants = {sa, *v};
        continue;
      }
      const Key* k = find_key(dotted);
      if (!k) fail_unknown(ctx.where(dotted), dotted);
      k->read(c, entry.second, ctx);
    }
  }
}

// Constraints between keys, checked once all are read.
void cross_check(const Config& c, const Context& ctx) {
  if (c.train.min_lr > c.train.lr)
    fail(ctx, "train.min_lr",
         "got " + shortest_number(c.train.min_lr) +
             ", expected a number in [0, train.lr = " + shortest_number(c.train.lr) + "]");
  if (c.train.warmup_steps > c.train.steps)
    fail(ctx, "train.warmup_steps",
         "got " + std::to_string(c.train.warmup_steps) +
             ", expected an integer in [0, train.steps = " + std::to_string(c.train.steps) + "]");
  if (c.model.pos == PositionEncoding::kRope && c.model.d_head % 2 != 0)  // RoPE rotates channel pairs
    fail(ctx, "model.d_head",
         "got " + std::to_string(c.model.d_head) + ", expected an even integer when model.pos = rope");
  // The layers were checked against kMaxLayers as they were read; here against this model. The largest layer
  // out of range is named (the one a typo usually made).
  const auto out_of_range = [&](int layer) {
    return "layer " + std::to_string(layer) + " is out of range [0, " + std::to_string(c.model.n_layer - 1) +
           "] (model.n_layer = " + std::to_string(c.model.n_layer) + ")";
  };
  const auto top = [](const std::vector<int>& layers) {
    return layers.empty() ? -1 : *std::max_element(layers.begin(), layers.end());
  };
  if (top(c.attention.layers) >= c.model.n_layer)
    fail(ctx, "attention.layers", out_of_range(top(c.attention.layers)));
  for (const auto& v : c.attention.variants)
    if (top(v.layers) >= c.model.n_layer)
      fail(ctx, "attention.variants", "variant '" + v.name() + "': " + out_of_range(top(v.layers)));
}

}  // namespace

namespace {
// What a record that lacks a key ran with: today's defaults, except for keys added later with a default other
// than what ran before they existed.
Config record_defaults() {
  Config c;
  c.attention.impl = AttentionImpl::kExplicit;  // the only one before the key existed
  return c;
}
}  // namespace

Config config_from_record(const nlohmann::json& recorded, const std::string& where) {
  if (!recorded.is_object())
    throw InputError(where + ": got " + std::string(recorded.type_name()) +
                     ", expected an object of config keys");
  Context ctx;
  ctx.source = where;
  Config c = record_defaults();
  c.source = where;
  try {
    read_tree(YAML::Load(recorded.dump()), c, ctx);  // JSON text is YAML (flow style)
  } catch (const YAML::Exception& e) {
    throw InputError(where + ": invalid config: " + e.msg);
  }
  return c;  // no cross_check: a record says what ran
}

Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides) {
  Context ctx;
  ctx.source = source;
  require_yaml_text(yaml_text, source);
  for (const auto& o : overrides)
    if (o.find('\0') != std::string::npos)
      throw InputError(source + ": --set " + o.substr(0, o.find('=')) +
                       "=...: contains a NUL byte, expected UTF-8 text");
  for (const auto& o : overrides) {
    if (find_invalid_utf8(o) == std::string::npos) continue;
    std::string key = o.substr(0, o.find('='));
    if (find_invalid_utf8(key) != std::string::npos) key = "?";
    throw InputError(source + ": --set " + key + "=...: not UTF-8 text, expected UTF-8 text");
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  require_unique_keys(root, source);
  if (!overrides.empty()) {
    if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap())
      throw InputError(source + ": got " + describe(root) + ", expected a map of config keys");
    for (const auto& o : overrides) apply_override(root, o, ctx);
  }
  Config c;
  c.source = source;
  try {
    read_tree(root, c, ctx);
  } catch (const YAML::Exception& e) {  // e.g. a non-scalar map key; should not escape as a crash
    throw InputError(source + ":" + std::to_string(e.mark.line + 1) + ": invalid config: " + e.msg);
  }
  cross_check(c, ctx);
  // Defensive: yaml-cpp refuses bad \U and surrogate escapes itself (tested), but any other path to text that
  // is not UTF-8 must be bad input here, not a crash when results.json is written.
  try {
    (void)config_to_json(c).dump();
  } catch (const nlohmann::json::type_error&) {
    throw InputError(source +
                     ": a text value decodes to invalid UTF-8 (check escapes such as \\U), expected "
                     "UTF-8 text");
  }
  return c;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_config(read_file(path), path, overrides);
}

nlohmann::json config_to_json(const Config& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& k : keys()) {
    const std::string section = section_of(k.dotted);
    if (section.empty())
      out[k.dotted] = k.write(c);
    else
      out[section][leaf_of(k.dotted)] = k.write(c);
  }
  return out;
}

nlohmann::json config_identity_json(const Config& c) {
  nlohmann::json out = config_to_json(c);
  out.erase("runtime");
  out.erase("log");
  return out;
}

nlohmann::json config_json_with_defaults(const nlohmann::json& recorded) {
  if (!recorded.is_object()) return recorded;
  nlohmann::json out = config_to_json(record_defaults());
  for (const auto& [key, value] : recorded.items()) {
    auto section = out.find(key);
    if (section != out.end() && section->is_object() && value.is_object()) {
      for (const auto& [leaf, v] : value.items()) (*section)[leaf] = v;
    } else {
      out[key] = value;
    }
  }
  // Sections the record left out entirely (runtime, erased from identities) stay out.
  for (auto it = out.begin(); it != out.end();) {
    if (it->is_object() && !recorded.contains(it.key()))
      it = out.erase(it);
    else
      ++it;
  }
  return out;
}

std::string config_to_yaml(const Config& c) {
  // Hand-written block YAML in key-table order; every value is written as JSON text, which YAML reads
  // back unchanged (quoted strings stay strings, doubles use nlohmann's shortest round-trip form).
  std::ostringstream out;
  out << "# Resolved xsa config (every key, defaults filled in).\n";
  std::string current;
  for (const auto& k : keys()) {
    const std::string section = section_of(k.dotted);
    if (section.empty()) {
      out << k.dotted << ": " << k.write(c).dump() << "\n";
      continue;
    }
    if (section != current) {
      out << section << ":\n";
      current = section;
    }
    std::string value = k.write(c).dump();
    // nlohmann writes arrays without spaces: "[\"sa\",0.5]" -> keep readable.
    if (k.write(c).is_array()) {
      std::vector<std::string> items;
      for (const auto& item : k.write(c)) items.push_back(item.dump());
      value = "[" + join(items, ", ") + "]";
    }
    out << "  " << leaf_of(k.dotted) << ": " << value << "\n";
  }
  return out.str();
}

bool is_config_key(const std::string& dotted) {
  return dotted == kLambdaKey || find_key(dotted) != nullptr;
}

std::vector<std::string> config_keys() {
  std::vector<std::string> out;
  for (const auto& k : keys()) {
    out.push_back(k.dotted);
    if (k.dotted == "attention.variants") out.push_back(kLambdaKey);
  }
  return out;
}

bool operator==(const Config& a, const Config& b) {
  return config_to_json(a) == config_to_json(b);
}

ResolvedVariant resolve_variant(const AttentionConfig& attention, const VariantSpec& variant) {
  ResolvedVariant r;
  r.kind = variant.kind;
  r.initial_lambda = initial_lambda(variant, attention.learned_init);
  r.layers = variant.layers.empty() ? attention.layers : variant.layers;
  return r;
}

}  // namespace xsa
