// The progress lines outside a terminal (CI, pipes): steps every plain_every, and the phases after the last
// step (final evaluation, sampling), so a run never sits silently at "ETA 0s".
#include <gtest/gtest.h>

#include <string>

#include "xsa/util/progress.h"

namespace xsa {
namespace {

TEST(ProgressBoard, PlainLinesNameThePhasesAfterTheLastStep) {
  ::testing::internal::CaptureStdout();
  {
    ProgressBoard board({"sa", "xsa"}, 4, 2, /*quiet=*/false);
    board.update(0, 1, 5.0, 100);  // not a multiple of plain_every: no line
    board.update(0, 2, 4.5, 100);
    board.update(1, 4, 4.0, 200);
    board.phase(1, "final eval 8/100 windows");
    board.phase(1, "final eval 16/100 windows");  // same kind within 2 s: not printed
    board.phase(1, "sampling 1/2");               // a new kind: printed at once
    board.phase(1, "done");
    board.finish();
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(out,
            "[sa] step 2/4  loss 4.5000  100 tok/s  ETA 0s\n"
            "[xsa] step 4/4  loss 4.0000  200 tok/s  ETA 0s\n"
            "[xsa] final eval 8/100 windows\n"
            "[xsa] sampling 1/2\n"
            "[xsa] done\n");
}

TEST(ProgressBoard, QuietPrintsNothing) {
  ::testing::internal::CaptureStdout();
  {
    ProgressBoard board({"sa"}, 2, 1, /*quiet=*/true);
    board.update(0, 1, 1.0, 1);
    board.phase(0, "final eval 1/2 windows");
    board.finish();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace xsa
