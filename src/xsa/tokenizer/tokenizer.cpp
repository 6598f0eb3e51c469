#include "xsa/tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unordered_map>

#include "xsa/util/error.h"

namespace xsa {
namespace {

// Feeds the training sentences to sentencepiece from memory, so the model records no input paths.
class SentenceListIterator : public sentencepiece::SentenceIterator {
 public:
  explicit SentenceListIterator(const std::vector<std::string_view>& sentences) : sentences_(sentences) {
    load_current();
  }
  bool done() const override { return index_ >= sentences_.size(); }
  void Next() override {
    ++index_;
    load_current();
  }
  const std::string& value() const override { return current_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void load_current() {
    if (!done()) current_.assign(sentences_[index_]);
  }
  const std::vector<std::string_view>& sentences_;
  std::size_t index_ = 0;
  std::string current_;
};

std::unordered_map<std::string, std::string> trainer_arguments(const BpeTrainingOptions& options) {
  return {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(options.vocab_size)},
      // llama2.c's settings:
      {"character_coverage", "1.0"},
      {"split_digits", "true"},
      {"byte_fallback", "true"},
      {"normalization_rule_name", "identity"},
      {"allow_whitespace_only_pieces", "true"},
      {"unk_surface", " \xE2\x81\x87 "},
      {"self_test_sample_size", "0"},
      // Whitespace is kept exactly, so decoding reproduces the text byte for byte.
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      // Determinism: all sentences we pass (we subsample ourselves), no shuffling, fixed threads.
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"num_threads", std::to_string(options.num_threads)},
      {"max_sentence_length", "16384"},
      // No model_prefix: training returns the model in memory, so it records no output path.
      {"minloglevel", options.verbose ? "0" : "2"},
  };
}

}  // namespace

nlohmann::ordered_json bpe_settings_json(const BpeTrainingOptions& options) {
  nlohmann::ordered_json settings;
  settings["library"] = "sentencepiece";
  settings["model_type"] = "bpe";
  settings["vocab_size"] = options.vocab_size;
  settings["character_coverage"] = 1.0;
  settings["split_digits"] = true;
  settings["byte_fallback"] = true;
  settings["normalization_rule_name"] = "identity";
  settings["remove_extra_whitespaces"] = false;
  settings["allow_whitespace_only_pieces"] = true;
  settings["add_dummy_prefix"] = true;
  settings["num_threads"] = options.num_threads;
  settings["max_sentences"] = options.max_sentences;
  return settings;
}

std::vector<std::string_view> training_sentences(const std::vector<std::string_view>& stories,
                                                 std::size_t max_sentences) {
  std::vector<std::string_view> lines;
  for (std::string_view story : stories) {
    std::size_t begin = 0;
    while (begin <= story.size()) {
      std::size_t end = story.find('\n', begin);
      if (end == std::string_view::npos) end = story.size();
      if (end > begin) lines.push_back(story.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  if (max_sentences == 0 || lines.size() <= max_sentences) return lines;
  // Evenly spaced subset: line floor(k * n / max) for k = 0..max-1 — deterministic and spread over all files.
  std::vector<std::string_view> subset;
  subset.reserve(max_sentences);
  for (std::size_t k = 0; k < max_sentences; ++k) {
    subset.push_back(
        lines[static_cast<std::size_t>((static_cast<unsigned __int128>(k) * lines.size()) / max_sentences)]);
  }
  return subset;
}

std::string train_bpe_tokenizer(const std::vector<std::string_view>& sentences,
                                const BpeTrainingOptions& options) {
  // Validated here because sentencepiece aborts (LOG(FATAL)) on some invalid values instead of returning.
  if (options.vocab_size < kMinVocabSize || options.vocab_size > kMaxVocabSize) {
    throw InputError("--vocab-size " + std::to_string(options.vocab_size) + ": expected " +
                     std::to_string(kMinVocabSize) + ".." + std::to_string(kMaxVocabSize) +
                     " (259 ids are reserved for <unk>, <s>, </s> and byte fallback; ids must fit uint16)");
  }
  if (options.num_threads < 1) throw InputError("tokenizer threads must be >= 1");
  if (sentences.empty()) throw InputError("the train files contain no text to train the tokenizer on");

  sentencepiece::SetRandomGeneratorSeed(1337);  // BPE draws no random numbers; this is belt and braces
  SentenceListIterator iterator(sentences);
  std::string serialized_model;
  auto status =
      sentencepiece::SentencePieceTrainer::Train(trainer_arguments(options), &iterator, &serialized_model);
  if (!status.ok()) {
    std::string message = status.message();
    // Drop sentencepiece's "./src/file.cc(123) [condition] " prefix; keep its explanation.
    const std::size_t bracket = message.find("] ");
    if (message.rfind("./src/", 0) == 0 && bracket != std::string::npos) message.erase(0, bracket + 2);
    // e.g. "Vocabulary size too high (5000). Please set it to a value <= 1234." for a small corpus.
    if (message.find("ocabulary size") != std::string::npos) {
      throw InputError("--vocab-size " + std::to_string(options.vocab_size) +
                       " cannot be reached on the train files: " + message);
    }
    throw RuntimeFailure("sentencepiece training failed: " + message);
  }
  if (serialized_model.empty()) throw RuntimeFailure("sentencepiece training produced no model");
  return serialized_model;
}

Tokenizer::Tokenizer(const std::string& serialized_model)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  auto status = processor_->LoadFromSerializedProto(serialized_model);
  if (!status.ok()) throw InputError(std::string("cannot load the tokenizer model: ") + status.message());
}

Tokenizer::~Tokenizer() = default;

int Tokenizer::vocab_size() const {
  return processor_->GetPieceSize();
}
int Tokenizer::bos_id() const {
  return processor_->bos_id();
}
int Tokenizer::eos_id() const {
  return processor_->eos_id();
}
int Tokenizer::unk_id() const {
  return processor_->unk_id();
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  auto status = processor_->Encode(text, &ids);
  if (!status.ok()) throw RuntimeFailure(std::string("sentencepiece encoding failed: ") + status.message());
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string text;
  auto status = processor_->Decode(ids, &text);
  if (!status.ok()) throw RuntimeFailure(std::string("sentencepiece decoding failed: ") + status.message());
  return text;
}

nlohmann::ordered_json Tokenizer::pieces_json() const {
  nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (int id = 0; id < vocab_size(); ++id) {
    pieces.push_back(processor_->IdToPiece(id));
    const char* type = processor_->IsByte(id)      ? "byte"
                       : processor_->IsControl(id) ? "control"
                       : processor_->IsUnknown(id) ? "unknown"
                       : processor_->IsUnused(id)  ? "unused"
                                                   : "normal";
    types.push_back(type);
  }
  nlohmann::ordered_json doc;
  doc["format"] = "xsa.pieces/1";
  doc["vocab_size"] = vocab_size();
  doc["unk_id"] = unk_id();
  doc["bos_id"] = bos_id();
  doc["eos_id"] = eos_id();
  doc["unk_surface"] = " \xE2\x81\x87 ";
  doc["pieces"] = std::move(pieces);
  doc["types"] = std::move(types);
  return doc;
}

}  // namespace xsa
