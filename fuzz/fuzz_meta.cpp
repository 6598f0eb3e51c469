// Fuzzes the prepared-data meta.json reader (parse_meta, the core of read_meta).
#include "fuzz_common.h"
#include "xsa/data/token_data.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  xsa::DatasetMeta meta;
  try {
    meta = xsa::parse_meta(xsa::fuzz::as_text(data, size), "data/fuzz/meta.json");
  } catch (const xsa::InputError&) {
    return 0;
  }
  // What TokenFile and the trainer rely on: ids fit uint16, bos/eos are -1 or inside the vocabulary.
  if (meta.vocab_size < 1 || meta.vocab_size > 65536) xsa::fuzz::invariant_failed("vocab_size out of range");
  for (int id : {meta.bos_id, meta.eos_id})
    if (id < -1 || id >= meta.vocab_size) xsa::fuzz::invariant_failed("bos/eos id out of range");
  return 0;
}
