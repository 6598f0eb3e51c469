// Data-parallel ranks (docs/guide.md "Scale-out"), end to end on 127.0.0.1 with the small data of
// train.cmake: W ranks train the same numbers as one process (up to float summation order), a checkpoint
// moves between world sizes, and faults end every rank with one line, bounded by runtime.dist_timeout_s.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class DistributedE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(XSA_TEST_DATA) / "meta.json"))
        << "no prepared test data at " << XSA_TEST_DATA << " (CTest fixture train.prepare_small_data)";
    dir_ = e2e::fresh_test_folder();
    e2e::write_tiny_config(dir_ / "config.yaml", XSA_TEST_DATA);
  }

  std::vector<std::string> args(const std::string& out, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> a = {"--quiet", "--config", (dir_ / "config.yaml").string(), "--out",
                                  (dir_ / out).string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  testing::CommandResult train(const std::string& out, const std::vector<std::string>& extra = {},
                               const std::vector<std::string>& env = {}) {
    return testing::run_command(XSA_TRAIN_BIN, args(out, extra), "", env);
  }

  json results(const std::string& out) { return json::parse(e2e::slurp(dir_ / out / "results.json")); }

  fs::path dir_;
};

double rel(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-12);
}

// Every logged training loss and the final validation loss of every run, within `tol` relative.
void expect_same_training(const json& got, const json& want, double tol) {
  ASSERT_EQ(got["runs"].size(), want["runs"].size());
  double worst = 0;
  for (size_t i = 0; i < want["runs"].size(); ++i) {
    const json &g = got["runs"][i], &w = want["runs"][i];
    ASSERT_EQ(g["variant"], w["variant"]);
    ASSERT_EQ(g["train_loss"].size(), w["train_loss"].size());
    for (size_t k = 0; k < w["train_loss"].size(); ++k) {
      EXPECT_EQ(g["train_loss"][k]["step"], w["train_loss"][k]["step"]);
      const double r =
          rel(g["train_loss"][k]["loss"].get<double>(), w["train_loss"][k]["loss"].get<double>());
      EXPECT_LT(r, tol) << w["variant"] << " step " << w["train_loss"][k]["step"];
      worst = std::max(worst, r);
    }
    const double r = rel(g["final"]["val_loss"].get<double>(), w["final"]["val_loss"].get<double>());
    EXPECT_LT(r, tol) << w["variant"] << " final val loss";
    worst = std::max(worst, r);
  }
  std::printf("largest relative difference: %.3g\n", worst);
}

