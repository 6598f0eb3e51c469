// xsa-export: one trained variant of a finished run as model.safetensors + config.json + tokenizer + model
// card (docs/guide.md "Export").
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "xsa/train/export.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"

namespace {

void setup_export_command(CLI::App& app, xsa::ExportRequest& opt) {
  app.description(
      "Export one variant of a finished xsa-train run: model.safetensors (fp32), config.json, the tokenizer\n"
      "(tokenizer.model, pieces.json) and a model card (README.md), written atomically into --out.");
  app.add_option("run", opt.run_dir, "the run's folder (holds results.json and checkpoints/)")->required();
  app.add_option("--variant", opt.variant, "which variant to export (sa, xsa, lambda=0.5, learned, ...)")
      ->required();
  app.add_option("--out,-o", opt.out_dir, "the folder to write")->required();
  app.add_option("--data", opt.data_dir,
                 "the run's prepared data, for its tokenizer (default: results.json's data.dir)");
  app.add_flag("--force", opt.force, "replace an existing --out folder");
  app.set_version_flag("--version", std::string("xsa ") + XSA_VERSION + " (LibTorch " + TORCH_VERSION + ")");
}

int run_export(const xsa::ExportRequest& request) {
  const xsa::ExportedModel model = xsa::export_variant(request);
  std::cout << "xsa-export: " << request.run_dir << " variant " << model.variant << " -> " << request.out_dir
            << " (model.safetensors " << xsa::file_size(request.out_dir + "/model.safetensors")
            << " bytes, config.json, tokenizer.model, pieces.json, README.md)\n";
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return xsa::cli_main<xsa::ExportRequest>(argc, argv, "xsa-export", setup_export_command, run_export);
}
