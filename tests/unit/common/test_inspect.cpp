// results.json reading/discovery, the report tables and the xsa-inspect command, on the fixtures in
// tests/fixtures/report (regenerate with make_fixtures.py there). Expected numbers are worked out by hand
// from the fixture losses in the comments below, not from the code under test.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "process.h"
#include "table_cells.h"
#include "xsa/records/results.h"
#include "xsa/report/discovery.h"
#include "xsa/report/sections.h"
#include "xsa/report/select.h"
#include "xsa/report/table.h"
#include "xsa/util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace xsa::report {
using namespace xsa::stats;  // the statistics vocabulary, as the report itself (xsa/stats/stats.h)
namespace {

const std::string kFixtures = std::string(XSA_FIXTURES_DIR) + "/report";
const std::string kSingle = kFixtures + "/single";
const std::string kSweep = kFixtures + "/sweep";

// ---- results.json reader -------------------------------------------------------------------------------

TEST(Results, VariantRecordFromName) {
  EXPECT_EQ(*variant_record_from_name("sa").lambda, 0.0);
  EXPECT_EQ(*variant_record_from_name("xsa").lambda, 1.0);
  EXPECT_EQ(*variant_record_from_name("lambda=0.25").lambda, 0.25);
  const VariantRecord odd = variant_record_from_name("lambda=abc");
  EXPECT_FALSE(odd.lambda.has_value());
  EXPECT_EQ(variant_label(variant_record_from_name("lambda=0.50"), {}, 1.0), "0.5");
  EXPECT_EQ(variant_label(variant_record_from_name("xsa"), {}, 1.0), "1");
  EXPECT_EQ(variant_label({"learned", std::nullopt, std::nullopt}, {}, 1.0), "learned");
  // A variant on some layers only never shares a label with the same variant on every layer; a learning-rate
  // scale names itself only where there are parameters to scale.
  EXPECT_EQ(variant_label(variant_record_from_name("xsa@2-3"), {2, 3}, 30.0), "1@2-3");
  EXPECT_EQ(variant_label({"tanh_gate", std::nullopt, std::nullopt}, {0, 1, 3}, 30.0),
            "tanh_gate@0-1+3 lr×30");
  EXPECT_EQ(variant_record_from_name("tanh_gate@1").kind, "tanh_gate");
}

TEST(Results, ReadsASinglePairedRunAndToleratesExtraFields) {
  const ExperimentResult r = read_results(kSingle + "/tiny/results.json");
  EXPECT_EQ(r.label, "tiny");
  EXPECT_EQ(r.seq_len(), 128);
  EXPECT_EQ(r.config.seed, 1337u);
  EXPECT_EQ(r.config.model.n_layer, 2);      // recorded
  EXPECT_EQ(r.config.train.batch_size, 32);  // not recorded by this hand-made file: the default
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.runs[1].variant, "xsa");
  EXPECT_EQ(r.runs[1].spec.kind, "fixed");
  EXPECT_DOUBLE_EQ(*r.runs[1].spec.lambda, 1.0);
  EXPECT_EQ(r.runs[2].spec.kind, "learned");
  EXPECT_FALSE(r.runs[2].spec.lambda.has_value());
  EXPECT_DOUBLE_EQ(r.runs[1].final.val_loss, 2.45);
  EXPECT_DOUBLE_EQ(*r.runs[1].final.val_loss_sem, 0.012);
  ASSERT_EQ(r.runs[2].bias.size(), 2u);
  EXPECT_EQ(r.runs[2].bias[1].step, 100);
  EXPECT_EQ(r.runs[2].bias[1].layers[0].lambda_per_head, (std::vector<double>{0.5, 0.7, 0.9, 0.3}));
  ASSERT_EQ(r.comparisons.size(), 2u);
  EXPECT_NEAR(r.comparisons[0].delta_val_loss, -0.05, 1e-12);
  EXPECT_NEAR(r.comparisons[0].improvement_pct, 2.0, 1e-12);
}

TEST(Results, MissingComparisonsAreDerivedFromFinalLosses) {
  json doc = to_json(read_results(kSingle + "/tiny/results.json"));
  doc.erase("comparisons");
  const ExperimentResult r = parse_results(doc, "mem.json");
  ASSERT_EQ(r.comparisons.size(), 2u);
  // learned: 2.47 - 2.50 = -0.03; 100 · 0.03 / 2.50 = 1.2 %.
  EXPECT_EQ(r.comparisons[1].variant, "learned");
  EXPECT_NEAR(r.comparisons[1].delta_val_loss, -0.03, 1e-12);
  EXPECT_NEAR(r.comparisons[1].improvement_pct, 1.2, 1e-12);
}

TEST(Results, WriterRoundTrips) {
  const ExperimentResult a = read_results(kSingle + "/tiny/results.json");
  const ExperimentResult b = parse_results(to_json(a), a.source);
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.runs[2].bias[1].layers[1].lambda_per_head.size(), 4u);
  EXPECT_EQ(b.config, a.config);
}

std::string input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no InputError>";
}

TEST(Results, ErrorsNameTheFileAndTheKeyOnOneLine) {
  const std::string missing = kFixtures + "/bad/missing_key/results.json";
  const std::string msg = input_error([&] { read_results(missing); });
  EXPECT_EQ(msg, missing + ": missing key runs[1].final.val_loss");

  const std::string schema = input_error([&] { read_results(kFixtures + "/bad/wrong_schema.json"); });
  EXPECT_NE(schema.find("wrong_schema.json: key schema: expected \"xsa.results/1\""), std::string::npos);

  json doc = to_json(read_results(kSingle + "/tiny/results.json"));
  doc["config"]["data"]["seq_len"] = "long";
  EXPECT_EQ(
      input_error([&] { parse_results(doc, "x.json"); }),
      "x.json: config: data.seq_len: got the quoted string \"long\", expected an integer in [1, 1,048,576]");
  // The config is read back through the key table: a key it does not know (renamed, mistyped) is an error,
  // never silently a default.
  doc = to_json(read_results(kSingle + "/tiny/results.json"));
  doc["config"]["train"]["stepz"] = 300;
  EXPECT_NE(
      input_error([&] { parse_results(doc, "x.json"); }).find("x.json: config: unknown key 'train.stepz'"),
      std::string::npos);
  doc = json::array();
  EXPECT_NE(input_error([&] { parse_results(doc, "x.json"); }).find("x.json: expected a JSON object"),
            std::string::npos);
  EXPECT_NE(input_error([&] { read_results(kFixtures + "/bad/not_json.json"); }).find("not valid JSON"),
            std::string::npos);
}

TEST(Results, DiscoversASweepAcrossShardsAndNotesMissingPoints) {
  const Discovery d = discover_results({kSweep});
  ASSERT_EQ(d.experiments.size(), 6u);
  // Sorted by path: lambda0.5-seed1..3 then lambda1-seed1..3.
  EXPECT_EQ(d.experiments.front().label, "lambda0.5-seed1");
  EXPECT_EQ(d.experiments.back().label, "lambda1-seed3");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(
      d.notes[0].find("summary.shard-2-of-2.json: 1 point(s) without results.json: lambda1-seed4 (failed)"),
      std::string::npos);
}

// A summary that is not one is a note (one that cannot be read is an error, through read_file like any
// input); a listed point without a status reads as pending.
TEST(Results, DiscoveryReadsSummariesStrictlyButNotesWhatIsNotOne) {
  xsa::testing::TempDir tmp;
  const fs::path dir = tmp.path();
  auto write_summary = [&](const std::string& text) { xsa::testing::spit(dir / "summary.json", text); };
  write_summary(
      R"({"schema": "xsa.sweep/1", "points": [{"run_id": "a"}, {"run_id": "b", "status": "failed"}]})");
  Discovery d = discover_results({dir.string(), kSingle});  // one results.json somewhere, or nothing to read
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("2 point(s) without results.json: a (pending), b (failed)"), std::string::npos)
      << d.notes[0];
  write_summary(R"({"schema": "xsa.sweep/1"})");
  d = discover_results({dir.string(), kSingle});
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("summary.json: ignored (not a sweep summary with \"points\")"),
            std::string::npos);
}

