// End-to-end tests of the xsa-train binary: outputs, determinism, pairing, resume, bad input.
// Runs the real executable on a small generated dataset prepared by xsa-prepare (CTest fixture small_data).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Outcome {
  int code = -1;
  std::string out, err;
  // stderr's lines, less xsa-train's advice on the machine (e.g. OpenBLAS's generic kernels on an AVX2 CPU,
  // xsa/util/blas_core.h), which says nothing about the run itself.
  int err_lines() const { return testing::count_error_lines(err); }
};

using e2e::slurp;

class TrainE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // The small_data fixture always makes the data: without it, this is a failure, never a skip.
    ASSERT_TRUE(fs::exists(fs::path(XSA_TEST_DATA) / "meta.json"))
        << "no prepared test data at " << XSA_TEST_DATA << " (CTest fixture train.prepare_small_data)";
    dir_ = e2e::fresh_test_folder();
    write_config(dir_ / "config.yaml", std::string(XSA_TEST_DATA));
  }

  static void write_config(const fs::path& path, const std::string& data_dir) {
    e2e::write_tiny_config(path, data_dir);
  }

  // xsa-train --quiet args...; env: "NAME=value" for the child only (a fault-injection switch, say).
  Outcome train(const std::vector<std::string>& args, const std::string& env = "") {
    std::vector<std::string> argv = {"--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = xsa::testing::run_command(
        XSA_TRAIN_BIN, argv, "", env.empty() ? std::vector<std::string>{} : std::vector<std::string>{env});
    return {r.exit_code, r.out, r.err};
  }

  // Trains the test config into `out` (with extra --set overrides) and returns results.json.
  json train_ok(const std::string& out, const std::vector<std::string>& sets = {}) {
    std::vector<std::string> args = {"--config", (dir_ / "config.yaml").string(), "--out",
                                     (dir_ / out).string()};
    for (const auto& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    Outcome o = train(args);
    EXPECT_EQ(o.code, 0) << o.err;
    return json::parse(slurp(dir_ / out / "results.json"));
  }

  static json numbers(const json& r) { return e2e::deterministic_numbers(r); }

  fs::path dir_;
};

