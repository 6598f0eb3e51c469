#include "xsa/report/grouping.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "xsa/config/resources.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

bool GroupKey::operator<(const GroupKey& o) const {
  // has_lambda first so numbers come before names; then the budget; seq_len, then size, lr and the
  // attention implementation last.
  return std::make_tuple(baseline, !has_lambda, lambda, label, steps, seq_len, batch_size, params, model,
                         corpus, setup, lr, impl) <
         std::make_tuple(o.baseline, !o.has_lambda, o.lambda, o.label, o.steps, o.seq_len, o.batch_size,
                         o.params, o.model, o.corpus, o.setup, o.lr, o.impl);
}

namespace {

// One value per seed: the mean of `value` over the seed's pairs.
template <class Value>
std::map<std::uint64_t, double> per_seed_means(const std::vector<Pair>& pairs, Value value) {
  std::map<std::uint64_t, std::vector<double>> by_seed;
  for (const auto& p : pairs) by_seed[pair_seed(p)].push_back(value(p));
  std::map<std::uint64_t, double> out;
  for (const auto& [seed, values] : by_seed) out[seed] = mean(values);
  return out;
}

// The values of a per-seed map, in seed order.
std::vector<double> in_seed_order(const std::map<std::uint64_t, double>& by_seed) {
  std::vector<double> out;
  for (const auto& [seed, value] : by_seed) out.push_back(value);
  return out;
}

double improvement_of(const Pair& p) {
  return p.comparison->improvement_pct;
}

}  // namespace

std::vector<double> Group::deltas() const {
  return in_seed_order(per_seed_means(pairs, [](const Pair& p) { return p.comparison->delta_val_loss; }));
}

std::vector<double> Group::improvements() const {
  return in_seed_order(improvements_by_seed());
}

std::map<std::uint64_t, double> Group::improvements_by_seed() const {
  return per_seed_means(pairs, improvement_of);
}

std::uint64_t pair_seed(const Pair& p) {
  return p.baseline->seed.value_or(p.experiment->config.seed);
}

