// Sections that compare final losses: the paired runs, the groups by λ, budget and length, the paired Δ
// along training, the verdicts and the notes.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "xsa/report/columns.h"
#include "xsa/report/section_builders.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

// The statistics of one group's paired differences, computed once per row.
struct GroupStats {
  PairedInterval delta, improvement;
  std::size_t favouring = 0;
};
GroupStats stats_of(const Group& g) {
  const auto deltas = g.deltas();
  return {paired_interval(deltas), paired_interval(g.improvements()), count_favouring_variant(deltas)};
}

struct GroupRow {
  const Group* group;
  GroupStats stats;
};
std::vector<GroupRow> group_rows(const std::vector<Group>& groups) {
  std::vector<GroupRow> rows;
  for (const auto& g : groups) rows.push_back({&g, stats_of(g)});
  return rows;
}

const Columns<GroupStats>& group_stat_columns() {
  static const Columns<GroupStats> columns = [] {
    Columns<GroupStats> c = {
        {{"n", "n"}, [](const GroupStats& s) { return count_cell(s.delta.n); }},
        {{"favouring", "seeds favouring variant"},
         [](const GroupStats& s) { return count_cell(s.favouring); }},
        {{"mean_improvement_pct", "mean improvement %", 2, true},
         [](const GroupStats& s) { return Cell(s.improvement.mean); }},
        {{"improvement_ci_low", "improvement 95% CI low", 2, true},
         [](const GroupStats& s) { return opt_cell(s.improvement.low); }},
        {{"improvement_ci_high", "improvement 95% CI high", 2, true},
         [](const GroupStats& s) { return opt_cell(s.improvement.high); }},
    };
    append(c, delta_ci_columns<GroupStats>(
                  "mean_delta", "mean Δ", 4,
                  [](const GroupStats& s) -> const PairedInterval& { return s.delta; }));
    c.push_back(
        {{"verdict", "verdict"}, [](const GroupStats& s) { return Cell(loss_delta_verdict(s.delta)); }});
    return c;
  }();
  return columns;
}

template <class Row>
Columns<Row> with_group_stats(Columns<Row> head) {
  append(head,
         columns_of<Row>(group_stat_columns(), [](const Row& r) -> const GroupStats& { return r.stats; }));
  return head;
}

// The key of a row's group, as most group tables name it.
Cell baseline_cell(const GroupRow& r) {
  return r.group->key.baseline;
}
Cell lambda_cell(const GroupRow& r) {
  return r.group->key.label;
}
Cell steps_cell(const GroupRow& r) {
  return r.group->key.steps;
}
const GroupKey& group_key(const GroupRow& r) {
  return r.group->key;
}

}  // namespace

void build_paired(const SectionInputs& in, Table& t) {
  struct Row {
    const ExperimentResult* experiment;
    const RunResult* run;
    const Comparison* comparison;  // null for the baseline and any run not compared
  };
  std::vector<Row> rows;
  for (const auto& e : in.experiments)
    for (const auto& run : e.runs) {
      // Δ and improvement come from the file's comparisons (the trainer's own numbers).
      const Comparison* cmp = nullptr;
      for (const auto& c : e.comparisons)
        if (c.variant == run.variant) cmp = &c;
      rows.push_back({&e, &run, cmp});
    }
  const Columns<Row> columns = {
      {{"experiment", "experiment"}, [](const Row& r) { return Cell(r.experiment->label); }},
      {{"seq_len", "seq_len"}, [](const Row& r) { return Cell(r.experiment->seq_len()); }},
      {{"seed", "seed"},
       [](const Row& r) { return r.run->seed ? Cell(static_cast<std::int64_t>(*r.run->seed)) : Cell(); }},
      {{"variant", "variant"}, [](const Row& r) { return Cell(r.run->variant); }},
      {{"lambda", "λ"}, [](const Row& r) { return Cell(variant_group_label(*r.experiment, *r.run)); }},
      {{"val_loss", "final val loss", 4}, [](const Row& r) { return Cell(r.run->final.val_loss); }},
      {{"val_loss_sem", "± SEM", 4}, [](const Row& r) { return opt_cell(r.run->final.val_loss_sem); }},
      {{"delta_val_loss", "Δ vs baseline", 4, true},
       [](const Row& r) { return r.comparison ? Cell(r.comparison->delta_val_loss) : Cell(); }},
      {{"improvement_pct", "improvement %", 2, true},
       [](const Row& r) { return r.comparison ? Cell(r.comparison->improvement_pct) : Cell(); }},
  };
  fill_table(t, columns, rows);
}

