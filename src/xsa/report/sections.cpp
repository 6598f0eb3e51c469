#include "xsa/report/sections.h"

#include <algorithm>
#include <set>

#include "xsa/report/section_builders.h"
#include "xsa/util/error.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

// A trend section (sections_trends.cpp): per seed, the slope of the improvement over log2 `x` as `axis`
// grows, for the groups `per` names; empty without results at two or more `points`. The three read alike by
// construction.
Section trend_section(const std::string& key, const std::string& axis, const std::string& x,
                      const std::string& per, const std::string& points,
                      std::function<void(const SectionInputs&, Table&)> build) {
  return {
      key,
      "Trend with " + axis + " (slope of the improvement over log2 " + x + " per seed, 95% CI over seeds)",
      "per " + per + ": slope of the gain per doubling of " + x,
      "_No variant has results at two or more " + points + "._",
      false,
      false,
      std::move(build)};
}

}  // namespace

const std::vector<Section>& sections() {
  static const std::vector<Section> registry = {
      {"paired", "Paired runs", "one row per run: final val loss ± SEM, Δ and improvement vs its baseline",
       "", false, false, build_paired},
      {"by_lambda", "By λ (paired over seeds, pooled over sequence lengths)",
       "per baseline, λ and budget: mean improvement and Δ with 95% t CIs over seeds, verdict", "", false,
       false, build_by_lambda},
      {"by_budget", "By training budget (paired over seeds)",
       "per λ and budget: the comparison next to tokens, epochs, val − train gap and the val trend at the "
       "end",
       "", false, false, build_by_budget},
      trend_section("budget_trend", "the training budget", "steps", "variant, length and batch",
                    "training budgets", build_budget_trend),
      {"budget_trend_change",
       "Change of the budget trend (per seed, slope over the last interval of budgets minus slope over the "
       "first, per doubling of steps; 95% CI over seeds)",
       "with three or more budgets: does the budget trend bend",
       "_No variant has results at three or more training budgets._", false, false,
       build_budget_trend_change},
      {"by_seq_len", "By sequence length (paired over seeds)",
       "per length, batch, budget and λ: the comparison with 95% t CIs", "", false, false, build_by_seq_len},
      trend_section("seq_len_trend", "sequence length", "T", "variant, budget and length design",
                    "sequence lengths", build_seq_len_trend),
      trend_section("size_trend", "model size", "non-embedding parameters", "variant, lr, budget and length",
                    "model sizes", build_size_trend),
      {"lr_selection",
       "Learning-rate selection (each arm at its own best lr; paired over the seeds that have every lr)",
       "per comparison with two or more lrs: each arm's best lr and the variant − baseline Δ at them, "
       "in-sample and with the lrs chosen on the other seeds (held out)",
       "_No comparison has results at two or more learning rates._", false, false, build_lr_selection},
      {"lr_change",
       "Change of the gain from one learning rate to the next (per seed, improvement at the next lr minus "
       "at this one; 95% CI over seeds)",
       "per comparison and two neighbouring lrs: does the gain grow from one to the next",
       "_No comparison has results at two or more learning rates._", false, false, build_lr_change},
      {"setup_selection",
       "Baseline-setup selection (each arm at its own best setup and lr; paired over the seeds that have "
       "every one)",
       "per comparison with two or more baseline setups: each arm's best (setup, lr) and the variant − "
       "baseline Δ at them, in-sample and held out: the variant against the baseline's best configuration",
       "_No comparison has results with two or more baseline setups._", false, false, build_setup_selection},
      {"setup_effect",
       "Effect of each baseline setup on each arm (the arm in the setup at its best lr against the same arm "
       "in the paper's setup at its best; paired over seeds; negative Δ: the setup helps)",
       "per comparison, setup and arm: does the setup (a stabiliser) help SA, and does it still help XSA",
       "_No comparison has results in the paper's setup and another._", false, false, build_setup_effect},
      {"setup_effect_by_lr",
       "Effect of each baseline setup on each arm at each lr (the arm in the setup against the same arm in "
       "the "
       "paper's setup at the same lr; paired over seeds; negative Δ: the setup helps)",
       "per comparison, setup, lr and arm: does the setup help SA at this lr, and XSA",
       "_No comparison has results in the paper's setup and another at the same lr._", false, false,
       build_setup_effect_by_lr},
      {"eval_curve", "Paired Δ val loss along training (fixed eval windows, 95% CI over seeds)",
       "per λ, budget and evaluation step: mean Δ val loss with its CI", "", false, false, build_eval_curve},
      {"loss_by_position",
       "Paired Δ val loss by position in the window (final evaluation; position t predicts the window's "
       "token t from the t before it, with data.doc_mask from those of its own document; 95% CI over seeds)",
       "per comparison, length and position bucket (1–16, 17–64, 65–256, ... up to T): mean Δ val loss "
       "with its CI",
       "_No loss by position in these results (results.json's final.loss_by_position, recorded since "
       "issue 56)._",
       false, false, build_loss_by_position},
      {"bias_init", "Bias metrics per layer at initialisation (step 0, mean ± 95% CI over seeds)",
       "per group and layer: cos(y,v), cos(z,v), attn_diag, value_cos of baseline and variant at step 0",
       "_No bias metrics in these results._", false, false, build_bias_init},
      {"bias", "Bias metrics per layer (final measurement, mean ± 95% CI over seeds)",
       "per group and layer: the bias metrics of baseline and variant at the last measurement",
       "_No bias metrics in these results._", false, false, build_bias_final},
      {"bias_depth",
       "Trend of the bias metrics with depth (per seed, least-squares slope of the final value over relative "
       "depth: the change from the first layer to the last; 95% CI over seeds)",
       "per group and metric: does it rise with depth, for the baseline and the variant",
       "_No bias metrics at two or more layers in these results._", false, false, build_bias_depth},
      {"bias_budget_change",
       "Change of the bias metrics between neighbouring budgets (per seed, final at the longer budget minus "
       "at the shorter; mean ± 95% CI over seeds)",
       "per variant, budget interval and layer: the paired change of every bias metric",
       "_No seed has bias metrics of both the baseline and the variant at two neighbouring known training "
       "budgets._",
       false, false, build_bias_budget_change},
      {"plateau_escape",
       "Plateau escape (per seed, the first evaluation at or below a level both arms reach: halfway between "
       "their "
       "common start and the worse arm's final val loss; paired Δ steps with a 95% CI over seeds)",
       "per group: the step each arm's val loss leaves its early plateau, and variant − baseline",
       "_No comparison has two or more common evaluations._", false, false, build_plateau_escape},
      {"dynamics",
       "Attention dynamics per layer over training (max logit, entropy, mass on the first position; mean "
       "over "
       "seeds)",
       "per group, length, measurement step and layer: max_logit, attn_entropy, attn_sink of baseline and "
       "variant",
       "_No attention dynamics in these results (measured since question 9's build)._", false, false,
       build_dynamics},
      {"dynamics_summary",
       "Attention dynamics per layer, summed up (each metric's extreme over training: the largest logit, the "
       "lowest entropy, the largest first-position mass; its step; its value at the last measurement; means "
       "over seeds as in the dynamics table)",
       "per group and layer: the extreme of max_logit, attn_entropy and attn_sink of baseline and variant "
       "over "
       "training, its step, and the value at the end",
       "_No attention dynamics in these results (measured since question 9's build)._", false, false,
       build_dynamics_summary},
      {"learned_lambda", "Learned λ / gate per layer and head (final measurement, mean ± SD over seeds)",
       "per learned-λ or gate variant and layer: the final λ of every head",
       "_No learned λ or gate variants in these results._", false, false, build_learned_lambda},
      {"verdicts", "Verdicts", "one sentence per comparison: better / worse / within noise, with its CI", "",
       true, false, build_verdicts},
      {"notes", "Notes", "what discovery and grouping noticed (skipped files, repeated runs)", "", true, true,
       build_notes},
  };
  return registry;
}

