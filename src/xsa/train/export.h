#pragma once
// A trained model leaves the tool and comes back (docs/guide.md "Export"): xsa-export writes one variant of a
// finished run as model.safetensors + config.json + the tokenizer + a model card; model.init_from starts a
// run from such a folder. Torch-free on purpose (xsa-export includes only this): the model side of an
// export is in trained_variant.h.
#include <string>

#include "xsa/records/exported_model.h"

namespace xsa {

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

}  // namespace xsa