void build_by_lambda(const SectionInputs& in, Table& t) {
  Columns<GroupRow> head = {
      {{"baseline", "baseline"}, baseline_cell},
      {{"lambda", "λ"}, lambda_cell},
      {{"steps", "steps"}, steps_cell},
      {{"seq_lens", "seq_len(s)"}, [](const GroupRow& r) { return Cell(number_list(r.group->seq_lens)); }},
  };
  append(head, setup_columns<GroupRow>(group_key));
  fill_table(t, with_group_stats(head), group_rows(in.grouping.pooled));
}

void build_by_seq_len(const SectionInputs& in, Table& t) {
  Columns<GroupRow> head = {
      {{"seq_len", "seq_len"}, [](const GroupRow& r) { return Cell(*r.group->key.seq_len); }},
      {{"batch_size", "batch"}, [](const GroupRow& r) { return Cell(*r.group->key.batch_size); }},
      {{"tokens_per_step", "tokens/step"},
       [](const GroupRow& r) { return Cell(*r.group->key.batch_size * *r.group->key.seq_len); }},
      {{"steps", "steps"}, steps_cell},
      {{"baseline", "baseline"}, baseline_cell},
      {{"lambda", "λ"}, lambda_cell},
  };
  append(head, setup_columns<GroupRow>(group_key));
  auto columns = with_group_stats(head);
  // Each arm's mean final val loss: at a fixed token budget a length changes both arms' loss, not only the
  // gap.
  for (int side = 0; side < 2; ++side)
    columns.push_back(
        {{side == 0 ? "base_val_loss" : "var_val_loss", side == 0 ? "base val loss" : "variant val loss", 4},
         [side](const GroupRow& r) {
           std::vector<double> losses;
           for (const auto& p : r.group->pairs)
             losses.push_back((side == 0 ? p.baseline : p.variant)->final.val_loss);
           return avg(losses);
         }});
  fill_table(t, columns, group_rows(in.grouping.per_len));
}

namespace {

// Validation loss change per 100 steps over the last two evaluations (negative: still falling).
std::optional<double> final_val_trend(const RunResult& run) {
  if (run.eval.size() < 2) return std::nullopt;
  const EvalPoint& last = run.eval[run.eval.size() - 1];
  const EvalPoint& prev = run.eval[run.eval.size() - 2];
  if (last.step <= prev.step) return std::nullopt;
  return 100.0 * (last.val_loss - prev.val_loss) / static_cast<double>(last.step - prev.step);
}

// Per seed the means over its pairs (several when a group pools keys it does not name) of baseline and
// variant, then over the seeds: both means and the paired interval of variant − baseline, one value per seed
// as Group::deltas has them.
struct SeedMeans {
  double base_mean, var_mean;
  PairedInterval delta;
};
SeedMeans over_seeds(const std::map<std::uint64_t, std::vector<std::pair<double, double>>>& seeds) {
  std::vector<double> base, var, delta;
  for (const auto& [seed, values] : seeds) {
    std::vector<double> b, v;
    for (const auto& [bv, vv] : values) {
      b.push_back(bv);
      v.push_back(vv);
    }
    base.push_back(mean(b));
    var.push_back(mean(v));
    delta.push_back(mean(v) - mean(b));
  }
  return {mean(base), mean(var), paired_interval(delta)};
}

}  // namespace

