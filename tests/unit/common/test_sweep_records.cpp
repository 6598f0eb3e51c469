// The sweep's typed files (xsa/records/sweep_records.h) against their literal form: key names and values as
// other tools read them, not only a round trip (which a field dropped from both writer and reader would
// pass).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "xsa/records/sweep_records.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(SweepRecords, StatusNamesAreTheFilesSpelling) {
  const std::vector<std::string> names = {"pending",     "running", "done",   "failed",
                                          "interrupted", "held",    "skipped"};
  ASSERT_EQ(std::size(kPointStatuses), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(point_status_name(kPointStatuses[i].value), names[i]);
    EXPECT_EQ(parse_point_status(names[i]), kPointStatuses[i].value);
  }
  EXPECT_FALSE(parse_point_status("Done"));
  EXPECT_FALSE(parse_point_status(""));
}

TEST(SweepRecords, PointRecordWritesTheDocumentedKeys) {
  PointRecord r;
  r.run_id = "seed=1";
  r.status = PointStatus::kFailed;
  r.exit_code = 2;
  r.message = "config.yaml: train.steps: got 0";
  r.process = {"node7", 4242, "4711_1"};
  r.attempt = 3;
  r.started_at = 100.5;
  r.updated_at = 160.25;
  r.wall_s = 59.75;
  const json expected =
      json::parse(R"({"schema": "xsa.point-status/1", "run_id": "seed=1", "status": "failed",
      "exit_code": 2, "message": "config.yaml: train.steps: got 0", "host": "node7", "pid": 4242,
      "job": "4711_1", "attempt": 3, "started_at": 100.5, "updated_at": 160.25, "wall_s": 59.75})");
  EXPECT_EQ(to_json(r), expected);
  r.exit_code.reset();
  EXPECT_TRUE(to_json(r)["exit_code"].is_null());
}

TEST(SweepRecords, PointRecordReadsALiteralFileAndRefusesDamagedOnes) {
  const fs::path dir = fs::path(::testing::TempDir()) / "sweep_records";
  fs::create_directories(dir);
  auto write = [&](const std::string& text) {
    std::ofstream(dir / "status.json") << text;
    return read_point_record((dir / "status.json").string());
  };
  auto r = write(R"({"schema": "xsa.point-status/1", "run_id": "a", "status": "interrupted", "exit_code": 75,
      "message": "m", "host": "h", "pid": 9, "job": "", "attempt": 2, "started_at": 1, "updated_at": 2,
      "wall_s": 3.5})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, PointStatus::kInterrupted);
  EXPECT_EQ(r->exit_code, 75);
  EXPECT_EQ(r->process.host, "h");
  EXPECT_EQ(r->process.pid, 9);
  EXPECT_EQ(r->attempt, 2);
  EXPECT_DOUBLE_EQ(r->wall_s, 3.5);
  EXPECT_FALSE(write("{\"status\": \"finished\"}"));  // not a status
  EXPECT_FALSE(write("{\"status\": "));               // not JSON
  EXPECT_FALSE(read_point_record((dir / "absent.json").string()));
  auto sparse = write(R"({"status": "running"})");  // fields a file lacks read as defaults
  ASSERT_TRUE(sparse);
  EXPECT_EQ(sparse->attempt, 1);
  EXPECT_FALSE(sparse->exit_code);
  EXPECT_EQ(sparse->process.host, "?");
}

TEST(SweepRecords, SummaryCountsEveryStatusAndParsesLeniently) {
  SweepSummary s;
  s.name = "lr";
  s.shard_index = 1;
  s.shard_count = 2;
  s.process = {"h", 1, ""};
  for (PointStatus st : {PointStatus::kDone, PointStatus::kDone, PointStatus::kHeld}) {
    SummaryPoint p;
    p.run_id = "p" + std::to_string(s.points.size());
    p.index = s.points.size();
    p.status = st;
    s.points.push_back(p);
  }
  const json j = to_json(s);
  EXPECT_EQ(j["schema"], "xsa.sweep/1");
  EXPECT_EQ(j["shard"], json::parse(R"({"index": 1, "count": 2})"));
  EXPECT_EQ(j["counts"], json::parse(R"({"done": 2, "held": 1, "pending": 0, "running": 0, "failed": 0,
      "interrupted": 0, "skipped": 0})"));
  EXPECT_EQ(j["points"][2]["status"], "held");
  EXPECT_TRUE(j["points"][0]["exit_code"].is_null());
  const auto back = parse_sweep_summary(j);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->count(PointStatus::kDone), 2);
  EXPECT_EQ(back->points[1].index, 1u);
  // Lenient: points without a run id are left out, an unknown status reads as pending; no points list is no
  // summary.
  const auto odd =
      parse_sweep_summary(json::parse(R"({"points": [{"run_id": "a", "status": "??"}, {"x": 1}]})"));
  ASSERT_TRUE(odd);
  ASSERT_EQ(odd->points.size(), 1u);
  EXPECT_EQ(odd->points[0].status, PointStatus::kPending);
  EXPECT_FALSE(parse_sweep_summary(json::parse(R"({"name": "x"})")));
  EXPECT_TRUE(is_summary_file_name("summary.shard-0-of-2.json"));
  EXPECT_TRUE(is_summary_file_name("summary.vm-15633.json"));
  EXPECT_TRUE(is_summary_file_name("summary.shard-0-of-2.2.json"));
  EXPECT_FALSE(is_summary_file_name("summary.json.tmp"));
  EXPECT_FALSE(is_summary_file_name("my-summary.json"));
}

}  // namespace
}  // namespace xsa
