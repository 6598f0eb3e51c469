#pragma once
// Attention variants, described once (docs/guide.md "Config", docs/ARCHITECTURE.md "Variants"): how a config
// spells one, its stable name, what results.json records about it and the label the tables group it by.
// Torch-free; the model (xsa/model/gpt.h) turns a spec into parameters.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace xsa {

// One attention variant of a paired experiment.
//   "sa" (λ=0), "xsa" (λ=1), a number λ in [0,1] (λ-XSA),
//   "learned" (one λ per layer and head, λ = sigmoid(θ), θ initialised so λ = attention.learned_init),
//   "gate" (one zero-initialised gate g per layer and head, λ = g: training starts as SA),
//   "tanh_gate" (one α per layer and head initialised to 0, λ = tanh(α) in (-1, 1): modded-nanogpt's
//   zero-initialised tanh gate; also starts as SA).
// Any of them with "@<layers>" applies only to those layers, the others staying SA: "xsa@2-3" (layers 2
// and 3), "xsa@0+2"; without it, the variant applies to attention.layers (empty = every layer).
struct VariantSpec {
  // What each kind is and does is in kVariantKinds below and xsa/model/variant_lambda.h (docs/extending.md).
  enum class Kind { kFixed, kLearned, kGate, kTanhGate };
  Kind kind = Kind::kFixed;
  double lambda = 0.0;  // for kFixed
  // True when written as the keyword "sa"/"xsa"; false when written as a number, so that an explicit
  // `0` or `1` keeps the name "lambda=0"/"lambda=1" and a sweep's λ=0 point stays distinct from its baseline.
  bool from_keyword = true;
  std::vector<int> layers;  // its own layers ("@..."), ascending; empty = attention.layers

  // Stable name used in results.json, checkpoints and tables: "sa", "xsa", "lambda=0.5", "learned", "gate",
  // "tanh_gate", each with "@<layers>" when it has its own.
  std::string name() const;
  bool is_sa() const { return kind == Kind::kFixed && lambda == 0.0; }
  // The YAML/JSON spelling that parses back to this spec: "sa", "xsa", 0.5, "learned", "0.5@1", ...
  nlohmann::json to_json() const;
  bool operator==(const VariantSpec& o) const {
    return kind == o.kind && lambda == o.lambda && name() == o.name();
  }
};

// Where a kind's λ starts (ResolvedVariant::initial_lambda).
enum class InitialLambda {
  kSpecLambda,   // the number the variant was spelled with (fixed: sa = 0, xsa = 1, 0.5, ...)
  kLearnedInit,  // attention.learned_init
  kZero,         // 0: training starts as SA
};

// One row per variant kind, the one place a kind is described on the config side (torch-free): its spelling
// (results.json's variant_spec.kind, an export's layer kind, and the config keyword for every kind but fixed,
// which is spelled sa / xsa / a number), the name of its per-head parameter in the model ("" for none: a
// fixed λ), and where its λ starts. The model's side of a kind (λ from its parameter) is
// xsa/model/variant_lambda.h. Read through util/choice.h (choice_name, parse_choice) like the other tables.
struct VariantKind {
  VariantSpec::Kind value;
  const char* name;
  const char* parameter;
  InitialLambda initial;
};
inline constexpr VariantKind kVariantKinds[] = {
    {VariantSpec::Kind::kFixed, "fixed", "", InitialLambda::kSpecLambda},
    {VariantSpec::Kind::kLearned, "learned", "xsa_theta", InitialLambda::kLearnedInit},
    {VariantSpec::Kind::kGate, "gate", "xsa_gate", InitialLambda::kZero},
    {VariantSpec::Kind::kTanhGate, "tanh_gate", "xsa_alpha", InitialLambda::kZero},
};
inline constexpr const auto& choices_of(VariantSpec::Kind) {
  return kVariantKinds;
}
// The row of `kind`.
const VariantKind& variant_kind(VariantSpec::Kind kind);

// "fixed" | "learned" | "gate" | "tanh_gate": the kind as results.json's variant_spec records it.
const char* variant_kind_name(VariantSpec::Kind kind);

// The λ a variant starts from: its own number (fixed), attention.learned_init (learned) or 0 (the gates).
double initial_lambda(const VariantSpec& spec, double learned_init);

