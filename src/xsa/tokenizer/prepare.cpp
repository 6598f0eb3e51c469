#include "xsa/tokenizer/prepare.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "xsa/config/resources.h"
#include "xsa/data/pieces.h"
#include "xsa/data/token_data.h"
#include "xsa/tokenizer/stories.h"
#include "xsa/tokenizer/tokenizer.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/sha256.h"
#include "xsa/util/staging_folder.h"
#include "xsa/util/timing.h"
#include "xsa/util/utf8.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

std::string format_seconds(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << seconds << " s";
  return s.str();
}

std::string format_megabytes(std::uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / 1e6 << " MB";
  return s.str();
}

void write_binary_file(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.flush();
  if (!out) throw RuntimeFailure(path + ": write failed (" + std::strerror(errno) + ")");
}

void write_text_file(const std::string& path, const std::string& text) {
  write_binary_file(path, text.data(), text.size());
}

struct SplitTokens {
  std::vector<std::uint16_t> tokens;
  std::uint64_t stories = 0;
  std::vector<std::uint64_t> lengths;  // per document, its BOS included
};

// Encodes the documents of one split, BOS before each, in order; threads work on contiguous ranges so the
// result does not depend on the thread count.
SplitTokens encode_split(const Tokenizer& tokenizer, const std::vector<std::string_view>& stories,
                         int threads) {
  const std::size_t n = stories.size();
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(threads, n));
  std::vector<std::vector<std::uint16_t>> parts(workers);
  std::vector<std::uint64_t> lengths(n);
  std::vector<std::exception_ptr> errors(workers);
  const auto bos = static_cast<std::uint16_t>(tokenizer.bos_id());
  auto encode_range = [&](std::size_t worker) {
    try {
      const std::size_t begin = n * worker / workers, end = n * (worker + 1) / workers;
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t before = parts[worker].size();
        parts[worker].push_back(bos);
        for (int id : tokenizer.encode(stories[i])) parts[worker].push_back(static_cast<std::uint16_t>(id));
        lengths[i] = parts[worker].size() - before;
      }
    } catch (...) {
      errors[worker] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(encode_range, w);
  encode_range(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  SplitTokens result;
  result.stories = n;
  result.lengths = std::move(lengths);
  std::size_t total = 0;
  for (const auto& part : parts) total += part.size();
  result.tokens.reserve(total);
  for (const auto& part : parts) result.tokens.insert(result.tokens.end(), part.begin(), part.end());
  return result;
}

// The text of both splits, whichever way it was given, and what meta.json records about where it came from.
struct Corpus {
  std::vector<std::string_view> train, val;
  std::vector<std::shared_ptr<const std::string>> storage;  // owns the text the views point into
  std::uint64_t bytes = 0;                                  // of the input files
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  nlohmann::ordered_json description;  // meta.json "corpus" (documents mode only)
};

Corpus read_tinystories(const PrepareOptions& options, std::ostream& progress) {
  progress << "[1/4] reading " << options.train_files.size() << " train + " << options.val_files.size()
           << " val files" << std::endl;
  Corpus corpus;
  std::uint64_t split_bytes[2] = {0, 0};
  for (const auto* list : {&options.train_files, &options.val_files}) {
    const bool is_train = list == &options.train_files;
    for (const auto& path : *list) {
      const StoryFile file = read_story_file(path, is_train ? "train" : "val");
      auto& stories = is_train ? corpus.train : corpus.val;
      stories.insert(stories.end(), file.stories.begin(), file.stories.end());
      split_bytes[is_train ? 0 : 1] += file.bytes;
      corpus.storage.push_back(file.storage);
      corpus.inputs.push_back({{"path", file.path},
                               {"split", file.split},
                               {"bytes", file.bytes},
                               {"sha256", file.sha256},
                               {"stories", file.stories.size()}});
    }
  }
  corpus.bytes = split_bytes[0] + split_bytes[1];
  progress << "      train: " << corpus.train.size() << " stories, " << format_megabytes(split_bytes[0])
           << "; val: " << corpus.val.size() << " stories, " << format_megabytes(split_bytes[1]);
  return corpus;
}

// The document files of documents mode, found before the output folder is touched: each, reached through a
// list or a symbolic link too, must lie apart from --out, which --force replaces.
std::vector<std::string> collect_documents_apart_from_output(const PrepareOptions& options) {
  std::vector<std::string> paths = collect_document_files(options.documents);
  std::vector<NamedPath> inputs;
  inputs.reserve(paths.size());
  for (const auto& path : paths) inputs.push_back({path, "the document file"});
  require_output_apart({options.out_dir, "--out"}, inputs);
  return paths;
}

Corpus read_documents(const PrepareOptions& options, const std::vector<std::string>& paths,
                      std::ostream& progress) {
  const DocumentSources& sources = options.documents;
  progress << "[1/4] reading " << paths.size() << " document files" << std::endl;
  std::vector<DocumentFile> files;
  std::vector<std::string_view> all;
  std::uint64_t skipped = 0;
  Corpus corpus;
  for (const auto& path : paths) {
    files.push_back(read_document_file(path, sources.separator, sources.max_document_bytes));
    all.insert(all.end(), files.back().documents.begin(), files.back().documents.end());
    skipped += files.back().skipped_empty;
    corpus.bytes += files.back().bytes;
  }
  if (all.empty()) {
    throw InputError("empty corpus: the " + std::to_string(paths.size()) +
                     " document files hold no text (only whitespace)");
  }
  const std::vector<bool> is_val = choose_validation_documents(all, options.val_fraction, options.split_seed);

  std::size_t index = 0;
  for (const auto& file : files) {
    std::uint64_t val_documents = 0;
    for (const std::string_view document : file.documents) {
      if (is_val[index++]) {
        corpus.val.push_back(document);
        ++val_documents;
      } else {
        corpus.train.push_back(document);
      }
    }
    corpus.storage.push_back(file.storage);
    corpus.inputs.push_back({{"path", file.path},
                             {"bytes", file.bytes},
                             {"sha256", file.sha256},
                             {"documents", file.documents.size()},
                             {"val_documents", val_documents}});
  }
  nlohmann::ordered_json description;
  description["kind"] = "documents";
  description["paths"] = sources.paths;
  description["lists"] = sources.list_files;
  description["separator"] =
      sources.separator.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(sources.separator);
  description["max_document_bytes"] = sources.max_document_bytes;
  description["files"] = files.size();
  description["documents"] = all.size();
  description["empty_documents_skipped"] = skipped;
  description["validation"] = {{"rule", validation_split_rule()},
                               {"val_fraction", options.val_fraction},
                               {"seed", options.split_seed},
                               {"documents", corpus.val.size()}};
  corpus.description = std::move(description);
  progress << "      " << all.size() << " documents (" << skipped << " empty skipped), "
           << format_megabytes(corpus.bytes) << "; train: " << corpus.train.size()
           << " documents, val: " << corpus.val.size() << " documents (--val-fraction "
           << options.val_fraction << ", seed " << options.split_seed << ")";
  return corpus;
}

nlohmann::ordered_json file_record(const std::string& bytes_sha256, std::uint64_t bytes) {
  return {{"bytes", bytes}, {"sha256", bytes_sha256}};
}

bool documents_mode(const PrepareOptions& options) {
  return !options.documents.paths.empty() || !options.documents.list_files.empty();
}

// Every cheap check, before the disk is touched.
void validate_prepare_options(const PrepareOptions& options) {
  std::vector<NamedPath> inputs;
  if (documents_mode(options)) {
    if (!options.train_files.empty() || !options.val_files.empty())
      throw InputError("--documents/--document-list cannot be combined with --train/--val");
    require_val_fraction(options.val_fraction);
    if (options.documents.max_document_bytes < 1) throw InputError("--max-document-bytes: expected >= 1");
    const std::string& marker = options.documents.separator;
    if (printable(marker) != marker)
      throw InputError("--doc-separator \"" + printable(marker) +
                       "\": not valid UTF-8 or holds a control character (shown as \\xNN)");
    if (trim_ascii_whitespace(marker) != marker)  // a line break is refused above, as a control character
      throw InputError("--doc-separator \"" + marker +
                       "\": expected one line without surrounding whitespace (lines are compared trimmed)");
    for (const auto& path : options.documents.paths) {
      require_text_path(path, "--documents");
      if (!path_exists(path)) throw InputError(path + ": document path not found");
      inputs.push_back({path, "the document path"});
    }
    for (const auto& path : options.documents.list_files) {
      require_text_path(path, "--document-list");
      if (!path_exists(path)) throw InputError(path + ": document list not found");
      require_regular_file(path, "document list");
      inputs.push_back({path, "the document list"});
    }
  } else {
    if (options.train_files.empty())
      throw InputError("--train: at least one train file is required (or --documents for any collection)");
    if (options.val_files.empty()) throw InputError("--val: at least one val file is required");
  }
  if (options.vocab_size < kMinVocabSize || options.vocab_size > kMaxVocabSize) {
    throw InputError("--vocab-size " + std::to_string(options.vocab_size) + ": expected " +
                     std::to_string(kMinVocabSize) + ".." + std::to_string(kMaxVocabSize) +
                     " (259 ids are reserved for <unk>, <s>, </s> and byte fallback; ids must fit uint16)");
  }
  // Thread counts are bounded by the machine before any thread starts (a typo of 1000000 would start them).
  const int cores = machine_limits().cores;
  if (options.tokenizer_threads < 1 || options.tokenizer_threads > cores)
    throw InputError("--tokenizer-threads " + std::to_string(options.tokenizer_threads) + ": expected 1.." +
                     std::to_string(cores) + " (the cores this process may use)");
  if (options.encode_threads < 0 || options.encode_threads > cores)
    throw InputError("--threads " + std::to_string(options.encode_threads) +
                     ": expected 0 (all cores) or 1.." + std::to_string(cores) +
                     " (the cores this process may use)");
  if (options.max_sentences < 1) throw InputError("--max-sentences: expected >= 1");
  require_text_path(options.out_dir, "--out");
  for (const auto* list : {&options.train_files, &options.val_files}) {
    for (const auto& path : *list) {
      require_text_path(path, list == &options.train_files ? "--train" : "--val");
      if (!path_exists(path)) throw InputError(path + ": input file not found");
      require_regular_file(path, "input file");  // a FIFO, folder or device: refused before any work
    }
  }
  // --force replaces the output folder: an input inside it would be lost.
  for (const auto& path : options.train_files) inputs.push_back({path, "the train file"});
  for (const auto& path : options.val_files) inputs.push_back({path, "the val file"});
  require_output_apart({options.out_dir, "--out"}, inputs);
}

// The tokenizer trained on the train split only, with what meta.json records about its training.
struct TrainedTokenizer {
  BpeTrainingOptions settings;
  std::size_t training_lines = 0;
  std::string model;  // the serialized sentencepiece model (tokenizer.model)
};

TrainedTokenizer train_tokenizer(const PrepareOptions& options, const std::vector<std::string_view>& train,
                                 std::ostream& progress) {
  TrainedTokenizer out;
  out.settings.vocab_size = options.vocab_size;
  out.settings.num_threads = options.tokenizer_threads;
  out.settings.max_sentences = options.max_sentences;
  out.settings.verbose = options.verbose;
  const auto sentences = training_sentences(train, out.settings.max_sentences);
  out.training_lines = sentences.size();
  progress << "[2/4] training a BPE tokenizer, vocab " << out.settings.vocab_size << ", on "
           << sentences.size() << " lines" << std::endl;
  out.model = train_bpe_tokenizer(sentences, out.settings);
  return out;
}

// meta.json: counts, special ids, the tokenizer's hash and settings, the corpus and its document lengths,
// every input and output file's hash.
nlohmann::ordered_json dataset_meta(const Tokenizer& tokenizer, const TrainedTokenizer& trained,
                                    const Corpus& corpus, const SplitTokens& train, const SplitTokens& val,
                                    const std::string& pieces) {
  nlohmann::ordered_json meta;
  meta["format"] = "xsa.tokens/1";
  meta["token_dtype"] = "uint16le";
  meta["vocab_size"] = tokenizer.vocab_size();
  meta["bos_id"] = tokenizer.bos_id();
  meta["eos_id"] = tokenizer.eos_id();
  meta["unk_id"] = tokenizer.unk_id();
  meta["train_tokens"] = train.tokens.size();
  meta["val_tokens"] = val.tokens.size();
  // "stories" are the BOS-led units of the token files: stories for TinyStories, documents otherwise.
  meta["train_stories"] = train.stories;
  meta["val_stories"] = val.stories;
  meta["stories"] = {{"train", train.stories}, {"val", val.stories}};
  if (!corpus.description.is_null()) meta["corpus"] = corpus.description;
  meta["document_lengths"] = {
      {"unit", "tokens per document, its BOS included (they sum to the split's tokens)"},
      {"train", document_length_stats(train.lengths)},
      {"val", document_length_stats(val.lengths)}};
  meta["tokenizer_sha256"] = sha256_hex(trained.model);
  meta["tokenizer_bytes"] = trained.model.size();
  meta["tokenizer"] = bpe_settings_json(trained.settings);
  meta["tokenizer"]["training_lines"] = trained.training_lines;
  meta["inputs"] = corpus.inputs;
  // The bytes train.bin and val.bin hold, hashed in place (a copy would double a large corpus's memory).
  auto token_sha256 = [](const SplitTokens& split) {
    Sha256 hasher;
    hasher.update(split.tokens.data(), split.tokens.size() * sizeof(split.tokens[0]));
    return hasher.hex_digest();
  };
  meta["outputs"] = {{"train.bin", file_record(token_sha256(train), train.tokens.size() * 2)},
                     {"val.bin", file_record(token_sha256(val), val.tokens.size() * 2)},
                     {"pieces.json", file_record(sha256_hex(pieces), pieces.size())},
                     {"tokenizer.model", file_record(sha256_hex(trained.model), trained.model.size())}};
  meta["xsa_version"] = XSA_VERSION;
  return meta;
}

// One line per split: the length distribution's headline numbers.
void print_lengths(std::ostream& progress, const char* split, const SplitTokens& tokens) {
  const auto stats = document_length_stats(tokens.lengths);
  if (stats["count"] == 0) return;
  progress << "      " << split << " document lengths (tokens): median " << std::fixed << std::setprecision(0)
           << stats["median"].get<double>() << ", p90 " << stats["p90"].get<double>() << ", max "
           << stats["max"].get<std::uint64_t>()
           << "; share of tokens in documents longer than 16384: " << std::setprecision(3)
           << stats["share_of_tokens_in_documents_longer_than"]["16384"].get<double>() << std::endl;
}

// A documents corpus's validation split is a share of its documents, not of its tokens (whole documents): one
// line gives its share of the tokens, and a note follows when that is off by more than a factor of two, so
// that a split one long document dominates (or that holds only short ones) is seen before training on it.
void print_validation_share(std::ostream& progress, const SplitTokens& train, const SplitTokens& val,
                            double val_fraction) {
  const double share =
      static_cast<double>(val.tokens.size()) / static_cast<double>(train.tokens.size() + val.tokens.size());
  // Built apart from `progress`, whose format state the lines before left behind (fixed, any precision).
  std::ostringstream fraction, lines;
  fraction << val_fraction;  // as given: 0.05, 0.15
  lines << std::fixed << std::setprecision(1) << "      val: " << 100.0 * share
        << "% of the tokens, for --val-fraction " << fraction.str() << " of the documents\n";
  if (share > 2.0 * val_fraction || share < 0.5 * val_fraction) {
    lines << "      note: the validation split holds " << 100.0 * share << "% of the tokens, not about "
          << 100.0 * val_fraction << "%: its documents are " << (share > val_fraction ? "longer" : "shorter")
          << " than the corpus's on average (the split is whole documents; --split-seed picks another)\n";
  }
  progress << lines.str() << std::flush;
}

}  // namespace

