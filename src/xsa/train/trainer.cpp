#include "xsa/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <sys/resource.h>
#include <torch/optim/adamw.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "xsa/data/sampler.h"
#include "xsa/model/generate.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"
#include "xsa/records/comparison.h"
#include "xsa/stats/stats.h"
#include "xsa/train/checkpoint.h"
#include "xsa/train/distributed.h"
#include "xsa/train/evaluation.h"
#include "xsa/train/export.h"
#include "xsa/train/schedule.h"
#include "xsa/train/step.h"
#include "xsa/train/threads.h"
#include "xsa/util/blas_core.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/progress.h"
#include "xsa/util/sha256.h"
#include "xsa/util/stop_signal.h"
#include "xsa/util/tensorboard.h"
#include "xsa/util/timing.h"

namespace xsa {

using json = nlohmann::json;

namespace {

// Fault injection for the resume tests: XSA_FAULT_EXIT_AFTER_STEP=N ends the process abruptly (like
// kill -9: no cleanup, no results) right after step N of any run has completed and been checkpointed.
int fault_exit_step() {
  const char* v = std::getenv("XSA_FAULT_EXIT_AFTER_STEP");
  return v != nullptr ? std::atoi(v) : 0;
}

// Thrown inside a run when another run failed: stop quietly, the first failure is what gets reported.
struct Aborted {};
// Thrown inside a run that stopped on SIGTERM after checkpointing its last completed step.
struct StoppedAtStepBoundary {};

// One JSON object per line, flushed as it goes, shared by the concurrent runs.
class LogWriter {
 public:
  explicit LogWriter(const std::string& path) : out_(path, std::ios::app) {
    if (!out_) throw RuntimeFailure(path + ": cannot open for writing");
  }
  void write(const json& line) {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

// Mean and SE over windows; 0 where undefined (one window has no spread), as results.json has always held.
double mean_or_zero(const std::vector<double>& v) {
  return v.empty() ? 0.0 : stats::mean(v);
}
double sem_or_zero(const std::vector<double>& v) {
  return v.size() < 2 ? 0.0 : stats::standard_error(v);
}

// Everything the concurrent runs share (read-only except the log, board and abort flag).
struct Shared {
  const Config& cfg;
  const TokenDataset& data;
  const PiecesDecoder& decoder;
  std::string out_dir;
  json identity;             // what a checkpoint must match to be resumed
  LogWriter* log = nullptr;  // opened once the log has been trimmed for a resume
  ProgressBoard& board;
  std::atomic<bool>& abort;
  std::vector<std::uint64_t> eval_starts;  // fixed validation windows for periodic evaluation
  std::vector<std::uint64_t> bias_starts;  // fixed validation windows for bias metrics
  Precision precision = Precision::kFp32;  // runtime.precision resolved for this CPU
  bool resumed = false;                    // --resume: earlier event files may hold points to drop
  int rank = 0, world = 1;                 // data-parallel ranks: rank 0 alone evaluates and writes
};

// One variant's run: builds its model, runs the step loop, records evaluations, checkpoints and the
// result. The step, evaluation, sampling and checkpoint I/O live in their own modules.
class VariantRun {
 public:
  VariantRun(size_t index, VariantSpec spec, Shared& shared)
      : index_(index), spec_(std::move(spec)), s_(shared) {}

  // Main thread, before any worker starts: the model's construction and initial draws never touch
  // a generator another thread uses.
  void build() {
    const auto& cfg = s_.cfg;
    model_ = Gpt(cfg.model, cfg.attention, spec_, s_.data.meta.vocab_size, cfg.data.seq_len);
    model_->init_weights(at::make_generator<at::CPUGeneratorImpl>(cfg.seed));
    if (!cfg.model.init_from.empty()) init_from_export(model_, cfg, s_.data.meta, spec_);
    optimizer_ = make_adamw(model_, cfg.train, cfg.attention.lambda_lr_scale);
    record_.variant = spec_.name();
    record_.spec = variant_record(spec_, cfg.attention.learned_init);
    record_.layers = resolve_variant(cfg.attention, spec_).layers;  // the layers the model modifies
    record_.label = variant_label(record_.spec, *record_.layers, cfg.attention.lambda_lr_scale);
    record_.seed = cfg.seed;
    record_.init_checksum = model_->weights_checksum();
  }

  void set_group(std::unique_ptr<RankGroup> group) { group_ = std::move(group); }

  std::string checkpoint_path() const { return s_.out_dir + "/checkpoints/" + spec_.name() + ".pt"; }

  // Returns the completed step of the checkpoint that was loaded, or -1.
  int load_checkpoint_if_any() {
    const std::string path = checkpoint_path();
    if (!path_exists(path)) return -1;
    json progress = load_checkpoint(path, model_, *optimizer_, s_.identity);
    try {
      restore_progress(progress);
    } catch (const std::exception& e) {
      throw InputError(path + ": damaged or incompatible checkpoint (" + e.what() +
                       "); use --force to start over");
    }
    return step_;
  }

  // Worker thread.
  void run() {
    if (finished_) return;  // resumed after this run had already finished
    const auto& cfg = s_.cfg;
    const int T = cfg.data.seq_len, B = cfg.train.batch_size, steps = cfg.train.steps;
    auto t_start = Clock::now();
    TrainWindowSampler sampler(s_.data.train->size(), T, batch_order_seed(cfg.seed));

    // Ranks > 1 stop only where all agree: a stop request travels with each step's all-reduce.
    if (!group_ && stop_requested())
      throw StoppedAtStepBoundary{};  // not started (or resumed): nothing to save
    open_event_file();
    if (step_ == 0) record_eval_and_bias(0);
    bool stop_agreed = false;
    const GradientAverager average = [&](std::vector<torch::Tensor>& grads, double loss) {
      std::vector<double> sums = {loss, stop_requested() ? 1.0 : 0.0};
      const auto t_reduce = Clock::now();
      group_->average(grads, sums, "run '" + spec_.name() + "' step " + std::to_string(step_ + 1));
      allreduce_ms_.push_back(1e3 * seconds_since(t_reduce));
      stop_agreed = sums[1] > 0;
      return sums[0] / s_.world;
    };
    const int local_b = B / s_.world;  // this rank's contiguous slice of every global batch
    while (step_ < steps) {
      if (s_.abort.load()) throw Aborted{};
      // SIGTERM (preemption, scancel, time limit): checkpoint this step boundary and stop; --resume
      // continues bit-identically from here.
      if (group_ ? stop_agreed : stop_requested()) {
        save(prior_wall_s_ + seconds_since(t_start));  // even with checkpoint_interval 0: resuming needs it
        throw StoppedAtStepBoundary{};
      }
      auto t0 = Clock::now();
      const double lr = learning_rate(step_, steps, cfg.train.warmup_steps, cfg.train.lr, cfg.train.min_lr);
      auto starts = sampler.batch_starts(step_, B);
      auto batch = make_batch(*s_.data.train, starts.data() + s_.rank * local_b, local_b, T);  // (b, T+1)
      auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);                               // (b, T) each
      StepOutcome outcome =
          train_step(model_, *optimizer_, x, y, lr, cfg.attention.lambda_lr_scale, cfg.train.grad_clip,
                     spec_.name(), step_ + 1, s_.precision, group_ ? &average : nullptr);
      ++step_;
      double ms = 1e3 * seconds_since(t0);
      step_ms_.push_back(ms);
      step_losses_.push_back(outcome.loss);

      if (step_ % cfg.train.log_interval == 0 || step_ == steps) {
        record_.train_loss.push_back({step_, outcome.loss});
        if (s_.log)
          s_.log->write({{"run", spec_.name()},
                         {"step", step_},
                         {"loss", outcome.loss},
                         {"lr", lr},
                         {"grad_norm", outcome.grad_norm},
                         {"ms", ms}});
        // tokens_per_s of this step, from the same numbers log.jsonl holds (B, T and ms).
        write_scalars({{"train/loss", outcome.loss},
                       {"train/lr", lr},
                       {"train/grad_norm", outcome.grad_norm},
                       {"train/tokens_per_s", 1e3 * B * T / ms}});
      }
      s_.board.update(index_, step_, outcome.loss, recent_tokens_per_s());
      if (step_ % cfg.eval.interval == 0 || step_ % cfg.metrics.bias_interval == 0 || step_ == steps) {
        record_eval_and_bias(step_);
      }
      if (step_ == steps) finish(prior_wall_s_ + seconds_since(t_start));
      // checkpoint_interval 0 writes none; otherwise also one at the end, so a resume skips this run.
      const int every = cfg.train.checkpoint_interval;
      if (every > 0 && (step_ % every == 0 || step_ == steps)) save(prior_wall_s_ + seconds_since(t_start));
      if (step_ == fault_exit_step()) std::_Exit(86);
    }
  }

  const RunResult& result() const { return record_; }
  const std::vector<double>& final_window_losses() const { return window_losses_; }

 private:
  // The run's progress as the checkpoint stores it; the lists in results.json's format.
  json progress() const {
    json run = to_json(record_);
    json state = {{"step", step_},       {"eval", run["eval"]},
                  {"bias", run["bias"]}, {"train_loss", run["train_loss"]},
                  {"step_ms", step_ms_}, {"step_losses", step_losses_},
                  {"wall_s", wall_s_},   {"init_checksum", record_.init_checksum}};
    if (finished_) {
      state["result"] = run;
      state["result"]["window_losses"] = window_losses_;  // for the paired SE when resumed
    }
    return state;
  }

  void restore_progress(const json& state) {
    const std::string source = checkpoint_path();
    step_ = state.at("step").get<int>();
    step_ms_ = state.at("step_ms").get<std::vector<double>>();
    step_losses_ = state.at("step_losses").get<std::vector<double>>();
    prior_wall_s_ = state.at("wall_s").get<double>();
    if (state.contains("result")) {
      record_ = parse_run_result(state.at("result"), source);
      window_losses_ = state.at("result").at("window_losses").get<std::vector<double>>();
      finished_ = true;
      return;
    }
    RunCurves curves = parse_run_curves(state, source);
    record_.eval = std::move(curves.eval);
    record_.bias = std::move(curves.bias);
    record_.train_loss = std::move(curves.train_loss);
    record_.init_checksum = state.at("init_checksum").get<std::string>();
  }

  double recent_tokens_per_s() const {
    size_t n = std::min<size_t>(step_ms_.size(), 20);
    double ms = 0;
    for (size_t i = step_ms_.size() - n; i < step_ms_.size(); ++i) ms += step_ms_[i];
    return n > 0 ? 1e3 * n * s_.cfg.train.batch_size * s_.cfg.data.seq_len / ms : 0.0;
  }

  void record_eval_and_bias(int step) {
    if (s_.rank != 0) return;  // the weights are the same on every rank: rank 0 measures for all
    const auto& cfg = s_.cfg;
    PrecisionScope mixed(s_.precision);
    const int T = cfg.data.seq_len, B = cfg.train.batch_size;
    std::vector<std::pair<std::string, double>> scalars;
    if (step % cfg.eval.interval == 0 || step == cfg.train.steps) {
      record_.eval.push_back({step, mean_or_zero(window_losses(model_, *s_.data.val, s_.eval_starts, T, B))});
      scalars.push_back({"val/loss", record_.eval.back().val_loss});
    }
    if (step % cfg.metrics.bias_interval == 0 || step == cfg.train.steps) {
      const bool per_head = spec_.kind != VariantSpec::Kind::kFixed;
      record_.bias.push_back({step, measure_bias(model_, *s_.data.val, s_.bias_starts, T, B, per_head)});
      for (const auto& layer : record_.bias.back().layers) {
        const std::string suffix = "/layer" + std::to_string(layer.layer);
        for (const auto& metric : kBiasMetrics)
          scalars.push_back({std::string("bias/") + metric.key + suffix, layer.*metric.member});
        if (layer.dynamics)
          for (const auto& metric : kDynamicsMetrics)
            scalars.push_back(
                {std::string("dynamics/") + metric.key + suffix, layer.dynamics.value().*metric.member});
        if (!layer.lambda_per_head.empty())
          scalars.push_back({"attention/lambda" + suffix, stats::mean(layer.lambda_per_head)});
      }
    }
    write_scalars(scalars);
  }

  // TensorBoard (log.tensorboard): one event file per run and process. A resumed run marks the step it
  // continues from (SessionLog START at step_ + 1, or 0 when it starts over), so TensorBoard drops the points
  // an interrupted process wrote after its last checkpoint instead of showing them twice.
  void open_event_file() {
    if (!s_.cfg.log.tensorboard || s_.rank != 0) return;
    std::optional<std::int64_t> purge_from;
    if (s_.resumed) purge_from = step_ > 0 ? step_ + 1 : 0;
    events_ =
        std::make_unique<tensorboard::EventWriter>(s_.out_dir + "/tensorboard/" + spec_.name(), purge_from);
  }
  void write_scalars(const std::vector<std::pair<std::string, double>>& values) {
    if (!events_ || values.empty()) return;
    std::vector<std::pair<std::string, float>> as_float;
    for (const auto& [tag, v] : values) as_float.push_back({tag, static_cast<float>(v)});
    events_->scalars(step_, as_float);
    events_->flush();  // live: TensorBoard shows a point as soon as it is logged
  }

  std::vector<std::string> generate_samples() {
    const auto& sc = s_.cfg.sample;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(sc.seed);  // same prompts/draws for every variant
    const std::int64_t bos = s_.data.meta.bos_id, eos = s_.data.meta.eos_id;
    std::vector<std::string> out;
    for (int k = 0; k < sc.count; ++k) {
      s_.board.phase(index_, "sampling " + std::to_string(k + 1) + "/" + std::to_string(sc.count));
      std::vector<std::int64_t> ids = generate(model_, {bos}, sc, {bos, eos}, gen);
      out.push_back(s_.decoder.decode(std::vector<int>(ids.begin() + 1, ids.end())));
    }
    return out;
  }

  // The final evaluation over every validation window, samples and timing.
  void finish(double wall_s) {
    finished_ = true;
    if (s_.rank != 0) return;  // rank 0 alone evaluates, samples and writes
    const auto& cfg = s_.cfg;
    auto all_windows = evenly_spaced_windows(s_.data.val->size(), cfg.data.seq_len, UINT64_MAX);
    {
      PrecisionScope mixed(s_.precision);
      window_losses_ = window_losses(model_, *s_.data.val, all_windows, cfg.data.seq_len,
                                     cfg.train.batch_size, [this](std::size_t done, std::size_t total) {
                                       s_.board.phase(index_, "final eval " + std::to_string(done) + "/" +
                                                                  std::to_string(total) + " windows");
                                     });
    }
    double train_time_s = 0;
    for (double ms : step_ms_) train_time_s += ms / 1e3;
    // Final training loss: mean over the last log_interval steps (one step is too noisy).
    size_t tail = std::min<size_t>(step_losses_.size(), cfg.train.log_interval);
    auto& final = record_.final;
    final.val_loss = mean_or_zero(window_losses_);
    final.val_loss_sem = sem_or_zero(window_losses_);
    final.eval_tokens = static_cast<std::int64_t>(all_windows.size()) * cfg.data.seq_len;
    final.eval_windows = static_cast<std::int64_t>(all_windows.size());
    final.train_loss = mean_or_zero(std::vector<double>(step_losses_.end() - tail, step_losses_.end()));
    record_.samples = generate_samples();
    RunTiming timing;
    timing.wall_s = wall_s;
    timing.train_s = train_time_s;
    timing.tokens_per_s =
        train_time_s > 0 ? step_ms_.size() * cfg.train.batch_size * cfg.data.seq_len / train_time_s : 0.0;
    timing.step_ms_median = step_ms_.empty() ? 0.0 : stats::median(step_ms_);
    if (!allreduce_ms_.empty()) timing.allreduce_ms_median = stats::median(allreduce_ms_);
    record_.timing = timing;
    s_.board.phase(index_, "done");
  }

  void save(double wall_s) {
    if (events_) events_->flush();  // every point up to this checkpoint is on disk before it is
    wall_s_ = wall_s;
    if (s_.rank == 0) {
      make_directories(s_.out_dir + "/checkpoints");
      save_checkpoint(checkpoint_path(), model_, *optimizer_, s_.identity, progress());
    }
    // Every rank waits until rank 0 has written it (not after the last step: rank 0 is evaluating then).
    if (group_ && !finished_)
      group_->barrier("after the checkpoint of '" + spec_.name() + "' at step " + std::to_string(step_));
  }

  size_t index_;
  VariantSpec spec_;
  Shared& s_;
  Gpt model_{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<tensorboard::EventWriter> events_;  // null with log.tensorboard false
  std::unique_ptr<RankGroup> group_;                  // data-parallel ranks: this run's own process group
  RunResult record_;  // what results.json will hold for this run, filled as training goes
  int step_ = 0;
  std::vector<double> step_ms_;
  std::vector<double> allreduce_ms_;  // this process's steps only (not in checkpoints: a timing, not a state)
  std::vector<double> step_losses_;   // training loss of every step so far
  std::vector<double> window_losses_;  // final loss of every validation window
  double prior_wall_s_ = 0;            // wall time before a resume
  double wall_s_ = 0;                  // wall time at the last checkpoint
  bool finished_ = false;
};

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
  if (!precision.warning.empty()) std::fprintf(stderr, "xsa-train: warning: %s\n", precision.warning.c_str());
  const std::string blas_warning = generic_blas_core_warning(current_thread_info().blas, read_cpuinfo());
  if (!blas_warning.empty()) std::fprintf(stderr, "xsa-train: warning: %s\n", blas_warning.c_str());

  // Build every model (and draw its init) here, before any worker thread exists.
  Shared shared{cfg,
                data,
                decoder,
                options.out_dir,
                checkpoint_identity(cfg, data, precision_name(precision.precision)),
                nullptr,
                board,
                abort,
                eval_starts,
                bias_starts,
                precision.precision,
                options.resume,
                ranks.rank,
                ranks.world_size};
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
