// Tests of sv::TempFileGuard (splineview/temp_files.h) and of the savers that use it: the
// destructor and release() paths, moves, and the terminating signals (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGPIPE, SIGXCPU, and SIGXFSZ from a file-size limit hit in the middle of a real
// save) in forked children: the child dies by that very signal, no "*.tmp-*" file remains and
// the existing OUT is byte-identical.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"
#include "splineview/io.h"
#include "splineview/temp_files.h"

namespace fs = std::filesystem;

namespace {

class TempFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int serial = 0;
    dir_ = fs::temp_directory_path() /
           ("splineview-tmpguard-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp-") != std::string::npos) out.push_back(name);
    }
    return out;
  }
  fs::path dir_;
};

void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << p;
}

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Runs fn in a forked child (no core files; killed after 30 s) and returns its wait status.
// fn returning normally exits with status 0.
int run_in_child(const std::function<void()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::alarm(30);
    try {
      fn();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

TEST_F(TempFilesTest, DestructorRemovesTheFile) {
  const std::string p = path("out.npy.tmp-1-0");
  write_bytes(p, "partial");
  {
    sv::TempFileGuard g(p);
    EXPECT_EQ(g.path(), p);
    EXPECT_TRUE(sv::temp_file_handlers_installed());
    EXPECT_TRUE(fs::exists(p));
  }
  EXPECT_FALSE(fs::exists(p));
  // An exception unwinding through the guard removes it too.
  write_bytes(p, "partial");
  try {
    sv::TempFileGuard g(p);
    throw sv::Error("write failed");
  } catch (const sv::Error&) {
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(TempFilesTest, ReleaseKeepsTheFile) {
  const std::string p = path("kept");
  write_bytes(p, "done");
  {
    sv::TempFileGuard g(p);
    g.release();
    EXPECT_TRUE(g.path().empty());
  }
  EXPECT_EQ(read_bytes(p), "done");
  // A released guard is no longer removed by a signal either.
  const int status = run_in_child([&] {
    sv::TempFileGuard g(p);
    g.release();
    ::raise(SIGTERM);
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << describe(status);
  EXPECT_EQ(read_bytes(p), "done");
}

TEST_F(TempFilesTest, MovesTransferTheFile) {
  const std::string a = path("a"), b = path("b");
  write_bytes(a, "a");
  write_bytes(b, "b");
  {
    sv::TempFileGuard ga(a);
    sv::TempFileGuard moved(std::move(ga));
    EXPECT_EQ(moved.path(), a);
    {
      sv::TempFileGuard gb(b);
      gb = std::move(moved);  // gb's own file goes now
      EXPECT_FALSE(fs::exists(b));
      EXPECT_TRUE(fs::exists(a));
    }
    EXPECT_FALSE(fs::exists(a));
  }
  // An empty guard guards nothing and removes nothing.
  { sv::TempFileGuard none(""); }
  sv::TempFileGuard def;
  EXPECT_TRUE(def.path().empty());
}

// More guards than the signal table holds (64): the destructor still removes every file.
TEST_F(TempFilesTest, ManyGuardsAllRemoved) {
  std::vector<std::string> paths;
  {
    std::vector<sv::TempFileGuard> guards;
    for (int i = 0; i < 80; ++i) {
      paths.push_back(path("t" + std::to_string(i)));
      write_bytes(paths.back(), "x");
      guards.emplace_back(paths.back());
    }
  }
  for (const std::string& p : paths) EXPECT_FALSE(fs::exists(p)) << p;
}

// Each terminating signal: the child dies by it (default action restored and the signal
// raised again), the guarded file is gone, an unguarded one beside it is untouched.
TEST_F(TempFilesTest, TerminatingSignalsRemoveGuardedFiles) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU}) {
    SCOPED_TRACE(strsignal(sig));
    const std::string guarded = path("out.tmp-7-1"), other = path("other");
    write_bytes(guarded, "partial");
    write_bytes(other, "keep");
    const int status = run_in_child([&] {
      // Left alive on purpose: only the signal handler can remove the file.
      auto* g = new sv::TempFileGuard(guarded);
      (void)g;
      ::raise(sig);
      ::_exit(4);  // not reached
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << describe(status);
    EXPECT_FALSE(fs::exists(guarded));
    EXPECT_EQ(read_bytes(other), "keep");
  }
  // From another process (kill), as Ctrl-C or a job scheduler sends it.
  const std::string guarded = path("killed.tmp-8-1");
  write_bytes(guarded, "partial");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    ::alarm(30);
    auto* g = new sv::TempFileGuard(guarded);
    (void)g;
    const char c = 'r';
    if (::write(ready[1], &c, 1) != 1) ::_exit(5);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << describe(status);
  EXPECT_FALSE(fs::exists(guarded));
}

// A file-size limit hit in the middle of a real save: the write raises SIGXFSZ, the process
// dies by it, and neither a temporary nor a damaged OUT remains. (Before the guard, the
// 64 KiB "OUT.tmp-<pid>-0" stayed behind.)
TEST_F(TempFilesTest, FileSizeLimitDuringSaveLeavesNoTemporary) {
  const std::string out = path("out.npy");
  const std::string original = "the previous contents of OUT";
  write_bytes(out, original);
  const sv::ArrayD big({512, 512}, 1);  // 1 MiB as float32
  const int status = run_in_child([&] {
    rlimit fsize{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    sv::save_npy(out, big, sv::DType::F32, false);
    ::_exit(6);  // not reached: the save cannot succeed
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << describe(status);
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
  EXPECT_EQ(read_bytes(out), original);

  // The detached NRRD pair: the data file is the big one; both old files stay as they were.
  const std::string nhdr = path("vol.nhdr"), data = path("vol.raw.gz");
  write_bytes(nhdr, "old header");
  write_bytes(data, "old data");
  sv::ArrayD noisy({256, 256, 16}, 1);
  unsigned x = 12345;
  for (std::size_t i = 0; i < noisy.size(); ++i) {
    x = x * 1103515245u + 12345u;
    noisy[i] = static_cast<double>(x >> 8);
  }
  const int status2 = run_in_child([&] {
    rlimit fsize{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    sv::save_nrrd(nhdr, noisy, sv::DType::F32, false);
    ::_exit(6);
  });
  EXPECT_TRUE(WIFSIGNALED(status2) && WTERMSIG(status2) == SIGXFSZ) << describe(status2);
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
  EXPECT_EQ(read_bytes(nhdr), "old header");
  EXPECT_EQ(read_bytes(data), "old data");
}

// With SIGXFSZ ignored the write fails with EFBIG instead: a clear sv::Error naming OUT, the
// temporary removed, OUT untouched.
TEST_F(TempFilesTest, WriteErrorRemovesTheTemporary) {
  const std::string out = path("out.npy");
  const std::string original = "the previous contents of OUT";
  write_bytes(out, original);
  const sv::ArrayD big({512, 512}, 1);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int status = run_in_child([&] {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit fsize{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    std::string msg = "no error";
    try {
      sv::save_npy(out, big, sv::DType::F32, false);
    } catch (const sv::Error& e) {
      msg = e.what();
    }
    if (::write(fds[1], msg.data(), msg.size()) < 0) ::_exit(7);
  });
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    msg.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
  EXPECT_EQ(msg.rfind(out + ": cannot write: File too large", 0), 0u) << msg;
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
  EXPECT_EQ(read_bytes(out), original);
}

}  // namespace
