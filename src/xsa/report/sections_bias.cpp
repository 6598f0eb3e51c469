// Sections on the bias metrics (xsa/records/bias_metrics.h): per layer at initialisation and at the end,
// their trend with depth, their paired change between neighbouring budgets, and the learned λ / gates per
// head.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "xsa/report/section_builders.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

// The bias measurement a table reports: the first one (at initialisation, step 0) or the last one.
enum class BiasMoment { kInit, kFinal };

const BiasPoint* bias_at(const RunResult& run, BiasMoment moment) {
  const BiasPoint* pick = nullptr;
  for (const auto& b : run.bias)
    if (!pick || (moment == BiasMoment::kFinal ? b.step >= pick->step : b.step < pick->step)) pick = &b;
  return pick;
}

const LayerBias* find_layer(const BiasPoint* point, int layer) {
  if (!point) return nullptr;
  for (const auto& l : point->layers)
    if (l.layer == layer) return &l;
  return nullptr;
}

// Half-width of the 95% Student t interval of the mean over seeds (absent for fewer than two seeds).
Cell ci_half_width(const std::vector<double>& xs) {
  const PairedInterval ci = paired_interval(xs);
  return ci.defined() ? Cell((*ci.high - *ci.low) / 2) : Cell();
}

// One value list per side (0 baseline, 1 variant) and metric.
using Sides = std::array<std::array<std::vector<double>, kBiasMetricCount>, 2>;

// The leading columns of a per-group bias table (`bias_init`, `bias`, `bias_depth`): which runs a row pairs.
// Row has `const Group* group`.
template <class Row>
Columns<Row> group_columns() {
  auto key = [](const Row& r) -> const GroupKey& { return r.group->key; };
  Columns<Row> columns = {
      {{"seq_len", "seq_len"}, [](const Row& r) { return Cell(*r.group->key.seq_len); }},
      of_key<Row>(batch_column(), key),
      {{"steps", "steps"}, [](const Row& r) { return Cell(r.group->key.steps); }},
      {{"baseline", "baseline"}, [](const Row& r) { return Cell(r.group->key.baseline); }},
      {{"lambda", "λ"}, [](const Row& r) { return Cell(r.group->key.label); }},
  };
  append(columns, setup_columns<Row>(key));
  return columns;
}

// Per side and metric: the mean (markdown prints "± CI" after it) and the CI half-width. `stem` and `who`
// name the quantity ("" / "base " for the metric itself, "_change" / "base Δ " for its change).
template <class Row, class Get>
Columns<Row> side_metric_columns(const std::string& stem, const char* base_who, const char* var_who,
                                 bool sign, Get sides) {
  Columns<Row> columns;
  for (int side = 0; side < 2; ++side)
    for (std::size_t m = 0; m < kBiasMetricCount; ++m) {
      const std::string key = std::string(side == 0 ? "base" : "var") + "_" + kBiasMetrics[m].key + stem;
      const std::string who = std::string(side == 0 ? base_who : var_who) + kBiasMetrics[m].label;
      columns.push_back(
          {{key, who, 3, sign, key + "_ci"}, [=](const Row& r) { return avg(sides(r)[side][m]); }});
      columns.push_back({{key + "_ci", who + " 95% CI ±", 3},
                         [=](const Row& r) { return ci_half_width(sides(r)[side][m]); }});
    }
  return columns;
}

