// xsa-prepare: TinyStories text -> tokenizer + uint16 token files (docs/guide.md "Data", README.md
// "Commands"; docs/ARCHITECTURE.md "Data flow"), and --decode to turn ids back into text. Links
// sentencepiece, never LibTorch.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/tokenizer/prepare.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"

namespace {

struct Options {
  xsa::PrepareOptions prepare;
  xsa::DecodeOptions decode;
};

void setup_cli(CLI::App& app, Options& options) {
  app.description(
      "Train a sentencepiece BPE tokenizer on TinyStories train files and encode train and val into uint16 "
      "token files.\n  xsa-prepare --train FILE... --val FILE... [--vocab-size N] --out DIR [--force]\n"
      "  xsa-prepare --decode DIR [ID...]   (ids from stdin when none are given)\n"
      "  xsa-prepare --decode DIR --split val\n"
      "Inputs: .txt (stories separated by <|endoftext|> lines) or llama2.c .json shards ([{\"story\": "
      "...}]).");
  app.set_version_flag("--version",
                       std::string("xsa-prepare ") + XSA_VERSION + " (sentencepiece; no LibTorch)");
  auto& p = options.prepare;
  app.add_option("--train", p.train_files, "train files; the tokenizer is trained on these only")
      ->expected(1, -1);
  app.add_option("--val", p.val_files, "validation files")->expected(1, -1);
  app.add_option("--vocab-size", p.vocab_size, "tokenizer vocabulary size (260..65536)")
      ->capture_default_str();
  app.add_option("--out", p.out_dir, "output folder, e.g. data/tinystories");
  app.add_flag("--force", p.force, "replace an existing output folder (at the very end)");
  app.add_option("--threads", p.encode_threads,
                 "encoding threads (0: all cores; output does not depend on it)")
      ->capture_default_str();
  app.add_option("--tokenizer-threads", p.tokenizer_threads, "sentencepiece training threads (recorded)")
      ->capture_default_str();
  app.add_option("--max-sentences", p.max_sentences,
                 "at most this many text lines train the tokenizer (evenly spaced subset)")
      ->capture_default_str();
  app.add_flag("--verbose", p.verbose, "show sentencepiece's training log");
  app.add_option("--decode", options.decode.dir,
                 "decode token ids with the tokenizer in this prepared folder");
  app.add_option("--split", options.decode.split, "with --decode: decode the whole train or val token file");
  app.add_option("ids", options.decode.ids, "with --decode: token ids (default: read from stdin)");
}

int run(Options& options) {
  if (!options.decode.dir.empty()) {
    const auto& p = options.prepare;
    if (!p.train_files.empty() || !p.val_files.empty() || !p.out_dir.empty()) {
      throw xsa::InputError("--decode cannot be combined with --train, --val or --out");
    }
    xsa::run_decode(options.decode, std::cin, std::cout);
    std::cout.flush();
    if (!std::cout) throw xsa::RuntimeFailure("cannot write to stdout");
    return xsa::kExitOk;
  }
  if (!options.decode.ids.empty() || !options.decode.split.empty()) {
    throw xsa::InputError("token ids and --split need --decode DIR");
  }
  if (options.prepare.out_dir.empty())
    throw xsa::InputError("--out is required (e.g. --out data/tinystories)");
  xsa::run_prepare(options.prepare, std::cout);
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return xsa::cli_main<Options>(argc, argv, "xsa-prepare", setup_cli, run);
}
