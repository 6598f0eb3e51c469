#include "xsa/model/generate.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <limits>

namespace xsa {

std::vector<std::int64_t> generate(Gpt& model, std::vector<std::int64_t> ids, const SampleConfig& sample,
                                   const std::vector<std::int64_t>& stop_ids, at::Generator& gen) {
  torch::NoGradGuard no_grad;
  for (int n = 0; n < sample.tokens; ++n) {
    std::int64_t from = std::max<std::int64_t>(0, static_cast<std::int64_t>(ids.size()) - model->max_len());
    auto ctx = torch::tensor(std::vector<std::int64_t>(ids.begin() + from, ids.end()), torch::kLong)
                   .view({1, -1})
                   .to(model->device());
    auto logits = model->forward(ctx).select(1, ctx.size(1) - 1).squeeze(0).cpu() /
                  sample.temperature;  // (V); sampled on the CPU with the CPU generator
    if (sample.top_k > 0 && sample.top_k < logits.size(0)) {
      auto kth = std::get<0>(logits.topk(sample.top_k)).select(0, sample.top_k - 1);
      logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
    }
    std::int64_t next = torch::multinomial(torch::softmax(logits, -1), 1, false, gen).item<std::int64_t>();
    if (std::find(stop_ids.begin(), stop_ids.end(), next) != stop_ids.end()) break;
    ids.push_back(next);
  }
  return ids;
}

}  // namespace xsa
