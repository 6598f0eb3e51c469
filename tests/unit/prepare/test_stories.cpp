// Reading TinyStories inputs: story splitting, UTF-8 validation, .txt and .json readers and their errors.
#include <gtest/gtest.h>

#include "process.h"
#include "string_views.h"
#include "xsa/tokenizer/stories.h"
#include "xsa/util/error.h"
#include "xsa/util/utf8.h"

namespace xsa {
namespace {

using testing::as_strings;
using testing::spit;
using testing::TempDir;

TEST(SplitTextStories, SeparatorLinesSplitAndSurroundingWhitespaceIsDropped) {
  const std::string text = "First story.\nSecond line.\n<|endoftext|>\n\nSecond  story.\n\n<|endoftext|>\n";
  EXPECT_EQ(as_strings(split_text_stories(text)),
            (std::vector<std::string>{"First story.\nSecond line.", "Second  story."}));
}

TEST(SplitTextStories, InnerBlankLinesAndSpacesAreKept) {
  const std::string text = "A\n\n\nB  C\t D\n<|endoftext|>\n";
  EXPECT_EQ(as_strings(split_text_stories(text)), (std::vector<std::string>{"A\n\n\nB  C\t D"}));
}

TEST(SplitTextStories, TextAfterTheLastSeparatorIsAStory) {
  EXPECT_EQ(as_strings(split_text_stories("one\n<|endoftext|>\ntwo")),
            (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(as_strings(split_text_stories("only one story, no separator")),
            (std::vector<std::string>{"only one story, no separator"}));
}

TEST(SplitTextStories, EmptyStoriesAndCrlfSeparatorsAreHandled) {
  const std::string text = "<|endoftext|>\n<|endoftext|>\r\nx\r\n<|endoftext|>\r\n  \n<|endoftext|>\n";
  EXPECT_EQ(as_strings(split_text_stories(text)), (std::vector<std::string>{"x"}));
}

TEST(SplitTextStories, SeparatorInsideALineIsText) {
  const std::string text = "He wrote <|endoftext|> on the wall.\n<|endoftext|>\n";
  EXPECT_EQ(as_strings(split_text_stories(text)),
            (std::vector<std::string>{"He wrote <|endoftext|> on the wall."}));
}

TEST(FindInvalidUtf8, AcceptsValidTextOfAllLengths) {
  EXPECT_EQ(find_invalid_utf8(""), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("plain ascii\n"), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x99\x82 \xF4\x8F\xBF\xBF"),
            std::string_view::npos);
}

TEST(FindInvalidUtf8, ReportsTheOffsetOfTheFirstBadByte) {
  EXPECT_EQ(find_invalid_utf8("abc\xFF"), 3u);             // never valid
  EXPECT_EQ(find_invalid_utf8("ab\x80"), 2u);              // lone continuation byte
  EXPECT_EQ(find_invalid_utf8("x\xC3"), 1u);               // truncated sequence
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);            // overlong "/"
  EXPECT_EQ(find_invalid_utf8("ok\xE0\x80\xAF"), 2u);      // overlong 3-byte
  EXPECT_EQ(find_invalid_utf8("\xED\xA0\x80"), 0u);        // UTF-16 surrogate
  EXPECT_EQ(find_invalid_utf8("12\xF4\x90\x80\x80"), 2u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xC3\xA9\xC3\x28"), 2u);    // bad continuation after a valid char
}

TEST(Printable, EscapesBadBytesAndControlCharactersOnly) {
  EXPECT_EQ(printable("caf\xC3\xA9 \xF0\x9F\x99\x82.txt"),
            "caf\xC3\xA9 \xF0\x9F\x99\x82.txt");                     // valid: unchanged
  EXPECT_EQ(printable("caf\xE9.txt"), "caf\\xE9.txt");               // Latin-1 é
  EXPECT_EQ(printable("line\nbreak\r"), "line\\x0Abreak\\x0D");      // line breaks
  EXPECT_EQ(printable(std::string("a\0b\x7F", 4)), "a\\x00b\\x7F");  // NUL and DEL
  EXPECT_EQ(printable("x\xC3"), "x\\xC3");                           // truncated sequence
  EXPECT_EQ(printable(""), "");
}

TEST(ReadStoryFile, TextFixture) {
  const StoryFile file = read_story_file(XSA_FIXTURES_DIR "/prepare/train_a.txt", "train");
  ASSERT_EQ(file.stories.size(), 5u);
  EXPECT_EQ(file.split, "train");
  EXPECT_EQ(file.bytes, 1103u);
  EXPECT_EQ(file.sha256, "bd1d96ac5b935881712b93ee9eb38b1654adeded1e89abba0b513971d7992f69");  // sha256sum
  EXPECT_EQ(file.stories[1].substr(0, 15), "Mia had a red b");  // blank line after the separator dropped
  EXPECT_EQ(file.stories[4].substr(file.stories[4].size() - 11), "x of socks.");
  EXPECT_NE(file.stories[4].find("\n\n\nAt last"), std::string_view::npos);  // inner blank lines kept
}

TEST(ReadStoryFile, JsonShardTakesStoryFieldsAndSkipsBlankStories) {
  const StoryFile file = read_story_file(XSA_FIXTURES_DIR "/prepare/train_b.json", "train");
  ASSERT_EQ(file.stories.size(), 4u);  // the fourth element is only spaces
  EXPECT_EQ(file.stories[0],
            "Sam the dog liked to dig. He dug in the yard and found a bone.\nHe was very proud of his bone.");
  EXPECT_EQ(file.stories[1].substr(0, 15), "The little boat");
  EXPECT_EQ(file.stories[3],
            "The owl said \xE2\x80\x9Cwho?\xE2\x80\x9D and the mouse said \xE2\x80\x9C"
            "me!\xE2\x80\x9D \xE2\x80\x94 then they both laughed.");
}

std::string error_of(const std::string& path) {
  try {
    read_story_file(path, "train");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReadStoryFile, BadInputsNameTheFileAndTheProblem) {
  TempDir dir;
  spit(dir / "empty.txt", "");
  spit(dir / "bad_utf8.txt", "Good start.\nthen \xC3\x28 bad\n");
  spit(dir / "object.json", R"({"story": "not in an array"})");
  spit(dir / "no_story.json", R"([{"story": "fine"}, {"text": "no story field"}])");
  spit(dir / "number_story.json", R"([{"story": 12}])");
  spit(dir / "broken.json", R"([{"story": "unterminated)");
  spit(dir / "only_separators.txt", "<|endoftext|>\n\n<|endoftext|>\n");
  spit(dir / "story.md", "a story\n");
  EXPECT_EQ(error_of(dir / "missing.txt"), dir / "missing.txt" + ": input file not found");
  EXPECT_EQ(error_of(dir / "empty.txt"), dir / "empty.txt" + ": input file is empty");
  EXPECT_EQ(error_of(dir / "bad_utf8.txt"), dir / "bad_utf8.txt" + ": not valid UTF-8 at byte offset 17");
  EXPECT_EQ(error_of(dir / "object.json"),
            dir / "object.json" + ": expected a JSON array of objects with a \"story\" field, found object");
  EXPECT_EQ(error_of(dir / "no_story.json"),
            dir / "no_story.json" + ": element 1 is not an object with a string field \"story\"");
  EXPECT_EQ(error_of(dir / "number_story.json"),
            dir / "number_story.json" + ": element 0 is not an object with a string field \"story\"");
  EXPECT_EQ(error_of(dir / "broken.json").rfind(dir / "broken.json" + ": not valid JSON (byte ", 0), 0u);
  EXPECT_EQ(error_of(dir / "only_separators.txt"), dir / "only_separators.txt" + ": contains no stories");
  EXPECT_NE(error_of(dir / "story.md").find("unknown input format"), std::string::npos);
}

}  // namespace
}  // namespace xsa
