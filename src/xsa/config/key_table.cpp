#include "xsa/config/key_table.h"

#include <charconv>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xsa/util/error.h"
#include "xsa/util/number_text.h"

namespace xsa::key_table {

[[noreturn]] void fail(const Context& ctx, const std::string& key, const std::string& what) {
  throw InputError(ctx.where(key) + ": " + key + ": " + what);
}

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

namespace {

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

// A number, -0 folded into 0 (+ 0.0), so a config never records "-0".
std::optional<double> as_number(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  const auto v = parse_plain_number(n.Scalar());
  if (!v) return std::nullopt;
  return *v + 0.0;
}

// An integer that fits an int.
std::optional<int> as_int(const YAML::Node& n) {
  const auto v = as_integer(n);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<bool> as_bool(const YAML::Node& n) {
  if (!is_plain_scalar(n)) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// A non-empty string (quoted or not).
std::optional<std::string> as_non_empty_string(const YAML::Node& n) {
  if (!n || !n.IsScalar() || n.Scalar().empty()) return std::nullopt;
  return n.Scalar();
}

std::optional<std::string> as_string(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  return n.Scalar();
}

}  // namespace

std::optional<VariantSpec> as_variant(const YAML::Node& n, std::string* why) {
  if (!n || !n.IsScalar()) return std::nullopt;
  if (auto spec = parse_variant_keyword(n.Scalar(), why)) return spec;
  auto v = as_number(n);
  if (!v || *v < 0.0 || *v > 1.0) return std::nullopt;
  return VariantSpec{VariantSpec::Kind::kFixed, *v, false, {}};
}

namespace {

// `get` is a generic lambda returning a reference to the field, for both const and mutable configs. `read`
// turns the YAML node into the field's value (nullopt when it is not one), which `ok` must accept; else the
// key is refused ("got ..., expected `expected`"). The field is written back as its JSON value.
template <class Get, class Read, class Ok>
Key read_key(const std::string& dotted, Get get, Read read, Ok ok, const std::string& expected) {
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            const auto v = read(n);
            if (!v || !ok(*v)) fail_got(ctx, dotted, n, expected);
            get(c) = *v;
          },
          [=](const Config& c) { return nlohmann::json(get(c)); }};
}

// A kind of key: how its value is read and what an error says it expected. Called as
// kind(dotted, field) for any value the reader accepts, or kind(dotted, field, ok, expected) for the values
// `ok` accepts.
template <class T>
struct KeyKind {
  std::optional<T> (*read)(const YAML::Node&);
  const char* expected;

  static bool any(const T&) { return true; }

  template <class Get>
  Key operator()(const std::string& dotted, Get get) const {
    return read_key(dotted, get, read, any, expected);
  }
  template <class Get, class Ok>
  Key operator()(const std::string& dotted, Get get, Ok ok, const std::string& narrower) const {
    return read_key(dotted, get, read, ok, narrower);
  }
};
const KeyKind<int> int_key{as_int, "an integer"};
const KeyKind<std::uint64_t> u64_key{as_unsigned, "an integer >= 0"};
const KeyKind<double> double_key{as_number, "a number"};
const KeyKind<bool> bool_key{as_bool, "true or false"};
const KeyKind<std::string> string_key{as_non_empty_string, "a non-empty string"};
const KeyKind<std::string> optional_string_key{as_string, "a string (empty for none)"};

// One of an enum's spellings (config.h's choice tables), read into the enum and written back as its spelling.
template <class Get>
Key choice_key(const std::string& dotted, Get get) {
  using E = std::decay_t<decltype(get(std::declval<Config&>()))>;
  std::string expected = "one of";
  for (const auto& name : choice_names<E>()) expected += " " + name;
  return {dotted,
          [=](Config& c, const YAML::Node& n, const Context& ctx) {
            const auto value = n && n.IsScalar() ? parse_choice<E>(n.Scalar()) : std::nullopt;
            if (!value) fail_got(ctx, dotted, n, expected);
            get(c) = *value;
          },
          [=](const Config& c) { return nlohmann::json(choice_name(get(c))); }};
}

const auto at_least = [](long long lo) { return [lo](long long v) { return v >= lo; }; };

// An integer key that sets an amount of work, with an upper bound, so a typo (an extra zero or three) is
// refused when the config is read instead of surfacing hours later (docs/guide.md "Config" lists the limits).
template <class Get>
Key count_key(const std::string& dotted, Get get, long long lo, long long hi, const std::string& note = "") {
  return int_key(
      dotted, get, [lo, hi](long long v) { return v >= lo && v <= hi; },
      "an integer in [" + with_commas(lo) + ", " + with_commas(hi) + "]" + note);
}
const auto positive = [](double v) { return v > 0.0; };
const auto non_negative = [](double v) { return v >= 0.0; };

}  // namespace

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
    k.push_back(bool_key("data.doc_mask", XSA_FIELD(c.data.doc_mask)));

