// Sections that fit a trend per seed: the gain over the training budget (and whether that trend bends), over
// the sequence length and the model size, and its change from one learning rate to the next. The maths
// (slopes, intervals) is in xsa/report/stats.h; the series of groups in xsa/report/grouping.h.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xsa/report/columns.h"
#include "xsa/report/section_builders.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

// The trend columns shared by the budget and length trends.
Columns<Trend> trend_columns(const std::string& falling_text, const std::string& slope_text,
                             const std::string& what) {
  return {
      {{"n", "n"}, [](const Trend& tr) { return count_cell(tr.ci.n); }},
      {{"falling", falling_text}, [](const Trend& tr) { return count_cell(tr.falling()); }},
      {{"slope", slope_text, 2, true},
       [](const Trend& tr) { return tr.slopes.empty() ? Cell() : Cell(tr.ci.mean); }},
      {{"slope_ci_low", "95% CI low", 2, true}, [](const Trend& tr) { return opt_cell(tr.ci.low); }},
      {{"slope_ci_high", "95% CI high", 2, true}, [](const Trend& tr) { return opt_cell(tr.ci.high); }},
      {{"verdict", "verdict"}, [what](const Trend& tr) { return Cell(tr.verdict(what)); }},
  };
}

// One row per budget series with at least `min_budgets` known budgets: the series' head and `stat` of the
// points of its seeds that have every budget.
template <class Row, class Stat>
std::vector<Row> budget_series_rows(const SectionInputs& in, std::size_t min_budgets, Stat stat) {
  std::vector<Row> rows;
  for (const auto& series : budget_series(in.grouping.per_len)) {
    const SeriesPoints points = series_points(series.groups, SeriesAxis::kSteps);
    if (points.xs.size() < min_budgets) continue;
    rows.push_back({{series.key, number_list(points.xs)}, stat(points.seeds)});
  }
  return rows;
}

}  // namespace

// Does the gain survive longer training? The per-seed trend over the training budget (train.steps) at one
// sequence length and batch. Seeds pair across budgets because a seed fixes the initial weights and the
// order of the batches; only the schedule (warmup + cosine over the budget) and its length differ.
void build_budget_trend(const SectionInputs& in, Table& t) {
  struct Row {
    BudgetHead head;
    Trend trend;
  };
  // One budget: no trend to speak of.
  const auto rows = budget_series_rows<Row>(in, 2, per_seed_trend);
  auto columns = budget_head_columns<Row>();
  append(columns, columns_of<Row>(trend_columns("seeds whose gain falls with the budget",
                                                "improvement % per doubling of steps", "the budget"),
                                  [](const Row& r) -> const Trend& { return r.trend; }));
  fill_table(t, columns, rows);
}

// Does the budget trend bend? With three or more budgets, per seed: the slope of its improvement between the
// last two budgets minus the slope between the first two (each per doubling of steps), from the seeds that
// have every budget; the mean change with a t CI over seeds. A gain that shrinks ever more slowly has a
// negative first slope and a rising slope ("slope rises").
void build_budget_trend_change(const SectionInputs& in, Table& t) {
  struct Row {
    BudgetHead head;
    SlopeChange change;
  };
  // One interval: nothing to compare.
  const auto rows = budget_series_rows<Row>(in, 3, per_seed_slope_change);
  auto when_any = [](const Row& r, double v) { return r.change.change.empty() ? Cell() : Cell(v); };
  auto columns = budget_head_columns<Row>();
  append(
      columns,
      {{{"n", "n"}, [](const Row& r) { return count_cell(r.change.ci.n); }},
       {{"first_slope", "slope, first interval", 2, true},
        [when_any](const Row& r) { return when_any(r, mean(r.change.first)); }},
       {{"last_slope", "slope, last interval", 2, true},
        [when_any](const Row& r) { return when_any(r, mean(r.change.last)); }},
       {{"rising", "seeds whose slope rises"}, [](const Row& r) { return count_cell(r.change.rising()); }},
       {{"change", "change of slope", 2, true},
        [when_any](const Row& r) { return when_any(r, r.change.ci.mean); }},
       {{"change_ci_low", "95% CI low", 2, true}, [](const Row& r) { return opt_cell(r.change.ci.low); }},
       {{"change_ci_high", "95% CI high", 2, true}, [](const Row& r) { return opt_cell(r.change.ci.high); }},
       {{"verdict", "verdict"},
        [](const Row& r) { return Cell(sign_verdict(r.change.ci, "slope rises", "slope falls")); }}});
  fill_table(t, columns, rows);
}

