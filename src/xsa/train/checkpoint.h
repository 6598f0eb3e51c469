#pragma once
// Checkpoints of one run: model weights, optimizer state and the run's progress (a JSON object the
// trainer owns), written through the same durable, atomic path as results (temp file, fsync, rename,
// fsync the folder), so a crash leaves the previous checkpoint or the new one, never a torn file.
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>
#include <string>

#include "xsa/config/config.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"

namespace xsa {

// What must match for a checkpoint to be resumable: the config minus runtime settings, the data, and the
// thread count (reductions may split differently; workers do not matter). Each run adds the variant it holds
// and its initial weights' checksum (VariantRun::checkpoint_identity), which resume and xsa-export compare.
nlohmann::json checkpoint_identity(const Config& cfg, const TokenDataset& data, const std::string& precision);

// Writes model, optimizer and `progress` (stored with `identity`) to `path`.
void save_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& identity, const nlohmann::json& progress);

// Loads `path` into model and optimizer and returns the stored progress. A checkpoint of another config or
// data (identity differs: the message names the differing keys), or a damaged one, is an InputError that
// suggests --force.
nlohmann::json load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer& optimizer,
                               const nlohmann::json& identity);

// The model weights of a checkpoint alone (for xsa-export: no optimizer, no identity check) and its stored
// state: the progress (step, and "result" once the run finished) and "identity". A damaged file is an
// InputError naming `path`.
nlohmann::json load_checkpoint_weights(const std::string& path, Gpt& model);

}  // namespace xsa
