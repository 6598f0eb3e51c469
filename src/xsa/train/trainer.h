#pragma once
// Paired training (DESIGN.md boxes 2-3): every attention variant of a config starts from the same
// initial weights and sees the same batches in the same order, so differences come from attention.
#include <torch/optim/adamw.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "xsa/config/config.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"

namespace xsa {

struct ExperimentOptions {
  std::string out_dir;      // holds log.jsonl and checkpoints/; results.json is written by the caller
  bool resume = false;      // continue from out_dir/checkpoints where present
  bool quiet = false;       // no progress output
  std::string config_yaml;  // written to out_dir/config.yaml once every input has been validated
};

// AdamW as the trainer uses it: decay on >= 2-D weights only, betas/eps/lr from the config.
std::unique_ptr<torch::optim::AdamW> make_adamw(Gpt& model, const TrainConfig& train);

// Checks that the data can serve this config (windows fit in both splits). InputError otherwise.
void check_data_fits(const Config& cfg, const TokenDataset& data);

// Trains every variant of cfg.attention.variants (runtime.workers at a time, runtime.threads each)
// and returns the results.json object (schema xsa.results/1). Throws RuntimeFailure naming the run
// and step if a loss becomes NaN/inf.
nlohmann::json run_paired_experiment(const Config& cfg, const TokenDataset& data,
                                     const PiecesDecoder& decoder, const ExperimentOptions& options);

}  // namespace xsa
