#pragma once
// results.json (schema "xsa.results/1", docs/ARCHITECTURE.md) as typed structs, the one description of the
// schema: the trainer fills an ExperimentResult and writes it with to_json; xsa-inspect reads it with
// parse_results, which validates what the reports need and tolerates extra fields.
// Torch-free: xsa-inspect and the tests link it without LibTorch.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/records/bias_metrics.h"

namespace xsa {

inline constexpr const char* kResultsSchema = "xsa.results/1";

struct EvalPoint {
  std::int64_t step = 0;
  double val_loss = 0;
};

struct TrainLossPoint {
  std::int64_t step = 0;
  double loss = 0;
};

struct BiasPoint {
  std::int64_t step = 0;
  std::vector<LayerBias> layers;
};

// Positions in a window (docs/guide.md "results.json", loss_by_position): a window holds T+1 tokens
// x_0..x_T, and position t (1-based, t = 1..T) is the prediction of x_t from the t tokens x_0..x_{t-1}, so
// t is also the context the prediction had. The buckets grow ×4 because context effects are roughly
// logarithmic in the distance: 1–16, 17–64, 65–256, 257–1,024, 1,025–4,096, ..., the last cut at T; only the
// buckets that start at or before T exist (T = 300: 1–16, 17–64, 65–256, 257–300).
struct PositionBucket {
  std::int64_t first = 0;  // inclusive, 1-based
  std::int64_t last = 0;   // inclusive
  bool operator==(const PositionBucket& o) const { return first == o.first && last == o.last; }
};
std::vector<PositionBucket> position_buckets(std::int64_t seq_len);

// The final evaluation's loss over the predictions of one position bucket, every window pooled.
struct PositionLoss {
  PositionBucket positions;
  std::int64_t tokens = 0;  // predictions in the bucket: windows × (last − first + 1)
  double loss = 0;          // their mean next-token loss (nats)
};
// The buckets of position_buckets(T), T = position_sums.size(), from the final evaluation's per-position
// sums: position_sums[t-1] is position t's loss summed over `windows` windows. Each bucket's sum is taken in
// float64, so the token-weighted mean of the buckets is the mean over every prediction.
std::vector<PositionLoss> loss_by_position(const std::vector<double>& position_sums, std::int64_t windows);

struct FinalMetrics {
  double val_loss = 0;                 // mean over every non-overlapping validation window
  std::optional<double> val_loss_sem;  // SE over those windows
  std::optional<std::int64_t> eval_tokens;
  std::optional<std::int64_t> eval_windows;
  std::optional<double> train_loss;  // mean training loss of the last log_interval steps
  // The same windows' loss per position bucket, in position order; empty in files written before it was
  // measured.
  std::vector<PositionLoss> loss_by_position;
};

struct RunTiming {
  double wall_s = 0;
  double train_s = 0;
  double tokens_per_s = 0;
  double step_ms_median = 0;
  // Data-parallel runs (world_size > 1): the median time per step rank 0 spent in the gradient all-reduce,
  // waiting for the slowest rank included (the cost the scale-out plan in docs/guide.md projects).
  std::optional<double> allreduce_ms_median;
};

struct RunResult {
  std::string variant;  // "sa" | "xsa" | "lambda=0.5" | "xsa@2-3" | ... (VariantSpec::name)
  VariantRecord spec;   // "variant_spec" (and the top-level "lambda", which repeats spec.lambda)
  // The tables' group label (xsa::variant_label), as the trainer wrote it; files from before it was written
  // leave it empty and variant_group_label derives it.
  std::string label;
  // Layers the variant applies to: empty = all (written "all"); absent in hand-made files.
  std::optional<std::vector<int>> layers;
  std::optional<std::uint64_t> seed;  // config seeds are unsigned 64-bit
  std::string init_checksum;
  std::vector<EvalPoint> eval;
  std::vector<TrainLossPoint> train_loss;
  FinalMetrics final;
  std::vector<BiasPoint> bias;
  std::vector<std::string> samples;
  std::optional<RunTiming> timing;
};

struct Comparison {
  std::string baseline;
  std::string variant;
  double delta_val_loss = 0;                 // variant - baseline (negative = variant better)
  std::optional<double> delta_val_loss_sem;  // SE of the paired per-window difference
  double improvement_pct = 0;                // 100 * (baseline - variant) / baseline
};

struct VersionInfo {
  std::string xsa;
  std::string torch;
};

// Where and how the experiment ran. Fields a file lacks read as their defaults.
struct Environment {
  int threads = 0;       // LibTorch intra-op threads per run
  std::string blas;      // BLAS library description
  int blas_threads = 0;  // -1 if the BLAS does not say
  int workers = 0;
  std::int64_t host_cores = 0;
  double peak_rss_mib = 0;
  double wall_s = 0;
  // Mixed precision (files written before runtime.precision existed: empty / absent).
  std::string precision;            // used: "fp32" | "bf16"
  std::string precision_requested;  // runtime.precision as configured: "fp32" | "bf16" | "auto"
  struct CpuBf16 {
    bool avx512_bf16 = false, amx_bf16 = false, native = false;
  };
  std::optional<CpuBf16> cpu_bf16;  // what /proc/cpuinfo said
  // Data-parallel ranks (docs/guide.md "Scale-out"; files written before it: absent, which means 1) and
  // their collective backend ("gloo"; empty for a single process).
  std::optional<int> world_size;
  std::string backend;
};

// The prepared data the experiment trained on (from meta.json). Fields a file lacks read as defaults.
struct DataInfo {
  std::string dir;
  std::int64_t vocab_size = 0;
  std::int64_t train_tokens = 0;
  std::int64_t val_tokens = 0;
  std::string tokenizer_sha256;
};

// One results.json = one paired experiment (a baseline and one or more variants, same init and batches).
// The trainer builds this and writes it with to_json; xsa-inspect reads it back with parse_results.
struct ExperimentResult {
  std::string source;  // path of the results.json it was read from (empty if built in memory); not written
  std::string
      label;  // experiment id: the folder holding results.json (run name or sweep run id); not written
  std::string name;
  Config config;  // the resolved config, typed (read with config_from_record, written with config_to_json)
  std::optional<VersionInfo> version;
  std::optional<Environment> environment;
  std::optional<DataInfo> data;
  std::vector<RunResult> runs;
  std::vector<Comparison> comparisons;  // each variant vs runs[0]; derived from final losses if absent

