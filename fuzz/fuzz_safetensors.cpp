// Fuzzes the safetensors reader behind model.init_from (records/safetensors.h's parse).
#include "fuzz_common.h"
#include "xsa/records/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = xsa::fuzz::as_text(data, size);
  xsa::safetensors::File file;
  try {
    file = xsa::safetensors::parse(bytes, "fuzz/model.safetensors");
  } catch (const xsa::InputError&) {
    return 0;
  }
  // What load_model_safetensors relies on: every tensor's bytes lie inside the file, hold exactly numel
  // elements of its dtype, and the tensors tile the data section.
  std::uint64_t total = 0;
  for (const auto& t : file.tensors) {
    if (t.begin > t.end || file.data_offset + t.end > bytes.size())
      xsa::fuzz::invariant_failed("offsets outside");
    if (t.end - t.begin != static_cast<std::uint64_t>(t.numel()) * xsa::safetensors::dtype_size(t.dtype))
      xsa::fuzz::invariant_failed("size does not match dtype and shape");
    total += t.end - t.begin;
  }
  if (file.data_offset + total != bytes.size()) xsa::fuzz::invariant_failed("tensors do not tile the data");
  return 0;
}
