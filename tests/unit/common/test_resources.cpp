// Memory estimate of a config: hand-computed parameter counts, how each term scales, the refusal line and
// MemAvailable parsing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "xsa/config/resources.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

TEST(MemoryEstimate, ParametersCountedByHand) {
  Config cfg;  // 2 layers, d_model 128, 4 heads × 32, mlp 4, tied, RoPE, embed norm
  MemoryEstimate e = estimate_memory(cfg, 4096);
  // wte 4096·128 + ln_emb 256 + ln_f 256; per layer: 2 norms 512, qkv 128·384, proj 128·128, mlp 2·4·128·128,
  // 4 (per-head variant parameters, counted for every layer to stay an upper bound).
  const double n = 4096.0 * 128 + 256 + 256 + 2 * (512 + 128.0 * 384 + 128.0 * 128 + 2 * 4 * 128.0 * 128 + 4);
  EXPECT_DOUBLE_EQ(e.parameters, 4 * n);
  EXPECT_DOUBLE_EQ(e.gradients, 4 * n);
  EXPECT_DOUBLE_EQ(e.optimizer, 8 * n);
  EXPECT_EQ(e.concurrent_runs, 2);
  EXPECT_DOUBLE_EQ(e.total, e.process + 2 * e.per_run);
}

TEST(MemoryEstimate, ActivationsGrowWithBatchAndQuadraticallyWithExplicitAttention) {
  Config cfg;
  cfg.attention.impl = AttentionImpl::kExplicit;
  const double base = estimate_memory(cfg, 4096).activations;
  Config wide_batch = cfg;
  wide_batch.train.batch_size *= 2;
  // Everything per token doubles; only the output layer's fixed chunk buffers and weight gradient do not.
  const double fixed = 4.0 * (3 * 512.0 * 4096 + 4096.0 * 128);
  EXPECT_NEAR(estimate_memory(wide_batch, 4096).activations - fixed, 2 * (base - fixed), 1.0);
  // The scores term: 3 · B·H·T·T floats per layer.
  Config longer = cfg;
  longer.data.seq_len *= 2;
  const double scores_before = 4.0 * 2 * 3 * 32.0 * 4 * 128 * 128;
  EXPECT_GT(estimate_memory(longer, 4096).activations - base, 3 * scores_before);
}

TEST(MemoryEstimate, FusedAttentionActivationsGrowLinearlyWithLength) {
  Config cfg;
  ASSERT_EQ(cfg.attention.impl, AttentionImpl::kFused);          // the default
  const double fixed = 4.0 * (3 * 512.0 * 4096 + 4096.0 * 128);  // the output layer's, independent of T
  const double base = estimate_memory(cfg, 4096).activations;
  Config longer = cfg;
  longer.data.seq_len *= 16;
  longer.train.batch_size /= 16;  // the same tokens per step: the same activations, no T² term
  EXPECT_NEAR(estimate_memory(longer, 4096).activations, base, 1.0);
  Config explicit_cfg = longer;
  explicit_cfg.attention.impl =
      AttentionImpl::kExplicit;  // 3·B·H·T·T floats per layer more, less the fused lse
  const double B = 2, H = 4, T = 2048, L = 2;
  EXPECT_NEAR(estimate_memory(explicit_cfg, 4096).activations - base,
              4.0 * L * (3 * B * H * T * T - B * H * T), 1.0);
  EXPECT_GT(base, fixed);
}

TEST(ModelFlops, HandCountedForTheDefaultModel) {
  // 2 layers × (q, k, v, o: 4·128·128, MLP: 2·128·512) + the tied 4096 × 128 embedding, 6 FLOPs each per
  // token, plus attention 12 · 2 layers · 4 heads · 32 · T.
  const double n = 2 * (4 * 128.0 * 128 + 2 * 128.0 * 512) + 4096.0 * 128;
  EXPECT_DOUBLE_EQ(model_flops_per_token(Config{}.model, 4096, 128), 6 * n + 12 * 2 * 4 * 32 * 128.0);
  EXPECT_DOUBLE_EQ(
      model_flops_per_token(Config{}.model, 4096, 2048) - model_flops_per_token(Config{}.model, 4096, 128),
      12 * 2 * 128 * (2048.0 - 128));
}

TEST(MemoryEstimate, OneWorkerPerVariantAtMost) {
  Config cfg;
  cfg.runtime.workers = 8;  // two variants: two runs at once, not eight
  EXPECT_EQ(estimate_memory(cfg, 4096).concurrent_runs, 2);
  cfg.runtime.workers = 1;
  EXPECT_EQ(estimate_memory(cfg, 4096).concurrent_runs, 1);
}

