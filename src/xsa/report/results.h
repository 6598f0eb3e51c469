#pragma once
// results.json (schema "xsa.results/1", DESIGN.md) as plain structs: the reader validates what the reports
// need and tolerates extra fields; the writer is the inverse for the fields modelled here.
// Torch-free: xsa-inspect and the tests link it without LibTorch.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace xsa::report {

inline constexpr const char* kResultsSchema = "xsa.results/1";

// How a variant mixes in the self-value projection. Fixed variants have a number λ (sa = 0, xsa = 1);
// learned/gate variants have none (their per-head λ is reported in the bias metrics instead).
struct VariantSpec {
  std::string kind = "fixed";  // "fixed" | "learned" | "gate" | anything else the trainer adds
  std::optional<double> lambda;
};

// Spec from a variant name alone: "sa" -> λ 0, "xsa" -> λ 1, "lambda=L" -> λ L, else kind = name, no λ.
VariantSpec variant_spec_from_name(const std::string& variant);

// Group label used by the tables: the shortest form of λ ("0.5", "1") or the kind ("learned").
std::string variant_group_label(const VariantSpec& spec);

struct EvalPoint {
  std::int64_t step = 0;
  double val_loss = 0;
};

struct LayerBias {
  int layer = 0;
  double cos_y_v = 0;                   // cos(y_i, v_i) before the XSA projection
  double cos_z_v = 0;                   // cos(z_i, v_i) after it
  double attn_diag = 0;                 // mean a_ii
  double value_cos = 0;                 // mean cos(v_i, v_j), i != j
  std::vector<double> lambda_per_head;  // learned/gate variants only
};

struct BiasPoint {
  std::int64_t step = 0;
  std::vector<LayerBias> layers;
};

struct FinalMetrics {
  double val_loss = 0;
  std::optional<double> val_loss_sem;
  std::optional<std::int64_t> eval_tokens;
  std::optional<double> train_loss;
};

struct RunResult {
  std::string variant;  // "sa" | "xsa" | "lambda=0.5" | ...
  VariantSpec spec;
  std::optional<std::int64_t> seed;
  std::string init_checksum;
  std::vector<EvalPoint> eval;
  FinalMetrics final;
  std::vector<BiasPoint> bias;
};

struct Comparison {
  std::string baseline;
  std::string variant;
  double delta_val_loss = 0;   // variant - baseline (negative = variant better)
  double improvement_pct = 0;  // 100 * (baseline - variant) / baseline
};

// One results.json = one paired experiment (a baseline and one or more variants, same init and batches).
struct ExperimentResult {
  std::string source;  // path of the results.json it was read from (empty if built in memory)
  std::string label;   // experiment id: the folder holding results.json (run name or sweep run id)
  std::string name;
  std::int64_t seq_len = 0;                  // config.data.seq_len
  std::optional<std::int64_t> seed;          // config.seed
  std::optional<std::int64_t> train_tokens;  // data.train_tokens: the size of one epoch
  nlohmann::json config = nlohmann::json::object();
  std::vector<RunResult> runs;
  std::vector<Comparison> comparisons;  // each variant vs runs[0]; derived from final losses if absent

  const RunResult* find_run(const std::string& variant) const;
};

// Validates and converts; `source` names the file in errors. Throws InputError with one line such as
// "runs/a/results.json: missing key runs[1].final.val_loss".
ExperimentResult parse_results(const nlohmann::json& doc, const std::string& source);
ExperimentResult read_results(const std::string& path);
// read_results on text already read (also used by the fuzzer).
ExperimentResult parse_results_text(const std::string& text, const std::string& source);

// Inverse of parse_results for the modelled fields (config is copied as is).
nlohmann::json to_json(const ExperimentResult& result);

// Everything found under the given paths. A file is read as results.json whatever its name; a folder is
// searched recursively for files named results.json, so a sweep folder (shards included) merges naturally.
// Sweep summaries (summary*.json) found in folders are only used for notes about points without results.
struct Discovery {
  std::vector<ExperimentResult> experiments;  // sorted by source path, duplicates removed
  std::vector<std::string> notes;             // human-readable remarks (e.g. unfinished sweep points)
};

// Throws InputError for a path that does not exist, an invalid results file, or when nothing is found.
Discovery discover_results(const std::vector<std::string>& paths);

}  // namespace xsa::report
