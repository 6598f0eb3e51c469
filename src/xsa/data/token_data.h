#pragma once
// Prepared token data (docs/ARCHITECTURE.md "Data flow"): train.bin / val.bin (uint16 LE, no header, mmap'd),
// meta.json and pieces.json. Torch-free. Every problem is an InputError naming the file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace xsa {

struct DatasetMeta {
  int vocab_size = 0;
  int bos_id = -1;
  int eos_id = -1;
  std::uint64_t train_tokens = 0;
  std::uint64_t val_tokens = 0;
  std::uint64_t train_stories = 0;
  std::uint64_t val_stories = 0;
  std::string tokenizer_sha256;
  nlohmann::json raw;  // the whole meta.json
};

// Reads and validates <dir>/meta.json.
DatasetMeta read_meta(const std::string& dir);
// Validates meta.json text; `path` names the file in errors (read_meta's core, also used by the fuzzer).
DatasetMeta parse_meta(const std::string& json_text, const std::string& path);

// A read-only memory-mapped uint16 token file.
class TokenFile {
 public:
  // Maps `path`; checks its length equals expected_tokens*2 bytes and (scanning once) that every
  // id < vocab_size. Throws InputError("<path>: ...") otherwise.
  TokenFile(const std::string& path, std::uint64_t expected_tokens, int vocab_size);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;
  std::size_t size() const { return size_; }
  const std::uint16_t* data() const { return data_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_bytes_ = 0;
};

// meta + both splits of a prepared data folder.
struct TokenDataset {
  std::string dir;
  DatasetMeta meta;
  std::unique_ptr<TokenFile> train;
  std::unique_ptr<TokenFile> val;
  // Throws InputError naming the folder/file for a missing folder, unreadable meta.json, a token file
  // whose length does not match meta, or an id >= vocab_size.
  static TokenDataset load(const std::string& dir);
};

}  // namespace xsa
