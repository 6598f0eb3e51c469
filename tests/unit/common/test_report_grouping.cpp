// The report's first stage (xsa/report/grouping.h), seen through the tables it feeds: experiments -> paired
// runs -> groups. What is pooled (sequence lengths, into by_lambda, counting seeds and not pairs) and what
// never is (training budgets, learned λ at different λ learning rates), and a repeated run (the same
// measurement in two folders) counted once with a note. Expected numbers are worked out by hand from the
// losses in the comments, not from the code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "report_fixtures.h"
#include "xsa/records/results.h"
#include "xsa/report/discovery.h"
#include "xsa/report/sections.h"
#include "xsa/report/select.h"
#include "xsa/report/table.h"

using nlohmann::json;

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

TEST(Report, ByLambdaPoolsSequenceLengths) {
  const Report report = fixture_report();
  const Table& t = report.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 3u);  // 0.5, 1, learned
  // λ=1 pools seq_len 64 (three seeds) and 128 (one): Δ = {-0.05, -0.06, -0.04, -0.05}; mean -0.05,
  // sd sqrt(0.0002/3) = 0.00816497, SEM 0.00408248, t_{0.975,3} = 3.182446 -> ± 0.0129923.
  EXPECT_EQ(text(t, 1, "lambda"), "1");
  EXPECT_EQ(text(t, 1, "seq_lens"), "64 128");
  EXPECT_EQ(integer(t, 1, "n"), 4);
  EXPECT_EQ(integer(t, 1, "favouring"), 4);
  EXPECT_NEAR(num(t, 1, "mean_delta"), -0.05, 1e-12);
  EXPECT_NEAR(num(t, 1, "delta_ci_low"), -0.0629923, 1e-6);
  EXPECT_NEAR(num(t, 1, "delta_ci_high"), -0.0370077, 1e-6);
  EXPECT_EQ(text(t, 1, "verdict"), "better");
}

TEST(Report, PooledGroupsCountSeedsNotPairs) {
  // Seeds 1, 2, 3 at T = 128 (improvements 2, 4, 6) and T = 512 (4, 4, 8): by_seq_len has two groups of
  // three seeds; by_lambda pools them into one group of three seeds, each the mean of its two lengths:
  // 3, 4, 7 -> mean 4.666667, sd 2.081666, SEM 1.201850, t_{0.975,2} = 4.302653 -> [-0.504478, +9.837812].
  // Counted as six independent pairs it would read n = 6 and a CI a third as wide.
  std::vector<ExperimentResult> points;
  const double at_128[] = {2, 4, 6}, at_512[] = {4, 4, 8};
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    points.push_back(length_point(128, 32, seed, at_128[seed - 1]));
    points.push_back(length_point(512, 8, seed, at_512[seed - 1]));
  }
  const Report report = build_report(points);
  EXPECT_EQ(report.table("by_seq_len").rows.size(), 2u);
  EXPECT_EQ(integer(report.table("by_seq_len"), 0, "n"), 3);
  const Table& t = report.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "seq_lens"), "128 512");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "favouring"), 3);
  EXPECT_NEAR(num(t, 0, "mean_improvement_pct"), 14.0 / 3, 1e-12);
  EXPECT_NEAR(num(t, 0, "improvement_ci_low"), -0.504478, 1e-5);
  EXPECT_NEAR(num(t, 0, "improvement_ci_high"), 9.837812, 1e-5);
  EXPECT_EQ(integer(report.table("by_budget"), 0, "n"), 3);
}

