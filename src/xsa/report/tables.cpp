#include "xsa/report/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

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
  std::optional<std::int64_t> seq_len;  // absent: pooled over sequence lengths

  bool operator<(const GroupKey& o) const {
    // has_lambda first so numbers come before names; seq_len last.
    return std::make_tuple(baseline, !has_lambda, lambda, label, seq_len) <
           std::make_tuple(o.baseline, !o.has_lambda, o.lambda, o.label, o.seq_len);
  }
};

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

GroupKey key_for(const Pair& p, bool by_seq_len) {
  GroupKey k;
  k.baseline = p.baseline->variant;
  k.has_lambda = p.variant->spec.lambda.has_value();
  k.lambda = p.variant->spec.lambda.value_or(0);
  k.label = variant_group_label(p.variant->spec);
  if (by_seq_len) k.seq_len = p.experiment->seq_len;
  return k;
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

std::string lambda_text(const GroupKey& k) {
  return k.has_lambda ? "λ=" + k.label : k.label;
}

std::string fixed(double v, int decimals, bool sign = false) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}

std::string seq_len_list(const std::set<std::int64_t>& lens) {
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
                        run.variant, variant_group_label(run.spec), run.final.val_loss,
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
  t.columns = {{"baseline", "baseline"}, {"lambda", "λ"}, {"seq_lens", "seq_len(s)"}};
  for (auto& c : group_stat_columns()) t.columns.push_back(c);
  for (const auto& g : groups) {
    std::vector<Cell> row = {g.key.baseline, g.key.label, seq_len_list(g.seq_lens)};
    for (auto& c : group_stat_cells(g)) row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table by_seq_len_table(const std::vector<Group>& groups) {
  Table t;
  t.key = "by_seq_len";
  t.title = "By sequence length (paired over seeds)";
  t.columns = {{"seq_len", "seq_len"}, {"baseline", "baseline"}, {"lambda", "λ"}};
  for (auto& c : group_stat_columns()) t.columns.push_back(c);
  for (const auto& g : groups) {
    std::vector<Cell> row = {*g.key.seq_len, g.key.baseline, g.key.label};
    for (auto& c : group_stat_cells(g)) row.push_back(std::move(c));
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
  for (const auto& g : per_len)
    add(g, *g.key.seq_len, "seq_len", "seq_len " + std::to_string(*g.key.seq_len));
  // A pooled line only adds information when it actually pools several sequence lengths.
  for (const auto& g : pooled)
    if (g.seq_lens.size() > 1) add(g, Cell(), "pooled", "pooled over seq_len " + seq_len_list(g.seq_lens));
  return t;
}

const BiasPoint* final_bias(const RunResult& run) {
  const BiasPoint* last = nullptr;
  for (const auto& b : run.bias)
    if (!last || b.step >= last->step) last = &b;
  return last;
}

const LayerBias* find_layer(const BiasPoint* point, int layer) {
  if (!point) return nullptr;
  for (const auto& l : point->layers)
    if (l.layer == layer) return &l;
  return nullptr;
}

Table bias_table(const std::vector<Group>& per_len) {
  Table t;
  t.key = "bias";
  t.title = "Bias metrics per layer (final measurement, mean over seeds)";
  t.empty_text = "_No bias metrics in these results._";
  t.columns = {
      {"seq_len", "seq_len"}, {"baseline", "baseline"}, {"lambda", "λ"}, {"layer", "layer"}, {"n", "n"},
      {"step", "step"}};
  for (const char* side : {"base", "var"})
    for (const auto& metric : kBiasMetrics)
      t.columns.push_back({std::string(side) + "_" + metric.key,
                           std::string(side == std::string("base") ? "base " : "variant ") + metric.label,
                           3});
  t.columns.push_back({"var_lambda_mean", "variant mean learned λ", 3});
  for (const auto& g : per_len) {
    std::set<int> layers;
    for (const auto& p : g.pairs)
      if (const BiasPoint* b = final_bias(*p.variant))
        for (const auto& l : b->layers) layers.insert(l.layer);
    for (int layer : layers) {
      std::vector<double> base[kNumBiasMetrics], var[kNumBiasMetrics], learned;
      std::set<std::int64_t> steps;
      for (const auto& p : g.pairs) {
        const BiasPoint* vb = final_bias(*p.variant);
        const LayerBias* v = find_layer(vb, layer);
        if (!v) continue;
        steps.insert(vb->step);
        for (int m = 0; m < kNumBiasMetrics; ++m) var[m].push_back(v->*kBiasMetrics[m].member);
        for (double h : v->lambda_per_head) learned.push_back(h);
        if (const LayerBias* b = find_layer(final_bias(*p.baseline), layer))
          for (int m = 0; m < kNumBiasMetrics; ++m) base[m].push_back(b->*kBiasMetrics[m].member);
      }
      auto avg = [](const std::vector<double>& xs) { return xs.empty() ? Cell() : Cell(mean(xs)); };
      std::vector<Cell> row = {*g.key.seq_len,
                               g.key.baseline,
                               g.key.label,
                               static_cast<std::int64_t>(layer),
                               static_cast<std::int64_t>(var[0].size()),
                               steps.size() == 1 ? Cell(*steps.begin()) : Cell()};
      for (const std::vector<double>* side : {base, var})
        for (int m = 0; m < kNumBiasMetrics; ++m) row.push_back(avg(side[m]));
      row.push_back(avg(learned));
      t.rows.push_back(std::move(row));
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
  const std::vector<Pair> pairs = collect_pairs(experiments);
  const std::vector<Group> pooled = group_pairs(pairs, /*by_seq_len=*/false);
  std::vector<Group> per_len = group_pairs(pairs, /*by_seq_len=*/true);
  std::stable_sort(per_len.begin(), per_len.end(),
                   [](const Group& a, const Group& b) { return *a.key.seq_len < *b.key.seq_len; });

  Report report;
  report.tables.push_back(paired_table(experiments));
  report.tables.push_back(by_lambda_table(pooled));
  report.tables.push_back(by_seq_len_table(per_len));
  report.tables.push_back(bias_table(per_len));
  report.tables.push_back(verdict_table(pooled, per_len));
  report.tables.push_back(notes_table(notes));
  return report;
}

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
    out << "|";
    for (const auto& c : t.columns) out << " " << c.header << " |";
    out << "\n|";
    for (const auto& c : t.columns) {
      (void)c;
      out << " --- |";
    }
    out << "\n";
    for (const auto& row : t.rows) {
      out << "|";
      for (std::size_t i = 0; i < t.columns.size(); ++i)
        out << " " << markdown_cell(row[i], t.columns[i]) << " |";
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
