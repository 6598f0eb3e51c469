#pragma once
// Experiment configuration: YAML -> validated structs (docs/guide.md "Config"). Torch-free.
//
// Every key has a default (the values below). Unknown keys, wrong types and out-of-range values are
// InputError("<file>: <dotted.key>: <what was found>, expected <what is allowed>").
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "xsa/config/variant.h"
#include "xsa/util/choice.h"

namespace xsa {

struct DataConfig {
  std::string dir = "data/tinystories";
  int seq_len = 128;
  // Attention never crosses a document boundary (the BOS token xsa-prepare writes before every document)
  // inside a window, and positions restart at each document (GptImpl::mask_documents).
  bool doc_mask = false;
};

// The keys whose value is one of a few spellings, typed once when the config is read: nothing outside
// src/xsa/config compares their strings. Each spelling is defined once, in the tables below, which are the
// key table's choices, what config_to_json / results.json write and what the report prints.
enum class PositionEncoding { kRope, kLearned };           // model.pos
enum class AttentionImpl { kExplicit, kFused };            // attention.impl
enum class PrecisionRequest { kFp32, kBf16, kAuto };       // runtime.precision
enum class OutputGate { kNone, kHeadwise, kElementwise };  // attention.output_gate
enum class OptimizerKind { kAdamW };                       // train.optimizer
enum class DeviceKind { kCpu, kCuda };                     // runtime.device

inline constexpr Choice<PositionEncoding> kPositionEncodings[] = {{PositionEncoding::kRope, "rope"},
                                                                  {PositionEncoding::kLearned, "learned"}};
inline constexpr Choice<AttentionImpl> kAttentionImpls[] = {{AttentionImpl::kFused, "fused"},
                                                            {AttentionImpl::kExplicit, "explicit"}};
inline constexpr Choice<PrecisionRequest> kPrecisionRequests[] = {
    {PrecisionRequest::kFp32, "fp32"}, {PrecisionRequest::kBf16, "bf16"}, {PrecisionRequest::kAuto, "auto"}};
inline constexpr Choice<OutputGate> kOutputGates[] = {{OutputGate::kNone, "none"},
                                                      {OutputGate::kHeadwise, "headwise"},
                                                      {OutputGate::kElementwise, "elementwise"}};
inline constexpr Choice<OptimizerKind> kOptimizerKinds[] = {{OptimizerKind::kAdamW, "adamw"}};
inline constexpr Choice<DeviceKind> kDeviceKinds[] = {{DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}};
// The table of an enum (overloads picked by a value of the enum), for xsa/util/choice.h's choice_name,
// parse_choice and choice_names.
inline constexpr const auto& choices_of(PositionEncoding) {
  return kPositionEncodings;
}
inline constexpr const auto& choices_of(AttentionImpl) {
  return kAttentionImpls;
}
inline constexpr const auto& choices_of(PrecisionRequest) {
  return kPrecisionRequests;
}
inline constexpr const auto& choices_of(OutputGate) {
  return kOutputGates;
}
inline constexpr const auto& choices_of(OptimizerKind) {
  return kOptimizerKinds;
}
inline constexpr const auto& choices_of(DeviceKind) {
  return kDeviceKinds;
}

struct ModelConfig {
  int n_layer = 2;
  int d_model = 128;
  int n_head = 4;
  int d_head = 32;
  int mlp_ratio = 4;
  PositionEncoding pos = PositionEncoding::kRope;  // RoPE, or a learned position embedding
  bool embed_norm = true;  // LayerNorm right after the token embedding (paper's setup)
  // RMSNorm over each head's q and k before RoPE (Qwen3, Gemma 3): a learnable gain per head dimension,
  // shared by the heads, initialised to 1, ε 1e-6. It bounds the attention logits.
  bool qk_norm = false;
  bool tie_embeddings = true;
  // An xsa-export folder to start from instead of the random init (docs/guide.md "Export"); empty = none.
  std::string init_from;
};

struct AttentionConfig {
  // The first is the baseline.
  std::vector<VariantSpec> variants = {VariantSpec{VariantSpec::Kind::kFixed, 0.0, true, {}},
                                       VariantSpec{VariantSpec::Kind::kFixed, 1.0, true, {}}};
  std::vector<int> layers;    // layers the variants apply to (unless one has its own "@..."); empty = all
  double learned_init = 0.5;  // initial λ for the "learned" variant, in (0,1)
  // Multiplies the learning rate (and its schedule) of the learned λ's θ and of the gates. They are one
  // scalar per layer and head, and Adam moves a parameter by about lr per step whatever its gradient, so at
  // the model's lr they cannot travel far in a short run (docs/findings.md, question 3). In (0, 1000].
  double lambda_lr_scale = 1.0;
  // How softmax(q·kᵀ)·v is computed: fused runs the O(T)-memory kernel (model/causal_attention.h);
  // explicit writes out the (B, H, T, T) scores, mask and softmax (the reference, and what every result
  // committed before the kernel used). A sweep pins it, so a later default never mixes two implementations
  // inside one comparison. Records written before the key existed ran explicit: record_defaults() in
  // config.cpp fills that in for them, not this default.
  AttentionImpl impl = AttentionImpl::kFused;
  // Qiu et al. 2025's G1 output gate, y <- y ⊙ σ(x̃ W_g + b) from the block's normalised input x̃, after the
  // XSA projection and before W_o: one gate per head (headwise) or per channel (elementwise), or none.
  OutputGate output_gate = OutputGate::kNone;
};

// `variant` as a run of this attention config applies it: its layers ("xsa@2-3" its own, else
// attention.layers) and its initial λ (learned: attention.learned_init). The one place both are resolved.
ResolvedVariant resolve_variant(const AttentionConfig& attention, const VariantSpec& variant);

struct TrainConfig {
  OptimizerKind optimizer = OptimizerKind::kAdamW;  // train/step.h make_optimizer builds it
  int steps = 300;
  int batch_size = 32;
  double lr = 1.0e-3;
  double min_lr = 1.0e-4;
  int warmup_steps = 30;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double grad_clip = 1.0;         // 0 disables clipping
  int log_interval = 10;          // log.jsonl / progress every N steps
  int checkpoint_interval = 100;  // 0 writes no checkpoints (then --resume starts over)
};

struct EvalConfig {
  int interval = 50;
  int batches = 20;
};

struct MetricsConfig {
  int bias_interval = 50;
  int bias_batches = 4;
};

struct SampleConfig {
  int count = 2;    // samples per variant after training
  int tokens = 48;  // new tokens per sample
  double temperature = 1.0;
  int top_k = 40;
  std::uint64_t seed = 42;
};

struct RuntimeConfig {
  int threads = 1;  // LibTorch intra-op threads AND OpenBLAS threads per run
  int workers = 2;  // variants trained concurrently
  // fp32 | bf16 | auto: matmul precision (bf16 = mixed precision, fp32 master weights; auto = bf16
  // only on CPUs with native bf16). See src/xsa/model/precision.h.
  PrecisionRequest precision = PrecisionRequest::kFp32;
  // Data-parallel ranks (docs/guide.md "Scale-out"): how long a rank waits for the others (rendezvous, a
  // collective, a barrier) before it gives up with one line naming the cause.
  int dist_timeout_s = 120;
  // Data-parallel ranks: the cap of a gradient bucket in MiB, each bucket summed over the ranks as soon as
  // backward has finished its gradients (DDP's bucket_cap_mb, default 25); 0 = one all-reduce after backward.
  double dist_bucket_mb = 25.0;
  // cpu | cuda: where the model and its batches live (src/xsa/model/device.h). cuda only where the LibTorch
  // build has it and a device is present, refused with one line otherwise (docs/ARCHITECTURE.md "Devices").
  DeviceKind device = DeviceKind::kCpu;
};

// What xsa-train writes besides results.json and log.jsonl (docs/guide.md "TensorBoard").
struct LogConfig {
  bool tensorboard = true;  // <run>/tensorboard/<variant>/events.out.tfevents.* as training goes
};

struct Config {
  std::string name = "default";
  std::uint64_t seed = 1337;  // model init seed; the batch-order seed is derived from it
  DataConfig data;
  ModelConfig model;
  AttentionConfig attention;
  TrainConfig train;
  EvalConfig eval;
  MetricsConfig metrics;
  SampleConfig sample;
  RuntimeConfig runtime;
  LogConfig log;
  std::string source;  // file the config came from (for messages); not a key
};

// Parses and validates. `overrides` are "dotted.key=value" strings (value parsed as YAML, e.g.
// "attention.variants=[0,0.5,1]"); they are applied before validation. A sweep-only key
// "attention.lambda: L" is accepted as shorthand for variants [sa, L].
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides = {});

