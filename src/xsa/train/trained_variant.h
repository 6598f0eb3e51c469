#pragma once
// The model side of an export (docs/guide.md "Export"): a finished run's variant with its final weights, and
// model.init_from loading an export into a fresh model. export.h is the torch-free front (what xsa-export
// includes); both are implemented in export.cpp.
#include <string>

#include "xsa/config/config.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"
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

// model.init_from: loads the export in `dir` into `model`, a fresh model of `cfg`'s variant `spec` on data
// with `meta`. Refuses (InputError, one line) an export of another architecture or tokenizer, or whose
// model.safetensors is damaged or lies in its header. The learned λ / gate parameters are taken when the
// export is of the same variant, else they keep their initial values.
void init_from_export(Gpt& model, const Config& cfg, const DatasetMeta& meta, const VariantSpec& spec);

}  // namespace xsa
