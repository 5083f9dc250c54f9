// A GoogleTest fixture with a fresh temporary directory per test, removed afterwards (the I/O
// suites write real files), and the whole-file byte helpers the suites share.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace svtest {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int serial = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("splineview-io-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + "-" +
            info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// Whole-file byte helpers of the I/O suites (their own namespace: the video suites' helpers of
// the same name return std::vector<char>).
namespace io {

// The whole file as bytes ("" when it cannot be read).
inline std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Replaces the file with `bytes`; a failed write fails the test.
inline void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << p;
}

}  // namespace io

}  // namespace svtest
