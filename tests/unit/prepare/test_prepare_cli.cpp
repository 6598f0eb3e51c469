// The xsa-prepare executable end to end on the hand-written fixtures: outputs, meta.json, determinism,
// --decode, --force, and every bad input (exit code 2, one stderr line, nothing left behind).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "process.h"
#include "xsa/data/token_data.h"

namespace xsa {
namespace {

using testing::count_lines;
using testing::run_command;
using testing::slurp;
using testing::spit;
using testing::TempDir;

const std::string kPrepare = XSA_BINARY_DIR "/xsa-prepare";
const std::string kFixtures = XSA_FIXTURES_DIR "/prepare";
const std::string kTrainA = kFixtures + "/train_a.txt";
const std::string kTrainB = kFixtures + "/train_b.json";
const std::string kVal = kFixtures + "/val.txt";
const std::vector<std::string> kOutputFiles = {"meta.json", "pieces.json", "tokenizer.model", "train.bin",
                                               "val.bin"};

testing::CommandResult prepare(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--train",      kTrainA, kTrainB, "--val", kVal,
                                   "--vocab-size", "400",   "--out", out};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_command(kPrepare, args);
}

std::vector<std::uint16_t> read_tokens(const std::string& path) {
  const std::string bytes = slurp(path);
  std::vector<std::uint16_t> tokens(bytes.size() / 2);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[2 * i]) |
                                           (static_cast<unsigned char>(bytes[2 * i + 1]) << 8));
  }
  return tokens;
}

class PrepareCli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(std::filesystem::exists(kPrepare)) << kPrepare << " is not built"; }
  TempDir dir;
};

TEST_F(PrepareCli, WritesAllFilesAndMeta) {
  const auto result = prepare(dir / "data");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  for (const char* stage :
       {"[1/4] reading", "[2/4] training", "[3/4] encoding", "[4/4] writing", "prepared "}) {
    EXPECT_NE(result.out.find(stage), std::string::npos) << "progress misses " << stage;
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"data"});  // no temporary folder left
  for (const auto& name : kOutputFiles) EXPECT_TRUE(std::filesystem::exists(dir / "data/" + name)) << name;

  const auto meta = nlohmann::json::parse(slurp(dir / "data/meta.json"));
  EXPECT_EQ(meta["vocab_size"], 400);
  EXPECT_EQ(meta["bos_id"], 1);
  EXPECT_EQ(meta["eos_id"], 2);
  EXPECT_EQ(meta["train_stories"], 9);  // 5 in train_a.txt + 4 non-blank in train_b.json
  EXPECT_EQ(meta["val_stories"], 3);
  EXPECT_EQ(meta["stories"]["train"], 9);
  EXPECT_EQ(meta["stories"]["val"], 3);
  ASSERT_EQ(meta["inputs"].size(), 3u);
  EXPECT_EQ(meta["inputs"][0]["path"], kTrainA);
  EXPECT_EQ(meta["inputs"][0]["split"], "train");
  EXPECT_EQ(meta["inputs"][0]["stories"], 5);
  EXPECT_EQ(meta["inputs"][1]["bytes"], 641);
  // Digests from sha256sum.
  EXPECT_EQ(meta["inputs"][1]["sha256"], "03b7a2655962872e5951b8a6d25a59ce7390396049d0eb15460bad56c8a52251");
  EXPECT_EQ(meta["inputs"][2]["split"], "val");
  EXPECT_EQ(meta["inputs"][2]["sha256"], "2de007ec6bcc1ed9333ad3221d5d00a6bf860056204a7ee4cf4a9a69dc9fb8c1");
  EXPECT_EQ(meta["tokenizer_bytes"], std::filesystem::file_size(dir / "data/tokenizer.model"));
  EXPECT_EQ(meta["tokenizer_sha256"].get<std::string>().size(), 64u);
  // Every output's size and sha256 as coreutils' sha256sum reads the written file.
  ASSERT_EQ(meta["outputs"].size(), 4u);
  for (const auto& [name, record] : meta["outputs"].items()) {
    const std::string path = dir / "data/" + name;
    EXPECT_EQ(record["bytes"], std::filesystem::file_size(path)) << name;
    const auto sum = run_command("/usr/bin/sha256sum", {path});
    ASSERT_EQ(sum.exit_code, 0) << sum.err;
    EXPECT_EQ(record["sha256"], sum.out.substr(0, 64)) << name;
  }

  // Token files: uint16 LE, one BOS per story, the counts meta.json states, all ids in the vocabulary.
  const auto train = read_tokens(dir / "data/train.bin");
  const auto val = read_tokens(dir / "data/val.bin");
  EXPECT_EQ(meta["train_tokens"], train.size());
  EXPECT_EQ(meta["val_tokens"], val.size());
  ASSERT_FALSE(val.empty());
  EXPECT_EQ(val.front(), 1);
  EXPECT_EQ(std::count(train.begin(), train.end(), 1), 9);
  EXPECT_EQ(std::count(val.begin(), val.end(), 1), 3);
  EXPECT_EQ(std::count(train.begin(), train.end(), 2), 0);  // no EOS written
  for (auto id : train) EXPECT_LT(id, 400);

  // The torch-free reader accepts it.
  const TokenDataset dataset = TokenDataset::load(dir / "data");
  EXPECT_EQ(dataset.val->size(), val.size());
  EXPECT_EQ(dataset.meta.train_stories, 9u);
}

