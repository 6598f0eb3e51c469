// Reading a collection of documents: which files a folder or list gives and in what order, the loops and
// non-files refused, splitting at marker lines, the checks on each file, the validation split of whole
// documents and the document-length statistics (hand-computed values).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "process.h"
#include "string_views.h"
#include "xsa/tokenizer/documents.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

using testing::as_strings;
using testing::spit;
using testing::TempDir;

// The message of the InputError `body` throws ("" if none).
template <typename F>
std::string input_error(F&& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

DocumentSources folder(const std::string& path) {
  DocumentSources sources;
  sources.paths = {path};
  return sources;
}

TEST(CollectDocumentFiles, AFolderGivesEveryFileBelowItInByteWisePathOrder) {
  TempDir dir;
  std::filesystem::create_directories(dir / "c/a/deep");
  std::filesystem::create_directories(dir / "c/B");
  for (const char* name : {"c/a.txt", "c/a/z.py", "c/a/deep/y", "c/B/x", "c/b", "c/.hidden", "c/a-b"})
    spit(dir / name, "text");
  // As `find c -type f | LC_ALL=C sort`: '.' (0x2E) < '/' (0x2F), '-' (0x2D) first, upper case before lower.
  EXPECT_EQ(collect_document_files(folder(dir / "c")),
            (std::vector<std::string>{dir / "c/.hidden", dir / "c/B/x", dir / "c/a-b", dir / "c/a.txt",
                                      dir / "c/a/deep/y", dir / "c/a/z.py", dir / "c/b"}));
}

TEST(CollectDocumentFiles, FilesAndListsInTheOrderGivenAListRelativeToItsFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir / "lists/docs");
  std::filesystem::create_directories(dir / "more");
  spit(dir / "lists/docs/one.txt", "1");
  spit(dir / "lists/docs/two.txt", "2");
  spit(dir / "more/three.txt", "3");
  spit(dir / "more/four.txt", "4");
  spit(dir / "lists/list.txt", "docs/two.txt\n\n" + dir / "more/four.txt" + "\r\ndocs/one.txt\n");
  DocumentSources sources;
  sources.paths = {dir / "more/three.txt"};
  sources.list_files = {dir / "lists/list.txt"};
  EXPECT_EQ(collect_document_files(sources),
            (std::vector<std::string>{dir / "more/three.txt", dir / "lists/docs/two.txt",
                                      dir / "more/four.txt", dir / "lists/docs/one.txt"}));
}

TEST(CollectDocumentFiles, LoopsBrokenLinksNonFilesAndRepeatsAreRefusedNamingThePath) {
  TempDir dir;
  std::filesystem::create_directories(dir / "c/sub");
  spit(dir / "c/sub/doc.txt", "text");
  std::filesystem::create_directory_symlink("..", dir / "c/sub/up");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "c")); }),
            dir / "c/sub/up: folder loop (the same folder as " + dir / "c)");
  std::filesystem::remove(dir / "c/sub/up");

  std::filesystem::create_symlink("self", dir / "c/self");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "c")); }),
            dir / "c/self: symbolic link loop");
  std::filesystem::remove(dir / "c/self");

  std::filesystem::create_symlink("nowhere", dir / "c/dangling");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "c")); }),
            dir / "c/dangling: broken symbolic link");
  std::filesystem::remove(dir / "c/dangling");

  ASSERT_EQ(::mkfifo((dir / "c/pipe").c_str(), 0644), 0);
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "c")); }),
            dir / "c/pipe: is a FIFO (named pipe), expected a regular document file");
  std::filesystem::remove(dir / "c/pipe");

  // A link to a file is followed; the same file reached twice would be one document counted twice.
  std::filesystem::create_symlink("sub/doc.txt", dir / "c/alias.txt");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "c")); }),
            dir / "c/sub/doc.txt: the same file as " + dir / "c/alias.txt" + " (listed twice)");
  std::filesystem::remove(dir / "c/alias.txt");

  std::filesystem::create_directories(dir / "empty");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "empty")); }),
            "no document files found in the given paths (empty corpus)");
  EXPECT_EQ(input_error([&] { collect_document_files(folder(dir / "missing")); }),
            dir / "missing: document path not found");
  EXPECT_EQ(collect_document_files(folder(dir / "c")), std::vector<std::string>{dir / "c/sub/doc.txt"});
}