// One row per (λ, budget): the improvement with its CI next to how long the runs trained (tokens, epochs
// of the train split) and whether they overfit (train–val gap) or were still learning (val trend).
void build_by_budget(const SectionInputs& in, Table& t) {
  struct Row : GroupRow {
    std::set<std::int64_t> tokens;
    std::set<double> epochs;
    std::vector<double> val[2], gap[2], trend[2];  // [0] baseline, [1] variant
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.pooled) {
    Row row{{&g, stats_of(g)}, {}, {}, {}, {}, {}};
    for (const auto& p : g.pairs) {
      const ExperimentResult& e = *p.experiment;
      const std::int64_t run_tokens =
          std::int64_t{e.config.train.steps} * e.config.train.batch_size * e.seq_len();
      row.tokens.insert(run_tokens);
      if (auto train_tokens = e.train_tokens())
        row.epochs.insert(static_cast<double>(run_tokens) / static_cast<double>(*train_tokens));
      const RunResult* runs[2] = {p.baseline, p.variant};
      for (int i = 0; i < 2; ++i) {
        row.val[i].push_back(runs[i]->final.val_loss);
        if (runs[i]->final.train_loss)
          row.gap[i].push_back(runs[i]->final.val_loss - *runs[i]->final.train_loss);
        if (auto tr = final_val_trend(*runs[i])) row.trend[i].push_back(*tr);
      }
    }
    rows.push_back(std::move(row));
  }
  Columns<Row> head = {
      {{"baseline", "baseline"}, [](const Row& r) { return baseline_cell(r); }},
      {{"lambda", "λ"}, [](const Row& r) { return lambda_cell(r); }},
      {{"steps", "steps"}, [](const Row& r) { return steps_cell(r); }},
  };
  append(head, setup_columns<Row>(group_key));
  append(head, {{{"tokens", "tokens per run"},
                 [](const Row& r) { return r.tokens.size() == 1 ? Cell(*r.tokens.begin()) : Cell(); }},
                {{"epochs", "epochs", 2},
                 [](const Row& r) { return r.epochs.size() == 1 ? Cell(*r.epochs.begin()) : Cell(); }}});
  auto columns = with_group_stats(std::move(head));
  for (int i = 0; i < 2; ++i) {
    const std::string s = i == 0 ? "base" : "var", who = i == 0 ? "base " : "variant ";
    append(columns,
           {{{s + "_val_loss", who + "val loss", 4}, [i](const Row& r) { return avg(r.val[i]); }},
            {{s + "_gap", who + "val − train", 4, true}, [i](const Row& r) { return avg(r.gap[i]); }},
            {{s + "_val_trend", who + "val Δ/100 steps at end", 4, true},
             [i](const Row& r) { return avg(r.trend[i]); }}});
  }
  fill_table(t, columns, rows);
}

// The paired validation-loss difference along training (the fixed eval windows), mean and 95% CI over
// seeds at every evaluation step that all pairs of the group share.
void build_eval_curve(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    std::int64_t step;
    double base_mean, var_mean;
    PairedInterval delta;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.pooled) {
    // step -> seed -> (baseline, variant) of each of the seed's pairs (several when g pools lengths)
    std::map<std::int64_t, std::map<std::uint64_t, std::vector<std::pair<double, double>>>> at_step;
    std::map<std::int64_t, std::size_t> pairs_at;  // step -> pairs that evaluated at it
    for (const auto& p : g.pairs) {
      std::map<std::int64_t, double> base;
      for (const auto& e : p.baseline->eval) base[e.step] = e.val_loss;
      for (const auto& e : p.variant->eval)
        if (auto it = base.find(e.step); it != base.end()) {
          at_step[e.step][pair_seed(p)].push_back({it->second, e.val_loss});
          ++pairs_at[e.step];
        }
    }
    for (const auto& [step, seeds] : at_step) {
      if (pairs_at[step] != g.pairs.size()) continue;  // a step some pairs lack would change the seed set
      const SeedMeans m = over_seeds(seeds);
      rows.push_back({&g, step, m.base_mean, m.var_mean, m.delta});
    }
  }
  Columns<Row> columns = group_head_columns<Row>([](const Row& r) -> const Group& { return *r.group; });
  append(columns,
         {
             {{"step", "step"}, [](const Row& r) { return Cell(r.step); }},
             {{"n", "n"}, [](const Row& r) { return count_cell(r.delta.n); }},
             {{"base_val_loss", "base val loss", 4}, [](const Row& r) { return Cell(r.base_mean); }},
             {{"var_val_loss", "variant val loss", 4}, [](const Row& r) { return Cell(r.var_mean); }},
         });
  append(columns, delta_ci_columns<Row>("mean_delta", "mean Δ", 4,
                                        [](const Row& r) -> const PairedInterval& { return r.delta; }));
  fill_table(t, columns, rows);
}

