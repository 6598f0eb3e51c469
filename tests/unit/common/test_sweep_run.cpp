// xsa-sweep end to end with a fake trainer (tests/fixtures/sweep/fake_trainer.sh): failure isolation,
// resume after kill -9, sharding into one folder, and exit code 2 for bad sweep files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kSweepExe = std::string(XSA_BINARY_DIR) + "/xsa-sweep";
const std::string kFakeTrainer = std::string(XSA_FIXTURES_DIR) + "/sweep/fake_trainer.sh";
const std::string kBase = std::string(XSA_FIXTURES_DIR) + "/sweep/base.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SweepRun : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kSweepExe)) << "build the xsa-sweep target first: " << kSweepExe;
    dir_ = fs::path(XSA_BINARY_DIR) / "test_tmp" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("FAKE_TRAINER_LOG", (dir_ / "calls.log").c_str(), 1);
    ::setenv("FAKE_TRAINER_SCALE", "1", 1);
  }

  std::string write_sweep(const std::string& body) {
    fs::path p = dir_ / "sweep.yaml";
    std::ofstream(p) << "base: " << kBase << "\n" << body;
    return p.string();
  }

  // Starts xsa-sweep with output in dir_/out.txt, returning its pid.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kSweepExe, "--out", (dir_ / "sweep").string()};
    if (std::find(args.begin(), args.end(), "--trainer") == args.end())
      argv.insert(argv.end(), {"--trainer", kFakeTrainer});
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out = (dir_ / "out.txt").string();
    pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(out.c_str(), "a", stderr)) ::_exit(126);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    return pid;
  }

  int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  int run(const std::vector<std::string>& args) { return wait_exit(start(args)); }

  nlohmann::json summary(const std::string& name = "summary.json") {
    return nlohmann::json::parse(slurp(dir_ / "sweep" / name));
  }

  // Invocation lines of the fake trainer for one point folder.
  std::vector<std::string> calls_for(const std::string& run_id) {
    std::vector<std::string> out;
    std::istringstream in(slurp(dir_ / "calls.log"));
    std::string line;
    const std::string prefix = (dir_ / "sweep" / run_id).string() + " ";
    while (std::getline(in, line))
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
  }

  fs::path dir_;
};

TEST_F(SweepRun, FailingPointIsIsolated) {
  std::string sweep = write_sweep("grid: {seed: [1, 666, 3]}\n");
  EXPECT_EQ(run({"--config", sweep, "--workers", "2"}), 1);
  auto s = summary();
  ASSERT_EQ(s["points"].size(), 3u);
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& p : s["points"]) by_id[p["run_id"]] = p;
  EXPECT_EQ(by_id["seed=1"]["status"], "done");
  EXPECT_EQ(by_id["seed=3"]["status"], "done");
  EXPECT_EQ(by_id["seed=666"]["status"], "failed");
  EXPECT_EQ(by_id["seed=666"]["exit_code"], 1);
  EXPECT_EQ(by_id["seed=666"]["message"], "fake_trainer: loss became NaN at step 3");
  EXPECT_EQ(by_id["seed=1"]["overrides"]["seed"], 1);
  EXPECT_TRUE(fs::exists(dir_ / "sweep/seed=1/results.json"));
  EXPECT_TRUE(fs::exists(dir_ / "sweep/seed=3/results.json"));
  EXPECT_FALSE(fs::exists(dir_ / "sweep/seed=666/results.json"));
  EXPECT_NE(slurp(dir_ / "sweep/seed=666/train.out").find("loss became NaN"), std::string::npos);
  // Every child is told to use one thread and one worker.
  auto calls = calls_for("seed=1");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].find("seed=1 runtime.workers=1 runtime.threads=1"), std::string::npos) << calls[0];
  EXPECT_NE(slurp(dir_ / "out.txt").find("FAILED seed=666"), std::string::npos);
}

