// PiecesDecoder: sentencepiece-compatible decoding without sentencepiece, on a hand-made vocabulary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "process.h"
#include "xsa/data/pieces.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

// ids: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then normal pieces.
std::vector<std::string> small_vocabulary() {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) pieces.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
  for (const char* p : {"\xE2\x96\x81Once", "\xE2\x96\x81upon", "\xE2\x96\x81", "a", ".",
                        "\xE2\x96\x81\xE2\x96\x81", "caf", "\xE2\x96\x81time"}) {
    pieces.push_back(p);
  }
  return pieces;
}
constexpr int kOnce = 259, kUpon = 260, kSpace = 261, kA = 262, kDot = 263, kTwoSpaces = 264, kCaf = 265,
              kTime = 266;
constexpr int byte_id(int b) {
  return 3 + b;
}

const PiecesDecoder& decoder() {
  static const PiecesDecoder d(small_vocabulary(), 1, 2);
  return d;
}

TEST(PiecesDecoder, SpaceSymbolBecomesSpaceAndTheDummyPrefixIsDropped) {
  EXPECT_EQ(decoder().decode({kOnce, kUpon, kSpace, kA, kTime, kDot}), "Once upon a time.");
  EXPECT_EQ(decoder().decode({kTwoSpaces, kOnce}), "  Once");  // only one leading space is the dummy prefix
  EXPECT_EQ(decoder().decode({kA, kTwoSpaces, kA}), "a  a");
}

TEST(PiecesDecoder, BytePiecesJoinIntoUtf8) {
  EXPECT_EQ(decoder().decode({kCaf, byte_id(0xC3), byte_id(0xA9), kDot}), "caf\xC3\xA9.");
  EXPECT_EQ(decoder().decode({byte_id('\n'), kOnce}), "\n Once");  // a leading byte takes the story start
  EXPECT_EQ(decoder().decode({byte_id(0xF0), byte_id(0x9F), byte_id(0x99), byte_id(0x82)}),
            "\xF0\x9F\x99\x82");
}

TEST(PiecesDecoder, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(decoder().decode({kA, byte_id(0xC3), kA}),
            "a\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(decoder().decode({byte_id(0xFF), byte_id(0x41)}),
            "\xEF\xBF\xBD"
            "A");
}

TEST(PiecesDecoder, BosStartsANewStory) {
  const std::vector<int> ids = {1, kOnce, kTime, 1, kUpon, kA, 2, 1};
  EXPECT_EQ(decoder().decode_stories(ids), (std::vector<std::string>{"Once time", "upona"}));
  EXPECT_EQ(decoder().decode(ids), "Once timeupona");
  EXPECT_TRUE(decoder().decode_stories({1, 1, 2}).empty());
}

TEST(PiecesDecoder, UnknownUsesSentencepiecesSurface) {
  EXPECT_EQ(decoder().decode({kA, 0, kA}), "a \xE2\x81\x87 a");
}

TEST(PiecesDecoder, IdsOutsideTheVocabularyAreInputErrors) {
  EXPECT_THROW(decoder().decode({kA, 267}), InputError);
  EXPECT_THROW(decoder().decode({-1}), InputError);
}

using testing::spit;
using testing::TempDir;

TEST(PiecesDecoder, LoadsPiecesJsonWithTypes) {
  // "<0x41>" typed "normal" must stay literal text: the types from the file win over the spelling.
  const TempDir dir;  // each test its own folder: ctest runs the tests of this file in parallel
  const std::string path = dir / "xsa_test_pieces.json";
  spit(path, R"({"vocab_size": 5, "unk_id": 0, "bos_id": 1, "eos_id": 2,
                                   "pieces": ["<unk>", "<s>", "</s>", "<0x41>", "\u2581hi"],
                                   "types": ["unknown", "control", "control", "normal", "normal"]})");
  const PiecesDecoder loaded = PiecesDecoder::load(path);
  EXPECT_EQ(loaded.vocab_size(), 5);
  EXPECT_EQ(loaded.decode({1, 4, 3}), "hi<0x41>");
}

std::string load_error(const std::string& content) {
  const TempDir dir;
  const std::string path = dir / "xsa_test_bad_pieces.json";
  spit(path, content);
  try {
    PiecesDecoder::load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PiecesDecoder, BadPiecesJsonNamesTheFile) {
  EXPECT_NE(load_error("not json").find("xsa_test_bad_pieces.json: not valid JSON"), std::string::npos);
  EXPECT_NE(load_error(R"({"bos_id": 1, "eos_id": 2})").find("\"pieces\""), std::string::npos);
  EXPECT_NE(load_error(R"({"bos_id": 1, "eos_id": 2, "pieces": ["a"], "types": ["weird"]})")
                .find("unknown piece type \"weird\""),
            std::string::npos);
  EXPECT_NE(
      load_error(R"({"vocab_size": 3, "bos_id": 1, "eos_id": 2, "pieces": ["a"]})").find("vocab_size is 3"),
      std::string::npos);
  EXPECT_THROW(PiecesDecoder::load("/nonexistent/xsa/pieces.json"), InputError);
}

// A non-string unk_surface threw nlohmann's type_error (a runtime failure, exit 1, not naming the file), and
// ids outside int wrapped (4294967297 became 1, a valid BOS).
TEST(PiecesDecoder, BadFieldTypesAndRangesNameTheFile) {
  EXPECT_NE(load_error(R"({"bos_id": 1, "eos_id": 2, "pieces": ["a"], "unk_surface": 5})")
                .find("xsa_test_bad_pieces.json: \"unk_surface\" must be a string, found 5"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"bos_id": 4294967297, "eos_id": 2, "pieces": ["a"]})")
                .find("\"bos_id\" is 4294967297, expected a token id or -1"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"bos_id": 1, "eos_id": -2, "pieces": ["a"]})").find("\"eos_id\" is -2"),
            std::string::npos);
}

}  // namespace
}  // namespace xsa