void run_prepare(const PrepareOptions& options, std::ostream& progress) {
  validate_prepare_options(options);
  const int encode_threads = options.encode_threads > 0 ? options.encode_threads : machine_limits().cores;

  const auto start = Clock::now();
  const std::vector<std::string> document_files =
      documents_mode(options) ? collect_documents_apart_from_output(options) : std::vector<std::string>{};
  StagingFolder staging(options.out_dir, options.force);

  // ---- 1. read ----
  auto stage_start = Clock::now();
  const Corpus corpus = documents_mode(options) ? read_documents(options, document_files, progress)
                                                : read_tinystories(options, progress);
  progress << " (" << format_seconds(seconds_since(stage_start)) << ")" << std::endl;

  // ---- 2. train the tokenizer on the train split only ----
  stage_start = Clock::now();
  const TrainedTokenizer trained = train_tokenizer(options, corpus.train, progress);
  const Tokenizer tokenizer(trained.model);
  if (tokenizer.vocab_size() != options.vocab_size) {
    throw InputError("--vocab-size " + std::to_string(options.vocab_size) +
                     " cannot be reached on the train files (" + std::to_string(tokenizer.vocab_size()) +
                     " pieces)");
  }
  write_text_file(staging.file("tokenizer.model"), trained.model);
  progress << "      done (" << format_seconds(seconds_since(stage_start)) << ")" << std::endl;

  // ---- 3. encode both splits, BOS before each story ----
  stage_start = Clock::now();
  progress << "[3/4] encoding with " << encode_threads << " threads" << std::endl;
  const SplitTokens train = encode_split(tokenizer, corpus.train, encode_threads);
  const SplitTokens val = encode_split(tokenizer, corpus.val, encode_threads);
  const double encode_seconds = seconds_since(stage_start);
  progress << "      train: " << train.tokens.size() << " tokens (" << std::fixed << std::setprecision(1)
           << static_cast<double>(train.tokens.size()) / static_cast<double>(train.stories)
           << " per story); val: " << val.tokens.size() << " tokens (" << format_seconds(encode_seconds)
           << ", " << std::setprecision(0)
           << static_cast<double>(corpus.bytes) / 1e6 / std::max(encode_seconds, 1e-9) << " MB/s)"
           << std::endl;
  print_lengths(progress, "train", train);
  print_lengths(progress, "val", val);
  if (documents_mode(options)) print_validation_share(progress, train, val, options.val_fraction);

  // ---- 4. write ----
  progress << "[4/4] writing " << options.out_dir << std::endl;
  write_binary_file(staging.file("train.bin"), train.tokens.data(), train.tokens.size() * 2);
  write_binary_file(staging.file("val.bin"), val.tokens.data(), val.tokens.size() * 2);
  const std::string pieces = tokenizer.pieces_json().dump(1) + "\n";
  write_text_file(staging.file("pieces.json"), pieces);
  const auto meta = dataset_meta(tokenizer, trained, corpus, train, val, pieces);
  write_text_file(staging.file("meta.json"), meta.dump(2) + "\n");

  staging.commit();
  progress << "prepared " << options.out_dir << ": vocab " << tokenizer.vocab_size() << ", train "
           << train.tokens.size() << " tokens / " << train.stories << " stories, val " << val.tokens.size()
           << " tokens / " << val.stories << " stories (" << format_seconds(seconds_since(start)) << " total)"
           << std::endl;
}