TEST_F(SweepRun, ResumeAfterKillKeepsFinishedPointsAndDuplicatesNothing) {
  // Two quick points, then two 3-second points (train.steps/1000 s); one worker.
  std::string sweep = write_sweep("grid: {train.steps: [1, 3000], seed: [1, 2]}\n");
  pid_t pid = start({"--config", sweep, "--workers", "1"});
  const fs::path sweep_dir = dir_ / "sweep";
  const fs::path slow = sweep_dir / "steps=3000_seed=1";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(slow / "pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(slow / "pid")) << slurp(dir_ / "out.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the pid file be written completely
  ASSERT_TRUE(fs::exists(sweep_dir / "steps=1_seed=1/results.json"));
  ASSERT_TRUE(fs::exists(sweep_dir / "steps=1_seed=2/results.json"));
  std::map<std::string, std::pair<fs::file_time_type, std::string>> finished;
  for (std::string id : {"steps=1_seed=1", "steps=1_seed=2"})
    finished[id] = {fs::last_write_time(sweep_dir / id / "results.json"),
                    slurp(sweep_dir / id / "results.json")};

  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  // The running trainer dies with the sweep (PR_SET_PDEATHSIG), so nothing writes into the folder later.
  pid_t child = std::stoi(slurp(slow / "pid"));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::string stat = slurp("/proc/" + std::to_string(child) + "/stat");
    gone = stat.empty() || stat.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "trainer " << child << " survived the sweep";
  EXPECT_FALSE(fs::exists(slow / "results.json"));
  EXPECT_EQ(summary()["counts"]["running"], 1);  // the summary on disk still shows the interrupted point

  ::setenv("FAKE_TRAINER_SCALE", "0", 1);  // the rerun finishes quickly
  EXPECT_EQ(run({"--config", sweep, "--workers", "2"}), 0) << slurp(dir_ / "out.txt");
  for (const auto& [id, before] : finished) {
    EXPECT_EQ(fs::last_write_time(sweep_dir / id / "results.json"), before.first) << id;
    EXPECT_EQ(slurp(sweep_dir / id / "results.json"), before.second) << id;
    EXPECT_EQ(calls_for(id).size(), 1u) << id;
  }
  // The interrupted point is continued from its checkpoints; the never-started one starts fresh.
  auto slow_calls = calls_for("steps=3000_seed=1");
  ASSERT_EQ(slow_calls.size(), 2u);
  EXPECT_EQ(slow_calls[0].find("--resume"), std::string::npos);
  EXPECT_NE(slow_calls[1].find("--resume"), std::string::npos) << slow_calls[1];
  auto fresh_calls = calls_for("steps=3000_seed=2");
  ASSERT_EQ(fresh_calls.size(), 1u);
  EXPECT_EQ(fresh_calls[0].find("--resume"), std::string::npos);
  EXPECT_EQ(fresh_calls[0].find("--force"), std::string::npos);

  auto s = summary();
  ASSERT_EQ(s["points"].size(), 4u);
  EXPECT_EQ(s["points"][0]["status"], "skipped");
  EXPECT_EQ(s["points"][1]["status"], "skipped");
  EXPECT_EQ(s["points"][2]["status"], "done");
  EXPECT_EQ(s["points"][3]["status"], "done");
  EXPECT_EQ(s["counts"]["running"], 0);
  // A third run has nothing to do.
  EXPECT_EQ(run({"--config", sweep}), 0);
  EXPECT_EQ(calls_for("steps=3000_seed=1").size(), 2u);
  EXPECT_EQ(summary()["counts"]["skipped"], 4);
}

TEST_F(SweepRun, HalfWrittenFolderWithoutCheckpointsIsReusedWithForce) {
  std::string sweep = write_sweep("grid: {seed: [1, 2]}\n");
  fs::create_directories(dir_ / "sweep/seed=2");
  std::ofstream(dir_ / "sweep/seed=2/log.jsonl") << "{}\n";
  EXPECT_EQ(run({"--config", sweep}), 0);
  ASSERT_EQ(calls_for("seed=2").size(), 1u);
  EXPECT_NE(calls_for("seed=2")[0].find("--force"), std::string::npos);
  EXPECT_EQ(calls_for("seed=1")[0].find("--force"), std::string::npos);
}

TEST_F(SweepRun, ShardsShareOneFolderAndCoverTheSweep) {
  std::string sweep = write_sweep("grid: {attention.lambda: [0, 0.5, 1], seed: [1, 2]}\n");
  EXPECT_EQ(run({"--config", sweep, "--shard", "1/2"}), 0);
  auto s1 = summary("summary.shard-1-of-2.json");
  EXPECT_FALSE(fs::exists(dir_ / "sweep/summary.json"));
  EXPECT_EQ(run({"--config", sweep, "--shard", "0/2"}), 0);
  auto s0 = summary("summary.shard-0-of-2.json");
  std::vector<std::string> ids;
  for (const auto* s : {&s0, &s1})
    for (const auto& p : (*s)["points"]) ids.push_back(p["run_id"]);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"lambda=0.5_seed=1", "lambda=0.5_seed=2", "lambda=0_seed=1",
                                           "lambda=0_seed=2", "lambda=1_seed=1", "lambda=1_seed=2"}));
  for (const auto& id : ids) {
    EXPECT_TRUE(fs::exists(dir_ / "sweep" / id / "results.json")) << id;
    EXPECT_EQ(calls_for(id).size(), 1u) << id;
  }
  EXPECT_EQ(s1["points"][0]["run_id"], "lambda=0_seed=2");  // point 1 of the unsharded order
  // The unsharded sweep afterwards finds everything done.
  EXPECT_EQ(run({"--config", sweep}), 0);
  EXPECT_EQ(summary()["counts"]["skipped"], 6);
}

TEST_F(SweepRun, BadInputExitsTwoWithOneLineBeforeRunningAnything) {
  struct Case {
    std::string body;
    std::vector<std::string> extra;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"grid: {seed: [1, abc]}\n", {}, "seed"},
      {"grid: {seed: [1]}\nfoo: 1\n", {}, "unknown key 'foo'"},
      {"grid: {train.stepz: [1]}\n", {}, "train.stepz"},
      {"grid: {seed: [1, 2]}\n", {"--shard", "2/2"}, "--shard '2/2'"},
      {"grid: {seed: [1, 2]}\n", {"--workers", "x"}, "--workers"},
      {"grid: {seed: [1, 2]}\n", {"--trainer", "/nonexistent/xsa-train"}, "/nonexistent/xsa-train"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body + " " + c.expect);
    std::string sweep = write_sweep(c.body);
    std::vector<std::string> args = {"--config", sweep};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    EXPECT_EQ(run(args), 2);
    std::string out = slurp(dir_ / "out.txt");
    EXPECT_NE(out.find(c.expect), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_FALSE(fs::exists(dir_ / "sweep")) << "nothing may run before validation";
  }
}

}  // namespace