// The paired validation-loss difference per position bucket of the final evaluation (results.json's
// loss_by_position): per length group, bucket and seed the mean over the seed's pairs of variant − baseline,
// then mean and 95% CI over seeds. A gain that grows with position is a gain from context.
void build_loss_by_position(const SectionInputs& in, Table& t) {
  struct Row {
    const Group* group;
    PositionBucket positions;
    double base_mean, var_mean;
    PairedInterval delta;
  };
  std::vector<Row> rows;
  for (const auto& g : in.grouping.per_len) {  // buckets depend on T, so never pooled over lengths
    // bucket -> seed -> (baseline, variant) of each of the seed's pairs (several when g pools keys it does
    // not name, as Group::deltas averages them)
    std::map<std::pair<std::int64_t, std::int64_t>,
             std::map<std::uint64_t, std::vector<std::pair<double, double>>>>
        at_bucket;
    std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> pairs_at;  // bucket -> pairs that have it
    for (const auto& p : g.pairs) {
      std::map<std::pair<std::int64_t, std::int64_t>, double> base;
      for (const auto& b : p.baseline->final.loss_by_position)
        base[{b.positions.first, b.positions.last}] = b.loss;
      for (const auto& b : p.variant->final.loss_by_position)
        if (auto it = base.find({b.positions.first, b.positions.last}); it != base.end()) {
          at_bucket[it->first][pair_seed(p)].push_back({it->second, b.loss});
          ++pairs_at[it->first];
        }
    }
    for (const auto& [bucket, seeds] : at_bucket) {
      if (pairs_at[bucket] != g.pairs.size()) continue;  // a bucket some pairs lack would change the seeds
      const SeedMeans m = over_seeds(seeds);
      rows.push_back({&g, {bucket.first, bucket.second}, m.base_mean, m.var_mean, m.delta});
    }
  }
  auto group_of = [](const Row& r) -> const Group& { return *r.group; };
  Columns<Row> columns = group_head_columns<Row>(group_of);
  append(columns, length_columns<Row>([](const Row& r) -> const GroupKey& { return r.group->key; }));
  append(columns,
         {
             {{"first", "from position"}, [](const Row& r) { return Cell(r.positions.first); }},
             {{"last", "to position"}, [](const Row& r) { return Cell(r.positions.last); }},
             {{"n", "n"}, [](const Row& r) { return count_cell(r.delta.n); }},
             {{"base_val_loss", "base val loss", 4}, [](const Row& r) { return Cell(r.base_mean); }},
             {{"var_val_loss", "variant val loss", 4}, [](const Row& r) { return Cell(r.var_mean); }},
         });
  append(columns, delta_ci_columns<Row>("mean_delta", "mean Δ", 4,
                                        [](const Row& r) -> const PairedInterval& { return r.delta; }));
  fill_table(t, columns, rows);
}

namespace {

std::string lambda_text(const GroupKey& k) {
  return k.has_lambda ? "λ=" + k.label : k.label;
}

std::string verdict_line(const Group& g, const GroupStats& s, const std::string& scope) {
  const PairedInterval& d = s.delta;
  std::string line = lambda_text(g.key) + " vs " + g.key.baseline + ", " + scope + ": " +
                     loss_delta_verdict(d) + " — mean Δ " + fixed(d.mean, 4, true) + " (";
  if (d.defined())
    line += "95% CI [" + fixed(*d.low, 4, true) + ", " + fixed(*d.high, 4, true) + "]";
  else
    line += "95% CI undefined with a single seed";
  line += "), improvement " + fixed(s.improvement.mean, 2, true) + "%, " + std::to_string(s.favouring) + "/" +
          std::to_string(d.n) + " seeds favour the variant";
  return line;
}

// Which final val loss of a pair a side of a selection reads: its baseline's or its variant's.
enum class Arm { kBaseline, kVariant };
double final_loss(const Pair& p, Arm arm) {
  return (arm == Arm::kBaseline ? p.baseline : p.variant)->final.val_loss;
}

// A row of a selection table: two sides, each with the candidates (groups) it chooses its best among, and the
// selection.
struct SelectionRow {
  GroupKey key;
  std::vector<const Group*> baseline_candidates, variant_candidates;
  LrSelection selection;
  std::string setup;  // setup_effect: the setup judged against the paper's
  std::string arm;    // setup_effect: the arm judged in both

