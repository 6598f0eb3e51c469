#pragma once
// One variant's run inside a paired experiment, the trainer's unit of work (train/trainer.h orchestrates the
// runs): builds the variant's model, runs its step loop, records evaluations, bias metrics, TensorBoard
// scalars, checkpoints and its result. The step, evaluation, sampling and checkpoint I/O live in their own
// modules. Internal to the trainer.
#include <torch/optim/adamw.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"
#include "xsa/records/results.h"
#include "xsa/train/distributed.h"
#include "xsa/train/rank_sync.h"
#include "xsa/util/error.h"
#include "xsa/util/progress.h"
#include "xsa/util/tensorboard.h"

namespace xsa::trainer_detail {

using json = nlohmann::json;

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

// Everything the concurrent runs share (read-only except the log, board and abort flag). The objects it
// refers to are given to the constructor; every other field is set by name.
struct Shared {
  Shared(const Config& config, const TokenDataset& dataset, const PiecesDecoder& pieces,
         ProgressBoard& progress, std::atomic<bool>& abort_flag)
      : cfg(config), data(dataset), decoder(pieces), board(progress), abort(abort_flag) {}
  const Config& cfg;
  const TokenDataset& data;
  const PiecesDecoder& decoder;
  ProgressBoard& board;
  std::atomic<bool>& abort;
  std::string out_dir;
  json identity;                           // what a checkpoint must match to be resumed
  LogWriter* log = nullptr;                // opened once the log has been trimmed for a resume
  std::vector<std::uint64_t> eval_starts;  // fixed validation windows for periodic evaluation
  std::vector<std::uint64_t> bias_starts;  // fixed validation windows for bias metrics
  Precision precision = Precision::kFp32;  // runtime.precision resolved for this CPU
  bool resumed = false;                    // --resume: earlier event files may hold points to drop
  int rank = 0, world = 1;                 // data-parallel ranks: rank 0 alone evaluates and writes
};

// One variant's run (this header's comment says what it does).
class VariantRun {
 public:
  VariantRun(size_t index, VariantSpec spec, Shared& shared)
      : index_(index), spec_(std::move(spec)), s_(shared) {}

  // Main thread, before any worker starts: the model's construction and initial draws never touch
  // a generator another thread uses.
  void build();

  void set_group(std::unique_ptr<RankGroup> group) { group_ = std::move(group); }

  std::string checkpoint_path() const { return s_.out_dir + "/checkpoints/" + spec_.name() + ".pt"; }

  // Returns the completed step of the checkpoint that was loaded, or -1.
  int load_checkpoint_if_any();

  // Worker thread.
  void run();

  const RunResult& result() const { return record_; }
  const std::vector<double>& final_window_losses() const { return window_losses_; }

 private:
  // What this run's checkpoint must match: the shared identity, the variant it holds and its initial weights,
  // so a checkpoint copied from another variant or run is refused where it is used (resume, xsa-export).
  json checkpoint_identity() const;
  // The run's progress as the checkpoint stores it; the lists in results.json's format.
  json progress() const;
  void restore_progress(const json& state);
  double recent_tokens_per_s() const;  // over the last 20 steps, for the progress board
  // Rank 0: the periodic validation loss and bias metrics (with the attention dynamics) at `step`.
  void record_eval_and_bias(int step);

  // TensorBoard (log.tensorboard): one event file per run and process. A resumed run marks the step it
  // continues from (SessionLog START at step_ + 1, or 0 when it starts over), so TensorBoard drops the points
  // an interrupted process wrote after its last checkpoint instead of showing them twice.
  void open_event_file();
  void write_scalars(const std::vector<std::pair<std::string, double>>& values);

  std::vector<std::string> generate_samples();  // sample.count stories, the same draws for every variant
  // The final evaluation over every validation window, samples and timing.
  void finish(double wall_s);
  void save(double wall_s);  // a checkpoint of this step (rank 0 writes, every rank waits for it)

  size_t index_;
  VariantSpec spec_;
  Shared& s_;
  Gpt model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // train.optimizer's (make_optimizer)
  std::unique_ptr<tensorboard::EventWriter> events_;    // null with log.tensorboard false
  std::unique_ptr<RankGroup> group_;                    // data-parallel ranks: this run's own process group
  std::unique_ptr<RankSync> sync_;  // its gradient sync (declared after group_: destroyed before it)
  RunResult record_;                // what results.json will hold for this run, filled as training goes
  int step_ = 0;
  std::vector<double> step_ms_;
  std::vector<double> step_losses_;    // training loss of every step so far
  std::vector<double> window_losses_;  // final loss of every validation window
  double prior_wall_s_ = 0;            // wall time before a resume
  double wall_s_ = 0;                  // wall time at the last checkpoint
  bool finished_ = false;
};

}  // namespace xsa::trainer_detail
