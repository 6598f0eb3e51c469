#pragma once
// A trained model leaves the tool and comes back (docs/guide.md "Export"): xsa-export writes one variant of a
// finished run as model.safetensors + config.json + the tokenizer + a model card; model.init_from starts a
// run from such a folder.
#include <string>

#include "xsa/config/config.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"
#include "xsa/records/exported_model.h"
#include "xsa/records/results.h"

namespace xsa {

// One variant of a finished run with its final weights (the variant's last checkpoint), checked against its
// results.json: the run exists, it finished (the checkpoint holds the final step and result), the checkpoint
// is of this run (same config, same initial weights). InputError naming the file otherwise.
struct TrainedVariant {
  ExperimentResult experiment;
  RunResult run;
  VariantSpec spec;
  Gpt model{nullptr};
};
TrainedVariant load_trained_variant(const std::string& run_dir, const std::string& variant);

struct ExportRequest {
  std::string run_dir;
  std::string variant;
  std::string out_dir;
  std::string data_dir;  // where the run's tokenizer is; empty = results.json's data.dir
  bool force = false;    // replace an existing out_dir
};

// Writes the export folder (model.safetensors, config.json, tokenizer.model, pieces.json, README.md) into a
// temporary folder beside out_dir and renames it into place, so out_dir is either absent, the old export or
// the complete new one. Returns what config.json holds.
ExportedModel export_variant(const ExportRequest& request);

// model.init_from: loads the export in `dir` into `model`, a fresh model of `cfg`'s variant `spec` on data
// with `meta`. Refuses (InputError, one line) an export of another architecture or tokenizer, or whose
// model.safetensors is damaged or lies in its header. The learned λ / gate parameters are taken when the
// export is of the same variant, else they keep their initial values.
void init_from_export(Gpt& model, const Config& cfg, const DatasetMeta& meta, const VariantSpec& spec);

}  // namespace xsa
