#pragma once
// The sentencepiece BPE tokenizer: training from memory and encoding. The only code that includes
// sentencepiece (xsa-prepare only; never linked together with LibTorch).
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace xsa {

// The smallest vocabulary sentencepiece can build here: <unk>, <s>, </s> and the 256 byte-fallback pieces,
// plus at least one character. The largest one whose ids fit uint16 token files.
constexpr int kMinVocabSize = 3 + 256 + 1;
constexpr int kMaxVocabSize = 65536;

struct BpeTrainingOptions {
  int vocab_size = 4096;
  // Fixed, so that the model does not depend on the machine (recorded in the model and in meta.json).
  int num_threads = 1;
  // Upper bound on training sentences (lines); above it an evenly spaced, deterministic subset is used.
  // sentencepiece's own sampling is seeded from std::random_device, so it is switched off.
  std::size_t max_sentences = 4'000'000;
  bool verbose = false;  // let sentencepiece's INFO log through
};

// The settings recorded in meta.json (llama2.c's, with whitespace kept exactly).
nlohmann::ordered_json bpe_settings_json(const BpeTrainingOptions& options);

// The training sentences: the non-empty lines of the stories (as llama2.c, which trains on text lines),
// evenly subsampled down to `max_sentences`.
std::vector<std::string_view> training_sentences(const std::vector<std::string_view>& stories,
                                                 std::size_t max_sentences);

// Trains a BPE model on `sentences`; returns the serialized model (tokenizer.model). The model depends only
// on the sentences and the options (no paths inside). Throws InputError if sentencepiece cannot reach the
// vocabulary size on this data, RuntimeFailure for other sentencepiece failures.
std::string train_bpe_tokenizer(const std::vector<std::string_view>& sentences,
                                const BpeTrainingOptions& options);

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& serialized_model);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  int vocab_size() const;
  int bos_id() const;
  int eos_id() const;
  int unk_id() const;
  // Ids of one story, without BOS. Thread-safe.
  std::vector<int> encode(std::string_view text) const;
  // sentencepiece's own decoding (the reference that PiecesDecoder must match).
  std::string decode(const std::vector<int>& ids) const;
  // pieces.json: everything PiecesDecoder needs to decode without sentencepiece.
  nlohmann::ordered_json pieces_json() const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace xsa
