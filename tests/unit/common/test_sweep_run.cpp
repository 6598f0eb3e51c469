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
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process.h"
#include "xsa/records/sweep_records.h"
#include "xsa/sweep/runner.h"

namespace fs = std::filesystem;

namespace {

const std::string kSweepExe = std::string(XSA_BINARY_DIR) + "/xsa-sweep";
const std::string kFakeTrainer = std::string(XSA_FIXTURES_DIR) + "/sweep/fake_trainer.sh";
const std::string kBase = std::string(XSA_FIXTURES_DIR) + "/sweep/base.yaml";

using xsa::testing::slurp;

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
    const std::string out = (dir_ / "out.txt").string();  // stdout and stderr together
    return xsa::testing::start_command(argv[0], {argv.begin() + 1, argv.end()}, out, out);
  }

  int wait_exit(pid_t pid) { return xsa::testing::wait_command(pid); }

  int run(const std::vector<std::string>& args) { return wait_exit(start(args)); }

  nlohmann::json summary(const std::string& name = "summary.json") {
    return nlohmann::json::parse(slurp(dir_ / "sweep" / name));
  }

  // The summary*.json files of the sweep folder.
  std::set<std::string> summary_names() {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "sweep"))
      if (xsa::is_summary_file_name(e.path().filename().string())) names.insert(e.path().filename().string());
    return names;
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
      // Bounded by the machine before any point starts (the test machines have far fewer than 512 cores).
      {"grid: {seed: [1, 2]}\n", {"--workers", "512"}, "--workers 512: more workers than the"},
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

// An output never destroys an input: a sweep folder that holds the sweep file (or is it) is refused before
// any point runs, and the file stays as it was.
TEST_F(SweepRun, AnOutputFolderHoldingTheSweepFileIsRefused) {
  const std::string sweep = write_sweep("grid: {seed: [1, 2]}\n");
  const std::string before = slurp(sweep);
  for (const std::string& out : {dir_.string(), sweep}) {
    const std::string log = (dir_ / "refused.txt").string();
    const int rc = xsa::testing::wait_command(xsa::testing::start_command(
        kSweepExe, {"--config", sweep, "--out", out, "--trainer", kFakeTrainer}, log, log));
    const std::string text = slurp(log);
    EXPECT_EQ(rc, 2) << text;
    EXPECT_NE(text.find(out == sweep ? ": is the sweep file" : ": contains the sweep file"),
              std::string::npos)
        << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_EQ(slurp(sweep), before);
    EXPECT_FALSE(fs::exists(dir_ / "seed=1"));
  }
}