// Does the gain grow or shrink with context length? The per-seed trend over T of every length series
// (design). Seeds pair across lengths because a seed fixes the initial weights (the model does not depend on
// T with RoPE).
void build_seq_len_trend(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* first;
    std::string design;
    std::string lengths;
    Trend trend;
  };
  std::vector<Row> rows;
  for (const LengthSeries& series : length_series(in.grouping.per_len)) {
    if (series.groups.size() < 2) continue;  // one length: no trend to speak of
    const SeriesPoints points = series_points(series.groups, SeriesAxis::kSeqLen);
    if (points.xs.size() < 2) continue;
    rows.push_back(
        {series.groups.front(), series.design, number_list(points.xs), per_seed_trend(points.seeds)});
  }
  Columns<Row> columns = {
      {{"baseline", "baseline"}, [](const Row& r) { return Cell(r.first->key.baseline); }},
      {{"lambda", "λ"}, [](const Row& r) { return Cell(r.first->key.label); }},
      {{"steps", "steps"}, [](const Row& r) { return Cell(r.first->key.steps); }},
      {{"design", "design"}, [](const Row& r) { return Cell(r.design); }},
      {{"seq_lens", "seq_len(s)"}, [](const Row& r) { return Cell(r.lengths); }},
  };
  append(columns, setup_columns<Row>([](const Row& r) -> const GroupKey& { return r.first->key; }));
  append(columns, columns_of<Row>(
                      trend_columns("seeds whose gain falls with T", "improvement % per doubling of T", "T"),
                      [](const Row& r) -> const Trend& { return r.trend; }));
  fill_table(t, columns, rows);
}

// Does the gain grow with model size, as the paper reports? The per-seed trend over log2 of the non-embedding
// parameters, per variant at one lr, budget, length and batch. A seed pairs across sizes because it fixes the
// order of the batches at every size (the initial weights differ, as the shapes do).
void build_size_trend(const SectionInputs& in, Table& t) {
  struct Row {
    GroupKey key;
    std::string models;  // "2L d128 4×32, 4L d192 6×32"
    std::string params;  // "393216 1769472"
    Trend trend;
  };
  std::vector<Row> rows;
  for (const SizeSeries& series : size_series(in.grouping.per_len)) {
    const SeriesPoints points = series_points(series.groups, SeriesAxis::kParams);
    if (points.xs.size() < 2) continue;  // one size: no trend to speak of
    std::vector<std::string> seen;  // each shape once, in size order ("2L ..." is a substring of "12L ...")
    std::string models;
    for (const Group* g : series.groups) {
      const std::string model = model_with_setup(g->key);
      if (std::find(seen.begin(), seen.end(), model) != seen.end()) continue;
      seen.push_back(model);
      models += (models.empty() ? "" : ", ") + model;
    }
    rows.push_back({series.key, models, number_list(points.xs), per_seed_trend(points.seeds)});
  }
  Columns<Row> columns = {
      {{"baseline", "baseline"}, [](const Row& r) { return Cell(r.key.baseline); }},
      {{"lambda", "λ"}, [](const Row& r) { return Cell(r.key.label); }},
      {{"steps", "steps"}, [](const Row& r) { return Cell(r.key.steps); }},
      {{"seq_len", "seq_len"}, [](const Row& r) { return Cell(*r.key.seq_len); }},
      of_key<Row>(batch_column(), [](const Row& r) -> const GroupKey& { return r.key; }),
      of_key<Row>(lr_column(), [](const Row& r) -> const GroupKey& { return r.key; }),
      of_key<Row>(attention_impl_column(), [](const Row& r) -> const GroupKey& { return r.key; }),
      {{"models", "models"}, [](const Row& r) { return Cell(r.models); }},
      {{"params", "non-embedding parameters"}, [](const Row& r) { return Cell(r.params); }},
  };
  append(columns, columns_of<Row>(trend_columns("seeds whose gain falls with size",
                                                "improvement % per doubling of parameters", "size"),
                                  [](const Row& r) -> const Trend& { return r.trend; }));
  fill_table(t, columns, rows);
}