void run_decode(const DecodeOptions& options, std::istream& in, std::ostream& out) {
  const PiecesDecoder decoder = PiecesDecoder::load(options.dir);
  const std::string separator_line = "\n" + std::string(kStorySeparator) + "\n";
  if (!options.split.empty()) {
    if (options.split != "train" && options.split != "val") {
      throw InputError("--split " + options.split + ": expected train or val");
    }
    if (!options.ids.empty()) throw InputError("give either token ids or --split, not both");
    const DatasetMeta meta = read_meta(options.dir);
    const bool is_train = options.split == "train";
    const TokenFile file(options.dir + "/" + options.split + ".bin",
                         is_train ? meta.train_tokens : meta.val_tokens, meta.vocab_size);
    const std::vector<int> ids(file.data(), file.data() + file.size());
    for (const auto& story : decoder.decode_stories(ids)) out << story << separator_line;
    return;
  }

  std::vector<std::string> words = options.ids;
  if (words.empty()) {
    std::string word;
    while (in >> word) words.push_back(word);
  }
  std::vector<int> ids;
  for (const auto& word : words) {
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(word.c_str(), &end, 10);
    if (word.empty() || *end != '\0' || errno != 0 || value < 0 || value >= decoder.vocab_size()) {
      throw InputError("token id \"" + word + "\": expected an integer in [0, " +
                       std::to_string(decoder.vocab_size()) + ")");
    }
    ids.push_back(static_cast<int>(value));
  }
  const auto stories = decoder.decode_stories(ids);
  for (std::size_t i = 0; i < stories.size(); ++i) {
    if (i > 0) out << separator_line;
    out << stories[i];
  }
  if (!stories.empty()) out << "\n";
}

}  // namespace xsa
