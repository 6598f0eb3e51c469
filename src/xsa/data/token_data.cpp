#include "xsa/data/token_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/json_input.h"

// The token files are little-endian uint16 and are used in place (mmap), so the host must be little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "token files are little-endian; add byte swapping");

namespace xsa {
namespace {

std::uint64_t require_count(const nlohmann::json& doc, const std::string& path, const char* key) {
  if (!doc.contains(key)) throw InputError(path + ": missing key \"" + key + "\"");
  const auto& value = doc[key];
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    throw InputError(path + ": \"" + key + "\" must be a non-negative integer, found " + value.dump());
  }
  return value.get<std::uint64_t>();
}

int require_id(const nlohmann::json& doc, const std::string& path, const char* key, int vocab_size) {
  if (!doc.contains(key) || !doc[key].is_number_integer()) {
    throw InputError(path + ": \"" + key + "\" must be an integer token id");
  }
  // An unsigned value above INT64_MAX would wrap to a negative id (18446744073709551615 -> -1).
  const bool too_large = doc[key].is_number_unsigned() && doc[key].get<std::uint64_t>() > INT64_MAX;
  const auto id = doc[key].get<std::int64_t>();
  if (too_large || id < -1 || id >= vocab_size) {
    throw InputError(path + ": \"" + key + "\" is " + doc[key].dump() + ", expected -1..." +
                     std::to_string(vocab_size - 1));
  }
  return static_cast<int>(id);
}

}  // namespace

DatasetMeta read_meta(const std::string& dir) {
  if (!is_directory(dir)) {
    throw InputError(dir + ": data folder not found (create it with xsa-prepare, see data/README.md)");
  }
  const std::string path = dir + "/meta.json";
  if (!path_exists(path))
    throw InputError(path + ": not found; is " + dir + " a folder made by xsa-prepare?");
  return parse_meta(read_file(path), path);
}

DatasetMeta parse_meta(const std::string& json_text, const std::string& path) {
  DatasetMeta meta;
  try {
    meta.raw = parse_json_input(json_text, path, /*allow_exceptions=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: a number too large for a double
    throw InputError(path + ": not readable JSON (" + e.what() + ")");
  }
  const auto& doc = meta.raw;
  if (!doc.is_object())
    throw InputError(path + ": expected a JSON object, found " + std::string(doc.type_name()));

  const std::uint64_t vocab_size = require_count(doc, path, "vocab_size");
  if (vocab_size < 1 || vocab_size > 65536) {
    throw InputError(path + ": \"vocab_size\" is " + std::to_string(vocab_size) +
                     ", expected 1..65536 (ids are stored as uint16)");
  }
  meta.vocab_size = static_cast<int>(vocab_size);
  meta.bos_id = require_id(doc, path, "bos_id", meta.vocab_size);
  meta.eos_id = require_id(doc, path, "eos_id", meta.vocab_size);
  meta.train_tokens = require_count(doc, path, "train_tokens");
  meta.val_tokens = require_count(doc, path, "val_tokens");
  if (doc.contains("train_stories")) meta.train_stories = require_count(doc, path, "train_stories");
  if (doc.contains("val_stories")) meta.val_stories = require_count(doc, path, "val_stories");
  if (!doc.contains("tokenizer_sha256") || !doc["tokenizer_sha256"].is_string()) {
    throw InputError(path + ": \"tokenizer_sha256\" must be a string");
  }
  meta.tokenizer_sha256 = doc["tokenizer_sha256"].get<std::string>();
  return meta;
}

TokenFile::TokenFile(const std::string& path, std::uint64_t expected_tokens, int vocab_size) : path_(path) {
  int fd = open_regular_file(path, "token file");
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int err = errno;
    ::close(fd);
    throw InputError(path + ": cannot stat token file (" + std::strerror(err) + ")");
  }
  const auto bytes = static_cast<std::uint64_t>(info.st_size);
  // Compared in tokens: expected_tokens * 2 would wrap for a huge count in meta.json and match a short file.
  if (bytes % 2 != 0 || bytes / 2 != expected_tokens) {
    ::close(fd);
    const std::string expected_bytes = expected_tokens <= UINT64_MAX / 2
                                           ? std::to_string(expected_tokens * 2)
                                           : "2 x " + std::to_string(expected_tokens);
    throw InputError(path + ": expected " + expected_bytes + " bytes (" + std::to_string(expected_tokens) +
                     " uint16 tokens per meta.json), found " + std::to_string(bytes) + " bytes");
  }
  if (bytes > 0) {
    void* mapped = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw InputError(path + ": cannot map token file (" + std::strerror(err) + ")");
    }
    data_ = static_cast<const std::uint16_t*>(mapped);
    mapped_bytes_ = bytes;
    size_ = bytes / 2;
  }
  ::close(fd);  // the mapping stays valid

  for (std::size_t i = 0; i < size_; ++i) {
    if (data_[i] >= vocab_size) {
      const std::string message = path + ": token " + std::to_string(data_[i]) + " at position " +
                                  std::to_string(i) + " is not below vocab_size " +
                                  std::to_string(vocab_size) + " from meta.json";
      ::munmap(const_cast<std::uint16_t*>(data_), mapped_bytes_);
      data_ = nullptr;
      throw InputError(message);
    }
  }
}

TokenFile::~TokenFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint16_t*>(data_), mapped_bytes_);
}

TokenDataset TokenDataset::load(const std::string& dir) {
  TokenDataset dataset;
  dataset.dir = dir;
  dataset.meta = read_meta(dir);
  dataset.train =
      std::make_unique<TokenFile>(dir + "/train.bin", dataset.meta.train_tokens, dataset.meta.vocab_size);
  dataset.val =
      std::make_unique<TokenFile>(dir + "/val.bin", dataset.meta.val_tokens, dataset.meta.vocab_size);
  return dataset;
}

}  // namespace xsa