// The resolved config as JSON (stored in results.json) and as YAML (written to runs/<name>/config.yaml).
nlohmann::json config_to_json(const Config& c);
std::string config_to_yaml(const Config& c);

// config_to_json without its runtime section (threads, workers, precision request, ...) and log section (what
// is logged changes no number): the experiment a config describes, as checkpoints, exports and config_sha256
// identify it. Where bit-identical continuation matters, the threads and precision used are recorded beside
// it.
nlohmann::json config_identity_json(const Config& c);

// A config JSON recorded by an earlier version (a checkpoint's identity) with every key it lacks filled in
// with that key's default. A key is only ever added with a default that reproduces the behaviour from
// before it existed, so a record without it means the default. Recorded values are kept as they are.
nlohmann::json config_json_with_defaults(const nlohmann::json& recorded);

// A config recorded by xsa-train (results.json's "config") read back as a typed Config: every key through its
// reader and range check, keys the record lacks at their defaults (a key is only ever added with a default
// that reproduces the behaviour from before it existed), an unknown key an InputError naming `where`, so a
// renamed key fails loudly instead of being read as something else. No cross-checks: a record says what ran.
Config config_from_record(const nlohmann::json& recorded, const std::string& where);

// True if `dotted` names a config key (used by xsa-sweep to validate grid keys). Includes the
// sweep shorthand "attention.lambda".
bool is_config_key(const std::string& dotted);
// All dotted keys in file order (with "attention.lambda").
std::vector<std::string> config_keys();

// Equality of every key (ignores `source`): parse_config(config_to_yaml(c)) == c.
bool operator==(const Config& a, const Config& b);
inline bool operator!=(const Config& a, const Config& b) {
  return !(a == b);
}

// Plain YAML scalars as numbers (config values, sweep grid values): decimal notation only (no hex floats,
// inf or nan), the whole text consumed, a leading '+' allowed for integers; nullopt otherwise.
std::optional<long long> parse_plain_integer(const std::string& text);
std::optional<double> parse_plain_number(const std::string& text);

// Shortest decimal text that parses back to exactly `v`: 0.5 -> "0.5", 1.0 -> "1", 3e-4 -> "0.0003".
std::string shortest_number(double v);

}  // namespace xsa