TEST_F(PrepareCli, SameInputsGiveIdenticalBytesInDifferentFolders) {
  ASSERT_EQ(prepare(dir / "one").exit_code, 0);
  ASSERT_EQ(prepare(dir / "nested/deeper/two", {"--threads", "1"}).exit_code, 0);
  for (const auto& name : kOutputFiles) {
    const std::string first = slurp(dir / "one/" + name);
    EXPECT_FALSE(first.empty()) << name;
    EXPECT_EQ(first, slurp(dir / "nested/deeper/two/" + name)) << name << " differs";
  }
  // The model must not mention where it was written.
  EXPECT_EQ(slurp(dir / "one/tokenizer.model").find(dir.path()), std::string::npos);
}

TEST_F(PrepareCli, DecodeSplitGivesBackTheValText) {
  ASSERT_EQ(prepare(dir / "data").exit_code, 0);
  const auto decoded = run_command(kPrepare, {"--decode", dir / "data", "--split", "val"});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, slurp(kVal));  // val.txt has no whitespace around its stories
}

TEST_F(PrepareCli, DecodeSplitGivesBackEveryTrainStory) {
  ASSERT_EQ(prepare(dir / "data").exit_code, 0);
  const auto decoded = run_command(kPrepare, {"--decode", dir / "data", "--split", "train"});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  // Independent expectation: the stories as written in the fixtures (trimmed of surrounding blank lines).
  const std::string expected =
      "Once upon a time, a small fox named Pip lived by the river. Pip liked to count the stones: 1, 2, 3, "
      "42.\n"
      "One morning Pip saw a bird. \"Hello, bird!\" said Pip. The bird sang a song and flew away.\n\n"
      "Pip was happy. He ran home to tell his mom.\n<|endoftext|>\n";
  EXPECT_EQ(decoded.out.substr(0, expected.size()), expected);
  EXPECT_NE(decoded.out.find("The cat was called Мурка, a name from a far away land.\n"
                             "One day Мурка ran away, and Kenji looked everywhere.\n\n\n"
                             "At last he found her sleeping in a box of socks.\n<|endoftext|>\n"),
            std::string::npos);
  EXPECT_NE(decoded.out.find("\tHe walked past the tree.\tHe climbed over the rock."), std::string::npos);
  EXPECT_NE(
      decoded.out.find("<|endoftext|>\nThe little boat sailed on the lake. The wind was soft and the water "
                       "was blue.\n\nA duck swam next to the boat and said, \"Quack!\"\n<|endoftext|>\n"),
      std::string::npos);
}

