// xsa-train: one paired experiment (every attention variant from the same init and batch order).
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/config/resources.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/report/run_summary.h"
#include "xsa/train/trainer.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/stop_signal.h"

namespace {

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool resume = false;
  bool force = false;
  bool quiet = false;
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
  // train.out is where xsa-sweep sends a point's output before starting the trainer in that folder.
  bool has_run = xsa::path_exists(out + "/config.yaml") || xsa::path_exists(out + "/log.jsonl") ||
                 xsa::path_exists(out + "/train.out");
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

int run_train(const TrainOptions& opt) {
  // Everything that can be wrong with the input is checked before the output folder is touched.
  xsa::Config cfg = xsa::load_config(opt.config_path, opt.overrides);
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
  check_output_folder(out, opt);

  if (!opt.quiet) {
    std::cout << "xsa-train: " << cfg.name << ": " << cfg.attention.variants.size() << " variants, "
              << cfg.train.steps << " steps of " << cfg.train.batch_size << "x" << cfg.data.seq_len
              << " tokens, data " << data.dir << " (vocab " << data.meta.vocab_size << "), memory ~"
              << xsa::format_bytes(memory.total)
              << (available ? " of " + xsa::format_bytes(*available) + " available" : std::string())
              << std::endl;
  }
  // From here SIGTERM checkpoints at the next step boundary and exits with kExitInterrupted (75).
  xsa::install_stop_signal_handler();
  xsa::ExperimentOptions options{out, opt.resume, opt.quiet, xsa::config_to_yaml(cfg)};
  xsa::ExperimentResult results = xsa::run_paired_experiment(cfg, data, decoder, options);
  xsa::write_file_atomic(out + "/results.json", xsa::to_json(results).dump(1) + "\n");
  if (!opt.quiet) print_summary(results, out);
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return xsa::cli_main<TrainOptions>(argc, argv, "xsa-train", setup_train_command, run_train);
}