  const Group& best_baseline() const { return *baseline_candidates[selection.best_baseline]; }
  const Group& best_variant() const { return *variant_candidates[selection.best_variant]; }
};

// A selection between two sides, each choosing its best candidate by the mean over seeds of one arm's final
// val loss: the baseline and the variant among one comparison's lrs or (setup, lr)s, or one arm in the
// paper's setup and in another. Only the seeds that have every candidate of both sides count: a seed without
// one would bias the means. select_learning_rates does not care what a candidate is.
LrSelection select_between(const std::vector<const Group*>& baseline_candidates, Arm baseline_arm,
                           const std::vector<const Group*>& variant_candidates, Arm variant_arm) {
  // seed -> per candidate the side's loss
  std::map<std::uint64_t, std::map<std::size_t, double>> base_at, var_at;
  for (std::size_t i = 0; i < baseline_candidates.size(); ++i)
    for (const auto& p : baseline_candidates[i]->pairs)
      base_at[pair_seed(p)][i] = final_loss(p, baseline_arm);
  for (std::size_t i = 0; i < variant_candidates.size(); ++i)
    for (const auto& p : variant_candidates[i]->pairs) var_at[pair_seed(p)][i] = final_loss(p, variant_arm);
  std::vector<std::vector<double>> baseline, variant;
  for (const auto& [seed, at] : base_at) {
    const auto other = var_at.find(seed);
    if (at.size() != baseline_candidates.size() || other == var_at.end() ||
        other->second.size() != variant_candidates.size())
      continue;
    baseline.emplace_back();
    variant.emplace_back();
    for (const auto& [i, loss] : at) baseline.back().push_back(loss);
    for (const auto& [i, loss] : other->second) variant.back().push_back(loss);
  }
  return select_learning_rates(baseline, variant);
}

// The baseline and the variant of one comparison, each at its best among the same candidates.
SelectionRow select_arms(const GroupKey& key, const std::vector<const Group*>& candidates) {
  SelectionRow row{key, candidates, candidates, {}, {}, {}};
  row.selection = select_between(candidates, Arm::kBaseline, candidates, Arm::kVariant);
  return row;
}

// A selection's cell, empty when no seed has every candidate (nothing was selected).
template <class Get>
std::function<Cell(const SelectionRow&)> selected(Get get) {
  return [get](const SelectionRow& r) { return r.selection.in_sample.n > 0 ? Cell(get(r)) : Cell(); };
}

// The columns every selection table ends with: each side's loss at its best (the sides named `baseline` and
// `variant`), the variant − baseline Δ at the two bests in-sample and held out, and the held-out verdict.
Columns<SelectionRow> selection_result_columns(const std::string& baseline = "baseline",
                                               const std::string& variant = "variant") {
  using R = SelectionRow;
  return {
      {{"baseline_loss", baseline + " val loss at its best", 4},
       selected([](const R& r) { return r.selection.baseline_means[r.selection.best_baseline]; })},
      {{"variant_loss", variant + " val loss at its best", 4},
       selected([](const R& r) { return r.selection.variant_means[r.selection.best_variant]; })},
      {{"best_delta", "Δ best vs best (in-sample)", 4, true},
       selected([](const R& r) { return r.selection.in_sample.mean; })},
      {{"best_delta_ci_low", "95% CI low", 4, true},
       [](const R& r) { return opt_cell(r.selection.in_sample.low); }},
      {{"best_delta_ci_high", "95% CI high", 4, true},
       [](const R& r) { return opt_cell(r.selection.in_sample.high); }},
      {{"held_out_delta", "Δ best vs best (held out)", 4, true},
       [](const R& r) { return r.selection.held_out.n > 0 ? Cell(r.selection.held_out.mean) : Cell(); }},
      {{"held_out_ci_low", "95% CI low", 4, true},
       [](const R& r) { return opt_cell(r.selection.held_out.low); }},
      {{"held_out_ci_high", "95% CI high", 4, true},
       [](const R& r) { return opt_cell(r.selection.held_out.high); }},
      {{"verdict", "verdict (held out)"},
       [](const R& r) { return Cell(loss_delta_verdict(r.selection.held_out)); }},
  };
}

// The columns both selection tables start with: the comparison (its model column without a setup when the
// setup is chosen).
Columns<SelectionRow> selection_key_columns() {
  using R = SelectionRow;
  auto key = [](const R& r) -> const GroupKey& { return r.key; };
  return {
      {{"baseline", "baseline"}, [](const R& r) { return Cell(r.key.baseline); }},
      {{"lambda", "λ"}, [](const R& r) { return Cell(r.key.label); }},
      of_key<R>(model_column(), key),
      of_key<R>(attention_impl_column(), key),
      {{"steps", "steps"}, [](const R& r) { return Cell(r.key.steps); }},
      {{"seq_len", "seq_len"}, [](const R& r) { return Cell(*r.key.seq_len); }},
  };
}

}  // namespace

