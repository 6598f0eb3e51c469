#include "xsa/train/evaluation.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>

namespace xsa {

torch::Tensor make_batch(const TokenFile& file, const std::uint64_t* starts, std::int64_t count,
                         int seq_len) {
  auto batch = torch::empty({count, seq_len + 1}, torch::kLong);
  auto* out = batch.data_ptr<int64_t>();
  for (std::int64_t b = 0; b < count; ++b) {
    const std::uint16_t* src = file.data() + starts[b];
    for (int t = 0; t <= seq_len; ++t) out[b * (seq_len + 1) + t] = src[t];
  }
  return batch;
}

std::vector<double> window_losses(Gpt& model, const TokenFile& file, const std::vector<std::uint64_t>& starts,
                                  int seq_len, int batch_size,
                                  const std::function<void(std::size_t, std::size_t)>& on_batch,
                                  std::vector<double>* position_sums) {
  torch::NoGradGuard no_grad;
  std::vector<double> losses;
  losses.reserve(starts.size());
  if (position_sums) position_sums->assign(seq_len, 0.0);
  for (size_t i = 0; i < starts.size(); i += batch_size) {
    std::int64_t n = std::min<std::int64_t>(batch_size, starts.size() - i);
    auto batch = make_batch(file, starts.data() + i, n, seq_len).to(model->device());  // (n, T+1)
    auto x = batch.narrow(1, 0, seq_len), y = batch.narrow(1, 1, seq_len);
    auto token = model->token_losses(x, y);                                        // (n, T)
    auto per_window = token.mean(1).to(torch::kCPU, torch::kDouble).contiguous();  // (n)
    const double* p = per_window.data_ptr<double>();
    losses.insert(losses.end(), p, p + n);
    if (position_sums) {
      // Summed in float64, not in the losses' float32: a position's sum runs over every validation window
      // (thousands), where float32 would lose digits the buckets' comparison needs.
      auto column_sums = token.to(torch::kCPU, torch::kDouble).sum(0).contiguous();  // (T)
      const double* c = column_sums.data_ptr<double>();
      for (int t = 0; t < seq_len; ++t) (*position_sums)[t] += c[t];
    }
    if (on_batch) on_batch(losses.size(), starts.size());
  }
  return losses;
}

std::vector<LayerBias> measure_bias(Gpt& model, const TokenFile& file,
                                    const std::vector<std::uint64_t>& starts, int seq_len, int batch_size,
                                    bool with_lambda_per_head) {
  torch::NoGradGuard no_grad;
  const int L = model->config().n_layer;
  std::vector<LayerBias> sum(L);
  double windows = 0, row_windows = 0;  // the weights' totals (OverBatches::kWindowMean, kRowMean)
  for (size_t i = 0; i < starts.size(); i += batch_size) {
    std::int64_t n = std::min<std::int64_t>(batch_size, starts.size() - i);
    auto batch = make_batch(file, starts.data() + i, n, seq_len).to(model->device());  // (n, T+1)
    BiasProbe probe;
    model->forward(batch.narrow(1, 0, seq_len), &probe);
    // Each metric's weight in the mean over batches (bias_metrics.h OverBatches; the max logit: the maximum).
    auto weight = [&](OverBatches over) { return over == OverBatches::kRowMean ? probe.row_windows : n; };
    for (int l = 0; l < L; ++l) {
      for (const auto& metric : kBiasMetrics)
        sum[l].*metric.member += weight(metric.over_batches) * probe.layers[l].*metric.member;
      sum[l].lambda_per_head = probe.layers[l].lambda_per_head;
      const AttentionDynamics& batch_dynamics = probe.layers[l].dynamics.value();
      if (!sum[l].dynamics) {
        sum[l].dynamics = AttentionDynamics{};
        for (const auto& metric : kDynamicsMetrics)
          if (metric.over_batches == OverBatches::kMax)
            sum[l].dynamics.value().*metric.member = batch_dynamics.*metric.member;
      }
      for (const auto& metric : kDynamicsMetrics) {
        double& total = sum[l].dynamics.value().*metric.member;
        const double value = batch_dynamics.*metric.member;
        total = metric.over_batches == OverBatches::kMax ? std::max(total, value)
                                                         : total + weight(metric.over_batches) * value;
      }
    }
    windows += n;
    row_windows += probe.row_windows;
  }
  // A mean with no weight (every counted row absent: windows of one-token documents) stays 0.
  auto total = [&](OverBatches over) { return over == OverBatches::kRowMean ? row_windows : windows; };
  auto divide = [&](double& value, OverBatches over) {
    if (total(over) > 0) value /= total(over);
  };
  for (int l = 0; l < L; ++l) {
    sum[l].layer = l;
    for (const auto& metric : kBiasMetrics) divide(sum[l].*metric.member, metric.over_batches);
    if (sum[l].dynamics)
      for (const auto& metric : kDynamicsMetrics)
        if (metric.over_batches != OverBatches::kMax)
          divide(sum[l].dynamics.value().*metric.member, metric.over_batches);
    if (!with_lambda_per_head) sum[l].lambda_per_head.clear();
  }
  return sum;
}

}  // namespace xsa
