// SHA-256 against the FIPS 180-4 / NIST test vectors, one-shot, streamed and from files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "process.h"
#include "xsa/util/error.h"
#include "xsa/util/sha256.h"

namespace xsa {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes straddle the one-block / two-block padding cases (values from sha256sum).
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, StreamingInPiecesEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += static_cast<char>((i * 7919) % 251);
  for (std::size_t chunk : {1u, 3u, 63u, 64u, 65u, 1000u}) {
    Sha256 hasher;
    for (std::size_t at = 0; at < text.size(); at += chunk)
      hasher.update(std::string_view(text).substr(at, chunk));
    EXPECT_EQ(hasher.hex_digest(), sha256_hex(text)) << "chunk " << chunk;
  }
}

TEST(Sha256, Files) {
  const testing::TempDir dir;
  const std::string path = dir / "abc.bin";
  testing::spit(path, "abc");
  EXPECT_EQ(sha256_file_hex(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(path);
  EXPECT_THROW(sha256_file_hex(path), InputError);
}

}  // namespace
}  // namespace xsa