TEST_F(PrepareCli, DecodeIdsFromArgumentsAndStdin) {
  ASSERT_EQ(prepare(dir / "data").exit_code, 0);
  // Byte pieces: <0x48>=3+0x48 'H', <0x69> 'i', then a BOS, then UTF-8 bytes of "é" (C3 A9).
  const std::vector<std::string> ids = {"75", "108", "1", std::to_string(3 + 0xC3), std::to_string(3 + 0xA9)};
  const auto from_args =
      run_command(kPrepare, {"--decode", dir / "data", ids[0], ids[1], ids[2], ids[3], ids[4]});
  ASSERT_EQ(from_args.exit_code, 0) << from_args.err;
  EXPECT_EQ(from_args.out, "Hi\n<|endoftext|>\n\xC3\xA9\n");
  const auto from_stdin = run_command(kPrepare, {"--decode", dir / "data"}, "75 108\n1 198\n172\n");
  EXPECT_EQ(from_stdin.out, from_args.out);
}

TEST_F(PrepareCli, ForceReplacesAnExistingFolder) {
  std::filesystem::create_directories(dir / "data");
  spit(dir / "data/old.txt", "old");
  const auto refused = prepare(dir / "data");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "xsa-prepare: error: " + dir / "data" +
                             ": output folder already exists (use --force to replace it)\n");
  EXPECT_TRUE(std::filesystem::exists(dir / "data/old.txt"));
  const auto forced = prepare(dir / "data", {"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "data/old.txt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "data/meta.json"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"data"});
}