// Which learning rate does each arm want, and is the variant better when each arm has its own best? Per lr
// series with two or more lrs, from the seeds that have every lr: each arm's mean final val loss per lr, its
// best lr, and the paired variant − baseline difference at the two best lrs, in-sample and held out (the lrs
// chosen without the seed they are evaluated on; xsa/stats/stats.h select_learning_rates).
void build_lr_selection(const SectionInputs& in, Table& t) {
  using R = SelectionRow;
  std::vector<R> rows;
  for (const GroupSeries& series : lr_series(in.grouping.per_len))
    if (series.groups.size() >= 2) rows.push_back(select_arms(series.key, series.groups));
  auto lr_list = [](const R& r) {
    std::string s;
    for (const Group* g : r.baseline_candidates) s += (s.empty() ? "" : " ") + shortest(g->key.lr);
    return Cell(s);
  };
  // An optimum is known only when a worse lr lies on both sides of it (the series is in increasing lr): which
  // arms' best lrs are, so a grid that must grow says so.
  auto bracketed = [](const R& r) {
    auto inside = [&r](std::size_t i) { return i > 0 && i + 1 < r.baseline_candidates.size(); };
    const bool base = inside(r.selection.best_baseline), var = inside(r.selection.best_variant);
    return std::string(base && var ? "both" : base ? "baseline only" : var ? "variant only" : "neither");
  };
  Columns<R> columns = selection_key_columns();
  append(columns, {
                      {{"lrs", "lrs"}, lr_list},
                      {{"n", "n"}, [](const R& r) { return count_cell(r.selection.in_sample.n); }},
                      {{"best_lr_baseline", "best lr, baseline", Column::kShortest},
                       selected([](const R& r) { return r.best_baseline().key.lr; })},
                      {{"best_lr_variant", "best lr, variant", Column::kShortest},
                       selected([](const R& r) { return r.best_variant().key.lr; })},
                      {{"bracketed", "best lr bracketed"}, selected(bracketed)},
                  });
  append(columns, selection_result_columns());
  fill_table(t, columns, rows);
}

namespace {

// The comparisons trained with two or more baseline setups (question 9): per comparison (one λ, model shape,
// budget, length) its groups across setups and lrs, in (setup, lr) order; the key without setup and lr.
std::vector<GroupSeries> setup_series(const std::vector<Group>& per_len) {
  auto series = series_along(
      per_len,
      [](GroupKey& k) {
        k.setup.clear();
        k.lr = 0;
        k.params = 0;  // setups differ in parameters (QK-norm's gains, the gate's projection)
      },
      [](const GroupKey&) { return 0.0; });
  std::vector<GroupSeries> out;
  for (auto& s : series) {
    std::stable_sort(s.groups.begin(), s.groups.end(), [](const Group* a, const Group* b) {
      return std::tie(a->key.setup, a->key.lr) < std::tie(b->key.setup, b->key.lr);
    });
    if (s.groups.front()->key.setup != s.groups.back()->key.setup) out.push_back(std::move(s));
  }
  return out;
}

std::set<std::string> setups_of(const std::vector<const Group*>& groups) {
  std::set<std::string> setups;
  for (const Group* g : groups) setups.insert(g->key.setup);
  return setups;
}

}  // namespace

// Question 9's selection across baseline setups: per comparison trained with two or more baseline setups
// (positions, embedding norm, QK-norm, output gate, warmup), every (setup, lr) group is a candidate, and each
// arm gets its own best one: the variant judged against the baseline's best configuration, not its default,
// and held out as in lr_selection.
void build_setup_selection(const SectionInputs& in, Table& t) {
  using R = SelectionRow;
  std::vector<R> rows;
  for (const GroupSeries& s : setup_series(in.grouping.per_len)) rows.push_back(select_arms(s.key, s.groups));
  Columns<R> columns = selection_key_columns();
  append(columns,
         {
             {{"setups", "setups"},
              [](const R& r) {
                return Cell(static_cast<std::int64_t>(setups_of(r.baseline_candidates).size()));
              }},
             {{"candidates", "setups × lrs"},
              [](const R& r) { return Cell(static_cast<std::int64_t>(r.baseline_candidates.size())); }},
             {{"n", "n"}, [](const R& r) { return count_cell(r.selection.in_sample.n); }},
             {{"best_setup_baseline", "best setup, baseline"},
              selected([](const R& r) { return setup_name(r.best_baseline().key.setup); })},
             {{"best_lr_baseline", "at lr", Column::kShortest},
              selected([](const R& r) { return r.best_baseline().key.lr; })},
             {{"best_setup_variant", "best setup, variant"},
              selected([](const R& r) { return setup_name(r.best_variant().key.setup); })},
             {{"best_lr_variant", "at lr", Column::kShortest},
              selected([](const R& r) { return r.best_variant().key.lr; })},
         });
  append(columns, selection_result_columns());
  fill_table(t, columns, rows);
}

