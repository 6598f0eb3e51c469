// xsa-prepare: TinyStories text or any collection of documents -> tokenizer + uint16 token files
// (docs/guide.md "Data", README.md "Commands"; docs/ARCHITECTURE.md "Data flow"), and --decode to turn ids
// back into text. Links sentencepiece, never LibTorch.
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
  // The options that only mean something with --documents / --document-list (refused with --train).
  std::vector<CLI::Option*> documents_only;
};

void setup_cli(CLI::App& app, Options& options) {
  app.description(
      "Train a sentencepiece BPE tokenizer on the train split and encode train and val into uint16 token "
      "files.\n  xsa-prepare --train FILE... --val FILE... [--vocab-size N] --out DIR [--force]\n"
      "  xsa-prepare --documents PATH... | --document-list FILE... [--doc-separator MARKER]\n"
      "              [--val-fraction F] [--split-seed N] [--max-document-bytes N] --out DIR\n"
      "  xsa-prepare --decode DIR [ID...]   (ids from stdin when none are given)\n"
      "  xsa-prepare --decode DIR --split val\n"
      "--train/--val inputs: .txt (stories separated by <|endoftext|> lines) or llama2.c .json shards "
      "([{\"story\": ...}]).\n"
      "--documents: a file is a document (or several, split at --doc-separator lines), a folder is every "
      "file under it in sorted path order; the validation split is whole documents.");
  app.set_version_flag("--version",
                       std::string("xsa-prepare ") + XSA_VERSION + " (sentencepiece; no LibTorch)");
  auto& p = options.prepare;
  app.add_option("--train", p.train_files, "train files; the tokenizer is trained on these only")
      ->expected(1, -1);
  app.add_option("--val", p.val_files, "validation files")->expected(1, -1);
  app.add_option("--documents", p.documents.paths,
                 "document files or folders (every file under a folder, recursively, sorted by path)")
      ->expected(1, -1);
  app.add_option("--document-list", p.documents.list_files,
                 "text files naming one document file or folder a line (relative to the list's folder)")
      ->expected(1, -1);
  options.documents_only = {
      app.add_option("--doc-separator", p.documents.separator,
                     "a line equal to MARKER (trimmed) separates documents inside a file"),
      app.add_option("--val-fraction", p.val_fraction,
                     "share of the documents (whole) that form the validation split, 0 < F < 1")
          ->capture_default_str(),
      app.add_option("--split-seed", p.split_seed, "seed of the hash that picks the validation documents")
          ->capture_default_str(),
      app.add_option("--max-document-bytes", p.documents.max_document_bytes, "a longer document is refused")
          ->capture_default_str(),
  };
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
    if (!p.train_files.empty() || !p.val_files.empty() || !p.out_dir.empty() || !p.documents.paths.empty() ||
        !p.documents.list_files.empty()) {
      throw xsa::InputError("--decode cannot be combined with --train, --val, --documents or --out");
    }
    xsa::run_decode(options.decode, std::cin, std::cout);
    std::cout.flush();
    if (!std::cout) throw xsa::RuntimeFailure("cannot write to stdout");
    return xsa::kExitOk;
  }
  const auto& documents = options.prepare.documents;
  if (documents.paths.empty() && documents.list_files.empty()) {
    for (const CLI::Option* option : options.documents_only) {
      if (option->count() > 0)
        throw xsa::InputError(option->get_name() + " needs --documents or --document-list");
    }
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
