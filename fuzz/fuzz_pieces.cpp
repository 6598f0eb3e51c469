// Fuzzes the pieces.json reader (PiecesDecoder::parse, the core of load) and decoding with what it read:
// the input's bytes, taken two at a time, are the token ids to decode.
#include <vector>

#include "fuzz_common.h"
#include "xsa/data/pieces.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = xsa::fuzz::as_text(data, size);
  std::vector<int> ids;
  try {
    const xsa::PiecesDecoder decoder = xsa::PiecesDecoder::parse(text, "data/fuzz/pieces.json");
    if (decoder.vocab_size() == 0) return 0;
    for (std::size_t i = 0; i + 1 < size; i += 2)
      ids.push_back((data[i] | data[i + 1] << 8) % decoder.vocab_size());
    // Decoded text is printed and compared with the source text: it must be valid UTF-8 (byte pieces that
    // do not form UTF-8 become U+FFFD, like sentencepiece).
    for (const auto& story : decoder.decode_stories(ids))
      if (!xsa::fuzz::is_valid_utf8(story)) xsa::fuzz::invariant_failed("decoded text is not valid UTF-8");
  } catch (const xsa::InputError&) {
  }
  return 0;
}