TEST(Results, DiscoveryDeduplicatesAndRejectsBadPaths) {
  // The same file through its folder and directly counts once.
  const Discovery d = discover_results({kSingle, kSingle + "/tiny/results.json"});
  EXPECT_EQ(d.experiments.size(), 1u);

  EXPECT_EQ(input_error([] { discover_results({"/nonexistent/xsa"}); }),
            "/nonexistent/xsa: no such file or folder");
  const xsa::testing::TempDir empty;
  EXPECT_EQ(input_error([&] { discover_results({empty.path()}); }), empty.path() + ": no results.json found");
}

// ---- report tables -------------------------------------------------------------------------------------

Report fixture_report() {
  Discovery d = discover_results({kSingle, kSweep});
  return build_report(d.experiments, d.notes);
}

using testing::empty;  // tests/support/table_cells.h
using testing::integer;
using testing::num;
using testing::text;

TEST(Report, PairedTableListsEveryRunWithDeltaOnVariantsOnly) {
  const Report report = fixture_report();
  const Table& t = report.table("paired");
  ASSERT_EQ(t.rows.size(), 3u + 12u);  // tiny: sa, xsa, learned; sweep: 6 × (sa + variant)
  // Rows follow the sorted paths: .../single/tiny before .../sweep/lam/...
  EXPECT_EQ(text(t, 0, "experiment"), "tiny");
  EXPECT_TRUE(empty(t, 0, "delta_val_loss"));
  EXPECT_EQ(text(t, 1, "variant"), "xsa");
  EXPECT_DOUBLE_EQ(num(t, 1, "val_loss"), 2.45);
  EXPECT_DOUBLE_EQ(num(t, 1, "val_loss_sem"), 0.012);
  EXPECT_NEAR(num(t, 1, "delta_val_loss"), -0.05, 1e-12);
  EXPECT_NEAR(num(t, 1, "improvement_pct"), 2.0, 1e-9);
  // lambda0.5-seed3: 1.91 vs 1.90 -> Δ +0.01, improvement 100·(-0.01)/1.90 = -0.526316 %.
  EXPECT_EQ(text(t, 8, "experiment"), "lambda0.5-seed3");
  EXPECT_EQ(text(t, 8, "variant"), "lambda=0.5");
  EXPECT_EQ(text(t, 8, "lambda"), "0.5");
  EXPECT_EQ(integer(t, 8, "seed"), 3);
  EXPECT_NEAR(num(t, 8, "improvement_pct"), -0.526316, 1e-6);
}

TEST(Report, BySeqLenGroupsSeedsWithStudentTIntervals) {
  const Report report = fixture_report();
  const Table& t = report.table("by_seq_len");
  // Sorted by seq_len, then λ (numbers before "learned").
  ASSERT_EQ(t.rows.size(), 4u);

  // seq_len 64, λ=0.5: Δ = {-0.02, -0.03, +0.01}; mean -0.0133333, sd 0.0208167, SEM 0.0120185,
  // t_{0.975,2} = 4.302653 -> CI [-0.0650447, 0.0383781] contains 0. Improvements {1, 1.428571, -0.526316}:
  // mean 0.634085, sd 1.027529, SEM 0.593244 -> CI [-1.918438, 3.186608]. 2 of 3 seeds lower the loss.
  EXPECT_EQ(integer(t, 0, "seq_len"), 64);
  EXPECT_EQ(text(t, 0, "lambda"), "0.5");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "favouring"), 2);
  EXPECT_NEAR(num(t, 0, "mean_delta"), -0.0133333, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_low"), -0.0650447, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_high"), 0.0383781, 1e-6);
  EXPECT_NEAR(num(t, 0, "mean_improvement_pct"), 0.634085, 1e-6);
  EXPECT_NEAR(num(t, 0, "improvement_ci_low"), -1.918438, 1e-5);
  EXPECT_NEAR(num(t, 0, "improvement_ci_high"), 3.186608, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");
  // Each arm's mean final val loss: SA {2.0, 2.1, 1.9} -> 2.0, λ=0.5 {1.98, 2.07, 1.91} -> 1.986667.
  EXPECT_NEAR(num(t, 0, "base_val_loss"), 2.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_val_loss"), 5.96 / 3, 1e-12);

  // seq_len 64, xsa (λ=1): Δ = {-0.05, -0.06, -0.04} -> CI [-0.0748414, -0.0251586] -> better, 3/3.
  // Improvements {2.5, 2.857143, 2.105263}: mean 2.487469.
  EXPECT_EQ(text(t, 1, "lambda"), "1");
  EXPECT_EQ(integer(t, 1, "favouring"), 3);
  EXPECT_NEAR(num(t, 1, "delta_ci_low"), -0.0748414, 1e-6);
  EXPECT_NEAR(num(t, 1, "delta_ci_high"), -0.0251586, 1e-6);
  EXPECT_NEAR(num(t, 1, "mean_improvement_pct"), 2.487469, 1e-6);
  EXPECT_EQ(text(t, 1, "verdict"), "better");

  // seq_len 128: single seed -> no CI, verdict undefined.
  EXPECT_EQ(integer(t, 2, "seq_len"), 128);
  EXPECT_EQ(integer(t, 2, "n"), 1);
  EXPECT_TRUE(empty(t, 2, "delta_ci_low"));
  EXPECT_TRUE(empty(t, 2, "improvement_ci_high"));
  EXPECT_EQ(text(t, 2, "verdict"), "undefined (n=1)");
  EXPECT_EQ(text(t, 3, "lambda"), "learned");
}

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

// A paired SA vs XSA result with a given improvement (the comparison is taken as written).
// Without `config_seed` only the runs name the seed.
ExperimentResult length_point(std::int64_t seq_len, std::int64_t batch, std::uint64_t seed,
                              double improvement, bool config_seed = true) {
  auto run = [&](const char* variant, double lambda) {
    return json{{"variant", variant},
                {"variant_spec", {{"kind", "fixed"}, {"lambda", lambda}}},
                {"lambda", lambda},
                {"seed", seed},
                {"final", {{"val_loss", 2.0}}}};
  };
  json doc = {{"schema", "xsa.results/1"},
              {"name", "trend"},
              {"config",
               {{"seed", seed},
                {"data", {{"seq_len", seq_len}}},
                {"train", {{"steps", 300}, {"batch_size", batch}}}}},
              {"runs", {run("sa", 0.0), run("xsa", 1.0)}},
              {"comparisons",
               {{{"baseline", "sa"},
                 {"variant", "xsa"},
                 {"delta_val_loss", -improvement / 50},
                 {"improvement_pct", improvement}}}}};
  if (!config_seed) doc["config"].erase("seed");
  return parse_results(doc, "mem.json");
}

// The same at a training budget of `steps` steps.
ExperimentResult budget_point(std::int64_t steps, std::int64_t seq_len, std::int64_t batch,
                              std::uint64_t seed, double improvement) {
  ExperimentResult e = length_point(seq_len, batch, seed, improvement);
  e.config.train.steps = static_cast<int>(steps);
  return e;
}

TEST(Report, SeqLenTrendIsTheMeanPerSeedSlopePerDoublingOfT) {
  std::vector<ExperimentResult> points;
  // 4,096 tokens per step (batch = 4096 / T), improvements % at T = 64, 128, 256 (log2 T = 6, 7, 8):
  // seed 1: 3, 2, 1 -> slope -1; seed 2: 4, 4, 1 -> slope ((-1)(+1) + (+1)(-2)) / 2 = -1.5; seed 3: 2, 2, 2
  // -> 0. Mean -0.833333, sd 0.763763, SEM 0.440959, t_{0.975,2} = 4.302653 -> CI [-2.730625, +1.063958]:
  // noise.
  const double improvements[3][3] = {{3, 2, 1}, {4, 4, 1}, {2, 2, 2}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(length_point(64 << i, 64 >> i, seed, improvements[seed - 1][i]));
  points.push_back(length_point(64, 64, 4, 9.0));  // seed 4 lacks T = 128 and 256: left out of the slope
  // Batch fixed at 32 (tokens per step grow with T) at T = 64 and 256; T = 128 at batch 32 is on both lines,
  // this one and the 4,096-tokens one above. Seed 1: 5, 2, 1 -> slope ((-1)(5 - 8/3) + (+1)(1 - 8/3)) / 2 =
  // -2; seed 2: 6, 4, 2 -> -2; sd 0 -> CI [-2, -2]. Seed 3 has only T = 128 at batch 32: left out.
  points.push_back(length_point(64, 32, 1, 5));
  points.push_back(length_point(256, 32, 1, 1));
  points.push_back(length_point(64, 32, 2, 6));
  points.push_back(length_point(256, 32, 2, 2));

  const Report report = build_report(points);
  const Table& t = report.table("seq_len_trend");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(text(t, 0, "design"), "4096 tokens/step");
  EXPECT_EQ(text(t, 0, "seq_lens"), "64 128 256");
  EXPECT_EQ(text(t, 0, "lambda"), "1");
  EXPECT_EQ(integer(t, 0, "steps"), 300);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "falling"), 2);
  EXPECT_NEAR(num(t, 0, "slope"), -0.833333, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_low"), -2.730625, 1e-5);
  EXPECT_NEAR(num(t, 0, "slope_ci_high"), 1.063958, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");

  EXPECT_EQ(text(t, 1, "design"), "batch 32");
  EXPECT_EQ(text(t, 1, "seq_lens"), "64 128 256");
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_EQ(integer(t, 1, "falling"), 2);
  EXPECT_NEAR(num(t, 1, "slope"), -2.0, 1e-12);
  EXPECT_NEAR(num(t, 1, "slope_ci_high"), -2.0, 1e-9);
  EXPECT_EQ(text(t, 1, "verdict"), "shrinks with T");

  // Rising gains give the opposite verdict: seed 1: 1, 2, 3; seed 2: 1, 3, 4 (slope 1.5); seed 3: 0, 1, 2.
  std::vector<ExperimentResult> rising;
  const double up[3][3] = {{1, 2, 3}, {1, 3, 4}, {0, 1, 2}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i) rising.push_back(length_point(64 << i, 64 >> i, seed, up[seed - 1][i]));
  const Report rising_report = build_report(rising);
  const Table& r = rising_report.table("seq_len_trend");
  ASSERT_EQ(r.rows.size(), 1u);
  // Slopes {1, 1.5, 1}: mean 1.166667, sd 0.288675, SEM 0.166667 -> CI [0.449558, 1.883775].
  EXPECT_NEAR(num(r, 0, "slope_ci_low"), 0.449558, 1e-5);
  EXPECT_EQ(integer(r, 0, "falling"), 0);
  EXPECT_EQ(text(r, 0, "verdict"), "grows with T");

  // Results whose config lacks the seed pair by the runs' seed: seeds 1-3 at T = 64 and 128 (slope = the
  // difference): 2 -> 1, 3 -> 1, 1 -> 1 give slopes {-1, -2, 0}, mean -1.
  std::vector<ExperimentResult> run_seeds;
  const double two[3][2] = {{2, 1}, {3, 1}, {1, 1}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 2; ++i)
      run_seeds.push_back(length_point(64 << i, 64 >> i, seed, two[seed - 1][i], false));
  ASSERT_EQ(run_seeds[0].config.seed, Config{}.seed);  // the config's seed reads as its default
  const Report run_seed_report = build_report(run_seeds);
  const Table& u = run_seed_report.table("seq_len_trend");
  ASSERT_EQ(u.rows.size(), 1u);
  EXPECT_EQ(integer(u, 0, "n"), 3);
  EXPECT_NEAR(num(u, 0, "slope"), -1.0, 1e-12);
}

TEST(Report, SeqLenTrendNeedsSeedsWithEveryLength) {
  // The fixtures' λ=1 has seq_len 64 (sweep seeds 1-3) and 128 (the single run, seed 1337): no seed has both.
  const Report report = fixture_report();
  const Table& t = report.table("seq_len_trend");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "seq_lens"), "64 128");
  EXPECT_EQ(text(t, 0, "design"), "batch 32");  // the fixtures' configs leave train.batch_size at its default
  EXPECT_EQ(integer(t, 0, "n"), 0);
  EXPECT_TRUE(empty(t, 0, "slope"));
  EXPECT_EQ(text(t, 0, "verdict"), "undefined (n=0)");
  // A single length has no trend at all.
  const Report single = build_report({read_results(kSingle + "/tiny/results.json")});
  const Table& one = single.table("seq_len_trend");
  EXPECT_TRUE(one.rows.empty());
}