void build_bias(const SectionInputs& in, Table& t, BiasMoment moment) {
  struct Row {
    const Group* group;
    int layer;
    std::set<std::int64_t> steps;
    Sides sides;
    std::vector<double> learned;  // the variant's λ per head, over seeds and heads
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, moment))
        for (const auto& l : b->layers) layers.insert(l.layer);
    for (int layer : layers) {
      Row row{&g, layer, {}, {}, {}};
      for (const auto& p : g.pairs) {
        const BiasPoint* vb = bias_at(*p.variant, moment);
        const LayerBias* v = find_layer(vb, layer);
        if (!v) continue;
        row.steps.insert(vb->step);
        for (std::size_t m = 0; m < kBiasMetricCount; ++m)
          row.sides[1][m].push_back(v->*kBiasMetrics[m].member);
        for (double h : v->lambda_per_head) row.learned.push_back(h);
        if (const LayerBias* b = find_layer(bias_at(*p.baseline, moment), layer))
          for (std::size_t m = 0; m < kBiasMetricCount; ++m)
            row.sides[0][m].push_back(b->*kBiasMetrics[m].member);
      }
      rows.push_back(std::move(row));
    }
  }
  Columns<Row> columns = group_columns<Row>();
  append(columns,
         {{{"layer", "layer"}, [](const Row& r) { return Cell(static_cast<std::int64_t>(r.layer)); }},
          {{"n", "n"}, [](const Row& r) { return count_cell(r.sides[1][0].size()); }},
          {{"step", "step"},
           [](const Row& r) { return r.steps.size() == 1 ? Cell(*r.steps.begin()) : Cell(); }}});
  append(columns, side_metric_columns<Row>("", "base ", "variant ", false,
                                           [](const Row& r) -> const Sides& { return r.sides; }));
  columns.push_back(
      {{"var_lambda_mean", "variant mean learned λ", 3}, [](const Row& r) { return avg(r.learned); }});
  fill_table(t, columns, rows);
}

}  // namespace

void build_bias_init(const SectionInputs& in, Table& t) {
  build_bias(in, t, BiasMoment::kInit);
}
void build_bias_final(const SectionInputs& in, Table& t) {
  build_bias(in, t, BiasMoment::kFinal);
}

// Does a bias metric rise with depth (the paper's Fig. 1: SA's cos(y,v) from about 0.2 in the first layers of
// its 24-layer model to about 0.6 in the last)? Per group, metric and arm, per seed the least-squares slope
// of the final value over relative depth (layer − first) / (last − first) of the layers the group measured,
// so the slope is the fitted change from the first layer to the last and reads alike at every depth; the mean
// with a 95% t CI over seeds. A seed counts only when both of its runs measured every one of those layers (a
// seed without a layer would tilt its slope), so n describes both arms.
// Every metric is a cosine or an attention weight, in [-1, 1], and the table prints three decimals: a change
// whose whole CI lies within ±kFlatDepthChange is "flat", below what the table can show. Without this, XSA's
// cos(z,v), zero by construction up to float rounding and the ε in v/max(‖v‖, ε), got "rises with depth" from
// a CI of [+0.000003, +0.000055] (lr_control at lr 1e-3).
namespace {
constexpr double kFlatDepthChange = 5e-4;

std::string depth_verdict(const PairedInterval& ci) {
  if (ci.defined() && *ci.low > -kFlatDepthChange && *ci.high < kFlatDepthChange) return "flat";
  return sign_verdict(ci, "rises with depth", "falls with depth");
}
}  // namespace

