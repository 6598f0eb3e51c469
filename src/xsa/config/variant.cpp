#include "xsa/config/variant.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "xsa/config/config.h"
#include "xsa/util/choice.h"

namespace xsa {

const VariantKind& variant_kind(VariantSpec::Kind kind) {
  for (const auto& row : kVariantKinds)
    if (row.value == kind) return row;
  return kVariantKinds[0];  // not reached: every kind has a row (tests/unit/common/test_config.cpp)
}

const char* variant_kind_name(VariantSpec::Kind kind) {
  return variant_kind(kind).name;
}

double initial_lambda(const VariantSpec& spec, double learned_init) {
  switch (variant_kind(spec.kind).initial) {
    case InitialLambda::kSpecLambda:
      return spec.lambda;
    case InitialLambda::kLearnedInit:
      return learned_init;
    case InitialLambda::kZero:
      return 0.0;
  }
  return 0.0;  // not reached: every InitialLambda is handled above
}

std::string variant_spellings() {
  std::string out = "sa, xsa";
  for (const auto& row : kVariantKinds)
    if (*row.parameter != '\0') out += std::string(", ") + row.name;
  return out + " or a number in [0, 1], optionally with @<layers> (e.g. xsa@2-3)";
}

bool is_variant_parameter(const std::string& name) {
  const std::string last = name.substr(name.rfind('.') + 1);  // the whole name when it has no "."
  for (const auto& row : kVariantKinds)
    if (*row.parameter != '\0' && last == row.parameter) return true;
  return false;
}

std::string VariantSpec::name() const {
  std::string base;
  if (kind != Kind::kFixed)
    base = variant_kind_name(kind);
  else if (from_keyword && lambda == 0.0)
    base = "sa";
  else if (from_keyword && lambda == 1.0)
    base = "xsa";
  else
    base = "lambda=" + shortest_number(lambda);
  return layers.empty() ? base : base + "@" + layer_list_text(layers);
}

nlohmann::json VariantSpec::to_json() const {
  if (kind == Kind::kFixed && !(from_keyword && (lambda == 0.0 || lambda == 1.0))) {
    if (layers.empty()) return lambda;
    return shortest_number(lambda) + "@" + layer_list_text(layers);
  }
  return name();
}

std::string layer_list_text(std::vector<int> layers) {
  std::sort(layers.begin(), layers.end());
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    out += (out.empty() ? "" : "+") + std::to_string(layers[i]);
    if (j > i) out += "-" + std::to_string(layers[j]);
    i = j + 1;
  }
  return out;
}

std::string layer_above_cap(const std::string& layer) {
  return "layer " + layer + " is out of range [0, " + std::to_string(kMaxLayers - 1) +
         "] (model.n_layer is at most " + std::to_string(kMaxLayers) + ")";
}

