// Input files that are not regular files (a FIFO, a folder, a device, a socket) are refused at once with a
// one-line InputError naming the path and what it is: never a block on a FIFO without a writer.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "xsa/data/token_data.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/sha256.h"

namespace xsa {
namespace {

namespace fs = std::filesystem;

class NotRegularFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "xsa_test_fs_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    fifo_ = dir_ + "/pipe.yaml";
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0644), 0) << std::strerror(errno);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The error `read` throws for `path`, computed on another thread so that a blocking open fails the test
  // (after 10 s) instead of hanging it.
  template <class Read>
  static std::string error_of(Read read, const std::string& path) {
    auto result = std::async(std::launch::async, [=] {
      try {
        read(path);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("no InputError");
    });
    if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      // Unblock the reader (a writer end makes the FIFO's open return) so the thread can finish.
      std::ofstream unblock(path);
      ADD_FAILURE() << path << ": reading blocked";
    }
    return result.get();
  }

  std::string dir_, fifo_;
};

void expect_refused(const std::string& msg, const std::string& path, const std::string& what) {
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST_F(NotRegularFile, FifoIsRefusedWithoutBlocking) {
  auto read = [](const std::string& p) { read_file(p); };
  expect_refused(error_of(read, fifo_), fifo_, "is a FIFO (named pipe), expected a regular file");
}

TEST_F(NotRegularFile, EveryKindIsNamed) {
  auto read = [](const std::string& p) { read_file(p); };
  expect_refused(error_of(read, dir_), dir_, "is a folder, expected a regular file");
  expect_refused(error_of(read, "/dev/null"), "/dev/null", "is a device, expected a regular file");
  expect_refused(error_of(read, dir_ + "/missing.yaml"), dir_ + "/missing.yaml",
                 "cannot read file (No such file or directory)");

  const std::string socket_path = dir_ + "/s.sock";
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  expect_refused(error_of(read, socket_path), socket_path, "is a socket, expected a regular file");
  ::close(sock);
}

TEST_F(NotRegularFile, SymlinkToARegularFileIsRead) {
  std::ofstream(dir_ + "/real.txt") << "content";
  fs::create_symlink(dir_ + "/real.txt", dir_ + "/link.txt");
  EXPECT_EQ(read_file(dir_ + "/link.txt"), "content");
  fs::create_symlink(fifo_, dir_ + "/link-to-pipe");
  auto read = [](const std::string& p) { read_file(p); };
  expect_refused(error_of(read, dir_ + "/link-to-pipe"), dir_ + "/link-to-pipe", "is a FIFO");
}

TEST_F(NotRegularFile, HashingAndTokenFilesRefuseAFifo) {
  expect_refused(error_of([](const std::string& p) { sha256_file_hex(p); }, fifo_), fifo_,
                 "is a FIFO (named pipe), expected a regular file");
  expect_refused(error_of([](const std::string& p) { TokenFile(p, 0, 10); }, fifo_), fifo_,
                 "is a FIFO (named pipe), expected a regular token file");
}

TEST(ReadFile, ReadsBytesExactly) {
  std::string pattern = (fs::temp_directory_path() / "xsa_test_read_XXXXXX").string();
  std::string dir = ::mkdtemp(pattern.data());
  std::string bytes("a\0b\nc", 5);
  bytes += std::string(200000, 'x');  // more than one read() buffer
  std::ofstream(dir + "/f.bin", std::ios::binary) << bytes;
  EXPECT_EQ(read_file(dir + "/f.bin"), bytes);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xsa