// The bug of issue 8: two sweeps started at the same moment into one folder trained every point twice,
// and a point the other process had just finished failed with "already holds a finished run".
TEST_F(SweepRun, TwoSweepsStartedTogetherTrainEachPointOnce) {
  std::string sweep = write_sweep("grid: {train.steps: [300], seed: [1, 2, 3, 4, 5, 6]}\n");
  const std::string other_out = (dir_ / "other.txt").string();
  pid_t a = start({"--config", sweep, "--workers", "1"});
  std::vector<std::string> argv = {kSweepExe,   "--out",      (dir_ / "sweep").string(),
                                   "--trainer", kFakeTrainer, "--config",
                                   sweep,       "--workers",  "1"};
  pid_t b = ::fork();
  if (b == 0) {
    std::vector<char*> cargv;
    for (auto& x : argv) cargv.push_back(x.data());
    cargv.push_back(nullptr);
    if (!std::freopen(other_out.c_str(), "w", stdout) || !std::freopen(other_out.c_str(), "a", stderr))
      ::_exit(126);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  EXPECT_EQ(wait_exit(a), 0) << slurp(dir_ / "out.txt");
  EXPECT_EQ(wait_exit(b), 0) << slurp(other_out);
  const std::string both = slurp(dir_ / "out.txt") + slurp(other_out);
  EXPECT_EQ(both.find("FAILED"), std::string::npos) << both;
  int trained_here = 0;
  for (int seed = 1; seed <= 6; ++seed) {
    const std::string id = "seed=" + std::to_string(seed);
    EXPECT_EQ(calls_for(id).size(), 1u) << id << " trained more than once";
    EXPECT_TRUE(fs::exists(dir_ / "sweep" / id / "results.json")) << id;
    EXPECT_FALSE(fs::exists(dir_ / "sweep" / id / "claim.lock")) << id << ": claim not released";
    auto st = nlohmann::json::parse(slurp(dir_ / "sweep" / id / "status.json"));
    EXPECT_EQ(st["status"], "done");
    EXPECT_EQ(st["attempt"], 1);
    trained_here += st["pid"].get<long>() == a;
  }
  EXPECT_GT(trained_here, 0);  // the work was shared, not done twice
  EXPECT_LT(trained_here, 6);
  // Each process kept its own summary (the second live one under the first numbered name); together they
  // account for every point.
  EXPECT_EQ(summary_names(), (std::set<std::string>{"summary.json", "summary.2.json"}));
  EXPECT_NE(both.find("(done by another process)"), std::string::npos) << both;
}

// Writes a claim file (a point's claim.lock, a summary name's .summary*.json.lock) as another process would
// have.
void write_claim(const fs::path& lock_file, const std::string& host, long pid, long long start) {
  fs::create_directories(lock_file.parent_path());
  std::string boot = slurp("/proc/sys/kernel/random/boot_id");
  while (!boot.empty() && boot.back() == '\n') boot.pop_back();
  nlohmann::json j = {{"token", "t-" + host + "-" + std::to_string(pid)},
                      {"host", host},
                      {"boot_id", boot},
                      {"pid", pid},
                      {"process_start", start},
                      {"since", 1.7e9},
                      {"job", "77_1"}};
  std::ofstream(lock_file) << j.dump() << "\n";
}

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST_F(SweepRun, StaleClaimsAreTakenOverAndLiveOnesShownAsRunning) {
  std::string sweep = write_sweep("grid: {seed: [1, 2]}\n");
  // seed=1: a holder on this host whose process is gone; seed=2: a holder on another node, heartbeat fresh.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  wait_exit(dead);
  write_claim(dir_ / "sweep/seed=1/claim.lock", hostname(), dead, 12345);
  write_claim(dir_ / "sweep/seed=2/claim.lock", "node-that-died", 4242, 1);
  std::ofstream(dir_ / "sweep/summary.json")
      << R"({"name": "s", "points": [{"run_id": "seed=1", "index": 0}, {"run_id": "seed=2", "index": 1}]})";
  std::string st = (dir_ / "status.txt").string();
  int rc = std::system((kSweepExe + " --status " + (dir_ / "sweep").string() + " > " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 3);  // incomplete, nothing failed
  std::string text = slurp(st);
  EXPECT_NE(text.find("seed=1    interrupted"), std::string::npos) << text;
  EXPECT_NE(text.find("is gone"), std::string::npos) << text;
  EXPECT_NE(text.find("seed=2    running      node-that-died pid 4242 (Slurm job 77_1)"), std::string::npos)
      << text;
  // The other node stopped touching its claim 10 minutes ago: stale.
  fs::last_write_time(dir_ / "sweep/seed=2/claim.lock",
                      fs::last_write_time(dir_ / "sweep/seed=2/claim.lock") - std::chrono::minutes(10));
  EXPECT_EQ(run({"--config", sweep}), 0) << slurp(dir_ / "out.txt");
  std::string out = slurp(dir_ / "out.txt");
  EXPECT_NE(out.find("recovered seed=1: took over a stale claim"), std::string::npos) << out;
  EXPECT_NE(
      out.find("recovered seed=2: took over a stale claim (node-that-died pid 4242 (Slurm job 77_1): no "
               "heartbeat from node-that-died for"),
      std::string::npos)
      << out;
  EXPECT_EQ(calls_for("seed=1").size(), 1u);
  EXPECT_EQ(calls_for("seed=2").size(), 1u);
  rc = std::system((kSweepExe + " --status " + (dir_ / "sweep").string() + " > " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 0) << slurp(st);
}

TEST_F(SweepRun, ASecondLiveProcessTakesTheFirstFreeNumberedSummaryAndReusesAGoneOnesName) {
  std::string sweep = write_sweep("grid: {seed: [1, 2]}\n");
  // summary.json: held by a live process on another node (fresh heartbeat); summary.2.json: left by a process
  // of this host that is gone; summary.3.json: free.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  wait_exit(dead);
  write_claim(dir_ / "sweep/.summary.json.lock", "node-b", 4242, 1);
  write_claim(dir_ / "sweep/.summary.2.json.lock", hostname(), dead, 12345);
  std::ofstream(dir_ / "sweep/summary.json") << R"({"name": "s", "points": []})";
  std::ofstream(dir_ / "sweep/summary.2.json") << R"({"name": "stale", "points": []})";
  for (int rerun = 0; rerun < 2; ++rerun) {
    EXPECT_EQ(run({"--config", sweep}), 0) << slurp(dir_ / "out.txt");
    EXPECT_NE(slurp(dir_ / "out.txt").find("summary: " + (dir_ / "sweep/summary.2.json").string()),
              std::string::npos)
        << slurp(dir_ / "out.txt");
    // The gone process's name was taken over, not a new file made beside it; the live one's is untouched.
    EXPECT_EQ(summary_names(), (std::set<std::string>{"summary.json", "summary.2.json"}));
    EXPECT_EQ(summary("summary.2.json")["counts"][rerun == 0 ? "done" : "skipped"], 2);
    EXPECT_EQ(summary()["name"], "s");
    EXPECT_FALSE(fs::exists(dir_ / "sweep/.summary.2.json.lock"));  // released at the end
  }
  EXPECT_EQ(calls_for("seed=1").size(), 1u);
  // summary.2.json's name held live as well: the next process takes summary.3.json, the first free one.
  write_claim(dir_ / "sweep/.summary.2.json.lock", "node-b", 4243, 1);
  EXPECT_EQ(run({"--config", sweep}), 0) << slurp(dir_ / "out.txt");
  EXPECT_NE(slurp(dir_ / "out.txt").find("summary: " + (dir_ / "sweep/summary.3.json").string()),
            std::string::npos)
      << slurp(dir_ / "out.txt");
  EXPECT_EQ(summary_names(), (std::set<std::string>{"summary.json", "summary.2.json", "summary.3.json"}));
  // Every numbered name held live: a name of the process's own, which nobody else writes.
  for (int slot = 3; slot <= xsa::kSummarySlots; ++slot)
    write_claim(dir_ / "sweep" / (".summary." + std::to_string(slot) + ".json.lock"), "node-b", 4240 + slot,
                1);
  EXPECT_EQ(run({"--config", sweep}), 0) << slurp(dir_ / "out.txt");
  const std::string own = "summary: " + (dir_ / "sweep").string() + "/summary." + hostname() + "-";
  EXPECT_NE(slurp(dir_ / "out.txt").find(own), std::string::npos) << slurp(dir_ / "out.txt");
  EXPECT_EQ(summary_names().size(), 4u);
}

TEST_F(SweepRun, SigtermCheckpointsRunningPointsAndTheRerunResumesThem) {
  // Two 20-second points run at once, a third waits.
  std::string sweep = write_sweep("grid: {train.steps: [20000], seed: [1, 2, 3]}\n");
  pid_t pid = start({"--config", sweep, "--workers", "2"});
  const fs::path s1 = dir_ / "sweep/seed=1", s2 = dir_ / "sweep/seed=2";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(fs::exists(s1 / "pid") && fs::exists(s2 / "pid")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both trainers are in their sleep
  auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), 75) << slurp(dir_ / "out.txt");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));  // did not wait for the points
  std::string out = slurp(dir_ / "out.txt");
  EXPECT_NE(out.find("interrupted seed=1"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
  auto s = summary();
  EXPECT_EQ(s["counts"]["interrupted"], 2);
  EXPECT_EQ(s["counts"]["pending"], 1);
  EXPECT_EQ(s["counts"]["failed"], 0);
  for (const auto& dir : {s1, s2}) {
    auto st = nlohmann::json::parse(slurp(dir / "status.json"));
    EXPECT_EQ(st["status"], "interrupted");
    EXPECT_EQ(st["exit_code"], 75);
    EXPECT_FALSE(fs::exists(dir / "claim.lock"));
  }
  std::string st = (dir_ / "status.txt").string();
  int rc = std::system((kSweepExe + " --status " + (dir_ / "sweep").string() + " > " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  EXPECT_NE(slurp(st).find("0 done, 0 running, 2 interrupted, 0 failed, 1 pending"), std::string::npos)
      << slurp(st);

  ::setenv("FAKE_TRAINER_SCALE", "0", 1);
  EXPECT_EQ(run({"--config", sweep, "--workers", "2"}), 0) << slurp(dir_ / "out.txt");
  for (const auto& id : {"seed=1", "seed=2"}) {
    auto calls = calls_for(id);
    ASSERT_EQ(calls.size(), 2u) << id;
    EXPECT_NE(calls[1].find("--resume"), std::string::npos) << calls[1];
    EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "sweep" / id / "status.json"))["attempt"], 2);
  }
  EXPECT_EQ(calls_for("seed=3").size(), 1u);
  rc = std::system((kSweepExe + " --status " + (dir_ / "sweep").string() + " > " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 0) << slurp(st);
}

TEST_F(SweepRun, StatusReportsRealFailuresWithExitCodeOne) {
  std::string sweep = write_sweep("grid: {seed: [1, 666]}\n");
  EXPECT_EQ(run({"--config", sweep, "--shard", "1/2"}), 1);
  std::string st = (dir_ / "status.txt").string();
  int rc = std::system((kSweepExe + " --status " + (dir_ / "sweep").string() + " > " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  std::string text = slurp(st);
  EXPECT_NE(text.find("seed=666  failed       exit 1 on "), std::string::npos) << text;
  EXPECT_NE(text.find("loss became NaN at step 3"), std::string::npos) << text;
  // The other shard has not run: its point is unknown to this folder yet, so only the failure is listed.
  EXPECT_NE(text.find("1 points: 0 done, 0 running, 0 interrupted, 1 failed, 0 pending"), std::string::npos)
      << text;
  // Not a sweep folder / bad usage: exit 2, one line.
  rc = std::system((kSweepExe + " --status " + dir_.string() + "/nonexistent 2> " + st).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(slurp(st).find("nonexistent: no such sweep folder"), std::string::npos);
}

TEST_F(SweepRun, SubmitWritesAnArrayScriptWhoseTasksRunTheShards) {
  std::string sweep = write_sweep("grid: {seed: [1, 2, 3]}\n");
  // A stand-in sbatch: records its arguments, prints a job id.
  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "sbatch") << "#!/bin/sh\necho \"$@\" > " << (dir_ / "sbatch.args").string()
                                << "\necho 4711\n";
  fs::permissions(bin / "sbatch", fs::perms::owner_all);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(run({"--config", sweep, "--submit", "slurm", "--tasks", "2", "--workers", "2",
                 "--sbatch-arg=--partition=cpu", "--sbatch-arg=--time=1:00:00"}),
            0)
      << slurp(dir_ / "out.txt");
  std::string out = slurp(dir_ / "out.txt");
  EXPECT_NE(out.find("submitted job array 4711: 2 task(s) x 2 CPU(s)"), std::string::npos) << out;
  std::string args = slurp(dir_ / "sbatch.args");
  EXPECT_EQ(args.rfind("--parsable --partition=cpu --time=1:00:00 ", 0), 0u) << args;
  std::string script_path = args.substr(args.rfind(' ') + 1);
  script_path.pop_back();  // newline
  std::string script = slurp(script_path);
  for (const char* line :
       {"#SBATCH --array=0-1\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --requeue\n",
        "#SBATCH --signal=B:USR1@120\n", "--shard \"$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\""})
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  EXPECT_FALSE(fs::exists(dir_ / "sweep/seed=1")) << "submitting runs nothing here";

  // Run the script as Slurm would run task 1 of 2 (fake trainer): it runs shard 1/2 = point seed=2.
  std::string cmd = "cd " + dir_.string() + " && SLURM_ARRAY_JOB_ID=4711 SLURM_ARRAY_TASK_ID=1 " +
                    "SLURM_ARRAY_TASK_COUNT=2 bash " + script_path + " > task1.txt 2>&1";
  EXPECT_NE(script.find(" --trainer '" + kFakeTrainer + "'"), std::string::npos) << script;
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << slurp(dir_ / "task1.txt");
  EXPECT_EQ(calls_for("seed=2").size(), 1u);
  EXPECT_EQ(calls_for("seed=1").size(), 0u);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "sweep/seed=2/status.json"))["job"], "4711_1");
  EXPECT_TRUE(fs::exists(dir_ / "sweep/summary.shard-1-of-2.json"));

  // Bad submissions: exit 2 before anything is written.
  EXPECT_EQ(run({"--config", sweep, "--submit", "slurm", "--tasks", "4"}), 2);
  EXPECT_NE(slurp(dir_ / "out.txt").find("--tasks 4: expected 1..3"), std::string::npos);
  EXPECT_EQ(run({"--config", sweep, "--submit", "pbs", "--tasks", "1"}), 2);
  EXPECT_EQ(run({"--config", sweep, "--tasks", "2"}), 2);
  EXPECT_NE(slurp(dir_ / "out.txt").find("need --submit slurm"), std::string::npos);
}

}  // namespace