TEST_F(TrainE2E, WritesCompleteResultsLogAndConfig) {
  json r = train_ok("run");
  EXPECT_EQ(r["schema"], "xsa.results/1");
  EXPECT_EQ(r["name"], "e2e");
  for (const char* key : {"config", "version", "environment", "data", "runs", "comparisons"})
    EXPECT_TRUE(r.contains(key)) << key;
  for (const char* key : {"threads", "blas", "blas_threads", "workers", "host_cores", "peak_rss_mib"})
    EXPECT_TRUE(r["environment"].contains(key)) << key;
  EXPECT_EQ(r["environment"]["threads"], 1);
  EXPECT_NE(r["environment"]["blas"].get<std::string>().find("OpenBLAS"), std::string::npos)
      << "LibTorch is not using OpenBLAS: " << r["environment"]["blas"];
  ASSERT_EQ(r["runs"].size(), 2u);
  EXPECT_EQ(r["runs"][0]["variant"], "sa");
  EXPECT_EQ(r["runs"][1]["variant"], "xsa");
  EXPECT_EQ(r["runs"][0]["init_checksum"], r["runs"][1]["init_checksum"]);  // paired: same init
  for (const auto& run : r["runs"]) {
    std::vector<int> eval_steps, bias_steps;
    for (const auto& e : run["eval"]) eval_steps.push_back(e["step"]);
    for (const auto& b : run["bias"]) bias_steps.push_back(b["step"]);
    EXPECT_EQ(eval_steps, (std::vector<int>{0, 8, 16}));
    EXPECT_EQ(bias_steps, (std::vector<int>{0, 8, 16}));
    double final_loss = run["final"]["val_loss"];
    EXPECT_GT(final_loss, 1.0);
    EXPECT_LT(final_loss, run["eval"][0]["val_loss"].get<double>());  // it learned something
    EXPECT_GT(run["final"]["val_loss_sem"].get<double>(), 0.0);
    EXPECT_EQ(run["bias"][0]["layers"].size(), 2u);
    EXPECT_EQ(run["samples"].size(), 1u);
    EXPECT_GT(run["timing"]["tokens_per_s"].get<double>(), 0.0);
    // The loss by position at T = 32: positions 1–16 and 17–32 over every final-eval window; their
    // token-weighted mean is val_loss up to the float32 rounding of the per-window means it averages.
    const json& buckets = run["final"]["loss_by_position"];
    ASSERT_EQ(buckets.size(), 2u);
    const std::int64_t windows = run["final"]["eval_windows"];
    EXPECT_EQ(buckets[0],
              json({{"first", 1}, {"last", 16}, {"tokens", windows * 16}, {"loss", buckets[0]["loss"]}}));
    EXPECT_EQ(buckets[1],
              json({{"first", 17}, {"last", 32}, {"tokens", windows * 16}, {"loss", buckets[1]["loss"]}}));
    // Two buckets of 16 positions each: the token-weighted mean is their plain mean.
    const double weighted = (buckets[0]["loss"].get<double>() + buckets[1]["loss"].get<double>()) / 2;
    EXPECT_NEAR(weighted, final_loss, 1e-6 * final_loss);
  }
  // SA: z = y; XSA: z ⟂ v at every measurement.
  for (const auto& b : r["runs"][0]["bias"])
    for (const auto& l : b["layers"])
      EXPECT_DOUBLE_EQ(l["cos_y_v"].get<double>(), l["cos_z_v"].get<double>());
  for (const auto& b : r["runs"][1]["bias"])
    for (const auto& l : b["layers"]) EXPECT_LT(std::abs(l["cos_z_v"].get<double>()), 1e-4);
  // The comparison is computed from the two final losses.
  ASSERT_EQ(r["comparisons"].size(), 1u);
  double b = r["runs"][0]["final"]["val_loss"], v = r["runs"][1]["final"]["val_loss"];
  EXPECT_DOUBLE_EQ(r["comparisons"][0]["delta_val_loss"].get<double>(), v - b);
  EXPECT_DOUBLE_EQ(r["comparisons"][0]["improvement_pct"].get<double>(), 100.0 * (b - v) / b);
  // log.jsonl: one line per logged step per run, with the documented fields.
  std::istringstream log(slurp(dir_ / "run" / "log.jsonl"));
  std::string line;
  std::map<std::string, int> lines_per_run;
  while (std::getline(log, line)) {
    json j = json::parse(line);
    for (const char* key : {"run", "step", "loss", "lr", "grad_norm", "ms"})
      EXPECT_TRUE(j.contains(key)) << key;
    lines_per_run[j["run"]]++;
  }
  EXPECT_EQ(lines_per_run["sa"], 4);
  EXPECT_EQ(lines_per_run["xsa"], 4);
  EXPECT_TRUE(fs::exists(dir_ / "run" / "config.yaml"));
}

TEST_F(TrainE2E, RerunsAndConcurrentWorkersAreBitIdentical) {
  json concurrent = train_ok("a");
  json again = train_ok("b");
  json sequential = train_ok("c", {"runtime.workers=1"});
  EXPECT_EQ(numbers(concurrent), numbers(again));
  EXPECT_EQ(numbers(concurrent), numbers(sequential));
}

