#pragma once
// The safetensors file format (Hugging Face; docs/guide.md "Export"), written and read directly: an 8-byte
// little-endian header length N, N bytes of JSON header, then the tensors' raw little-endian bytes.
//
//   header = {"__metadata__": {"key": "string value", ...},
//             "<name>": {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}, ...}
//
// data_offsets count from the first byte after the header. The reader refuses what the Hugging Face library
// refuses: a header that is not a JSON object starting with '{', offsets outside the data or not matching
// the dtype and shape, tensors that overlap or leave holes, a dtype it does not know. Torch-free: the model
// side (model/export_tensors.h) turns these records into tensors.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xsa::safetensors {

// The format's dtypes ("F32", ...) and their sizes. xsa writes and loads F32 only; the reader knows the
// others so that a file holding them is refused by name, not as damaged.
enum class Dtype { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };
const char* dtype_name(Dtype dtype);
std::size_t dtype_size(Dtype dtype);

struct TensorEntry {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte offsets into the data section
  std::int64_t numel() const;
};

// A parsed file: its tensors (in header order, i.e. by name), the metadata, and where the data starts.
struct File {
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
  std::uint64_t data_offset = 0;  // 8 + N: the data section's first byte in the file
  const TensorEntry* find(const std::string& name) const;
};

// Parses and checks a whole file's bytes. `source` names the file in the one-line InputError a bad file
// gets (what is wrong and where: the tensor, the offsets, the dtype).
File parse(const std::string& bytes, const std::string& source);

// One F32 tensor to write: its name, shape and numel() floats.
struct F32Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data = nullptr;
};

// The bytes of a safetensors file holding `tensors` (names unique) and `metadata`. Tensors are laid out in
// name order, the header padded with spaces to a multiple of 8 bytes (the format's alignment).
std::string serialize(const std::vector<F32Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata);

// The largest header the reader accepts (the Hugging Face library's limit: 100 MB).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

}  // namespace xsa::safetensors
