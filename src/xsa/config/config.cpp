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

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/utf8.h"
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

// Where a value came from, for messages: the file, or the file plus the --set that replaced the value.
struct Context {
  std::string source;
  std::map<std::string, std::string> overridden;  // dotted key -> "key=value" as given to --set

  std::string where(const std::string& key) const {
    auto it = overridden.find(key);
    return it == overridden.end() ? source : source + " (--set " + it->second + ")";
  }
};

[[noreturn]] void fail(const Context& ctx, const std::string& key, const std::string& what) {
  throw InputError(ctx.where(key) + ": " + key + ": " + what);
}

// How a node looks to the user, for "got ..." messages.
std::string describe(const YAML::Node& n) {
  if (!n || n.IsNull()) return "no value";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  if (n.Tag() == "!") return "the quoted string \"" + n.Scalar() + "\"";
  return "'" + n.Scalar() + "'";
}

[[noreturn]] void fail_got(const Context& ctx, const std::string& key, const YAML::Node& n,
                           const std::string& expected) {
  fail(ctx, key, "got " + describe(n) + ", expected " + expected);
}

// Numbers and booleans must be plain scalars: a quoted "300" is a string, not a number.
bool is_plain_scalar(const YAML::Node& n) {
  return n && n.IsScalar() && n.Tag() != "!";
}

std::optional<long long> as_integer(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  return parse_plain_integer(n.Scalar());
}