TEST_F(TrainE2E, Bf16RunsPairedAndRerunsBitIdenticalAndSaysWhatItUsed) {
  const std::string config = (dir_ / "config.yaml").string();
  Outcome first =
      train({"--config", config, "--out", (dir_ / "a").string(), "--set", "runtime.precision=bf16"});
  ASSERT_EQ(first.code, 0) << first.err;
  json a = json::parse(slurp(dir_ / "a" / "results.json"));
  json b = train_ok("b", {"runtime.precision=bf16", "runtime.workers=1"});  // rerun, one after another
  json fp32 = train_ok("fp32");
  const bool native = a["environment"]["cpu_bf16"]["native"].get<bool>();
  EXPECT_EQ(a["environment"]["precision"], "bf16");
  EXPECT_EQ(a["environment"]["precision_requested"], "bf16");
  EXPECT_EQ(fp32["environment"]["precision"], "fp32");
  // Without native bf16 the run says, in one line, that it is emulated; with it, nothing.
  EXPECT_EQ(first.err.find("without native bf16") != std::string::npos, !native) << first.err;
  EXPECT_EQ(numbers(a), numbers(b));                                           // bit-identical rerun
  EXPECT_EQ(a["runs"][0]["init_checksum"], a["runs"][1]["init_checksum"]);     // still paired
  EXPECT_EQ(a["runs"][0]["init_checksum"], fp32["runs"][0]["init_checksum"]);  // same init as fp32
  for (int i = 0; i < 2; ++i) {
    double l16 = a["runs"][i]["final"]["val_loss"], l32 = fp32["runs"][i]["final"]["val_loss"];
    EXPECT_NE(l16, l32);                     // really bf16
    EXPECT_NEAR(l16, l32, 0.01 * l32) << i;  // and within 1% of fp32
  }
  for (const auto& m : a["runs"][1]["bias"])  // XSA projection in fp32: z ⟂ v still
    for (const auto& l : m["layers"]) EXPECT_LT(std::abs(l["cos_z_v"].get<double>()), 1e-4);
  // auto = bf16 only where native.
  json automatic = train_ok("auto", {"runtime.precision=auto"});
  EXPECT_EQ(automatic["environment"]["precision"], native ? "bf16" : "fp32");
  EXPECT_EQ(automatic["environment"]["precision_requested"], "auto");
}

TEST_F(TrainE2E, LambdaZeroIsBitIdenticalToSa) {
  json r = train_ok("run", {"attention.variants=[sa, 0]"});
  ASSERT_EQ(r["runs"].size(), 2u);
  EXPECT_EQ(r["runs"][1]["variant"], "lambda=0");
  for (const char* key : {"eval", "final", "train_loss", "samples", "init_checksum"})
    EXPECT_EQ(r["runs"][0][key], r["runs"][1][key]) << key;
  EXPECT_EQ(r["comparisons"][0]["delta_val_loss"], 0.0);
}

// data.doc_mask: the test stories are shorter than a window, so masking changes what the model sees (and its
// loss) from the same initial weights and batches; the config records it.
TEST_F(TrainE2E, DocumentMaskingRunsEndToEndFromTheSameStart) {
  json masked = train_ok("masked", {"data.doc_mask=true"});
  json plain = train_ok("plain");
  EXPECT_EQ(masked["config"]["data"]["doc_mask"], true);
  EXPECT_EQ(plain["config"]["data"]["doc_mask"], false);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(masked["runs"][i]["init_checksum"], plain["runs"][i]["init_checksum"]);
    const double m = masked["runs"][i]["final"]["val_loss"], p = plain["runs"][i]["final"]["val_loss"];
    EXPECT_TRUE(std::isfinite(m));
    EXPECT_NE(m, p) << "run " << i;
  }
}

