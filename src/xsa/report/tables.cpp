#include "xsa/report/tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "xsa/report/stats.h"
#include "xsa/util/error.h"

using nlohmann::json;

namespace xsa::report {

Format parse_format(const std::string& name) {
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  throw InputError("--format: expected markdown, csv or json, got \"" + name + "\"");
}

std::size_t Table::column(const std::string& column_key) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].key == column_key) return i;
  throw std::out_of_range("table " + key + " has no column " + column_key);
}

const Table& Report::table(const std::string& key) const {
  for (const auto& t : tables)
    if (t.key == key) return t;
  throw std::out_of_range("report has no table " + key);
}

namespace {

// ---- analysis ------------------------------------------------------------------------------------------

// One baseline/variant pair of one experiment (one seed of one grid point).
struct Pair {
  const ExperimentResult* experiment;
  const RunResult* baseline;
  const RunResult* variant;
  const Comparison* comparison;
};

// Groups sort numerically by λ, variants without a fixed λ (learned, gate) after the numbers.
struct GroupKey {
  std::string baseline;
  bool has_lambda = false;
  double lambda = 0;
  std::string label;
  std::int64_t steps = 0;                  // the training budget (train.steps): never pooled
  std::optional<std::int64_t> seq_len;     // absent: pooled over sequence lengths
  std::optional<std::int64_t> batch_size;  // with seq_len: tokens per step tell the two length designs apart

