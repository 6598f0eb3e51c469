// Sections on the learning dynamics (docs/findings.md, question 9): the attention dynamics per layer over
// training (xsa/records/bias_metrics.h: kDynamicsMetrics) and the step at which each arm's validation loss
// leaves its early plateau, paired per seed.
#include <algorithm>
#include <map>

#include "xsa/report/section_builders.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

// The validation curves of a pair on the steps both evaluated, in step order: (step, baseline, variant).
struct CurvePoint {
  std::int64_t step;
  double base, var;
};
std::vector<CurvePoint> common_curve(const Pair& p) {
  std::map<std::int64_t, double> base;
  for (const auto& e : p.baseline->eval) base[e.step] = e.val_loss;
  std::vector<CurvePoint> out;
  for (const auto& e : p.variant->eval)
    if (auto it = base.find(e.step); it != base.end()) out.push_back({e.step, it->second, e.val_loss});
  std::sort(out.begin(), out.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.step < b.step; });
  return out;
}

// True when every bias measurement of the run has the attention dynamics on every layer. A run started by a
// version without them and resumed by one with them (a sweep that crossed the change) has them only from
// some step on; averaging it in would change the seeds behind a curve halfway along it.
bool complete_dynamics(const RunResult& run) {
  if (run.bias.empty()) return false;
  for (const auto& point : run.bias)
    for (const auto& l : point.layers)
      if (!l.dynamics) return false;
  return true;
}

}  // namespace

// The level of a pair is halfway between where both arms start (the mean of their first common evaluation:
// the same initial weights) and the worse arm's final loss, so both arms reach it; an arm's escape step is
// the first common evaluation at or below it. Per seed the mean over its pairs, then the paired Δ (variant −
// baseline: negative = the variant leaves the plateau earlier) with its t CI over seeds.
void build_plateau_escape(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    double level, base_step, var_step;
    PairedInterval delta;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    std::map<std::uint64_t, std::vector<std::array<double, 3>>>
        by_seed;  // seed -> (level, base, var) per pair
    for (const auto& p : g.pairs) {
      const auto curve = common_curve(p);
      if (curve.size() < 2) continue;
      const double start = 0.5 * (curve.front().base + curve.front().var);
      const double level = 0.5 * (start + std::max(curve.back().base, curve.back().var));
      if (!(std::max(curve.back().base, curve.back().var) < start))
        continue;  // no fall from the start: no plateau
      auto escape =
          [&](double CurvePoint::*arm) {  // the first evaluation at or below the level (the last one is)
            for (const auto& c : curve)
              if (c.*arm <= level) return static_cast<double>(c.step);
            return static_cast<double>(curve.back().step);
          };
      by_seed[pair_seed(p)].push_back({level, escape(&CurvePoint::base), escape(&CurvePoint::var)});
    }
    if (by_seed.empty()) continue;
    std::vector<double> levels, base, var, delta;
    for (const auto& [seed, pairs] : by_seed) {
      double l = 0, b = 0, v = 0;
      for (const auto& [pl, pb, pv] : pairs) l += pl, b += pb, v += pv;
      const double n = static_cast<double>(pairs.size());
      levels.push_back(l / n);
      base.push_back(b / n);
      var.push_back(v / n);
      delta.push_back(v / n - b / n);
    }
    rows.push_back({&g, mean(levels), mean(base), mean(var), paired_interval(delta)});
  }
  Columns<Row> columns = group_head_columns<Row>([](const Row& r) -> const Group& { return *r.group; });
  append(columns, length_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns, {
                      {{"n", "n"}, [](const Row& r) { return count_cell(r.delta.n); }},
                      {{"level", "level (val loss)", 3}, [](const Row& r) { return Cell(r.level); }},
                      {{"base_step", "base escape step", 0}, [](const Row& r) { return Cell(r.base_step); }},
                      {{"var_step", "variant escape step", 0}, [](const Row& r) { return Cell(r.var_step); }},
                  });
  append(columns, delta_ci_columns<Row>("mean_delta_steps", "mean Δ steps", 0,
                                        [](const Row& r) -> const PairedInterval& { return r.delta; }));
  fill_table(t, columns, rows);
}

// Per group (one length and batch), bias measurement step and layer: each dynamics metric of the baseline and
// the variant, mean over seeds (each seed the mean over its pairs), from the pairs whose two runs measured it
// at every bias measurement (complete_dynamics), so one group's rows all average the same seeds.
void build_dynamics(const SectionInputs& in, Table& t) {
  constexpr std::size_t kMetrics = sizeof(kDynamicsMetrics) / sizeof(kDynamicsMetrics[0]);
  struct Row {
    const Group* group;
    std::int64_t step;
    int layer;
    std::size_t n;
    std::array<double, kMetrics> base, var;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    // (step, layer) -> seed -> side -> metric -> values over the seed's pairs
    std::map<std::pair<std::int64_t, int>,
             std::map<std::uint64_t, std::array<std::array<std::vector<double>, kMetrics>, 2>>>
        values;
    for (const auto& p : g.pairs) {
      if (!complete_dynamics(*p.baseline) || !complete_dynamics(*p.variant)) continue;
      std::map<std::pair<std::int64_t, int>, const AttentionDynamics*> base;
      for (const auto& point : p.baseline->bias)
        for (const auto& l : point.layers)
          if (l.dynamics) base[{point.step, l.layer}] = &*l.dynamics;
      for (const auto& point : p.variant->bias)
        for (const auto& l : point.layers) {
          auto it = base.find({point.step, l.layer});
          if (!l.dynamics || it == base.end()) continue;
          auto& sides = values[it->first][pair_seed(p)];
          for (std::size_t m = 0; m < kMetrics; ++m) {
            sides[0][m].push_back(it->second->*kDynamicsMetrics[m].member);
            sides[1][m].push_back(l.dynamics.value().*kDynamicsMetrics[m].member);
          }
        }
    }
    for (const auto& [at, seeds] : values) {
      Row row{&g, at.first, at.second, seeds.size(), {}, {}};
      for (std::size_t m = 0; m < kMetrics; ++m) {
        std::vector<double> b, v;
        for (const auto& [seed, sides] : seeds) {
          b.push_back(mean(sides[0][m]));
          v.push_back(mean(sides[1][m]));
        }
        row.base[m] = mean(b);
        row.var[m] = mean(v);
      }
      rows.push_back(row);
    }
  }
  Columns<Row> columns = group_head_columns<Row>([](const Row& r) -> const Group& { return *r.group; });
  append(columns, length_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns, {
                      {{"step", "step"}, [](const Row& r) { return Cell(r.step); }},
                      {{"layer", "layer"}, [](const Row& r) { return Cell(std::int64_t{r.layer}); }},
                      {{"n", "n"}, [](const Row& r) { return count_cell(r.n); }},
                  });
  for (std::size_t m = 0; m < kMetrics; ++m)
    for (int side = 0; side < 2; ++side) {
      const std::string key_text = std::string(side == 0 ? "base_" : "var_") + kDynamicsMetrics[m].key;
      const std::string heading = std::string(side == 0 ? "base " : "variant ") + kDynamicsMetrics[m].label;
      columns.push_back({{key_text, heading, 3},
                         [m, side](const Row& r) { return Cell(side == 0 ? r.base[m] : r.var[m]); }});
    }
  fill_table(t, columns, rows);
}

}  // namespace xsa::report