  const RunResult* find_run(const std::string& variant) const;
  std::int64_t seq_len() const { return config.data.seq_len; }
  // data.train_tokens, the size of one epoch, where the file records it.
  std::optional<std::int64_t> train_tokens() const {
    return data && data->train_tokens > 0 ? std::optional<std::int64_t>(data->train_tokens) : std::nullopt;
  }
};

// The group label of a run: the one results.json recorded, else xsa::variant_label of its variant_spec, its
// layers and the experiment's attention.lambda_lr_scale (files written before the label was).
std::string variant_group_label(const ExperimentResult& experiment, const RunResult& run);

// Validates and converts; `source` names the file in errors. Throws InputError with one line such as
// "runs/a/results.json: missing key runs[1].final.val_loss". Reads every file written under this schema
// since its first version: fields added later are optional.
ExperimentResult parse_results(const nlohmann::json& doc, const std::string& source);
// The same from the text of a file (not JSON -> InputError naming `source`).
ExperimentResult parse_results(const std::string& text, const std::string& source);
ExperimentResult read_results(const std::string& path);

// The results.json document (the inverse of parse_results; config is copied as is).
nlohmann::json to_json(const ExperimentResult& result);

// One entry of "runs", both ways (the trainer's checkpoints store a run's progress in this format).
nlohmann::json to_json(const RunResult& run);
RunResult parse_run_result(const nlohmann::json& run, const std::string& source);
// The lists a run grows step by step, in results.json's format (its "eval", "train_loss" and "bias" keys,
// each optional): what a checkpoint of an unfinished run keeps, read back typed.
struct RunCurves {
  std::vector<EvalPoint> eval;
  std::vector<TrainLossPoint> train_loss;
  std::vector<BiasPoint> bias;
};
RunCurves parse_run_curves(const nlohmann::json& doc, const std::string& source);

}  // namespace xsa