TEST(Report, TheSameRunInTwoFoldersCountsOnce) {
  // Seeds 1 and 2 at T = 128 (improvements 2 and 4), then seed 1 again as another folder holds it (same
  // seed, same losses): n stays 2 and the mean 3, with a note naming both folders. A seed-1 run whose
  // numbers differ is another measurement of seed 1: it is averaged with the first (2 and 6 -> 4), since the
  // two share the seed's initial weights, so n stays 2 and the mean is (4 + 4) / 2 = 4.
  auto at = [](std::uint64_t seed, double improvement, const std::string& folder) {
    ExperimentResult e = length_point(128, 32, seed, improvement);
    e.source = folder + "/results.json";
    return e;
  };
  const std::vector<ExperimentResult> points = {at(1, 2, "budget/seed=1"), at(2, 4, "budget/seed=2"),
                                                at(1, 2, "lengths/seed=1")};
  const Report report = build_report(points, {"a discovery note"});
  const Table& t = report.table("by_seq_len");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "n"), 2);
  EXPECT_NEAR(num(t, 0, "mean_improvement_pct"), 3.0, 1e-12);
  EXPECT_EQ(integer(report.table("by_lambda"), 0, "n"), 2);
  EXPECT_EQ(report.table("paired").rows.size(), 3u * 2u);  // the listing still shows every run of every file
  const Table& notes = report.table("notes");
  ASSERT_EQ(notes.rows.size(), 2u);
  EXPECT_EQ(text(notes, 0, "text"), "a discovery note");
  EXPECT_EQ(text(notes, 1, "text"),
            "lengths/seed=1 repeats budget/seed=1 (sa vs xsa: same seed, same final losses); counted once");

  const Report other =
      build_report({at(1, 2, "budget/seed=1"), at(2, 4, "budget/seed=2"), at(1, 6, "x/seed=1")});
  EXPECT_EQ(integer(other.table("by_seq_len"), 0, "n"), 2);
  EXPECT_NEAR(num(other.table("by_seq_len"), 0, "mean_improvement_pct"), 4.0, 1e-12);
  EXPECT_TRUE(other.table("notes").rows.empty());
}

TEST(Report, ByBudgetNeverPoolsTrainingBudgets) {
  // Three seeds at 100 steps and three at 200 steps, XSA vs SA.
  std::vector<ExperimentResult> ex;
  const double base100[3] = {3.0, 3.1, 3.2}, var100[3] = {2.9, 3.0, 3.05};    // Δ = -0.1, -0.1, -0.15
  const double base200[3] = {2.5, 2.6, 2.7}, var200[3] = {2.49, 2.62, 2.69};  // Δ = -0.01, +0.02, -0.01
  for (int s = 0; s < 3; ++s) {
    ex.push_back(budget_experiment(s + 1, 100, "xsa", {9, 4, base100[s]}, {9, 3.9, var100[s]},
                                   base100[s] - 0.2, var100[s] - 0.1));
    ex.push_back(budget_experiment(s + 1, 200, "xsa", {9, 3, base200[s]}, {9, 2.9, var200[s]},
                                   base200[s] - 0.3, var200[s] - 0.3));
  }
  const Report r = build_report(ex);
  const Table& t = r.table("by_budget");
  ASSERT_EQ(t.rows.size(), 2u);
  // 100 steps: 100 x 4 x 16 = 6,400 tokens = 5 epochs of 1,280. Δ mean -0.116667, sd 0.0288675, SEM
  // 0.0166667, t_{0.975,2} = 4.302653 -> CI [-0.188378, -0.044956]: better, 3/3.
  EXPECT_EQ(integer(t, 0, "steps"), 100);
  EXPECT_EQ(integer(t, 0, "tokens"), 6400);
  EXPECT_NEAR(num(t, 0, "epochs"), 5.0, 1e-12);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "mean_delta"), -0.116667, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_low"), -0.188378, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_high"), -0.044956, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "better");
  // val − train gap: +0.2 for sa, +0.1 for xsa; val trend: (3.1 − 4) / 50 steps * 100 = −1.8 per 100 steps.
  EXPECT_NEAR(num(t, 0, "base_gap"), 0.2, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_gap"), 0.1, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_val_trend"), -1.8, 1e-9);
  EXPECT_NEAR(num(t, 0, "base_val_loss"), 3.1, 1e-12);
  // 200 steps: Δ = -0.01, +0.02, -0.01 -> mean 0, CI contains 0: within noise; 10 epochs.
  EXPECT_EQ(integer(t, 1, "steps"), 200);
  EXPECT_NEAR(num(t, 1, "epochs"), 10.0, 1e-12);
  EXPECT_NEAR(num(t, 1, "mean_delta"), 0.0, 1e-12);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");
  EXPECT_EQ(integer(t, 1, "favouring"), 2);
  // by_lambda keeps the budgets apart too, and the verdicts name them.
  EXPECT_EQ(r.table("by_lambda").rows.size(), 2u);
  EXPECT_NE(text(r.table("verdicts"), 0, "text").find("100 steps"), std::string::npos);

  // The eval curve: per budget, every shared eval step (0, half, end), Δ mean and CI over the three seeds.
  const Table& c = r.table("eval_curve");
  ASSERT_EQ(c.rows.size(), 6u);
  EXPECT_EQ(integer(c, 0, "step"), 0);
  EXPECT_NEAR(num(c, 0, "mean_delta"), 0.0, 1e-12);
  EXPECT_EQ(integer(c, 1, "step"), 50);
  EXPECT_NEAR(num(c, 1, "mean_delta"), -0.1, 1e-12);  // 3.9 − 4 in every seed: zero spread
  EXPECT_NEAR(num(c, 1, "delta_ci_low"), -0.1, 1e-9);
  EXPECT_NEAR(num(c, 2, "mean_delta"), -0.116667, 1e-6);
  EXPECT_EQ(integer(c, 5, "steps"), 200);
  EXPECT_EQ(integer(c, 5, "step"), 200);
}

