#pragma once
// An exported model's config.json (format "xsa.export/1", docs/guide.md "Export"): everything needed to
// rebuild the model (the architecture, the attention variant per layer, the tokenizer it reads) and where its
// weights came from. xsa-export writes it beside model.safetensors; model.init_from and
// scripts/reference/model.py's load_exported read it. Torch-free.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xsa/config/config.h"

namespace xsa {

inline constexpr const char* kExportFormat = "xsa.export/1";

// What decides the model's parameters and forward pass, as config.json's "architecture" records it: the model
// section's keys (model.init_from aside), attention.output_gate, the vocabulary size and the constants the
// forward pass uses (RoPE base, the norms' ε). Two models load each other's weights when these are equal.
nlohmann::json model_architecture(const ModelConfig& model, OutputGate output_gate, std::int64_t vocab_size);

// How one layer's attention is modified (config.json's "variant.layers"): its kind (kVariantKinds' spelling),
// λ for fixed layers (0 = SA) and the initial λ of a kind that starts at attention.learned_init.
struct ExportedLayer {
  int layer = 0;
  VariantSpec::Kind kind = VariantSpec::Kind::kFixed;
  double lambda = 0.0;
};

// Where the weights came from (config.json's "provenance", and model.safetensors' __metadata__).
struct ExportProvenance {
  std::string run;   // the run's folder as given to xsa-export
  std::string name;  // the config's name
  std::uint64_t seed = 0;
  std::int64_t steps = 0;        // training steps taken
  std::string init_checksum;     // results.json's: the initial weights (equal across the pair)
  std::string weights_checksum;  // of the exported weights (GptImpl::weights_checksum)
  std::string config_sha256;     // config_sha256 of the run's config
  std::string xsa_version;
};

struct ExportedModel {
  nlohmann::json architecture;  // model_architecture
  std::int64_t max_len = 0;     // data.seq_len trained at (learned positions have this many rows)
  std::string variant;          // VariantSpec::name
  std::vector<ExportedLayer> layers;
  std::vector<std::vector<double>> lambda;  // effective λ per layer and head after training
  std::string tokenizer_sha256;
  std::int64_t bos_id = -1, eos_id = -1;
  ExportProvenance provenance;
};

// The per-layer plan of `variant` in `config` (resolve_variant's layers; unmodified layers are fixed λ 0).
std::vector<ExportedLayer> exported_layers(const Config& config, const VariantSpec& variant);

nlohmann::json to_json(const ExportedModel& model);
// Reads config.json; InputError naming `source` and the key for a wrong format, a missing or mistyped key.
ExportedModel parse_exported_model(const nlohmann::json& doc, const std::string& source);

// The sha256 of config_identity_json (the config without runtime and log), hex: equal
// configs, equal hash, whatever the threads or logging.
std::string config_sha256(const Config& config);

// InputError "<source>: exported model's architecture differs from the config: model.d_model 64 (config
// 128), ..." when `exported` and `expected` (both model_architecture) differ.
void check_same_architecture(const nlohmann::json& exported, const nlohmann::json& expected,
                             const std::string& source);

}  // namespace xsa
