#pragma once
// The README.md xsa-export writes beside an exported model: a model card in the Hugging Face Hub's convention
// (YAML front matter with library_name, tags, datasets, pipeline_tag; then what the model is, how it was
// trained, its final validation loss and the paired difference from its run's baseline, how to load it).
// Every number comes from the run's results.json. Torch-free.
#include <string>

#include "xsa/records/exported_model.h"
#include "xsa/records/results.h"

namespace xsa {

// `run` is the exported variant's entry of `experiment`.
std::string model_card(const ExperimentResult& experiment, const RunResult& run, const ExportedModel& model);

}  // namespace xsa
