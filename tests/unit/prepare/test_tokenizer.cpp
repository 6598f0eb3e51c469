// The BPE tokenizer on hand-written fixtures: exact round trips (through sentencepiece and through the
// sentencepiece-free PiecesDecoder), determinism, the llama2.c settings and training-line subsampling.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "xsa/data/pieces.h"
#include "xsa/tokenizer/stories.h"
#include "xsa/tokenizer/tokenizer.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

std::vector<std::string_view> fixture_train_stories() {
  static const StoryFile a = read_story_file(XSA_FIXTURES_DIR "/prepare/train_a.txt", "train");
  static const StoryFile b = read_story_file(XSA_FIXTURES_DIR "/prepare/train_b.json", "train");
  std::vector<std::string_view> stories(a.stories.begin(), a.stories.end());
  stories.insert(stories.end(), b.stories.begin(), b.stories.end());
  return stories;
}

const std::string& fixture_model() {
  static const std::string model = [] {
    BpeTrainingOptions options;
    options.vocab_size = 400;
    return train_bpe_tokenizer(training_sentences(fixture_train_stories(), options.max_sentences), options);
  }();
  return model;
}

PiecesDecoder decoder_from(const Tokenizer& tokenizer) {
  const auto doc = tokenizer.pieces_json();
  std::vector<std::string> pieces = doc["pieces"].get<std::vector<std::string>>();
  std::vector<PieceType> types;
  for (const auto& t : doc["types"]) {
    const std::string name = t.get<std::string>();
    types.push_back(name == "byte"      ? PieceType::kByte
                    : name == "control" ? PieceType::kControl
                    : name == "unknown" ? PieceType::kUnknown
                                        : PieceType::kNormal);
  }
  return PiecesDecoder(pieces, types, doc["bos_id"].get<int>(), doc["eos_id"].get<int>());
}

// Texts the tokenizer never saw, with everything that tends to break exact round trips.
const std::vector<std::string> kTrickyTexts = {
    "Pip saw a bird.",
    "  two leading spaces, and two trailing  ",
    "Line one.\n\nLine three after an empty line.\n",
    "\ttabs\tand  double  spaces",
    "Digits 2024 and 3.14159",
    "Ève, Ça va? 東京 Мурка 🙂 — “quotes” ¡olé!",
    "Zürich ñandú Ωμέγα \xF0\x9F\x90\x89 (a dragon)",
    "a\r\nwindows line",
    " ",
    "x",
};

TEST(Tokenizer, TrainsTheRequestedVocabularyWithLlama2cLayout) {
  const Tokenizer tokenizer(fixture_model());
  EXPECT_EQ(tokenizer.vocab_size(), 400);
  EXPECT_EQ(tokenizer.unk_id(), 0);
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  const auto pieces = tokenizer.pieces_json();
  // byte_fallback: ids 3..258 are <0x00>..<0xFF>.
  EXPECT_EQ(pieces["pieces"][3], "<0x00>");
  EXPECT_EQ(pieces["pieces"][3 + 0x0A], "<0x0A>");
  EXPECT_EQ(pieces["pieces"][258], "<0xFF>");
  EXPECT_EQ(pieces["types"][258], "byte");
  EXPECT_EQ(pieces["types"][1], "control");
  // split_digits: no piece has a digit next to anything else.
  for (const auto& piece : pieces["pieces"]) {
    const std::string p = piece.get<std::string>();
    if (p.size() > 1 && p.front() != '<') {
      EXPECT_EQ(p.find_first_of("0123456789"), std::string::npos) << p;
    }
  }
}

TEST(Tokenizer, RoundTripIsExactThroughSentencepieceAndPiecesDecoder) {
  const Tokenizer tokenizer(fixture_model());
  const PiecesDecoder decoder = decoder_from(tokenizer);
  std::vector<std::string> texts = kTrickyTexts;
  for (auto story : fixture_train_stories()) texts.emplace_back(story);
  for (const auto& text : texts) {
    const std::vector<int> ids = tokenizer.encode(text);
    EXPECT_EQ(tokenizer.decode(ids), text);
    EXPECT_EQ(decoder.decode(ids), text);
  }
}

TEST(Tokenizer, UnseenCharactersUseByteFallbackNotUnk) {
  const Tokenizer tokenizer(fixture_model());
  for (int id : tokenizer.encode("\xF0\x9F\x90\x89 Ωμέγα")) EXPECT_NE(id, tokenizer.unk_id());
}

TEST(Tokenizer, PiecesDecoderMatchesSentencepieceOnArbitraryIdSequences) {
  // Including sequences sentencepiece would never produce: stray bytes, <unk>, leading byte pieces.
  const Tokenizer tokenizer(fixture_model());
  const PiecesDecoder decoder = decoder_from(tokenizer);
  std::uint32_t state = 12345;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int> ids;
    const int length = 1 + trial % 17;
    for (int i = 0; i < length; ++i) {
      state = state * 1664525u + 1013904223u;
      int id = static_cast<int>(state >> 8) % tokenizer.vocab_size();
      if (id == tokenizer.bos_id() || id == tokenizer.eos_id())
        id = 0;  // separators behave differently by design
      ids.push_back(id);
    }
    EXPECT_EQ(decoder.decode(ids), tokenizer.decode(ids)) << "trial " << trial;
  }
}

TEST(Tokenizer, TrainingIsDeterministicAndIndependentOfThreadCount) {
  BpeTrainingOptions options;
  options.vocab_size = 400;
  const auto sentences = training_sentences(fixture_train_stories(), options.max_sentences);
  EXPECT_EQ(train_bpe_tokenizer(sentences, options), fixture_model());
  options.num_threads = 8;
  const Tokenizer eight(train_bpe_tokenizer(sentences, options));
  const Tokenizer one(fixture_model());
  // The model records num_threads, so compare what matters: the pieces.
  EXPECT_EQ(eight.pieces_json(), one.pieces_json());
}

TEST(Tokenizer, UnreachableVocabularyIsAnInputError) {
  BpeTrainingOptions options;
  options.vocab_size = 60000;
  const auto sentences = training_sentences(fixture_train_stories(), options.max_sentences);
  try {
    train_bpe_tokenizer(sentences, options);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--vocab-size 60000 cannot be reached"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  options.vocab_size = 65537;
  EXPECT_THROW(train_bpe_tokenizer(sentences, options), InputError);
  options.vocab_size = 100;
  EXPECT_THROW(train_bpe_tokenizer(sentences, options), InputError);
}

TEST(TrainingSentences, NonEmptyLinesOfTheStories) {
  const std::vector<std::string_view> stories = {"a\n\nb c\n", "d"};
  const auto lines = training_sentences(stories, 100);
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.end()),
            (std::vector<std::string>{"a", "b c", "d"}));
}

TEST(TrainingSentences, SubsamplesEvenlyAndDeterministically) {
  std::vector<std::string> numbered;
  for (int i = 0; i < 10; ++i) numbered.push_back(std::to_string(i));
  const std::vector<std::string_view> stories(numbered.begin(), numbered.end());
  const auto lines = training_sentences(stories, 4);
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.end()),
            (std::vector<std::string>{"0", "2", "5", "7"}));
}

}  // namespace
}  // namespace xsa