// Does a setup help each arm, and so do XSA and a stabiliser stack? Per comparison trained in the paper's
// setup and others, per other setup and arm: the arm in that setup at its best lr against the same arm in the
// paper's setup at its best, paired per seed, in-sample and held out as in lr_selection (negative: the setup
// helps the arm). XSA and a stabiliser stack when the stabiliser helps XSA too and XSA still beats SA with it
// (lr_selection's row of that setup).
void build_setup_effect(const SectionInputs& in, Table& t) {
  using R = SelectionRow;
  std::vector<R> rows;
  for (const GroupSeries& s : setup_series(in.grouping.per_len)) {
    std::map<std::string, std::vector<const Group*>> by_setup;  // in lr order
    for (const Group* g : s.groups) by_setup[g->key.setup].push_back(g);
    const auto paper = by_setup.find("");
    if (paper == by_setup.end()) continue;  // nothing to judge a setup against
    for (const auto& [setup, groups] : by_setup) {
      if (setup.empty()) continue;
      for (const Arm arm : {Arm::kBaseline, Arm::kVariant})
        rows.push_back({s.key, paper->second, groups, select_between(paper->second, arm, groups, arm), setup,
                        arm == Arm::kBaseline ? s.key.baseline : lambda_text(s.key)});
    }
  }
  Columns<R> columns = selection_key_columns();
  append(columns, {
                      {{"setup", "setup"}, [](const R& r) { return Cell(r.setup); }},
                      {{"arm", "arm"}, [](const R& r) { return Cell(r.arm); }},
                      {{"n", "n"}, [](const R& r) { return count_cell(r.selection.in_sample.n); }},
                      {{"best_lr_paper", "best lr, paper's setup", Column::kShortest},
                       selected([](const R& r) { return r.best_baseline().key.lr; })},
                      {{"best_lr_setup", "best lr, setup", Column::kShortest},
                       selected([](const R& r) { return r.best_variant().key.lr; })},
                  });
  append(columns, selection_result_columns("paper's setup", "setup"));
  fill_table(t, columns, rows);
}

// setup_effect at one lr instead of each side's best: per comparison trained in the paper's setup and
// others, per other setup, lr both trained, and arm, the arm in the setup against itself in the paper's
// setup, paired per seed (negative: the setup helps the arm there). What a stabiliser does at a given lr,
// e.g. a longer warmup at the lrs where SA degrades, which a best-vs-best comparison cannot show when the
// setup was trained at a few lrs only.
void build_setup_effect_by_lr(const SectionInputs& in, Table& t) {
  using R = SelectionRow;
  std::vector<R> rows;
  for (const GroupSeries& s : setup_series(in.grouping.per_len)) {
    std::map<std::string, std::map<double, const Group*>> by_setup;  // setup -> lr -> group
    for (const Group* g : s.groups) by_setup[g->key.setup][g->key.lr] = g;
    const auto paper = by_setup.find("");
    if (paper == by_setup.end()) continue;  // nothing to judge a setup against
    for (const auto& [setup, at_lr] : by_setup) {
      if (setup.empty()) continue;
      for (const auto& [lr, group] : at_lr) {
        const auto in_paper = paper->second.find(lr);
        if (in_paper == paper->second.end()) continue;
        const std::vector<const Group*> paper_side = {in_paper->second}, setup_side = {group};
        for (const Arm arm : {Arm::kBaseline, Arm::kVariant})
          rows.push_back({s.key, paper_side, setup_side, select_between(paper_side, arm, setup_side, arm),
                          setup, arm == Arm::kBaseline ? s.key.baseline : lambda_text(s.key)});
      }
    }
  }
  // One candidate a side: the in-sample Δ is the whole comparison (held out would repeat it).
  auto effect = [](const R& r) -> const stats::PairedInterval& { return r.selection.in_sample; };
  Columns<R> columns = selection_key_columns();
  append(
      columns,
      {
          {{"setup", "setup"}, [](const R& r) { return Cell(r.setup); }},
          {{"lr", "lr", Column::kShortest}, [](const R& r) { return Cell(r.best_variant().key.lr); }},
          {{"arm", "arm"}, [](const R& r) { return Cell(r.arm); }},
          {{"n", "n"}, [](const R& r) { return count_cell(r.selection.in_sample.n); }},
          {{"paper_loss", "paper's setup val loss", 4},
           selected([](const R& r) { return r.selection.baseline_means.front(); })},
          {{"setup_loss", "setup val loss", 4},
           selected([](const R& r) { return r.selection.variant_means.front(); })},
          {{"delta", "mean Δ (setup − paper's)", 4, true},
           selected([=](const R& r) { return effect(r).mean; })},
          {{"delta_ci_low", "95% CI low", 4, true}, [=](const R& r) { return opt_cell(effect(r).low); }},
          {{"delta_ci_high", "95% CI high", 4, true}, [=](const R& r) { return opt_cell(effect(r).high); }},
          {{"verdict", "verdict"}, [=](const R& r) { return Cell(loss_delta_verdict(effect(r))); }},
      });
  fill_table(t, columns, rows);
}