TEST(ReadDocumentFile, AWholeFileIsOneDocumentTrimmedAndKeptByteForByteInside) {
  TempDir dir;
  spit(dir / "a.py", "\n\ndef f():\n    return 1\n\n\n# end\n");
  const DocumentFile file = read_document_file(dir / "a.py", "", 1000);
  EXPECT_EQ(as_strings(file.documents), std::vector<std::string>{"def f():\n    return 1\n\n\n# end"});
  EXPECT_EQ(file.bytes, 32u);
  EXPECT_EQ(file.skipped_empty, 0u);
  // sha256sum of the bytes above.
  EXPECT_EQ(file.sha256, "8bfa5671011f5280e3ae8c0c25cb70e42dc4a4f810c2b0ef02d2f4da4f11722f");
  spit(dir / "blank", " \n\t\n");
  const DocumentFile blank = read_document_file(dir / "blank", "", 1000);
  EXPECT_TRUE(blank.documents.empty());
  EXPECT_EQ(blank.skipped_empty, 1u);
}

TEST(ReadDocumentFile, MarkerLinesSeparateDocumentsAndEmptyOnesAreCounted) {
  TempDir dir;
  spit(dir / "book.txt",
       "Book one.\nLine.\n=== END ===\n\n=== END ===\n  === END ===  \nBook two.\n=== END ===");
  const DocumentFile file = read_document_file(dir / "book.txt", "=== END ===", 1000);
  EXPECT_EQ(as_strings(file.documents), (std::vector<std::string>{"Book one.\nLine.", "Book two."}));
  EXPECT_EQ(file.skipped_empty, 2u);
  // The marker must be the whole line: inside a line it is text.
  spit(dir / "inline.txt", "a === END === b\n");
  EXPECT_EQ(read_document_file(dir / "inline.txt", "=== END ===", 1000).documents.size(), 1u);
}

TEST(ReadDocumentFile, BinaryNonUtf8AndOverlongDocumentsAreRefusedWithTheOffset) {
  TempDir dir;
  spit(dir / "bin", std::string("PK\x03\x04\x00\x01", 6));
  EXPECT_EQ(input_error([&] { read_document_file(dir / "bin", "", 1000); }),
            dir / "bin: binary file (NUL byte at byte offset 4), expected UTF-8 text");
  spit(dir / "latin1.txt", "na\xEFve caf\xE9");
  EXPECT_EQ(input_error([&] { read_document_file(dir / "latin1.txt", "", 1000); }),
            dir / "latin1.txt: not valid UTF-8 at byte offset 2");
  spit(dir / "long.txt", std::string(11, 'x'));
  EXPECT_EQ(input_error([&] { read_document_file(dir / "long.txt", "", 10); }),
            dir / "long.txt: document has 11 bytes, over --max-document-bytes 10");
  // With a separator the limit is per document: the file may be larger, one document may not.
  spit(dir / "parts.txt", "0123456789\n--\n0123456789A\n");
  EXPECT_EQ(input_error([&] { read_document_file(dir / "parts.txt", "--", 10); }),
            dir / "parts.txt: document 2 (counting from 1) has 11 bytes, over --max-document-bytes 10");
  EXPECT_EQ(read_document_file(dir / "parts.txt", "--", 11).documents.size(), 2u);
}

TEST(ChooseValidationDocuments, TheDocumentsWithTheSmallestSeededHashExactlyRoundedCount) {
  const std::vector<std::string_view> docs = {"alpha", "beta", "gamma", "delta", "epsilon"};
  // Python: sorted(docs, key=lambda d: hashlib.sha256(f"xsa.split/1:{seed}:{d}".encode()).hexdigest())
  // seed 0: beta, epsilon, alpha, delta, gamma; seed 7: epsilon, delta, gamma, beta, alpha.
  EXPECT_EQ(choose_validation_documents(docs, 0.4, 0), (std::vector<bool>{false, true, false, false, true}));
  EXPECT_EQ(choose_validation_documents(docs, 0.4, 7), (std::vector<bool>{false, false, false, true, true}));
  // round(0.5 * 5) = 3 (half away from zero): beta, epsilon, alpha.
  EXPECT_EQ(choose_validation_documents(docs, 0.5, 0), (std::vector<bool>{true, true, false, false, true}));
  // The choice follows the text, not the position: reversed, the same documents are chosen.
  const std::vector<std::string_view> reversed(docs.rbegin(), docs.rend());
  EXPECT_EQ(choose_validation_documents(reversed, 0.4, 0),
            (std::vector<bool>{true, false, false, true, false}));
}