TEST(Report, BudgetTrendIsTheMeanPerSeedSlopePerDoublingOfSteps) {
  // T = 128 at batch 32, improvements % at 300, 1,200 and 2,400 steps (log2: 8.2288, 10.2288, 11.2288;
  // centred -1.6667, +0.3333, +1.3333, Sxx 4.6667): seed 1: 3, 2, 1.5 -> Sxy -2.3333, slope -0.5; seed 2: 4,
  // 3, 2.5 -> -0.5; seed 3: 3.5, 2.4, 2.0 -> Sxy -2.3667, slope -0.507143. Mean -0.502381, sd 0.004124, SEM
  // 0.002381, t_{0.975,2} = 4.302653 -> CI [-0.512625, -0.492137]: shrinks. Seed 4 has only 300 steps: left
  // out.
  const double gains[3][3] = {{3, 2, 1.5}, {4, 3, 2.5}, {3.5, 2.4, 2.0}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(
          budget_point(std::int64_t{300} << (i == 0 ? 0 : i + 1), 128, 32, seed, gains[seed - 1][i]));
  points.push_back(budget_point(300, 128, 32, 4, 9.0));
  // T = 256 at batch 16, 300 and 1,200 steps (log2 apart by 2): seed 1: 1 -> 2 (slope 0.5); seed 2: 1 -> 3
  // (1.0). Mean 0.75, sd 0.353553, SEM 0.25, t_{0.975,1} = 12.706205 -> CI [-2.426551, +3.926551]: noise.
  points.push_back(budget_point(300, 256, 16, 1, 1));
  points.push_back(budget_point(1200, 256, 16, 1, 2));
  points.push_back(budget_point(300, 256, 16, 2, 1));
  points.push_back(budget_point(1200, 256, 16, 2, 3));
  points.push_back(budget_point(300, 64, 64, 1, 5));  // one budget at T = 64: no trend, no row

  const Report report = build_report(points);
  const Table& t = report.table("budget_trend");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(integer(t, 0, "seq_len"), 128);
  EXPECT_EQ(integer(t, 0, "batch"), 32);
  EXPECT_EQ(text(t, 0, "lambda"), "1");
  EXPECT_EQ(text(t, 0, "budgets"), "300 1200 2400");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "falling"), 3);
  EXPECT_NEAR(num(t, 0, "slope"), -0.502381, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_low"), -0.512625, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_high"), -0.492137, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "shrinks with the budget");

  EXPECT_EQ(integer(t, 1, "seq_len"), 256);
  EXPECT_EQ(text(t, 1, "budgets"), "300 1200");
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_EQ(integer(t, 1, "falling"), 0);
  EXPECT_NEAR(num(t, 1, "slope"), 0.75, 1e-12);
  EXPECT_NEAR(num(t, 1, "slope_ci_low"), -2.426551, 1e-5);
  EXPECT_NEAR(num(t, 1, "slope_ci_high"), 3.926551, 1e-5);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");

  // A single budget has no trend; one seed at two budgets has a slope but no CI.
  EXPECT_TRUE(build_report({budget_point(300, 128, 32, 1, 3)}).table("budget_trend").rows.empty());
  const Report one_seed = build_report({budget_point(300, 128, 32, 1, 3), budget_point(1200, 128, 32, 1, 2)});
  const Table& o = one_seed.table("budget_trend");
  ASSERT_EQ(o.rows.size(), 1u);
  EXPECT_NEAR(num(o, 0, "slope"), -0.5, 1e-12);
  EXPECT_TRUE(empty(o, 0, "slope_ci_low"));
  EXPECT_EQ(text(o, 0, "verdict"), "undefined (n=1)");
}