// Question 9 varies the baseline itself: experiments that differ only in a setup choice (positions, the
// embedding norm, QK-norm, the output gate, the warmup, the document mask) never share a group, and the model column names the
// choices in which a setup differs from the paper's; the paper's own setup prints the plain model label, as
// every earlier table.
TEST(Report, SetupsThatDifferFromThePapersNeverShareAGroup) {
  std::vector<ExperimentResult> ex;
  for (int s = 0; s < 2; ++s) {
    ExperimentResult paper = budget_experiment(s + 1, 100, "xsa", {9, 4, 3.0}, {9, 4, 2.9}, 2.9, 2.8);
    ExperimentResult learned = budget_experiment(s + 1, 100, "xsa", {9, 4, 3.5}, {9, 4, 3.0}, 3.4, 2.9);
    learned.config.model.pos = PositionEncoding::kLearned;
    learned.config.model.embed_norm = false;
    learned.label = learned.label + "-learned";
    ExperimentResult stabilised = budget_experiment(s + 1, 100, "xsa", {9, 4, 3.2}, {9, 4, 3.1}, 3.1, 3.0);
    stabilised.config.model.qk_norm = true;
    stabilised.config.attention.output_gate = OutputGate::kHeadwise;
    stabilised.config.train.warmup_steps = 150;
    stabilised.label = stabilised.label + "-stabilised";
    ExperimentResult masked = budget_experiment(s + 1, 100, "xsa", {9, 4, 3.1}, {9, 4, 3.05}, 3.0, 2.95);
    masked.config.data.doc_mask = true;  // the paper's setup otherwise: only the mask keeps it apart
    masked.label = masked.label + "-masked";
    ex.insert(ex.end(), {paper, learned, stabilised, masked});
  }
  EXPECT_EQ(setup_label(ex[0].config), "");
  EXPECT_EQ(setup_label(ex[1].config), "learned pos, no emb norm");
  EXPECT_EQ(setup_label(ex[2].config), "QK-norm, headwise gate, warmup 150");
  EXPECT_EQ(setup_label(ex[3].config), "doc mask");
  const Report r = build_report(ex);
  const Table& t = r.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 4u);
  std::set<std::string> models;
  for (std::size_t row = 0; row < t.rows.size(); ++row) {
    EXPECT_EQ(integer(t, row, "n"), 2) << row;
    models.insert(text(t, row, "model"));
  }
  const std::string plain = model_label(ex[0].config.model);
  EXPECT_EQ(models,
            (std::set<std::string>{plain, plain + " (learned pos, no emb norm)",
                                   plain + " (QK-norm, headwise gate, warmup 150)", plain + " (doc mask)"}));
}