  bool operator<(const GroupKey& o) const {
    // has_lambda first so numbers come before names; then the budget; seq_len last.
    return std::make_tuple(baseline, !has_lambda, lambda, label, steps, seq_len, batch_size) <
           std::make_tuple(o.baseline, !o.has_lambda, o.lambda, o.label, o.steps, o.seq_len, o.batch_size);
  }
};

// An integer of the experiment's resolved config (0 when absent: results written by hand or older tools).
std::int64_t config_integer(const ExperimentResult& e, const char* section, const char* key) {
  auto sec = e.config.find(section);
  if (sec == e.config.end() || !sec->is_object()) return 0;
  auto value = sec->find(key);
  return value != sec->end() && value->is_number_integer() ? value->get<std::int64_t>() : 0;
}
std::int64_t train_steps(const ExperimentResult& e) {
  return config_integer(e, "train", "steps");
}
std::int64_t batch_size(const ExperimentResult& e) {
  return config_integer(e, "train", "batch_size");
}

struct Group {
  GroupKey key;
  std::vector<Pair> pairs;
  std::set<std::int64_t> seq_lens;
  std::vector<double> deltas() const {
    std::vector<double> out;
    for (const auto& p : pairs) out.push_back(p.comparison->delta_val_loss);
    return out;
  }
  std::vector<double> improvements() const {
    std::vector<double> out;
    for (const auto& p : pairs) out.push_back(p.comparison->improvement_pct);
    return out;
  }
};

std::vector<Pair> collect_pairs(const std::vector<ExperimentResult>& experiments) {
  std::vector<Pair> pairs;
  for (const auto& e : experiments)
    for (const auto& c : e.comparisons)
      pairs.push_back({&e, e.find_run(c.baseline), e.find_run(c.variant), &c});
  return pairs;
}

// The seed of a pair: the config's seed; results without one may still name it per run.
std::optional<std::uint64_t> pair_seed(const Pair& p) {
  return p.experiment->seed ? p.experiment->seed : p.baseline->seed;
}

GroupKey key_for(const Pair& p, bool by_seq_len) {
  GroupKey k;
  k.baseline = p.baseline->variant;
  k.has_lambda = p.variant->spec.lambda.has_value();
  k.lambda = p.variant->spec.lambda.value_or(0);
  k.label = variant_group_label(*p.experiment, *p.variant);
  k.steps = train_steps(*p.experiment);
  if (by_seq_len) {
    k.seq_len = p.experiment->seq_len;
    k.batch_size = batch_size(*p.experiment);
  }
  return k;
}

// Where an experiment came from, for notes: the folder of its results.json, else its label or name.
std::string experiment_place(const ExperimentResult& e) {
  if (!e.source.empty()) {
    const std::size_t slash = e.source.find_last_of('/');
    return slash == std::string::npos ? e.source : e.source.substr(0, slash);
  }
  return e.label.empty() ? e.name : e.label;
}

// The same measurement read twice: two folders can hold the same run, e.g. the T=128 point of a length
// sweep and the 300-step budget sweep, whose configs differ only in the other variants they train. A pair
// repeats an earlier one when its group (baseline, variant, budget, length, batch), its seed, both final
// validation losses and their difference are identical, bit for bit; independent runs never match that way.
// The repeat is dropped with a note, so one seed never weighs twice in a mean, a CI or a trend.
std::vector<Pair> drop_repeated_pairs(const std::vector<Pair>& pairs, std::vector<std::string>& notes) {
  using Identity = std::tuple<GroupKey, std::optional<std::uint64_t>, double, double, double>;
  std::map<Identity, const Pair*> first_of;
  struct Repeat {
    const ExperimentResult* repeating;
    const ExperimentResult* first;
    std::vector<std::string> comparisons;
  };
  std::vector<Repeat> repeats;  // in reading order, so the notes are deterministic
  std::vector<Pair> kept;
  for (const auto& p : pairs) {
    const Identity id{key_for(p, /*by_seq_len=*/true), pair_seed(p), p.baseline->final.val_loss,
                      p.variant->final.val_loss, p.comparison->delta_val_loss};
    auto [it, inserted] = first_of.emplace(id, &p);
    if (inserted) {
      kept.push_back(p);
      continue;
    }
    const ExperimentResult* first = it->second->experiment;
    auto r = std::find_if(repeats.begin(), repeats.end(),
                          [&](const Repeat& x) { return x.repeating == p.experiment && x.first == first; });
    if (r == repeats.end()) r = repeats.insert(repeats.end(), Repeat{p.experiment, first, {}});
    r->comparisons.push_back(p.baseline->variant + " vs " + p.variant->variant);
  }
  for (const auto& r : repeats) {
    std::string text = experiment_place(*r.repeating) + " repeats " + experiment_place(*r.first) + " (";
    for (std::size_t i = 0; i < r.comparisons.size(); ++i) text += (i ? ", " : "") + r.comparisons[i];
    text += ": same seed, same final losses); counted once";
    notes.push_back(text);
  }
  return kept;
}

// Sorted by key; for the by-seq_len table the caller re-sorts by sequence length first.
std::vector<Group> group_pairs(const std::vector<Pair>& pairs, bool by_seq_len) {
  std::map<GroupKey, Group> groups;
  for (const auto& p : pairs) {
    GroupKey k = key_for(p, by_seq_len);
    Group& g = groups[k];
    g.key = k;
    g.pairs.push_back(p);
    g.seq_lens.insert(p.experiment->seq_len);
  }
  std::vector<Group> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

Cell opt_cell(const std::optional<double>& v) {
  return v ? Cell(*v) : Cell();
}

// The mean, or an empty cell for no values.
Cell avg(const std::vector<double>& xs) {
  return xs.empty() ? Cell() : Cell(mean(xs));
}

std::string lambda_text(const GroupKey& k) {
  return k.has_lambda ? "λ=" + k.label : k.label;
}

std::string fixed(double v, int decimals, bool sign = false) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}

std::string number_list(const std::set<std::int64_t>& lens) {  // "64 128 256"
  std::string s;
  for (auto len : lens) s += (s.empty() ? "" : " ") + std::to_string(len);
  return s;
}

// ---- sections ------------------------------------------------------------------------------------------

Table paired_table(const std::vector<ExperimentResult>& experiments) {
  Table t;
  t.key = "paired";
  t.title = "Paired runs";
  t.columns = {{"experiment", "experiment"},
               {"seq_len", "seq_len"},
               {"seed", "seed"},
               {"variant", "variant"},
               {"lambda", "λ"},
               {"val_loss", "final val loss", 4},
               {"val_loss_sem", "± SEM", 4},
               {"delta_val_loss", "Δ vs baseline", 4, true},
               {"improvement_pct", "improvement %", 2, true}};
  for (const auto& e : experiments) {
    for (const auto& run : e.runs) {
      // Δ and improvement come from the file's comparisons (the trainer's own numbers); the baseline row
      // and any run not compared stay empty.
      const Comparison* cmp = nullptr;
      for (const auto& c : e.comparisons)
        if (c.variant == run.variant) cmp = &c;
      t.rows.push_back({e.label, e.seq_len, run.seed ? Cell(static_cast<std::int64_t>(*run.seed)) : Cell(),
                        run.variant, variant_group_label(e, run), run.final.val_loss,
                        opt_cell(run.final.val_loss_sem), cmp ? Cell(cmp->delta_val_loss) : Cell(),
                        cmp ? Cell(cmp->improvement_pct) : Cell()});
    }
  }
  return t;
}

std::vector<Column> group_stat_columns() {
  return {{"n", "n"},
          {"favouring", "seeds favouring variant"},
          {"mean_improvement_pct", "mean improvement %", 2, true},
          {"improvement_ci_low", "improvement 95% CI low", 2, true},
          {"improvement_ci_high", "improvement 95% CI high", 2, true},
          {"mean_delta", "mean Δ", 4, true},
          {"delta_ci_low", "Δ 95% CI low", 4, true},
          {"delta_ci_high", "Δ 95% CI high", 4, true},
          {"verdict", "verdict"}};
}

std::vector<Cell> group_stat_cells(const Group& g) {
  const auto deltas = g.deltas();
  const PairedInterval d = paired_interval(deltas);
  const PairedInterval imp = paired_interval(g.improvements());
  return {static_cast<std::int64_t>(d.n),
          static_cast<std::int64_t>(count_favouring_variant(deltas)),
          imp.mean,
          opt_cell(imp.low),
          opt_cell(imp.high),
          d.mean,
          opt_cell(d.low),
          opt_cell(d.high),
          verdict_name(verdict_for_loss_delta(d))};
}

Table by_lambda_table(const std::vector<Group>& groups) {
  Table t;
  t.key = "by_lambda";
  t.title = "By λ (paired over seeds, pooled over sequence lengths)";
  t.columns = {{"baseline", "baseline"}, {"lambda", "λ"}, {"steps", "steps"}, {"seq_lens", "seq_len(s)"}};
  for (auto& c : group_stat_columns()) t.columns.push_back(c);
  for (const auto& g : groups) {
    std::vector<Cell> row = {g.key.baseline, g.key.label, g.key.steps, number_list(g.seq_lens)};
    for (auto& c : group_stat_cells(g)) row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table by_seq_len_table(const std::vector<Group>& groups) {
  Table t;
  t.key = "by_seq_len";
  t.title = "By sequence length (paired over seeds)";
  t.columns = {{"seq_len", "seq_len"}, {"batch_size", "batch"},  {"tokens_per_step", "tokens/step"},
               {"steps", "steps"},     {"baseline", "baseline"}, {"lambda", "λ"}};
  for (auto& c : group_stat_columns()) t.columns.push_back(c);
  for (const auto& g : groups) {
    const std::int64_t batch = g.key.batch_size.value_or(0);  // 0: not in the results' config
    std::vector<Cell> row = {*g.key.seq_len,
                             batch > 0 ? Cell(batch) : Cell(),
                             batch > 0 ? Cell(batch * *g.key.seq_len) : Cell(),
                             g.key.steps,
                             g.key.baseline,
                             g.key.label};
    for (auto& c : group_stat_cells(g)) row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// ---- the length trend ----

// One line of the length question: the per-length groups of one baseline, λ and budget that share a design.
// Tokens per step fixed (batch = tokens / T): a tokens/step value that several lengths share. Batch fixed
// (tokens per step grow with T): a batch size that several lengths share. A length can belong to both (T=128
// at batch 32 is also 4,096 tokens/step); lengths in neither form one series per batch size. An empty design:
// the results' config has no batch size. scripts/plot_findings.py draws the same lines (length_series).
struct LengthSeries {
  std::string design;                // "4096 tokens/step" | "batch 32" | "" (batch size unknown)
  std::vector<const Group*> groups;  // one per sequence length, sorted by it
};

std::vector<LengthSeries> length_series(const std::vector<Group>& per_len) {
  // Buckets: the group key without its length and batch (per_len holds each (seq_len, batch) once).
  std::map<GroupKey, std::vector<const Group*>> buckets;
  for (const auto& g : per_len) {
    GroupKey k = g.key;
    k.seq_len.reset();
    k.batch_size.reset();
    buckets[k].push_back(&g);
  }
  std::vector<LengthSeries> out;
  auto add = [&](std::string design, std::vector<const Group*> groups) {
    std::sort(groups.begin(), groups.end(),
              [](const Group* a, const Group* b) { return *a->key.seq_len < *b->key.seq_len; });
    out.push_back({std::move(design), std::move(groups)});
  };
  for (const auto& [key, groups] : buckets) {
    std::map<std::int64_t, std::vector<const Group*>> by_tokens, by_batch, rest;
    for (const Group* g : groups) {
      const std::int64_t batch = g->key.batch_size.value_or(0);
      if (batch <= 0) continue;
      by_tokens[batch * *g->key.seq_len].push_back(g);
      by_batch[batch].push_back(g);
    }
    std::set<const Group*> placed;
    for (auto& [tokens, sel] : by_tokens)
      if (sel.size() >= 2) {
        add(std::to_string(tokens) + " tokens/step", sel);
        placed.insert(sel.begin(), sel.end());
      }
    for (auto& [batch, sel] : by_batch)
      if (sel.size() >= 2) {
        add("batch " + std::to_string(batch), sel);
        placed.insert(sel.begin(), sel.end());
      }
    for (const Group* g : groups)
      if (!placed.count(g)) rest[g->key.batch_size.value_or(0)].push_back(g);
    for (auto& [batch, sel] : rest) add(batch > 0 ? "batch " + std::to_string(batch) : "", sel);
  }
  return out;
}

// Least-squares slope of ys over xs (equal sizes, at least two distinct xs).
double least_squares_slope(const std::vector<double>& xs, const std::vector<double>& ys) {
  const double mx = mean(xs), my = mean(ys);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) * (xs[i] - mx);
  }
  return sxy / sxx;
}

// The verdict on the interval of a signed statistic over seeds: `above` when the interval lies above 0,
// `below` when below, else "within noise"; "undefined (n=K)" below two seeds.
std::string sign_verdict(const PairedInterval& ci, const std::string& above, const std::string& below) {
  if (!ci.defined()) return "undefined (n=" + std::to_string(ci.n) + ")";
  return *ci.low > 0 ? above : *ci.high < 0 ? below : "within noise";
}

// A trend over seeds: per seed, the least-squares slope of its improvement % over log2 x (so the unit is "per
// doubling of x"), from the seeds that have every x of the series, since a seed without every x would bias
// the slope (two different runs of one seed at one x average); then the mean slope with a Student t interval
// over seeds, like every other comparison here.
struct Trend {
  std::set<std::int64_t> xs;   // the x values of the series
  std::vector<double> slopes;  // one per seed with every x
  PairedInterval ci;
  std::int64_t falling() const {
    return std::count_if(slopes.begin(), slopes.end(), [](double s) { return s < 0; });
  }
  // "grows with <what>" / "shrinks with <what>" / "within noise" / "undefined (n=K)"
  std::string verdict(const std::string& what) const {
    return sign_verdict(ci, "grows with " + what, "shrinks with " + what);
  }
};

// A series' points per seed: for each seed that has every x, log2 x and its mean improvement % there, in
// increasing x.
struct SeedPoints {
  std::set<std::int64_t> xs;                                               // the known x values of the series
  std::vector<std::pair<std::vector<double>, std::vector<double>>> seeds;  // (log2 xs, improvements) per seed
};

template <typename XOf>
SeedPoints complete_seeds(const std::vector<const Group*>& series, XOf x_of) {
  SeedPoints out;
  std::map<std::uint64_t, std::map<std::int64_t, std::vector<double>>> by_seed;  // seed -> x -> improvements
  for (const Group* g : series) {
    const std::int64_t x = x_of(*g);
    if (x <= 0) continue;  // unknown (results without train.steps): no place on a log axis
    out.xs.insert(x);
    for (const auto& p : g->pairs)
      if (const auto seed = pair_seed(p)) by_seed[*seed][x].push_back(p.comparison->improvement_pct);
  }
  for (const auto& [seed, at] : by_seed) {
    if (at.size() != out.xs.size()) continue;
    std::vector<double> log_xs, ys;
    for (const auto& [x, improvements] : at) {
      log_xs.push_back(std::log2(static_cast<double>(x)));
      ys.push_back(mean(improvements));
    }
    out.seeds.emplace_back(std::move(log_xs), std::move(ys));
  }
  return out;
}

template <typename XOf>
Trend per_seed_trend(const std::vector<const Group*>& series, XOf x_of) {
  const SeedPoints points = complete_seeds(series, x_of);
  Trend trend;
  trend.xs = points.xs;
  for (const auto& [log_xs, ys] : points.seeds) trend.slopes.push_back(least_squares_slope(log_xs, ys));
  trend.ci = paired_interval(trend.slopes);
  return trend;
}

std::vector<Column> trend_columns(const std::string& falling_text, const std::string& slope_text) {
  return {{"n", "n"},
          {"falling", falling_text},
          {"slope", slope_text, 2, true},
          {"slope_ci_low", "95% CI low", 2, true},
          {"slope_ci_high", "95% CI high", 2, true},
          {"verdict", "verdict"}};
}

std::vector<Cell> trend_cells(const Trend& trend, const std::string& what) {
  return {static_cast<std::int64_t>(trend.ci.n),
          trend.falling(),
          trend.slopes.empty() ? Cell() : Cell(trend.ci.mean),
          opt_cell(trend.ci.low),
          opt_cell(trend.ci.high),
          trend.verdict(what)};
}

// Does the gain grow or shrink with context length? The per-seed trend over T of every length series
// (design). Seeds pair across lengths because a seed fixes the initial weights (the model does not depend on
// T with RoPE).
Table seq_len_trend_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "seq_len_trend";
  t.title = "Trend with sequence length (slope of the improvement over log2 T per seed, 95% CI over seeds)";
  t.empty_text = "_No variant has results at two or more sequence lengths._";
  t.columns = {{"baseline", "baseline"},
               {"lambda", "λ"},
               {"steps", "steps"},
               {"design", "design"},
               {"seq_lens", "seq_len(s)"}};
  for (auto& c : trend_columns("seeds whose gain falls with T", "improvement % per doubling of T"))
    t.columns.push_back(c);
  for (const LengthSeries& series : length_series(per_len)) {
    if (series.groups.size() < 2) continue;  // one length: no trend to speak of
    const Trend trend = per_seed_trend(series.groups, [](const Group& g) { return *g.key.seq_len; });
    if (trend.xs.size() < 2) continue;
    const Group& first = *series.groups.front();
    std::vector<Cell> row = {first.key.baseline, first.key.label, first.key.steps,
                             series.design.empty() ? Cell() : Cell(series.design), number_list(trend.xs)};
    for (auto& c : trend_cells(trend, "T")) row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// One series per group key without its budget (a variant at one length and batch), in per_len's order (by
// length, then key), its groups in increasing budget.
std::vector<std::pair<GroupKey, std::vector<const Group*>>> budget_series(const std::vector<Group>& per_len) {
  std::vector<std::pair<GroupKey, std::vector<const Group*>>> series;
  for (const auto& g : per_len) {
    GroupKey k = g.key;
    k.steps = 0;
    auto same = [&](const auto& s) { return !(s.first < k) && !(k < s.first); };
    auto it = std::find_if(series.begin(), series.end(), same);
    if (it == series.end()) it = series.insert(series.end(), {k, {}});
    it->second.push_back(&g);
  }
  for (auto& entry : series)
    std::sort(entry.second.begin(), entry.second.end(),
              [](const Group* a, const Group* b) { return a->key.steps < b->key.steps; });
  return series;
}

// The columns that name a budget series and the budgets a row covers, first in every table over
// budget_series.
std::vector<Column> budget_series_columns() {
  return {{"baseline", "baseline"},
          {"lambda", "λ"},
          {"seq_len", "seq_len"},
          {"batch", "batch"},
          {"budgets", "steps"}};
}

std::vector<Cell> budget_series_cells(const GroupKey& key, const std::string& budgets) {
  return {key.baseline, key.label, *key.seq_len,
          key.batch_size.value_or(0) > 0 ? Cell(*key.batch_size) : Cell(), budgets};
}

// Does the gain survive longer training? The per-seed trend over the training budget (train.steps) at one
// sequence length and batch. Seeds pair across budgets because a seed fixes the initial weights and the
// order of the batches; only the schedule (warmup + cosine over the budget) and its length differ.
Table budget_trend_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "budget_trend";
  t.title =
      "Trend with the training budget (slope of the improvement over log2 steps per seed, 95% CI over seeds)";
  t.empty_text = "_No variant has results at two or more training budgets._";
  t.columns = budget_series_columns();
  for (auto& c :
       trend_columns("seeds whose gain falls with the budget", "improvement % per doubling of steps"))
    t.columns.push_back(c);
  for (const auto& [key, groups] : budget_series(per_len)) {
    const Trend trend = per_seed_trend(groups, [](const Group& g) { return g.key.steps; });
    if (trend.xs.size() < 2) continue;  // one known budget: no trend to speak of
    std::vector<Cell> row = budget_series_cells(key, number_list(trend.xs));
    for (auto& c : trend_cells(trend, "the budget")) row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Does the budget trend bend? With three or more budgets, per seed: the slope of its improvement between the
// last two budgets minus the slope between the first two (each per doubling of steps), from the seeds that
// have every budget; the mean change with a t CI over seeds. A gain that shrinks ever more slowly has a
// negative first slope and a rising slope ("slope rises").
Table budget_trend_change_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "budget_trend_change";
  t.title =
      "Change of the budget trend (per seed, slope over the last interval of budgets minus slope over the "
      "first, per doubling of steps; 95% CI over seeds)";
  t.empty_text = "_No variant has results at three or more training budgets._";
  t.columns = budget_series_columns();
  t.columns.insert(t.columns.end(), {{"n", "n"},
                                     {"first_slope", "slope, first interval", 2, true},
                                     {"last_slope", "slope, last interval", 2, true},
                                     {"rising", "seeds whose slope rises"},
                                     {"change", "change of slope", 2, true},
                                     {"change_ci_low", "95% CI low", 2, true},
                                     {"change_ci_high", "95% CI high", 2, true},
                                     {"verdict", "verdict"}});
  for (const auto& [key, groups] : budget_series(per_len)) {
    const SeedPoints points = complete_seeds(groups, [](const Group& g) { return g.key.steps; });
    if (points.xs.size() < 3) continue;  // one interval: nothing to compare
    std::vector<double> first, last, change;
    for (const auto& [log_xs, ys] : points.seeds) {
      const std::size_t k = ys.size() - 1;
      first.push_back((ys[1] - ys[0]) / (log_xs[1] - log_xs[0]));
      last.push_back((ys[k] - ys[k - 1]) / (log_xs[k] - log_xs[k - 1]));
      change.push_back(last.back() - first.back());
    }
    const PairedInterval ci = paired_interval(change);
    const std::int64_t rising = std::count_if(change.begin(), change.end(), [](double c) { return c > 0; });
    std::vector<Cell> row = budget_series_cells(key, number_list(points.xs));
    row.insert(row.end(),
               {static_cast<std::int64_t>(ci.n), change.empty() ? Cell() : Cell(mean(first)),
                change.empty() ? Cell() : Cell(mean(last)), rising, change.empty() ? Cell() : Cell(ci.mean),
                opt_cell(ci.low), opt_cell(ci.high), sign_verdict(ci, "slope rises", "slope falls")});
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string verdict_line(const Group& g, const std::string& scope) {
  const auto deltas = g.deltas();
  const PairedInterval d = paired_interval(deltas);
  const PairedInterval imp = paired_interval(g.improvements());
  std::string line = lambda_text(g.key) + " vs " + g.key.baseline + ", " + scope + ": " +
                     verdict_name(verdict_for_loss_delta(d)) + " — mean Δ " + fixed(d.mean, 4, true) + " (";
  if (d.defined())
    line += "95% CI [" + fixed(*d.low, 4, true) + ", " + fixed(*d.high, 4, true) + "]";
  else
    line += "95% CI undefined with a single seed";
  line += "), improvement " + fixed(imp.mean, 2, true) + "%, " +
          std::to_string(count_favouring_variant(deltas)) + "/" + std::to_string(d.n) +
          " seeds favour the variant";
  return line;
}

Table verdict_table(const std::vector<Group>& pooled, const std::vector<Group>& per_len) {
  Table t;
  t.key = "verdicts";
  t.title = "Verdicts";
  t.as_list = true;
  t.columns = {{"scope", "scope"}, {"baseline", "baseline"}, {"lambda", "λ"}, {"seq_len", "seq_len"},
               {"n", "n"},         {"verdict", "verdict"},   {"text", "text"}};
  auto add = [&](const Group& g, Cell seq_len, const std::string& scope, const std::string& scope_text) {
    const PairedInterval d = paired_interval(g.deltas());
    t.rows.push_back({scope, g.key.baseline, g.key.label, std::move(seq_len), static_cast<std::int64_t>(d.n),
                      verdict_name(verdict_for_loss_delta(d)), verdict_line(g, scope_text)});
  };
  // Budgets are named only when the results hold more than one.
  std::set<std::int64_t> budgets;
  for (const auto& g : pooled) budgets.insert(g.key.steps);
  auto budget = [&](const Group& g) {
    return budgets.size() > 1 ? ", " + std::to_string(g.key.steps) + " steps" : std::string();
  };
  for (const auto& g : per_len)
    add(g, *g.key.seq_len, "seq_len", "seq_len " + std::to_string(*g.key.seq_len) + budget(g));
  // A pooled line only adds information when it actually pools several sequence lengths.
  for (const auto& g : pooled)
    if (g.seq_lens.size() > 1)
      add(g, Cell(), "pooled", "pooled over seq_len " + number_list(g.seq_lens) + budget(g));
  return t;
}

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

Table bias_table(const std::vector<Group>& per_len, BiasMoment moment) {
  Table t;
  const bool init = moment == BiasMoment::kInit;
  t.key = init ? "bias_init" : "bias";
  t.title = init ? "Bias metrics per layer at initialisation (step 0, mean ± 95% CI over seeds)"
                 : "Bias metrics per layer (final measurement, mean ± 95% CI over seeds)";
  t.empty_text = "_No bias metrics in these results._";
  t.columns = {{"seq_len", "seq_len"}, {"steps", "steps"}, {"baseline", "baseline"}, {"lambda", "λ"},
               {"layer", "layer"},     {"n", "n"},         {"step", "step"}};
  for (const char* side : {"base", "var"})
    for (const auto& m : kBiasMetrics) {
      const std::string key = std::string(side) + "_" + m.key;
      const std::string who = std::string(side) == "base" ? "base " : "variant ";
      t.columns.push_back({key, who + m.label, 3, false, key + "_ci"});
      t.columns.push_back({key + "_ci", who + m.label + " 95% CI ±", 3});
    }
  t.columns.push_back({"var_lambda_mean", "variant mean learned λ", 3});
  for (const auto& g : per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, moment))
        for (const auto& l : b->layers) layers.insert(l.layer);
    for (int layer : layers) {
      std::vector<double> base[kBiasMetricCount], var[kBiasMetricCount], learned;
      std::set<std::int64_t> steps;
      for (const auto& p : g.pairs) {
        const BiasPoint* vb = bias_at(*p.variant, moment);
        const LayerBias* v = find_layer(vb, layer);
        if (!v) continue;
        steps.insert(vb->step);
        for (std::size_t m = 0; m < kBiasMetricCount; ++m) var[m].push_back(v->*kBiasMetrics[m].member);
        for (double h : v->lambda_per_head) learned.push_back(h);
        if (const LayerBias* b = find_layer(bias_at(*p.baseline, moment), layer))
          for (std::size_t m = 0; m < kBiasMetricCount; ++m) base[m].push_back(b->*kBiasMetrics[m].member);
      }
      std::vector<Cell> row = {*g.key.seq_len,
                               g.key.steps,
                               g.key.baseline,
                               g.key.label,
                               static_cast<std::int64_t>(layer),
                               static_cast<std::int64_t>(var[0].size()),
                               steps.size() == 1 ? Cell(*steps.begin()) : Cell()};
      for (const auto* side : {base, var})
        for (std::size_t m = 0; m < kBiasMetricCount; ++m) {
          row.push_back(avg(side[m]));
          row.push_back(ci_half_width(side[m]));
        }
      row.push_back(avg(learned));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// How the bias metrics move with the training budget, paired by seed: for each two neighbouring budgets of a
// series (as budget_trend forms them) and each layer, per seed that has both, the final metric at the longer
// budget minus at the shorter, for the baseline and the variant; mean ± 95% t CI half-width over seeds. Seeds
// pair across budgets as in budget_trend (same initial weights and batch order), so this is sharper than
// comparing the two budgets' own intervals in the bias table.
Table bias_budget_change_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "bias_budget_change";
  t.title =
      "Change of the bias metrics between neighbouring budgets (per seed, final at the longer budget "
      "minus at the shorter; mean ± 95% CI over seeds)";
  t.empty_text =
      "_No seed has bias metrics of both the baseline and the variant at two neighbouring known training "
      "budgets._";
  t.columns = budget_series_columns();
  t.columns.push_back({"layer", "layer"});
  t.columns.push_back({"n", "n"});
  for (const char* side : {"base", "var"})
    for (const auto& m : kBiasMetrics) {
      const std::string key = std::string(side) + "_" + m.key + "_change";
      const std::string who = std::string(side) == "base" ? "base Δ " : "variant Δ ";
      t.columns.push_back({key, who + m.label, 3, true, key + "_ci"});
      t.columns.push_back({key + "_ci", who + m.label + " 95% CI ±", 3});
    }
  // side (0 base, 1 variant) -> metric -> values; PerSeed: seed -> layer -> that seed's pairs' values.
  using Sides = std::array<std::array<std::vector<double>, kBiasMetricCount>, 2>;
  using PerSeed = std::map<std::uint64_t, std::map<int, Sides>>;
  auto final_bias = [](const Group& g) {
    PerSeed out;
    for (const auto& p : g.pairs) {
      const auto seed = pair_seed(p);
      if (!seed) continue;
      const RunResult* runs[2] = {p.baseline, p.variant};
      for (int side = 0; side < 2; ++side)
        if (const BiasPoint* b = bias_at(*runs[side], BiasMoment::kFinal))
          for (const auto& l : b->layers)
            for (std::size_t m = 0; m < kBiasMetricCount; ++m)
              out[*seed][l.layer][side][m].push_back(l.*kBiasMetrics[m].member);
    }
    return out;
  };
  for (const auto& [key, groups] : budget_series(per_len)) {
    PerSeed b = final_bias(*groups[0]);  // each group's values, read once: the longer end becomes the shorter
    for (std::size_t i = 1; i < groups.size(); ++i) {
      const Group& shorter = *groups[i - 1];
      const Group& longer = *groups[i];
      const PerSeed a = std::exchange(b, final_bias(longer));
      if (shorter.key.steps <= 0) continue;  // unknown budget: no neighbour to speak of
      // A seed counts for a layer only when both runs measured it at both budgets, so n describes every
      // column.
      auto measured = [](const Sides& sides) { return !sides[0][0].empty() && !sides[1][0].empty(); };
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
      for (const auto& [layer, sides] : changes) {
        std::vector<Cell> row = budget_series_cells(
            key, std::to_string(shorter.key.steps) + " " + std::to_string(longer.key.steps));
        // Built in place: pushing a temporary Cell here makes g++ 14 warn (a false -Wmaybe-uninitialized).
        row.emplace_back(std::in_place_type<std::int64_t>, layer);
        row.emplace_back(std::in_place_type<std::int64_t>, sides[1][0].size());
        for (int side = 0; side < 2; ++side)
          for (std::size_t m = 0; m < kBiasMetricCount; ++m) {
            row.push_back(avg(sides[side][m]));
            row.push_back(ci_half_width(sides[side][m]));
          }
        t.rows.push_back(std::move(row));
      }
    }
  }
  return t;
}

// Per layer and head of the learned-λ and gate variants: the final λ (gate value), mean ± sample SD over
// seeds, and the layer's mean over heads.
Table learned_lambda_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "learned_lambda";
  t.title = "Learned λ / gate per layer and head (final measurement, mean ± SD over seeds)";
  t.empty_text = "_No learned λ or gate variants in these results._";
  std::size_t heads = 0;
  for (const auto& g : per_len)
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal))
        for (const auto& l : b->layers) heads = std::max(heads, l.lambda_per_head.size());
  t.columns = {{"seq_len", "seq_len"}, {"steps", "steps"}, {"variant", "variant"},
               {"layer", "layer"},     {"n", "n"},         {"step", "step"}};
  for (std::size_t h = 0; h < heads; ++h) {
    const std::string key = "head_" + std::to_string(h);
    t.columns.push_back({key, "head " + std::to_string(h), 3, false, key + "_sd"});
    t.columns.push_back({key + "_sd", "head " + std::to_string(h) + " SD", 3});
  }
  t.columns.push_back({"layer_mean", "layer mean", 3, false, "layer_mean_sd"});
  t.columns.push_back({"layer_mean_sd", "layer mean SD", 3});
  auto sd_cell = [](const std::vector<double>& xs) { return xs.size() > 1 ? Cell(sample_sd(xs)) : Cell(); };
  for (const auto& g : per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal))
        for (const auto& l : b->layers)
          if (!l.lambda_per_head.empty()) layers.insert(l.layer);
    for (int layer : layers) {
      std::vector<std::vector<double>> per_head(heads);
      std::vector<double> layer_means;
      std::set<std::int64_t> steps;
      for (const auto& p : g.pairs) {
        const BiasPoint* b = bias_at(*p.variant, BiasMoment::kFinal);
        const LayerBias* l = find_layer(b, layer);
        if (!l || l->lambda_per_head.empty()) continue;
        steps.insert(b->step);
        for (std::size_t h = 0; h < l->lambda_per_head.size(); ++h)
          per_head[h].push_back(l->lambda_per_head[h]);
        layer_means.push_back(mean(l->lambda_per_head));
      }
      std::vector<Cell> row = {*g.key.seq_len,
                               g.key.steps,
                               g.key.label,
                               static_cast<std::int64_t>(layer),
                               static_cast<std::int64_t>(layer_means.size()),
                               steps.size() == 1 ? Cell(*steps.begin()) : Cell()};
      for (const auto& xs : per_head) {
        row.push_back(avg(xs));
        row.push_back(sd_cell(xs));
      }
      row.push_back(mean(layer_means));
      row.push_back(sd_cell(layer_means));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// Validation loss change per 100 steps over the last two evaluations (negative: still falling).
std::optional<double> final_val_trend(const RunResult& run) {
  if (run.eval.size() < 2) return std::nullopt;
  const EvalPoint& last = run.eval[run.eval.size() - 1];
  const EvalPoint& prev = run.eval[run.eval.size() - 2];
  if (last.step <= prev.step) return std::nullopt;
  return 100.0 * (last.val_loss - prev.val_loss) / static_cast<double>(last.step - prev.step);
}

// One row per (λ, budget): the improvement with its CI next to how long the runs trained (tokens, epochs
// of the train split) and whether they overfit (train–val gap) or were still learning (val trend).
Table by_budget_table(const std::vector<Group>& pooled) {
  Table t;
  t.key = "by_budget";
  t.title = "By training budget (paired over seeds)";
  t.columns = {{"baseline", "baseline"},
               {"lambda", "λ"},
               {"steps", "steps"},
               {"tokens", "tokens per run"},
               {"epochs", "epochs", 2}};
  for (auto& c : group_stat_columns()) t.columns.push_back(c);
  for (const char* side : {"base", "var"}) {
    const std::string s = side, who = s == "base" ? "base " : "variant ";
    t.columns.push_back({s + "_val_loss", who + "val loss", 4});
    t.columns.push_back({s + "_gap", who + "val − train", 4, true});
    t.columns.push_back({s + "_val_trend", who + "val Δ/100 steps at end", 4, true});
  }
  for (const auto& g : pooled) {
    std::set<std::int64_t> tokens;
    std::set<double> epochs;
    std::vector<double> val[2], gap[2], trend[2];
    for (const auto& p : g.pairs) {
      const ExperimentResult& e = *p.experiment;
      const std::int64_t run_tokens = train_steps(e) * batch_size(e) * e.seq_len;
      tokens.insert(run_tokens);
      if (auto train_tokens = e.train_tokens())
        epochs.insert(static_cast<double>(run_tokens) / static_cast<double>(*train_tokens));
      const RunResult* runs[2] = {p.baseline, p.variant};
      for (int i = 0; i < 2; ++i) {
        val[i].push_back(runs[i]->final.val_loss);
        if (runs[i]->final.train_loss) gap[i].push_back(runs[i]->final.val_loss - *runs[i]->final.train_loss);
        if (auto tr = final_val_trend(*runs[i])) trend[i].push_back(*tr);
      }
    }
    std::vector<Cell> row = {g.key.baseline, g.key.label, g.key.steps,
                             tokens.size() == 1 ? Cell(*tokens.begin()) : Cell(),
                             epochs.size() == 1 ? Cell(*epochs.begin()) : Cell()};
    for (auto& c : group_stat_cells(g)) row.push_back(std::move(c));
    for (int i = 0; i < 2; ++i) {
      row.push_back(avg(val[i]));
      row.push_back(avg(gap[i]));
      row.push_back(avg(trend[i]));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The paired validation-loss difference along training (the fixed eval windows), mean and 95% CI over
// seeds at every evaluation step that all pairs of the group share.
Table eval_curve_table(const std::vector<Group>& pooled) {
  Table t;
  t.key = "eval_curve";
  t.title = "Paired Δ val loss along training (fixed eval windows, 95% CI over seeds)";
  t.columns = {{"baseline", "baseline"},
               {"lambda", "λ"},
               {"steps", "steps"},
               {"step", "step"},
               {"n", "n"},
               {"base_val_loss", "base val loss", 4},
               {"var_val_loss", "variant val loss", 4},
               {"mean_delta", "mean Δ", 4, true},
               {"delta_ci_low", "Δ 95% CI low", 4, true},
               {"delta_ci_high", "Δ 95% CI high", 4, true}};
  for (const auto& g : pooled) {
    std::map<std::int64_t, std::vector<std::pair<double, double>>> at_step;  // step -> (base, variant)
    for (const auto& p : g.pairs) {
      std::map<std::int64_t, double> base;
      for (const auto& e : p.baseline->eval) base[e.step] = e.val_loss;
      for (const auto& e : p.variant->eval)
        if (auto it = base.find(e.step); it != base.end())
          at_step[e.step].push_back({it->second, e.val_loss});
    }
    for (const auto& [step, values] : at_step) {
      if (values.size() != g.pairs.size()) continue;  // a step some pairs lack would change the seed set
      std::vector<double> base, var, delta;
      for (const auto& [b, v] : values) {
        base.push_back(b);
        var.push_back(v);
        delta.push_back(v - b);
      }
      const PairedInterval d = paired_interval(delta);
      t.rows.push_back({g.key.baseline, g.key.label, g.key.steps, step, static_cast<std::int64_t>(d.n),
                        mean(base), mean(var), d.mean, opt_cell(d.low), opt_cell(d.high)});
    }
  }
  return t;
}

Table notes_table(const std::vector<std::string>& notes) {
  Table t;
  t.key = "notes";
  t.title = "Notes";
  t.as_list = true;
  t.columns = {{"text", "text"}};
  for (const auto& n : notes) t.rows.push_back({n});
  return t;
}

// ---- rendering -----------------------------------------------------------------------------------------

std::string markdown_cell(const Cell& cell, const Column& col) {
  if (std::holds_alternative<std::monostate>(cell)) return "—";
  if (auto s = std::get_if<std::string>(&cell)) {
    std::string out;
    for (char c : *s) out += (c == '|') ? std::string("\\|") : std::string(1, c);
    return out;
  }
  if (auto i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  const double v = std::get<double>(cell);
  if (!std::isfinite(v)) return "nan";
  return fixed(v, col.decimals, col.show_sign);
}

std::string csv_cell(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (auto i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&cell)) {
    if (!std::isfinite(*d)) return "nan";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", *d);
    return buf;
  }
  const std::string& s = std::get<std::string>(cell);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json json_cell(const Cell& cell) {
  if (auto s = std::get_if<std::string>(&cell)) return *s;
  if (auto i = std::get_if<std::int64_t>(&cell)) return *i;
  if (auto d = std::get_if<double>(&cell)) return std::isfinite(*d) ? json(*d) : json();
  return nullptr;
}

}  // namespace

Report build_report(const std::vector<ExperimentResult>& experiments, const std::vector<std::string>& notes) {
  std::vector<std::string> all_notes = notes;
  const std::vector<Pair> pairs = drop_repeated_pairs(collect_pairs(experiments), all_notes);
  const std::vector<Group> pooled = group_pairs(pairs, /*by_seq_len=*/false);
  std::vector<Group> per_len = group_pairs(pairs, /*by_seq_len=*/true);
  std::stable_sort(per_len.begin(), per_len.end(),
                   [](const Group& a, const Group& b) { return *a.key.seq_len < *b.key.seq_len; });

  Report report;
  report.tables.push_back(paired_table(experiments));
  report.tables.push_back(by_lambda_table(pooled));
  report.tables.push_back(by_budget_table(pooled));
  report.tables.push_back(budget_trend_table(per_len));
  report.tables.push_back(budget_trend_change_table(per_len));
  report.tables.push_back(by_seq_len_table(per_len));
  report.tables.push_back(seq_len_trend_table(per_len));
  report.tables.push_back(eval_curve_table(pooled));
  report.tables.push_back(bias_table(per_len, BiasMoment::kInit));
  report.tables.push_back(bias_table(per_len, BiasMoment::kFinal));
  report.tables.push_back(bias_budget_change_table(per_len));
  report.tables.push_back(learned_lambda_table(per_len));
  report.tables.push_back(verdict_table(pooled, per_len));
  report.tables.push_back(notes_table(all_notes));
  return report;
}

namespace {
// "a,b,,c" -> {"a", "b", "", "c"}: the items of a comma-separated option, as written.
std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}
}  // namespace

Report select_sections(const Report& report, const std::string& comma_separated_keys) {
  Report out;
  std::string known;
  for (const auto& t : report.tables) known += (known.empty() ? "" : ", ") + t.key;
  for (const std::string& key : split_commas(comma_separated_keys)) {
    const auto it = std::find_if(report.tables.begin(), report.tables.end(),
                                 [&](const Table& t) { return t.key == key; });
    if (it == report.tables.end())
      throw InputError("--section '" + key + "': not a section, expected one or more of " + known);
    out.tables.push_back(*it);
  }
  return out;
}

std::vector<ExperimentResult> select_lambdas(const std::vector<ExperimentResult>& experiments,
                                             const std::string& comma_separated_labels) {
  std::set<std::string> wanted, present;
  for (std::string label : split_commas(comma_separated_labels)) {
    label.erase(0, label.find_first_not_of(' '));
    label.erase(label.find_last_not_of(' ') + 1);
    // A number is compared in the tables' spelling ("1.0" and "0.50" mean 1 and 0.5).
    char* end = nullptr;
    const double number = std::strtod(label.c_str(), &end);
    if (!label.empty() && end == label.c_str() + label.size() && std::isfinite(number))
      label = variant_group_label(VariantRecord{"fixed", number, std::nullopt});
    wanted.insert(label);
  }
  std::vector<ExperimentResult> out;
  for (const auto& e : experiments) {
    ExperimentResult kept = e;
    kept.comparisons.clear();
    std::set<std::string> kept_runs;
    for (const auto& c : e.comparisons) {
      const RunResult* variant = e.find_run(c.variant);
      if (!variant) continue;
      const std::string label = variant_group_label(e, *variant);
      present.insert(label);
      if (!wanted.count(label)) continue;
      kept.comparisons.push_back(c);
      kept_runs.insert(c.baseline);
      kept_runs.insert(c.variant);
    }
    if (kept.comparisons.empty()) continue;
    // Runs keep their order (runs[0] is the baseline), minus the variants nobody asked for.
    kept.runs.clear();
    for (const auto& run : e.runs)
      if (kept_runs.count(run.variant)) kept.runs.push_back(run);
    out.push_back(std::move(kept));
  }
  for (const auto& label : wanted) {
    if (present.count(label)) continue;
    std::string known;
    for (const auto& p : present) known += (known.empty() ? "" : ", ") + p;
    throw InputError("--lambda '" + label + "': no variant with this λ in the results (they have: " +
                     (known.empty() ? std::string("none") : known) + ")");
  }
  return out;
}

namespace {

// Columns markdown shows: a column another one prints as its "± x" part is folded into it.
std::vector<std::size_t> markdown_columns(const Table& t) {
  std::set<std::string> folded;
  for (const auto& c : t.columns)
    if (!c.plus_minus.empty()) folded.insert(c.plus_minus);
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (!folded.count(t.columns[i].key)) shown.push_back(i);
  return shown;
}

std::string markdown_row_cell(const Table& t, const std::vector<Cell>& row, std::size_t i) {
  const Column& col = t.columns[i];
  std::string text = markdown_cell(row[i], col);
  if (!col.plus_minus.empty() && !std::holds_alternative<std::monostate>(row[i])) {
    const std::size_t pm = t.column(col.plus_minus);
    if (!std::holds_alternative<std::monostate>(row[pm]))
      text += " ± " + markdown_cell(row[pm], Column{col.key, col.header, col.decimals, false, ""});
  }
  return text;
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::ostringstream out;
  bool first = true;
  for (const auto& t : report.tables) {
    if (t.as_list && t.rows.empty()) continue;  // no verdicts / no notes: nothing worth a heading
    out << (first ? "" : "\n") << "## " << t.title << "\n\n";
    first = false;
    if (t.as_list) {
      const std::size_t text = t.column("text");
      for (const auto& row : t.rows) out << "- " << markdown_cell(row[text], t.columns[text]) << "\n";
      continue;
    }
    if (t.rows.empty()) {
      out << (t.empty_text.empty() ? "_No data._" : t.empty_text) << "\n";
      continue;
    }
    const std::vector<std::size_t> shown = markdown_columns(t);
    out << "|";
    for (std::size_t i : shown) out << " " << t.columns[i].header << " |";
    out << "\n|";
    for (std::size_t i = 0; i < shown.size(); ++i) out << " --- |";
    out << "\n";
    for (const auto& row : t.rows) {
      out << "|";
      for (std::size_t i : shown) out << " " << markdown_row_cell(t, row, i) << " |";
      out << "\n";
    }
  }
  return out.str();
}

std::string render_csv(const Report& report) {
  std::ostringstream out;
  bool first = true;
  for (const auto& t : report.tables) {
    if (t.rows.empty() && t.key == "notes") continue;
    out << (first ? "" : "\n") << "section";
    first = false;
    for (const auto& c : t.columns) out << "," << csv_cell(c.key);
    out << "\n";
    for (const auto& row : t.rows) {
      out << t.key;
      for (const auto& cell : row) out << "," << csv_cell(cell);
      out << "\n";
    }
  }
  return out.str();
}

std::string render_json(const Report& report) {
  json doc;
  doc["schema"] = "xsa.inspect/1";
  for (const auto& t : report.tables) {
    json rows = json::array();
    for (const auto& row : t.rows) {
      json obj = json::object();
      for (std::size_t i = 0; i < t.columns.size(); ++i) obj[t.columns[i].key] = json_cell(row[i]);
      rows.push_back(std::move(obj));
    }
    doc[t.key] = std::move(rows);
  }
  return doc.dump(2) + "\n";
}

std::string render(const Report& report, Format format) {
  switch (format) {
    case Format::kCsv:
      return render_csv(report);
    case Format::kJson:
      return render_json(report);
    case Format::kMarkdown:
      break;
  }
  return render_markdown(report);
}

}  // namespace xsa::report