// Whether a model parameter name ("blocks.1.attn.xsa_theta") is a variant's per-head λ parameter (a kind's
// `parameter`): those take the λ learning rate (attention.lambda_lr_scale) and stay out of the shared
// weights.
bool is_variant_parameter(const std::string& name);

// A spelling without a number: "sa", "xsa", "learned", "gate", "tanh_gate", optionally "@<layers>"; and
// "<number>@<layers>" (the number in [0,1]). A bare number is a YAML number, read by the config parser.
// nullopt when the text is none of these; then `why`, if given, says what is wrong with its layer list when
// that is the reason (parse_layer_list), else it is left empty.
std::optional<VariantSpec> parse_variant_keyword(const std::string& text, std::string* why = nullptr);
// Every spelling, for messages: "sa, xsa, learned, gate, tanh_gate or a number in [0, 1], optionally with
// @<layers> (e.g. xsa@2-3)", the kinds with a parameter read from kVariantKinds.
std::string variant_spellings();

// The most layers a model may have (model.n_layer's upper bound in the key table), so a layer index is at
// most kMaxLayers - 1 wherever one is typed. Layer lists are checked against it before anything is expanded:
// "xsa@0-999999" is refused at once, and parsing one takes time linear in its text.
inline constexpr int kMaxLayers = 1024;

// Layer lists as variant names write them: ascending, runs of consecutive layers as "a-b", joined by "+":
// {2, 3} -> "2-3", {0, 2} -> "0+2", {0, 1, 2, 5} -> "0-2+5". parse_layer_list is its inverse (any order of
// items; nullopt for malformed text, a layer above kMaxLayers - 1 or a layer listed twice — for the last two
// `why`, if given, says which layer: "layer 999999 is out of range [0, 1023] (model.n_layer is at most 1024)"
// or "layer 2 listed twice"; it is left empty for malformed text).
std::string layer_list_text(std::vector<int> layers);
std::optional<std::vector<int>> parse_layer_list(const std::string& text, std::string* why = nullptr);
// "layer <layer> is out of range [0, kMaxLayers - 1] (model.n_layer is at most kMaxLayers)": the reason a
// layer index above the cap is refused where it is read, before model.n_layer is known.
std::string layer_above_cap(const std::string& layer);

// A variant as a run applies it, resolved once from its spec and the config (config.h's resolve_variant): the
// model builds its layers from it and the trainer records it.
struct ResolvedVariant {
  VariantSpec::Kind kind = VariantSpec::Kind::kFixed;
  // Fixed: λ; learned: attention.learned_init (sigmoid(θ) starts there); gate, tanh_gate: 0 (start as SA).
  double initial_lambda = 0.0;
  std::vector<int>
      layers;  // the layers it modifies: its own "@" list, else attention.layers; empty = every layer
  bool modifies(int layer) const;
};

// What results.json records about a run's variant ("variant_spec"): fixed variants have a number λ (sa = 0,
// xsa = 1); learned and gate variants have none (their per-head λ is in the bias metrics).
struct VariantRecord {
  std::string kind = "fixed";  // variant_kind_name, or anything a hand-written file says
  std::optional<double> lambda;
  std::optional<double> initial_lambda;  // "learned": attention.learned_init
};
VariantRecord variant_record(const VariantSpec& spec, double learned_init);
// The record of a name alone (files without variant_spec): "sa" -> λ 0, "xsa" -> λ 1, "lambda=L" -> λ L,
// else kind = the name (before any "@"), no λ.
VariantRecord variant_record_from_name(const std::string& name);

// The label the tables group a run by and print as its λ: the shortest form of λ ("0.5", "1") or the kind
// ("learned"); then "@<layers>" when the run modified only some layers; then " lr×S" for a variant with
// parameters trained at lambda_lr_scale S ≠ 1 ("learned lr×30"). Runs with different labels never share a
// group. Written into results.json ("label") so that scripts read it instead of deriving it.
std::string variant_label(const VariantRecord& record, const std::vector<int>& layers,
                          double lambda_lr_scale);
// The label of a fixed λ alone, as --lambda compares it: 0.5 -> "0.5", 1.0 -> "1".
std::string lambda_label(double lambda);

}  // namespace xsa
