#pragma once
// The per-layer bias metrics and attention dynamics (docs/ARCHITECTURE.md "results.json"), described once:
// the model's probe fills them, the trainer averages them, results.json stores them and xsa-inspect tabulates
// them, all by iterating kBiasMetrics / kDynamicsMetrics. Adding a metric is one member and one row here
// (plus where the model computes it). Torch-free.
#include <cstddef>
#include <optional>
#include <vector>

namespace xsa {

// The learning dynamics of one layer's attention, measured with the bias metrics on the same windows
// (docs/guide.md "Bias metrics"): the largest logit, which QK-norm bounds, and where the attention mass goes.
// Records written before they existed lack them.
struct AttentionDynamics {
  double max_logit = 0;     // the largest q·k/√d over the windows, heads and allowed pairs j <= i
  double attn_entropy = 0;  // mean over rows i >= 1 of -Σ_j a_ij ln a_ij (nats)
  // mean over rows i >= 1 of a_i0: the mass on the first position (with data.doc_mask: on the first token
  // of the row's document, over rows that are not a document's first token)
  double attn_sink = 0;
};

// Bias metrics of one layer, each averaged over batch, heads and positions 1..T-1 (position 0 attends only
// to itself: y_0 = v_0, a_00 = 1; with data.doc_mask every document's first token is left out likewise);
// value_cos over all pairs i != j within a head.
struct LayerBias {
  int layer = 0;
  double cos_y_v = 0;                         // cos(y_i, v_i), before the XSA projection
  double cos_z_v = 0;                         // cos(z_i, v_i), after it (= cos_y_v for SA)
  double attn_diag = 0;                       // mean a_ii
  double value_cos = 0;                       // mean cos(v_i, v_j), i != j, within a head
  std::vector<double> lambda_per_head;        // effective λ per head (learned / gate variants only)
  std::optional<AttentionDynamics> dynamics;  // absent in records written before it was measured
};

// How a metric combines the batches of one measurement. A per-token metric (a mean over rows, i.e. (window,
// position) pairs) is weighted by the rows each batch averaged: its windows × (T - 1), or with data.doc_mask
// only the tokens that are not a document's first, whose number differs from window to window, so that the
// measurement is the mean over every counted row whatever the batch size. A per-window metric (value_cos: a
// mean over the pairs of a window) is weighted by windows; the max logit takes the maximum.
enum class OverBatches { kRowMean, kWindowMean, kMax };

struct BiasMetric {
  const char* key;    // JSON key in results.json and column stem in xsa-inspect
  const char* label;  // column heading
  double LayerBias::*member;
  OverBatches over_batches;
};

inline constexpr BiasMetric kBiasMetrics[] = {
    {"cos_y_v", "cos(y,v)", &LayerBias::cos_y_v, OverBatches::kRowMean},
    {"cos_z_v", "cos(z,v)", &LayerBias::cos_z_v, OverBatches::kRowMean},
    {"attn_diag", "attn_diag", &LayerBias::attn_diag, OverBatches::kRowMean},
    {"value_cos", "value_cos", &LayerBias::value_cos, OverBatches::kWindowMean},
};
inline constexpr std::size_t kBiasMetricCount = sizeof(kBiasMetrics) / sizeof(kBiasMetrics[0]);
// Which extreme over training xsa-inspect's dynamics_summary reports: the direction in which the metric shows
// an unstable attention (a large logit, a low entropy: collapse onto single positions, a large sink).
enum class Extreme { kLargest, kLowest };
struct DynamicsMetric {
  const char* key;    // JSON key beside the bias metrics in results.json, TensorBoard tag stem
  const char* label;  // column heading
  double AttentionDynamics::*member;
  OverBatches over_batches;
  Extreme extreme;
};
inline constexpr DynamicsMetric kDynamicsMetrics[] = {
    {"max_logit", "max logit", &AttentionDynamics::max_logit, OverBatches::kMax, Extreme::kLargest},
    {"attn_entropy", "entropy", &AttentionDynamics::attn_entropy, OverBatches::kRowMean, Extreme::kLowest},
    {"attn_sink", "a_i0", &AttentionDynamics::attn_sink, OverBatches::kRowMean, Extreme::kLargest},
};

}  // namespace xsa