std::optional<std::vector<int>> parse_layer_list(const std::string& text, std::string* why) {
  // Time and memory are linear in the text, whatever numbers it holds: every bound is checked against
  // kMaxLayers before any range is expanded, and a repeat is found with one flag per layer, not a search.
  struct Range {
    int first = 0, last = 0;
  };
  std::vector<Range> ranges;
  // A layer index: digits only (no sign, space or point); nullopt when malformed, -1 when above the cap.
  const auto layer_of = [&](const std::string& digits) -> std::optional<int> {
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const std::size_t significant = std::min(digits.find_first_not_of('0'), digits.size());
    if (digits.size() - significant > 9) return -1;  // more than 999,999,999: far above the cap
    const long long v = significant == digits.size() ? 0 : std::stoll(digits.substr(significant));
    return v > kMaxLayers - 1 ? -1 : static_cast<int>(v);
  };
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t plus = text.find('+', start);
    if (plus == std::string::npos) plus = text.size();
    const std::string item = text.substr(start, plus - start);
    const std::size_t dash = item.find('-');
    const std::string first_text = item.substr(0, dash);
    const std::string last_text = dash == std::string::npos ? first_text : item.substr(dash + 1);
    const auto first = layer_of(first_text), last = layer_of(last_text);
    if (!first || !last) return std::nullopt;
    if (*first < 0 || *last < 0) {
      if (why) *why = layer_above_cap(*first < 0 ? first_text : last_text);
      return std::nullopt;
    }
    if (*last < *first) return std::nullopt;
    ranges.push_back({*first, *last});
    start = plus + 1;
  }
  // Each step of the loop marks a layer not seen before or stops: at most kMaxLayers steps in all.
  std::vector<bool> seen(kMaxLayers, false);
  std::vector<int> out;
  for (const Range& r : ranges) {
    for (int l = r.first; l <= r.last; ++l) {
      if (seen[static_cast<std::size_t>(l)]) {
        if (why) *why = "layer " + std::to_string(l) + " listed twice";
        return std::nullopt;
      }
      seen[static_cast<std::size_t>(l)] = true;
      out.push_back(l);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<VariantSpec> parse_variant_keyword(const std::string& text, std::string* why) {
  using Kind = VariantSpec::Kind;
  const std::size_t at = text.find('@');
  const std::string base = text.substr(0, at);
  VariantSpec spec;
  const std::optional<Kind> keyword = parse_choice<Kind>(base);
  if (base == "sa") {
    spec = VariantSpec{Kind::kFixed, 0.0, true, {}};
  } else if (base == "xsa") {
    spec = VariantSpec{Kind::kFixed, 1.0, true, {}};
  } else if (keyword && *keyword != Kind::kFixed) {  // a kind with a parameter is spelled by its name
    spec = VariantSpec{*keyword, 0.0, true, {}};
  } else {
    // A number only with layers: a bare number is the YAML number the config parser reads itself.
    const auto v = at == std::string::npos ? std::nullopt : parse_plain_number(base);
    if (!v || *v < 0.0 || *v > 1.0) return std::nullopt;
    spec = VariantSpec{Kind::kFixed, *v + 0.0, false, {}};  // + 0.0 folds -0 into 0
  }
  if (at != std::string::npos) {
    auto layers = parse_layer_list(text.substr(at + 1), why);
    if (!layers) return std::nullopt;
    spec.layers = *layers;
  }
  return spec;
}

VariantRecord variant_record(const VariantSpec& spec, double learned_init) {
  VariantRecord r;
  r.kind = variant_kind_name(spec.kind);
  const InitialLambda initial = variant_kind(spec.kind).initial;
  if (initial == InitialLambda::kSpecLambda) r.lambda = spec.lambda;
  if (initial == InitialLambda::kLearnedInit) r.initial_lambda = learned_init;
  return r;
}

VariantRecord variant_record_from_name(const std::string& variant) {
  const std::string name = variant.substr(0, variant.find('@'));
  VariantRecord spec;
  if (name == "sa") {
    spec.lambda = 0.0;
  } else if (name == "xsa") {
    spec.lambda = 1.0;
  } else if (name.rfind("lambda=", 0) == 0) {
    const std::string number = name.substr(7);
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (!number.empty() && end && *end == '\0' && std::isfinite(value)) {
      spec.lambda = value;
    } else {
      spec.kind = name;
    }
  } else {
    spec.kind = name;
  }
  return spec;
}

std::string lambda_label(double lambda) {
  // Shortest representation that round-trips well enough for grid values like 0.25 or 1.
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", lambda);
  return buf;
}

std::string variant_label(const VariantRecord& record, const std::vector<int>& layers,
                          double lambda_lr_scale) {
  std::string label = record.lambda ? lambda_label(*record.lambda) : record.kind;
  if (!layers.empty()) label += "@" + layer_list_text(layers);
  // Fixed λ has no parameters: the scale does not apply.
  if (!record.lambda && lambda_lr_scale != 1.0) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " lr×%.6g", lambda_lr_scale);
    label += buf;
  }
  return label;
}

bool ResolvedVariant::modifies(int layer) const {
  return layers.empty() || std::find(layers.begin(), layers.end(), layer) != layers.end();
}

}  // namespace xsa
