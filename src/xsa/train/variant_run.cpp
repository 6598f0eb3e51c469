#include "xsa/train/variant_run.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstdlib>

#include "xsa/data/sampler.h"
#include "xsa/model/device.h"
#include "xsa/model/generate.h"
#include "xsa/stats/stats.h"
#include "xsa/train/checkpoint.h"
#include "xsa/train/evaluation.h"
#include "xsa/train/schedule.h"
#include "xsa/train/step.h"
#include "xsa/train/trained_variant.h"
#include "xsa/util/fs.h"
#include "xsa/util/stop_signal.h"
#include "xsa/util/timing.h"

namespace xsa::trainer_detail {

namespace {

// Fault injection for the resume tests: XSA_FAULT_EXIT_AFTER_STEP=N ends the process abruptly (like
// kill -9: no cleanup, no results) right after step N of any run has completed and been checkpointed.
int fault_exit_step() {
  const char* v = std::getenv("XSA_FAULT_EXIT_AFTER_STEP");
  return v != nullptr ? std::atoi(v) : 0;
}

// Mean and SE over windows; 0 where undefined (one window has no spread), as results.json has always held.
double mean_or_zero(const std::vector<double>& v) {
  return v.empty() ? 0.0 : stats::mean(v);
}
double sem_or_zero(const std::vector<double>& v) {
  return v.size() < 2 ? 0.0 : stats::standard_error(v);
}

}  // namespace

void VariantRun::build() {
  const auto& cfg = s_.cfg;
  model_ = Gpt(cfg.model, cfg.attention, spec_, s_.data.meta.vocab_size, cfg.data.seq_len);
  model_->init_weights(at::make_generator<at::CPUGeneratorImpl>(cfg.seed));
  if (cfg.data.doc_mask) model_->mask_documents(s_.data.meta.bos_id);  // check_data_fits: bos_id >= 0
  if (!cfg.model.init_from.empty()) init_from_export(model_, cfg, s_.data.meta, spec_);
  model_->to(
      torch_device(cfg.runtime.device));  // drawn on the CPU, so every device starts from the same weights
  optimizer_ = make_optimizer(model_, cfg.train, cfg.attention.lambda_lr_scale);
  record_.variant = spec_.name();
  record_.spec = variant_record(spec_, cfg.attention.learned_init);
  record_.layers = resolve_variant(cfg.attention, spec_).layers;  // the layers the model modifies
  record_.label = variant_label(record_.spec, *record_.layers, cfg.attention.lambda_lr_scale);
  record_.seed = cfg.seed;
  record_.init_checksum = model_->weights_checksum();
}

json VariantRun::checkpoint_identity() const {
  json identity = s_.identity;
  identity["variant"] = spec_.name();
  identity["init_checksum"] = record_.init_checksum;
  return identity;
}

int VariantRun::load_checkpoint_if_any() {
  const std::string path = checkpoint_path();
  if (!path_exists(path)) return -1;
  json progress = load_checkpoint(path, model_, *optimizer_, checkpoint_identity());
  try {
    restore_progress(progress);
  } catch (const std::exception& e) {
    throw InputError(path + ": damaged or incompatible checkpoint (" + e.what() +
                     "); use --force to start over");
  }
  return step_;
}

void VariantRun::run() {
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
  if (group_ && !sync_) {
    // After any checkpoint was loaded: the buckets' hooks sit on these parameters' gradient accumulators.
    sync_ = std::make_unique<RankSync>(*group_, s_.world, model_->parameters(), cfg.runtime.dist_bucket_mb,
                                       spec_.name(), [] { return stop_requested(); });
  }
  const int local_b = B / s_.world;  // this rank's contiguous slice of every global batch
  while (step_ < steps) {
    if (s_.abort.load()) throw Aborted{};
    // SIGTERM (preemption, scancel, time limit): checkpoint this step boundary and stop; --resume
    // continues bit-identically from here.
    if (sync_ ? sync_->stop_agreed() : stop_requested()) {
      save(prior_wall_s_ + seconds_since(t_start));  // even with checkpoint_interval 0: resuming needs it
      throw StoppedAtStepBoundary{};
    }
    auto t0 = Clock::now();
    const double lr = learning_rate(step_, steps, cfg.train.warmup_steps, cfg.train.lr, cfg.train.min_lr);
    auto starts = sampler.batch_starts(step_, B);
    auto batch = make_batch(*s_.data.train, starts.data() + s_.rank * local_b, local_b, T)  // (b, T+1)
                     .to(model_->device());
    auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);  // (b, T) each
    StepSettings settings;
    settings.lr = lr;
    settings.lambda_lr_scale = cfg.attention.lambda_lr_scale;
    settings.grad_clip = cfg.train.grad_clip;
    settings.run = spec_.name();
    settings.step_number = step_ + 1;
    settings.precision = s_.precision;
    settings.sync = sync_.get();
    StepOutcome outcome = train_step(model_, *optimizer_, x, y, settings);
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

json VariantRun::progress() const {
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

void VariantRun::restore_progress(const json& state) {
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

double VariantRun::recent_tokens_per_s() const {
  size_t n = std::min<size_t>(step_ms_.size(), 20);
  double ms = 0;
  for (size_t i = step_ms_.size() - n; i < step_ms_.size(); ++i) ms += step_ms_[i];
  return n > 0 ? 1e3 * n * s_.cfg.train.batch_size * s_.cfg.data.seq_len / ms : 0.0;
}

void VariantRun::record_eval_and_bias(int step) {
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

void VariantRun::open_event_file() {
  if (!s_.cfg.log.tensorboard || s_.rank != 0) return;
  std::optional<std::int64_t> purge_from;
  if (s_.resumed) purge_from = step_ > 0 ? step_ + 1 : 0;
  events_ =
      std::make_unique<tensorboard::EventWriter>(s_.out_dir + "/tensorboard/" + spec_.name(), purge_from);
}

void VariantRun::write_scalars(const std::vector<std::pair<std::string, double>>& values) {
  if (!events_ || values.empty()) return;
  std::vector<std::pair<std::string, float>> as_float;
  for (const auto& [tag, v] : values) as_float.push_back({tag, static_cast<float>(v)});
  events_->scalars(step_, as_float);
  events_->flush();  // live: TensorBoard shows a point as soon as it is logged
}

std::vector<std::string> VariantRun::generate_samples() {
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

void VariantRun::finish(double wall_s) {
  finished_ = true;
  if (s_.rank != 0) return;  // rank 0 alone evaluates, samples and writes
  const auto& cfg = s_.cfg;
  auto all_windows = evenly_spaced_windows(s_.data.val->size(), cfg.data.seq_len, UINT64_MAX);
  std::vector<double> position_sums;  // (T): each position's loss summed over the windows
  {
    PrecisionScope mixed(s_.precision);
    window_losses_ = window_losses(
        model_, *s_.data.val, all_windows, cfg.data.seq_len, cfg.train.batch_size,
        [this](std::size_t done, std::size_t total) {
          s_.board.phase(index_,
                         "final eval " + std::to_string(done) + "/" + std::to_string(total) + " windows");
        },
        &position_sums);
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
  final.loss_by_position = loss_by_position(position_sums, static_cast<std::int64_t>(all_windows.size()));
  record_.samples = generate_samples();
  RunTiming timing;
  timing.wall_s = wall_s;
  timing.train_s = train_time_s;
  timing.tokens_per_s =
      train_time_s > 0 ? step_ms_.size() * cfg.train.batch_size * cfg.data.seq_len / train_time_s : 0.0;
  timing.step_ms_median = step_ms_.empty() ? 0.0 : stats::median(step_ms_);
  if (sync_ && !sync_->wait_ms().empty()) timing.allreduce_ms_median = stats::median(sync_->wait_ms());
  record_.timing = timing;
  s_.board.phase(index_, "done");
}

void VariantRun::save(double wall_s) {
  if (events_) events_->flush();  // every point up to this checkpoint is on disk before it is
  wall_s_ = wall_s;
  if (s_.rank == 0) {
    make_directories(s_.out_dir + "/checkpoints");
    save_checkpoint(checkpoint_path(), model_, *optimizer_, checkpoint_identity(), progress());
  }
  // Every rank waits until rank 0 has written it (not after the last step: rank 0 is evaluating then).
  if (group_ && !finished_)
    group_->barrier("after the checkpoint of '" + spec_.name() + "' at step " + std::to_string(step_));
}

}  // namespace xsa::trainer_detail
