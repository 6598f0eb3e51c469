// Point claims (src/xsa/sweep/claim.h): exclusive, released, stale holders detected, lost claims noticed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "xsa/sweep/claim.h"

namespace fs = std::filesystem;

namespace {

class ClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(XSA_BINARY_DIR) / "test_tmp" / "claim" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    lock_ = (dir_ / "claim.lock").string();
  }
  std::string lock_contents() {
    std::ifstream in(lock_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
  std::string lock_;
};

TEST_F(ClaimTest, ExclusiveUntilReleased) {
  xsa::ClaimState held;
  auto first = xsa::Claim::try_acquire(lock_, &held, nullptr);
  ASSERT_TRUE(first);
  auto j = nlohmann::json::parse(lock_contents());
  EXPECT_EQ(j["pid"], static_cast<long>(::getpid()));
  EXPECT_EQ(j["token"], first->holder().token);
  // A second claim (same process or any other) is refused while the holder lives, and says who holds it.
  auto second = xsa::Claim::try_acquire(lock_, &held, nullptr);
  EXPECT_FALSE(second);
  EXPECT_TRUE(held.exists);
  EXPECT_FALSE(held.stale);
  EXPECT_EQ(held.holder.token, first->holder().token);
  EXPECT_TRUE(first->heartbeat());
  first->release();
  EXPECT_FALSE(fs::exists(lock_));
  auto third = xsa::Claim::try_acquire(lock_, &held, nullptr);
  EXPECT_TRUE(third);
  // No temporary files are left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename() != "claim.lock";
  EXPECT_EQ(entries, 0);
}

TEST_F(ClaimTest, DeadHolderOnThisHostIsStaleAndTakenOver) {
  // A child takes the claim and dies without releasing it (like kill -9).
  pid_t child = ::fork();
  if (child == 0) {
    auto c = xsa::Claim::try_acquire(lock_, nullptr, nullptr);
    ::_exit(c ? 0 : 1);  // _exit: no destructor, the file stays
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  xsa::ClaimState state = xsa::inspect_claim(lock_);
  EXPECT_TRUE(state.exists && state.readable && state.stale);
  EXPECT_NE(state.stale_reason.find("pid " + std::to_string(child)), std::string::npos) << state.stale_reason;
  std::string note;
  auto mine = xsa::Claim::try_acquire(lock_, nullptr, &note);
  ASSERT_TRUE(mine);
  EXPECT_NE(note.find("took over a stale claim"), std::string::npos) << note;
  EXPECT_FALSE(fs::exists(lock_ + ".break"));
}

TEST_F(ClaimTest, OtherHostIsStaleOnlyWithoutHeartbeat) {
  std::ofstream(lock_) << R"({"token": "x", "host": "elsewhere", "boot_id": "b", "pid": 1, )"
                       << R"("process_start": 1, "since": 1.7e9, "job": ""})"
                       << "\n";
  EXPECT_FALSE(xsa::inspect_claim(lock_).stale);  // just touched: alive
  EXPECT_FALSE(xsa::Claim::try_acquire(lock_, nullptr, nullptr));
  fs::last_write_time(lock_, fs::last_write_time(lock_) - std::chrono::seconds(xsa::kStaleSeconds + 5));
  auto state = xsa::inspect_claim(lock_);
  EXPECT_TRUE(state.stale);
  EXPECT_NE(state.stale_reason.find("no heartbeat from elsewhere"), std::string::npos);
  EXPECT_TRUE(xsa::Claim::try_acquire(lock_, nullptr, nullptr));
}

TEST_F(ClaimTest, HeartbeatNoticesALostClaim) {
  auto mine = xsa::Claim::try_acquire(lock_, nullptr, nullptr);
  ASSERT_TRUE(mine);
  fs::remove(lock_);
  std::ofstream(lock_) << R"({"token": "someone-else", "host": "h", "boot_id": "b", "pid": 1, )"
                       << R"("process_start": 1, "since": 1.0})"
                       << "\n";
  EXPECT_FALSE(mine->heartbeat());
  mine->release();  // must not remove the other holder's file
  EXPECT_TRUE(fs::exists(lock_));
}

}  // namespace