TEST_F(TrainE2E, LearnedLambdaGateAndLayerSubsetRunEndToEnd) {
  json r = train_ok("run", {"attention.variants=[sa, learned, gate, 0.5, tanh_gate]", "attention.layers=[1]",
                            "attention.learned_init=0.25"});
  ASSERT_EQ(r["runs"].size(), 5u);
  for (const auto& run : r["runs"]) EXPECT_EQ(run["init_checksum"], r["runs"][0]["init_checksum"]);
  EXPECT_EQ(r["comparisons"].size(), 4u);
  EXPECT_EQ(r["config"]["attention"]["impl"], "fused");  // the default, recorded
  const json& learned = r["runs"][1];
  const json& gate = r["runs"][2];
  EXPECT_EQ(learned["variant_spec"]["kind"], "learned");
  EXPECT_EQ(gate["variant_spec"]["kind"], "gate");
  // λ per head is recorded at every measurement; it starts where documented and then learns.
  const json& first = learned["bias"][0]["layers"];
  ASSERT_TRUE(first[1].contains("lambda_per_head"));
  for (double lam : first[1]["lambda_per_head"]) EXPECT_NEAR(lam, 0.25, 1e-6);
  const json& last_gate = gate["bias"].back()["layers"][1]["lambda_per_head"];
  for (double g : gate["bias"][0]["layers"][1]["lambda_per_head"]) EXPECT_EQ(g, 0.0);
  double moved = 0;
  for (double g : last_gate) moved += std::abs(g);
  EXPECT_GT(moved, 0.0) << "the gate never left zero";
  // tanh_gate: recorded as its own kind, starts at λ = tanh(0) = 0, learns, and stays inside (-1, 1).
  const json& tanh_gate = r["runs"][4];
  EXPECT_EQ(tanh_gate["variant"], "tanh_gate");
  EXPECT_EQ(tanh_gate["variant_spec"]["kind"], "tanh_gate");
  for (double g : tanh_gate["bias"][0]["layers"][1]["lambda_per_head"]) EXPECT_EQ(g, 0.0);
  double tanh_moved = 0;
  for (double g : tanh_gate["bias"].back()["layers"][1]["lambda_per_head"]) {
    EXPECT_LT(std::abs(g), 1.0);
    tanh_moved += std::abs(g);
  }
  EXPECT_GT(tanh_moved, 0.0) << "the tanh gate never left zero";
  // attention.layers=[1]: layer 0 stays SA (z = y), layer 1 is modified.
  const json& fixed_half = r["runs"][3]["bias"].back()["layers"];
  EXPECT_DOUBLE_EQ(fixed_half[0]["cos_y_v"].get<double>(), fixed_half[0]["cos_z_v"].get<double>());
  EXPECT_LT(std::abs(fixed_half[1]["cos_z_v"].get<double>()),
            std::abs(fixed_half[1]["cos_y_v"].get<double>()));
  EXPECT_EQ(r["runs"][3]["layers"], json::array({1}));
  // Labels (what the tables group by) name the layer subset, so no table pools these with all-layer runs.
  EXPECT_EQ(r["runs"][3]["label"], "0.5@1");
  EXPECT_EQ(r["runs"][1]["label"], "learned@1");
}

// "xsa@1": XSA on layer 1 only, next to XSA on every layer, in one paired experiment (one SA baseline).
TEST_F(TrainE2E, AVariantOnItsOwnLayersRunsBesideTheSameVariantOnAll) {
  json r = train_ok("run", {"attention.variants=[sa, xsa, xsa@1]"});
  ASSERT_EQ(r["runs"].size(), 3u);
  EXPECT_EQ(r["runs"][2]["variant"], "xsa@1");
  EXPECT_EQ(r["runs"][2]["layers"], json::array({1}));
  EXPECT_EQ(r["runs"][1]["layers"], "all");
  EXPECT_EQ(r["runs"][1]["label"], "1");
  EXPECT_EQ(r["runs"][2]["label"], "1@1");
  EXPECT_EQ(r["runs"][2]["init_checksum"], r["runs"][0]["init_checksum"]);
  const json& last = r["runs"][2]["bias"].back()["layers"];
  EXPECT_DOUBLE_EQ(last[0]["cos_y_v"].get<double>(), last[0]["cos_z_v"].get<double>());  // layer 0 stays SA
  EXPECT_LT(std::abs(last[1]["cos_z_v"].get<double>()), 1e-4);                           // layer 1: z ⟂ v
  EXPECT_NE(r["runs"][2]["final"]["val_loss"], r["runs"][1]["final"]["val_loss"]);
}

