// xsa-train under SIGTERM (what Slurm sends on scancel, preemption and time limit): checkpoint at the next
// step boundary, exit 75, and a --resume that ends bit-identical to a run that was never interrupted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using e2e::slurp;

class Preempt : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(XSA_TEST_DATA) / "meta.json"))
        << "no prepared test data at " << XSA_TEST_DATA << " (CTest fixture train.prepare_small_data)";
    dir_ = e2e::fresh_test_folder();
    e2e::write_tiny_config(dir_ / "config.yaml", XSA_TEST_DATA);
  }

  pid_t start(const std::string& out, bool resume) {
    std::vector<std::string> argv = {XSA_TRAIN_BIN, "--quiet",
                                     "--config",    (dir_ / "config.yaml").string(),
                                     "--out",       (dir_ / out).string()};
    // Long enough to be interrupted mid-run; no periodic checkpoints: the only checkpoint of the interrupted
    // run is the one SIGTERM writes. The same overrides on the resume, so the identities match.
    for (const char* set :
         {"name=preempt", "seed=11", "train.steps=400", "train.warmup_steps=5", "train.log_interval=1",
          "train.checkpoint_interval=0", "eval.interval=100", "metrics.bias_interval=100"}) {
      argv.push_back("--set");
      argv.push_back(set);
    }
    if (resume) argv.push_back("--resume");
    const std::string err = (dir_ / (out + ".err")).string();
    return xsa::testing::start_command(argv[0], {argv.begin() + 1, argv.end()}, "/dev/null", err);
  }

  static int wait_exit(pid_t pid) { return xsa::testing::wait_command(pid); }

  // Highest logged step per run.
  std::map<std::string, int> progress(const std::string& out) {
    std::map<std::string, int> last;
    std::istringstream in(slurp(dir_ / out / "log.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) last[j["run"]] = std::max(last[j["run"]], j["step"].get<int>());
    }
    return last;
  }

  static json numbers(const json& r) { return e2e::deterministic_numbers(r); }

  fs::path dir_;
};

TEST_F(Preempt, SigtermCheckpointsExits75AndResumeIsBitIdentical) {
  ASSERT_EQ(wait_exit(start("whole", false)), 0) << slurp(dir_ / "whole.err");
  const json whole = json::parse(slurp(dir_ / "whole/results.json"));

  pid_t pid = start("cut", false);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto p = progress("cut");
    if (p["sa"] >= 30 && p["xsa"] >= 30) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "training did not progress";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGTERM);
  ASSERT_EQ(wait_exit(pid), 75) << slurp(dir_ / "cut.err");
  EXPECT_NE(slurp(dir_ / "cut.err").find("xsa-train: interrupted: stopped by SIGTERM"), std::string::npos)
      << slurp(dir_ / "cut.err");
  EXPECT_FALSE(fs::exists(dir_ / "cut/results.json"));
  auto at_stop = progress("cut");
  EXPECT_LT(at_stop["sa"], 400) << "the signal came too late to test an interruption";
  EXPECT_LT(at_stop["xsa"], 400);
  ASSERT_TRUE(fs::exists(dir_ / "cut/checkpoints/sa.pt"));
  ASSERT_TRUE(fs::exists(dir_ / "cut/checkpoints/xsa.pt"));

  ASSERT_EQ(wait_exit(start("cut", true)), 0) << slurp(dir_ / "cut.err");
  const json resumed = json::parse(slurp(dir_ / "cut/results.json"));
  EXPECT_EQ(numbers(resumed), numbers(whole));  // every loss, eval, bias metric and sample, to the bit
  // The log holds every step of every run exactly once.
  std::map<std::string, std::vector<int>> steps;
  std::istringstream in(slurp(dir_ / "cut/log.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    steps[j["run"]].push_back(j["step"]);
  }
  for (const char* run : {"sa", "xsa"}) {
    ASSERT_EQ(steps[run].size(), 400u) << run;
    for (int i = 0; i < 400; ++i) ASSERT_EQ(steps[run][i], i + 1) << run;
  }
}

}  // namespace
}  // namespace xsa
