// The torch-free token data reader: meta.json, mmap'd uint16 files and their validation messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "xsa/data/token_data.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;

class TokenDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "xsa_test_tokens_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    write_meta(R"({"vocab_size": 10, "bos_id": 1, "eos_id": 2, "train_tokens": 5, "val_tokens": 2,
                   "train_stories": 2, "val_stories": 1, "tokenizer_sha256": "abc"})");
    write_tokens("train.bin", {1, 4, 9, 1, 3});
    write_tokens("val.bin", {1, 7});
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_meta(const std::string& json) { std::ofstream(dir_ + "/meta.json") << json; }
  void write_tokens(const std::string& name, const std::vector<std::uint16_t>& ids) {
    std::ofstream out(dir_ + "/" + name, std::ios::binary);
    for (auto id : ids) {
      const char bytes[2] = {static_cast<char>(id & 0xFF), static_cast<char>(id >> 8)};  // little-endian
      out.write(bytes, 2);
    }
  }
  std::string load_error() {
    try {
      TokenDataset::load(dir_);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }

  std::string dir_;
};

TEST_F(TokenDataTest, LoadsMetaAndTokens) {
  const TokenDataset data = TokenDataset::load(dir_);
  EXPECT_EQ(data.meta.vocab_size, 10);
  EXPECT_EQ(data.meta.bos_id, 1);
  EXPECT_EQ(data.meta.eos_id, 2);
  EXPECT_EQ(data.meta.train_stories, 2u);
  EXPECT_EQ(data.meta.tokenizer_sha256, "abc");
  ASSERT_EQ(data.train->size(), 5u);
  EXPECT_EQ(std::vector<std::uint16_t>(data.train->data(), data.train->data() + 5),
            (std::vector<std::uint16_t>{1, 4, 9, 1, 3}));
  ASSERT_EQ(data.val->size(), 2u);
  EXPECT_EQ(data.val->data()[1], 7);
  EXPECT_EQ(data.meta.raw["val_stories"], 1);
}

TEST_F(TokenDataTest, ReadsLittleEndianAboveOneByte) {
  write_meta(R"({"vocab_size": 65536, "bos_id": 1, "eos_id": 2, "train_tokens": 2, "val_tokens": 2,
                 "tokenizer_sha256": "x"})");
  write_tokens("train.bin", {0x1234, 65535});
  const TokenDataset data = TokenDataset::load(dir_);
  EXPECT_EQ(data.train->data()[0], 0x1234);
  EXPECT_EQ(data.train->data()[1], 65535);
}

TEST_F(TokenDataTest, MissingFolder) {
  EXPECT_THROW(TokenDataset::load(dir_ + "/nope"), InputError);
  try {
    TokenDataset::load(dir_ + "/nope");
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir_ + "/nope: data folder not found", 0), 0u) << e.what();
  }
}

TEST_F(TokenDataTest, MissingOrBrokenMeta) {
  fs::remove(dir_ + "/meta.json");
  EXPECT_NE(load_error().find(dir_ + "/meta.json: not found"), std::string::npos);
  write_meta("{\"vocab_size\": 10,");
  EXPECT_NE(load_error().find(dir_ + "/meta.json: not valid JSON"), std::string::npos);
  write_meta(R"({"vocab_size": 10, "bos_id": 1, "eos_id": 2, "val_tokens": 2, "tokenizer_sha256": "x"})");
  EXPECT_EQ(load_error(), dir_ + "/meta.json: missing key \"train_tokens\"");
  write_meta(R"({"vocab_size": 70000, "bos_id": 1, "eos_id": 2, "train_tokens": 5, "val_tokens": 2,
                 "tokenizer_sha256": "x"})");
  EXPECT_NE(load_error().find("\"vocab_size\" is 70000, expected 1..65536"), std::string::npos);
  write_meta(R"({"vocab_size": 10, "bos_id": 1, "eos_id": 2, "train_tokens": -5, "val_tokens": 2,
                 "tokenizer_sha256": "x"})");
  EXPECT_NE(load_error().find("\"train_tokens\" must be a non-negative integer, found -5"),
            std::string::npos);
}

TEST_F(TokenDataTest, LengthMismatchNamesExpectedAndFound) {
  write_tokens("val.bin", {1, 7, 7});
  EXPECT_EQ(load_error(), dir_ + "/val.bin: expected 4 bytes (2 uint16 tokens per meta.json), found 6 bytes");
  std::ofstream(dir_ + "/val.bin", std::ios::binary) << "abc";  // odd length
  EXPECT_NE(load_error().find("found 3 bytes"), std::string::npos);
  fs::remove(dir_ + "/val.bin");
  EXPECT_NE(load_error().find(dir_ + "/val.bin: cannot read token file"), std::string::npos);
}

// Found by fuzz/fuzz_tokens: expected_tokens * 2 wrapped for a huge count in meta.json, so an empty file
// "matched" 2^63 tokens and was accepted.
TEST_F(TokenDataTest, HugeTokenCountDoesNotWrapIntoAMatch) {
  write_meta(R"({"vocab_size": 10, "bos_id": 1, "eos_id": 2, "train_tokens": 5,
                 "val_tokens": 9223372036854775808, "tokenizer_sha256": "x"})");
  write_tokens("val.bin", {});
  EXPECT_EQ(load_error(), dir_ +
                              "/val.bin: expected 2 x 9223372036854775808 bytes (9223372036854775808 uint16 "
                              "tokens per meta.json), found 0 bytes");
}

// Found by fuzz/fuzz_meta: a number too large for a double made nlohmann throw out_of_range, which escaped
// as a runtime failure (exit 1) instead of naming meta.json.
TEST_F(TokenDataTest, NumberTooLargeForADoubleIsBadInput) {
  write_meta(R"({"vocab_size": 10, "bos_id": 1e400, "eos_id": 2, "train_tokens": 5, "val_tokens": 2,
                 "tokenizer_sha256": "x"})");
  EXPECT_EQ(load_error().rfind(dir_ + "/meta.json: not readable JSON", 0), 0u) << load_error();
}

// An unsigned id above INT64_MAX used to wrap to -1 ("no BOS") and be accepted.
TEST_F(TokenDataTest, HugeUnsignedIdIsRefusedNotWrapped) {
  write_meta(R"({"vocab_size": 10, "bos_id": 18446744073709551615, "eos_id": 2, "train_tokens": 5,
                 "val_tokens": 2, "tokenizer_sha256": "x"})");
  EXPECT_EQ(load_error(), dir_ + "/meta.json: \"bos_id\" is 18446744073709551615, expected -1...9");
}

TEST_F(TokenDataTest, IdOutsideTheVocabulary) {
  write_tokens("train.bin", {1, 4, 9, 10, 3});
  EXPECT_EQ(load_error(),
            dir_ + "/train.bin: token 10 at position 3 is not below vocab_size 10 from meta.json");
}

TEST_F(TokenDataTest, EmptySplitIsAllowedWhenMetaSaysSo) {
  write_meta(R"({"vocab_size": 10, "bos_id": 1, "eos_id": 2, "train_tokens": 5, "val_tokens": 0,
                 "tokenizer_sha256": "x"})");
  write_tokens("val.bin", {});
  const TokenDataset data = TokenDataset::load(dir_);
  EXPECT_EQ(data.val->size(), 0u);
}

}  // namespace
}  // namespace xsa
