#include "xsa/records/safetensors.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "xsa/util/error.h"
#include "xsa/util/json_input.h"

namespace xsa::safetensors {

using json = nlohmann::json;

namespace {

struct DtypeInfo {
  Dtype dtype;
  const char* name;
  std::size_t size;
};
constexpr std::array<DtypeInfo, 10> kDtypes{{{Dtype::kF64, "F64", 8},
                                             {Dtype::kF32, "F32", 4},
                                             {Dtype::kF16, "F16", 2},
                                             {Dtype::kBF16, "BF16", 2},
                                             {Dtype::kI64, "I64", 8},
                                             {Dtype::kI32, "I32", 4},
                                             {Dtype::kI16, "I16", 2},
                                             {Dtype::kI8, "I8", 1},
                                             {Dtype::kU8, "U8", 1},
                                             {Dtype::kBool, "BOOL", 1}}};

const DtypeInfo& info_of(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d;
  return kDtypes[1];
}

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

std::string dtype_names() {
  std::string out;
  for (const auto& d : kDtypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

// One tensor's header entry, checked: {"dtype": known, "shape": [non-negative ints], "data_offsets": [b, e]}
// with e - b = numel · dtype size and e within the data section.
TensorEntry parse_entry(const std::string& name, const json& j, std::uint64_t data_bytes,
                        const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": is not an object");
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      throw InputError(where + ": unknown field '" + key + "' (expected dtype, shape, data_offsets)");
  }
  TensorEntry e;
  e.name = name;
  if (!j.contains("dtype") || !j.at("dtype").is_string())
    throw InputError(where + ": dtype missing or not a string");
  const std::string dtype = j.at("dtype").get<std::string>();
  auto it = std::find_if(kDtypes.begin(), kDtypes.end(), [&](const DtypeInfo& d) { return dtype == d.name; });
  if (it == kDtypes.end())
    throw InputError(where + ": unknown dtype '" + dtype + "' (expected " + dtype_names() + ")");
  e.dtype = it->dtype;
  if (!j.contains("shape") || !j.at("shape").is_array())
    throw InputError(where + ": shape missing or not a list");
  std::uint64_t numel = 1;
  for (const auto& d : j.at("shape")) {
    if (!d.is_number_unsigned())
      throw InputError(where + ": shape holds " + d.dump() + ", not an integer >= 0");
    const auto dim = d.get<std::uint64_t>();
    if (dim > 0 && numel > std::numeric_limits<std::uint64_t>::max() / 8 / dim)
      throw InputError(where + ": shape " + j.at("shape").dump() + " overflows");
    numel *= dim;
    e.shape.push_back(static_cast<std::int64_t>(dim));
  }
  const json& offsets = j.contains("data_offsets") ? j.at("data_offsets") : json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    throw InputError(where + ": data_offsets must be two integers >= 0 [begin, end]");
  e.begin = offsets[0].get<std::uint64_t>();
  e.end = offsets[1].get<std::uint64_t>();
  if (e.begin > e.end || e.end > data_bytes)
    throw InputError(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                     "] outside the " + std::to_string(data_bytes) + " data bytes after the header");
  if (e.end - e.begin != numel * it->size)
    throw InputError(where + ": data_offsets span " + std::to_string(e.end - e.begin) + " bytes, but " +
                     dtype + " " + j.at("shape").dump() + " takes " + std::to_string(numel * it->size));
  return e;
}

}  // namespace

const char* dtype_name(Dtype dtype) {
  return info_of(dtype).name;
}
std::size_t dtype_size(Dtype dtype) {
  return info_of(dtype).size;
}

std::int64_t TensorEntry::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

const TensorEntry* File::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

File parse(const std::string& bytes, const std::string& source) {
  if (bytes.size() < 8)
    throw InputError(source + ": " + std::to_string(bytes.size()) +
                     " bytes, too short for a safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8)
    throw InputError(source + ": header length " + std::to_string(n) + " exceeds the file (" +
                     std::to_string(bytes.size()) + " bytes) or the 100 MB limit; not a safetensors file");
  const std::string text = bytes.substr(8, n);
  if (text.empty() || text[0] != '{') throw InputError(source + ": header does not start with '{'");
  json header = parse_json_input(text, source);  // a tensor named twice is refused
  if (header.is_discarded() || !header.is_object())
    throw InputError(source + ": header is not a JSON object");
  File file;
  file.data_offset = 8 + n;
  const std::uint64_t data_bytes = bytes.size() - file.data_offset;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) throw InputError(source + ": __metadata__ is not an object");
      for (const auto& [key, v] : value.items()) {
        if (!v.is_string()) throw InputError(source + ": __metadata__." + key + " is not a string");
        file.metadata[key] = v.get<std::string>();
      }
      continue;
    }
    file.tensors.push_back(parse_entry(name, value, data_bytes, source + ": tensor '" + name + "'"));
  }
  // The tensors must tile the data section: sorted by offset, each starts where the previous ended.
  std::vector<const TensorEntry*> by_offset;
  for (const auto& t : file.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const TensorEntry* t : by_offset) {
    if (t->begin < at)
      throw InputError(source + ": tensor '" + t->name + "' at data_offsets [" + std::to_string(t->begin) +
                       ", " + std::to_string(t->end) + "] overlaps the tensor before it");
    if (t->begin > at)
      throw InputError(source + ": bytes [" + std::to_string(at) + ", " + std::to_string(t->begin) +
                       ") of the data belong to no tensor");
    at = t->end;
  }
  if (at != data_bytes)
    throw InputError(source + ": the tensors end at data byte " + std::to_string(at) +
                     " but the file holds " + std::to_string(data_bytes));
  return file;
}

std::string serialize(const std::vector<F32Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  if (!host_is_little_endian()) throw RuntimeFailure("safetensors: writing needs a little-endian host");
  std::vector<const F32Tensor*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const F32Tensor* a, const F32Tensor* b) { return a->name < b->name; });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t at = 0;
  std::string data;
  for (const F32Tensor* t : order) {
    if (t->name == "__metadata__" || header.contains(t->name))
      throw RuntimeFailure("safetensors: tensor name '" + t->name + "' used twice or reserved");
    std::uint64_t numel = 1;
    for (auto d : t->shape) numel *= static_cast<std::uint64_t>(d);
    const std::uint64_t size = numel * sizeof(float);
    header[t->name] = {{"dtype", "F32"}, {"shape", t->shape}, {"data_offsets", {at, at + size}}};
    data.append(reinterpret_cast<const char*>(t->data), size);
    at += size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + text + data;
}

}  // namespace xsa::safetensors