// An output never destroys an input: --out that holds a train or val file (or is one) is refused with --force
// too, before the tokenizer is trained, and the text stays; a killed run's temporary folder goes at the next.
TEST_F(PrepareCli, AnOutputFolderHoldingAnInputIsRefusedAndAKilledRunsFolderRemoved) {
  std::filesystem::create_directories(dir / "corpus");
  spit(dir / "corpus/train.txt", slurp(kTrainA));
  const std::string text = slurp(dir / "corpus/train.txt");
  for (const std::string& out : {dir / "corpus", dir.path(), dir / "corpus/train.txt"}) {
    const auto r = run_command(kPrepare, {"--train", dir / "corpus/train.txt", "--val", kVal, "--vocab-size",
                                          "400", "--out", out, "--force"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("the train file " + dir / "corpus/train.txt"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "refused before any work";
    EXPECT_EQ(slurp(dir / "corpus/train.txt"), text);
  }
  // A temporary folder nobody holds (its writer was killed) is removed when the next run starts.
  std::filesystem::create_directories(dir / ".data.tmp-Zz9Yy8");
  spit(dir / ".data.tmp-Zz9Yy8/train.bin", "half");
  const auto r = prepare(dir / "data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / ".data.tmp-Zz9Yy8"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"corpus", "data"}));
}

TEST_F(PrepareCli, HelpAndVersion) {
  const auto help = run_command(kPrepare, {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--vocab-size"), std::string::npos);
  EXPECT_NE(help.out.find("--decode"), std::string::npos);
  const auto version = run_command(kPrepare, {"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find(XSA_VERSION), std::string::npos);
}

// Each bad input: exit code 2, exactly one stderr line containing `expected`, and no folder left behind.
void expect_clean_failure(const TempDir& dir, const std::vector<std::string>& args,
                          const std::string& expected) {
  const auto before = dir.entries();
  const auto result = run_command(kPrepare, args);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(count_lines(result.err), 1) << result.err;
  EXPECT_EQ(result.err.rfind("xsa-prepare: error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(expected), std::string::npos)
      << "stderr: " << result.err << "expected: " << expected;
  EXPECT_EQ(dir.entries(), before) << "left something behind for: " << expected;
}

TEST_F(PrepareCli, BadInputsFailCleanly) {
  spit(dir / "empty.txt", "");
  spit(dir / "latin1.txt", "Caf\xE9 au lait.\n<|endoftext|>\n");
  spit(dir / "not_array.json", R"({"story": "x"})");
  spit(dir / "no_story.json", R"([{"text": "x"}])");
  spit(dir / "a_file", "I am a file, not a folder");
  const std::string out = dir / "out";
  auto args = [&](const std::string& train, const std::string& vocab = "400",
                  const std::string& out_dir = "") {
    return std::vector<std::string>{"--train",      train, "--val", kVal,
                                    "--vocab-size", vocab, "--out", out_dir.empty() ? out : out_dir};
  };
  expect_clean_failure(dir, args(dir / "missing.txt"), dir / "missing.txt: input file not found");
  expect_clean_failure(dir, args(dir / "empty.txt"), dir / "empty.txt: input file is empty");
  expect_clean_failure(dir, args(dir / "latin1.txt"), dir / "latin1.txt: not valid UTF-8 at byte offset 3");
  expect_clean_failure(dir, args(dir / "not_array.json"), dir / "not_array.json: expected a JSON array");
  expect_clean_failure(dir, args(dir / "no_story.json"),
                       "element 0 is not an object with a string field \"story\"");
  expect_clean_failure(dir, args(kTrainA, "60000"),
                       "--vocab-size 60000 cannot be reached on the train files");
  expect_clean_failure(dir, args(kTrainA, "65537"), "--vocab-size 65537: expected 260..65536");
  expect_clean_failure(dir, args(kTrainA, "270"),
                       "--vocab-size 270 cannot be reached");  // fewer than the chars
  expect_clean_failure(dir, args(kTrainA, "400", dir / "a_file/sub/out"), "cannot create output folder");
  // A failure after the output's missing parent folders were created removes them again.
  expect_clean_failure(dir, args(kTrainA, "60000", dir / "new_parent/x/out"), "cannot be reached");
  std::filesystem::create_directories(dir / "exists");
  expect_clean_failure(dir, args(kTrainA, "400", dir / "exists"), "output folder already exists");
  // Thread counts are bounded by the machine before any thread starts (no test machine has 100,000 cores).
  std::vector<std::string> many = args(kTrainA);
  many.insert(many.end(), {"--threads", "100000"});
  expect_clean_failure(dir, many, "--threads 100000: expected 0 (all cores) or 1..");
  many = args(kTrainA);
  many.insert(many.end(), {"--tokenizer-threads", "100000"});
  expect_clean_failure(dir, many, "--tokenizer-threads 100000: expected 1..");
  many = args(kTrainA);
  many.push_back("--threads=-3");
  expect_clean_failure(dir, many, "--threads -3: expected 0 (all cores) or 1..");
  // Usage errors from the argument parser are one line and exit 2 as well.
  expect_clean_failure(dir, {"--vocab-size", "many"}, "--vocab-size");
  expect_clean_failure(dir, {"--no-such-option"}, "no-such-option");
  expect_clean_failure(dir, {"--train", kTrainA, "--val", kVal}, "--out is required");
  expect_clean_failure(dir, {"--decode", dir / "exists", "5"}, "pieces.json");
  // Inputs that are not regular files are refused at once (a FIFO without a writer would block a plain open).
  ASSERT_EQ(::mkfifo((dir / "pipe.txt").c_str(), 0644), 0);
  expect_clean_failure(dir, args(dir / "pipe.txt"),
                       dir / "pipe.txt: is a FIFO (named pipe), expected a regular input file");
  expect_clean_failure(dir, args("/dev/null"), "/dev/null: is a device, expected a regular input file");
  expect_clean_failure(dir, args(dir / "exists"), dir / "exists: is a folder, expected a regular input file");
}

// ---- documents mode: any collection of documents ----

// A generated document: its number, then `lines` lines drawn from a small vocabulary (deterministic).
std::string make_document(int number, int lines) {
  static const char* words[] = {"the",    "river", "stone", "count", "light", "and",   "over",  "small",
                                "garden", "north", "bell",  "under", "quiet", "paper", "seven", "road"};
  std::string text = "Document " + std::to_string(number) + ".\n";
  std::uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(number + 1);
  for (int line = 0; line < lines; ++line) {
    for (int w = 0; w < 9; ++w) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      text += words[(state >> 33) % 16];
      text += w == 8 ? "\n" : " ";
    }
  }
  return text;
}

// The documents of a decoded split (the .txt format: each followed by a "<|endoftext|>" line).
std::vector<std::string> decoded_documents(const std::string& dir, const std::string& split) {
  const auto decoded = run_command(kPrepare, {"--decode", dir, "--split", split});
  EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
  std::vector<std::string> documents;
  const std::string separator = "\n<|endoftext|>\n";
  for (std::size_t begin = 0; begin < decoded.out.size();) {
    const std::size_t end = decoded.out.find(separator, begin);
    if (end == std::string::npos) break;
    documents.push_back(decoded.out.substr(begin, end - begin));
    begin = end + separator.size();
  }
  return documents;
}

// The token counts of the BOS-led runs of a token file (a document and its BOS each).
std::vector<std::uint64_t> bos_runs(const std::vector<std::uint16_t>& tokens) {
  std::vector<std::uint64_t> runs;
  for (auto id : tokens) {
    if (id == 1) runs.push_back(0);
    ++runs.back();
  }
  return runs;
}

TEST_F(PrepareCli, DocumentsFromAFolderAreKeptWholeAndTheValidationSplitIsWholeDocuments) {
  std::filesystem::create_directories(dir / "corpus/part");
  std::vector<std::string> texts;
  for (int i = 0; i < 20; ++i) {
    texts.push_back(make_document(i, 5 + 7 * i));
    spit(dir / ("corpus/" + std::string(i % 2 ? "part/" : "") + "doc" + std::to_string(i) + ".txt"),
         "\n" + texts.back());
  }
  spit(dir / "corpus/part/__init__.py", "\n");  // whitespace only: skipped and counted
  const auto result = run_command(kPrepare, {"--documents", dir / "corpus", "--val-fraction", "0.2",
                                             "--vocab-size", "300", "--out", dir / "data"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto meta = nlohmann::json::parse(slurp(dir / "data/meta.json"));
  EXPECT_EQ(meta["corpus"]["files"], 21);
  EXPECT_EQ(meta["corpus"]["documents"], 20);
  EXPECT_EQ(meta["corpus"]["empty_documents_skipped"], 1);
  EXPECT_EQ(meta["corpus"]["validation"]["documents"], 4);  // round(0.2 * 20)
  EXPECT_EQ(meta["train_stories"], 16);
  EXPECT_EQ(meta["val_stories"], 4);
  // The trainer's torch-free reader takes the new keys; its story counts are the documents.
  const TokenDataset dataset = TokenDataset::load(dir / "data");
  EXPECT_EQ(dataset.meta.train_stories, 16u);
  EXPECT_EQ(dataset.meta.val_stories, 4u);

  // Every decoded document is one input document, whole (without its surrounding whitespace), and each
  // input document is in exactly one split.
  const auto train = decoded_documents(dir / "data", "train");
  const auto val = decoded_documents(dir / "data", "val");
  ASSERT_EQ(train.size(), 16u);
  ASSERT_EQ(val.size(), 4u);
  std::vector<std::string> all = train;
  all.insert(all.end(), val.begin(), val.end());
  std::vector<std::string> expected;
  for (const auto& text : texts)
    expected.push_back(text.substr(0, text.size() - 1));  // trailing "\n" trimmed
  std::sort(all.begin(), all.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(all, expected);
  // meta.json's inputs say which file gave a validation document.
  std::uint64_t val_documents = 0;
  for (const auto& input : meta["inputs"]) val_documents += input["val_documents"].get<std::uint64_t>();
  EXPECT_EQ(val_documents, 4u);

  // The length distribution against the token files themselves.
  for (const char* split : {"train", "val"}) {
    auto runs = bos_runs(read_tokens(dir / "data/" + split + ".bin"));
    std::sort(runs.begin(), runs.end());
    const auto& stats = meta["document_lengths"][split];
    EXPECT_EQ(stats["count"], runs.size()) << split;
    EXPECT_EQ(stats["tokens"], meta[std::string(split) + "_tokens"]) << split;
    EXPECT_EQ(stats["max"], runs.back()) << split;
    EXPECT_EQ(stats["min"], runs.front()) << split;
    const double median = runs.size() % 2 ? static_cast<double>(runs[runs.size() / 2])
                                          : (runs[runs.size() / 2 - 1] + runs[runs.size() / 2]) / 2.0;
    EXPECT_DOUBLE_EQ(stats["median"].get<double>(), median) << split;
  }

  // The split follows the text: the same documents listed in another order choose the same validation set.
  std::string list;
  for (int i = 19; i >= 0; --i)
    list += "corpus/" + std::string(i % 2 ? "part/" : "") + "doc" + std::to_string(i) + ".txt\n";
  spit(dir / "list.txt", list);
  const auto listed = run_command(kPrepare, {"--document-list", dir / "list.txt", "--val-fraction", "0.2",
                                             "--vocab-size", "300", "--out", dir / "listed"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto val_listed = decoded_documents(dir / "listed", "val");
  auto val_sorted = val;
  std::sort(val_listed.begin(), val_listed.end());
  std::sort(val_sorted.begin(), val_sorted.end());
  EXPECT_EQ(val_listed, val_sorted);
  // Reruns are byte-identical.
  ASSERT_EQ(run_command(kPrepare, {"--documents", dir / "corpus", "--val-fraction", "0.2", "--vocab-size",
                                   "300", "--out", dir / "again"})
                .exit_code,
            0);
  for (const auto& name : kOutputFiles)
    EXPECT_EQ(slurp(dir / "data/" + name), slurp(dir / "again/" + name)) << name;
}

// The validation split is whole documents, so its share of the tokens can be far from --val-fraction.
// xsa-prepare prints the share (checked against meta.json's token counts) and notes it when it is off by more
// than a factor of two: one document 200 times longer than the other 19 puts it off whichever split it lands
// in; twenty documents of one length keep it near the fraction, without a note.
TEST_F(PrepareCli, AValidationSplitFarFromItsShareOfTheTokensIsNoted) {
  for (const bool skewed : {true, false}) {
    const std::filesystem::path corpus = dir / (skewed ? "skewed" : "even");
    std::filesystem::create_directories(corpus);
    for (int i = 0; i < 20; ++i)
      spit(corpus / ("doc" + std::to_string(i) + ".txt"),
           make_document(i, skewed ? (i == 7 ? 1000 : 5) : 20));
    const double fraction = skewed ? 0.1 : 0.15;  // 2 or 3 of the 20 documents
    const auto result =
        run_command(kPrepare, {"--documents", corpus, "--val-fraction", skewed ? "0.1" : "0.15",
                               "--vocab-size", "300", "--out", corpus.string() + "_data"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto meta = nlohmann::json::parse(slurp(corpus.string() + "_data/meta.json"));
    const double val = meta["val_tokens"].get<double>(), train = meta["train_tokens"].get<double>();
    const double share = val / (train + val);
    char line[96];
    std::snprintf(line, sizeof line, "val: %.1f%% of the tokens, for --val-fraction %g of the documents",
                  100.0 * share, fraction);
    EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n" << result.out;
    const std::size_t note = result.out.find("note: the validation split holds ");
    if (skewed) {
      EXPECT_TRUE(share > 2 * fraction || share < fraction / 2) << share;
      ASSERT_NE(note, std::string::npos) << result.out;
      const std::string rest = result.out.substr(note, result.out.find('\n', note) - note);
      EXPECT_NE(rest.find(share > fraction ? "documents are longer" : "documents are shorter"),
                std::string::npos)
          << rest;
    } else {
      EXPECT_NEAR(share, fraction, 0.03);
      EXPECT_EQ(note, std::string::npos) << result.out;
    }
  }
}

TEST_F(PrepareCli, DocumentsSeparatedByAMarkerLine) {
  // The TinyStories fixture read as documents: its separator is a marker like any other.
  const auto stories =
      run_command(kPrepare, {"--documents", kTrainA, kVal, "--doc-separator", "<|endoftext|>",
                             "--val-fraction", "0.25", "--vocab-size", "400", "--out", dir / "data"});
  ASSERT_EQ(stories.exit_code, 0) << stories.err;
  auto meta = nlohmann::json::parse(slurp(dir / "data/meta.json"));
  EXPECT_EQ(meta["corpus"]["documents"], 8);  // 5 stories in train_a.txt, 3 in val.txt
  EXPECT_EQ(meta["corpus"]["separator"], "<|endoftext|>");
  EXPECT_EQ(meta["val_stories"], 2);
  EXPECT_EQ(meta["inputs"][0]["documents"], 5);

  spit(dir / "books.txt", make_document(1, 30) + "### BOOK ###\n" + make_document(2, 40) +
                              "\n### BOOK ###\n\n" + make_document(3, 50));
  const auto books =
      run_command(kPrepare, {"--documents", dir / "books.txt", "--doc-separator", "### BOOK ###",
                             "--val-fraction", "0.3", "--vocab-size", "300", "--out", dir / "books"});
  ASSERT_EQ(books.exit_code, 0) << books.err;
  meta = nlohmann::json::parse(slurp(dir / "books/meta.json"));
  EXPECT_EQ(meta["corpus"]["documents"], 3);
  EXPECT_EQ(meta["corpus"]["empty_documents_skipped"], 0);
  EXPECT_EQ(meta["val_stories"], 1);  // round(0.3 * 3)
}

TEST_F(PrepareCli, BadDocumentInputsFailCleanly) {
  std::filesystem::create_directories(dir / "docs/sub");
  spit(dir / "docs/a.txt", make_document(1, 20));
  spit(dir / "docs/sub/b.txt", make_document(2, 20));
  std::filesystem::create_directories(dir / "blank");
  spit(dir / "blank/one", "  \n");
  spit(dir / "blank/two", "");
  std::filesystem::create_directories(dir / "nothing");
  std::filesystem::create_directories(dir / "bin");
  spit(dir / "bin/x.txt", std::string("text\0more", 9));
  std::filesystem::create_directories(dir / "latin1");
  spit(dir / "latin1/x.txt", "caf\xE9");
  // File names that are not UTF-8 text or hold a line break: meta.json and every message name them.
  std::filesystem::create_directories(dir / "latin1_name");
  spit(dir / "latin1_name/caf\xE9.txt", make_document(3, 20));
  std::filesystem::create_directories(dir / "newline_name");
  spit(dir / "newline_name/two\nlines.txt", make_document(4, 20));
  const std::string out = dir / "out";
  auto docs = [&](const std::string& path, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--documents", path, "--vocab-size", "300", "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_clean_failure(dir, docs(dir / "blank", {"--val-fraction", "0.5"}),
                       "empty corpus: the 2 document files hold no text (only whitespace)");
  expect_clean_failure(dir, docs(dir / "nothing"),
                       "no document files found in the given paths (empty corpus)");
  expect_clean_failure(dir, docs(dir / "bin"), dir / "bin/x.txt: binary file (NUL byte at byte offset 4)");
  expect_clean_failure(dir, docs(dir / "latin1"), dir / "latin1/x.txt: not valid UTF-8 at byte offset 3");
  expect_clean_failure(dir, docs(dir / "docs", {"--max-document-bytes", "100"}),
                       dir / "docs/a.txt: document has ");
  expect_clean_failure(dir, docs(dir / "docs"), "empty validation split: --val-fraction 0.05 of 2 documents");
  for (const std::string bad : {"0", "1", "1.5", "-0.2"}) {
    expect_clean_failure(dir, docs(dir / "docs", {"--val-fraction", bad}),
                         "--val-fraction " + bad + ": expected a number in (0, 1)");
  }
  expect_clean_failure(dir, docs(dir / "docs", {"--doc-separator", " END "}),
                       "--doc-separator \" END \": expected one line without surrounding whitespace");
  expect_clean_failure(dir, docs(dir / "docs", {"--doc-separator", "END\xFF"}),
                       "--doc-separator \"END\\xFF\": not valid UTF-8 or holds a control character");
  expect_clean_failure(dir, docs(dir / "latin1_name"),
                       "document path " + dir / "latin1_name/caf\\xE9.txt: the name is not valid UTF-8");
  expect_clean_failure(
      dir, docs(dir / "newline_name"),
      "document path " + dir / "newline_name/two\\x0Alines.txt: the name is not valid UTF-8");
  expect_clean_failure(dir, {"--train", dir / "latin1_name/caf\xE9.txt", "--val", kVal, "--out", out},
                       "--train " + dir / "latin1_name/caf\\xE9.txt: the name is not valid UTF-8");
  expect_clean_failure(dir, {"--documents", dir / "docs", "--val-fraction", "0.5", "--out", dir / "new\nout"},
                       "--out " + dir / "new\\x0Aout: the name is not valid UTF-8");
  expect_clean_failure(dir, docs(dir / "missing"), dir / "missing: document path not found");
  expect_clean_failure(dir, {"--document-list", dir / "missing.txt", "--out", out},
                       dir / "missing.txt: document list not found");
  std::filesystem::create_directory_symlink("..", dir / "docs/sub/up");
  expect_clean_failure(dir, docs(dir / "docs", {"--val-fraction", "0.5"}), dir / "docs/sub/up: folder loop");
  std::filesystem::remove(dir / "docs/sub/up");
  // Options of one mode are refused in the other.
  expect_clean_failure(dir, {"--train", kTrainA, "--val", kVal, "--val-fraction", "0.1", "--out", out},
                       "--val-fraction needs --documents or --document-list");
  expect_clean_failure(dir, {"--train", kTrainA, "--val", kVal, "--doc-separator", "X", "--out", out},
                       "--doc-separator needs --documents or --document-list");
  expect_clean_failure(dir, {"--documents", dir / "docs", "--train", kTrainA, "--out", out},
                       "--documents/--document-list cannot be combined with --train/--val");
  // The output may not lie inside the documents it reads (--force would delete them).
  expect_clean_failure(
      dir, {"--documents", dir / "docs", "--val-fraction", "0.5", "--out", dir / "docs/out", "--force"},
      "the document path " + dir / "docs");
}

// --force replaces --out: a document file inside it, reached through a document list or a symbolic link
// rather than a --documents path, is refused before anything is written, and the files stay as they were.
TEST_F(PrepareCli, ForceNeverReplacesDocumentsReachedThroughAListOrALink) {
  std::filesystem::create_directories(dir / "text");
  for (int i = 0; i < 4; ++i) spit(dir / "text/d" + std::to_string(i) + ".txt", make_document(i, 20));
  const std::string before = slurp(dir / "text/d0.txt");
  spit(dir / "list.txt", "text/d0.txt\ntext/d1.txt\ntext/d2.txt\ntext/d3.txt\n");
  expect_clean_failure(dir,
                       {"--document-list", dir / "list.txt", "--val-fraction", "0.5", "--vocab-size", "300",
                        "--out", dir / "text", "--force"},
                       "--out " + dir / "text: contains the document file " + dir / "text/d0.txt");
  // A folder of documents with a link to the folder --out names.
  std::filesystem::create_directories(dir / "corpus");
  spit(dir / "corpus/own.txt", make_document(9, 20));
  std::filesystem::create_directory_symlink("../text", dir / "corpus/linked");
  expect_clean_failure(dir,
                       {"--documents", dir / "corpus", "--val-fraction", "0.5", "--vocab-size", "300",
                        "--out", dir / "text", "--force"},
                       "--out " + dir / "text: contains the document file " + dir / "corpus/linked/d0.txt");
  EXPECT_EQ(slurp(dir / "text/d0.txt"), before);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir / "text")) ++files;
  EXPECT_EQ(files, 4u);  // nothing added, nothing removed
  // The same inputs into a folder apart from them: prepared (the refusals above were about --out only).
  const auto ok = run_command(kPrepare, {"--document-list", dir / "list.txt", "--val-fraction", "0.5",
                                         "--vocab-size", "300", "--out", dir / "data"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace xsa
