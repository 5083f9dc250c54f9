// A GoogleTest fixture with a fresh temporary directory per test, removed afterwards (the I/O
// suites write real files).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace svtest