void build_bias_depth(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    std::size_t metric;
    std::size_t layers;
    std::array<PairedInterval, 2> ci;  // per side, of the per-seed slopes
    std::array<std::size_t, 2> rising;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      for (const RunResult* run : {p.baseline, p.variant})
        if (const BiasPoint* b = bias_at(*run, BiasMoment::kFinal))
          for (const auto& l : b->layers) layers.insert(l.layer);
    if (layers.size() < 2) continue;  // one layer: no depth to speak of
    std::vector<double> depth;        // relative depth of each layer, 0 (first) to 1 (last)
    for (int layer : layers)
      depth.push_back(static_cast<double>(layer - *layers.begin()) / (*layers.rbegin() - *layers.begin()));
    Sides slopes;  // per side and metric, one slope per seed
    for (const auto& p : g.pairs) {
      Sides values;  // per side and metric, the value at each layer in depth order
      bool every_layer = true;
      const RunResult* runs[2] = {p.baseline, p.variant};
      for (int side = 0; side < 2 && every_layer; ++side) {
        const BiasPoint* b = bias_at(*runs[side], BiasMoment::kFinal);
        for (int layer : layers) {
          const LayerBias* l = find_layer(b, layer);
          if (!l) {
            every_layer = false;
            break;
          }
          for (std::size_t m = 0; m < kBiasMetricCount; ++m)
            values[side][m].push_back(l->*kBiasMetrics[m].member);
        }
      }
      if (!every_layer) continue;
      for (int side = 0; side < 2; ++side)
        for (std::size_t m = 0; m < kBiasMetricCount; ++m)
          slopes[side][m].push_back(least_squares_slope(depth, values[side][m]));
    }
    for (std::size_t m = 0; m < kBiasMetricCount; ++m) {
      Row row{&g, m, layers.size(), {}, {}};
      for (int side = 0; side < 2; ++side) {
        row.ci[side] = paired_interval(slopes[side][m]);
        row.rising[side] = static_cast<std::size_t>(
            std::count_if(slopes[side][m].begin(), slopes[side][m].end(), [](double x) { return x > 0; }));
      }
      rows.push_back(row);
    }
  }
  Columns<Row> columns = group_columns<Row>();
  append(columns, {{{"metric", "metric"}, [](const Row& r) { return Cell(kBiasMetrics[r.metric].label); }},
                   {{"layers", "layers"}, [](const Row& r) { return count_cell(r.layers); }},
                   {{"n", "n"}, [](const Row& r) { return count_cell(r.ci[0].n); }}});
  for (int side = 0; side < 2; ++side) {
    const std::string key = side == 0 ? "base" : "var", who = side == 0 ? "base" : "variant";
    auto ci = [side](const Row& r) -> const PairedInterval& { return r.ci[side]; };
    append(columns, {{{key + "_depth_change", who + " change first → last layer", 3, true},
                      [ci](const Row& r) { return ci(r).n ? Cell(ci(r).mean) : Cell(); }},
                     {{key + "_depth_ci_low", "95% CI low", 3, true},
                      [ci](const Row& r) { return opt_cell(ci(r).low); }},
                     {{key + "_depth_ci_high", "95% CI high", 3, true},
                      [ci](const Row& r) { return opt_cell(ci(r).high); }},
                     {{key + "_rising", who + " seeds rising"},
                      [side](const Row& r) { return count_cell(r.rising[side]); }},
                     {{key + "_depth_verdict", who + " verdict"},
                      [ci](const Row& r) { return Cell(depth_verdict(ci(r))); }}});
  }
  fill_table(t, columns, rows);
}

// How the bias metrics move with the training budget, paired by seed: for each two neighbouring budgets of a
// series (as budget_trend forms them) and each layer, per seed that has both, the final metric at the longer
// budget minus at the shorter, for the baseline and the variant; mean ± 95% t CI half-width over seeds. Seeds
// pair across budgets as in budget_trend (same initial weights and batch order), so this is sharper than
// comparing the two budgets' own intervals in the bias table.
void build_bias_budget_change(const SectionInputs& in, Table& t) {
  struct Row {
    BudgetHead head;
    int layer;
    Sides changes;  // per seed, longer minus shorter
  };
  // PerSeed: seed -> layer -> that seed's pairs' final values.
  using PerSeed = std::map<std::uint64_t, std::map<int, Sides>>;
  auto final_bias = [](const Group& g) {
    PerSeed out;
    for (const auto& p : g.pairs) {
      const std::uint64_t seed = pair_seed(p);
      const RunResult* runs[2] = {p.baseline, p.variant};
      for (int side = 0; side < 2; ++side)
        if (const BiasPoint* b = bias_at(*runs[side], BiasMoment::kFinal))
          for (const auto& l : b->layers)
            for (std::size_t m = 0; m < kBiasMetricCount; ++m)
              out[seed][l.layer][side][m].push_back(l.*kBiasMetrics[m].member);
    }
    return out;
  };
  // A seed counts for a layer only when both runs measured it at both budgets, so n describes every column.
  auto measured = [](const Sides& sides) { return !sides[0][0].empty() && !sides[1][0].empty(); };
  std::vector<Row> rows;
  for (const auto& series : budget_series(in.grouping.per_len)) {
    const auto& groups = series.groups;
    PerSeed b = final_bias(*groups[0]);  // each group's values, read once: the longer end becomes the shorter
    for (std::size_t i = 1; i < groups.size(); ++i) {
      const Group& shorter = *groups[i - 1];
      const Group& longer = *groups[i];
      const PerSeed a = std::exchange(b, final_bias(longer));
      std::map<int, Sides> changes;  // layer -> per seed, longer minus shorter
      for (const auto& [seed, layers_a] : a) {
        const auto at_b = b.find(seed);
        if (at_b == b.end()) continue;
        for (const auto& [layer, sides_a] : layers_a) {
          const auto layer_b = at_b->second.find(layer);
          if (layer_b == at_b->second.end() || !measured(sides_a) || !measured(layer_b->second)) continue;
          for (int side = 0; side < 2; ++side)
            for (std::size_t m = 0; m < kBiasMetricCount; ++m)
              changes[layer][side][m].push_back(mean(layer_b->second[side][m]) - mean(sides_a[side][m]));
        }
      }
      const std::string budgets = std::to_string(shorter.key.steps) + " " + std::to_string(longer.key.steps);
      for (auto& [layer, sides] : changes) rows.push_back({{series.key, budgets}, layer, std::move(sides)});
    }
  }
  auto columns = budget_head_columns<Row>();
  append(columns,
         {{{"layer", "layer"}, [](const Row& r) { return Cell(static_cast<std::int64_t>(r.layer)); }},
          {{"n", "n"}, [](const Row& r) { return count_cell(r.changes[1][0].size()); }}});
  append(columns, side_metric_columns<Row>("_change", "base Δ ", "variant Δ ", true,
                                           [](const Row& r) -> const Sides& { return r.changes; }));
  fill_table(t, columns, rows);
}

