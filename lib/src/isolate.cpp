// run_isolated: fork, a framed pipe, and an account of how the child ended. See isolate.h.
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io_common.h"
#include "splineview/error.h"
#include "splineview/text.h"

namespace sv::io {

namespace {

// Frame: one type byte ('D' data, 'P' ping) and, for data, a 32-bit little-endian length.
constexpr std::size_t kFrameMax = std::size_t{1} << 20;

ChildWriter* g_child = nullptr;  // set in the child only

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(3);  // the parent has gone or closed the pipe: nothing left to do
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGABRT:
      return "stopped on an assertion or abort (SIGABRT)";
    case SIGSEGV:
      return "crashed (SIGSEGV, an invalid memory access)";
    case SIGBUS:
      return "crashed (SIGBUS)";
    case SIGFPE:
      return "crashed (SIGFPE, an arithmetic fault)";
    case SIGILL:
      return "crashed (SIGILL)";
    case SIGKILL:
      return "was killed (SIGKILL; out of memory?)";
    default:
      return "was stopped by signal " + std::to_string(sig);
  }
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The last non-empty line the child wrote to its standard error (a memfd), made printable and
// short: GDCM's assertion text, for the message.
std::string last_line(int err_fd) {
  if (err_fd < 0) return "";
  const off_t size = ::lseek(err_fd, 0, SEEK_END);
  if (size <= 0) return "";
  const off_t from = std::max<off_t>(0, size - 4096);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  const ssize_t got = ::pread(err_fd, tail.data(), tail.size(), from);
  if (got <= 0) return "";
  tail.resize(static_cast<std::size_t>(got));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' '))
    tail.pop_back();
  const std::size_t nl = tail.find_last_of('\n');
  std::string line = nl == std::string::npos ? tail : tail.substr(nl + 1);
  // "prog: ./Source/.../file.cxx:375: bool gdcm::...: Assertion `...' failed." -> from the
  // source file name on.
  const std::size_t src = line.find("/Source/");
  if (src != std::string::npos) {
    const std::size_t slash = line.find_last_of('/', line.find(':', src));
    if (slash != std::string::npos) line = line.substr(slash + 1);
    // "file.cxx:375: <signature>: Assertion `...' failed." -> "file.cxx:375: Assertion `...'"
    const std::size_t colon = line.find(':', line.find(':') + 1);
    const std::size_t assertion = line.find("Assertion `");
    if (colon != std::string::npos && assertion != std::string::npos && assertion > colon)
      line = line.substr(0, colon + 2) + line.substr(assertion);
  }
  return sv::printable(line, 200);
}

[[noreturn]] void child_main(int fd, int err_fd, const std::function<void(ChildWriter&)>& child) {
  // What the decoder prints (an assertion's text) goes to a file the parent reads, not to the
  // terminal: the caller's message quotes its last line.
  if (err_fd >= 0) ::dup2(err_fd, 2);
  // Default actions: a sanitizer's or fuzzer's crash handler would report the decoder's failure
  // as ours, and the parent's temporary-file cleanup must not run here.
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM, SIGHUP, SIGQUIT,
                  SIGXFSZ, SIGXCPU, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2}) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ChildWriter writer(fd);
  g_child = &writer;
  try {
    child(writer);
  } catch (...) {
    _exit(4);  // the child function reports its own errors; anything else is a failure
  }
  ::close(fd);
  _exit(0);
}

}  // namespace

void ChildWriter::put(char type, const void* data, std::size_t n) {
  unsigned char head[5] = {static_cast<unsigned char>(type), static_cast<unsigned char>(n),
                           static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n >> 16),
                           static_cast<unsigned char>(n >> 24)};
  write_all(fd_, head, type == 'D' ? 5 : 1);
  if (n > 0) write_all(fd_, data, n);
}

void ChildWriter::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const std::size_t k = std::min(n, kFrameMax);
    put('D', p, k);
    p += k;
    n -= k;
  }
}

void ChildWriter::ping() {
  put('P', nullptr, 0);
}

void isolation_ping() {
  if (g_child) g_child->ping();
}

