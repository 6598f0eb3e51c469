// Folder discovery (xsa/report/discovery.h): the results.json files under the paths xsa-inspect is given,
// merged across a sweep's shards, sorted by path and deduplicated; the sweep summaries found on the way, read
// strictly, only for notes about points without results (pending, failed) or summaries that are not one; and
// the one-line InputError for a path that does not exist or holds no results. On the fixtures in
// tests/fixtures/report.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "process.h"
#include "report_fixtures.h"
#include "xsa/report/discovery.h"

namespace fs = std::filesystem;

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

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

}  // namespace
}  // namespace xsa::report
