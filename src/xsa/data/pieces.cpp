#include "xsa/data/pieces.h"

#include <nlohmann/json.hpp>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/utf8.h"

namespace xsa {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";           // U+2581 "▁", sentencepiece's space
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// "<0x41>" -> 0x41; -1 if `piece` is not of that form.
int parse_byte_piece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    char c = piece[static_cast<std::size_t>(i)];
    int digit = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

PieceType infer_type(const std::string& piece) {
  if (parse_byte_piece(piece) >= 0) return PieceType::kByte;
  if (piece == "<s>" || piece == "</s>" || piece == "<pad>") return PieceType::kControl;
  if (piece == "<unk>") return PieceType::kUnknown;
  return PieceType::kNormal;
}

std::vector<PieceType> infer_types(const std::vector<std::string>& pieces) {
  std::vector<PieceType> types;
  for (const auto& piece : pieces) types.push_back(infer_type(piece));
  return types;
}

// Appends a run of byte-fallback bytes as text: valid UTF-8 as is, each invalid byte as U+FFFD.
void append_bytes_as_utf8(const std::string& bytes, std::string& out) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::size_t length = utf8_sequence_length(bytes, at);
    if (length == 0) {
      out += kReplacementCharacter;
      at += 1;
    } else {
      out.append(bytes, at, length);
      at += length;
    }
  }
}

void append_replacing_space_symbol(std::string_view piece, std::string& out) {
  std::size_t at = 0;
  while (at < piece.size()) {
    std::size_t next = piece.find(kSpaceSymbol, at);
    if (next == std::string_view::npos) {
      out.append(piece.substr(at));
      return;
    }
    out.append(piece.substr(at, next - at));
    out.push_back(' ');
    at = next + kSpaceSymbol.size();
  }
}

}  // namespace

PiecesDecoder::PiecesDecoder(std::vector<std::string> pieces, int bos_id, int eos_id)
    : PiecesDecoder(pieces, infer_types(pieces), bos_id, eos_id) {}

PiecesDecoder::PiecesDecoder(std::vector<std::string> pieces, std::vector<PieceType> types, int bos_id,
                             int eos_id, std::string unk_surface)
    : pieces_(std::move(pieces)),
      types_(std::move(types)),
      bos_id_(bos_id),
      eos_id_(eos_id),
      unk_surface_(std::move(unk_surface)) {
  if (types_.size() != pieces_.size()) throw InputError("pieces and piece types differ in length");
  for (std::size_t id = 0; id < pieces_.size(); ++id) {
    int value = types_[id] == PieceType::kByte ? parse_byte_piece(pieces_[id]) : -1;
    if (types_[id] == PieceType::kByte && value < 0) {
      throw InputError("byte piece " + std::to_string(id) + " is \"" + pieces_[id] + "\", expected <0xHH>");
    }
    byte_values_.push_back(value);
  }
}

PiecesDecoder PiecesDecoder::load(const std::string& path_or_dir) {
  const std::string path = is_directory(path_or_dir) ? path_or_dir + "/pieces.json" : path_or_dir;
  return parse(read_file(path), path);
}