std::string section_keys(const std::string& separator) {
  std::string out;
  for (const auto& s : sections()) out += (out.empty() ? "" : separator) + s.key;
  return out;
}

Report build_report(const std::vector<ExperimentResult>& experiments, const std::vector<std::string>& notes) {
  const Grouping grouping = group_experiments(experiments, notes);
  const SectionInputs inputs{experiments, grouping};
  Report report;
  for (const auto& s : sections()) {
    Table t;
    t.key = s.key;
    t.title = s.title;
    t.empty_text = s.empty_text;
    t.as_list = s.as_list;
    t.csv_omit_when_empty = s.csv_omit_when_empty;
    s.build(inputs, t);
    report.tables.push_back(std::move(t));
  }
  return report;
}

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

Report select_sections(const Report& report, const std::string& comma_separated_keys) {
  Report out;
  std::string known;
  for (const auto& t : report.tables) known += (known.empty() ? "" : ", ") + t.key;
  // Each section once: every item copies a whole table, so "bias,bias,..." would make the output as long as
  // the option times the table.
  std::set<std::string> chosen;
  for (const std::string& key : split_commas(comma_separated_keys)) {
    const auto it = std::find_if(report.tables.begin(), report.tables.end(),
                                 [&](const Table& t) { return t.key == key; });
    if (it == report.tables.end())
      throw InputError("--section '" + key + "': not a section, expected one or more of " + known);
    if (!chosen.insert(key).second)
      throw InputError("--section '" + key + "': listed twice, expected each section once");
    out.tables.push_back(*it);
  }
  return out;
}

}  // namespace xsa::report
