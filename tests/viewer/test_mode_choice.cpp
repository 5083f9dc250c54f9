// The viewer's choice of mode from a file's content (mode_choice.h) and the display range of
// 2-D images (image_document.h: to_display_range). No GL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "image_document.h"
#include "mode_choice.h"
#include "splineview/error.h"
#include "splineview/io.h"

namespace {

class ModeChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("splineview-mode-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  std::filesystem::path dir_;
};

TEST_F(ModeChoiceTest, ContentPicksTheMode) {
  sv::save_npy(path("img.npy"), sv::ArrayD({4, 5}), sv::DType::U16, false);
  sv::save_npy(path("vol.npy"), sv::ArrayD({3, 4, 5}), sv::DType::F32, false);
  sv::save_nifti(path("img2d.nii"), sv::ArrayD({4, 5}), sv::DType::I16);
  sv::save_npy(path("line.npy"), sv::ArrayD({7}), sv::DType::F64, false);
  EXPECT_EQ(sv::viewer::choose_mode(path("img.npy"), {}).mode, "zoom");
  EXPECT_EQ(sv::viewer::choose_mode(path("vol.npy"), {}).mode, "volume");
  EXPECT_EQ(sv::viewer::choose_mode(path("img2d.nii"), {}).mode, "zoom");
  EXPECT_EQ(sv::viewer::choose_mode("clip.MP4", {}).mode, "video");
  EXPECT_EQ(sv::viewer::choose_mode("synthetic:64x48", {}).mode, "video");
  EXPECT_EQ(sv::viewer::choose_mode("/dev/video0", {}).mode, "video");
  EXPECT_EQ(sv::viewer::choose_mode("photo.jpeg", {}).mode, "zoom");  // not opened
  EXPECT_EQ(sv::viewer::choose_mode("", {}).mode, "zoom");
  try {
    sv::viewer::choose_mode(path("line.npy"), {});
    FAIL() << "1-D data has no mode";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is 1-D"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sv::viewer::choose_mode(path("missing.nii"), {}), sv::Error);
  // Raw data: its spec's rank.
  sv::save_npy(path("x.npy"), sv::ArrayD({2, 3, 4}), sv::DType::U8, false);
  const sv::RawSpec spec = sv::parse_raw_spec("2x3x4:u8:offset=128");
  std::filesystem::copy_file(path("x.npy"), path("x.raw"));
  EXPECT_EQ(sv::viewer::choose_mode(path("x.raw"), spec).mode, "volume");
}

TEST_F(ModeChoiceTest, DisplayRangeIsFullScaleForPhotosAndAPercentileWindowOtherwise) {
  sv::Loaded photo;
  photo.array = sv::ArrayD({1, 3});
  photo.dtype = sv::DType::U8;
  photo.array[0] = 0, photo.array[1] = 51, photo.array[2] = 255;
  sv::viewer::DisplayRange r = sv::viewer::to_display_range(photo);
  EXPECT_EQ(photo.array[1], 51.0 / 255.0);
  EXPECT_TRUE(r.note.empty());
  EXPECT_EQ(r.scale.raw(photo.array[1]), 51.0);  // back to the stored value
  ASSERT_TRUE(r.type_range);
  EXPECT_EQ((*r.type_range)[0], 0.0);
  EXPECT_EQ((*r.type_range)[1], 255.0);
  EXPECT_EQ(r.auto_window().low(), 0.0);  // the default window: the full scale, as before
  EXPECT_EQ(r.auto_window().high(), 255.0);

  sv::Loaded unit;
  unit.array = sv::ArrayD({1, 2});
  unit.dtype = sv::DType::F32;
  unit.array[0] = 0.25, unit.array[1] = 0.75;
  r = sv::viewer::to_display_range(unit);
  EXPECT_EQ(unit.array[0], 0.25);
  EXPECT_FALSE(r.type_range);  // floats have no type range
  EXPECT_EQ(r.data_min, 0.25);
  EXPECT_EQ(r.data_max, 0.75);

  // CT-like int16: 2000 values 1000..2999 and one outlier; the window ignores the outlier.
  sv::Loaded ct;
  ct.array = sv::ArrayD({1, 2001});
  ct.dtype = sv::DType::I16;
  for (std::size_t i = 0; i < 2000; ++i) ct.array[i] = 1000.0 + static_cast<double>(i);
  ct.array[2000] = 30000;
  const sv::ArrayD stored = ct.array;
  r = sv::viewer::to_display_range(ct);
  EXPECT_NE(r.note.find("window 1002 to 2998"), std::string::npos) << r.note;
  EXPECT_EQ(ct.array[2], 0.0);     // 1002 -> black
  EXPECT_EQ(ct.array[1998], 1.0);  // 2998 -> white
  EXPECT_GT(ct.array[2000], 1.0);  // the outlier beyond the window (shown clamped)
  // Affine: equal steps stay equal.
  EXPECT_NEAR(ct.array[1000] - ct.array[999], ct.array[11] - ct.array[10], 1e-12);
  // Every stored value comes back through the scale; the auto window is the percentile window.
  for (std::size_t i = 0; i < stored.size(); ++i)
    EXPECT_NEAR(r.scale.raw(ct.array[i]), stored[i], 1e-9) << i;
  EXPECT_NEAR(r.auto_window().low(), 1002.0, 1e-9);
  EXPECT_NEAR(r.auto_window().high(), 2998.0, 1e-9);
  EXPECT_EQ(r.data_min, 1000.0);
  EXPECT_EQ(r.data_max, 30000.0);
  ASSERT_TRUE(r.type_range);
  EXPECT_EQ((*r.type_range)[0], -32768.0);
  EXPECT_EQ((*r.type_range)[1], 32767.0);

  // A constant image shows grey and still reads back its value.
  sv::Loaded flat;
  flat.array = sv::ArrayD({2, 2});
  flat.dtype = sv::DType::U16;
  for (std::size_t i = 0; i < 4; ++i) flat.array[i] = 700;
  r = sv::viewer::to_display_range(flat);
  EXPECT_EQ(flat.array[3], 0.5);
  EXPECT_EQ(r.scale.raw(flat.array[3]), 700.0);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
