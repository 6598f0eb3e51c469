// Fuzzes the token file reader (TokenFile: mmap, length check against meta.json, id check against
// vocab_size) and the window sampling that indexes into an accepted file. Input layout:
//   bytes 0-1  vocab_size - 1 (uint16 LE)        byte 2  seq_len - 1
//   byte 3     expected tokens: < 0xF0 -> the file's own count + (b % 5) - 2; else 2^(56 + b % 8)
//   rest       the token file's content
#include <unistd.h>

#include <cstring>

#include "fuzz_common.h"
#include "xsa/data/sampler.h"
#include "xsa/data/token_data.h"

namespace {

// One scratch file per fuzzing process, rewritten for every input.
const std::string& scratch_path() {
  static const std::string path = [] {
    char name[] = "/tmp/xsa-fuzz-tokens-XXXXXX";
    int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::close(fd);
    return std::string(name);
  }();
  return path;
}

void write_scratch(const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const int vocab_size = (data[0] | data[1] << 8) + 1;
  const int seq_len = data[2] + 1;
  const std::uint64_t file_tokens = (size - 4) / 2;
  const std::uint64_t expected =
      data[3] < 0xF0 ? file_tokens + data[3] % 5 - 2 : std::uint64_t{1} << (56 + data[3] % 8);
  write_scratch(data + 4, size - 4);

  try {
    const xsa::TokenFile file(scratch_path(), expected, vocab_size);
    if (file.size() != expected)
      xsa::fuzz::invariant_failed("accepted a file whose length differs from meta");
    for (std::size_t i = 0; i < file.size(); ++i)
      if (file.data()[i] >= vocab_size) xsa::fuzz::invariant_failed("accepted an id >= vocab_size");

    // The trainer refuses files without one full window; with one, every window must lie inside the file.
    if (xsa::count_windows(file.size(), seq_len) < 1) return 0;
    auto check = [&](std::uint64_t start) {
      if (start + seq_len + 1 > file.size()) xsa::fuzz::invariant_failed("a window reaches past the file");
    };
    xsa::TrainWindowSampler sampler(file.size(), seq_len, data[3]);
    for (std::int64_t step = 0; step < 3; ++step)
      for (std::uint64_t start : sampler.batch_starts(step, 5)) check(start);
    for (std::uint64_t start : xsa::evenly_spaced_windows(file.size(), seq_len, UINT64_MAX)) check(start);
  } catch (const xsa::InputError&) {
  }
  return 0;
}