    // Also the cap on every layer index typed (attention.layers, "xsa@2-3"), checked as they are read.
    k.push_back(count_key("model.n_layer", XSA_FIELD(c.model.n_layer), 1, kMaxLayers));
    k.push_back(int_key("model.d_model", XSA_FIELD(c.model.d_model), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.n_head", XSA_FIELD(c.model.n_head), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.d_head", XSA_FIELD(c.model.d_head), at_least(1), "an integer >= 1"));
    k.push_back(int_key("model.mlp_ratio", XSA_FIELD(c.model.mlp_ratio), at_least(1), "an integer >= 1"));
    k.push_back(choice_key("model.pos", XSA_FIELD(c.model.pos)));
    k.push_back(bool_key("model.embed_norm", XSA_FIELD(c.model.embed_norm)));
    k.push_back(bool_key("model.qk_norm", XSA_FIELD(c.model.qk_norm)));
    k.push_back(bool_key("model.tie_embeddings", XSA_FIELD(c.model.tie_embeddings)));
    k.push_back(optional_string_key("model.init_from", XSA_FIELD(c.model.init_from)));

    k.push_back({"attention.variants",
                 [](Config& c, const YAML::Node& n, const Context& ctx) {
                   const std::string key = "attention.variants";
                   if (!n || !n.IsSequence() || n.size() == 0)
                     fail_got(ctx, key, n, std::string("a non-empty list of ") + variant_spellings());
                   std::vector<VariantSpec> out;
                   std::set<std::string> names;  // repeats found in n log n, not by comparing every pair
                   for (std::size_t i = 0; i < n.size(); ++i) {
                     const std::string entry = "entry " + std::to_string(i + 1) + ": ";
                     std::string why;
                     auto v = as_variant(n[i], &why);
                     if (!v && !why.empty()) fail(ctx, key, entry + describe(n[i]) + ": " + why);
                     if (!v)
                       fail(ctx, key, entry + "got " + describe(n[i]) + ", expected " + variant_spellings());
                     if (!names.insert(v->name()).second)
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
    k.push_back({"attention.layers",
                 [](Config& c, const YAML::Node& n, const Context& ctx) {
                   const std::string key = "attention.layers";
                   const std::string expected = "a list of distinct layer indices >= 0 (empty = all layers)";
                   if (!n || !n.IsSequence()) fail_got(ctx, key, n, expected);
                   std::vector<int> out;
                   std::vector<bool> seen(kMaxLayers, false);  // repeats found in one pass over the list
                   for (std::size_t i = 0; i < n.size(); ++i) {
                     const std::string entry = "entry " + std::to_string(i + 1) + ": ";
                     auto v = as_integer(n[i]);
                     if (!v || *v < 0)
                       fail(ctx, key, entry + "got " + describe(n[i]) + ", expected " + expected);
                     if (*v > kMaxLayers - 1) fail(ctx, key, entry + layer_above_cap(std::to_string(*v)));
                     if (seen[static_cast<std::size_t>(*v)])
                       fail(ctx, key, "layer " + std::to_string(*v) + " listed twice, expected " + expected);
                     seen[static_cast<std::size_t>(*v)] = true;
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
    k.push_back(choice_key("attention.impl", XSA_FIELD(c.attention.impl)));
    k.push_back(choice_key("attention.output_gate", XSA_FIELD(c.attention.output_gate)));

    k.push_back(choice_key("train.optimizer", XSA_FIELD(c.train.optimizer)));
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
    k.push_back(choice_key("runtime.precision", XSA_FIELD(c.runtime.precision)));
    k.push_back(count_key("runtime.dist_timeout_s", XSA_FIELD(c.runtime.dist_timeout_s), 1, 86400));
    k.push_back(double_key(
        "runtime.dist_bucket_mb", XSA_FIELD(c.runtime.dist_bucket_mb),
        [](double v) { return v >= 0.0 && v <= 1024.0; },
        "a number in [0, 1,024] (MiB; 0 = one all-reduce after backward)"));
    k.push_back(choice_key("runtime.device", XSA_FIELD(c.runtime.device)));

    k.push_back(bool_key("log.tensorboard", XSA_FIELD(c.log.tensorboard)));
    return k;
  }();
  return table;
}

#undef XSA_FIELD

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

}  // namespace xsa::key_table