// Question 11 trains on long-document corpora beside TinyStories: runs on two corpora never share a group,
// and the model column names the corpus only when the experiments read together trained on more than one.
ExperimentResult on_corpus(ExperimentResult e, const std::string& dir, const std::string& tokenizer,
                           std::int64_t train_tokens) {
  e.data->dir = dir;
  e.data->tokenizer_sha256 = tokenizer;
  e.data->train_tokens = train_tokens;
  e.data->val_tokens = train_tokens / 10;
  e.label += "@" + dir;
  return e;
}

TEST(Report, CorporaNeverShareAGroupAndAreNamedWhenThereAreSeveral) {
  const std::string stories_sha(64, 'a'), code_sha(64, 'b');
  std::vector<ExperimentResult> stories, both;
  for (int s = 1; s <= 2; ++s) {
    // Δ = 2.9 − 3.0 = −0.1 on the stories, 4.0 − 5.0 = −1.0 on the code, for both seeds.
    stories.push_back(on_corpus(budget_experiment(s, 100, "xsa", {9, 4, 3.0}, {9, 4, 2.9}, 2.9, 2.8),
                                "data/tinystories", stories_sha, 1280));
    both.push_back(stories.back());
    both.push_back(on_corpus(budget_experiment(s, 100, "xsa", {9, 4, 5.0}, {9, 4, 4.0}, 4.9, 3.9),
                             "data/corpora/linux-source/tokens/", code_sha, 5000));
  }
  const std::string plain = model_label(stories[0].config.model);
  const Report one = build_report(stories);
  ASSERT_EQ(one.table("by_lambda").rows.size(), 1u);
  EXPECT_EQ(text(one.table("by_lambda"), 0, "model"), plain);  // one corpus: named nowhere
  EXPECT_TRUE(one.table("notes").rows.empty());

  const Report r = build_report(both);
  const Table& t = r.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 2u);  // pooled over corpora it would be one row of mean Δ −0.55
  std::map<std::string, double> delta_by_model;
  for (std::size_t row = 0; row < t.rows.size(); ++row) {
    EXPECT_EQ(integer(t, row, "n"), 2) << row;
    delta_by_model[text(t, row, "model")] = num(t, row, "mean_delta");
  }
  ASSERT_EQ(delta_by_model.size(), 2u);
  EXPECT_NEAR(delta_by_model.at(plain + " on tinystories"), -0.1, 1e-12);
  EXPECT_NEAR(delta_by_model.at(plain + " on linux-source"), -1.0, 1e-12);
  const Table& notes = r.table("notes");
  ASSERT_EQ(notes.rows.size(), 1u);
  EXPECT_EQ(
      text(notes, 0, "text"),
      "the experiments trained on 2 corpora (linux-source, tinystories); the model column names each row's, "
      "and no group, series or selection mixes them");

  // Two corpora of one name (the same folder prepared again with another vocabulary, say) are told apart by
  // their tokenizer's hash and training tokens.
  std::vector<ExperimentResult> renamed = both;
  for (auto& e : renamed)
    if (e.data->tokenizer_sha256 == code_sha) e.data->dir = "elsewhere/tinystories";
  std::set<std::string> models;
  const Report twice = build_report(renamed);
  for (std::size_t row = 0; row < twice.table("by_lambda").rows.size(); ++row)
    models.insert(text(twice.table("by_lambda"), row, "model"));
  EXPECT_EQ(models, (std::set<std::string>{plain + " on tinystories (tokenizer aaaaaaaa, 1280 tokens)",
                                           plain + " on tinystories (tokenizer bbbbbbbb, 5000 tokens)"}));
}