TEST(Report, BudgetTrendChangeIsTheLastIntervalsSlopeMinusTheFirstsPerSeed) {
  // T = 128 at batch 32, improvements % at 300, 600, 1,200, 2,400 steps (one doubling apart), so a slope over
  // an interval is the difference of the gains. Seed 1: 4, 3, 2.6, 2.4 -> first -1, last -0.2, change +0.8;
  // seed 2: 5, 3.8, 3.0, 2.7 -> -1.2, -0.3, +0.9; seed 3: 4.5, 3.5, 3.1, 2.9 -> -1.0, -0.2, +0.8. Changes:
  // mean 0.833333, sd 0.057735, SEM 0.033333, t_{0.975,2} = 4.302653 -> CI [0.689912, 0.976755]: the slope
  // rises (the shrinking slows). First slopes mean -1.066667, last -0.233333. Seed 4 lacks 600 and 1,200:
  // left out. The middle point (600 -> 1,200) is in neither interval.
  auto at = [](std::int64_t steps, std::int64_t seq_len, std::uint64_t seed, double gain) {
    return budget_point(steps, seq_len, 32, seed, gain);
  };
  const double gains[3][4] = {{4, 3, 2.6, 2.4}, {5, 3.8, 3.0, 2.7}, {4.5, 3.5, 3.1, 2.9}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 4; ++i) points.push_back(at(std::int64_t{300} << i, 128, seed, gains[seed - 1][i]));
  points.push_back(at(300, 128, 4, 9.0));
  points.push_back(at(2400, 128, 4, 1.0));
  // T = 256: two budgets only, one interval: no row.
  points.push_back(at(300, 256, 1, 1));
  points.push_back(at(1200, 256, 1, 2));

  const Report report = build_report(points);
  const Table& t = report.table("budget_trend_change");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "seq_len"), 128);
  EXPECT_EQ(text(t, 0, "budgets"), "300 600 1200 2400");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "first_slope"), -1.066667, 1e-6);
  EXPECT_NEAR(num(t, 0, "last_slope"), -0.233333, 1e-6);
  EXPECT_EQ(integer(t, 0, "rising"), 3);
  EXPECT_NEAR(num(t, 0, "change"), 0.833333, 1e-6);
  EXPECT_NEAR(num(t, 0, "change_ci_low"), 0.689912, 1e-6);
  EXPECT_NEAR(num(t, 0, "change_ci_high"), 0.976755, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "slope rises");

  // Unequal intervals: 300 -> 1,200 is two doublings. Gains 3, 2, 1.5 give -0.5 and -0.5 (change 0); a
  // steeper fall over the last interval (3, 2, 1) gives -0.5 and -1 (change -0.5). One seed: no CI.
  auto three = [&](std::uint64_t seed, double a, double b, double c) {
    return std::vector<ExperimentResult>{at(300, 128, seed, a), at(1200, 128, seed, b),
                                         at(2400, 128, seed, c)};
  };
  const Report one_seed = build_report(three(1, 3, 2, 1.5));
  const Table& flat = one_seed.table("budget_trend_change");
  ASSERT_EQ(flat.rows.size(), 1u);
  EXPECT_NEAR(num(flat, 0, "change"), 0.0, 1e-12);
  EXPECT_EQ(integer(flat, 0, "rising"), 0);
  EXPECT_TRUE(empty(flat, 0, "change_ci_low"));
  EXPECT_EQ(text(flat, 0, "verdict"), "undefined (n=1)");
  std::vector<ExperimentResult> steeper = three(1, 3, 2, 1);
  for (auto& e : three(2, 4, 3, 1.9)) steeper.push_back(e);  // -0.5, -1.1: change -0.6
  const Report two_seeds = build_report(steeper);
  const Table& s = two_seeds.table("budget_trend_change");
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_NEAR(num(s, 0, "change"), -0.55, 1e-12);
  EXPECT_NEAR(num(s, 0, "last_slope"), -1.05, 1e-12);
  // changes -0.5, -0.6: sd 0.070711, SEM 0.05, t_{0.975,1} = 12.706205 -> [-1.185310, +0.085310]: noise.
  EXPECT_NEAR(num(s, 0, "change_ci_low"), -1.185310, 1e-5);
  EXPECT_EQ(text(s, 0, "verdict"), "within noise");
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

TEST(Report, BiasMetricsAreFinalValuesAveragedOverSeeds) {
  const Report report = fixture_report();
  const Table& t = report.table("bias");
  // 64/0.5 and 64/1 and 128/1 and 128/learned, two layers each.
  ASSERT_EQ(t.rows.size(), 8u);
  // Row 2 = seq_len 64, xsa, layer 0. Final (step 100) xsa cos_y_v over seeds = {0.30, 0.32, 0.34} -> 0.32,
  // cos_z_v {0.01, 0.02, 0.03} -> 0.02; sa cos_y_v {0.40, 0.41, 0.42} -> 0.41, attn_diag {0.20,0.22,0.24} ->
  // 0.22.
  EXPECT_EQ(text(t, 2, "lambda"), "1");
  EXPECT_EQ(integer(t, 2, "layer"), 0);
  EXPECT_EQ(integer(t, 2, "n"), 3);
  EXPECT_EQ(integer(t, 2, "step"), 100);
  EXPECT_NEAR(num(t, 2, "var_cos_y_v"), 0.32, 1e-9);
  EXPECT_NEAR(num(t, 2, "var_cos_z_v"), 0.02, 1e-9);
  EXPECT_NEAR(num(t, 2, "base_cos_y_v"), 0.41, 1e-9);
  EXPECT_NEAR(num(t, 2, "base_attn_diag"), 0.22, 1e-9);
  EXPECT_TRUE(empty(t, 2, "var_lambda_mean"));
  // Row 6 = seq_len 128, learned, layer 0: heads {0.5, 0.7, 0.9, 0.3} -> mean learned λ 0.6.
  EXPECT_EQ(text(t, 6, "lambda"), "learned");
  EXPECT_NEAR(num(t, 6, "var_lambda_mean"), 0.6, 1e-12);
}

TEST(Report, VerdictLinesPerGroupPlusPooledOnlyWhenItPools) {
  const Report report = fixture_report();
  const Table& t = report.table("verdicts");
  // Four per-seq_len groups + one pooled line (λ=1 spans 64 and 128); λ=0.5 and learned pool nothing new.
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(text(t, 0, "text"),
            "λ=0.5 vs sa, seq_len 64: within noise — mean Δ -0.0133 (95% CI [-0.0650, +0.0384]), "
            "improvement +0.63%, 2/3 seeds favour the variant");
  EXPECT_EQ(text(t, 1, "verdict"), "better");
  EXPECT_NE(text(t, 2, "text").find("CI undefined with a single seed"), std::string::npos);
  EXPECT_EQ(text(t, 4, "scope"), "pooled");
  EXPECT_EQ(text(t, 4, "verdict"), "better");
}

// ---- budgets, eval curves, bias at init, learned λ (built in memory) -----------------------------------

