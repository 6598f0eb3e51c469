// xsa-train: one paired experiment (every attention variant from the same init and batch order).
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/config/resources.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/model/device.h"
#include "xsa/report/run_summary.h"
#include "xsa/sweep/slurm.h"
#include "xsa/train/ranks.h"
#include "xsa/train/trainer.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/local_ranks.h"
#include "xsa/util/stop_signal.h"

namespace {

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool resume = false;
  bool force = false;
  bool quiet = false;
  int ranks = 0;                  // --ranks N: start N local ranks of one data-parallel run
  std::vector<std::string> argv;  // the command line, for the ranks --ranks starts
  std::string submit;             // --submit slurm: the run as one Slurm job of nodes × tasks_per_node ranks
  int nodes = 0, tasks_per_node = 0;
  std::vector<std::string> sbatch_args;
  bool dry_run = false;
};

void setup_train_command(CLI::App& app, TrainOptions& opt) {
  app.description(
      "Train a paired experiment: every attention variant (SA, XSA, λ-XSA, ...) from the same initial\n"
      "weights and the same batch order. Writes results.json, log.jsonl and config.yaml.");
  app.add_option("--config,-c", opt.config_path, "experiment config (YAML)")->required();
  app.add_option("--set", opt.overrides, "override a config key, e.g. --set train.steps=50 (repeatable)");
  app.add_option("--out,-o", opt.out_dir, "output folder (default: runs/<name>)");
  app.add_flag("--resume", opt.resume, "continue an interrupted run from its checkpoints");
  app.add_flag("--force", opt.force, "overwrite a finished run in the output folder / start over");
  app.add_flag("--quiet,-q", opt.quiet, "no progress output");
  app.add_option(
         "--ranks", opt.ranks,
         "train as N data-parallel ranks on this machine (c10d/Gloo on 127.0.0.1; train.batch_size is "
         "global and must divide by N)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--submit", opt.submit, "submit the run as one Slurm job of data-parallel ranks instead")
      ->check(CLI::IsMember({"slurm"}));
  app.add_option("--nodes", opt.nodes, "nodes for --submit slurm")->check(CLI::Range(1, 65536));
  app.add_option("--tasks-per-node", opt.tasks_per_node, "ranks per node for --submit slurm")
      ->check(CLI::Range(1, 1024));
  app.add_option("--sbatch-arg", opt.sbatch_args,
                 "extra sbatch option for --submit, e.g. --sbatch-arg=--partition=cpu (repeatable)");
  app.add_flag("--dry-run", opt.dry_run, "with --submit: print the sbatch script, submit nothing");
  app.set_version_flag("--version", std::string("xsa ") + XSA_VERSION + " (LibTorch " + TORCH_VERSION + ")");
}

// Refuses output folders whose contents a run would destroy (README.md "Commands": a rerun never destroys
// results).
void check_output_folder(const std::string& out, const TrainOptions& opt) {
  namespace fs = std::filesystem;
  if (!xsa::path_exists(out)) return;
  if (!xsa::is_directory(out)) throw xsa::InputError(out + ": exists and is not a folder");
  bool empty = fs::is_empty(out);
  bool finished = xsa::path_exists(out + "/results.json");
  // train.out is where xsa-sweep sends a point's output before starting the trainer in that folder; slurm/
  // holds the script and output of xsa-train --submit slurm, which writes them before the job starts.
  bool has_run = xsa::path_exists(out + "/config.yaml") || xsa::path_exists(out + "/log.jsonl") ||
                 xsa::path_exists(out + "/train.out") || xsa::path_exists(out + "/slurm");
  bool has_checkpoints = xsa::path_exists(out + "/checkpoints");
  if (!empty && !finished && !has_run && !has_checkpoints) {
    throw xsa::InputError(out + ": exists and is not an xsa run folder; choose another --out");
  }
  if (finished && !opt.force) {
    throw xsa::InputError(out +
                          ": already holds a finished run (results.json); pass --force to overwrite it or "
                          "choose another --out");
  }
  if (!finished && has_checkpoints && !opt.resume && !opt.force) {
    throw xsa::InputError(out +
                          ": holds an unfinished run (checkpoints/); pass --resume to continue it or --force "
                          "to start over");
  }
}

// The end-of-run table (xsa/report/run_summary.h) and where everything went.
void print_summary(const xsa::ExperimentResult& results, const std::string& out) {
  std::cout << "\n" << xsa::report::render_markdown({{xsa::report::run_summary_table(results)}});
  const auto& env = *results.environment;
  char line[256];
  std::snprintf(line, sizeof line,
                "(wall %.1f s, %d torch + %d BLAS threads per run, %d workers, peak RSS %.0f MiB)",
                env.wall_s, env.threads, env.blas_threads, env.workers, env.peak_rss_mib);
  std::cout << "\nresults: " << out << "/results.json  " << line << "\n";
}

void check_divides(const xsa::Config& cfg, int world) {
  if (cfg.train.batch_size % world != 0) {
    throw xsa::InputError("train.batch_size " + std::to_string(cfg.train.batch_size) +
                          " does not divide by the " + std::to_string(world) +
                          " ranks (the batch size is global: each rank takes batch_size / ranks)");
  }
}

