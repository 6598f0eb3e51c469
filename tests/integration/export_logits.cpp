// xsa-export-logits RUN_DIR VARIANT DATA_DIR WINDOWS OUT_FILE: what the C++ model of one trained variant (its
// final checkpoint, loaded as xsa-export loads it) computes on the first WINDOWS validation windows of
// DATA_DIR (starts 0, T, 2T, ...): the logits (WINDOWS, T, V) as raw little-endian float32 in OUT_FILE. The
// export test (tests/integration/export_test.py) compares them with the PyTorch reference model rebuilt from
// the exported config.json and model.safetensors.
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/data/token_data.h"
#include "xsa/train/evaluation.h"
#include "xsa/train/trained_variant.h"
#include "xsa/util/fs.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: xsa-export-logits RUN_DIR VARIANT DATA_DIR WINDOWS OUT_FILE\n";
    return 2;
  }
  try {
    xsa::TrainedVariant trained = xsa::load_trained_variant(argv[1], argv[2]);
    const int T = trained.experiment.config.data.seq_len;
    xsa::TokenDataset data = xsa::TokenDataset::load(argv[3]);
    const int windows = std::stoi(argv[4]);
    std::vector<std::uint64_t> starts;
    for (int k = 0; k < windows; ++k) starts.push_back(static_cast<std::uint64_t>(k) * T);
    auto batch = xsa::make_batch(*data.val, starts.data(), windows, T);  // (W, T+1)
    torch::NoGradGuard no_grad;
    trained.model->eval();
    auto logits = trained.model->forward(batch.narrow(1, 0, T)).contiguous();  // (W, T, V)
    xsa::write_file_atomic(argv[5], std::string(static_cast<const char*>(logits.data_ptr()),
                                                static_cast<size_t>(logits.numel()) * sizeof(float)));
    std::cout << logits.size(0) << " " << logits.size(1) << " " << logits.size(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "xsa-export-logits: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
