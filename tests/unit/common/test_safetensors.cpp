// The safetensors writer and reader (records/safetensors.h) against the format's definition: bytes built by
// hand, and every way a header can lie refused with one line naming the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xsa/records/safetensors.h"
#include "xsa/util/error.h"

namespace st = xsa::safetensors;
using nlohmann::json;

namespace {

std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

std::string le_f32(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

// A file from a header text and data bytes, as the format defines it.
std::string file_of(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

// The message of the InputError parse throws ("" when it accepts).
std::string refusal(const std::string& bytes) {
  try {
    st::parse(bytes, "m.safetensors");
  } catch (const xsa::InputError& e) {
    return e.what();
  }
  return "";
}

// A valid two-tensor header ("a": F32 [2] at [0, 8], "b": F32 [1, 1] at [8, 12]) with one entry changed.
std::string two_tensors(const std::function<void(json&)>& edit, std::size_t data_bytes = 12) {
  json h = {{"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
            {"b", {{"dtype", "F32"}, {"shape", {1, 1}}, {"data_offsets", {8, 12}}}}};
  edit(h);
  return file_of(h.dump(), std::string(data_bytes, '\0'));
}

}  // namespace

TEST(Safetensors, WritesTheFormatByteForByte) {
  const float a[2] = {1.5f, -2.0f};
  const float b[1] = {0.25f};
  // Given out of order: the file lays tensors out by name.
  std::string bytes = st::serialize({{"b", {1, 1}, b}, {"a", {2}, a}}, {{"format", "pt"}});
  std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"data_offsets":[0,8],"dtype":"F32","shape":[2]},)"
      R"("b":{"data_offsets":[8,12],"dtype":"F32","shape":[1,1]}})";
  header.append((8 - header.size() % 8) % 8, ' ');  // padded to 8 bytes with spaces
  EXPECT_EQ(bytes, le64(header.size()) + header + le_f32(1.5f) + le_f32(-2.0f) + le_f32(0.25f));
  EXPECT_EQ((bytes.size() - 12) % 8, 0u);
}

TEST(Safetensors, ReadsBackWhatItWrites) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const float empty[1] = {0};
  std::string bytes = st::serialize({{"w", {2, 3}, w}, {"z", {0}, empty}}, {{"k", "v"}});
  st::File f = st::parse(bytes, "x");
  ASSERT_EQ(f.tensors.size(), 2u);
  const st::TensorEntry* e = f.find("w");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dtype, st::Dtype::kF32);
  EXPECT_EQ(e->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(e->numel(), 6);
  float back[6];
  std::memcpy(back, bytes.data() + f.data_offset + e->begin, sizeof back);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back[i], w[i]);
  EXPECT_EQ(f.find("z")->numel(), 0);
  EXPECT_EQ(f.metadata.at("k"), "v");
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST(Safetensors, KnowsTheFormatsDtypes) {
  EXPECT_EQ(st::dtype_size(st::Dtype::kBF16), 2u);
  EXPECT_STREQ(st::dtype_name(st::Dtype::kBool), "BOOL");
  // Another dtype is read (and named), not refused as damaged: I64 [1] at [0, 8].
  std::string bytes =
      file_of(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0'));
  EXPECT_EQ(st::parse(bytes, "x").tensors.at(0).dtype, st::Dtype::kI64);
}

TEST(Safetensors, RefusesHeadersThatLie) {
  EXPECT_NE(refusal(std::string(5, '\0')).find("too short"), std::string::npos);
  EXPECT_NE(refusal(le64(1000) + "{}").find("header length 1000 exceeds"), std::string::npos);
  EXPECT_NE(refusal(le64(1ull << 62) + "{}").find("exceeds"), std::string::npos);
  EXPECT_NE(refusal(file_of("[1]", "")).find("does not start with '{'"), std::string::npos);
  EXPECT_NE(refusal(file_of("{\"a\":", "")).find("not a JSON object"), std::string::npos);
  EXPECT_EQ(refusal(two_tensors([](json&) {})), "");
  EXPECT_NE(refusal(two_tensors([](json& h) {
              h["a"]["data_offsets"] = {0, 800};
            })).find("outside"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) {
              h["a"]["data_offsets"] = {8, 0};
            })).find("outside"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) {
              h["b"]["data_offsets"] = {4, 8};
            })).find("overlaps"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json&) {}, 16)).find("end at data byte 12 but the file holds 16"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors(
                        [](json& h) {
                          h["b"]["data_offsets"] = {10, 14};
                        },
                        14))
                .find("belong to no tensor"),
            std::string::npos);
  EXPECT_NE(
      refusal(two_tensors([](json& h) { h["a"]["dtype"] = "F8_E4M3X"; })).find("unknown dtype 'F8_E4M3X'"),
      std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) { h["a"]["shape"] = {3}; })).find("takes 12"), std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) { h["a"]["shape"] = {-2}; })).find("not an integer >= 0"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) {
              h["a"]["shape"] = {1ull << 40, 1ull << 40};
            })).find("overflows"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) { h["a"]["extra"] = 1; })).find("unknown field 'extra'"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) { h["a"].erase("data_offsets"); })).find("data_offsets"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) {
              h["__metadata__"] = {{"k", 1}};
            })).find("__metadata__.k"),
            std::string::npos);
  EXPECT_NE(refusal(two_tensors([](json& h) { h["a"] = 3; })).find("tensor 'a': is not an object"),
            std::string::npos);
  // A name given twice: JSON readers keep the last entry without a word, so the file has two answers to
  // "where is a?". Written by hand (a json object cannot hold a key twice), at the top, inside an entry and
  // in the metadata.
  const std::string a = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  const std::string b = R"("b": {"dtype": "F32", "shape": [1, 1], "data_offsets": [8, 12]})";
  const std::string data(12, '\0');
  EXPECT_EQ(refusal(file_of("{" + a + ", " + b + "}", data)), "");
  EXPECT_EQ(
      refusal(file_of(
          "{" + a + ", " + b + R"(, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", data)),
      "m.safetensors: the key \"a\" appears twice in one object; expected each key once (which value is "
      "meant?)");
  EXPECT_NE(
      refusal(file_of(R"({"a": {"dtype": "F32", "dtype": "F16", "shape": [2], "data_offsets": [0, 8]}, )" +
                          b + "}",
                      data))
          .find("the key \"dtype\" appears twice"),
      std::string::npos);
  EXPECT_NE(refusal(file_of(R"({"__metadata__": {"k": "1", "k": "2"}, )" + a + ", " + b + "}", data))
                .find("the key \"k\" appears twice"),
            std::string::npos);
  // One key in two different objects is no ambiguity.
  EXPECT_EQ(refusal(file_of(R"({"__metadata__": {"a": "x"}, )" + a + ", " + b + "}", data)), "");
  // Every message is one line naming the file.
  const std::string m = refusal(two_tensors([](json& h) { h["b"]["data_offsets"] = {4, 8}; }));
  EXPECT_EQ(m.rfind("m.safetensors: ", 0), 0u);
  EXPECT_EQ(m.find('\n'), std::string::npos);
}