// --submit slurm: everything checked here first, then one sbatch script (printed with --dry-run).
int submit_to_slurm(const TrainOptions& opt, const xsa::Config& cfg) {
  namespace fs = std::filesystem;
  if (opt.nodes < 1 || opt.tasks_per_node < 1)
    throw xsa::InputError("--submit slurm needs --nodes and --tasks-per-node");
  if (opt.ranks > 0 || opt.resume || opt.force)
    throw xsa::InputError("--submit slurm takes no --ranks, --resume or --force (the job resumes by itself)");
  check_divides(cfg, opt.nodes * opt.tasks_per_node);
  xsa::SlurmTrainSubmission sub;
  sub.name = cfg.name;
  sub.config = fs::absolute(opt.config_path).string();
  sub.overrides = opt.overrides;
  sub.out_dir =
      fs::absolute(opt.out_dir.empty() ? "runs/" + cfg.name : opt.out_dir).lexically_normal().string();
  sub.trainer = fs::read_symlink("/proc/self/exe").string();
  sub.workdir = fs::current_path().string();
  sub.nodes = opt.nodes;
  sub.tasks_per_node = opt.tasks_per_node;
  sub.cpus_per_task = cfg.runtime.threads *
                      std::min<int>(cfg.runtime.workers, static_cast<int>(cfg.attention.variants.size()));
  sub.sbatch_args = opt.sbatch_args;
  if (opt.dry_run) {
    std::cout << xsa::slurm_train_script(sub);
    return xsa::kExitOk;
  }
  return xsa::submit_slurm_train(sub, std::cout);
}

int run_train(const TrainOptions& opt) {
  // Everything that can be wrong with the input is checked before the output folder is touched.
  xsa::Config cfg = xsa::load_config(opt.config_path, opt.overrides);
  if (opt.submit.empty() && (opt.nodes || opt.tasks_per_node || opt.dry_run || !opt.sbatch_args.empty()))
    throw xsa::InputError("--nodes, --tasks-per-node, --sbatch-arg and --dry-run need --submit slurm");
  if (!opt.submit.empty()) return submit_to_slurm(opt, cfg);
  const xsa::RankInfo ranks = xsa::rank_info_from_environment();
  if (opt.ranks > 0) {
    if (ranks.distributed())
      throw xsa::InputError("--ranks starts ranks itself: unset RANK/WORLD_SIZE first");
    check_divides(cfg, opt.ranks);
  }
  check_divides(cfg, ranks.world_size);
  xsa::require_device_usable(cfg, std::max(opt.ranks, ranks.world_size));
  xsa::TokenDataset data = xsa::TokenDataset::load(cfg.data.dir);
  xsa::PiecesDecoder decoder = xsa::PiecesDecoder::load(cfg.data.dir);
  xsa::check_data_fits(cfg, data);
  // Before anything is built: a typo such as model.d_model=1048576 is refused now, not after minutes of
  // swapping.
  const xsa::MemoryEstimate memory = xsa::estimate_memory(cfg, data.meta.vocab_size);
  const std::optional<double> available = xsa::available_memory_bytes();
  if (available) {
    xsa::check_memory_fits(memory, *available,
                           opt.config_path + (opt.overrides.empty() ? "" : " (with its --set overrides)"));
  }
  const std::string out = opt.out_dir.empty() ? "runs/" + cfg.name : opt.out_dir;
  // A run folder over, around or inside what the run reads would destroy it (--force clears the folder).
  xsa::require_output_apart(
      {out, "--out"},
      {{opt.config_path, "--config"}, {cfg.data.dir, "data.dir"}, {cfg.model.init_from, "model.init_from"}});
  if (ranks.rank == 0) check_output_folder(out, opt);  // rank 0 alone writes there
  if (opt.ranks > 1) {
    // --ranks N: the input is checked here once (one line, not one per rank), bounded by this machine before
    // anything forks (each rank holds the model and its share of the batch, and one process group per variant
    // plus the run's own), then the ranks start.
    xsa::Config rank_cfg = cfg;
    rank_cfg.train.batch_size /= opt.ranks;
    xsa::check_ranks_fit(opt.ranks, xsa::estimate_memory(rank_cfg, data.meta.vocab_size),
                         static_cast<int>(cfg.attention.variants.size()) + 1, xsa::machine_limits());
    return xsa::run_local_ranks(xsa::rank_command(opt.argv), opt.ranks, "xsa-train");
  }
  const bool quiet = opt.quiet || ranks.rank != 0;

  if (!quiet) {
    std::cout << "xsa-train: " << cfg.name << ": " << cfg.attention.variants.size() << " variants, "
              << cfg.train.steps << " steps of " << cfg.train.batch_size << "x" << cfg.data.seq_len
              << " tokens, data " << data.dir << " (vocab " << data.meta.vocab_size << "), memory ~"
              << xsa::format_bytes(memory.total)
              << (available ? " of " + xsa::format_bytes(*available) + " available" : std::string())
              << std::endl;
  }
  // From here SIGTERM checkpoints at the next step boundary and exits with kExitInterrupted (75).
  xsa::install_stop_signal_handler();
  xsa::ExperimentOptions options{out, opt.resume, quiet, xsa::config_to_yaml(cfg), ranks};
  xsa::ExperimentResult results = xsa::run_paired_experiment(cfg, data, decoder, options);
  if (ranks.rank != 0) return xsa::kExitOk;
  xsa::write_file_atomic(out + "/results.json", xsa::to_json(results).dump(1) + "\n");
  if (!quiet) print_summary(results, out);
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = xsa::rank_program_name("xsa-train");
  return xsa::cli_main<TrainOptions>(argc, argv, program.c_str(), setup_train_command,
                                     [&](TrainOptions& opt) {
                                       opt.argv.assign(argv, argv + argc);
                                       return run_train(opt);
                                     });
}