// One paired experiment of seed `seed`: sa and one variant, `steps` steps of 4 x 16 tokens on a 1,280-token
// train split, with the given eval curves (step 0, steps/2, steps), final train losses and bias points.
ExperimentResult budget_experiment(std::int64_t seed, std::int64_t steps, const std::string& variant,
                                   std::vector<double> base_eval, std::vector<double> var_eval,
                                   double base_train, double var_train) {
  ExperimentResult e;
  e.label = "steps" + std::to_string(steps) + "-seed" + std::to_string(seed);
  e.name = "budget";
  e.data = DataInfo{};
  e.data->train_tokens = 1280;
  e.config.data.seq_len = 16;
  e.config.train.steps = static_cast<int>(steps);
  e.config.train.batch_size = 4;
  e.config.seed = static_cast<std::uint64_t>(seed);
  const std::vector<std::int64_t> at = {0, steps / 2, steps};
  RunResult base, var;
  base.variant = "sa";
  base.spec = variant_record_from_name("sa");
  var.variant = variant;
  var.spec = variant_record_from_name(variant);
  if (variant == "learned") var.spec = {"learned", std::nullopt, std::nullopt};
  for (std::size_t i = 0; i < at.size(); ++i) {
    base.eval.push_back({at[i], base_eval[i]});
    var.eval.push_back({at[i], var_eval[i]});
  }
  base.final.val_loss = base_eval.back();
  base.final.train_loss = base_train;
  var.final.val_loss = var_eval.back();
  var.final.train_loss = var_train;
  e.runs = {base, var};
  e.comparisons.push_back({"sa", variant, var.final.val_loss - base.final.val_loss,
                           100.0 * (base.final.val_loss - var.final.val_loss) / base.final.val_loss});
  return e;
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

TEST(Report, BiasAtInitAndLearnedLambdaPerHead) {
  std::vector<ExperimentResult> ex;
  // Learned λ per head at the end: seed 1 {0.2, 0.8}, seed 2 {0.4, 0.6}; layer means 0.5, 0.5.
  const std::vector<std::vector<double>> heads = {{0.2, 0.8}, {0.4, 0.6}};
  for (int s = 0; s < 2; ++s) {
    ExperimentResult e = budget_experiment(s + 1, 100, "learned", {9, 4, 3}, {9, 4, 3}, 2.9, 2.9);
    for (int r = 0; r < 2; ++r) {
      LayerBias init{0, 0.1 * (s + 1), r == 0 ? 0.1 * (s + 1) : 0.0, 0.05, 0.2, {}};
      LayerBias end{0, 0.5 + 0.1 * s, r == 0 ? 0.5 + 0.1 * s : 0.01, 0.1, 0.4, {}};
      if (r == 1) end.lambda_per_head = heads[s];
      e.runs[r].bias = {{0, {init}}, {100, {end}}};
    }
    ex.push_back(e);
  }
  const Report r = build_report(ex);
  const Table& init = r.table("bias_init");
  ASSERT_EQ(init.rows.size(), 1u);
  EXPECT_EQ(integer(init, 0, "step"), 0);
  // cos(y,v) at init: {0.1, 0.2} -> 0.15 ± t_{0.975,1} * 0.0707107/√2 = 12.706205 * 0.05 = 0.635310.
  EXPECT_NEAR(num(init, 0, "base_cos_y_v"), 0.15, 1e-12);
  EXPECT_NEAR(num(init, 0, "base_cos_y_v_ci"), 0.635310, 1e-5);
  EXPECT_NEAR(num(init, 0, "var_cos_z_v"), 0.0, 1e-12);
  const Table& fin = r.table("bias");
  EXPECT_EQ(integer(fin, 0, "step"), 100);
  EXPECT_NEAR(num(fin, 0, "var_cos_y_v"), 0.55, 1e-12);
  EXPECT_NEAR(num(fin, 0, "var_lambda_mean"), 0.5, 1e-12);

  const Table& l = r.table("learned_lambda");
  ASSERT_EQ(l.rows.size(), 1u);
  EXPECT_EQ(text(l, 0, "variant"), "learned");
  EXPECT_EQ(integer(l, 0, "n"), 2);
  EXPECT_NEAR(num(l, 0, "head_0"), 0.3, 1e-12);
  EXPECT_NEAR(num(l, 0, "head_0_sd"), 0.141421, 1e-6);  // sd of {0.2, 0.4}
  EXPECT_NEAR(num(l, 0, "head_1"), 0.7, 1e-12);
  EXPECT_NEAR(num(l, 0, "layer_mean"), 0.5, 1e-12);
  EXPECT_NEAR(num(l, 0, "layer_mean_sd"), 0.0, 1e-12);

  // Markdown folds each ± column into its mean column: "0.300 ± 0.141", and shows no "SD" column.
  const std::string md = render_markdown(select_sections(r, "learned_lambda"));
  EXPECT_NE(md.find("| 0.300 ± 0.141 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("head 0 SD"), std::string::npos) << md;
  // CSV keeps both as numbers.
  const std::string csv = render_csv(select_sections(r, "learned_lambda"));
  EXPECT_NE(csv.find("head_0_sd"), std::string::npos) << csv;
}

TEST(Report, BiasDepthTrendIsThePerSeedSlopeOverRelativeDepth) {
  // Four layers at relative depth 0, 1/3, 2/3, 1. SA's cos(y,v) is linear in the layer per seed: seed s goes
  // from 0.1 up by 0.1·(s+3)/3 per layer, so its first-to-last change is 0.4, 0.5, 0.6 (per layer index the
  // slope would be a third of that). Mean 0.5, SD 0.1, SEM 0.057735, t_{0.975,2} = 4.302653: half-width
  // 0.248414, [0.251586, 0.748414], rises in 3/3 seeds. XSA's cos(z,v) is 0 everywhere: slope 0, within
  // noise. XSA's attn_diag falls by 0.2 in seed 1 and rises by 0.2 in seeds 2 and 3 (last minus first, the
  // middle layers on the line between): mean 0.0667, within noise, 2 seeds rising.
  std::vector<ExperimentResult> ex;
  for (int s = 1; s <= 3; ++s) {
    ExperimentResult e = budget_experiment(s, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
    std::vector<LayerBias> sa, xsa;
    const double step = 0.1 * (s + 3) / 3, diag = s == 1 ? -0.2 / 3 : 0.2 / 3;
    for (int layer = 0; layer < 4; ++layer) {
      sa.push_back({layer, 0.1 + step * layer, 0.1 + step * layer, 0.05, 0.1, {}});
      xsa.push_back({layer, 0.5, 0.0, 0.3 + diag * layer, 0.4, {}});
    }
    e.runs[0].bias = {{100, sa}};
    e.runs[1].bias = {{100, xsa}};
    ex.push_back(e);
  }
  // A fourth seed whose XSA run lacks layer 2 would tilt its slope: it is left out of n.
  ExperimentResult partial = budget_experiment(4, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  partial.runs[0].bias = ex[0].runs[0].bias;
  partial.runs[1].bias = ex[0].runs[1].bias;
  partial.runs[1].bias[0].layers.erase(partial.runs[1].bias[0].layers.begin() + 2);
  ex.push_back(partial);

  const Report report = build_report(ex);
  const Table& t = report.table("bias_depth");
  ASSERT_EQ(t.rows.size(), 4u);  // one group, one row per metric in kBiasMetrics' order
  EXPECT_EQ(text(t, 0, "metric"), "cos(y,v)");
  EXPECT_EQ(integer(t, 0, "layers"), 4);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "base_depth_change"), 0.5, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_depth_ci_low"), 0.251586, 1e-6);
  EXPECT_NEAR(num(t, 0, "base_depth_ci_high"), 0.748414, 1e-6);
  EXPECT_EQ(integer(t, 0, "base_rising"), 3);
  EXPECT_EQ(text(t, 0, "base_depth_verdict"), "rises with depth");
  EXPECT_NEAR(num(t, 0, "var_depth_change"), 0.0, 1e-12);  // XSA's raw cos(y,v) is flat at 0.5
  EXPECT_EQ(text(t, 1, "metric"), "cos(z,v)");
  EXPECT_NEAR(num(t, 1, "var_depth_change"), 0.0, 1e-12);
  EXPECT_EQ(integer(t, 1, "var_rising"), 0);
  EXPECT_EQ(text(t, 1, "var_depth_verdict"), "flat");  // CI [0, 0]: within ±0.0005, below print precision
  EXPECT_EQ(text(t, 2, "metric"), "attn_diag");
  EXPECT_NEAR(num(t, 2, "var_depth_change"), 0.2 / 3, 1e-12);
  EXPECT_EQ(integer(t, 2, "var_rising"), 2);
  EXPECT_EQ(text(t, 2, "var_depth_verdict"), "within noise");

  // XSA's cos(z,v) rounding residue rising by 1e-8, 2e-8, 3e-8 from the first layer to the last: a CI that
  // excludes 0 ([-0.0000000, +0.0000000] printed) but lies within ±0.0005 reads "flat", not "rises with
  // depth". value_cos rising by 0.001 per seed (CI [0.001, 0.001], above 0.0005) still rises.
  std::vector<ExperimentResult> tiny = ex;
  tiny.pop_back();
  for (int s = 0; s < 3; ++s)
    for (int layer = 0; layer < 4; ++layer) {
      tiny[s].runs[1].bias[0].layers[layer].cos_z_v = 1e-8 * (s + 10) * layer / 3;
      tiny[s].runs[1].bias[0].layers[layer].value_cos = 0.4 + 0.001 * layer / 3;
    }
  const Report tiny_report = build_report(tiny);
  const Table& flat = tiny_report.table("bias_depth");
  EXPECT_GT(num(flat, 1, "var_depth_ci_low"), 0);
  EXPECT_EQ(text(flat, 1, "var_depth_verdict"), "flat");
  EXPECT_NEAR(num(flat, 3, "var_depth_change"), 0.001, 1e-12);
  EXPECT_EQ(text(flat, 3, "var_depth_verdict"), "rises with depth");

  // One layer: no depth, no rows.
  for (auto& e : ex)
    for (auto& r : e.runs) r.bias[0].layers.resize(1);
  EXPECT_TRUE(build_report(ex).table("bias_depth").rows.empty());
}

TEST(Report, BiasBudgetChangeIsPairedBySeedBetweenNeighbouringBudgets) {
  // Layer 0's final bias (step = steps; an init point at step 0 must not be used) at 100, 200 and 400 steps.
  // (cos(y,v), attn_diag, value_cos) per seed and budget, for the variant; the baseline's attn_diag is 0.1 at
  // 100 steps and 0.15 at 200 in both seeds (change +0.05, zero spread).
  //   seed 1: 100 (0.5, 0.2, 0.4)  200 (0.7, 0.25, 0.4)  400 (0.7, 0.3, 0.3)
  //   seed 2: 100 (0.6, 0.2, 0.4)  200 (0.9, 0.25, 0.5)  400 (0.9, 0.3, 0.3)
  //   seed 3: 100 only (5, 5, 5): it has no neighbour, so it is in neither interval.
  // 100 -> 200: Δ cos(y,v) = 0.2, 0.3 -> mean 0.25, sd 0.0707107, SEM 0.05, ± t_{0.975,1} * 0.05 = 0.635310.
  // 200 -> 400: Δ value_cos = -0.1, -0.2 -> mean -0.15 ± 0.635310; Δ attn_diag = 0.05, 0.05 -> ± 0.
  struct At {
    double cos, diag, vcos;
  };
  const std::map<std::int64_t, std::vector<At>> var = {{100, {{0.5, 0.2, 0.4}, {0.6, 0.2, 0.4}, {5, 5, 5}}},
                                                       {200, {{0.7, 0.25, 0.4}, {0.9, 0.25, 0.5}}},
                                                       {400, {{0.7, 0.3, 0.3}, {0.9, 0.3, 0.3}}}};
  std::vector<ExperimentResult> ex;
  for (const auto& [steps, seeds] : var)
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      ExperimentResult e =
          budget_experiment(static_cast<std::int64_t>(s) + 1, steps, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
      const double base_diag = steps == 100 ? 0.1 : 0.15;
      const LayerBias init{0, 9, 9, 9, 9, {}};
      e.runs[0].bias = {{0, {init}}, {steps, {LayerBias{0, 0.3, 0.3, base_diag, 0.2, {}}}}};
      e.runs[1].bias = {{0, {init}},
                        {steps, {LayerBias{0, seeds[s].cos, 0.0, seeds[s].diag, seeds[s].vcos, {}}}}};
      ex.push_back(e);
    }
  // Left out, as it would shift the means: seed 4, whose baseline has no bias at 200 steps (variant Δ
  // cos(y,v) +10).
  ExperimentResult one_sided_100 = budget_experiment(4, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  ExperimentResult one_sided_200 = budget_experiment(4, 200, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  one_sided_100.runs[0].bias = {{100, {LayerBias{0, 0.3, 0.3, 0.1, 0.2, {}}}}};
  one_sided_100.runs[1].bias = {{100, {LayerBias{0, 0.0, 0.0, 0.2, 0.4, {}}}}};
  one_sided_200.runs[1].bias = {{200, {LayerBias{0, 10.0, 0.0, 0.2, 0.4, {}}}}};
  std::vector<ExperimentResult> all = ex;
  for (const auto& e : {one_sided_100, one_sided_200}) all.push_back(e);
  // A second layer in seeds 1 and 2 at 100 and 200 steps: the variant's cos(y,v) is 0.1 at 100 steps and 0.2
  // at 200 (Δ +0.1 in both seeds, ± 0), the baseline's 0.
  for (auto& e : all) {
    const int steps = e.config.train.steps;
    if (e.config.seed > 2 || (steps != 100 && steps != 200)) continue;
    for (auto& run : e.runs)
      run.bias.back().layers.push_back({1, run.variant == "xsa" ? steps / 1000.0 : 0.0, 0, 0, 0, {}});
  }
  const Report r = build_report(all);
  const Table& t = r.table("bias_budget_change");
  ASSERT_EQ(t.rows.size(), 3u);  // 100 -> 200 layers 0 and 1, 200 -> 400 layer 0
  EXPECT_EQ(text(t, 1, "budgets"), "100 200");
  EXPECT_EQ(integer(t, 1, "layer"), 1);
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_NEAR(num(t, 1, "var_cos_y_v_change"), 0.1, 1e-12);
  EXPECT_NEAR(num(t, 1, "var_cos_y_v_change_ci"), 0.0, 1e-9);
  EXPECT_EQ(text(t, 0, "budgets"), "100 200");
  EXPECT_EQ(integer(t, 0, "layer"), 0);
  EXPECT_EQ(integer(t, 0, "n"), 2);
  EXPECT_NEAR(num(t, 0, "var_cos_y_v_change"), 0.25, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_cos_y_v_change_ci"), 0.635310, 1e-6);
  EXPECT_NEAR(num(t, 0, "var_cos_z_v_change"), 0.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_diag_change"), 0.05, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_diag_change_ci"), 0.0, 1e-9);
  EXPECT_NEAR(num(t, 0, "base_cos_y_v_change"), 0.0, 1e-12);
  EXPECT_EQ(text(t, 2, "budgets"), "200 400");
  EXPECT_EQ(integer(t, 2, "n"), 2);
  EXPECT_NEAR(num(t, 2, "var_value_cos_change"), -0.15, 1e-12);
  EXPECT_NEAR(num(t, 2, "var_value_cos_change_ci"), 0.635310, 1e-6);
  EXPECT_NEAR(num(t, 2, "var_attn_diag_change"), 0.05, 1e-12);
  EXPECT_NEAR(num(t, 2, "var_attn_diag_change_ci"), 0.0, 1e-9);

  // One budget: no neighbour, no row.
  const Report one = build_report({ex[0], ex[1]});
  EXPECT_TRUE(one.table("bias_budget_change").rows.empty());
  // Markdown signs the changes and folds the ±: "+0.250 ± 0.635".
  const std::string md = render_markdown(select_sections(r, "bias_budget_change"));
  EXPECT_NE(md.find("| +0.250 ± 0.635 |"), std::string::npos) << md;
}

TEST(Report, SelectSectionsKeepsOrderAndRejectsUnknownKeys) {
  const Report r = fixture_report();
  const Report two = select_sections(r, "bias,by_lambda");
  ASSERT_EQ(two.tables.size(), 2u);
  EXPECT_EQ(two.tables[0].key, "bias");
  EXPECT_EQ(two.tables[1].key, "by_lambda");
  try {
    select_sections(r, "by_lambda,bogus");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--section 'bogus'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("by_budget"), std::string::npos) << e.what();
  }
}

// Each item of --section copies a whole table: a repeated one is refused, at its first repeat, so the output
// is never the option's length times a table.
TEST(Report, SelectSectionsRefusesARepeatedSection) {
  const Report r = fixture_report();
  std::string repeated = "by_lambda";
  for (int i = 0; i < 100000; ++i) repeated += ",bias";
  const auto start = std::chrono::steady_clock::now();
  try {
    select_sections(r, repeated);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--section 'bias': listed twice, expected each section once");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

// The registry is the one list of sections: the report carries them in its order, under its keys and titles,
// and within every section the column keys are distinct and every "± column" names a column of the section.
TEST(Report, SectionsComeFromTheRegistryInItsOrder) {
  const Report r = fixture_report();
  ASSERT_EQ(r.tables.size(), sections().size());
  for (std::size_t i = 0; i < r.tables.size(); ++i) {
    const Table& t = r.tables[i];
    EXPECT_EQ(t.key, sections()[i].key);
    EXPECT_EQ(t.title, sections()[i].title);
    EXPECT_FALSE(sections()[i].help.empty()) << t.key;
    std::set<std::string> keys;
    for (const auto& c : t.columns)
      EXPECT_TRUE(keys.insert(c.key).second) << t.key << ": " << c.key << " twice";
    for (const auto& c : t.columns) {
      if (!c.plus_minus.empty()) {
        EXPECT_TRUE(keys.count(c.plus_minus)) << t.key << ": " << c.plus_minus;
      }
    }
    for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.columns.size()) << t.key;
  }
  EXPECT_EQ(section_keys(","),
            "paired,by_lambda,by_budget,budget_trend,budget_trend_change,by_seq_len,"
            "seq_len_trend,size_trend,lr_selection,eval_curve,bias_init,bias,bias_depth,"
            "bias_budget_change,learned_lambda,verdicts,notes");
}

TEST(Report, SelectLambdasKeepsThoseVariantsWithTheirBaselines) {
  const Discovery d = discover_results({kSingle, kSweep});
  const std::vector<ExperimentResult> kept = select_lambdas(d.experiments, "learned,0.5");
  // tiny keeps sa + learned (its xsa goes); the three λ=0.5 seeds stay; the three λ=1 seeds are dropped.
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].label, "tiny");
  ASSERT_EQ(kept[0].runs.size(), 2u);
  EXPECT_EQ(kept[0].runs[0].variant, "sa");
  EXPECT_EQ(kept[0].runs[1].variant, "learned");
  ASSERT_EQ(kept[0].comparisons.size(), 1u);
  EXPECT_EQ(kept[0].comparisons[0].variant, "learned");
  const Report r = build_report(kept);
  EXPECT_EQ(r.table("paired").rows.size(), 2u + 3u * 2u);
  const Table& by_lambda = r.table("by_lambda");
  ASSERT_EQ(by_lambda.rows.size(), 2u);  // numbers before names
  EXPECT_EQ(text(by_lambda, 0, "lambda"), "0.5");
  EXPECT_EQ(integer(by_lambda, 0, "n"), 3);
  EXPECT_EQ(text(by_lambda, 1, "lambda"), "learned");
  // Spaces around items and other spellings of a number are accepted.
  EXPECT_EQ(select_lambdas(d.experiments, " 0.50 , learned").size(), 4u);
  EXPECT_EQ(select_lambdas(d.experiments, "1.0").size(), 4u);  // tiny (sa, xsa) + three λ=1 seeds
  try {
    select_lambdas(d.experiments, "1,0.3");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--lambda '0.3'"), std::string::npos) << what;
    EXPECT_NE(what.find("0.5, 1, learned"), std::string::npos) << what;
  }
}

TEST(Report, SelectBaselineComparesEveryRunWithTheNamedOne) {
  const Discovery d = discover_results({kSingle, kSweep});
  // xsa is in tiny and the three λ=1 seeds; the λ=0.5 seeds have none and are dropped.
  const std::vector<ExperimentResult> rebased = select_baseline(d.experiments, "xsa");
  ASSERT_EQ(rebased.size(), 4u);
  const ExperimentResult& tiny = rebased[0];
  EXPECT_EQ(tiny.label, "tiny");
  ASSERT_EQ(tiny.runs.size(), 3u);  // the named run first, the others in their order
  EXPECT_EQ(tiny.runs[0].variant, "xsa");
  EXPECT_EQ(tiny.runs[1].variant, "sa");
  EXPECT_EQ(tiny.runs[2].variant, "learned");
  ASSERT_EQ(tiny.comparisons.size(), 2u);
  // Final losses sa 2.5, xsa 2.45, learned 2.47: Δ = run − xsa, improvement = 100 (xsa − run) / xsa.
  EXPECT_EQ(tiny.comparisons[0].baseline, "xsa");
  EXPECT_EQ(tiny.comparisons[0].variant, "sa");
  EXPECT_NEAR(tiny.comparisons[0].delta_val_loss, 0.05, 1e-12);
  EXPECT_NEAR(tiny.comparisons[0].improvement_pct, -100.0 * 0.05 / 2.45, 1e-9);
  EXPECT_FALSE(tiny.comparisons[0].delta_val_loss_sem.has_value());  // no per-window losses in a file
  EXPECT_NEAR(tiny.comparisons[1].delta_val_loss, 0.02, 1e-12);
  // The three λ=1 seeds: sa − xsa = 2.0 − 1.95, 2.1 − 2.04, 1.9 − 1.86 = +0.05, +0.06, +0.04: mean +0.05,
  // sd 0.01, 95% CI ±t(0.975, 2) · 0.01 / √3, every seed against SA, so "worse".
  const std::vector<ExperimentResult> sweep = select_baseline(discover_results({kSweep}).experiments, "xsa");
  ASSERT_EQ(sweep.size(), 3u);
  const Report report = build_report(sweep);
  const Table& by_lambda = report.table("by_lambda");
  ASSERT_EQ(by_lambda.rows.size(), 1u);
  EXPECT_EQ(text(by_lambda, 0, "baseline"), "xsa");
  EXPECT_EQ(text(by_lambda, 0, "lambda"), "0");
  EXPECT_EQ(integer(by_lambda, 0, "n"), 3);
  EXPECT_NEAR(num(by_lambda, 0, "mean_delta"), 0.05, 1e-9);
  const double half = 4.302652729911 * 0.01 / std::sqrt(3.0);
  EXPECT_NEAR(num(by_lambda, 0, "delta_ci_low"), 0.05 - half, 1e-9);
  EXPECT_NEAR(num(by_lambda, 0, "delta_ci_high"), 0.05 + half, 1e-9);
  EXPECT_NEAR(num(by_lambda, 0, "mean_improvement_pct"),
              -100.0 * (0.05 / 1.95 + 0.06 / 2.04 + 0.04 / 1.86) / 3.0, 1e-9);
  EXPECT_EQ(text(by_lambda, 0, "verdict"), "worse");
  // Naming the first run keeps the file's comparisons, and with them their per-window SE.
  std::vector<ExperimentResult> with_se = {d.experiments[0]};
  with_se[0].comparisons[0].delta_val_loss_sem = 0.004;
  const std::vector<ExperimentResult> same = select_baseline(with_se, "sa");
  ASSERT_EQ(same[0].comparisons.size(), 2u);
  EXPECT_EQ(same[0].comparisons[0].variant, "xsa");
  EXPECT_EQ(same[0].comparisons[0].delta_val_loss_sem, 0.004);
  EXPECT_NEAR(same[0].comparisons[0].delta_val_loss, -0.05, 1e-12);
  EXPECT_FALSE(same[0].comparisons[1].delta_val_loss_sem.has_value());
  // Applied before the λ filter: xsa against learned only.
  const std::vector<ExperimentResult> learned = select_lambdas(rebased, "learned");
  ASSERT_EQ(learned.size(), 1u);
  ASSERT_EQ(learned[0].runs.size(), 2u);
  EXPECT_EQ(learned[0].runs[0].variant, "xsa");
  EXPECT_EQ(learned[0].runs[1].variant, "learned");
  try {
    select_baseline(d.experiments, "lambda=0.3");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--baseline 'lambda=0.3'"), std::string::npos) << what;
    EXPECT_NE(what.find("lambda=0.5, learned, sa, xsa"), std::string::npos) << what;
  }
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

// ---- the xsa-inspect command ---------------------------------------------------------------------------

using xsa::testing::CommandResult;

// xsa-inspect with space-separated arguments (the fixtures' paths have no spaces).
CommandResult run_inspect(const std::string& args) {
  const std::string exe = std::string(XSA_BINARY_DIR) + "/xsa-inspect";
  if (!fs::exists(exe)) ADD_FAILURE() << exe << " is not built (build the xsa-inspect target)";
  std::vector<std::string> argv;
  std::istringstream words(args);
  for (std::string w; words >> w;) argv.push_back(w);
  return xsa::testing::run_command(exe, argv);
}

using xsa::testing::count_lines;

TEST(InspectCli, MarkdownIsTheDefault) {
  const CommandResult r = run_inspect(kSingle + " " + kSweep);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("## Paired runs"), std::string::npos);
  EXPECT_NE(r.out.find("| tiny | 128 | 1337 | xsa | 1 | 2.4500 | 0.0120 | -0.0500 | +2.00 |"),
            std::string::npos);
  EXPECT_NE(r.out.find(
                "| 64 | 32 | 2048 | 100 | sa | 0.5 | 2L d32 4×8 | explicit | 0.001 | 3 | 2 | +0.63 | -1.92 | "
                "+3.19 | -0.0133 | -0.0650 | +0.0384 | "
                "within noise |"),
            std::string::npos);
  EXPECT_NE(
      r.out.find("| 128 | 32 | 4096 | 100 | sa | 1 | 2L d32 4×8 | explicit | 0.001 | 1 | 1 | +2.00 | — | — | "
                 "-0.0500 | — | — | undefined (n=1) |"),
      std::string::npos);
  EXPECT_NE(r.out.find("- λ=1 vs sa, seq_len 64: better"), std::string::npos);
  EXPECT_NE(r.out.find("lambda1-seed4 (failed)"), std::string::npos);
}

TEST(InspectCli, CsvHasOneBlockPerSectionWithASectionColumn) {
  const CommandResult r = run_inspect(kSweep + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::string> headers;
  std::size_t by_lambda_rows = 0;
  std::string xsa_row;
  while (std::getline(in, line)) {
    if (line.rfind("section,", 0) == 0) headers.push_back(line);
    if (line.rfind("by_lambda,", 0) == 0) {
      ++by_lambda_rows;
      if (line.rfind("by_lambda,sa,1,", 0) == 0) xsa_row = line;
    }
  }
  // paired, by_lambda, by_budget, budget_trend, budget_trend_change, by_seq_len, seq_len_trend, size_trend,
  // lr_selection, eval_curve, bias_init, bias, bias_depth, bias_budget_change, learned_lambda, verdicts,
  // notes
  ASSERT_EQ(headers.size(), 17u);
  EXPECT_EQ(headers[1],
            "section,baseline,lambda,steps,seq_lens,model,attention_impl,lr,n,favouring,mean_improvement_pct,"
            "improvement_ci_low,"
            "improvement_ci_high,mean_delta,delta_ci_low,delta_ci_high,verdict");
  EXPECT_EQ(by_lambda_rows, 2u);
  // Full precision in CSV: mean Δ -0.05, CI low -0.0748414.
  EXPECT_NE(xsa_row.find(",-0.05,-0.07484"), std::string::npos) << xsa_row;
  EXPECT_NE(xsa_row.find(",better"), std::string::npos);
}

TEST(InspectCli, JsonCarriesEverySection) {
  const CommandResult r = run_inspect(kSingle + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["schema"], "xsa.inspect/1");
  EXPECT_EQ(doc["paired"].size(), 3u);
  ASSERT_EQ(doc["by_lambda"].size(), 2u);
  EXPECT_EQ(doc["by_lambda"][0]["lambda"], "1");
  EXPECT_TRUE(doc["by_lambda"][0]["delta_ci_low"].is_null());  // one seed: no CI
  EXPECT_EQ(doc["by_lambda"][0]["verdict"], "undefined (n=1)");
  EXPECT_NEAR(doc["by_lambda"][1]["mean_improvement_pct"].get<double>(), 1.2, 1e-9);
  EXPECT_EQ(doc["bias"].size(), 4u);
  EXPECT_EQ(doc["verdicts"].size(), 2u);
  EXPECT_TRUE(doc["notes"].empty());
}

void expect_one_line_input_error(const std::string& args, const std::string& needle) {
  const CommandResult r = run_inspect(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(InspectCli, LambdaFilterKeepsOnlyThoseVariants) {
  const CommandResult r = run_inspect(kSweep + " --lambda 1 --section by_lambda --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2) << r.out;  // header + the λ=1 group
  EXPECT_NE(r.out.find("by_lambda,sa,1,"), std::string::npos) << r.out;
  const CommandResult bad = run_inspect(kSweep + " --lambda 0.3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--lambda '0.3'"), std::string::npos) << bad.err;
}

TEST(InspectCli, BaselineOptionRebasesTheComparisons) {
  const CommandResult r = run_inspect(kSweep + " --baseline xsa --section by_lambda --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2) << r.out;  // header + sa against xsa
  EXPECT_NE(r.out.find("by_lambda,xsa,0,"), std::string::npos) << r.out;
  const CommandResult bad = run_inspect(kSweep + " --baseline gate");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--baseline 'gate'"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST(InspectCli, BadInputExitsTwoWithOneLine) {
  expect_one_line_input_error("/nonexistent/results", "/nonexistent/results: no such file or folder");
  expect_one_line_input_error(kFixtures + "/bad/wrong_schema.json", "key schema: expected \"xsa.results/1\"");
  expect_one_line_input_error(kFixtures + "/bad/missing_key", "missing key runs[1].final.val_loss");
  expect_one_line_input_error(kFixtures + "/bad/not_json.json", "not valid JSON");
  const xsa::testing::TempDir empty;
  expect_one_line_input_error(empty.path(), "no results.json found");
  expect_one_line_input_error(kSingle + " --format xml", "--format");
  expect_one_line_input_error("", "paths");
  expect_one_line_input_error(kSingle + " --no-such-flag", "--no-such-flag");
}

TEST(InspectCli, HelpAndVersion) {
  const CommandResult help = run_inspect("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--format"), std::string::npos);
  for (const auto& section : sections())  // the help lists every section with its help line
    EXPECT_NE(help.out.find(section.key + ": " + section.help), std::string::npos) << section.key;
  const CommandResult version = run_inspect("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find(XSA_VERSION), std::string::npos);
}

}  // namespace
}  // namespace xsa::report