TEST_F(DistributedE2E, TwoRanksTrainWhatOneProcessTrains) {
  auto one = train("one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto two = train("two", {"--ranks", "2"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  auto again = train("again", {"--ranks", "2"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json r1 = results("one"), r2 = results("two"), r2b = results("again");
  expect_same_training(r2, r1, 1e-5);
  EXPECT_EQ(e2e::deterministic_numbers(r2), e2e::deterministic_numbers(r2b)) << "a 2-rank rerun differs";
  EXPECT_EQ(r2["environment"]["world_size"], 2);
  EXPECT_EQ(r2["environment"]["backend"], "gloo");
  EXPECT_EQ(r1["environment"]["world_size"], 1);
  EXPECT_FALSE(r1["environment"].contains("backend"));
  // The all-reduce time is measured where there is one (each run's own group), and only there.
  for (const auto& run : r2["runs"]) {
    ASSERT_TRUE(run["timing"].contains("allreduce_ms_median")) << run["variant"];
    EXPECT_GT(run["timing"]["allreduce_ms_median"].get<double>(), 0.0);
    EXPECT_LT(run["timing"]["allreduce_ms_median"].get<double>(),
              run["timing"]["step_ms_median"].get<double>());
  }
  for (const auto& run : r1["runs"]) EXPECT_FALSE(run["timing"].contains("allreduce_ms_median"));
  EXPECT_FALSE(fs::exists(dir_ / "two" / "log.jsonl.1"));
}

// Buckets change when each part of the gradient is summed, not what is summed: with 2 ranks every element is
// a + b in any layout, so the weights, evaluations and bias metrics are bit-identical with one bucket
// (default cap), one bucket per few parameters (1 KiB) and no buckets (one all-reduce after backward); only
// the logged training loss may differ in its last bits (summed in float64 beside the buckets, in the
// gradients' float32 without). Learned λ and gates (parameters of their own) and two concurrent runs
// included.
TEST_F(DistributedE2E, BucketsOverlapWithoutChangingTheNumbers) {
  const std::vector<std::string> variants = {"--set", "attention.variants=[sa,xsa,learned,gate]"};
  auto with = [&](const std::string& out, const std::string& mib) {
    auto extra = variants;
    extra.insert(extra.end(), {"--ranks", "2", "--set", "runtime.dist_bucket_mb=" + mib});
    auto r = train(out, extra);
    EXPECT_EQ(r.exit_code, 0) << out << ": " << r.err;
    return results(out);
  };
  const json one_bucket = with("default", "25"), many = with("many", "0.001"), none = with("none", "0");
  EXPECT_EQ(e2e::deterministic_numbers(many), e2e::deterministic_numbers(one_bucket));
  auto without_train_loss = [](json r) {
    r = e2e::deterministic_numbers(r);
    for (auto& run : r["runs"]) {
      run.erase("train_loss");
      run["final"].erase("train_loss");
    }
    return r;
  };
  EXPECT_EQ(without_train_loss(none), without_train_loss(one_bucket));
  expect_same_training(none, one_bucket, 1e-7);
  for (const json* r : {&one_bucket, &many, &none}) {
    for (const auto& run : (*r)["runs"]) {
      ASSERT_TRUE(run["timing"].contains("allreduce_ms_median")) << run["variant"];
      EXPECT_GT(run["timing"]["allreduce_ms_median"].get<double>(), 0.0);
    }
  }
}

TEST_F(DistributedE2E, BucketCapOutsideItsRangeIsRefused) {
  for (const std::string bad : {"-1", "1025", "lots"}) {
    auto r = train("bad", {"--ranks", "2", "--set", "runtime.dist_bucket_mb=" + bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("runtime.dist_bucket_mb"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[0, 1,024]"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// xsa-bench --allreduce-mb: the all-reduce of training's buckets timed alone (scripts/bench.sh compares it
// with PyTorch's Gloo all-reduce of the same size). Its record is consistent, and misuse is one line.
TEST_F(DistributedE2E, BenchTimesTheAllReduceOverLocalRanks) {
  const std::string out = (dir_ / "allreduce.json").string();
  auto r = testing::run_command(XSA_BENCH_BIN,
                                {"--allreduce-mb", "2.5", "--ranks", "2", "--repeats", "3", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(e2e::slurp(out));
  EXPECT_EQ(j["bytes"], 2500000);
  EXPECT_EQ(j["world_size"], 2);
  ASSERT_EQ(j["samples_ms"].size(), 3u);
  std::vector<double> samples = j["samples_ms"].get<std::vector<double>>();
  std::sort(samples.begin(), samples.end());
  EXPECT_DOUBLE_EQ(j["ms_median"].get<double>(), samples[1]);
  EXPECT_NEAR(j["MB_per_s"].get<double>(), 2.5 / (samples[1] / 1e3), 1e-9 * j["MB_per_s"].get<double>());
  EXPECT_EQ(json::parse(r.out.substr(r.out.find('{'))), j);  // rank 0's line on stdout is the file
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--allreduce-mb", "1"},
                                                               {"--ranks", "2"},
                                                               {"--allreduce-mb", "0"},
                                                               {"--allreduce-mb", "1", "--ranks", "1"}}) {
    auto b = testing::run_command(XSA_BENCH_BIN, bad);
    EXPECT_EQ(b.exit_code, 2) << bad[0];
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
  }
  // Its step timing runs random tokens, which hold no documents: a config with data.doc_mask is refused, not
  // timed unmasked.
  auto masked = testing::run_command(
      XSA_BENCH_BIN, {"--config", (dir_ / "config.yaml").string(), "--set", "data.doc_mask=true"});
  EXPECT_EQ(masked.exit_code, 2) << masked.err;
  EXPECT_EQ(testing::count_lines(masked.err), 1) << masked.err;
  EXPECT_NE(masked.err.find("data.doc_mask: true"), std::string::npos) << masked.err;
}

TEST_F(DistributedE2E, BatchSizeMustDivideByRanks) {
  auto r = train("bad", {"--ranks", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("does not divide by the 3 ranks"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad" / "results.json"));
}

// Counts are bounded by the machine before anything forks: more ranks than cores is one line, exit 2, no run
// folder and no rank's output (no test machine has 512 cores).
TEST_F(DistributedE2E, MoreRanksThanCoresAreRefusedBeforeAnyFork) {
  auto r = train("many", {"--ranks", "512", "--set", "train.batch_size=512"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--ranks 512: more ranks than the"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("rank 0"), std::string::npos) << "no rank started: " << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "many"));
}

// --submit slurm --dry-run: the sbatch script of one run of nodes × tasks-per-node ranks, checked and
// printed.
TEST_F(DistributedE2E, SlurmDryRunPrintsTheBatchScript) {
  auto r = train("job", {"--submit", "slurm", "--nodes", "2", "--tasks-per-node", "2", "--set",
                         "train.steps=20", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& want : std::vector<std::string>{
           "#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=2\n", "#SBATCH --cpus-per-task=2\n",
           "#SBATCH --requeue\n", "scontrol show hostnames", "srun --kill-on-bad-exit=1 '" XSA_TRAIN_BIN "'",
           "--set 'train.steps=20'", "--out '" + (dir_ / "job").string() + "' --resume &"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  e2e::spit(dir_ / "job.sbatch", r.out);
  EXPECT_EQ(testing::run_command("/bin/bash", {"-n", (dir_ / "job.sbatch").string()}).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "job"));  // a dry run writes nothing
  auto odd = train("job", {"--submit", "slurm", "--nodes", "3", "--tasks-per-node", "1", "--dry-run"});
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_EQ(testing::count_lines(odd.err), 1) << odd.err;
}

// A checkpoint does not depend on the world size: killed after step 8 with W ranks, resumed with W'.
TEST_F(DistributedE2E, CheckpointMovesBetweenWorldSizes) {
  auto whole = train("whole");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  struct Case {
    std::string name;
    std::vector<std::string> first, then;
  };
  for (const Case& c :
       {Case{"two_then_one", {"--ranks", "2"}, {}}, Case{"one_then_two", {}, {"--ranks", "2"}}}) {
    auto killed = train(c.name, c.first, {"XSA_FAULT_EXIT_AFTER_STEP=8"});
    ASSERT_NE(killed.exit_code, 0) << c.name;
    ASSERT_FALSE(fs::exists(dir_ / c.name / "results.json")) << c.name;
    std::vector<std::string> resume = c.then;
    resume.push_back("--resume");
    auto resumed = train(c.name, resume);
    ASSERT_EQ(resumed.exit_code, 0) << c.name << ": " << resumed.err;
    expect_same_training(results(c.name), results("whole"), 1e-5);
  }
}

// Two ranks started by hand (torchrun's variables) in one shell script, which prints "code=<rank 0's exit
// code>" and either "secs=<seconds from the kill (or start) to rank 0's exit>" (timed()) or "rank1=<rank 1's
// exit code>".
struct Pair {
  int code = -1;
  double secs = -1;
  int rank1_code = -1;
  std::string err;
};

// Shell text: runs `what` (a command, or "wait $pid") and prints "code=<its exit code> secs=<seconds it
// took>".
std::string timed(const std::string& what) {
  return "t0=$(date +%s.%N); " + what +
         "; c=$?; t1=$(date +%s.%N); echo code=$c secs=$(awk \"BEGIN { print $t1 - $t0 }\")";
}

class DistributedFaults : public DistributedE2E {
 protected:
  Pair run_script(const std::string& script) {
    auto r = testing::run_command("/bin/bash", {"-c", script});
    Pair p;
    p.err = r.err;
    std::istringstream in(r.out);
    std::string word;
    while (in >> word) {
      if (word.rfind("code=", 0) == 0) p.code = std::stoi(word.substr(5));
      if (word.rfind("secs=", 0) == 0) p.secs = std::stod(word.substr(5));
      if (word.rfind("rank1=", 0) == 0) p.rank1_code = std::stoi(word.substr(6));
    }
    return p;
  }
  std::string rank_cmd(int rank, const std::string& port, const std::string& out, const std::string& sets) {
    std::string cmd = "RANK=" + std::to_string(rank) +
                      " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " '" XSA_TRAIN_BIN "'";
    for (const auto& a : args(out)) cmd += " '" + a + "'";
    return cmd + " " + sets;
  }
  // Ranks 0 and 1 of a run into "run" on `port`; 4 s in, the shell command `hit` ($p1: rank 1's pid) strikes
  // rank 1, and the result is how long rank 0 then took to exit and its exit code (its stderr in rank0.err);
  // `after` runs once rank 0 has exited.
  Pair hit_rank_one(const std::string& port, const std::string& sets, const std::string& hit,
                    const std::string& after = "") {
    return run_script(rank_cmd(0, port, "run", sets) + " 2>" + (dir_ / "rank0.err").string() + " & p0=$!; " +
                      rank_cmd(1, port, "run", sets) + " 2>/dev/null & p1=$!; sleep 4; " + hit + "; " +
                      timed("wait $p0") + after);
  }
};

int some_port() {
  return 20000 + static_cast<int>(::getpid() % 20000);
}

TEST_F(DistributedFaults, KilledRankEndsTheOtherWithinTheTimeout) {
  const std::string port = std::to_string(some_port());
  const std::string sets =
      "--set runtime.dist_timeout_s=5 --set train.steps=100000 --set train.checkpoint_interval=0";
  Pair p = hit_rank_one(port, sets, "kill -9 $p1");
  const std::string err = e2e::slurp(dir_ / "rank0.err");
  EXPECT_EQ(p.code, 1) << err;
  EXPECT_GE(p.secs, 0);
  EXPECT_LT(p.secs, 5 + 10) << err;
  EXPECT_EQ(testing::count_error_lines(err), 1) << err;
  EXPECT_NE(err.find("rank 0"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "results.json"));
  std::printf("rank 0 exited %.2f s after rank 1 was killed: %s", p.secs, err.c_str());
}

// A silent rank (stopped, its sockets open) while rank 0 waits for a bucket's sum inside a step: rank 0 ends
// with one line within runtime.dist_timeout_s (Gloo's timeout on the pending all-reduce), not never.
TEST_F(DistributedFaults, SilentRankEndsTheOtherWithinTheTimeout) {
  const std::string port = std::to_string(some_port() + 1);
  const std::string sets =
      "--set runtime.dist_timeout_s=4 --set train.steps=100000 --set train.checkpoint_interval=0 "
      "--set runtime.dist_bucket_mb=0.001";  // many buckets: the stop lands among their sums
  Pair p = hit_rank_one(port, sets, "kill -STOP $p1", "; kill -9 $p1; kill -CONT $p1");
  const std::string err = e2e::slurp(dir_ / "rank0.err");
  EXPECT_EQ(p.code, 1) << err;
  EXPECT_GE(p.secs, 0);
  EXPECT_LT(p.secs, 4 + 10) << err;
  EXPECT_EQ(testing::count_error_lines(err), 1) << err;
  EXPECT_NE(err.find("runtime.dist_timeout_s = 4"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "results.json"));
  std::printf("rank 0 exited %.2f s after rank 1 was stopped: %s", p.secs, err.c_str());
}

// --ranks: the launcher passes on one line, the cause (rank 1 killed), not rank 0's report of a vanished
// peer.
TEST_F(DistributedFaults, LocalRanksPrintOneLineWhenARankIsKilled) {
  std::string cmd = "'" XSA_TRAIN_BIN "'";
  for (const auto& a : args("run", {"--ranks", "2", "--set", "runtime.dist_timeout_s=5", "--set",
                                    "train.steps=100000", "--set", "train.checkpoint_interval=0"}))
    cmd += " '" + a + "'";
  // Rank 1 is the child (its parent pid: field 4 of /proc/PID/stat) whose environment says RANK=1.
  const std::string script =
      cmd + " 2>" + (dir_ / "err").string() + " & p=$!; sleep 4; " +
      "for d in /proc/[0-9]*; do [ \"$(cut -d' ' -f4 $d/stat 2>/dev/null)\" = \"$p\" ] && " +
      "tr '\\0' '\\n' < $d/environ | grep -qx RANK=1 && kill -9 ${d#/proc/}; done; " + timed("wait $p");
  Pair p = run_script(script);
  const std::string err = e2e::slurp(dir_ / "err");
  EXPECT_EQ(p.code, 1) << err;
  EXPECT_LT(p.secs, 5 + 10) << err;
  EXPECT_EQ(testing::count_error_lines(err), 1) << err;
  EXPECT_LE(testing::count_lines(err), 2) << err;  // the advice, if any, from rank 0 alone
  EXPECT_NE(err.find("rank 1 of 2 was killed by signal 9"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "results.json"));
}

// --ranks: bad input is refused once, by the launcher, before any rank starts.
TEST_F(DistributedE2E, LocalRanksRefuseBadDataOnce) {
  auto r = train("run", {"--ranks", "2", "--set", "data.dir=" + (dir_ / "nowhere").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.find("rank"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(DistributedFaults, DifferentConfigsAreRefusedBeforeStepOne) {
  const std::string port = std::to_string(some_port() + 1);
  const std::string sets = "--set runtime.dist_timeout_s=10";
  const std::string script = rank_cmd(0, port, "run", sets) + " 2>" + (dir_ / "rank0.err").string() +
                             " & p0=$!; " + rank_cmd(1, port, "run", sets + " --set seed=8") + " 2>" +
                             (dir_ / "rank1.err").string() + "; c1=$?; wait $p0; echo code=$? rank1=$c1";
  Pair p = run_script(script);
  const std::string err0 = e2e::slurp(dir_ / "rank0.err"), err1 = e2e::slurp(dir_ / "rank1.err");
  EXPECT_EQ(p.code, 1) << err0;
  EXPECT_EQ(p.rank1_code, 1) << err1;
  EXPECT_EQ(testing::count_lines(err0), 1) << err0;
  EXPECT_EQ(testing::count_lines(err1), 1) << err1;
  EXPECT_NE(err0.find("has another config"), std::string::npos) << err0;
  EXPECT_NE(err1.find("has another config"), std::string::npos) << err1;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "log.jsonl"));  // refused before the output folder was touched
}

// The data may sit at another path on each rank; different contents are refused before step 1.
TEST_F(DistributedFaults, DifferentDataIsRefusedBeforeStepOne) {
  const fs::path copy = dir_ / "data";
  fs::copy(XSA_TEST_DATA, copy);
  {
    std::fstream f(copy / "train.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    const char token[2] = {5, 0};  // another valid token id
    f.write(token, 2);
  }
  e2e::write_tiny_config(dir_ / "other.yaml", copy.string());
  const std::string port = std::to_string(some_port() + 3);
  const std::string sets = "--set runtime.dist_timeout_s=10";
  std::string rank1 = rank_cmd(1, port, "run", sets);
  rank1.replace(rank1.find((dir_ / "config.yaml").string()), (dir_ / "config.yaml").string().size(),
                (dir_ / "other.yaml").string());
  const std::string script = rank_cmd(0, port, "run", sets) + " 2>" + (dir_ / "rank0.err").string() +
                             " & p0=$!; " + rank1 + " 2>" + (dir_ / "rank1.err").string() +
                             "; c1=$?; wait $p0; echo code=$? rank1=$c1";
  Pair p = run_script(script);
  const std::string err0 = e2e::slurp(dir_ / "rank0.err"), err1 = e2e::slurp(dir_ / "rank1.err");
  EXPECT_EQ(p.code, 1) << err0;
  EXPECT_EQ(p.rank1_code, 1) << err1;
  EXPECT_NE(err0.find("has another data"), std::string::npos) << err0;
  EXPECT_NE(err1.find("has another data"), std::string::npos) << err1;
  EXPECT_EQ(testing::count_lines(err0), 1) << err0;
}

TEST_F(DistributedFaults, UnreachableMasterIsRefusedWithinTheTimeout) {
  const std::string port = std::to_string(some_port() + 2);  // nobody serves it
  const std::string script = timed(rank_cmd(1, port, "run", "--set runtime.dist_timeout_s=3") + " 2>" +
                                   (dir_ / "rank1.err").string());
  Pair p = run_script(script);
  const std::string err = e2e::slurp(dir_ / "rank1.err");
  EXPECT_EQ(p.code, 1) << err;
  // LibTorch 1.13's client gives up at the timeout; 2.6's keeps retrying until the rendezvous deadline (+5
  // s).
  EXPECT_LT(p.secs, 3 + 10) << err;
  EXPECT_EQ(testing::count_lines(err), 1) << err;
  EXPECT_NE(err.find("cannot reach the master at 127.0.0.1:" + port), std::string::npos) << err;
  std::printf("unreachable master refused after %.2f s: %s", p.secs, err.c_str());
}

}  // namespace
}  // namespace xsa