std::optional<std::uint64_t> as_unsigned(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  const std::string& s = n.Scalar();
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> as_number(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  return parse_plain_number(n.Scalar());
}

std::optional<bool> as_bool(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// Parses one variant spelling (xsa/config/variant.h): a keyword, a number in [0,1], either with "@<layers>".
std::optional<VariantSpec> as_variant(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  if (auto spec = parse_variant_keyword(n.Scalar())) return spec;
  auto v = as_number(n);
  if (!v || *v < 0.0 || *v > 1.0) return std::nullopt;
  return VariantSpec{VariantSpec::Kind::kFixed, *v + 0.0, false, {}};  // + 0.0 folds -0 into 0
}

constexpr const char* kVariantExpected = kVariantSpellings;

// One config key: how to read it from YAML (with its range check) and how to write it back.
struct Key {
  std::string dotted;
  std::function<void(Config&, const YAML::Node&, const Context&)> read;
  std::function<nlohmann::json(const Config&)> write;
};

// `get` is a generic lambda returning a reference to the field, for both const and mutable configs.
template <class Get, class Ok>
Key int_key(const std::string& dotted, Get get, Ok ok, const std::string& expected) {
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            auto v = as_integer(n);
            if (!v || *v < INT32_MIN || *v > INT32_MAX || !ok(*v)) fail_got(ctx, dotted, n, expected);
            get(c) = static_cast<int>(*v);
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

template <class Get>
Key u64_key(const std::string& dotted, Get get) {
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            auto v = as_unsigned(n);
            if (!v) fail_got(ctx, dotted, n, "an integer >= 0");
            get(c) = *v;
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

template <class Get, class Ok>
Key double_key(const std::string& dotted, Get get, Ok ok, const std::string& expected) {
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            auto v = as_number(n);
            if (!v || !ok(*v)) fail_got(ctx, dotted, n, expected);
            get(c) = *v + 0.0;
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

template <class Get>
Key bool_key(const std::string& dotted, Get get) {
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            auto v = as_bool(n);
            if (!v) fail_got(ctx, dotted, n, "true or false");
            get(c) = *v;
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

// A non-empty string, optionally restricted to `choices`.
template <class Get>
Key string_key(const std::string& dotted, Get get, std::vector<std::string> choices = {}) {
  std::string expected = "a non-empty string";
  if (!choices.empty()) {
    expected = "one of";
    for (const auto& ch : choices) expected += " " + ch;
  }
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            if (!n || !n.IsScalar() || n.Scalar().empty()) fail_got(ctx, dotted, n, expected);
            bool allowed = choices.empty();
            for (const auto& ch : choices) allowed = allowed || ch == n.Scalar();
            if (!allowed) fail_got(ctx, dotted, n, expected);
            get(c) = n.Scalar();
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

const auto at_least = [](long long lo) { return [lo](long long v) { return v >= lo; }; };

// An integer key that sets an amount of work, with an upper bound, so a typo (an extra zero or three) is
// refused when the config is read instead of surfacing hours later (README "Config" lists the limits).
template <class Get>
Key count_key(const std::string& dotted, Get get, long long lo, long long hi, const std::string& note = "") {
  auto with_commas = [](long long v) {
    std::string digits = std::to_string(v), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  };
  return int_key(
      dotted, get, [lo, hi](long long v) { return v >= lo && v <= hi; },
      "an integer in [" + with_commas(lo) + ", " + with_commas(hi) + "]" + note);
}
const auto positive = [](double v) { return v > 0.0; };
const auto non_negative = [](double v) { return v >= 0.0; };

#define XSA_FIELD(expr)  \
  [](auto& c) -> auto& { \
    return expr;         \
  }

// Steps and step intervals: 10^8 steps is years on a CPU.
constexpr long long kMaxSteps = 100000000;

const std::vector<Key>& keys() {
  static const std::vector<Key> table = [] {
    std::vector<Key> k;
    k.push_back(string_key("name", XSA_FIELD(c.name)));
    k.push_back(u64_key("seed", XSA_FIELD(c.seed)));

    k.push_back(string_key("data.dir", XSA_FIELD(c.data.dir)));
    k.push_back(count_key("data.seq_len", XSA_FIELD(c.data.seq_len), 1, 1 << 20));

    k.push_back(int_key("model.n_layer", XSA_FIELD(c.model.n_layer), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.d_model", XSA_FIELD(c.model.d_model), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.n_head", XSA_FIELD(c.model.n_head), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.d_head", XSA_FIELD(c.model.d_head), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.mlp_ratio", XSA_FIELD(c.model.mlp_ratio), at_least(1), "an integer >= 1"));
    k.push_back(string_key("model.pos", XSA_FIELD(c.model.pos), {"rope", "learned"}));
    k.push_back(bool_key("model.embed_norm", XSA_FIELD(c.model.embed_norm)));
    k.push_back(bool_key("model.tie_embeddings", XSA_FIELD(c.model.tie_embeddings)));

    k.push_back({"attention.variants",
                 [](Config& c, const YAML::Node& n, const Context& ctx) {
                   const std::string key = "attention.variants";
                   if (!n || !n.IsSequence() || n.size() == 0)
                     fail_got(ctx, key, n, std::string("a non-empty list of ") + kVariantExpected);
                   std::vector<VariantSpec> out;
                   for (std::size_t i = 0; i < n.size(); ++i) {
                     auto v = as_variant(n[i]);
                     if (!v)
                       fail(ctx, key,
                            "entry " + std::to_string(i + 1) + ": got " + describe(n[i]) + ", expected " +
                                kVariantExpected);
                     for (const auto& prev : out)
                       if (prev.name() == v->name())
                         fail(ctx, key, "duplicate variant '" + v->name() + "', expected distinct variants");
                     out.push_back(*v);
                   }
                   c.attention.variants = out;
                 },
                 [](const Config& c) {
                   nlohmann::json out = nlohmann::json::array();
                   for (const auto& v : c.attention.variants) out.push_back(v.to_json());
                   return out;
                 }});
    // Range against model.n_layer is checked once every key is read (cross_check).
    k.push_back(
        {"attention.layers",
         [](Config& c, const YAML::Node& n, const Context& ctx) {
           const std::string key = "attention.layers";
           const std::string expected = "a list of distinct layer indices >= 0 (empty = all layers)";
           if (!n || !n.IsSequence()) fail_got(ctx, key, n, expected);
           std::vector<int> out;
           for (std::size_t i = 0; i < n.size(); ++i) {
             auto v = as_integer(n[i]);
             if (!v || *v < 0 || *v > INT32_MAX)
               fail(ctx, key,
                    "entry " + std::to_string(i + 1) + ": got " + describe(n[i]) + ", expected " + expected);
             for (int prev : out)
               if (prev == *v)
                 fail(ctx, key, "layer " + std::to_string(prev) + " listed twice, expected " + expected);
             out.push_back(static_cast<int>(*v));
           }
           c.attention.layers = out;
         },
         [](const Config& c) { return nlohmann::json(c.attention.layers); }});
    k.push_back(double_key(
        "attention.learned_init", XSA_FIELD(c.attention.learned_init),
        [](double v) { return v > 0.0 && v < 1.0; }, "a number in (0, 1)"));
    k.push_back(double_key(
        "attention.lambda_lr_scale", XSA_FIELD(c.attention.lambda_lr_scale),
        [](double v) { return v > 0.0 && v <= 1000.0; }, "a number in (0, 1000]"));
    k.push_back(string_key("attention.impl", XSA_FIELD(c.attention.impl), {"fused", "explicit"}));

    k.push_back(count_key("train.steps", XSA_FIELD(c.train.steps), 1, kMaxSteps));
    k.push_back(int_key("train.batch_size", XSA_FIELD(c.train.batch_size), at_least(1), "an integer >= 1"));
    k.push_back(double_key("train.lr", XSA_FIELD(c.train.lr), positive, "a number > 0"));
    k.push_back(
        double_key("train.min_lr", XSA_FIELD(c.train.min_lr), non_negative, "a number in [0, train.lr]"));
    k.push_back(int_key("train.warmup_steps", XSA_FIELD(c.train.warmup_steps), at_least(0),
                        "an integer in [0, train.steps]"));
    k.push_back(
        double_key("train.weight_decay", XSA_FIELD(c.train.weight_decay), non_negative, "a number >= 0"));
    const auto beta = [](double v) { return v >= 0.0 && v < 1.0; };
    k.push_back(double_key("train.beta1", XSA_FIELD(c.train.beta1), beta, "a number in [0, 1)"));
    k.push_back(double_key("train.beta2", XSA_FIELD(c.train.beta2), beta, "a number in [0, 1)"));
    k.push_back(double_key("train.grad_clip", XSA_FIELD(c.train.grad_clip), non_negative,
                           "a number >= 0 (0 disables clipping)"));
    k.push_back(count_key("train.log_interval", XSA_FIELD(c.train.log_interval), 1, kMaxSteps));
    k.push_back(count_key("train.checkpoint_interval", XSA_FIELD(c.train.checkpoint_interval), 0, kMaxSteps,
                          " (0 disables checkpoints)"));

    k.push_back(count_key("eval.interval", XSA_FIELD(c.eval.interval), 1, kMaxSteps));
    k.push_back(count_key("eval.batches", XSA_FIELD(c.eval.batches), 1, 10000));

    k.push_back(count_key("metrics.bias_interval", XSA_FIELD(c.metrics.bias_interval), 1, kMaxSteps));
    k.push_back(count_key("metrics.bias_batches", XSA_FIELD(c.metrics.bias_batches), 1, 1000));

    k.push_back(count_key("sample.count", XSA_FIELD(c.sample.count), 0, 1000));
    k.push_back(count_key("sample.tokens", XSA_FIELD(c.sample.tokens), 1, 100000));
    k.push_back(double_key("sample.temperature", XSA_FIELD(c.sample.temperature), positive, "a number > 0"));
    k.push_back(
        int_key("sample.top_k", XSA_FIELD(c.sample.top_k), at_least(0), "an integer >= 0 (0 = no top-k)"));
    k.push_back(u64_key("sample.seed", XSA_FIELD(c.sample.seed)));

    k.push_back(count_key("runtime.threads", XSA_FIELD(c.runtime.threads), 1, 1024));
    k.push_back(count_key("runtime.workers", XSA_FIELD(c.runtime.workers), 1, 1024));
    k.push_back(string_key("runtime.precision", XSA_FIELD(c.runtime.precision), {"fp32", "bf16", "auto"}));

    k.push_back(bool_key("log.tensorboard", XSA_FIELD(c.log.tensorboard)));
    return k;
  }();
  return table;
}

#undef XSA_FIELD

const std::string kLambdaKey = "attention.lambda";

const Key* find_key(const std::string& dotted) {
  for (const auto& k : keys())
    if (k.dotted == dotted) return &k;
  return nullptr;
}

std::string section_of(const std::string& dotted) {
  auto dot = dotted.find('.');
  return dot == std::string::npos ? "" : dotted.substr(0, dot);
}
std::string leaf_of(const std::string& dotted) {
  auto dot = dotted.find('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

// Names allowed directly under `section` ("" = top level: scalar keys and section names), in file order.
std::vector<std::string> known_names(const std::string& section) {
  std::vector<std::string> out;
  auto add = [&](const std::string& s) {
    for (const auto& o : out)
      if (o == s) return;
    out.push_back(s);
  };
  for (const auto& k : keys()) {
    if (section.empty())
      add(section_of(k.dotted).empty() ? k.dotted : section_of(k.dotted));
    else if (section_of(k.dotted) == section)
      add(leaf_of(k.dotted));
  }
  if (section == "attention") add("lambda");
  return out;
}

bool is_section(const std::string& name) {
  if (name.empty()) return false;
  for (const auto& k : keys())
    if (section_of(k.dotted) == name) return true;
  return false;
}

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
        auto v = as_variant(entry.second);
        if (!v) fail_got(ctx, kLambdaKey, entry.second, kVariantExpected);
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
  if (c.model.pos == "rope" && c.model.d_head % 2 != 0)  // RoPE rotates channel pairs
    fail(ctx, "model.d_head",
         "got " + std::to_string(c.model.d_head) + ", expected an even integer when model.pos = rope");
  for (int layer : c.attention.layers)
    if (layer >= c.model.n_layer)
      fail(ctx, "attention.layers",
           "got layer " + std::to_string(layer) +
               ", expected layers in [0, model.n_layer = " + std::to_string(c.model.n_layer) + ")");
  for (const auto& v : c.attention.variants)
    for (int layer : v.layers)
      if (layer >= c.model.n_layer)
        fail(ctx, "attention.variants",
             "variant '" + v.name() + "': layer " + std::to_string(layer) +
                 ", expected layers in [0, model.n_layer = " + std::to_string(c.model.n_layer) + ")");
}

}  // namespace

namespace {
// What a record that lacks a key ran with: today's defaults, except for keys added later with a default other
// than what ran before they existed.
Config record_defaults() {
  Config c;
  c.attention.impl = "explicit";  // the only implementation before attention.impl existed
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

}  // namespace xsa
