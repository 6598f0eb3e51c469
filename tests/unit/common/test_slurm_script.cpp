// The sbatch scripts xsa-sweep and xsa-train write (xsa/sweep/slurm.h) over a table of hostile values: every
// value either reaches the command it belongs to byte for byte, or is refused with one line before a script
// exists. The scripts are run by bash with stand-ins for srun, scontrol and the executables, which record the
// arguments they receive; an injected command would create a marker file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"
#include "xsa/sweep/slurm.h"
#include "xsa/util/error.h"

namespace fs = std::filesystem;

namespace {

using xsa::testing::slurp;

// Single-quoted for sh, as the test's own commands need (the paths hold every hostile value).
std::string sh_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class SlurmScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("xsa-slurm-script-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    // Each stand-in writes its arguments NUL-separated, so a newline inside one argument stays visible. srun
    // records the command it would start (its own option dropped); the executables record how they were
    // called, their own path first.
    stand_in("srun", "shift\n", "\"$@\"");
    stand_in("trainer", "", "\"$0\" \"$@\"");
    stand_in("sweep", "", "\"$0\" \"$@\"");
    std::ofstream(dir_ / "bin" / "scontrol") << "#!/bin/sh\necho localhost\n";
    fs::permissions(dir_ / "bin" / "scontrol", fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void stand_in(const std::string& name, const std::string& before, const std::string& recorded) {
    const fs::path p = dir_ / "bin" / name;
    std::ofstream(p) << "#!/bin/bash\n"
                     << before << "printf '%s\\0' " << recorded << " > "
                     << sh_quoted((dir_ / "argv").string()) << "\n";
    fs::permissions(p, fs::perms::owner_all);
  }

  // Runs the script as Slurm's task 0 would, from the working folder; returns the argv the stand-in got.
  std::vector<std::string> run_script(const std::string& script, const std::string& workdir) {
    const fs::path path = dir_ / "job.sbatch";
    std::ofstream(path) << script;
    fs::remove(dir_ / "argv");
    const std::string cmd = "cd " + sh_quoted(workdir) + " && PATH=" + sh_quoted((dir_ / "bin").string()) +
                            ":\"$PATH\" SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n1 SLURM_ARRAY_JOB_ID=7 "
                            "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=1 bash " +
                            sh_quoted(path.string()) + " > " + sh_quoted((dir_ / "job.out").string()) +
                            " 2>&1";
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << slurp(dir_ / "job.out") << script;
    std::vector<std::string> argv;
    std::string all = slurp(dir_ / "argv"), arg;
    for (char c : all) {
      if (c == '\0') {
        argv.push_back(arg);
        arg.clear();
      } else {
        arg += c;
      }
    }
    return argv;
  }

  fs::path dir_;
};

// What a shell would act on; none of them may run. Each creates the marker file if executed.
std::vector<std::string> accepted_hostile_values(const std::string& marker) {
  return {"a b",
          "it's",
          "\"quoted\"",
          "$(touch " + marker + ")",
          "`touch " + marker + "`",
          "x; touch " + marker,
          "x && touch " + marker + " #",
          "'; touch " + marker + "; '",
          "back\\slash",
          "$HOME ${PATH} $1",
          "*?[a]",
          "~user/x",
          "ünïcödé ✓"};
}

TEST_F(SlurmScript, TrainScriptPassesEveryAcceptedValueByteForByte) {
  const std::string marker = (dir_ / "INJECTED").string();
  for (const std::string& value : accepted_hostile_values(marker)) {
    const fs::path work =
        dir_ / ("work " + value);  // the value in the working folder, the out folder and more
    fs::create_directories(work);
    xsa::SlurmTrainSubmission s;
    s.name = "run" + value;
    s.config = (work / ("c" + value + ".yaml")).string();
    s.overrides = {"name=" + value};
    s.out_dir = (work / ("out" + value)).string();
    s.trainer = (dir_ / "bin" / "trainer").string();
    s.workdir = work.string();
    const std::vector<std::string> argv = run_script(xsa::slurm_train_script(s), work.string());
    const std::vector<std::string> want = {s.trainer,      "--quiet", "--config", s.config,  "--set",
                                           s.overrides[0], "--out",   s.out_dir,  "--resume"};
    EXPECT_EQ(argv, want) << value;
    EXPECT_FALSE(fs::exists(marker)) << "injected by: " << value;
  }
}

TEST_F(SlurmScript, ArrayScriptPassesEveryAcceptedValueByteForByte) {
  const std::string marker = (dir_ / "INJECTED").string();
  for (const std::string& value : accepted_hostile_values(marker)) {
    const fs::path work = dir_ / ("work " + value);
    fs::create_directories(work);
    xsa::SlurmSubmission s;
    s.sweep_name = "sweep" + value;
    s.sweep_file = (work / ("s" + value + ".yaml")).string();
    s.out_dir = (work / ("out" + value)).string();
    s.sweep_exe = (dir_ / "bin" / "sweep").string();
    s.trainer = (work / ("trainer" + value)).string();
    s.workdir = work.string();
    const std::vector<std::string> argv = run_script(xsa::slurm_array_script(s), work.string());
    const std::vector<std::string> want = {s.sweep_exe, "--config",  s.sweep_file, "--out",
                                           s.out_dir,   "--workers", "1",          "--trainer",
                                           s.trainer,   "--shard",   "0/1"};
    EXPECT_EQ(argv, want) << value;
    EXPECT_FALSE(fs::exists(marker)) << "injected by: " << value;
  }
}

// A control byte would end an #SBATCH line or a comment: refused, naming the value, before any script.
TEST_F(SlurmScript, ControlBytesInAnyValueAreRefusedWithOneLine) {
  const std::string marker = (dir_ / "INJECTED").string();
  const std::vector<std::string> hostile = {
      "x\ntouch " + marker, "x\rtouch " + marker, std::string("x\0y", 3), "bell\x07", "del\x7f",
      "esc\x1b[31m"};
  for (const std::string& value : hostile) {
    // Each field of the train submission, the message's start when it holds the value.
    using Set = void (*)(xsa::SlurmTrainSubmission&, const std::string&);
    const std::vector<std::pair<std::string, Set>> fields = {
        {"the config's name: holds ", [](auto& s, const auto& v) { s.name += v; }},
        {"--config: holds ", [](auto& s, const auto& v) { s.config += v; }},
        {"--out: holds ", [](auto& s, const auto& v) { s.out_dir += v; }},
        {"the xsa-train executable: holds ", [](auto& s, const auto& v) { s.trainer += v; }},
        {"the working folder: holds ", [](auto& s, const auto& v) { s.workdir += v; }},
        {"--set: holds ", [](auto& s, const auto& v) { s.overrides = {"name=" + v}; }}};
    for (const auto& [expected, set] : fields) {
      xsa::SlurmTrainSubmission s;
      s.name = "n";
      s.config = "/c.yaml";
      s.out_dir = "/out";
      s.trainer = "/bin/trainer";
      s.workdir = "/work";
      set(s, value);
      try {
        xsa::slurm_train_script(s);
        ADD_FAILURE() << "accepted " << expected << value;
      } catch (const xsa::InputError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(expected, 0), 0u) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_EQ(what.find('\r'), std::string::npos) << what;
      }
    }
    xsa::SlurmSubmission a;
    a.sweep_name = "s";
    a.out_dir = "/out" + value;
    EXPECT_THROW(xsa::slurm_array_script(a), xsa::InputError) << value;
    a.out_dir = "/out";
    a.sweep_name = "s" + value;
    EXPECT_THROW(xsa::slurm_array_script(a), xsa::InputError) << value;
  }
  // The message names the byte and where it is.
  xsa::SlurmTrainSubmission s;
  s.out_dir = "/runs/a\nb";
  try {
    xsa::slurm_train_script(s);
    ADD_FAILURE();
  } catch (const xsa::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--out: holds a newline (byte 0x0a at offset 7); a value written into an sbatch script may "
                 "hold no control characters");
  }
  EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
