// Temporary output files that must not outlive a stopped process. Every writer in splineview
// writes "<OUT>.tmp-<pid>-..." beside its target and renames it into place at the end; a
// TempFileGuard registers that temporary so that it is removed on every way out we can catch:
// an exception or early return (the destructor), and the signals that end a process by default
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU). On such a signal the handler
// unlinks every registered temporary, restores the default action and raises the signal again,
// so the process still ends the way the signal asked (exit status, core dump).
//
// The handlers are installed on the first registration, and only for signals whose action is
// the default at that moment (a program with its own handler keeps it). SIGKILL and power loss
// cannot be caught: a temporary may remain then, never the target damaged.
#pragma once

#include <string>

namespace sv {

class TempFileGuard {
 public:
  TempFileGuard() = default;
  // Registers `path` (at most 64 temporaries at once, paths up to 4095 bytes; beyond that the
  // file is still removed by the destructor, only not on a signal).
  explicit TempFileGuard(const std::string& path);
  ~TempFileGuard();  // removes the file unless release() was called
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  TempFileGuard(TempFileGuard&& other) noexcept;
  TempFileGuard& operator=(TempFileGuard&& other) noexcept;

  // The file was renamed into place (or removed by the caller): forget it.
  void release();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;
};

// True once the signal handlers are installed (for tests).
bool temp_file_handlers_installed();

}  // namespace sv