void build_verdicts(const SectionInputs& in, Table& t) {
  struct Row : GroupRow {
    std::string scope;
    std::optional<std::int64_t> seq_len;
    std::string scope_text;
  };
  std::vector<Row> rows;
  // Batch sizes, budgets, models, attention implementations and lrs are named only when the results hold
  // more than one of them, so the lines of two groups never read alike.
  std::set<std::int64_t> batches, budgets;
  std::set<std::string> models;
  std::set<AttentionImpl> impls;
  std::set<double> lrs;
  for (const auto& g : in.grouping.per_len) {
    if (g.key.batch_size) batches.insert(*g.key.batch_size);
    budgets.insert(g.key.steps);
    models.insert(model_with_setup(g.key));
    impls.insert(g.key.impl);
    lrs.insert(g.key.lr);
  }
  auto qualifiers = [&](const Group& g) {
    std::string out;
    if (batches.size() > 1 && g.key.batch_size) out += ", batch " + std::to_string(*g.key.batch_size);
    if (budgets.size() > 1) out += ", " + std::to_string(g.key.steps) + " steps";
    if (models.size() > 1) out += ", " + model_with_setup(g.key);
    if (impls.size() > 1) out += ", " + std::string(choice_name(g.key.impl)) + " attention";
    if (lrs.size() > 1) out += ", lr " + shortest(g.key.lr);
    return out;
  };
  for (const auto& g : in.grouping.per_len)
    rows.push_back({{&g, stats_of(g)},
                    "seq_len",
                    *g.key.seq_len,
                    "seq_len " + std::to_string(*g.key.seq_len) + qualifiers(g)});
  // A pooled line only adds information when it actually pools several sequence lengths.
  for (const auto& g : in.grouping.pooled)
    if (g.seq_lens.size() > 1)
      rows.push_back({{&g, stats_of(g)},
                      "pooled",
                      std::nullopt,
                      "pooled over seq_len " + number_list(g.seq_lens) + qualifiers(g)});
  Columns<Row> columns = {
      {{"scope", "scope"}, [](const Row& r) { return Cell(r.scope); }},
      {{"baseline", "baseline"}, [](const Row& r) { return baseline_cell(r); }},
      {{"lambda", "λ"}, [](const Row& r) { return lambda_cell(r); }},
      {{"steps", "steps"}, [](const Row& r) { return steps_cell(r); }},
      {{"seq_len", "seq_len"}, [](const Row& r) { return r.seq_len ? Cell(*r.seq_len) : Cell(); }},
      of_key<Row>(batch_column(), group_key),
  };
  append(columns, setup_columns<Row>(group_key));
  append(columns,
         {
             {{"n", "n"}, [](const Row& r) { return count_cell(r.stats.delta.n); }},
             {{"verdict", "verdict"}, [](const Row& r) { return Cell(loss_delta_verdict(r.stats.delta)); }},
             {{"text", "text"},
              [](const Row& r) { return Cell(verdict_line(*r.group, r.stats, r.scope_text)); }},
         });
  fill_table(t, columns, rows);
}

void build_notes(const SectionInputs& in, Table& t) {
  const Columns<std::string> columns = {
      {{"text", "text"}, [](const std::string& note) { return Cell(note); }}};
  fill_table(t, columns, in.grouping.notes);
}

}  // namespace xsa::report