// The corpus is not part of the setup: the setup selection, which sets the setup aside to compare setups,
// never compares the paper's setup on one corpus with QK-norm on another.
TEST(Report, SetupSelectionNeverComparesSetupsAcrossCorpora) {
  std::vector<ExperimentResult> ex;
  for (int s = 1; s <= 2; ++s) {
    ex.push_back(on_corpus(budget_experiment(s, 100, "xsa", {9, 4, 3.0}, {9, 4, 2.9}, 2.9, 2.8),
                           "data/tinystories", std::string(64, 'a'), 1280));
    ExperimentResult qk = on_corpus(budget_experiment(s, 100, "xsa", {9, 4, 5.0}, {9, 4, 4.0}, 4.9, 3.9),
                                    "data/corpora/kjv/tokens", std::string(64, 'b'), 5000);
    qk.config.model.qk_norm = true;
    ex.push_back(qk);
  }
  EXPECT_TRUE(build_report(ex).table("setup_selection").rows.empty());
  for (auto& e : ex) e.data = ex[0].data;  // one corpus: the two setups are candidates of one selection
  EXPECT_EQ(build_report(ex).table("setup_selection").rows.size(), 1u);
}

TEST(Report, CorpusNameIsTheDataFolderOrTheOneAboveItsTokens) {
  EXPECT_EQ(corpus_name("data/tinystories"), "tinystories");
  EXPECT_EQ(corpus_name("data/corpora/kjv/tokens"), "kjv");
  EXPECT_EQ(corpus_name("/abs/path/linux-doc/tokens/"), "linux-doc");
  EXPECT_EQ(corpus_name("./tokens"), "tokens");
  EXPECT_EQ(corpus_name("stories"), "stories");
}

TEST(Report, LearnedRunsWithADifferentLambdaLrNeverShareAGroup) {
  const Discovery d = discover_results({kSingle});
  ASSERT_EQ(d.experiments.size(), 1u);
  ExperimentResult scaled = d.experiments[0];
  scaled.label = "tiny-lr30";
  scaled.config.attention.lambda_lr_scale = 30.0;
  const std::vector<ExperimentResult> both = {d.experiments[0], scaled};
  const Report report = build_report(both);
  const Table& t = report.table("by_lambda");
  // xsa is one group (fixed λ has no λ parameters), where the copy repeats the same measurement and counts
  // once; learned and learned lr×30 are apart.
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(text(t, 0, "lambda"), "1");
  EXPECT_EQ(integer(t, 0, "n"), 1);
  EXPECT_EQ(text(t, 1, "lambda"), "learned");
  EXPECT_EQ(integer(t, 1, "n"), 1);
  EXPECT_EQ(text(t, 2, "lambda"), "learned lr×30");
  EXPECT_EQ(integer(t, 2, "n"), 1);
  const std::vector<ExperimentResult> kept = select_lambdas(both, "learned lr×30");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].label, "tiny-lr30");
  // The per-head table and the paired table keep them apart too.
  const Table& heads = report.table("learned_lambda");
  ASSERT_EQ(heads.rows.size(), 4u);  // 2 layers × {learned, learned lr×30}
  std::set<std::string> variants;
  for (std::size_t r = 0; r < heads.rows.size(); ++r) variants.insert(text(heads, r, "variant"));
  EXPECT_EQ(variants, (std::set<std::string>{"learned", "learned lr×30"}));
  EXPECT_EQ(text(report.table("paired"), 5, "lambda"), "learned lr×30");
  // A scale of exactly 1 written out (as a float or an integer) is the default: no suffix.
  for (const char* one : {"1.0", "1"}) {
    json doc = to_json(d.experiments[0]);
    doc["config"]["attention"]["lambda_lr_scale"] = json::parse(one);
    doc["runs"][2].erase("label");
    const ExperimentResult explicit_one = parse_results(doc, "one.json");
    EXPECT_EQ(variant_group_label(explicit_one, explicit_one.runs[2]), "learned") << one;
  }
}

}  // namespace
}  // namespace xsa::report
