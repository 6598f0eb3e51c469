// Which rank a process is (src/xsa/train/ranks.h): torchrun's variables, srun's, or a single process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "xsa/train/ranks.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

// Sets the variables of one test and clears them after it.
class RankEnv : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS",
                          "SLURM_JOB_NODELIST", "SLURM_JOB_ID"})
      ::unsetenv(v);
  }
};

TEST_F(RankEnv, NoVariablesIsOneProcess) {
  const RankInfo r = rank_info_from_environment();
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world_size, 1);
  EXPECT_FALSE(r.distributed());
}

TEST_F(RankEnv, TorchrunVariables) {
  ::setenv("RANK", "2", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("MASTER_ADDR", "node7", 1);
  ::setenv("MASTER_PORT", "29500", 1);
  const RankInfo r = rank_info_from_environment();
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.master_addr, "node7");
  EXPECT_EQ(r.master_port, 29500);
  EXPECT_TRUE(r.distributed());
}

TEST_F(RankEnv, IncompleteOrInvalidTorchrunVariablesAreInputErrors) {
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  EXPECT_THROW(rank_info_from_environment(), InputError);  // no master
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29500", 1);
  ::setenv("RANK", "2", 1);  // out of range
  EXPECT_THROW(rank_info_from_environment(), InputError);
  ::setenv("RANK", "x", 1);
  EXPECT_THROW(rank_info_from_environment(), InputError);
}

TEST_F(RankEnv, SrunVariablesTakeTheFirstNodeAndAPortFromTheJob) {
  ::setenv("SLURM_PROCID", "3", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  ::setenv("SLURM_JOB_NODELIST", "cn[012-015,020],gpu1", 1);
  ::setenv("SLURM_JOB_ID", "123456", 1);
  const RankInfo r = rank_info_from_environment();
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.master_addr, "cn012");
  EXPECT_EQ(r.master_port, 20000 + 123456 % 20000);
}

TEST_F(RankEnv, ASingleSrunTaskIsOneProcess) {
  ::setenv("SLURM_PROCID", "0", 1);
  ::setenv("SLURM_NTASKS", "1", 1);
  EXPECT_FALSE(rank_info_from_environment().distributed());
}

TEST(FirstSlurmHost, NodeListForms) {
  EXPECT_EQ(first_slurm_host("node01"), "node01");
  EXPECT_EQ(first_slurm_host("node01,node02"), "node01");
  EXPECT_EQ(first_slurm_host("node[03-05,9]"), "node03");
  EXPECT_EQ(first_slurm_host("rack[1-2]-n[3-4],x"), "rack1-n3");
}

}  // namespace
}  // namespace xsa
