// xsa-bench: where a training step's time goes, on this machine, in one run.
//   - the CPU (model name, matmul-relevant flags: is there native bf16?);
//   - sgemm throughput through LibTorch at the model's matrix sizes, 1 and 2 threads (the "peak"), and
//     the bf16 matmul throughput where the CPU has native bf16 (or with --bf16);
//   - per-variant step time split into forward+loss / backward / optimizer, and the XSA/SA ratio, in
//     fp32 and (native bf16 or --bf16) in bf16 mixed precision;
//   - the fused attention kernel alone in each instruction set it is compiled for (baseline, AVX2);
//   - step time as sequence length and width grow;
//   - model FLOPs per token (nanoGPT: 6N + 12·L·H·Q·T) and MFU against the measured peak.
// Synthetic token ids (speed does not depend on them), so it needs no prepared data.
// scripts/bench.sh combines this with xsa-train and the PyTorch reference. The measuring is
// xsa/train/benchmark.h, the records and tables xsa/report/bench_tables.h; this file only sequences them.
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/config/resources.h"
#include "xsa/model/precision.h"
#include "xsa/report/bench_tables.h"
#include "xsa/train/benchmark.h"
#include "xsa/train/ranks.h"
#include "xsa/train/threads.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/fs.h"
#include "xsa/util/local_ranks.h"

