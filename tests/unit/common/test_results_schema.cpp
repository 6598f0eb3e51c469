// The results schema as one typed model: every field the trainer writes survives to_json -> parse_results,
// the bias metrics are written and read through the one table, and older files (fields added later absent)
// still read. Then reading results.json files: the fixtures in tests/fixtures/report (variant names, extra
// fields tolerated, comparisons derived when missing, the round trip) and the one-line InputError naming the
// file and the key.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report_fixtures.h"
#include "xsa/config/variant.h"
#include "xsa/records/results.h"
#include "xsa/util/error.h"

namespace xsa::report {
namespace {

using nlohmann::json;

ExperimentResult full_result() {
  ExperimentResult r;
  r.name = "full";
  r.config.seed = 4;
  r.config.data.seq_len = 32;
  r.version = VersionInfo{"0.1.0", "1.13.1"};
  r.environment = Environment{1,      "OpenBLAS 0.3.21",
                              1,      2,
                              2,      643.5,
                              12.25,  "bf16",
                              "auto", Environment::CpuBf16{true, false, true},
                              2,      "gloo"};
  r.data = DataInfo{"data/x", 512, 1000, 100, "abc"};
  for (const char* name : {"sa", "learned"}) {
    RunResult run;
    run.variant = name;
    run.spec = name == std::string("sa") ? VariantRecord{"fixed", 0.0, std::nullopt}
                                         : VariantRecord{"learned", std::nullopt, 0.5};
    run.layers = name == std::string("sa") ? std::vector<int>{} : std::vector<int>{1};
    run.label = name == std::string("sa") ? "0" : "learned@1";
    run.seed = 4;
    run.init_checksum = "de76";
    run.eval = {{0, 6.25}, {8, 5.5}};
    run.train_loss = {{4, 6.0}, {8, 5.75}};
    // T = 32: buckets 1–16 and 17–32 of 64 windows × 16 positions each; 6.0 and 5.0 average to val_loss.
    run.final = {5.5, 0.125, 2048, 64, 5.8125, {{{1, 16}, 1024, 6.0}, {{17, 32}, 1024, 5.0}}};
    LayerBias layer;
    layer.layer = 1;
    layer.cos_y_v = 0.5;
    layer.cos_z_v = 0.25;
    layer.attn_diag = 0.125;
    layer.value_cos = 0.0625;
    if (run.spec.kind == "learned") layer.lambda_per_head = {0.5, 0.75};
    run.bias = {{8, {layer}}};
    run.samples = {"Once upon"};
    run.timing = RunTiming{1.5, 1.25, 1000.0, 10.5, 0.75};
    r.runs.push_back(run);
  }
  r.comparisons = {{"sa", "learned", -0.25, 0.03125, 4.5}};
  return r;
}

TEST(ResultsSchema, EveryWrittenFieldReadsBack) {
  ExperimentResult in = full_result();
  json doc = to_json(in);
  ExperimentResult out = parse_results(doc.dump(), "mem/results.json");
  EXPECT_EQ(to_json(out), doc);  // nothing lost, nothing added
  EXPECT_EQ(out.seq_len(), 32);
  EXPECT_EQ(out.config, in.config);
  // The config is written whole, by the config module's own writer (every key, in its key table).
  EXPECT_EQ(doc["config"], config_to_json(in.config));
  EXPECT_EQ(doc["config"]["data"]["seq_len"], 32);
  EXPECT_EQ(doc["config"]["train"]["steps"], 300);
  ASSERT_TRUE(out.environment && out.data && out.version);
  EXPECT_EQ(out.environment->blas, "OpenBLAS 0.3.21");
  EXPECT_DOUBLE_EQ(out.environment->peak_rss_mib, 643.5);
  EXPECT_EQ(out.environment->precision, "bf16");
  EXPECT_EQ(out.environment->precision_requested, "auto");
  ASSERT_TRUE(out.environment->cpu_bf16);
  EXPECT_TRUE(out.environment->cpu_bf16->avx512_bf16 && out.environment->cpu_bf16->native);
  EXPECT_FALSE(out.environment->cpu_bf16->amx_bf16);
  EXPECT_EQ(out.environment->world_size, 2);
  EXPECT_EQ(out.environment->backend, "gloo");
  ASSERT_TRUE(out.runs[1].timing && out.runs[1].timing->allreduce_ms_median);
  EXPECT_DOUBLE_EQ(*out.runs[1].timing->allreduce_ms_median, 0.75);
  EXPECT_EQ(out.data->vocab_size, 512);
  EXPECT_EQ(doc["runs"][0]["layers"], "all");
  EXPECT_EQ(doc["runs"][1]["layers"], json::array({1}));
  EXPECT_EQ(doc["runs"][1]["variant_spec"]["initial_lambda"], 0.5);
  EXPECT_TRUE(doc["runs"][1]["lambda"].is_null());
  EXPECT_EQ(*out.runs[1].final.eval_windows, 64);
  ASSERT_EQ(out.runs[1].final.loss_by_position.size(), 2u);
  EXPECT_EQ(out.runs[1].final.loss_by_position[1].positions, (PositionBucket{17, 32}));
  EXPECT_EQ(out.runs[1].final.loss_by_position[1].tokens, 1024);
  EXPECT_DOUBLE_EQ(out.runs[1].final.loss_by_position[1].loss, 5.0);
  EXPECT_DOUBLE_EQ(*out.comparisons[0].delta_val_loss_sem, 0.03125);
}

// The literal keys other tools read (docs/guide.md "results.json"), so a field dropped from both the writer
// and the reader fails here although the round trip above would still pass.
TEST(ResultsSchema, WrittenKeysAreTheDocumentedOnes) {
  const json doc = to_json(full_result());
  auto keys = [](const json& j) {
    std::set<std::string> out;
    for (const auto& [k, v] : j.items()) out.insert(k);
    return out;
  };
  using Keys = std::set<std::string>;
  EXPECT_EQ(keys(doc),
            (Keys{"schema", "name", "config", "version", "environment", "data", "runs", "comparisons"}));
  EXPECT_EQ(doc["schema"], "xsa.results/1");
  EXPECT_EQ(keys(doc["version"]), (Keys{"xsa", "torch"}));
  EXPECT_EQ(keys(doc["environment"]),
            (Keys{"threads", "blas", "blas_threads", "workers", "precision", "precision_requested",
                  "cpu_bf16", "host_cores", "peak_rss_mib", "wall_s", "world_size", "backend"}));
  EXPECT_EQ(keys(doc["environment"]["cpu_bf16"]), (Keys{"avx512_bf16", "amx_bf16", "native"}));
  EXPECT_EQ(keys(doc["data"]), (Keys{"dir", "vocab_size", "train_tokens", "val_tokens", "tokenizer_sha256"}));
  const json& run = doc["runs"][1];
  EXPECT_EQ(keys(run), (Keys{"variant", "lambda", "variant_spec", "layers", "label", "seed", "init_checksum",
                             "eval", "train_loss", "final", "bias", "samples", "timing"}));
  EXPECT_EQ(run["label"], "learned@1");
  EXPECT_EQ(run["variant_spec"],
            json::parse(R"({"kind": "learned", "lambda": null, "initial_lambda": 0.5})"));
  EXPECT_EQ(keys(run["final"]), (Keys{"val_loss", "val_loss_sem", "eval_tokens", "eval_windows", "train_loss",
                                      "loss_by_position"}));
  EXPECT_EQ(run["final"]["loss_by_position"][0],
            json::parse(R"({"first": 1, "last": 16, "tokens": 1024, "loss": 6.0})"));
  EXPECT_EQ(keys(run["timing"]),
            (Keys{"wall_s", "train_s", "tokens_per_s", "step_ms_median", "allreduce_ms_median"}));
  EXPECT_EQ(run["eval"][1], json::parse(R"({"step": 8, "val_loss": 5.5})"));
  EXPECT_EQ(run["train_loss"][0], json::parse(R"({"step": 4, "loss": 6.0})"));
  EXPECT_EQ(run["bias"][0]["layers"][0]["lambda_per_head"], json::array({0.5, 0.75}));
  EXPECT_EQ(doc["comparisons"][0], json::parse(R"({"baseline": "sa", "variant": "learned",
      "delta_val_loss": -0.25, "delta_val_loss_sem": 0.03125, "improvement_pct": 4.5})"));
}

TEST(ResultsSchema, BiasMetricsTableNamesEveryMetricOnce) {
  std::set<std::string> keys;
  for (const auto& m : kBiasMetrics) keys.insert(m.key);
  EXPECT_EQ(keys, (std::set<std::string>{"cos_y_v", "cos_z_v", "attn_diag", "value_cos"}));
  for (std::size_t a = 0; a < kBiasMetricCount; ++a)
    for (std::size_t b = a + 1; b < kBiasMetricCount; ++b)
      EXPECT_NE(kBiasMetrics[a].member, kBiasMetrics[b].member);
  // Each key carries its own member's value (distinct powers of two above).
  json layer = to_json(full_result())["runs"][0]["bias"][0]["layers"][0];
  EXPECT_EQ(layer["cos_y_v"], 0.5);
  EXPECT_EQ(layer["cos_z_v"], 0.25);
  EXPECT_EQ(layer["attn_diag"], 0.125);
  EXPECT_EQ(layer["value_cos"], 0.0625);
  // A missing metric is named.
  json doc = to_json(full_result());
  doc["runs"][0]["bias"][0]["layers"][0].erase("attn_diag");
  try {
    parse_results(doc, "r.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "r.json: missing key runs[0].bias[0].layers[0].attn_diag");
  }
}

// The attention dynamics sit beside the bias metrics, each key carrying its own member; a record without them
// (every file written before they were measured) reads without them, and one with only some is refused.
TEST(ResultsSchema, AttentionDynamicsAreAllOrNone) {
  ExperimentResult r = full_result();
  r.runs[0].bias[0].layers[0].dynamics = AttentionDynamics{8.0, 2.0, 0.25};
  json doc = to_json(r);
  json layer = doc["runs"][0]["bias"][0]["layers"][0];
  EXPECT_EQ(layer["max_logit"], 8.0);
  EXPECT_EQ(layer["attn_entropy"], 2.0);
  EXPECT_EQ(layer["attn_sink"], 0.25);
  const auto back = parse_results(doc, "r.json").runs[0].bias[0].layers[0].dynamics;
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->max_logit, 8.0);
  EXPECT_EQ(back->attn_entropy, 2.0);
  EXPECT_EQ(back->attn_sink, 0.25);
  EXPECT_FALSE(
      parse_results(to_json(full_result()), "r.json").runs[0].bias[0].layers[0].dynamics.has_value());
  for (const char* dropped : {"attn_sink", "max_logit"}) {  // any one missing of three, the first included
    json partial = doc;
    partial["runs"][0]["bias"][0]["layers"][0].erase(dropped);
    try {
      parse_results(partial, "r.json");
      FAIL() << "expected InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("r.json: missing key runs[0].bias[0].layers[0].") + dropped);
    }
  }
}

TEST(ResultsSchema, FieldsAddedLaterAreOptionalOnRead) {
  // The smallest file the first version of the schema could hold.
  json doc = {{"schema", "xsa.results/1"},
              {"name", "old"},
              {"config", {{"data", {{"seq_len", 16}}}}},
              {"runs",
               {{{"variant", "sa"}, {"final", {{"val_loss", 2.0}}}},
                {{"variant", "xsa"}, {"final", {{"val_loss", 1.5}}}}}}};
  ExperimentResult r = parse_results(doc, "old/results.json");
  EXPECT_FALSE(r.environment || r.data || r.version);
  EXPECT_FALSE(r.runs[0].timing || r.runs[0].layers || r.runs[0].final.eval_windows);
  EXPECT_TRUE(r.runs[0].final.loss_by_position.empty());
  EXPECT_FALSE(to_json(r.runs[0])["final"].contains("loss_by_position"));  // and none written back
  ASSERT_EQ(r.comparisons.size(), 1u);                                     // derived
  EXPECT_DOUBLE_EQ(r.comparisons[0].delta_val_loss, -0.5);
  EXPECT_FALSE(r.comparisons[0].delta_val_loss_sem);
}

TEST(ResultsSchema, MistypedOptionalFieldsAreNamed) {
  json doc = to_json(full_result());
  doc["environment"]["workers"] = "two";
  EXPECT_THROW(
      {
        try {
          parse_results(doc, "r.json");
        } catch (const InputError& e) {
          EXPECT_STREQ(e.what(), "r.json: key environment.workers: expected an integer, got string");
          throw;
        }
      },
      InputError);
  doc = to_json(full_result());
  doc["runs"][0]["layers"] = "some";
  EXPECT_THROW(parse_results(doc, "r.json"), InputError);
}

}  // namespace
}  // namespace xsa::report

