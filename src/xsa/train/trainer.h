#pragma once
// Paired training (docs/ARCHITECTURE.md "Training"): every attention variant of a config starts from the
// same initial weights and sees the same batches in the same order, so differences come from attention.
// This is orchestration only: the step is train/step.h, evaluation train/evaluation.h, checkpoints
// train/checkpoint.h, sampling model/generate.h, the results schema records/results.h.
#include <string>

#include "xsa/config/config.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/records/results.h"
#include "xsa/train/ranks.h"

namespace xsa {

struct ExperimentOptions {
  std::string out_dir;      // holds log.jsonl and checkpoints/; results.json is written by the caller
  bool resume = false;      // continue from out_dir/checkpoints where present
  bool quiet = false;       // no progress output
  std::string config_yaml;  // written to out_dir/config.yaml once every input has been validated
  RankInfo ranks;           // data-parallel: this process's rank of world_size (1: a single process)
};

// Checks that the data can serve this config (windows fit in both splits). InputError otherwise.
void check_data_fits(const Config& cfg, const TokenDataset& data);

// Trains every variant of cfg.attention.variants (runtime.workers at a time, runtime.threads each)
// and returns the results (schema xsa.results/1; to_json writes them). Throws RuntimeFailure
// naming the run and step if a loss becomes NaN/inf.
ExperimentResult run_paired_experiment(const Config& cfg, const TokenDataset& data,
                                       const PiecesDecoder& decoder, const ExperimentOptions& options);

}  // namespace xsa