namespace {

std::vector<Pair> collect_pairs(const std::vector<ExperimentResult>& experiments) {
  std::vector<Pair> pairs;
  for (const auto& e : experiments)
    for (const auto& c : e.comparisons)
      pairs.push_back({&e, e.find_run(c.baseline), e.find_run(c.variant), &c});
  return pairs;
}

using CorpusLabels = std::map<const ExperimentResult*, std::string>;

GroupKey key_for(const Pair& p, bool by_seq_len, const CorpusLabels& corpora) {
  GroupKey k;
  k.baseline = p.baseline->variant;
  k.has_lambda = p.variant->spec.lambda.has_value();
  k.lambda = p.variant->spec.lambda.value_or(0);
  k.label = variant_group_label(*p.experiment, *p.variant);
  k.steps = p.experiment->config.train.steps;
  k.model = model_label(p.experiment->config.model);
  k.setup = setup_label(p.experiment->config);
  k.corpus = corpora.at(p.experiment);
  k.params = non_embedding_parameters(p.experiment->config.model);
  k.lr = p.experiment->config.train.lr;
  k.impl = p.experiment->config.attention.impl;
  if (by_seq_len) {
    k.seq_len = p.experiment->seq_len();
    k.batch_size = p.experiment->config.train.batch_size;
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
std::vector<Pair> drop_repeated_pairs(const std::vector<Pair>& pairs, const CorpusLabels& corpora,
                                      std::vector<std::string>& notes) {
  using Identity = std::tuple<GroupKey, std::uint64_t, double, double, double>;
  std::map<Identity, const Pair*> first_of;
  struct Repeat {
    const ExperimentResult* repeating;
    const ExperimentResult* first;
    std::vector<std::string> comparisons;
  };
  std::vector<Repeat> repeats;  // in reading order, so the notes are deterministic
  std::vector<Pair> kept;
  for (const auto& p : pairs) {
    const Identity id{key_for(p, /*by_seq_len=*/true, corpora), pair_seed(p), p.baseline->final.val_loss,
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
std::vector<Group> group_pairs(const std::vector<Pair>& pairs, bool by_seq_len, const CorpusLabels& corpora) {
  std::map<GroupKey, Group> groups;
  for (const auto& p : pairs) {
    GroupKey k = key_for(p, by_seq_len, corpora);
    Group& g = groups[k];
    g.key = k;
    g.pairs.push_back(p);
    g.seq_lens.insert(p.experiment->seq_len());
  }
  std::vector<Group> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

}  // namespace

Grouping group_experiments(const std::vector<ExperimentResult>& experiments, std::vector<std::string> notes) {
  Grouping g;
  g.notes = std::move(notes);
  const CorpusLabels corpora = corpus_labels(experiments);
  std::set<std::string> names;
  for (const auto& [experiment, name] : corpora) names.insert(name);
  if (names.size() > 1) {
    std::string text = "the experiments trained on " + std::to_string(names.size()) + " corpora (";
    for (const auto& name : names) text += (name == *names.begin() ? "" : ", ") + name;
    g.notes.push_back(text +
                      "); the model column names each row's, and no group, series or selection mixes them");
  }
  g.pairs = drop_repeated_pairs(collect_pairs(experiments), corpora, g.notes);
  g.pooled = group_pairs(g.pairs, /*by_seq_len=*/false, corpora);
  g.per_len = group_pairs(g.pairs, /*by_seq_len=*/true, corpora);
  std::stable_sort(g.per_len.begin(), g.per_len.end(),
                   [](const Group& a, const Group& b) { return *a.key.seq_len < *b.key.seq_len; });
  return g;
}

std::string number_list(const std::set<std::int64_t>& values) {
  std::string s;
  for (auto v : values) s += (s.empty() ? "" : " ") + std::to_string(v);
  return s;
}

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
      by_tokens[*g->key.batch_size * *g->key.seq_len].push_back(g);
      by_batch[*g->key.batch_size].push_back(g);
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
      if (!placed.count(g)) rest[*g->key.batch_size].push_back(g);
    for (auto& [batch, sel] : rest) add("batch " + std::to_string(batch), sel);
  }
  return out;
}

std::vector<GroupSeries> series_along(const std::vector<Group>& per_len,
                                      const std::function<void(GroupKey&)>& forget,
                                      const std::function<double(const GroupKey&)>& axis) {
  std::vector<GroupSeries> series;
  for (const auto& g : per_len) {
    GroupKey k = g.key;
    forget(k);
    auto same = [&](const GroupSeries& s) { return !(s.key < k) && !(k < s.key); };
    auto it = std::find_if(series.begin(), series.end(), same);
    if (it == series.end()) it = series.insert(series.end(), GroupSeries{k, {}});
    it->groups.push_back(&g);
  }
  for (auto& entry : series)
    std::stable_sort(entry.groups.begin(), entry.groups.end(),
                     [&](const Group* a, const Group* b) { return axis(a->key) < axis(b->key); });
  return series;
}

std::vector<BudgetSeries> budget_series(const std::vector<Group>& per_len) {
  return series_along(
      per_len, [](GroupKey& k) { k.steps = 0; },
      [](const GroupKey& k) { return static_cast<double>(k.steps); });
}

std::vector<SizeSeries> size_series(const std::vector<Group>& per_len) {
  return series_along(
      per_len,
      [](GroupKey& k) {
        k.model.clear();
        k.params = 0;
      },
      [](const GroupKey& k) { return static_cast<double>(k.params); });
}

std::vector<GroupSeries> lr_series(const std::vector<Group>& per_len) {
  return series_along(
      per_len, [](GroupKey& k) { k.lr = 0; }, [](const GroupKey& k) { return k.lr; });
}

std::string model_label(const ModelConfig& m) {
  return std::to_string(m.n_layer) + "L d" + std::to_string(m.d_model) + " " + std::to_string(m.n_head) +
         "×" + std::to_string(m.d_head);
}

std::string setup_label(const Config& c) {
  const Config paper;  // the defaults are the paper's choices
  std::vector<std::string> parts;
  if (c.model.pos != paper.model.pos) parts.push_back(std::string(choice_name(c.model.pos)) + " pos");
  if (c.model.embed_norm != paper.model.embed_norm)
    parts.push_back(c.model.embed_norm ? "emb norm" : "no emb norm");
  if (c.model.qk_norm != paper.model.qk_norm) parts.push_back(c.model.qk_norm ? "QK-norm" : "no QK-norm");
  if (c.attention.output_gate != paper.attention.output_gate)
    parts.push_back(std::string(choice_name(c.attention.output_gate)) + " gate");
  if (c.train.warmup_steps != paper.train.warmup_steps)
    parts.push_back("warmup " + std::to_string(c.train.warmup_steps));
  if (c.train.optimizer != paper.train.optimizer) parts.push_back(choice_name(c.train.optimizer));
  if (c.data.doc_mask != paper.data.doc_mask) parts.push_back(c.data.doc_mask ? "doc mask" : "no doc mask");
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

std::string setup_name(const std::string& setup) {
  return setup.empty() ? "paper's setup" : setup;
}

std::string model_with_setup(const GroupKey& k) {
  std::string out = k.model;
  if (!k.setup.empty()) out += " (" + k.setup + ")";
  if (!k.corpus.empty()) out += " on " + k.corpus;
  return out;
}

std::string corpus_name(const std::string& data_dir) {
  std::filesystem::path p = std::filesystem::path(data_dir).lexically_normal();
  if (!p.empty() && p.filename().empty()) p = p.parent_path();  // "a/b/" and "a/b" are one folder
  const std::filesystem::path above = p.parent_path().filename();
  if (p.filename() == "tokens" && !above.empty()) return above.string();
  return p.filename().empty() ? data_dir : p.filename().string();
}

std::map<const ExperimentResult*, std::string> corpus_labels(
    const std::vector<ExperimentResult>& experiments) {
  // A corpus is its tokenizer and its splits: the same text prepared again gives the same identity, a
  // different text or vocabulary a different one. Files without a data record are one corpus of their own,
  // "unrecorded".
  struct Corpus {
    std::string name, tokenizer;
    std::int64_t train_tokens = 0;
  };
  auto identity_of = [](const ExperimentResult& e) {
    if (!e.data) return std::string();
    return e.data->tokenizer_sha256 + " " + std::to_string(e.data->train_tokens) + " " +
           std::to_string(e.data->val_tokens);
  };
  std::map<std::string, Corpus> corpora;  // identity -> corpus
  for (const auto& e : experiments)
    corpora[identity_of(e)] =
        e.data ? Corpus{corpus_name(e.data->dir), e.data->tokenizer_sha256, e.data->train_tokens}
               : Corpus{"unrecorded corpus", "", 0};
  std::map<std::string, int> uses_of_name;
  for (const auto& [identity, corpus] : corpora) ++uses_of_name[corpus.name];
  std::map<const ExperimentResult*, std::string> out;
  for (const auto& e : experiments) {
    const Corpus& c = corpora.at(identity_of(e));
    std::string label;
    if (corpora.size() > 1) {
      label = c.name;
      if (uses_of_name[c.name] > 1 && e.data)
        label +=
            " (tokenizer " + c.tokenizer.substr(0, 8) + ", " + std::to_string(c.train_tokens) + " tokens)";
    }
    out[&e] = label;
  }
  return out;
}

SeriesPoints series_points(const std::vector<const Group*>& series, SeriesAxis axis) {
  SeriesPoints out;
  std::map<std::uint64_t, std::map<std::int64_t, std::vector<double>>> by_seed;  // seed -> x -> improvements
  for (const Group* g : series) {
    const std::int64_t x = axis == SeriesAxis::kSeqLen  ? *g->key.seq_len
                           : axis == SeriesAxis::kSteps ? g->key.steps
                                                        : g->key.params;
    out.xs.insert(x);
    for (const auto& p : g->pairs) by_seed[pair_seed(p)][x].push_back(p.comparison->improvement_pct);
  }
  for (const auto& [seed, at] : by_seed) {
    if (at.size() != out.xs.size()) continue;
    SeedSeries s;
    for (const auto& [x, improvements] : at) {
      s.log_xs.push_back(std::log2(static_cast<double>(x)));
      s.ys.push_back(mean(improvements));
    }
    out.seeds.push_back(std::move(s));
  }
  return out;
}

}  // namespace xsa::report