// Where does the gain grow with the learning rate? Per lr series (one comparison at one budget, length and
// baseline setup), for each two neighbouring lrs, per seed with both: the improvement % at the higher lr
// minus at the lower; the mean change with a t CI over seeds. A seed pairs across lrs because it fixes the
// initial weights and the batch order; only the lr (and min_lr = lr/10) differs. Neighbours rather than one
// slope over the grid: the gain can rise and then fall (docs/findings.md, questions 5 and 9), which a slope
// averages away.
void build_lr_change(const SectionInputs& in, Table& t) {
  struct Row {
    GroupKey key;  // the lower lr's group
    double higher_lr = 0;
    std::vector<double> lower_gains, higher_gains;  // per seed with both lrs
    PairedInterval ci;                              // of higher − lower
  };
  std::vector<Row> rows;
  for (const GroupSeries& series : lr_series(in.grouping.per_len)) {
    for (std::size_t i = 0; i + 1 < series.groups.size(); ++i) {  // the series is in increasing lr
      const Group& lower = *series.groups[i];
      const Group& higher = *series.groups[i + 1];
      Row row{lower.key, higher.key.lr, {}, {}, {}};
      const std::map<std::uint64_t, double> at_higher = higher.improvements_by_seed();
      std::vector<double> changes;
      for (const auto& [seed, gain] : lower.improvements_by_seed()) {
        const auto it = at_higher.find(seed);
        if (it == at_higher.end()) continue;
        row.lower_gains.push_back(gain);
        row.higher_gains.push_back(it->second);
        changes.push_back(it->second - gain);
      }
      if (changes.empty()) continue;  // no seed at both lrs: nothing to pair
      row.ci = paired_interval(changes);
      rows.push_back(std::move(row));
    }
  }
  auto key = [](const Row& r) -> const GroupKey& { return r.key; };
  Columns<Row> columns = {
      {{"baseline", "baseline"}, [](const Row& r) { return Cell(r.key.baseline); }},
      {{"lambda", "λ"}, [](const Row& r) { return Cell(r.key.label); }},
      {{"steps", "steps"}, [](const Row& r) { return Cell(r.key.steps); }},
      of_key<Row>(model_column(), key),
      of_key<Row>(attention_impl_column(), key),
  };
  append(columns, length_columns<Row>(key));
  append(
      columns,
      {{{"lr", "lr", Column::kShortest}, [](const Row& r) { return Cell(r.key.lr); }},
       {{"higher_lr", "next lr", Column::kShortest}, [](const Row& r) { return Cell(r.higher_lr); }},
       {{"n", "n"}, [](const Row& r) { return count_cell(r.ci.n); }},
       {{"gain", "improvement % at lr", 2, true}, [](const Row& r) { return avg(r.lower_gains); }},
       {{"higher_gain", "improvement % at next lr", 2, true},
        [](const Row& r) { return avg(r.higher_gains); }},
       {{"growing", "seeds whose gain grows"},
        [](const Row& r) {
          std::size_t n = 0;
          for (std::size_t i = 0; i < r.lower_gains.size(); ++i) n += r.higher_gains[i] > r.lower_gains[i];
          return count_cell(n);
        }},
       {{"change", "change of the improvement (points)", 2, true},
        [](const Row& r) { return Cell(r.ci.mean); }},
       {{"change_ci_low", "95% CI low", 2, true}, [](const Row& r) { return opt_cell(r.ci.low); }},
       {{"change_ci_high", "95% CI high", 2, true}, [](const Row& r) { return opt_cell(r.ci.high); }},
       {{"verdict", "verdict"}, [](const Row& r) { return Cell(sign_verdict(r.ci, "grows", "shrinks")); }}});
  fill_table(t, columns, rows);
}

}  // namespace xsa::report