namespace {

using json = nlohmann::json;

struct BenchOptions {
  std::string config_path = "configs/default.yaml";
  bool config_given = false;  // --config on the command line (--allreduce-mb reads a config only then)
  std::vector<std::string> overrides;
  int steps = 12;
  int warmup = 3;
  int vocab = 4096;
  bool quick = false;       // skip the scaling sweeps
  bool bf16 = false;        // measure bf16 even without native bf16 (emulated: slow)
  bool flops_only = false;  // print the config's model FLOPs per token and stop (scripts/perf/bench.py's MFU)
  std::string json_path;
  std::string profile_path;  // chrome trace of a few SA steps (LibTorch's profiler)
  double allreduce_mb = 0;  // > 0: only the all-reduce of a buffer this size over the ranks (MB = 10^6 bytes)
  int ranks = 0;            // --ranks N: start N local ranks for --allreduce-mb
  int repeats = 10;
  std::vector<std::string> argv;  // the command line, for the ranks --ranks starts
};

void setup_bench_command(CLI::App& app, BenchOptions& opt) {
  app.description("Measure sgemm peak, step-time breakdown, XSA overhead, scaling and MFU of the xsa model.");
  app.add_option("--config,-c", opt.config_path, "experiment config whose model/batch to measure")
      ->each([&opt](const std::string&) { opt.config_given = true; })
      ->capture_default_str();
  app.add_option("--set", opt.overrides, "override a config key (repeatable)");
  app.add_option("--steps", opt.steps, "timed steps per measurement")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--warmup", opt.warmup, "untimed steps first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--vocab", opt.vocab, "vocabulary size")->capture_default_str()->check(CLI::Range(8, 65536));
  app.add_flag("--quick", opt.quick, "skip the sequence-length and width scaling");
  app.add_flag("--bf16", opt.bf16,
               "measure bf16 matmuls and bf16 steps even if the CPU has no native bf16 (emulated, slow)");
  app.add_option("--json", opt.json_path, "also write the measurements to this JSON file");
  app.add_flag(
      "--flops-per-token", opt.flops_only,
      "print the model FLOPs per token of the config (6N + 12·L·H·Q·T) and its parameter count as JSON "
      "and stop");
  app.add_option("--profile", opt.profile_path,
                 "write chrome://tracing profiles of 3 steps to PATH.sa.json and PATH.xsa.json "
                 "(scripts/perf/profile_summary.py sums them)");
  app.add_option(
         "--allreduce-mb", opt.allreduce_mb,
         "only time the all-reduce of a float32 buffer of this many MB (10^6 bytes) over the data-parallel "
         "ranks (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or --ranks N), the path training's gradient "
         "buckets take; rank 0 prints one JSON line")
      ->check(CLI::Range(0.001, 4096.0));
  app.add_option("--ranks", opt.ranks, "with --allreduce-mb: start N ranks on this machine (127.0.0.1)")
      ->check(CLI::Range(2, 1024));
  app.add_option("--repeats", opt.repeats, "with --allreduce-mb: timed all-reduces (after 2 untimed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.set_version_flag("--version", std::string("xsa ") + XSA_VERSION + " (LibTorch " + TORCH_VERSION + ")");
}

void print_table(const xsa::report::Table& table) {
  std::printf("\n%s", xsa::report::render_markdown(xsa::report::Report{{table}}).c_str());
  std::fflush(stdout);
}

std::string join_or_dash(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s.empty() ? std::string("-") : s;
}

// SA and XSA as the sequence length grows at a constant 4096 tokens per step (batch = 4096 / T, so the change
// is attention's T² share, not more tokens), then as the width grows.
void measure_scaling(const xsa::Config& cfg, const BenchOptions& opt, xsa::BenchResults& r) {
  const int scaling_steps = std::max(3, opt.steps / 3);
  for (int T : {64, 128, 256, 512, 1024}) {
    xsa::Config c = cfg;
    c.data.seq_len = T;
    c.train.batch_size = std::max(1, 4096 / T);
    r.by_seq_len.push_back(xsa::measure_sa_xsa(c, opt.vocab, scaling_steps, 1));
  }
  print_table(xsa::report::by_seq_len_table(r));
  for (int d : {64, 128, 256, 512}) {
    xsa::Config c = cfg;
    c.model.d_model = d;
    c.model.d_head = d / c.model.n_head;
    r.by_d_model.push_back(xsa::measure_sa_xsa(c, opt.vocab, scaling_steps, 1));
  }
  print_table(xsa::report::by_d_model_table(r));
}

// --allreduce-mb: one rank's part; rank 0 prints the timing (and writes --json).
int run_allreduce(const BenchOptions& opt, int timeout_s) {
  const xsa::RankInfo ranks = xsa::rank_info_from_environment();
  if (opt.ranks > 0) {
    if (ranks.distributed())
      throw xsa::InputError("--ranks starts ranks itself: unset RANK/WORLD_SIZE first");
    xsa::MemoryEstimate per_rank;  // the buffer, and a LibTorch process
    per_rank.process = xsa::estimate_memory(xsa::Config{}, 4096).process;
    per_rank.total = per_rank.process + opt.allreduce_mb * 1e6;
    xsa::check_ranks_fit(opt.ranks, per_rank, 1, xsa::machine_limits());
    return xsa::run_local_ranks(xsa::rank_command(opt.argv), opt.ranks, "xsa-bench");
  }
  if (!ranks.distributed())
    throw xsa::InputError(
        "--allreduce-mb needs ranks: --ranks N, or RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT");
  const auto bytes = static_cast<std::int64_t>(opt.allreduce_mb * 1e6) / 4 * 4;
  const auto t = xsa::measure_allreduce(ranks, timeout_s, bytes, opt.repeats, 2);
  if (ranks.rank != 0) return xsa::kExitOk;
  const json j = {{"bytes", t.bytes},         {"world_size", t.world_size},
                  {"ms_median", t.ms_median}, {"samples_ms", t.samples_ms},
                  {"MB_per_s", t.mb_per_s},   {"torch_version", TORCH_VERSION}};
  std::printf("%s\n", j.dump().c_str());
  if (!opt.json_path.empty()) xsa::write_file_atomic(opt.json_path, j.dump(1) + "\n");
  return xsa::kExitOk;
}

int run_bench(const BenchOptions& opt) {
  if (opt.allreduce_mb == 0 && opt.ranks > 0) throw xsa::InputError("--ranks goes with --allreduce-mb");
  if (opt.allreduce_mb > 0) {  // runtime.dist_timeout_s is all it takes from a config
    const xsa::Config cfg =
        opt.config_given ? xsa::load_config(opt.config_path, opt.overrides) : xsa::Config{};
    return run_allreduce(opt, cfg.runtime.dist_timeout_s);
  }
  const xsa::Config cfg = xsa::load_config(opt.config_path, opt.overrides);
  if (cfg.runtime.device != xsa::DeviceKind::kCpu)
    throw xsa::InputError(
        std::string("runtime.device: ") + choice_name(cfg.runtime.device) +
        ": xsa-bench measures the CPU; allowed: cpu (docs/performance.md \"A first GPU run\")");
  if (cfg.data.doc_mask)  // its batches are random tokens: no documents to mask, so nothing it times would be
                          // masked
    throw xsa::InputError(
        "data.doc_mask: true: xsa-bench times plain causal attention on random tokens, which hold no "
        "documents; "
        "a masked step's time is in xsa-train's results.json (runs[].timing)");
  // The measurements and the profile are written at the end: never over the config they measured.
  xsa::require_output_apart({opt.json_path, "--json"}, {{opt.config_path, "--config"}});
  xsa::require_output_apart({opt.profile_path, "--profile"}, {{opt.config_path, "--config"}});
  const auto& m = cfg.model;
  if (opt.flops_only) {
    // parameters: every trained weight (the data-parallel all-reduce moves one fp32 gradient of each).
    std::printf("%s\n", json{{"flops_per_token", xsa::model_flops_per_token(m, opt.vocab, cfg.data.seq_len)},
                             {"parameters", xsa::estimate_memory(cfg, opt.vocab).parameters / 4.0}}
                            .dump()
                            .c_str());
    return 0;
  }
  xsa::keep_large_allocations_in_heap();
  xsa::BenchResults r;
  r.config = xsa::config_to_json(cfg);
  r.vocab = opt.vocab;
  r.torch_version = TORCH_VERSION;
  r.flops_per_token = xsa::model_flops_per_token(m, opt.vocab, cfg.data.seq_len);
  r.timed_steps = opt.steps;
  std::printf(
      "xsa-bench: %d layers, d_model %d, %d heads × %d, vocab %d, batch %d × %d tokens, attention %s\n",
      m.n_layer, m.d_model, m.n_head, m.d_head, opt.vocab, cfg.train.batch_size, cfg.data.seq_len,
      choice_name(cfg.attention.impl));

  const auto cpu = xsa::describe_cpu(xsa::read_cpuinfo());
  const auto& bf16_support = xsa::cpu_bf16_support();
  r.cpu = {cpu.model, cpu.flags_present, cpu.flags_absent, std::thread::hardware_concurrency(),
           bf16_support.native()};
  std::printf("CPU: %s, %u cores; flags: %s; absent: %s; native bf16: %s\n", cpu.model.c_str(), r.cpu.cores,
              join_or_dash(cpu.flags_present).c_str(), join_or_dash(cpu.flags_absent).c_str(),
              bf16_support.native() ? "yes" : "no");
  // bf16 is measured where the CPU has it natively; elsewhere only on request (it is emulated there,
  // ~100x slower than fp32, so it gets a smaller budget).
  const bool measure_bf16 = bf16_support.native() || opt.bf16;
  r.bf16_emulated = !bf16_support.native();

  r.gemm = xsa::measure_gemm(cfg, opt.vocab, at::kFloat, 2e9);
  if (measure_bf16)
    r.gemm_bf16 = xsa::measure_gemm(cfg, opt.vocab, at::kBFloat16, bf16_support.native() ? 2e9 : 1e8);
  print_table(xsa::report::gemm_table(r));

  xsa::apply_thread_policy(1);
  const std::vector<xsa::VariantSpec> sa_xsa = {xsa::fixed_lambda_variant(0), xsa::fixed_lambda_variant(1)};
  if (!opt.profile_path.empty()) {
    for (const auto& variant : sa_xsa)
      xsa::profile_steps(cfg, variant, opt.vocab, 3, opt.profile_path + "." + variant.name() + ".json");
  }
  r.steps = xsa::measure_steps(cfg, sa_xsa, opt.vocab, opt.steps, opt.warmup);
  print_table(xsa::report::steps_table(r));
  std::printf("XSA / SA step time: %.3f   model FLOPs per token: %.2f M\n", r.xsa_over_sa_step_ratio(),
              r.flops_per_token / 1e6);

  if (measure_bf16) {
    // bf16 mixed precision, same models and batches; MFU stays against the fp32 peak (the figure the targets
    // use), the bf16 peak is in the matmul table.
    const int bf16_steps = bf16_support.native() ? opt.steps : std::max(2, opt.steps / 4);
    const int bf16_warmup = bf16_support.native() ? opt.warmup : 1;
    r.steps_bf16 = xsa::measure_steps(cfg, sa_xsa, opt.vocab, bf16_steps, bf16_warmup, xsa::Precision::kBf16);
    print_table(xsa::report::steps_bf16_table(r));
  }

  // The fused kernel alone per instruction set: what the AVX2 compilation buys on this CPU, at a short, a
  // long and the longest benchmarked length (cheap: about a second per length).
  r.flash_kernels = xsa::measure_flash_kernels(m.d_head, {128, 2048, 8192});
  print_table(xsa::report::flash_kernels_table(r));

  if (!opt.quick) measure_scaling(cfg, opt, r);
  if (!opt.json_path.empty())
    xsa::write_file_atomic(opt.json_path, xsa::bench_results_json(r).dump(1) + "\n");
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = xsa::rank_program_name("xsa-bench");
  return xsa::cli_main<BenchOptions>(argc, argv, program.c_str(), setup_bench_command,
                                     [&](BenchOptions& opt) {
                                       opt.argv.assign(argv, argv + argc);
                                       return run_bench(opt);
                                     });
}
