#include "xsa/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <sys/resource.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "xsa/data/sampler.h"
#include "xsa/model/gpt.h"
#include "xsa/train/schedule.h"
#include "xsa/train/threads.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/progress.h"
#include "xsa/util/stop_signal.h"

namespace xsa {

using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

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

// (B, T+1) int64 batch of the windows starting at `starts`.
torch::Tensor make_batch(const TokenFile& file, const std::uint64_t* starts, int64_t count, int seq_len) {
  auto batch = torch::empty({count, seq_len + 1}, torch::kLong);
  auto* out = batch.data_ptr<int64_t>();
  for (int64_t b = 0; b < count; ++b) {
    const std::uint16_t* src = file.data() + starts[b];
    for (int t = 0; t <= seq_len; ++t) out[b * (seq_len + 1) + t] = src[t];
  }
  return batch;
}

// Mean next-token loss of each window (no grad).
std::vector<double> window_losses(Gpt& model, const TokenFile& file, const std::vector<std::uint64_t>& starts,
                                  int seq_len, int batch_size) {
  torch::NoGradGuard no_grad;
  std::vector<double> losses;
  losses.reserve(starts.size());
  for (size_t i = 0; i < starts.size(); i += batch_size) {
    int64_t n = std::min<int64_t>(batch_size, starts.size() - i);
    auto batch = make_batch(file, starts.data() + i, n, seq_len);  // (n, T+1)
    auto x = batch.narrow(1, 0, seq_len), y = batch.narrow(1, 1, seq_len);
    auto per_window = model->token_losses(x, y).mean(1).to(torch::kDouble).contiguous();  // (n)
    const double* p = per_window.data_ptr<double>();
    losses.insert(losses.end(), p, p + n);
  }
  return losses;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / v.size();
}

double sem_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double m = mean_of(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / (v.size() - 1)) / std::sqrt(static_cast<double>(v.size()));
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Everything the concurrent runs share (read-only except the log, board and abort flag).
struct Shared {
  const Config& cfg;
  const TokenDataset& data;
  const PiecesDecoder& decoder;
  std::string out_dir;
  LogWriter* log = nullptr;  // opened once the log has been trimmed for a resume
  ProgressBoard& board;
  std::atomic<bool>& abort;
  std::vector<std::uint64_t> eval_starts;  // fixed validation windows for periodic evaluation
  std::vector<std::uint64_t> bias_starts;  // fixed validation windows for bias metrics
};

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
    init_checksum_ = model_->weights_checksum();
    optimizer_ = make_adamw(model_, cfg.train);
  }

  std::string checkpoint_path() const { return s_.out_dir + "/checkpoints/" + spec_.name() + ".pt"; }

  // Returns the completed step of the checkpoint that was loaded, or -1.
  int load_checkpoint_if_any() {
    std::string path = checkpoint_path();
    if (!path_exists(path)) return -1;
    try {
      return restore_checkpoint(path);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
      throw InputError(path + ": damaged or incompatible checkpoint (" + what +
                       "); use --force to start over");
    }
  }

  // Worker thread.
  void run() {
    if (!finished_result_.is_null()) return;  // resumed after this run had already finished
    const auto& cfg = s_.cfg;
    const int T = cfg.data.seq_len, B = cfg.train.batch_size, steps = cfg.train.steps;
    auto t_start = Clock::now();
    TrainWindowSampler sampler(s_.data.train->size(), T, batch_order_seed(cfg.seed));
    std::vector<torch::Tensor> params = model_->parameters();

    if (stop_requested()) throw StoppedAtStepBoundary{};  // not started (or resumed) yet: nothing new to save
    if (step_ == 0) record_eval_and_bias(0);
    while (step_ < steps) {
      if (s_.abort.load()) throw Aborted{};
      // SIGTERM (preemption, scancel, time limit): checkpoint this step boundary and stop; --resume
      // continues bit-identically from here.
      if (stop_requested()) {
        save_checkpoint(prior_wall_s_ + seconds_since(t_start));
        throw StoppedAtStepBoundary{};
      }
      auto t0 = Clock::now();
      const double lr = learning_rate(step_, steps, cfg.train.warmup_steps, cfg.train.lr, cfg.train.min_lr);
      for (auto& group : optimizer_->param_groups())
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);

      auto starts = sampler.batch_starts(step_, B);
      auto batch = make_batch(*s_.data.train, starts.data(), B, T);  // (B, T+1)
      auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);     // (B, T) each
      optimizer_->zero_grad();
      auto loss = model_->forward_loss(x, y);  // fused output layer + cross-entropy
      double loss_value = loss.item<double>();
      if (!std::isfinite(loss_value)) {
        throw RuntimeFailure("run '" + spec_.name() + "': loss became " + std::to_string(loss_value) +
                             " at step " + std::to_string(step_ + 1));
      }
      loss.backward();
      double grad_norm =
          cfg.train.grad_clip > 0
              ? torch::nn::utils::clip_grad_norm_(params, cfg.train.grad_clip)
              : torch::nn::utils::clip_grad_norm_(params, std::numeric_limits<double>::infinity());
      if (!std::isfinite(grad_norm)) {
        throw RuntimeFailure("run '" + spec_.name() + "': gradient norm became " + std::to_string(grad_norm) +
                             " at step " + std::to_string(step_ + 1));
      }
      optimizer_->step();
      ++step_;
      double ms = 1e3 * seconds_since(t0);
      step_ms_.push_back(ms);
      step_losses_.push_back(loss_value);

      if (step_ % cfg.train.log_interval == 0 || step_ == steps) {
        train_loss_.push_back({{"step", step_}, {"loss", loss_value}});
        s_.log->write({{"run", spec_.name()},
                       {"step", step_},
                       {"loss", loss_value},
                       {"lr", lr},
                       {"grad_norm", grad_norm},
                       {"ms", ms}});
      }
      s_.board.update(index_, step_, loss_value, recent_tokens_per_s());
      if (step_ % cfg.eval.interval == 0 || step_ % cfg.metrics.bias_interval == 0 || step_ == steps) {
        record_eval_and_bias(step_);
      }
      if (step_ == steps) {
        finished_result_ = make_result(prior_wall_s_ + seconds_since(t_start));
        save_checkpoint(prior_wall_s_ + seconds_since(t_start));  // a resume after this skips the run
      } else if (cfg.train.checkpoint_interval > 0 && step_ % cfg.train.checkpoint_interval == 0) {
        save_checkpoint(prior_wall_s_ + seconds_since(t_start));
      }
      if (step_ == fault_exit_step()) std::_Exit(86);
    }
  }

  const json& result() const { return finished_result_; }

 private:
  int restore_checkpoint(const std::string& path) {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    c10::IValue state_value;
    archive.read("state", state_value);
    json state = json::parse(state_value.toStringRef());
    json want = config_identity();
    const json& had = state.at("identity");
    if (had != want) {
      std::string differs;
      for (const auto& [key, value] : want.items()) {
        if (had.contains(key) && had.at(key) == value) continue;
        if (key == "config" && had.contains(key)) {
          for (const auto& [section, v] : value.items()) {
            if (!had.at(key).contains(section) || had.at(key).at(section) != v)
              differs += " config." + section;
          }
        } else {
          differs += " " + key;
        }
      }
      throw InputError(path + ": checkpoint was made with a different config or data (differs in:" + differs +
                       "); use --force to start over");
    }
    torch::serialize::InputArchive model_archive, optim_archive;
    archive.read("model", model_archive);
    archive.read("optimizer", optim_archive);
    model_->load(model_archive);
    optimizer_->load(optim_archive);
    step_ = state.at("step").get<int>();
    eval_ = state.at("eval");
    bias_ = state.at("bias");
    train_loss_ = state.at("train_loss");
    step_ms_ = state.at("step_ms").get<std::vector<double>>();
    step_losses_ = state.at("step_losses").get<std::vector<double>>();
    prior_wall_s_ = state.at("wall_s").get<double>();
    init_checksum_ = state.at("init_checksum").get<std::string>();
    if (state.contains("result")) finished_result_ = state.at("result");
    return step_;
  }

  // What must match for a checkpoint to be resumable: the config minus runtime settings, and the data.
  json config_identity() const {
    json c = config_to_json(s_.cfg);
    c.erase("runtime");
    json inputs = s_.data.meta.raw.value("inputs", json::array());
    // Bit-identical continuation also needs the same thread count (reductions may split differently);
    // workers do not matter.
    return {{"config", c},
            {"threads", s_.cfg.runtime.threads},
            {"vocab_size", s_.data.meta.vocab_size},
            {"train_tokens", s_.data.meta.train_tokens},
            {"val_tokens", s_.data.meta.val_tokens},
            {"tokenizer_sha256", s_.data.meta.tokenizer_sha256},
            {"inputs", inputs}};
  }

  double recent_tokens_per_s() const {
    size_t n = std::min<size_t>(step_ms_.size(), 20);
    double ms = 0;
    for (size_t i = step_ms_.size() - n; i < step_ms_.size(); ++i) ms += step_ms_[i];
    return n > 0 ? 1e3 * n * s_.cfg.train.batch_size * s_.cfg.data.seq_len / ms : 0.0;
  }

  void record_eval_and_bias(int step) {
    const auto& cfg = s_.cfg;
    if (step % cfg.eval.interval == 0 || step == cfg.train.steps) {
      auto losses =
          window_losses(model_, *s_.data.val, s_.eval_starts, cfg.data.seq_len, cfg.train.batch_size);
      eval_.push_back({{"step", step}, {"val_loss", mean_of(losses)}});
    }
    if (step % cfg.metrics.bias_interval == 0 || step == cfg.train.steps) bias_.push_back(measure_bias(step));
  }

  json measure_bias(int step) {
    torch::NoGradGuard no_grad;
    const auto& cfg = s_.cfg;
    const int T = cfg.data.seq_len, B = cfg.train.batch_size;
    const int L = cfg.model.n_layer;
    std::vector<LayerBias> sum(L);
    size_t windows = 0;
    for (size_t i = 0; i < s_.bias_starts.size(); i += B) {
      int64_t n = std::min<int64_t>(B, s_.bias_starts.size() - i);
      auto batch = make_batch(*s_.data.val, s_.bias_starts.data() + i, n, T);
      BiasProbe probe;
      model_->forward(batch.narrow(1, 0, T), &probe);
      for (int l = 0; l < L; ++l) {  // window-weighted mean over batches
        sum[l].cos_y_v += n * probe.layers[l].cos_y_v;
        sum[l].cos_z_v += n * probe.layers[l].cos_z_v;
        sum[l].attn_diag += n * probe.layers[l].attn_diag;
        sum[l].value_cos += n * probe.layers[l].value_cos;
        sum[l].lambda_per_head = probe.layers[l].lambda_per_head;
      }
      windows += n;
    }
    json layers = json::array();
    for (int l = 0; l < L; ++l) {
      json entry = {{"layer", l},
                    {"cos_y_v", sum[l].cos_y_v / windows},
                    {"cos_z_v", sum[l].cos_z_v / windows},
                    {"attn_diag", sum[l].attn_diag / windows},
                    {"value_cos", sum[l].value_cos / windows}};
      if (spec_.kind != VariantSpec::Kind::kFixed) entry["lambda_per_head"] = sum[l].lambda_per_head;
      layers.push_back(entry);
    }
    return {{"step", step}, {"layers", layers}};
  }

  std::vector<std::string> generate_samples() {
    torch::NoGradGuard no_grad;
    const auto& sc = s_.cfg.sample;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(sc.seed);  // same prompts/draws for every variant
    std::vector<std::string> out;
    const int bos = s_.data.meta.bos_id, eos = s_.data.meta.eos_id;
    for (int k = 0; k < sc.count; ++k) {
      std::vector<int64_t> ids{bos};
      for (int n = 0; n < sc.tokens; ++n) {
        int64_t from = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - s_.cfg.data.seq_len);
        auto ctx =
            torch::tensor(std::vector<int64_t>(ids.begin() + from, ids.end()), torch::kLong).view({1, -1});
        auto logits = model_->forward(ctx).select(1, ctx.size(1) - 1).squeeze(0) / sc.temperature;  // (V)
        if (sc.top_k > 0 && sc.top_k < logits.size(0)) {
          auto kth = std::get<0>(logits.topk(sc.top_k)).select(0, sc.top_k - 1);
          logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
        }
        int64_t next = torch::multinomial(torch::softmax(logits, -1), 1, false, gen).item<int64_t>();
        if (next == bos || next == eos) break;
        ids.push_back(next);
      }
      out.push_back(s_.decoder.decode(std::vector<int>(ids.begin() + 1, ids.end())));
    }
    return out;
  }

  json make_result(double wall_s) {
    const auto& cfg = s_.cfg;
    auto all_windows = evenly_spaced_windows(s_.data.val->size(), cfg.data.seq_len, UINT64_MAX);
    final_window_losses_ =
        window_losses(model_, *s_.data.val, all_windows, cfg.data.seq_len, cfg.train.batch_size);
    double train_time_s = 0;
    for (double ms : step_ms_) train_time_s += ms / 1e3;
    // Final training loss: mean over the last log_interval steps (one step is too noisy).
    size_t tail = std::min<size_t>(step_losses_.size(), cfg.train.log_interval);
    double recent_train_loss = mean_of(std::vector<double>(step_losses_.end() - tail, step_losses_.end()));
    json variant_spec = {{"kind", spec_.kind == VariantSpec::Kind::kFixed     ? "fixed"
                                  : spec_.kind == VariantSpec::Kind::kLearned ? "learned"
                                                                              : "gate"}};
    variant_spec["lambda"] = spec_.kind == VariantSpec::Kind::kFixed ? json(spec_.lambda) : json(nullptr);
    if (spec_.kind == VariantSpec::Kind::kLearned)
      variant_spec["initial_lambda"] = cfg.attention.learned_init;
    json layers_applied = cfg.attention.layers.empty() ? json("all") : json(cfg.attention.layers);
    return {
        {"variant", spec_.name()},
        {"lambda", variant_spec["lambda"]},
        {"variant_spec", variant_spec},
        {"layers", layers_applied},
        {"seed", cfg.seed},
        {"init_checksum", init_checksum_},
        {"eval", eval_},
        {"final",
         {{"val_loss", mean_of(final_window_losses_)},
          {"val_loss_sem", sem_of(final_window_losses_)},
          {"eval_tokens", static_cast<std::uint64_t>(all_windows.size()) * cfg.data.seq_len},
          {"eval_windows", all_windows.size()},
          {"train_loss", recent_train_loss}}},
        {"window_losses", final_window_losses_},
        {"bias", bias_},
        {"train_loss", train_loss_},
        {"samples", generate_samples()},
        {"timing",
         {{"wall_s", wall_s},
          {"train_s", train_time_s},
          {"tokens_per_s",
           train_time_s > 0 ? step_ms_.size() * cfg.train.batch_size * cfg.data.seq_len / train_time_s : 0.0},
          {"step_ms_median", median_of(step_ms_)}}}};
  }

  void save_checkpoint(double wall_s) {
    make_directories(s_.out_dir + "/checkpoints");
    json state = {{"identity", config_identity()},
                  {"step", step_},
                  {"eval", eval_},
                  {"bias", bias_},
                  {"train_loss", train_loss_},
                  {"step_ms", step_ms_},
                  {"step_losses", step_losses_},
                  {"wall_s", wall_s},
                  {"init_checksum", init_checksum_}};
    if (!finished_result_.is_null()) state["result"] = finished_result_;
    torch::serialize::OutputArchive archive, model_archive, optim_archive;
    model_->save(model_archive);
    optimizer_->save(optim_archive);
    archive.write("model", model_archive);
    archive.write("optimizer", optim_archive);
    archive.write("state", c10::IValue(state.dump()));
    std::string path = checkpoint_path(), tmp = path + ".tmp";
    archive.save_to(tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw RuntimeFailure(path + ": cannot rename checkpoint into place (" + std::strerror(errno) + ")");
    }
  }

  size_t index_;
  VariantSpec spec_;
  Shared& s_;
  Gpt model_{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::string init_checksum_;
  int step_ = 0;
  json eval_ = json::array(), bias_ = json::array(), train_loss_ = json::array();
  std::vector<double> step_ms_;
  std::vector<double> step_losses_;  // training loss of every step so far
  std::vector<double> final_window_losses_;
  double prior_wall_s_ = 0;
  json finished_result_;
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

}  // namespace

