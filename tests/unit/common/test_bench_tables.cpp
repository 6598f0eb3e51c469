// xsa-bench's records, tables and JSON file, on hand-made measurements with hand-computed MFU and ratios.
// The JSON keys are scripts/perf/bench.py's contract, so they are checked literally here.
#include <gtest/gtest.h>

#include "xsa/report/bench_tables.h"

namespace xsa::report {
namespace {

BenchResults hand_made() {
  BenchResults r;
  r.vocab = 512;
  r.torch_version = "1.13.1";
  r.cpu = {"Test CPU", {"avx2"}, {"avx512_bf16"}, 2, false};
  r.gemm.shapes = {{"qkv", 40.0, 70.0}, {"mlp_fc", 50.0, 65.0}};  // peaks: 50 at 1 thread, 70 at 2
  r.flops_per_token = 1e6;
  r.timed_steps = 12;
  // SA 100 ms, XSA 104 ms for 4096 tokens: 40,960 and 39,384.6 tok/s.
  r.steps = {{"sa", 40, 50, 10, 100, 40960}, {"xsa", 42, 51, 11, 104, 4096 / 0.104}};
  r.by_seq_len = {{512, 8, 128, 200.0, 210.0, 0.0, 0.0}};
  r.by_d_model = {{128, 32, 256, 80.0, 84.0, 2e6, 10000.0}};
  return r;
}

TEST(BenchTables, PeakIsTheBestShapePerThreadCount) {
  const BenchResults r = hand_made();
  EXPECT_DOUBLE_EQ(r.gemm.peak_gflops(1), 50.0);
  EXPECT_DOUBLE_EQ(r.gemm.peak_gflops(2), 70.0);
  const Table t = gemm_table(r);
  ASSERT_EQ(t.rows.size(), 3u);  // two shapes and the peak
  EXPECT_EQ(std::get<std::string>(t.rows[2][t.column("shape")]), "**peak**");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[2][t.column("fp32_2_threads")]), 70.0);
  EXPECT_THROW(t.column("bf16_1_thread"), std::out_of_range);  // no bf16 measured, no bf16 columns
}

TEST(BenchTables, StepTableHasMfuAgainstTheOneCorePeakAndTheRatioToSa) {
  const BenchResults r = hand_made();
  const Table t = steps_table(r);
  ASSERT_EQ(t.rows.size(), 2u);
  // MFU = 1e6 FLOP/token × 40,960 tok/s / 50 GFLOP/s = 81.92 %.
  EXPECT_NEAR(std::get<double>(t.rows[0][t.column("mfu_pct")]), 81.92, 1e-9);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.column("over_sa")]), 1.0);
  EXPECT_NEAR(std::get<double>(t.rows[1][t.column("over_sa")]), 1.04, 1e-12);
  EXPECT_NEAR(r.xsa_over_sa_step_ratio(), 1.04, 1e-12);
  const std::string md = render_markdown(Report{{t}});
  EXPECT_NE(md.find("median of 12 steps"), std::string::npos) << md;
  EXPECT_NE(md.find("| sa | 40.0 | 50.0 | 10.0 | 100.0 | 1.000 | 40960 | 81.9 |"), std::string::npos) << md;
}

TEST(BenchTables, ScalingTablesComputeRatiosAndWidthMfu) {
  const BenchResults r = hand_made();
  const Table seq = by_seq_len_table(r);
  EXPECT_NEAR(std::get<double>(seq.rows[0][seq.column("xsa_over_sa")]), 1.05, 1e-12);
  EXPECT_EQ(std::get<std::int64_t>(seq.rows[0][seq.column("seq_len")]), 512);
  const Table width = by_d_model_table(r);
  // 2e6 FLOP/token × 10,000 tok/s / 50 GFLOP/s = 40 %.
  EXPECT_NEAR(std::get<double>(width.rows[0][width.column("sa_mfu_pct")]), 40.0, 1e-9);
}

