#pragma once
// Reading a collection of documents for xsa-prepare (docs/guide.md "Data", "Any collection of documents"):
// a document per file (files named directly, every file under a folder, or the paths in a list file), or
// documents separated by a marker line inside each file. Needs no sentencepiece; lives here because only
// xsa-prepare uses it.
//
// A document is its text without the surrounding ASCII whitespace (the same rule as a TinyStories story, so
// `--doc-separator "<|endoftext|>"` reads a TinyStories .txt file into the same stories); everything inside
// it is kept byte for byte and it is never cut. Whitespace-only documents (an empty __init__.py) are skipped
// and counted.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace xsa {

// 16 MiB: far above any book or hand-written source file of the corpora scripts/corpora/build_corpus.sh
// builds, low enough that a stray dump, disk image or generated table is refused rather than tokenized as one
// document.
inline constexpr std::uint64_t kDefaultMaxDocumentBytes = 16ull << 20;

struct DocumentSources {
  std::vector<std::string> paths;       // a file (its documents) or a folder (every file under it)
  std::vector<std::string> list_files;  // text files of paths, one a line, relative to the list's folder
  std::string separator;                // empty: one document per file; else a marker line between documents
  std::uint64_t max_document_bytes = kDefaultMaxDocumentBytes;
};

// The files `sources` names, in order: each path and list as given on the command line (paths first, then the
// lists), a folder's files recursively in byte-wise sorted order of their path (as `find DIR -type f |
// LC_ALL=C sort`). Symbolic links are followed. Throws InputError (one line naming the path) for a missing
// path, a broken symbolic link or a link loop, a folder that contains itself (a folder loop), anything that
// is not a regular file or folder (FIFO, device, socket), the same file reached twice, and no files at all.
std::vector<std::string> collect_document_files(const DocumentSources& sources);

struct DocumentFile {
  std::string path;  // as collected
  std::uint64_t bytes = 0;
  std::string sha256;                          // of the file's bytes
  std::vector<std::string_view> documents;     // views into `storage`, in file order
  std::shared_ptr<const std::string> storage;  // shared so the views survive moves
  std::uint64_t skipped_empty = 0;             // whitespace-only documents left out
};

// Reads one file into documents. Throws InputError naming the file: unreadable, a binary file (a NUL byte,
// with its offset), not UTF-8 (with the byte offset), a document over `max_document_bytes` (a file without a
// separator is refused before it is read). An empty file gives no documents.
DocumentFile read_document_file(const std::string& path, const std::string& separator,
                                std::uint64_t max_document_bytes);

// The validation split of whole documents: the round(val_fraction × n) documents (halves rounded up) whose
// key sha256(kSplitKeyPrefix + seed + ":" + text) is smallest go to validation, with every copy of the last
// of them (equal text, equal key). The choice depends on the documents' text only, not on their paths or
// order, and identical documents always land in the same split. Returns one flag per document (true:
// validation). Throws InputError when a split would be empty or val_fraction is not in (0, 1).
inline constexpr std::string_view kSplitKeyPrefix = "xsa.split/1:";
void require_val_fraction(double val_fraction);  // InputError unless 0 < val_fraction < 1
std::vector<bool> choose_validation_documents(const std::vector<std::string_view>& documents,
                                              double val_fraction, std::uint64_t seed);

// The rule above in words, for meta.json.
std::string validation_split_rule();

// The distribution of document lengths (in tokens, the BOS included: what each document occupies in the
// token file, so the lengths sum to the split's token count): count, tokens, mean, min, median, percentiles
// (linear interpolation between order statistics, as numpy.percentile's default), max, and the share of the
// split's tokens that lie in documents longer than each of kLengthThresholds.
inline constexpr std::uint64_t kLengthThresholds[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
nlohmann::ordered_json document_length_stats(std::vector<std::uint64_t> lengths);

}  // namespace xsa
