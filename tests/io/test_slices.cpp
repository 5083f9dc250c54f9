// A folder or glob of 2-D slices read as a volume (sv::load_slices, sv::slice_files, and
// load_any's dispatch): natural order, stacking, refusals that name the slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/io.h"
#include "temp_dir_test.h"

namespace {

class SlicesTest : public svtest::TempDirTest {
 protected:
  // Slice z of a test volume: value 1000 z + 10 y + x.
  static sv::ArrayD slice(std::size_t z, std::size_t h = 3, std::size_t w = 4) {
    sv::ArrayD a({h, w});
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) a.at2(y, x) = static_cast<double>(1000 * z + 10 * y + x);
    return a;
  }
  std::string error_of(const std::string& p) {
    try {
      sv::load_any(p, false);
    } catch (const sv::Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(SlicesTest, NaturalOrderComparesDigitRunsByValue) {
  std::vector<std::string> v = {"s10.npy", "s2.npy", "s1.npy", "s002.npy", "a.npy", "s02.npy"};
  std::sort(v.begin(), v.end(), sv::natural_order_less);
  EXPECT_EQ(
      v, (std::vector<std::string>{"a.npy", "s1.npy", "s2.npy", "s02.npy", "s002.npy", "s10.npy"}));
  EXPECT_TRUE(sv::natural_order_less("img9_b", "img10_a"));
  EXPECT_FALSE(sv::natural_order_less("x", "x"));
}

TEST_F(SlicesTest, FolderStacksInNaturalOrderAndSkipsOtherFiles) {
  std::filesystem::create_directories(path("stack"));
  // Written out of order; names that sort differently by bytes than by number.
  for (std::size_t z : {10, 2, 0, 1}) {
    sv::save_npy(path("stack/slice" + std::to_string(z) + ".npy"), slice(z), sv::DType::F64, false);
  }
  std::ofstream(path("stack/README.txt")) << "not a slice";
  std::ofstream(path("stack/.hidden.npy")) << "junk";
  std::filesystem::create_directories(path("stack/sub.npy"));
  const std::vector<std::string> files = sv::slice_files(path("stack"));
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(std::filesystem::path(files[3]).filename(), "slice10.npy");
  const sv::Loaded l = sv::load_any(path("stack"), false);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{4, 3, 4}));
  const std::size_t order[4] = {0, 1, 2, 10};
  for (std::size_t z = 0; z < 4; ++z)
    for (std::size_t y = 0; y < 3; ++y)
      for (std::size_t x = 0; x < 4; ++x)
        EXPECT_EQ(l.array.at3(z, y, x), static_cast<double>(1000 * order[z] + 10 * y + x));
  EXPECT_FALSE(l.geometry.oriented());
  EXPECT_EQ(l.spacing, (std::vector<double>{1, 1, 1}));
}

TEST_F(SlicesTest, GlobPatternSelectsTheSlices) {
  for (std::size_t z = 0; z < 3; ++z)
    sv::save_npy(path("a_" + std::to_string(z) + ".npy"), slice(z), sv::DType::F32, false);
  sv::save_npy(path("b_0.npy"), slice(7), sv::DType::F32, false);
  const sv::Loaded l = sv::load_any(path("a_*.npy"), false);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 3, 4}));
  EXPECT_EQ(l.dtype, sv::DType::F32);
  EXPECT_EQ(l.array.at3(2, 1, 3), 2013.0);
  EXPECT_NE(error_of(path("zz_*.npy")).find("no file matches the pattern"), std::string::npos);
}

TEST_F(SlicesTest, MismatchedSlicesAreRefusedNamingTheSlice) {
  std::filesystem::create_directories(path("bad"));
  sv::save_npy(path("bad/s0.npy"), slice(0), sv::DType::F64, false);
  sv::save_npy(path("bad/s1.npy"), slice(1, 3, 5), sv::DType::F64, false);
  std::string msg = error_of(path("bad"));
  EXPECT_NE(msg.find("slice 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("s1.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("same size"), std::string::npos) << msg;

  sv::save_npy(path("bad/s1.npy"), slice(1), sv::DType::F32, false);
  msg = error_of(path("bad"));
  EXPECT_NE(msg.find("one type"), std::string::npos) << msg;

  sv::ArrayD vol({2, 3, 4});
  sv::save_npy(path("bad/s1.npy"), vol, sv::DType::F64, false);
  msg = error_of(path("bad"));
  EXPECT_NE(msg.find("is 3-D; every slice must be a 2-D image"), std::string::npos) << msg;

  std::filesystem::create_directories(path("empty"));
  msg = error_of(path("empty"));
  EXPECT_NE(msg.find("no "), std::string::npos) << msg;
}

}  // namespace