namespace xsa::report {
namespace {

// The buckets written out by hand: 1–16, then each ending at 4× the previous end, the last cut at T.
TEST(ResultsSchema, PositionBucketsByHand) {
  using B = std::vector<PositionBucket>;
  EXPECT_EQ(position_buckets(16), (B{{1, 16}}));
  EXPECT_EQ(position_buckets(128), (B{{1, 16}, {17, 64}, {65, 128}}));
  EXPECT_EQ(position_buckets(300), (B{{1, 16}, {17, 64}, {65, 256}, {257, 300}}));
  EXPECT_EQ(position_buckets(2048), (B{{1, 16}, {17, 64}, {65, 256}, {257, 1024}, {1025, 2048}}));
  EXPECT_EQ(position_buckets(16384),
            (B{{1, 16}, {17, 64}, {65, 256}, {257, 1024}, {1025, 4096}, {4097, 16384}}));
  EXPECT_EQ(position_buckets(17), (B{{1, 16}, {17, 17}}));  // a bucket of one position
  EXPECT_EQ(position_buckets(8), (B{{1, 8}}));
  EXPECT_EQ(position_buckets(1), (B{{1, 1}}));
  EXPECT_TRUE(position_buckets(0).empty());
}

// T = 20, 2 windows, position t's loss summed over them = t: bucket 1–16 sums 1+…+16 = 136 over 2 × 16
// predictions (4.25), bucket 17–20 sums 17+18+19+20 = 74 over 2 × 4 (9.25).
TEST(ResultsSchema, LossByPositionByHand) {
  std::vector<double> sums;
  for (int t = 1; t <= 20; ++t) sums.push_back(t);
  const auto buckets = loss_by_position(sums, 2);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].positions, (PositionBucket{1, 16}));
  EXPECT_EQ(buckets[0].tokens, 32);
  EXPECT_DOUBLE_EQ(buckets[0].loss, 4.25);
  EXPECT_EQ(buckets[1].positions, (PositionBucket{17, 20}));
  EXPECT_EQ(buckets[1].tokens, 8);
  EXPECT_DOUBLE_EQ(buckets[1].loss, 9.25);
  EXPECT_TRUE(loss_by_position(sums, 0).empty());  // nothing evaluated: no buckets, not a division by 0
}