TEST(BenchTables, FlashKernelTableHasGflopsOfTheCausalHalfAndTheSpeedupOverBaseline) {
  BenchResults r = hand_made();
  r.flash_kernels = {{"baseline", 2048, 32, 10.0, 20.0}, {"avx2", 2048, 32, 8.0, 16.0}};
  const Table t = flash_kernels_table(r);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(t.rows[1][t.column("isa")]), "avx2");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.column("speedup")]), 1.0);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1][t.column("speedup")]), 1.25);  // 30 ms over 24 ms
  // 7 · 32 · 2048² = 939,524,096 FLOPs in 30 ms: 31.317 GFLOP/s.
  EXPECT_NEAR(std::get<double>(t.rows[0][t.column("gflops")]), 939524096.0 / 30e6, 1e-9);
  EXPECT_DOUBLE_EQ(flash_kernel_flops(2048, 32), 939524096.0);
  const nlohmann::json j = bench_results_json(r);
  const auto& k = j.at("flash_kernels").at(1);
  EXPECT_EQ(k.at("isa"), "avx2");
  EXPECT_EQ(k.at("seq_len"), 2048);
  EXPECT_EQ(k.at("d_head"), 32);
  EXPECT_DOUBLE_EQ(k.at("forward_ms").get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(k.at("backward_ms").get<double>(), 16.0);
}

TEST(BenchTables, JsonHasTheKeysBenchPyReads) {
  BenchResults r = hand_made();
  r.gemm_bf16 = GemmRates{{{"qkv", 100.0, 180.0}, {"mlp_fc", 120.0, 150.0}}};
  r.steps_bf16 = {{"sa", 20, 25, 5, 50, 81920}, {"xsa", 21, 26, 5, 52, 4096 / 0.052}};
  const nlohmann::json j = bench_results_json(r);
  EXPECT_EQ(j.at("cpu").at("model"), "Test CPU");
  EXPECT_EQ(j.at("cpu").at("bf16_native"), false);
  EXPECT_EQ(j.at("cpu").at("cores"), 2);
  EXPECT_DOUBLE_EQ(j.at("gemm").at("1").at("peak_gflops").get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j.at("gemm").at("2").at("shapes").at("qkv").get<double>(), 70.0);
  EXPECT_DOUBLE_EQ(j.at("gemm_bf16").at("2").at("peak_gflops").get<double>(), 180.0);
  EXPECT_DOUBLE_EQ(j.at("flops_per_token").get<double>(), 1e6);
  EXPECT_NEAR(j.at("xsa_over_sa_step_ratio").get<double>(), 1.04, 1e-12);
  const auto& sa = j.at("steps").at(0);
  for (const char* key :
       {"variant", "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "tokens_per_s", "mfu"})
    EXPECT_TRUE(sa.contains(key)) << key;
  EXPECT_NEAR(sa.at("mfu").get<double>(), 0.8192, 1e-12);
  EXPECT_NEAR(j.at("steps_bf16").at(0).at("speedup_vs_fp32").get<double>(), 2.0, 1e-12);
  EXPECT_EQ(j.at("bf16_emulated"), false);
  EXPECT_EQ(j.at("by_seq_len").at(0).at("batch_size"), 8);
  EXPECT_NEAR(j.at("by_d_model").at(0).at("sa_mfu").get<double>(), 0.4, 1e-12);
}

TEST(BenchTables, QuickRunsHaveNoScalingOrBf16Keys) {
  BenchResults r = hand_made();
  r.by_seq_len.clear();
  r.by_d_model.clear();
  const nlohmann::json j = bench_results_json(r);
  EXPECT_FALSE(j.contains("by_seq_len"));
  EXPECT_FALSE(j.contains("steps_bf16"));
  EXPECT_FALSE(j.contains("gemm_bf16"));
  EXPECT_FALSE(j.contains("flash_kernels"));
}

}  // namespace
}  // namespace xsa::report
