// An output never destroys an input (util/fs.h require_output_apart), a killed writer's leftovers are removed
// by the next writer (util/fs.h write_file_atomic, util/staging_folder.h), and JSON inputs that name a key
// twice are refused (util/json_input.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "process.h"
#include "xsa/records/results.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/json_input.h"
#include "xsa/util/staging_folder.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;

class OutputApart : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ + "/runs/a/checkpoints");
    fs::create_directories(dir_ + "/runs/ab");
    std::ofstream(dir_ + "/config.yaml") << "name: x\n";
  }

  // The InputError's message, or "" when the output is accepted.
  std::string refusal(const std::string& out, const std::string& input) {
    try {
      require_output_apart({out, "--out"}, {{input, "the run folder"}});
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  testing::TempDir tmp_;  // removed with the fixture
  const std::string dir_ = tmp_.path();
};

TEST_F(OutputApart, RefusesAnOutputThatIsContainsOrLiesInsideAnInput) {
  const std::string run = dir_ + "/runs/a";
  EXPECT_EQ(refusal(run, run), "--out " + run + ": is the run folder " + run +
                                   ", which this command reads; an output never replaces an input, choose "
                                   "another --out");
  EXPECT_EQ(
      refusal(run + "/checkpoints", run).find("--out " + run + "/checkpoints: lies inside the run folder"),
      0u);
  EXPECT_NE(refusal(run + "/new/export", run).find(": lies inside the run folder"), std::string::npos);
  EXPECT_EQ(refusal(dir_ + "/runs", run).find("--out " + dir_ + "/runs: contains the run folder"), 0u);
  EXPECT_NE(refusal("/", run).find(": contains the run folder"), std::string::npos);
  // Other spellings of the same place: a trailing slash, "..", "." and a symbolic link.
  EXPECT_NE(refusal(run + "/", run).find(": is the run folder"), std::string::npos);
  EXPECT_NE(refusal(run + "/checkpoints/..", run).find(": is the run folder"), std::string::npos);
  EXPECT_NE(refusal(dir_ + "/./runs/a", run).find(": is the run folder"), std::string::npos);
  fs::create_directory_symlink(run, dir_ + "/link");
  EXPECT_NE(refusal(dir_ + "/link", run).find(": is the run folder"), std::string::npos);
  EXPECT_NE(refusal(dir_ + "/link/checkpoints", run).find(": lies inside the run folder"), std::string::npos);
  EXPECT_NE(refusal(dir_ + "/runs", dir_ + "/link").find(": contains the run folder"), std::string::npos);
  // A file input: an output folder that contains it.
  EXPECT_NE(refusal(dir_, dir_ + "/config.yaml").find(": contains the run folder"), std::string::npos);
  // Apart: a sibling whose name starts the same, a sibling folder, a path that does not exist yet.
  EXPECT_EQ(refusal(dir_ + "/runs/ab", run), "");
  EXPECT_EQ(refusal(dir_ + "/runs/b", run), "");
  EXPECT_EQ(refusal(dir_ + "/exports/a", run), "");
  // Empty paths (an optional input not given) are skipped.
  EXPECT_EQ(refusal(dir_ + "/runs/b", ""), "");
  EXPECT_NO_THROW(require_output_apart({"", "--out"}, {{run, "the run folder"}}));
}

// A temporary file of a killed writer (no lock, not written for a minute) goes at the next write of the same
// file; a fresh one and one whose writer holds its lock stay.
TEST_F(OutputApart, TheNextWriteRemovesAKilledWritersTemporaryFile) {
  const std::string target = dir_ + "/results.json";
  const std::string orphan = dir_ + "/.results.json.tmp.AAAAAA", fresh = dir_ + "/.results.json.tmp.BBBBBB",
                    held = dir_ + "/.results.json.tmp.CCCCCC", other = dir_ + "/.log.jsonl.tmp.DDDDDD";
  for (const auto& p : {orphan, fresh, held, other}) std::ofstream(p) << "half";
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  for (const auto& p : {orphan, held, other}) fs::last_write_time(p, old);
  const int fd = ::open(held.c_str(), O_RDONLY);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  write_file_atomic(target, "{}\n");
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(fresh)) << "written within the last minute: its writer may not have locked it yet";
  EXPECT_TRUE(fs::exists(held)) << "a live writer holds its lock";
  EXPECT_TRUE(fs::exists(other)) << "another file's temporary";
  EXPECT_EQ(read_file(target), "{}\n");
  ::close(fd);
}

// xsa-prepare's and xsa-export's staging folder: a killed writer's `.NAME.tmp-*` goes when the next writer
// for NAME starts; a live writer's (its flock held) stays; a committed folder holds what was written.
TEST_F(OutputApart, TheNextStagingFolderRemovesAKilledWritersFolder) {
  const std::string out = dir_ + "/export";
  const std::string orphan = dir_ + "/.export.tmp-Ab12Cd", live = dir_ + "/.export.tmp-Ef34Gh",
                    other = dir_ + "/.exports.tmp-Ij56Kl";
  for (const auto& p : {orphan, live, other}) {
    fs::create_directories(p);
    std::ofstream(p + "/model.safetensors") << "half";
  }
  const int fd = ::open(live.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  {
    StagingFolder staging(out, /*force=*/false);
    EXPECT_FALSE(fs::exists(orphan));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(other));
    // The new writer's own folder is locked against the next one.
    EXPECT_EQ(remove_orphaned_staging(out), 0);
    EXPECT_TRUE(fs::exists(staging.path()));
    std::ofstream(staging.file("a.txt")) << "done";
    staging.commit();
  }
  EXPECT_EQ(read_file(out + "/a.txt"), "done");
  ::close(fd);
  EXPECT_EQ(remove_orphaned_staging(out), 1) << "the live writer has gone: its folder is an orphan now";
  EXPECT_FALSE(fs::exists(live));
  // Without --force an existing folder is refused before anything is made.
  EXPECT_THROW(StagingFolder(out, false), InputError);
}

TEST(JsonInput, AKeyNamedTwiceInOneObjectIsRefused) {
  EXPECT_EQ(parse_json_input(R"({"a": 1, "b": {"a": 2}})", "f.json")["b"]["a"], 2);
  EXPECT_TRUE(parse_json_input(R"({"a": 1,)", "f.json").is_discarded());
  try {
    parse_json_input(R"({"a": 1, "b": [{"c": 1, "c": 2}]})", "f.json");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "f.json: the key \"c\" appears twice in one object; expected each key once (which value is "
                 "meant?)");
  }
  EXPECT_THROW(parse_json_input(R"({"a": 1, "a": 1})", "f.json"), InputError) << "even with equal values";
  // results.json goes through it: a run's val loss given twice is refused, not read as the last.
  EXPECT_THROW(parse_results(std::string(R"({"runs": [], "runs": []})"), "results.json"), InputError);
}

}  // namespace
}  // namespace xsa