TEST(MemoryEstimate, AbsurdConfigsAreRefusedWithOneLine) {
  Config cfg;
  cfg.model.d_model = 1048576;
  MemoryEstimate e = estimate_memory(cfg, 4096);
  EXPECT_GT(e.total, 1e12);  // terabytes, no overflow
  try {
    check_memory_fits(e, 20.0 * (1 << 30), "configs/x.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& err) {
    const std::string what = err.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_EQ(what.rfind("configs/x.yaml: this config needs an estimated ", 0), 0u) << what;
    EXPECT_NE(what.find("20.0 GiB available (MemAvailable)"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(check_memory_fits(estimate_memory(Config{}, 4096), 20.0 * (1 << 30), "c"));
}

TEST(MemoryEstimate, DefaultConfigNeedsHundredsOfMegabytes) {
  // Measured peak RSS of the default paired run (2 workers): ~700 MiB. The estimate must be of that order.
  const double mib = estimate_memory(Config{}, 4096).total / (1 << 20);
  EXPECT_GT(mib, 350);
  EXPECT_LT(mib, 1400);
}

TEST(MemoryEstimate, ReadsMemAvailable) {
  auto dir = std::filesystem::path(XSA_BINARY_DIR) / "test_tmp";
  std::filesystem::create_directories(dir);
  auto path = (dir / "meminfo").string();
  std::ofstream(path) << "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   2048 kB\n";
  auto bytes = available_memory_bytes(path);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_DOUBLE_EQ(*bytes, 2048.0 * 1024);
  std::ofstream(path) << "MemTotal: 1 kB\n";
  EXPECT_FALSE(available_memory_bytes(path).has_value());
  EXPECT_FALSE(available_memory_bytes((dir / "absent").string()).has_value());
  EXPECT_TRUE(available_memory_bytes().has_value());  // this machine's /proc/meminfo
}

TEST(MemoryEstimate, FormatsBytes) {
  EXPECT_EQ(format_bytes(612.0 * (1 << 20)), "612 MiB");
  EXPECT_EQ(format_bytes(3.5 * (1 << 30)), "3.5 GiB");
  EXPECT_EQ(format_bytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.0 TiB");
}

}  // namespace
}  // namespace xsa

namespace xsa {
namespace {

// --ranks N against this machine's limits, before anything forks (hand-made limits and estimates).
TEST(MachineLimits, RanksAreBoundedByCoresMemoryAndOpenFiles) {
  MemoryEstimate per_rank;
  per_rank.total = 1e9;  // 1 GB a rank
  MachineLimits m;
  m.cores = 4;
  m.open_files = 1024;
  m.available_memory = 3.5e9;
  EXPECT_NO_THROW(check_ranks_fit(3, per_rank, 3, m));
  auto message = [&](int ranks, const MachineLimits& limits) {
    try {
      check_ranks_fit(ranks, per_rank, 3, limits);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(5, m),
            "--ranks 5: more ranks than the 4 cores this process may use (each rank trains on at least one); "
            "expected 1..4");
  // 4 ranks fit the cores but 4 GB > 3.5 GB.
  EXPECT_EQ(message(4, m).rfind("--ranks 4: the ranks need an estimated 3.7 GiB (4 × 954 MiB)", 0), 0u)
      << message(4, m);
  m.available_memory.reset();  // the kernel does not say: only cores and files bound it
  EXPECT_EQ(message(4, m), "");
  // Files: 64 + 2 × (N − 1) × 3 groups per rank; N = 100 needs 658, over a limit of 600.
  m.cores = 1000;
  m.open_files = 600;
  EXPECT_EQ(message(100, m),
            "--ranks 100: needs about 658 open files per process but the limit is 600 (ulimit -n); use fewer "
            "ranks or raise the limit");
  EXPECT_EQ(message(90, m), "");  // 64 + 2 × 89 × 3 = 598
}

TEST(MachineLimits, WorkersAreBoundedByCores) {
  MachineLimits m;
  m.cores = 2;
  EXPECT_NO_THROW(check_workers_fit(2, m));
  EXPECT_THROW(check_workers_fit(3, m), InputError);
  // The machine's own limits are read: at least one core, a positive file limit.
  const MachineLimits here = machine_limits();
  EXPECT_GE(here.cores, 1);
  EXPECT_GT(here.open_files, 0);
}

}  // namespace
}  // namespace xsa
