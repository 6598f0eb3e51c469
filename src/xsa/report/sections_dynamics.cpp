// Sections on the learning dynamics (docs/findings.md, question 9): the attention dynamics per layer over
// training (xsa/records/bias_metrics.h: kDynamicsMetrics) and the step at which each arm's validation loss
// leaves its early plateau, paired per seed.
#include <algorithm>
#include <array>
#include <map>
#include <string>

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

namespace {

constexpr std::size_t kMetrics = sizeof(kDynamicsMetrics) / sizeof(kDynamicsMetrics[0]);

// One group's attention dynamics at one bias measurement step and layer: each metric of the baseline and the
// variant, mean over n seeds.
struct DynamicsPoint {
  std::int64_t step;
  int layer;
  std::size_t n;
  std::array<double, kMetrics> base, var;
};

// A group's dynamics per step and layer, in (step, layer) order: means over seeds (each seed the mean over
// its pairs) from the pairs whose two runs measured them at every bias measurement (complete_dynamics), so
// one group's points all average the same seeds.
std::vector<DynamicsPoint> dynamics_means(const Group& g) {
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
  std::vector<DynamicsPoint> points;
  for (const auto& [at, seeds] : values) {
    DynamicsPoint point{at.first, at.second, seeds.size(), {}, {}};
    for (std::size_t m = 0; m < kMetrics; ++m) {
      std::vector<double> b, v;
      for (const auto& [seed, sides] : seeds) {
        b.push_back(mean(sides[0][m]));
        v.push_back(mean(sides[1][m]));
      }
      point.base[m] = mean(b);
      point.var[m] = mean(v);
    }
    points.push_back(point);
  }
  return points;
}

const char* side_key(int side) {
  return side == 0 ? "base_" : "var_";
}
const char* side_label(int side) {
  return side == 0 ? "base " : "variant ";
}

}  // namespace

// Per group (one length and batch), bias measurement step and layer: each dynamics metric of the baseline and
// the variant, mean over seeds (dynamics_means).
void build_dynamics(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    DynamicsPoint point;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len)
    for (const DynamicsPoint& point : dynamics_means(g)) rows.push_back({&g, point});
  Columns<Row> columns = group_head_columns<Row>([](const Row& r) -> const Group& { return *r.group; });
  append(columns, length_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns, {
                      {{"step", "step"}, [](const Row& r) { return Cell(r.point.step); }},
                      {{"layer", "layer"}, [](const Row& r) { return Cell(std::int64_t{r.point.layer}); }},
                      {{"n", "n"}, [](const Row& r) { return count_cell(r.point.n); }},
                  });
  for (std::size_t m = 0; m < kMetrics; ++m)
    for (int side = 0; side < 2; ++side)
      columns.push_back(
          {{side_key(side) + std::string(kDynamicsMetrics[m].key),
            side_label(side) + std::string(kDynamicsMetrics[m].label), 3},
           [m, side](const Row& r) { return Cell(side == 0 ? r.point.base[m] : r.point.var[m]); }});
  fill_table(t, columns, rows);
}

// The dynamics table in one row per group and layer: each metric's extreme over training in the direction of
// trouble (xsa/records/bias_metrics.h: the largest logit, which QK-norm bounds; the lowest entropy, attention
// collapsed onto single positions; the largest first-position mass) with its step, and its value at the last
// measurement, for each arm; the values are seed means at a measurement step, as in `dynamics`.
void build_dynamics_summary(const SectionInputs& in, Table& t) {
  struct Extremes {
    std::array<double, kMetrics> peak;  // the extreme
    std::array<std::int64_t, kMetrics> peak_step;
    std::array<double, kMetrics> end;
  };
  struct Row {
    const Group* group;
    int layer;
    std::size_t n;
    std::int64_t end_step;
    std::array<Extremes, 2> sides;  // baseline, variant
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {
    std::map<int, Row> by_layer;
    for (const DynamicsPoint& point : dynamics_means(g)) {  // in step order: the last seen is the end
      auto [it, first] = by_layer.try_emplace(point.layer, Row{&g, point.layer, point.n, point.step, {}});
      Row& row = it->second;
      row.end_step = point.step;
      for (int side = 0; side < 2; ++side) {
        const auto& values = side == 0 ? point.base : point.var;
        Extremes& e = row.sides[side];
        for (std::size_t m = 0; m < kMetrics; ++m) {
          const bool beyond = kDynamicsMetrics[m].extreme == Extreme::kLargest ? values[m] > e.peak[m]
                                                                               : values[m] < e.peak[m];
          if (first || beyond) {
            e.peak[m] = values[m];
            e.peak_step[m] = point.step;
          }
          e.end[m] = values[m];
        }
      }
    }
    for (auto& [layer, row] : by_layer) rows.push_back(row);
  }
  Columns<Row> columns = group_head_columns<Row>([](const Row& r) -> const Group& { return *r.group; });
  append(columns, length_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns, {
                      {{"layer", "layer"}, [](const Row& r) { return Cell(std::int64_t{r.layer}); }},
                      {{"n", "n"}, [](const Row& r) { return count_cell(r.n); }},
                      {{"end_step", "last step"}, [](const Row& r) { return Cell(r.end_step); }},
                  });
  for (std::size_t m = 0; m < kMetrics; ++m)
    for (int side = 0; side < 2; ++side) {
      const std::string key = side_key(side) + std::string(kDynamicsMetrics[m].key);
      const std::string label = side_label(side) + std::string(kDynamicsMetrics[m].label);
      const std::string extreme = kDynamicsMetrics[m].extreme == Extreme::kLargest ? "largest" : "lowest";
      append(columns, {{{key + "_extreme", label + ", " + extreme, 3},
                        [m, side](const Row& r) { return Cell(r.sides[side].peak[m]); }},
                       {{key + "_extreme_step", "at step"},
                        [m, side](const Row& r) { return Cell(r.sides[side].peak_step[m]); }},
                       {{key + "_end", label + ", at the end", 3},
                        [m, side](const Row& r) { return Cell(r.sides[side].end[m]); }}});
    }
  fill_table(t, columns, rows);
}

}  // namespace xsa::report