namespace {

// Reads exactly n bytes from fd, waiting at most quiet_limit_s for each chunk. Returns false at
// end of stream or on timeout (timed_out set).
bool read_raw(int fd, void* data, std::size_t n, double quiet_limit_s, bool* timed_out) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    struct pollfd pfd {};
    pfd.fd = fd;
    pfd.events = POLLIN;
    const int ms = static_cast<int>(std::min(quiet_limit_s * 1000.0, 2.0e9));
    const int r = ::poll(&pfd, 1, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) {
      *timed_out = true;
      return false;
    }
    const ssize_t got = ::read(fd, p, n);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    if (got == 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

struct ChildEnded : std::exception {};

}  // namespace

void ParentReader::read(void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (frame_left_ == 0) {
      unsigned char type = 0;
      if (!read_raw(fd_, &type, 1, quiet_limit_s_, &timed_out_)) throw ChildEnded();
      if (type == 'P') continue;
      unsigned char len[4];
      if (type != 'D' || !read_raw(fd_, len, 4, quiet_limit_s_, &timed_out_)) throw ChildEnded();
      frame_left_ = std::size_t{len[0]} | std::size_t{len[1]} << 8 | std::size_t{len[2]} << 16 |
                    std::size_t{len[3]} << 24;
      if (frame_left_ == 0 || frame_left_ > kFrameMax) throw ChildEnded();
      continue;
    }
    const std::size_t k = std::min(n, frame_left_);
    if (!read_raw(fd_, p, k, quiet_limit_s_, &timed_out_)) throw ChildEnded();
    p += k;
    n -= k;
    frame_left_ -= k;
  }
}

void run_isolated(const std::string& path, const std::string& decoder, double quiet_limit_s,
                  const std::function<void(ChildWriter&)>& child,
                  const std::function<void(ParentReader&)>& parent) {
  const char* env = std::getenv("SPLINEVIEW_IN_PROCESS_DECODERS");
  if (env && std::string(env) == "1") {
    // Both sides here, one after the other, through a temporary file (a pipe would need a
    // second thread).
    FILE* tmp = std::tmpfile();
    if (!tmp) fail(path, "cannot create a temporary file: " + std::string(std::strerror(errno)));
    {
      ChildWriter writer(::fileno(tmp));
      child(writer);
    }
    std::fflush(tmp);
    ::lseek(::fileno(tmp), 0, SEEK_SET);
    ParentReader reader(::fileno(tmp), quiet_limit_s);
    try {
      parent(reader);
    } catch (const ChildEnded&) {
      std::fclose(tmp);
      fail(path, decoder + " ended before its result was complete");
    } catch (...) {
      std::fclose(tmp);
      throw;
    }
    std::fclose(tmp);
    return;
  }

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    fail(path, "cannot create a pipe for " + decoder + ": " + std::strerror(errno));
  ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for large volumes; best effort
  const int err_fd = ::memfd_create("splineview-decoder-stderr", MFD_CLOEXEC);  // -1: inherit
  struct CloseErr {
    int fd;
    ~CloseErr() {
      if (fd >= 0) ::close(fd);
    }
  } close_err{err_fd};
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    fail(path, "cannot start a process for " + decoder + ": " + std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], err_fd, child);
  }
  ::close(fds[1]);

  ParentReader reader(fds[0], quiet_limit_s);
  bool complete = false;
  bool parent_error = false;
  std::string parent_message;
  try {
    parent(reader);
    complete = true;
  } catch (const ChildEnded&) {
  } catch (const Error& e) {
    parent_error = true;
    parent_message = e.what();
  } catch (...) {  // out of memory receiving the result, ...: the child goes first
    ::kill(pid, SIGKILL);
    ::close(fds[0]);
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    throw;
  }
  // A hung child is killed. After an error of the parent's own (a message the child sent, or a
  // result that failed a check) the child has nothing more to say: it is killed too. At the end
  // of the stream the child is leaving by itself and is waited for.
  if (reader.timed_out() || parent_error) ::kill(pid, SIGKILL);
  // With the result complete the child may still send keep-alive pings before it exits: read the
  // stream to its end first, so that they never meet a closed pipe (the child would die of
  // SIGPIPE, a race that made a finished decode look failed). A child that then stays quiet for
  // the quiet limit is stopped; its result is already whole.
  bool stopped_after_result = false;
  if (complete && !reader.timed_out() && !parent_error) {
    char sink[4096];
    const int ms = static_cast<int>(std::min(quiet_limit_s * 1000.0, 2.0e9));
    for (;;) {
      pollfd pfd{fds[0], POLLIN, 0};
      const int r = ::poll(&pfd, 1, ms);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ::kill(pid, SIGKILL);
        stopped_after_result = true;
        break;
      }
      const ssize_t n = ::read(fds[0], sink, sizeof sink);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (stopped_after_result) return;
  if (parent_error) throw Error(parent_message);
  if (reader.timed_out())
    fail(path, decoder + " made no progress for " + seconds(quiet_limit_s) +
                   " s and was stopped (a damaged file, or one too large to decode)");
  if (complete && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string said = last_line(err_fd);
  const std::string quoted = said.empty() ? "" : ": " + said;
  if (WIFSIGNALED(status))
    fail(path, decoder + " " + signal_name(WTERMSIG(status)) +
                   " while reading it (a damaged or unsupported file)" + quoted);
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    fail(path, decoder + " stopped with exit status " + std::to_string(WEXITSTATUS(status)) +
                   " while reading it (a damaged or unsupported file)" + quoted);
  fail(path, decoder + " ended before its result was complete (a damaged or unsupported file)");
}

}  // namespace sv::io
