#pragma once
// Evaluation under no-grad, never touching a training trajectory: batches of token windows, per-window
// validation losses and the per-layer bias metrics (docs/ARCHITECTURE.md "Bias metrics").
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"
#include "xsa/records/bias_metrics.h"

namespace xsa {

// (count, T+1) int64 batch of the windows of `file` starting at `starts`.
torch::Tensor make_batch(const TokenFile& file, const std::uint64_t* starts, std::int64_t count, int seq_len);

// Mean next-token loss of each window, in `starts` order, `batch_size` windows at a time.
// on_batch (optional) is called after each batch with (windows done, windows in all), for progress lines.
// position_sums (optional) is set to seq_len sums: [t-1] is position t's loss (the prediction of the
// window's token t from the t before it, xsa::PositionBucket) summed over the windows in float64, from the
// same per-token losses; the per-window means, and so every val_loss, are computed as without it.
std::vector<double> window_losses(Gpt& model, const TokenFile& file, const std::vector<std::uint64_t>& starts,
                                  int seq_len, int batch_size,
                                  const std::function<void(std::size_t, std::size_t)>& on_batch = {},
                                  std::vector<double>* position_sums = nullptr);

// Bias metrics of every layer over the windows at `starts`: the per-token ones the mean over every counted
// row (with data.doc_mask, the tokens that are not a document's first), value_cos the mean over windows,
// whatever `batch_size` (xsa/records/bias_metrics.h OverBatches). lambda_per_head is filled when
// `with_lambda_per_head` (learned / gate variants).
std::vector<LayerBias> measure_bias(Gpt& model, const TokenFile& file,
                                    const std::vector<std::uint64_t>& starts, int seq_len, int batch_size,
                                    bool with_lambda_per_head);

}  // namespace xsa
