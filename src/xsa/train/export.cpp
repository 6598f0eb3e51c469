#include "xsa/train/export.h"

#include <algorithm>
#include <filesystem>

#include "xsa/model/export_tensors.h"
#include "xsa/records/model_card.h"
#include "xsa/train/checkpoint.h"
#include "xsa/train/trained_variant.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/json_input.h"
#include "xsa/util/sha256.h"
#include "xsa/util/staging_folder.h"

namespace xsa {

using json = nlohmann::json;

namespace {

std::string variant_names(const ExperimentResult& experiment) {
  std::string out;
  for (const auto& r : experiment.runs) out += (out.empty() ? "" : ", ") + r.variant;
  return out;
}

// The checkpoint's config is the run's (a checkpoint and results.json of different runs in one folder is a
// folder someone assembled by hand).
void check_checkpoint_matches(const json& state, const ExperimentResult& experiment, const RunResult& run,
                              const std::string& path) {
  // Which variant the file holds: a copy of sa.pt saved as xsa.pt shares the config and initial weights.
  const json identity = state.value("identity", json::object());
  if (identity.value("variant", json()) != json(run.variant))
    throw InputError(path + ": checkpoint holds variant " +
                     identity.value("variant", json("(none recorded)")).dump() + ", not \"" + run.variant +
                     "\" (copied from another variant, or written by an older xsa)");
  const json want = config_identity_json(experiment.config);
  json had = state.contains("identity") ? state.at("identity").value("config", json()) : json();
  if (had.is_object()) had = config_json_with_defaults(had);
  if (had != want) throw InputError(path + ": checkpoint is of another config than " + experiment.source);
  if (state.value("init_checksum", std::string()) != run.init_checksum)
    throw InputError(path + ": checkpoint's initial weights (" +
                     state.value("init_checksum", std::string("none")) + ") are not the run's (" +
                     run.init_checksum + " in " + experiment.source + ")");
}

std::string tokenizer_dir(const ExportRequest& request, const ExperimentResult& experiment) {
  if (!request.data_dir.empty()) return request.data_dir;
  if (!experiment.data || experiment.data->dir.empty())
    throw InputError(experiment.source + ": records no data.dir; pass --data DIR");
  return experiment.data->dir;
}

}  // namespace

TrainedVariant load_trained_variant(const std::string& run_dir, const std::string& variant) {
  if (!is_directory(run_dir)) throw InputError(run_dir + ": no such run folder");
  const std::string results_path = run_dir + "/results.json";
  if (!path_exists(results_path))
    throw InputError(run_dir +
                     ": no results.json, the run has not finished (xsa-train writes it at the end)");
  TrainedVariant out;
  out.experiment = read_results(results_path);
  const RunResult* run = out.experiment.find_run(variant);
  if (run == nullptr)
    throw InputError(results_path + ": no variant '" + variant +
                     "' (the run has: " + variant_names(out.experiment) + ")");
  out.run = *run;
  const Config& cfg = out.experiment.config;
  auto spec = std::find_if(cfg.attention.variants.begin(), cfg.attention.variants.end(),
                           [&](const VariantSpec& v) { return v.name() == variant; });
  if (spec == cfg.attention.variants.end())
    throw InputError(results_path + ": variant '" + variant +
                     "' is not in the recorded config's attention.variants");
  out.spec = *spec;
  // The export format (config.json, the PyTorch reference's loader) has no document masking: such a model
  // would come back unmasked, with other logits. Refused until the format carries it.
  if (cfg.data.doc_mask)
    throw InputError(results_path + ": the run trained with data.doc_mask: true, which the export format " +
                     "cannot express yet (the exported model would attend across documents)");
  if (!out.experiment.data || out.experiment.data->vocab_size <= 0)
    throw InputError(results_path + ": records no data.vocab_size");
  const std::string checkpoint = run_dir + "/checkpoints/" + variant + ".pt";
  if (!path_exists(checkpoint))
    throw InputError(checkpoint + ": no final checkpoint of variant '" + variant +
                     "' (a run with train.checkpoint_interval 0 keeps none; rerun it with checkpoints)");
  out.model = Gpt(cfg.model, cfg.attention, out.spec, static_cast<int>(out.experiment.data->vocab_size),
                  cfg.data.seq_len);
  const json state = load_checkpoint_weights(checkpoint, out.model);
  if (!state.contains("result") || state.value("step", -1) != cfg.train.steps)
    throw InputError(checkpoint + ": an unfinished run's checkpoint (step " +
                     std::to_string(state.value("step", -1)) + " of " + std::to_string(cfg.train.steps) +
                     "); finish it with xsa-train --resume first");
  check_checkpoint_matches(state, out.experiment, out.run, checkpoint);
  return out;
}

namespace {

// The export's config.json record: architecture, variant with its effective λ per layer and head, tokenizer
// and provenance.
ExportedModel exported_record(const ExportRequest& request, const TrainedVariant& trained,
                              const DatasetMeta& meta) {
  const ExperimentResult& experiment = trained.experiment;
  const Config& cfg = experiment.config;
  ExportedModel m;
  m.architecture = model_architecture(cfg.model, cfg.attention.output_gate, experiment.data->vocab_size);
  m.max_len = cfg.data.seq_len;
  m.variant = request.variant;
  m.layers = exported_layers(cfg, trained.spec);
  const auto lambdas =
      trained.model->effective_lambdas().to(torch::kCPU, torch::kFloat64).contiguous();  // (L, H)
  for (int64_t l = 0; l < lambdas.size(0); ++l) {
    const double* row = lambdas[l].data_ptr<double>();
    m.lambda.emplace_back(row, row + lambdas.size(1));
  }
  m.tokenizer_sha256 = experiment.data->tokenizer_sha256;
  m.bos_id = meta.bos_id;
  m.eos_id = meta.eos_id;
  m.provenance = {request.run_dir,
                  cfg.name,
                  cfg.seed,
                  cfg.train.steps,
                  trained.run.init_checksum,
                  trained.model->weights_checksum(),
                  config_sha256(cfg),
                  experiment.version ? experiment.version->xsa : std::string()};
  return m;
}

// The safetensors header's metadata: what the file is, without config.json beside it.
std::map<std::string, std::string> safetensors_metadata(const ExportedModel& m,
                                                        const nlohmann::json& config_json) {
  return {{"format", "pt"},  // what safetensors.torch.save_file writes: PyTorch tensors
          {"xsa.format", kExportFormat},
          {"xsa.variant", m.variant},
          {"xsa.lambda", config_json.at("variant").at("lambda").dump()},
          {"xsa.init_checksum", m.provenance.init_checksum},
          {"xsa.weights_checksum", m.provenance.weights_checksum},
          {"xsa.config_sha256", m.provenance.config_sha256}};
}

}  // namespace

ExportedModel export_variant(const ExportRequest& request) {
  // Before anything is read: an export written over (or around) the run it reads would replace the run.
  require_output_apart({request.out_dir, "--out"}, {{request.run_dir, "the run folder"}});
  require_replaceable_folder(request.out_dir, request.force);
  TrainedVariant trained = load_trained_variant(request.run_dir, request.variant);
  const ExperimentResult& experiment = trained.experiment;

  // The tokenizer the run trained with, verified against results.json before it is copied.
  const std::string data = tokenizer_dir(request, experiment);
  require_output_apart({request.out_dir, "--out"}, {{data, "the data folder"}});
  const std::string tokenizer = data + "/tokenizer.model";
  if (!path_exists(tokenizer))
    throw InputError(tokenizer + ": not found (pass --data DIR with the run's data)");
  const std::string tokenizer_bytes = read_file(tokenizer);
  if (sha256_hex(tokenizer_bytes) != experiment.data->tokenizer_sha256)
    throw InputError(tokenizer + ": sha256 differs from the run's tokenizer (" +
                     experiment.data->tokenizer_sha256.substr(0, 12) + "… in " + experiment.source + ")");
  const std::string pieces_bytes = read_file(data + "/pieces.json");
  const ExportedModel m = exported_record(request, trained, read_meta(data));
  const json config_json = to_json(m);

  // Everything into a temporary folder beside --out, then one rename (a killed export's folder is removed by
  // the next one: xsa/util/staging_folder.h).
  StagingFolder staging(request.out_dir, request.force);
  write_file_atomic(staging.file("model.safetensors"),
                    model_safetensors(trained.model, safetensors_metadata(m, config_json)));
  write_file_atomic(staging.file("config.json"), config_json.dump(2) + "\n");
  write_file_atomic(staging.file("tokenizer.model"), tokenizer_bytes);
  write_file_atomic(staging.file("pieces.json"), pieces_bytes);
  write_file_atomic(staging.file("README.md"), model_card(experiment, trained.run, m));
  staging.commit();
  return m;
}

void init_from_export(Gpt& model, const Config& cfg, const DatasetMeta& meta, const VariantSpec& spec) {
  const std::string dir = cfg.model.init_from;
  const std::string config_path = dir + "/config.json";
  const std::string weights_path = dir + "/model.safetensors";
  if (!is_directory(dir)) throw InputError("model.init_from: " + dir + ": no such folder");
  for (const auto& path : {config_path, weights_path})
    if (!path_exists(path))
      throw InputError("model.init_from: " + path + ": not found (an xsa-export folder?)");
  const json doc = parse_json_input(read_file(config_path), config_path);
  if (doc.is_discarded()) throw InputError(config_path + ": not valid JSON");
  const ExportedModel exported = parse_exported_model(doc, config_path);
  check_same_architecture(exported.architecture,
                          model_architecture(cfg.model, cfg.attention.output_gate, meta.vocab_size),
                          config_path);
  if (exported.tokenizer_sha256 != meta.tokenizer_sha256)
    throw InputError(config_path + ": the export's tokenizer (sha256 " +
                     exported.tokenizer_sha256.substr(0, 12) + "…) is not data.dir's (" +
                     meta.tokenizer_sha256.substr(0, 12) + "…)");
  load_model_safetensors(model, read_file(weights_path), weights_path, exported.variant == spec.name());
}

}  // namespace xsa