// Per layer and head of the learned-λ and gate variants: the final λ (gate value), mean ± sample SD over
// seeds, and the layer's mean over heads.
void build_learned_lambda(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    int layer;
    std::set<std::int64_t> steps;
    std::vector<std::vector<double>> per_head;  // head -> values over seeds
    std::vector<double> layer_means;            // per seed, the mean over heads
  };
  std::size_t heads = 0;
  for (const auto& g : in.grouping.per_len)
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal))
        for (const auto& l : b->layers) heads = std::max(heads, l.lambda_per_head.size());
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal))
        for (const auto& l : b->layers)
          if (!l.lambda_per_head.empty()) layers.insert(l.layer);
    for (int layer : layers) {
      Row row{&g, layer, {}, std::vector<std::vector<double>>(heads), {}};
      for (const auto& p : g.pairs) {
        const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal);
        const LayerBias* l = find_layer(b, layer);
        if (!l || l->lambda_per_head.empty()) continue;
        row.steps.insert(b->step);
        for (std::size_t h = 0; h < l->lambda_per_head.size(); ++h)
          row.per_head[h].push_back(l->lambda_per_head[h]);
        row.layer_means.push_back(mean(l->lambda_per_head));
      }
      rows.push_back(std::move(row));
    }
  }
  auto sd_cell = [](const std::vector<double>& xs) { return xs.size() > 1 ? Cell(sample_sd(xs)) : Cell(); };
  Columns<Row> columns = {
      {{"seq_len", "seq_len"}, [](const Row& r) { return Cell(*r.group->key.seq_len); }},
      of_key<Row>(batch_column(), [](const Row& r) -> const GroupKey& { return r.group->key; }),
      {{"steps", "steps"}, [](const Row& r) { return Cell(r.group->key.steps); }},
      {{"variant", "variant"}, [](const Row& r) { return Cell(r.group->key.label); }},
  };
  append(columns, setup_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns,
         {{{"layer", "layer"}, [](const Row& r) { return Cell(static_cast<std::int64_t>(r.layer)); }},
          {{"n", "n"}, [](const Row& r) { return count_cell(r.layer_means.size()); }},
          {{"step", "step"},
           [](const Row& r) { return r.steps.size() == 1 ? Cell(*r.steps.begin()) : Cell(); }}});
  for (std::size_t h = 0; h < heads; ++h) {
    const std::string key = "head_" + std::to_string(h), header = "head " + std::to_string(h);
    columns.push_back(
        {{key, header, 3, false, key + "_sd"}, [h](const Row& r) { return avg(r.per_head[h]); }});
    columns.push_back(
        {{key + "_sd", header + " SD", 3}, [h, sd_cell](const Row& r) { return sd_cell(r.per_head[h]); }});
  }
  columns.push_back({{"layer_mean", "layer mean", 3, false, "layer_mean_sd"},
                     [](const Row& r) { return Cell(mean(r.layer_means)); }});
  columns.push_back(
      {{"layer_mean_sd", "layer mean SD", 3}, [sd_cell](const Row& r) { return sd_cell(r.layer_means); }});
  fill_table(t, columns, rows);
}

}  // namespace xsa::report
