#include "batch.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "backend_gl.h"
#include "commands.h"
#include "splineview/command_words.h"
#include "splineview/error.h"

namespace splinetool {

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// A value of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1.
long status_kib(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return -1;
  char line[256];
  long value = -1;
  const std::size_t len = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, len) == 0 && line[len] == ':') {
      value = std::strtol(line + len + 1, nullptr, 10);
      break;
    }
  std::fclose(f);
  return value;
}

// Resets the process's peak resident size (VmHWM) to its current size (Linux 4.0 and later).
bool reset_peak_rss() {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

std::string number_or_null(long v) {
  return v < 0 ? "null" : std::to_string(v);
}

// Where the next byte written to `fd` goes when it is a regular file; "null" otherwise.
std::string file_offset(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "null";
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  return at < 0 ? "null" : std::to_string(static_cast<long long>(at));
}

// The commands: a file, or standard input. For "-" the batch keeps standard input on a
// descriptor of its own and the commands get /dev/null there (an input "-" is refused by
// load_stdin_npy), until the batch ends.
class CommandFile {
 public:
  CommandFile(const std::string& path, const std::string& shown_name) {
    if (path == "-") {
      const int fd = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
      if (fd < 0) throw sv::Error("batch: cannot read standard input: " + errno_text(errno));
      file_ = ::fdopen(fd, "r");
      if (!file_) {
        ::close(fd);
        throw sv::Error("batch: cannot read standard input: " + errno_text(errno));
      }
      const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0 || ::dup2(null, 0) < 0) {
        const int e = errno;
        if (null >= 0) ::close(null);
        std::fclose(file_);
        throw sv::Error("batch: cannot open /dev/null for the commands' standard input: " +
                        errno_text(e));
      }
      ::close(null);
      stdin_ = true;
      set_stdin_is_batch(true);
      return;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw sv::Error("batch: cannot open '" + shown_name + "': " + errno_text(errno));
    if (S_ISDIR(st.st_mode))
      throw sv::Error("batch: '" + shown_name + "' is a folder, not a file of commands");
    file_ = std::fopen(path.c_str(), "re");
    if (!file_) throw sv::Error("batch: cannot open '" + shown_name + "': " + errno_text(errno));
  }
  ~CommandFile() {
    if (stdin_) {
      ::dup2(::fileno(file_), 0);  // the process's standard input back as it was
      set_stdin_is_batch(false);
    }
    std::fclose(file_);
  }
  CommandFile(const CommandFile&) = delete;
  CommandFile& operator=(const CommandFile&) = delete;

  // The next line without its end ("\n", or "\r\n"); false at the end of the file. A line
  // longer than kMaxBatchLine is read to its end and returned empty with `too_long` set.
  bool next(std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    int c = 0;
    bool any = false;
    while ((c = getc_unlocked(file_)) != EOF) {
      any = true;
      if (c == '\n') break;
      if (too_long) continue;
      if (line.size() >= kMaxBatchLine) {
        too_long = true;
        line.clear();
        line.shrink_to_fit();
        continue;
      }
      line += static_cast<char>(c);
    }
    if (std::ferror(file_)) throw sv::Error("read error: " + errno_text(errno));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return any;
  }

 private:
  std::FILE* file_ = nullptr;
  bool stdin_ = false;
};

}  // namespace

int run_batch(const BatchArgs& args, const std::string& program, const CommandRunner& run) {
  const std::string name = args.file == "-" ? "-" : shown(args.file);
  std::FILE* log = nullptr;
  if (!args.log.empty()) {
    log = std::fopen(args.log.c_str(), "we");
    if (!log)
      throw sv::Error("batch: --log: cannot create '" + shown(args.log) +
                      "': " + errno_text(errno));
  }
  struct LogCloser {
    std::FILE* f;
    ~LogCloser() {
      if (f) std::fclose(f);
    }
  } log_closer{log};
  CommandFile commands(args.file, name);
  // The GL backend's commands share one context and its compiled shaders, released at the end.
  struct GlSharing {
    GlSharing() { share_gl_context(true); }
    ~GlSharing() { share_gl_context(false); }
  } gl_sharing;

  std::string line;
  std::vector<std::string> words, argv;
  std::size_t number = 0, ran = 0, failed = 0;
  std::string failed_lines;  // the first ten, for the summary
  bool too_long = false;
  while (true) {
    try {
      if (!commands.next(line, too_long)) break;
    } catch (const sv::Error& e) {
      throw sv::Error("batch " + name + " line " + std::to_string(number + 1) + ": " + e.what());
    }
    ++number;
    const std::string where = "batch " + name + " line " + std::to_string(number) + ": ";
    std::string why;
    if (too_long)
      why = "longer than " + std::to_string(kMaxBatchLine) + " bytes";
    else
      why = sv::split_command_words(line, words);
    if (why.empty() && words.empty()) continue;  // blank or a comment
    ++ran;
    int status = 2;  // a line that cannot be split is a command-line error
    const auto t0 = std::chrono::steady_clock::now();
    const bool peak_known = log && reset_peak_rss();
    const long start_rss = log ? status_kib("VmRSS") : -1;
    if (!why.empty()) {
      std::fprintf(stderr, "splinetool: %s%s\n", where.c_str(), why.c_str());
    } else {
      argv.assign(1, program);
      argv.insert(argv.end(), words.begin(), words.end());
      status = run(argv, where);
    }
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    if (log) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const long peak = peak_known ? status_kib("VmHWM") : -1;
      struct rusage children {};
      const long children_peak =
          ::getrusage(RUSAGE_CHILDREN, &children) == 0 ? children.ru_maxrss : -1;
      std::fprintf(log,
                   "{\"line\": %zu, \"status\": %d, \"seconds\": %.6f, \"stdout_end\": %s, "
                   "\"stderr_end\": %s, \"start_rss_kib\": %s, \"peak_rss_kib\": %s, "
                   "\"children_peak_rss_kib\": %s}\n",
                   number, status, seconds, file_offset(1).c_str(), file_offset(2).c_str(),
                   number_or_null(start_rss).c_str(), number_or_null(peak).c_str(),
                   number_or_null(children_peak).c_str());
      if (std::fflush(log) != 0)
        throw sv::Error("batch: --log: cannot write '" + shown(args.log) +
                        "': " + errno_text(errno));
    }
    if (status == 0) continue;
    if (!args.keep_going) return status;
    ++failed;
    if (failed <= 10)
      failed_lines += (failed == 1 ? "" : ", ") + std::to_string(number);
    else if (failed == 11)
      failed_lines += ", ...";
  }
  if (failed == 0) return 0;
  std::fprintf(stderr, "splinetool: batch %s: %zu of %zu commands failed (line%s %s)\n",
               name.c_str(), failed, ran, failed == 1 ? "" : "s", failed_lines.c_str());
  return 1;
}

}  // namespace splinetool
