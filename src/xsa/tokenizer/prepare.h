#pragma once
// xsa-prepare's two jobs: turning text (TinyStories train/val files, or any collection of documents) into a
// token data folder (docs/ARCHITECTURE.md "Data flow"), and decoding ids back to text. Kept out of main() so
// the steps can be tested.
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "xsa/tokenizer/documents.h"

namespace xsa {

struct PrepareOptions {
  // TinyStories mode: the splits as given (.txt with <|endoftext|> lines, or llama2.c .json shards).
  std::vector<std::string> train_files;
  std::vector<std::string> val_files;
  // Documents mode (when documents.paths or documents.list_files is non-empty): one corpus, its validation
  // split chosen by choose_validation_documents.
  DocumentSources documents;
  double val_fraction = 0.05;
  std::uint64_t split_seed = 0;
  int vocab_size = 4096;
  std::string out_dir;
  bool force = false;                     // replace an existing out_dir (at the very end)
  int encode_threads = 0;                 // 0: all cores; the output never depends on it
  int tokenizer_threads = 1;              // sentencepiece's num_threads, recorded in the model
  std::size_t max_sentences = 4'000'000;  // tokenizer training lines (evenly subsampled above this)
  bool verbose = false;                   // sentencepiece's own log
};

// Reads, trains, encodes and writes out_dir atomically (a sibling temporary folder renamed into place).
// Progress lines go to `progress`. On any error nothing is left behind: no out_dir, no temporary folder.
void run_prepare(const PrepareOptions& options, std::ostream& progress);

struct DecodeOptions {
  std::string dir;               // a prepared data folder (pieces.json; meta.json + token files for `split`)
  std::vector<std::string> ids;  // token ids; empty: read whitespace-separated ids from the input stream
  std::string split;             // "train" or "val": decode that whole token file instead of ids
};

// Prints the decoded text. Ids: the stories separated by "<|endoftext|>" lines. A split: every story followed
// by a "<|endoftext|>" line, i.e. the TinyStories .txt format (decoding val.bin gives back the val text).
void run_decode(const DecodeOptions& options, std::istream& in, std::ostream& out);

}  // namespace xsa
