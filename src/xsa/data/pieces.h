#pragma once
// Decoding token ids to text without sentencepiece, from pieces.json (id -> piece). Torch-free.
// Handles "▁" (U+2581) as space, byte-fallback pieces "<0xAB>", and control pieces (<s>, </s>, <unk>).
//
// pieces.json (written by xsa-prepare):
//   {"format": "xsa.pieces/1", "vocab_size": N, "unk_id": 0, "bos_id": 1, "eos_id": 2, "unk_surface": " ⁇ ",
//    "pieces": ["<unk>", "<s>", ...], "types": ["unknown", "control", "byte", "normal", ...]}
#include <cstdint>
#include <string>
#include <vector>

namespace xsa {

enum class PieceType { kNormal, kUnknown, kControl, kByte, kUnused };

class PiecesDecoder {
 public:
  // Reads <dir>/pieces.json (or a pieces.json path); InputError naming the file on problems.
  static PiecesDecoder load(const std::string& path_or_dir);
  // Parses pieces.json text; `path` names the file in errors (load's core, also used by the fuzzer).
  static PiecesDecoder parse(const std::string& json_text, const std::string& path);
  // Types inferred from the pieces: "<0xAB>" is a byte, "<s>"/"</s>" control, "<unk>" unknown.
  explicit PiecesDecoder(std::vector<std::string> pieces, int bos_id, int eos_id);
  PiecesDecoder(std::vector<std::string> pieces, std::vector<PieceType> types, int bos_id, int eos_id,
                std::string unk_surface = " \xE2\x81\x87 ");
  // Decodes like sentencepiece's DecodeIds for one story (no BOS inside): byte pieces are joined into
  // UTF-8, "▁" becomes a space, the dummy-prefix space at the start is dropped. BOS/EOS ids act as
  // story separators (a BOS starts a new story, so text after it again drops the dummy-prefix space).
  // Invalid UTF-8 from byte pieces becomes U+FFFD per byte, as in sentencepiece. Throws InputError for an id
  // outside [0, vocab_size).
  std::string decode(const std::vector<int>& ids) const;
  // The stories in `ids`: the text between BOS/EOS ids, each decoded as above; empty ones are dropped.
  std::vector<std::string> decode_stories(const std::vector<int>& ids) const;
  int vocab_size() const { return static_cast<int>(pieces_.size()); }
  int bos_id() const { return bos_id_; }
  int eos_id() const { return eos_id_; }
  const std::string& piece(int id) const { return pieces_.at(static_cast<std::size_t>(id)); }

 private:
  std::vector<std::string> pieces_;
  std::vector<PieceType> types_;
  std::vector<int> byte_values_;  // the byte of each byte piece, -1 for other pieces
  int bos_id_;
  int eos_id_;
  std::string unk_surface_;
};

}  // namespace xsa
