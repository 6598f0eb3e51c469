#include "xsa/train/trainer.h"

#include <sys/resource.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "xsa/data/sampler.h"
#include "xsa/model/precision.h"
#include "xsa/records/comparison.h"
#include "xsa/train/checkpoint.h"
#include "xsa/train/distributed.h"
#include "xsa/train/evaluation.h"
#include "xsa/train/threads.h"
#include "xsa/train/variant_run.h"
#include "xsa/util/blas_core.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/progress.h"
#include "xsa/util/sha256.h"
#include "xsa/util/timing.h"

namespace xsa {

using json = nlohmann::json;
using trainer_detail::Aborted;
using trainer_detail::LogWriter;
using trainer_detail::Shared;
using trainer_detail::StoppedAtStepBoundary;
using trainer_detail::VariantRun;

namespace {

// Keeps only log lines at or before the step each run resumes from, so a resumed log has no duplicates.
void trim_log_for_resume(const std::string& path, const std::map<std::string, int>& resume_step) {
  if (!path_exists(path)) return;
  std::istringstream in(read_file(path));
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;  // a line cut by a kill
    auto it = resume_step.find(j.value("run", ""));
    int limit = it == resume_step.end() ? 0 : it->second;
    if (j.value("step", 0) <= limit) kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

double peak_rss_mib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Each variant against the first, paired over the same validation windows (compare_runs).
std::vector<Comparison> compare_to_baseline(const std::vector<std::unique_ptr<VariantRun>>& runs) {
  std::vector<Comparison> out;
  const VariantRun& base = *runs.at(0);
  for (size_t i = 1; i < runs.size(); ++i)
    out.push_back(compare_runs(base.result(), runs[i]->result(), &base.final_window_losses(),
                               &runs[i]->final_window_losses()));
  return out;
}

// The output folder, touched only once everything is validated: created; on a start over (--force) a finished
// run's results, checkpoints and events removed, since they must not outlive its config and log; config.yaml
// written; the log trimmed to the steps each run resumes from, or emptied.
void prepare_output_folder(const ExperimentOptions& options, const std::map<std::string, int>& resume_step,
                           const std::string& log_path) {
  make_directories(options.out_dir);
  if (!options.resume) {
    std::filesystem::remove(options.out_dir + "/results.json");
    std::filesystem::remove_all(options.out_dir + "/checkpoints");
    std::filesystem::remove_all(options.out_dir + "/tensorboard");
  }
  write_file_atomic(options.out_dir + "/config.yaml", options.config_yaml);
  if (options.resume) {
    trim_log_for_resume(log_path, resume_step);
  } else if (path_exists(log_path)) {
    write_file_atomic(log_path, "");
  }
}

// Runs the variants, runtime.workers at a time, each worker taking the next unstarted one. Each worker sets
// the thread policy for itself (OpenMP's thread count is per calling thread). The first error of any run
// aborts the others and is returned for the caller to rethrow; `stopped` says SIGTERM stopped the runs at a
// step boundary (every run checkpointed).
struct VariantsOutcome {
  std::exception_ptr first_error;
  bool stopped = false;
};
VariantsOutcome run_variants(std::vector<std::unique_ptr<VariantRun>>& runs, const Config& cfg,
                             std::atomic<bool>& abort) {
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  std::exception_ptr first_error;
  std::atomic<bool> stopped{false};
  auto worker = [&]() {
    apply_thread_policy(cfg.runtime.threads);
    for (size_t i = next++; i < runs.size(); i = next++) {
      try {
        runs[i]->run();
      } catch (const Aborted&) {
        return;
      } catch (const StoppedAtStepBoundary&) {
        stopped = true;  // the other runs see the same stop request and checkpoint themselves
        continue;
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!first_error) first_error = std::current_exception();
        abort = true;
        return;
      }
    }
  };
  int n_workers = std::min<int>(cfg.runtime.workers, static_cast<int>(runs.size()));
  if (n_workers <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (int w = 0; w < n_workers; ++w) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }
  return {first_error, stopped.load()};
}

// results.json's document: the runs' records, their comparisons with the baseline, and what ran where.
ExperimentResult assemble_result(const Config& cfg, const TokenDataset& data,
                                 const std::vector<std::unique_ptr<VariantRun>>& runs,
                                 const PrecisionChoice& precision, double wall_s, int world) {
  ExperimentResult result;
  result.name = cfg.name;
  result.config = cfg;
  result.version = VersionInfo{XSA_VERSION, TORCH_VERSION};
  auto threads = current_thread_info();
  Environment env;
  env.threads = threads.torch_threads;
  env.blas = threads.blas;
  env.blas_threads = threads.blas_threads;
  env.workers = cfg.runtime.workers;
  env.host_cores = std::thread::hardware_concurrency();
  env.peak_rss_mib = peak_rss_mib();
  env.wall_s = wall_s;
  env.precision = precision_name(precision.precision);
  env.precision_requested = choice_name(precision.requested);
  const CpuBf16Support& cpu = cpu_bf16_support();
  env.cpu_bf16 = Environment::CpuBf16{cpu.avx512_bf16, cpu.amx_bf16, cpu.native()};
  env.world_size = world;
  if (world > 1) env.backend = "gloo";
  result.environment = env;
  DataInfo info;
  info.dir = data.dir;
  info.vocab_size = data.meta.vocab_size;
  info.train_tokens = static_cast<std::int64_t>(data.meta.train_tokens);
  info.val_tokens = static_cast<std::int64_t>(data.meta.val_tokens);
  info.tokenizer_sha256 = data.meta.tokenizer_sha256;
  result.data = info;
  for (const auto& r : runs) result.runs.push_back(r->result());
  result.comparisons = compare_to_baseline(runs);
  return result;
}

// Data-parallel ranks, before step 1: every rank must train the same config on the same data from the same
// checkpoints (hashes compared through the store); then each run gets its own process group.
void connect_runs(Distributed& dist, const json& identity, const TokenDataset& data,
                  const std::map<std::string, int>& resume_step,
                  std::vector<std::unique_ptr<VariantRun>>& runs, const std::vector<std::string>& names) {
  json config = identity.at("config");
  config["data"].erase("dir");  // ranks may read node-local copies: their contents are compared next
  dist.check_same(
      "config", sha256_hex(config.dump() + identity.at("threads").dump() + identity.at("precision").dump()));
  Sha256 tokens;
  for (const TokenFile* file : {data.train.get(), data.val.get()})
    tokens.update(file->data(), 2 * file->size());
  dist.check_same("data", tokens.hex_digest());
  dist.check_same("checkpoint steps", sha256_hex(json(resume_step).dump()));
  for (size_t i = 0; i < runs.size(); ++i) runs[i]->set_group(dist.group(names[i]));
}

}  // namespace

void check_data_fits(const Config& cfg, const TokenDataset& data) {
  const int T = cfg.data.seq_len;
  if (cfg.data.doc_mask && (data.meta.bos_id < 0 || data.meta.bos_id >= data.meta.vocab_size)) {
    throw InputError(data.dir + "/meta.json: bos_id " + std::to_string(data.meta.bos_id) +
                     " marks no document start (0 <= bos_id < vocab_size " +
                     std::to_string(data.meta.vocab_size) + "), which data.doc_mask: true needs");
  }
  for (const TokenFile* file : {data.train.get(), data.val.get()}) {
    if (count_windows(file->size(), T) < 1) {
      throw InputError(file->path() + ": " + std::to_string(file->size()) +
                       " tokens cannot hold one window of data.seq_len+1 = " + std::to_string(T + 1) +
                       " tokens");
    }
  }
}

ExperimentResult run_paired_experiment(const Config& cfg, const TokenDataset& data,
                                       const PiecesDecoder& decoder, const ExperimentOptions& options) {
  check_data_fits(cfg, data);
  if (decoder.vocab_size() != data.meta.vocab_size) {
    throw InputError(data.dir + "/pieces.json: " + std::to_string(decoder.vocab_size()) +
                     " pieces, expected vocab_size " + std::to_string(data.meta.vocab_size) +
                     " from meta.json");
  }
  apply_thread_policy(cfg.runtime.threads);
  keep_large_allocations_in_heap();
  auto wall_start = Clock::now();
  const RankInfo& ranks = options.ranks;
  std::unique_ptr<Distributed> dist;
  if (ranks.distributed()) dist = Distributed::connect(ranks, cfg.runtime.dist_timeout_s);

  std::vector<std::string> names;
  for (const auto& v : cfg.attention.variants) names.push_back(v.name());
  ProgressBoard board(names, cfg.train.steps, cfg.train.log_interval, options.quiet);
  std::atomic<bool> abort{false};
  std::string log_path = options.out_dir + "/log.jsonl";

  const int B = cfg.train.batch_size, T = cfg.data.seq_len;
  auto eval_starts =
      evenly_spaced_windows(data.val->size(), T, static_cast<std::uint64_t>(cfg.eval.batches) * B);
  auto bias_starts =
      evenly_spaced_windows(data.val->size(), T, static_cast<std::uint64_t>(cfg.metrics.bias_batches) * B);

  const PrecisionChoice precision = resolve_precision(cfg.runtime.precision, cpu_bf16_support());

  // Build every model (and draw its init) here, before any worker thread exists.
  Shared shared(cfg, data, decoder, board, abort);
  shared.out_dir = options.out_dir;
  shared.identity = checkpoint_identity(cfg, data, precision_name(precision.precision));
  shared.eval_starts = std::move(eval_starts);
  shared.bias_starts = std::move(bias_starts);
  shared.precision = precision.precision;
  shared.resumed = options.resume;
  shared.rank = ranks.rank;
  shared.world = ranks.world_size;
  std::vector<std::unique_ptr<VariantRun>> runs;
  std::map<std::string, int> resume_step;
  for (size_t i = 0; i < cfg.attention.variants.size(); ++i) {
    runs.push_back(std::make_unique<VariantRun>(i, cfg.attention.variants[i], shared));
    runs.back()->build();
    if (options.resume) {
      int step = runs.back()->load_checkpoint_if_any();
      resume_step[names[i]] = std::max(step, 0);
      if (step >= 0) board.message("resuming '" + names[i] + "' from step " + std::to_string(step));
    }
  }
  if (dist) connect_runs(*dist, shared.identity, data, resume_step, runs, names);
  // Everything is validated (config, data, checkpoints): only now is the output folder touched (by rank 0).
  std::unique_ptr<LogWriter> log;
  if (ranks.rank == 0) {
    prepare_output_folder(options, resume_step, log_path);
    log = std::make_unique<LogWriter>(log_path);
  }
  shared.log = log.get();
  // The advice on how this machine computes comes once training starts, so that input refused above is
  // the one line of its error, and from rank 0 only (docs/guide.md "Determinism, threads, concurrency").
  if (ranks.rank == 0) {
    if (!precision.warning.empty())
      std::fprintf(stderr, "xsa-train: warning: %s\n", precision.warning.c_str());
    const std::string blas_warning = generic_blas_core_warning(current_thread_info().blas, read_cpuinfo());
    if (!blas_warning.empty()) std::fprintf(stderr, "xsa-train: warning: %s\n", blas_warning.c_str());
  }

  const VariantsOutcome outcome = run_variants(runs, cfg, abort);
  board.finish();
  if (outcome.first_error) std::rethrow_exception(outcome.first_error);
  if (outcome.stopped) {
    throw Interrupted("stopped by SIGTERM; every run checkpointed at its last completed step (" +
                      options.out_dir + "/checkpoints); continue with --resume");
  }
  return assemble_result(cfg, data, runs, precision, seconds_since(wall_start), options.ranks.world_size);
}

}  // namespace xsa