TEST_F(TrainE2E, ResumeAfterKillEqualsUninterruptedRun) {
  json uninterrupted = train_ok("full");
  std::vector<std::string> args = {"--config", (dir_ / "config.yaml").string(), "--out",
                                   (dir_ / "killed").string()};
  Outcome killed = train(args, "XSA_FAULT_EXIT_AFTER_STEP=12");
  EXPECT_EQ(killed.code, 86);
  EXPECT_FALSE(fs::exists(dir_ / "killed" / "results.json"));
  EXPECT_TRUE(fs::exists(dir_ / "killed" / "checkpoints"));
  Outcome refused = train(args);  // an unfinished run is not silently restarted
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--resume"), std::string::npos) << refused.err;
  args.push_back("--resume");
  Outcome resumed = train(args);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  json r = json::parse(slurp(dir_ / "killed" / "results.json"));
  EXPECT_EQ(numbers(r), numbers(uninterrupted));
  // The resumed log has each (run, step) exactly once.
  std::istringstream log(slurp(dir_ / "killed" / "log.jsonl"));
  std::string line;
  std::set<std::pair<std::string, int>> seen;
  while (std::getline(log, line)) {
    json j = json::parse(line);
    EXPECT_TRUE(seen.insert({j["run"].get<std::string>(), j["step"].get<int>()}).second) << line;
  }
  EXPECT_EQ(seen.size(), 8u);
}

// With attention.lambda_lr_scale ≠ 1 the learned/gate optimizers have a third parameter group (and SA an
// empty one): a checkpoint must still carry all of it, so the resumed run equals the uninterrupted one.
TEST_F(TrainE2E, ResumeWithScaledLambdaLrEqualsUninterruptedRun) {
  const std::vector<std::string> sets = {"attention.variants=[sa,learned,gate]",
                                         "attention.lambda_lr_scale=30"};
  json uninterrupted = train_ok("full", sets);
  std::vector<std::string> args = {"--config", (dir_ / "config.yaml").string(), "--out",
                                   (dir_ / "killed").string()};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  Outcome killed = train(args, "XSA_FAULT_EXIT_AFTER_STEP=12");
  EXPECT_EQ(killed.code, 86);
  args.push_back("--resume");
  Outcome resumed = train(args);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  json r = json::parse(slurp(dir_ / "killed" / "results.json"));
  EXPECT_EQ(numbers(r), numbers(uninterrupted));
  EXPECT_EQ(r["config"]["attention"]["lambda_lr_scale"], 30.0);
}

TEST_F(TrainE2E, RefusesToOverwriteAFinishedRunWithoutForce) {
  train_ok("run");
  std::string before = slurp(dir_ / "run" / "results.json");
  std::vector<std::string> args = {"--config", (dir_ / "config.yaml").string(), "--out",
                                   (dir_ / "run").string()};
  Outcome again = train(args);
  EXPECT_EQ(again.code, 2);
  EXPECT_EQ(again.err_lines(), 1) << again.err;
  EXPECT_NE(again.err.find("finished run"), std::string::npos) << again.err;
  EXPECT_EQ(slurp(dir_ / "run" / "results.json"), before);
  args.push_back("--force");
  EXPECT_EQ(train(args).code, 0);
}

TEST_F(TrainE2E, CheckpointIntervalZeroWritesNoCheckpoints) {
  json r = train_ok("none", {"train.checkpoint_interval=0"});
  EXPECT_EQ(r["runs"].size(), 2u);
  EXPECT_FALSE(fs::exists(dir_ / "none" / "checkpoints"));
  // With an interval: one every 8 steps, the last one at the end (16 steps), no temporary files left.
  train_ok("some");
  std::set<std::string> files;
  for (const auto& f : fs::directory_iterator(dir_ / "some" / "checkpoints"))
    files.insert(f.path().filename());
  EXPECT_EQ(files, (std::set<std::string>{"sa.pt", "xsa.pt"}));
}

TEST_F(TrainE2E, ConfigsThatCannotFitInMemoryAreRefusedBeforeAnythingIsBuilt) {
  for (const char* typo : {"model.d_model=1048576", "train.batch_size=100000000"}) {
    Outcome o = train(
        {"--config", (dir_ / "config.yaml").string(), "--out", (dir_ / "huge").string(), "--set", typo});
    EXPECT_EQ(o.code, 2) << typo << ": " << o.err;
    EXPECT_EQ(o.err_lines(), 1) << o.err;
    EXPECT_NE(o.err.find("(with its --set overrides): this config needs an estimated "), std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("available (MemAvailable)"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "huge")) << typo;
  }
}

