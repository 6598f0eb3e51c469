#pragma once
// The first stage of the report (docs/ARCHITECTURE.md "Reports"): experiments -> baseline/variant pairs ->
// groups of pairs that are one comparison (same baseline, variant, budget, and length when asked), with
// repeated measurements dropped; and the series of groups a trend is fitted over (lengths, budgets).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/records/results.h"
#include "xsa/stats/stats.h"

namespace xsa::report {

// One baseline/variant pair of one experiment (one seed of one grid point).
struct Pair {
  const ExperimentResult* experiment;
  const RunResult* baseline;
  const RunResult* variant;
  const Comparison* comparison;
};

// Groups sort numerically by λ, variants without a fixed λ (learned, gates) after the numbers.
struct GroupKey {
  std::string baseline;
  bool has_lambda = false;
  double lambda = 0;
  std::string label;
  std::int64_t steps = 0;  // the training budget (train.steps): never pooled
  std::string model;       // "2L d128 4×32" (model_label): never pooled
  // The choices in which the baseline differs from the paper's (setup_label, "" for none): never pooled.
  std::string setup;
  // The prepared data (corpus_labels): "" when every experiment read together trained on one corpus, else the
  // corpus's name. Never pooled, and not part of the setup: a series along setups or sizes stays on one
  // corpus.
  std::string corpus;
  std::int64_t params = 0;                        // the model's non-embedding parameters (its size axis)
  double lr = 0;                                  // train.lr: never pooled
  AttentionImpl impl = AttentionImpl::kExplicit;  // attention.impl: never pooled
  std::optional<std::int64_t> seq_len;            // absent: pooled over sequence lengths
  std::optional<std::int64_t> batch_size;  // with seq_len: tokens per step tell the two length designs apart

  bool operator<(const GroupKey& o) const;
};

struct Group {
  GroupKey key;
  std::vector<Pair> pairs;
  std::set<std::int64_t> seq_lens;
  // One value per seed: the mean over the seed's pairs. A group pooled over sequence lengths holds one pair
  // per seed and length, and pairs of one seed share its initial weights, so they are not independent: the
  // statistics over these values count seeds (n) and treat only seeds as independent.
  std::vector<double> deltas() const;                            // variant − baseline final val loss
  std::vector<double> improvements() const;                      // improvement %
  std::map<std::uint64_t, double> improvements_by_seed() const;  // the same, keyed by seed
};

// The seed of a pair: its runs' seed (the config's seed where the runs do not name one).
std::uint64_t pair_seed(const Pair& p);

// Every comparison of the experiments as pairs, minus repeats (below), grouped two ways.
struct Grouping {
  std::vector<Pair> pairs;
  std::vector<Group> pooled;       // pooled over sequence lengths, sorted by key
  std::vector<Group> per_len;      // one per (sequence length, batch), sorted by length, then key
  std::vector<std::string> notes;  // the notes given, then one per repeated experiment dropped
};
// The same measurement read twice (two folders holding one run, e.g. the T=128 point of a length sweep and a
// budget sweep) is counted once, with a note: a pair repeats an earlier one when its group, its seed, both
// final validation losses and their difference are identical, bit for bit.
Grouping group_experiments(const std::vector<ExperimentResult>& experiments, std::vector<std::string> notes);

// The corpus an experiment trained on, as a group key holds it: "" for every experiment when they all trained
// on one corpus (its tokenizer's hash and its splits' token counts in results.json's data), else the corpus's
// name (corpus_name of data.dir), followed by its tokenizer's hash and training tokens where two corpora
// share a name.
std::map<const ExperimentResult*, std::string> corpus_labels(
    const std::vector<ExperimentResult>& experiments);
// A corpus's name from its data.dir: the last folder, or the one above it when that is called "tokens"
// ("data/corpora/kjv/tokens" -> "kjv", "data/tinystories" -> "tinystories").
std::string corpus_name(const std::string& data_dir);

// "64 128 256"
std::string number_list(const std::set<std::int64_t>& values);

// One line of the length question: the per-length groups of one baseline, λ and budget that share a design.
// Tokens per step fixed (batch = tokens / T): a tokens/step value that several lengths share. Batch fixed
// (tokens per step grow with T): a batch size that several lengths share. A length can belong to both (T=128
// at batch 32 is also 4,096 tokens/step); lengths in neither form one series per batch size.
// scripts/plots/plot_findings.py draws the same lines (length_series).
struct LengthSeries {
  std::string design;                // "4096 tokens/step" | "batch 32"
  std::vector<const Group*> groups;  // one per sequence length, sorted by it
};
std::vector<LengthSeries> length_series(const std::vector<Group>& per_len);

// The per-length groups that share a key once `forget` has cleared one of its fields (the series' axis), in
// per_len's order (by length, then key), each series' groups in increasing `axis` value.
struct GroupSeries {
  GroupKey key;  // with the axis field cleared
  std::vector<const Group*> groups;
};
std::vector<GroupSeries> series_along(const std::vector<Group>& per_len,
                                      const std::function<void(GroupKey&)>& forget,
                                      const std::function<double(const GroupKey&)>& axis);

// One series per group key without its budget (a variant at one length and batch), in increasing budget.
using BudgetSeries = GroupSeries;
std::vector<BudgetSeries> budget_series(const std::vector<Group>& per_len);

// One series per group key without its model (a variant at one lr, budget, length and batch), in per_len's
// order, its groups in increasing size (non-embedding parameters): the size question's series. Seeds pair
// across sizes because a seed fixes the batch order at every size.
using SizeSeries = GroupSeries;
std::vector<SizeSeries> size_series(const std::vector<Group>& per_len);

// One series per group key without its learning rate, in increasing lr: the lr selection's series.
std::vector<GroupSeries> lr_series(const std::vector<Group>& per_len);

// "2L d128 4×32": layers, width, heads × head width.
std::string model_label(const ModelConfig& m);
// How an experiment's baseline transformer differs from the paper's (RoPE, a LayerNorm after the embedding,
// no QK-norm, no output gate, the default warmup): "" when it does not, else e.g. "learned pos, no emb norm",
// "QK-norm", "headwise gate", "warmup 150". Question 9 varies these; every earlier result has "".
std::string setup_label(const Config& c);
// A setup as a table cell names it on its own: setup_label's text, or "paper's setup" for "".
std::string setup_name(const std::string& setup);
// The model column's text: the model label, with the setup in parentheses when there is one and "on <corpus>"
// when the experiments read together trained on more than one corpus.
std::string model_with_setup(const GroupKey& k);

// A series' points per seed, for the trend statistics: its x values and, for each seed with every x, log2 x
// and that seed's mean improvement % there.
struct SeriesPoints {
  std::set<std::int64_t> xs;
  std::vector<stats::SeedSeries> seeds;
};
enum class SeriesAxis { kSeqLen, kSteps, kParams };
SeriesPoints series_points(const std::vector<const Group*>& series, SeriesAxis axis);

}  // namespace xsa::report
