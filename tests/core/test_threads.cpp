// The thread-count variables (threads.h): what SPLINEVIEW_NUM_THREADS and OMP_NUM_THREADS may
// say. The process-wide default itself is checked from Python (tests/python/test_dask.py), in
// fresh processes with the variables set.
#include <gtest/gtest.h>

#include "splineview/threads.h"

namespace {

TEST(ThreadCount, ParsesWholeNumbersAndTheFirstEntryOfAList) {
  EXPECT_EQ(sv::parse_thread_count("1"), 1u);
  EXPECT_EQ(sv::parse_thread_count("16"), 16u);
  EXPECT_EQ(sv::parse_thread_count(" 8 "), 8u);
  EXPECT_EQ(sv::parse_thread_count("4,2"), 4u);  // OMP_NUM_THREADS's nested form
  EXPECT_EQ(sv::parse_thread_count("4096"), 4096u);
}

TEST(ThreadCount, IgnoresWhatIsNotACount) {
  for (const char* bad :
       {"", " ", "0", "-1", "+2", "2.5", "two", "4097", "99999999999999999999", "3x", ",4"})
    EXPECT_EQ(sv::parse_thread_count(bad), std::nullopt) << "'" << bad << "'";
  EXPECT_EQ(sv::parse_thread_count(nullptr), std::nullopt);
}

TEST(ThreadCount, TheDefaultIsAtLeastOne) {
  EXPECT_GE(sv::default_thread_count(), 1u);
}

}  // namespace