PiecesDecoder PiecesDecoder::parse(const std::string& json_text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON (" + e.what() + ")");
  }
  auto require_int = [&](const char* key) {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_number_integer()) {
      throw InputError(path + ": expected an integer \"" + key + "\"");
    }
    // get<int>() alone would wrap a value outside int (4294967297 -> 1).
    const auto& value = doc[key];
    const bool in_range = value.is_number_unsigned()
                              ? value.get<std::uint64_t>() <= INT32_MAX
                              : value.get<std::int64_t>() >= -1 && value.get<std::int64_t>() <= INT32_MAX;
    if (!in_range)
      throw InputError(path + ": \"" + key + "\" is " + value.dump() + ", expected a token id or -1");
    return value.get<int>();
  };
  const int bos_id = require_int("bos_id");
  const int eos_id = require_int("eos_id");
  if (!doc.contains("pieces") || !doc["pieces"].is_array()) {
    throw InputError(path + ": expected an array of strings \"pieces\"");
  }
  std::vector<std::string> pieces;
  for (const auto& piece : doc["pieces"]) {
    if (!piece.is_string()) throw InputError(path + ": \"pieces\" must contain only strings");
    pieces.push_back(piece.get<std::string>());
  }
  if (doc.contains("vocab_size") && doc["vocab_size"] != pieces.size()) {
    throw InputError(path + ": vocab_size is " + doc["vocab_size"].dump() + " but there are " +
                     std::to_string(pieces.size()) + " pieces");
  }
  if (doc.contains("unk_surface") && !doc["unk_surface"].is_string())
    throw InputError(path + ": \"unk_surface\" must be a string, found " + doc["unk_surface"].dump());
  std::string unk_surface = doc.value("unk_surface", std::string(" \xE2\x81\x87 "));
  if (!doc.contains("types")) return PiecesDecoder(std::move(pieces), bos_id, eos_id);

  const auto& type_names = doc["types"];
  if (!type_names.is_array() || type_names.size() != pieces.size()) {
    throw InputError(path + ": \"types\" must be an array as long as \"pieces\" (" +
                     std::to_string(pieces.size()) + ")");
  }
  std::vector<PieceType> types;
  for (const auto& name : type_names) {
    const std::string type = name.is_string() ? name.get<std::string>() : name.dump();
    if (type == "normal")
      types.push_back(PieceType::kNormal);
    else if (type == "unknown")
      types.push_back(PieceType::kUnknown);
    else if (type == "control")
      types.push_back(PieceType::kControl);
    else if (type == "byte")
      types.push_back(PieceType::kByte);
    else if (type == "unused")
      types.push_back(PieceType::kUnused);
    else
      throw InputError(path + ": unknown piece type \"" + type +
                       "\", expected normal|unknown|control|byte|unused");
  }
  try {
    return PiecesDecoder(std::move(pieces), std::move(types), bos_id, eos_id, std::move(unk_surface));
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

std::vector<std::string> PiecesDecoder::decode_stories(const std::vector<int>& ids) const {
  std::vector<std::string> stories;
  std::string text;            // the story being decoded
  std::string byte_run;        // consecutive byte-fallback bytes, flushed as UTF-8
  bool at_story_start = true;  // the next visible piece drops its dummy-prefix "▁"
  auto flush_bytes = [&]() {
    append_bytes_as_utf8(byte_run, text);
    byte_run.clear();
  };
  auto end_story = [&]() {
    flush_bytes();
    if (!text.empty()) stories.push_back(std::move(text));
    text.clear();
    at_story_start = true;
  };
  for (int id : ids) {
    if (id < 0 || id >= vocab_size()) {
      throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                       std::to_string(vocab_size()) + ")");
    }
    if (id == bos_id_ || id == eos_id_) {
      end_story();
      continue;
    }
    const PieceType type = types_[static_cast<std::size_t>(id)];
    if (type == PieceType::kByte) {
      byte_run.push_back(static_cast<char>(byte_values_[static_cast<std::size_t>(id)]));
      at_story_start = false;
      continue;
    }
    flush_bytes();
    if (type == PieceType::kControl || type == PieceType::kUnused) continue;  // invisible
    if (type == PieceType::kUnknown) {
      text += unk_surface_;
      at_story_start = false;
      continue;
    }
    std::string_view piece = pieces_[static_cast<std::size_t>(id)];
    if (at_story_start && piece.substr(0, kSpaceSymbol.size()) == kSpaceSymbol)
      piece.remove_prefix(kSpaceSymbol.size());
    append_replacing_space_symbol(piece, text);
    at_story_start = false;
  }
  end_story();
  return stories;
}

std::string PiecesDecoder::decode(const std::vector<int>& ids) const {
  std::string text;
  for (const auto& story : decode_stories(ids)) text += story;
  return text;
}

}  // namespace xsa
