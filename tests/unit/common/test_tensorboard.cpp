// TensorBoard event files without protobuf: CRC-32C against its standard check values, and the protobuf
// and TFRecord bytes against encodings worked out by hand from the wire format (field << 3 | wire type;
// fixed64/fixed32 little-endian). tests/integration/tensorboard_test.py decodes real runs' files with
// protoc-generated code and crcmod, independently of this code.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "xsa/util/crc32c.h"
#include "xsa/util/tensorboard.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

TEST(Crc32c, StandardCheckValues) {
  EXPECT_EQ(crc32c(std::string("123456789")), 0xE3069283u);  // the CRC catalogue's check value
  EXPECT_EQ(crc32c(std::string()), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);    // RFC 3720 B.4: 32 bytes of zeros
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);  // ... and of 0xFF
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);  // ... incrementing 0x00..0x1F
}

TEST(Crc32c, MaskIsRotateAndAdd) {
  EXPECT_EQ(masked_crc32c(0u), 0xA282EAD8u);
  EXPECT_EQ(masked_crc32c(0x00008000u), 0xA282EAD9u);  // bit 15 rotates to bit 0
  EXPECT_EQ(masked_crc32c(0x00000001u), 0xA284EAD8u);  // bit 0 rotates to bit 17
}

TEST(TensorboardEncoding, FileVersionEvent) {
  // Event{wall_time = 1.5 (field 1, fixed64), file_version = "brain.Event:2" (field 3, 13 bytes)}
  EXPECT_EQ(tensorboard::file_version_event(1.5),
            bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x1A, 13}) + "brain.Event:2");
}

TEST(TensorboardEncoding, ScalarEvent) {
  // Value{tag "a" (field 1), simple_value 1.0f (field 2, fixed32)} = 0A 01 61 15 00 00 80 3F (8 bytes);
  // Summary{value (field 1)} = 0A 08 + Value; Event{wall_time 2.0, step 7 (field 2, varint), summary
  // (field 5)} = 09 <2.0> 10 07 2A 0A + Summary.
  const std::string value = bytes({0x0A, 1, 'a', 0x15, 0, 0, 0x80, 0x3F});
  const std::string summary = bytes({0x0A, 8}) + value;
  EXPECT_EQ(tensorboard::scalars_event(2.0, 7, {{"a", 1.0f}}),
            bytes({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 7, 0x2A, 10}) + summary);
  // Step 300 is a two-byte varint (AC 02); two values are two repeated fields.
  const std::string two = tensorboard::scalars_event(2.0, 300, {{"a", 1.0f}, {"a", 1.0f}});
  EXPECT_EQ(two, bytes({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0xAC, 0x02, 0x2A, 20}) + summary + summary);
}

TEST(TensorboardEncoding, SessionStartEvent) {
  // Event{wall_time 3.0, step 9, session_log (field 7) = SessionLog{status START = 1}}
  EXPECT_EQ(tensorboard::session_start_event(3.0, 9),
            bytes({0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40, 0x10, 9, 0x3A, 2, 0x08, 1}));
  // Step 0 is proto3's default: not written.
  EXPECT_EQ(tensorboard::session_start_event(3.0, 0),
            bytes({0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40, 0x3A, 2, 0x08, 1}));
}

TEST(TensorboardEncoding, TfrecordFraming) {
  const std::string record = tensorboard::tfrecord("abc");
  ASSERT_EQ(record.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(record.substr(0, 8), bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  auto le32 = [](const std::string& s) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[i]);
    return v;
  };
  EXPECT_EQ(le32(record.substr(8, 4)), masked_crc32c(crc32c(record.substr(0, 8))));
  EXPECT_EQ(record.substr(12, 3), "abc");
  EXPECT_EQ(le32(record.substr(15, 4)), masked_crc32c(crc32c(std::string("abc"))));
}

// The payloads of a file of TFRecords (framing checked above; here only lengths are read).
std::vector<std::string> payloads(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  std::vector<std::string> out;
  for (std::size_t at = 0; at + 12 <= data.size();) {
    std::uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(data[at + i]);
    out.push_back(data.substr(at + 12, length));
    at += 12 + length + 4;
  }
  return out;
}

// An event's bytes after its wall time (field 1: one key byte and eight bytes of double).
std::string after_wall_time(const std::string& event) {
  return event.substr(9);
}

TEST(TensorboardWriter, FilesStartWithVersionAndMarkAResume) {
  std::string pattern = (fs::temp_directory_path() / "xsa_test_tb_XXXXXX").string();
  const fs::path root = ::mkdtemp(pattern.data());
  const fs::path dir = root / "tensorboard" / "sa";
  std::string first_path, second_path;
  {
    tensorboard::EventWriter fresh(dir.string(), std::nullopt);
    fresh.scalars(4, {{"train/loss", 2.5f}});
    fresh.flush();
    first_path = fresh.path();
    tensorboard::EventWriter resumed(dir.string(), 5);  // same second: a second name, not an overwrite
    second_path = resumed.path();
  }
  ASSERT_NE(first_path, second_path);
  EXPECT_EQ(fs::path(first_path).filename().string().rfind("events.out.tfevents.", 0), 0u);
  const auto first = payloads(first_path), second = payloads(second_path);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(after_wall_time(first[0]), after_wall_time(tensorboard::file_version_event(0)));
  EXPECT_EQ(after_wall_time(first[1]),
            after_wall_time(tensorboard::scalars_event(0, 4, {{"train/loss", 2.5f}})));
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(after_wall_time(second[0]), after_wall_time(tensorboard::file_version_event(0)));
  EXPECT_EQ(after_wall_time(second[1]), bytes({0x10, 5, 0x3A, 2, 0x08, 1}));  // SessionLog START at step 5
  // Wall time: seconds since the epoch with a fractional part, the same in both files' first events.
  double wall = 0;
  std::memcpy(&wall, first[0].data() + 1, sizeof wall);
  EXPECT_GT(wall, 1.6e9);
  fs::remove_all(root);
}

}  // namespace
}  // namespace xsa
