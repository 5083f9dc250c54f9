// Running a third-party decoder where its failures cannot take the process down.
//
// Some decoders stop the process on damaged input: GDCM 3.0.21 (Debian 12) is built with
// assertions on and aborts on dozens of malformed data sets that libFuzzer finds within minutes;
// a segfault in a codec takes the viewer with it. run_isolated runs such work in a child
// process (fork, no exec) and streams its result back through a pipe, so that whatever the
// decoder does (abort, crash, hang, exit) the caller gets a result or one sv::Error naming the
// input and what happened, and the calling process is unharmed.
//
// The child: has the default action for every signal (no sanitizer or fuzzer report, no
// temporary-file cleanup of the parent's files), writes no core file, dies with its parent
// (PR_SET_PDEATHSIG), and leaves through _exit (no atexit handlers, no stdio flush of the
// parent's buffers). It must ping (isolation_ping) at least once every `quiet_limit_s` seconds
// of work or it is killed and the load refused as hung.
//
// Memory: the result exists twice while it is streamed (once in the child, once in the caller).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace sv::io {

// The child's side: sends bytes to the parent, framed so that pings can be interleaved.
class ChildWriter {
 public:
  explicit ChildWriter(int fd) : fd_(fd) {}
  void write(const void* data, std::size_t n);
  void ping();

 private:
  void put(char type, const void* data, std::size_t n);
  int fd_;
};

// The parent's side: reads the bytes the child wrote, in order, skipping pings. Throws
// sv::Error when the child stops (end of stream) or stays quiet too long; run_isolated replaces
// that message by one that says how the child ended.
class ParentReader {
 public:
  ParentReader(int fd, double quiet_limit_s) : fd_(fd), quiet_limit_s_(quiet_limit_s) {}
  void read(void* data, std::size_t n);
  bool timed_out() const { return timed_out_; }

 private:
  void fill();  // at least one byte in buf_, or throws
  int fd_;
  double quiet_limit_s_;
  bool timed_out_ = false;
  std::size_t frame_left_ = 0;  // payload bytes of the current data frame still unread
};

// Called by work that may run in the isolated child (e.g. once per file of a DICOM series); a
// no-op when not in a child.
void isolation_ping();

// Runs child(writer) in a child process and parent(reader) here; returns when both are done.
// parent's result is accepted only if the child exited with status 0 after writing everything
// parent read. Otherwise throws sv::Error "<path>: <decoder> <how it ended> (a damaged or
// unsupported file)", e.g. "... GDCM stopped on an assertion (SIGABRT) ...". An sv::Error thrown
// by parent() after a clean child exit (e.g. an error message the child sent) passes through.
// With the environment variable SPLINEVIEW_IN_PROCESS_DECODERS=1 (debugging) both run here, in
// this process, without a child.
void run_isolated(const std::string& path, const std::string& decoder, double quiet_limit_s,
                  const std::function<void(ChildWriter&)>& child,
                  const std::function<void(ParentReader&)>& parent);

}  // namespace sv::io