// Identical documents never straddle the split: the copies of the last chosen document go with it.
TEST(ChooseValidationDocuments, CopiesOfAChosenDocumentGoWithIt) {
  // round(6 / 6) = 1 document asked for; "beta" has the smallest key at seed 0 (above), so both copies go.
  const std::vector<std::string_view> docs = {"alpha", "beta", "gamma", "beta", "delta", "epsilon"};
  EXPECT_EQ(choose_validation_documents(docs, 1.0 / 6.0, 0),
            (std::vector<bool>{false, true, false, true, false, false}));
  const std::vector<std::string_view> copies = {"beta", "beta"};
  EXPECT_EQ(input_error([&] { choose_validation_documents(copies, 0.5, 0); }),
            "empty train split: --val-fraction 0.5 of 2 documents, with the copies of the last one chosen, "
            "leaves none to train on");
}

TEST(ChooseValidationDocuments, EmptySplitsAndFractionsOutOfRangeAreRefused) {
  const std::vector<std::string_view> docs = {"alpha", "beta", "gamma", "delta", "epsilon"};
  EXPECT_EQ(
      input_error([&] { choose_validation_documents(docs, 0.05, 0); }),
      "empty validation split: --val-fraction 0.05 of 5 documents rounds to 0 (give more documents or a "
      "larger fraction)");
  EXPECT_EQ(input_error([&] { choose_validation_documents(docs, 0.95, 0); }),
            "empty train split: --val-fraction 0.95 of 5 documents leaves none to train on");
  for (double bad : {0.0, 1.0, -0.1, 1.5, std::nan("")}) {
    EXPECT_NE(
        input_error([&] { choose_validation_documents(docs, bad, 0); }).find(": expected a number in (0, 1)"),
        std::string::npos)
        << bad;
  }
}

TEST(DocumentLengthStats, HandComputedOnFiveDocuments) {
  // Sorted: 10 200 300 5000 20000; sum 25510. Percentile p at rank 4p/100, linear between neighbours:
  // p10 = 10 + 0.4*190 = 86, p25 = 200, median = 300, p75 = 5000, p90 = 5000 + 0.6*15000 = 14000,
  // p99 = 5000 + 0.96*15000 = 19400.
  const auto stats = document_length_stats({5000, 10, 20000, 300, 200});
  EXPECT_EQ(stats["count"], 5);
  EXPECT_EQ(stats["tokens"], 25510);
  EXPECT_DOUBLE_EQ(stats["mean"].get<double>(), 5102.0);
  EXPECT_EQ(stats["min"], 10);
  EXPECT_DOUBLE_EQ(stats["p10"].get<double>(), 86.0);
  EXPECT_DOUBLE_EQ(stats["p25"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(stats["median"].get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(stats["p75"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(stats["p90"].get<double>(), 14000.0);
  EXPECT_DOUBLE_EQ(stats["p99"].get<double>(), 19400.0);
  EXPECT_EQ(stats["max"], 20000);
  const auto& share = stats["share_of_tokens_in_documents_longer_than"];
  ASSERT_EQ(share.size(), 8u);
  EXPECT_DOUBLE_EQ(share["128"].get<double>(), 25500.0 / 25510);
  EXPECT_DOUBLE_EQ(share["256"].get<double>(), 25300.0 / 25510);
  for (const char* t : {"512", "1024", "2048", "4096"})
    EXPECT_DOUBLE_EQ(share[t].get<double>(), 25000.0 / 25510);
  EXPECT_DOUBLE_EQ(share["8192"].get<double>(), 20000.0 / 25510);
  EXPECT_DOUBLE_EQ(share["16384"].get<double>(), 20000.0 / 25510);
  // "Longer than": a document of exactly T tokens does not count.
  EXPECT_DOUBLE_EQ(
      document_length_stats({128, 129})["share_of_tokens_in_documents_longer_than"]["128"].get<double>(),
      129.0 / 257);
  // An even count: the median lies halfway between the middle two.
  EXPECT_DOUBLE_EQ(document_length_stats({1, 2, 3, 10})["median"].get<double>(), 2.5);
  const auto empty = document_length_stats({});
  EXPECT_EQ(empty["count"], 0);
  EXPECT_FALSE(empty.contains("median"));
}

}  // namespace
}  // namespace xsa