TEST_F(TrainE2E, NonFiniteLossFailsWithExitOneAndNoResults) {
  std::vector<std::string> args = {"--config", (dir_ / "config.yaml").string(),
                                   "--out",    (dir_ / "nan").string(),
                                   "--set",    "train.lr=1e30",
                                   "--set",    "train.min_lr=0",
                                   "--set",    "train.grad_clip=0"};
  Outcome o = train(args);
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(o.err_lines(), 1) << o.err;
  EXPECT_NE(o.err.find("loss became"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("at step"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "nan" / "results.json"));
}

// An output never destroys an input: a run folder that is the data folder, lies inside it, or holds the
// config is refused (with --force too) before anything is written, and the inputs stay as they were.
TEST_F(TrainE2E, AnOutputFolderOverAnInputIsRefused) {
  const fs::path data = dir_ / "data";
  fs::copy(XSA_TEST_DATA, data);
  write_config(dir_ / "config.yaml", data.string());
  const std::string config_text = e2e::slurp(dir_ / "config.yaml");
  struct Case {
    fs::path out;
    std::string expect;
  };
  for (const Case& c :
       {Case{data, ": is data.dir"}, Case{data / "runs" / "a", ": lies inside data.dir"},
        Case{dir_, ": contains --config"}, Case{dir_ / "data" / ".." / "data", ": is data.dir"}}) {
    Outcome o = train({"--config", (dir_ / "config.yaml").string(), "--out", c.out.string(), "--force"});
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_EQ(o.err_lines(), 1) << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << o.err;
    EXPECT_EQ(e2e::slurp(dir_ / "config.yaml"), config_text);
    EXPECT_TRUE(fs::exists(data / "train.bin") && fs::exists(data / "meta.json"));
    EXPECT_FALSE(fs::exists(data / "runs"));
    EXPECT_FALSE(fs::exists(data / "config.yaml")) << "nothing written into the data";
  }
}

// Every bad input: exit code 2, one stderr line naming the problem, no output folder created.
struct BadCase {
  std::string name;
  std::vector<std::string> sets;
  std::string expect;       // substring of the error line
  std::string config_text;  // replaces the config file when set ("<fifo>": by a FIFO without a writer)
  std::string corrupt;      // data corruption to apply to a copy of the data
};

// gtest prints parameters in test listings; keep CTest's names readable.
void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

class TrainBadInput : public TrainE2E, public ::testing::WithParamInterface<BadCase> {};

TEST_P(TrainBadInput, ExitsTwoWithOneLineAndNoOutput) {
  const BadCase& c = GetParam();
  fs::path config = dir_ / "config.yaml";
  if (c.config_text == "<fifo>") {
    fs::remove(config);
    ASSERT_EQ(::mkfifo(config.c_str(), 0644), 0);
  } else if (!c.config_text.empty()) {
    std::ofstream(config) << c.config_text;
  }
  if (!c.corrupt.empty()) {
    fs::path copy = dir_ / "data";
    fs::copy(XSA_TEST_DATA, copy);
    write_config(config, copy.string());
    if (c.corrupt == "meta") std::ofstream(copy / "meta.json") << "{ not json";
    if (c.corrupt == "short_val") fs::resize_file(copy / "val.bin", fs::file_size(copy / "val.bin") - 2);
    if (c.corrupt == "big_id") {
      std::fstream f(copy / "train.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.put(static_cast<char>(0xff)).put(static_cast<char>(0xff));
    }
    if (c.corrupt == "pieces") std::ofstream(copy / "pieces.json") << "[\"<unk>\", \"<s>\", \"</s>\"]";
    if (c.corrupt == "missing") fs::remove_all(copy);
    if (c.corrupt == "fifo_val") {  // opened without O_NONBLOCK this would block forever
      fs::remove(copy / "val.bin");
      ASSERT_EQ(::mkfifo((copy / "val.bin").c_str(), 0644), 0);
    }
    if (c.corrupt == "no_bos") {  // a dataset whose tokenizer has no BOS: no document starts to mask at
      std::string meta = e2e::slurp(copy / "meta.json");
      const auto at = meta.find("\"bos_id\"");
      ASSERT_NE(at, std::string::npos);
      const auto value = meta.find_first_of("0123456789", at);
      meta.replace(value, meta.find_first_not_of("0123456789", value) - value, "-1");
      std::ofstream(copy / "meta.json") << meta;
    }
    if (c.corrupt == "folder_meta") {
      fs::remove(copy / "meta.json");
      fs::create_directory(copy / "meta.json");
    }
  }
  std::vector<std::string> args = {"--config", config.string(), "--out", (dir_ / "out").string()};
  for (const auto& s : c.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  Outcome o = train(args);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err_lines(), 1) << o.err;
  EXPECT_NE(o.err.find(c.expect), std::string::npos) << "stderr: " << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrainBadInput,
    ::testing::Values(
        BadCase{"unknown_key", {"model.n_heads=2"}, "model.n_heads", "", ""},
        BadCase{"lambda_out_of_range", {"attention.variants=[sa, 1.5]"}, "attention.variants", "", ""},
        BadCase{"zero_heads", {"model.n_head=0"}, "model.n_head", "", ""},
        BadCase{"zero_seq_len", {"data.seq_len=0"}, "data.seq_len", "", ""},
        BadCase{"seq_len_longer_than_data", {"data.seq_len=60000"}, "val.bin", "", ""},
        BadCase{"wrong_type", {"train.steps=lots"}, "train.steps", "", ""},
        BadCase{"set_without_equals", {"train.steps"}, "train.steps", "", ""},
        BadCase{"malformed_yaml", {}, "config.yaml", "model: [1, 2\n", ""},
        BadCase{"missing_data_folder", {}, "data", "", "missing"},
        BadCase{"meta_unreadable", {}, "meta.json", "", "meta"},
        BadCase{"token_file_length", {}, "val.bin", "", "short_val"},
        BadCase{"token_id_too_large", {}, "train.bin", "", "big_id"},
        BadCase{"vocab_mismatch_pieces", {}, "pieces.json", "", "pieces"},
        BadCase{"config_is_a_fifo",
                {},
                "config.yaml: is a FIFO (named pipe), expected a regular file",
                "<fifo>",
                ""},
        BadCase{"token_file_is_a_fifo",
                {},
                "val.bin: is a FIFO (named pipe), expected a regular token file",
                "",
                "fifo_val"},
        BadCase{"meta_is_a_folder", {}, "meta.json: is a folder, expected a regular file", "", "folder_meta"},
        BadCase{"sample_count_typo",
                {"sample.count=20000"},
                "sample.count: got '20000', expected an integer in [0, 1,000]",
                "",
                ""},
        BadCase{"eval_batches_typo", {"eval.batches=2000000"}, "eval.batches", "", ""},
        BadCase{"sample_tokens_typo", {"sample.tokens=3000000"}, "sample.tokens", "", ""},
        BadCase{"unknown_device", {"runtime.device=gpu"}, "runtime.device: got 'gpu'", "", ""},
        BadCase{"doc_mask_without_bos",
                {"data.doc_mask=true"},
                "meta.json: bos_id -1 marks no document start",
                "",
                "no_bos"},
        BadCase{"doc_mask_not_a_bool", {"data.doc_mask=yes please"}, "data.doc_mask", "", ""},
        // Debian's LibTorch (both releases the project builds on) has no CUDA.
        BadCase{"cuda_in_a_cpu_build",
                {"runtime.device=cuda"},
                "runtime.device: cuda, but this LibTorch",
                "",
                ""}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

}  // namespace
}  // namespace xsa