TEST(ResultsSchema, MalformedPositionBucketsAreNamed) {
  json doc = to_json(full_result());
  doc["runs"][1]["final"]["loss_by_position"][1]["first"] = 0;
  EXPECT_EQ(fixtures::input_error([&] { parse_results(doc, "r.json"); }),
            "r.json: key runs[1].final.loss_by_position[1]: expected 1 <= first <= last and tokens >= 0");
  doc = to_json(full_result());
  doc["runs"][0]["final"]["loss_by_position"][0].erase("loss");
  EXPECT_EQ(fixtures::input_error([&] { parse_results(doc, "r.json"); }),
            "r.json: missing key runs[0].final.loss_by_position[0].loss");
  doc = to_json(full_result());
  doc["runs"][0]["final"]["loss_by_position"] = 3;
  EXPECT_EQ(fixtures::input_error([&] { parse_results(doc, "r.json"); }),
            "r.json: key runs[0].final.loss_by_position: expected an array, got number");
}

TEST(ResultsSchema, SeedsUseTheWholeUnsignedRange) {
  ExperimentResult r = full_result();
  r.runs[0].seed = 18446744073709551615ull;  // config seeds are uint64
  json doc = to_json(r);
  EXPECT_EQ(doc["runs"][0]["seed"].dump(), "18446744073709551615");
  EXPECT_EQ(*parse_results(doc, "r.json").runs[0].seed, 18446744073709551615ull);
  doc["runs"][0]["seed"] = -1;
  EXPECT_THROW(parse_results(doc, "r.json"), InputError);
}

// ---- reading results.json files -------------------------------------------------------------------------

using namespace fixtures;  // tests/unit/common/report_fixtures.h

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

}  // namespace
}  // namespace xsa::report
