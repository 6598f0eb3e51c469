#pragma once
// SHA-256 (FIPS 180-4) for provenance records: input files, tokenizer, token files. Torch-free.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xsa {

// Incremental hasher: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  std::string hex_digest();  // lowercase, 64 characters; finalizes the hasher

 private:
  void compress(const std::uint8_t* block);
  std::uint32_t state_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const std::string& bytes);
// Streams the file in chunks; throws InputError naming the file if it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace xsa
