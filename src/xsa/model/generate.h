#pragma once
// Sampling text from a trained model (no grad): temperature and top-k over the last position's logits.
#include <ATen/core/Generator.h>

#include <cstdint>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/model/gpt.h"

namespace xsa {

// Extends `prompt` by up to sample.tokens ids drawn from `gen`, conditioning on at most the model's
// max_len() most recent ids; stops early (without appending it) at any id in `stop_ids`. Returns the
// prompt followed by the new ids.
std::vector<std::int64_t> generate(Gpt& model, std::vector<std::int64_t> prompt, const SampleConfig& sample,
                                   const std::vector<std::int64_t>& stop_ids, at::Generator& gen);

}  // namespace xsa