std::unique_ptr<torch::optim::AdamW> make_adamw(Gpt& model, const TrainConfig& train) {
  std::vector<torch::Tensor> decay, no_decay;  // decay on >= 2-D weights only (not norms, λ, gates)
  for (auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = [&](double wd) {
    auto o = std::make_unique<torch::optim::AdamWOptions>(train.lr);
    o->betas({train.beta1, train.beta2}).weight_decay(wd).eps(1e-8);
    return o;
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(train.weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(train.lr));
}

void check_data_fits(const Config& cfg, const TokenDataset& data) {
  const int T = cfg.data.seq_len;
  if (count_windows(data.train->size(), T) < 1) {
    throw InputError(data.train->path() + ": " + std::to_string(data.train->size()) +
                     " tokens cannot hold one window of data.seq_len+1 = " + std::to_string(T + 1) +
                     " tokens");
  }
  if (count_windows(data.val->size(), T) < 1) {
    throw InputError(data.val->path() + ": " + std::to_string(data.val->size()) +
                     " tokens cannot hold one window of data.seq_len+1 = " + std::to_string(T + 1) +
                     " tokens");
  }
}

json run_paired_experiment(const Config& cfg, const TokenDataset& data, const PiecesDecoder& decoder,
                           const ExperimentOptions& options) {
  check_data_fits(cfg, data);
  if (decoder.vocab_size() != data.meta.vocab_size) {
    throw InputError(data.dir + "/pieces.json: " + std::to_string(decoder.vocab_size()) +
                     " pieces, expected vocab_size " + std::to_string(data.meta.vocab_size) +
                     " from meta.json");
  }
  apply_thread_policy(cfg.runtime.threads);
  keep_large_allocations_in_heap();
  auto wall_start = Clock::now();

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

  // Build every model (and draw its init) here, before any worker thread exists.
  Shared shared{cfg, data, decoder, options.out_dir, nullptr, board, abort, eval_starts, bias_starts};
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
  // Everything is validated (config, data, checkpoints): only now is the output folder touched.
  make_directories(options.out_dir);
  if (!options.resume) {
    // Starting over (--force): a finished run's results must not outlive its config and log.
    std::filesystem::remove(options.out_dir + "/results.json");
    std::filesystem::remove_all(options.out_dir + "/checkpoints");
  }
  write_file_atomic(options.out_dir + "/config.yaml", options.config_yaml);
  if (options.resume) {
    trim_log_for_resume(log_path, resume_step);
  } else if (path_exists(log_path)) {
    write_file_atomic(log_path, "");
  }
  LogWriter log(log_path);
  shared.log = &log;

  // Run the variants, runtime.workers at a time. Each worker sets the thread policy for itself
  // (OpenMP's thread count is per calling thread).
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
  board.finish();
  if (first_error) std::rethrow_exception(first_error);
  if (stopped) {
    throw Interrupted("stopped by SIGTERM; every run checkpointed at its last completed step (" +
                      options.out_dir + "/checkpoints); continue with --resume");
  }

  // Assemble results.json.
  auto threads = current_thread_info();
  json runs_json = json::array();
  for (auto& r : runs) runs_json.push_back(r->result());
  json comparisons = json::array();
  const json& base = runs_json.at(0);
  for (size_t i = 1; i < runs_json.size(); ++i) {
    const json& var = runs_json[i];
    double b = base["final"]["val_loss"].get<double>(), v = var["final"]["val_loss"].get<double>();
    // Paired over the same validation windows: the SE of the per-window difference.
    auto wb = base["window_losses"].get<std::vector<double>>(),
         wv = var["window_losses"].get<std::vector<double>>();
    if (wv.size() != wb.size()) {
      throw RuntimeFailure("runs '" + base["variant"].get<std::string>() + "' and '" +
                           var["variant"].get<std::string>() +
                           "' were evaluated on different validation windows");
    }
    std::vector<double> diff(wb.size());
    for (size_t k = 0; k < wb.size(); ++k) diff[k] = wv[k] - wb[k];
    comparisons.push_back({{"baseline", base["variant"]},
                           {"variant", var["variant"]},
                           {"delta_val_loss", v - b},
                           {"delta_val_loss_sem", sem_of(diff)},
                           {"improvement_pct", 100.0 * (b - v) / b}});
  }
  for (auto& r : runs_json) r.erase("window_losses");  // large; only needed for the paired SE above

  return {{"schema", "xsa.results/1"},
          {"name", cfg.name},
          {"config", config_to_json(cfg)},
          {"version", {{"xsa", XSA_VERSION}, {"torch", TORCH_VERSION}}},
          {"environment",
           {{"threads", threads.torch_threads},
            {"blas", threads.blas},
            {"blas_threads", threads.blas_threads},
            {"workers", cfg.runtime.workers},
            {"host_cores", std::thread::hardware_concurrency()},
            {"peak_rss_mib", peak_rss_mib()},
            {"wall_s", seconds_since(wall_start)}}},
          {"data",
           {{"dir", data.dir},
            {"vocab_size", data.meta.vocab_size},
            {"train_tokens", data.meta.train_tokens},
            {"val_tokens", data.meta.val_tokens},
            {"tokenizer_sha256", data.meta.tokenizer_sha256}}},
          {"runs", runs_json},
          {"comparisons", comparisons}};
}

}  // namespace xsa
