// Tests of run_isolated (lib/src/isolate.h): a decoder run in a child process can abort, crash,
// hang or exit without harming the caller, which gets one sv::Error naming the input and how
// the child ended; a clean child's result comes back byte for byte, pings interleaved.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "isolate.h"
#include "splineview/error.h"

namespace {

using sv::io::ChildWriter;
using sv::io::ParentReader;
using sv::io::run_isolated;

// The message of the sv::Error that fn throws ("" when it throws none).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Isolate, ResultComesBackExactlyWithPingsInterleaved) {
  // 5 MB spans several 1 MiB frames; pings between and inside the writes must be invisible.
  std::vector<std::uint32_t> sent(5 * 1024 * 1024 / 4);
  for (std::size_t i = 0; i < sent.size(); ++i)
    sent[i] = static_cast<std::uint32_t>(i * 2654435761u);
  std::vector<std::uint32_t> got(sent.size());
  run_isolated(
      "in.dat", "the test decoder", 30,
      [&](ChildWriter& w) {
        w.ping();
        w.write(sent.data(), 12345);
        sv::io::isolation_ping();
        w.ping();
        w.write(reinterpret_cast<const char*>(sent.data()) + 12345, sent.size() * 4 - 12345);
        w.ping();
      },
      [&](ParentReader& r) {
        r.read(got.data(), 7);
        r.read(reinterpret_cast<char*>(got.data()) + 7, got.size() * 4 - 7);
      });
  EXPECT_EQ(got, sent);
}

TEST(Isolate, PingsAfterTheWholeResultAreHarmless) {
  // The parent has all it wants before the child's last keep-alive pings: they must not meet a
  // closed pipe (the child dying of SIGPIPE made a finished decode look failed, under load).
  std::vector<std::uint32_t> sent(1000, 7u), got(sent.size());
  run_isolated(
      "in.dat", "the test decoder", 30,
      [&](ChildWriter& w) {
        w.write(sent.data(), sent.size() * 4);
        ::usleep(100 * 1000);  // the parent has read the result and returned meanwhile
        for (int i = 0; i < 50; ++i) w.ping();
      },
      [&](ParentReader& r) { r.read(got.data(), got.size() * 4); });
  EXPECT_EQ(got, sent);
}

TEST(Isolate, AnAbortingDecoderIsOneErrorAndTheCallerGoesOn) {
  const std::string msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 30, [](ChildWriter&) { std::abort(); },
        [](ParentReader& r) {
          char c;
          r.read(&c, 1);
        });
  });
  EXPECT_NE(msg.find("scan.dcm: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("the test decoder stopped on an assertion or abort (SIGABRT)"),
            std::string::npos)
      << msg;
}

TEST(Isolate, ACrashingDecoderIsOneError) {
  const std::string msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 30, [](ChildWriter&) { ::raise(SIGSEGV); },
        [](ParentReader& r) {
          char c;
          r.read(&c, 1);
        });
  });
  EXPECT_NE(msg.find("crashed (SIGSEGV"), std::string::npos) << msg;
}

TEST(Isolate, ADecoderThatStopsHalfWayIsOneError) {
  // Writes half of what the parent expects, then exits 0: incomplete, whatever the status.
  const std::string msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 30,
        [](ChildWriter& w) {
          const char half[4] = {1, 2, 3, 4};
          w.write(half, 4);
        },
        [](ParentReader& r) {
          char all[8];
          r.read(all, 8);
        });
  });
  EXPECT_NE(msg.find("ended before its result was complete"), std::string::npos) << msg;
  const std::string exit_msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 30, [](ChildWriter&) { _exit(7); },
        [](ParentReader& r) {
          char c;
          r.read(&c, 1);
        });
  });
  EXPECT_NE(exit_msg.find("stopped with exit status 7"), std::string::npos) << exit_msg;
}

TEST(Isolate, AHungDecoderIsStoppedAfterItsQuietLimit) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 0.5,
        [](ChildWriter&) {
          for (;;) ::pause();
        },
        [](ParentReader& r) {
          char c;
          r.read(&c, 1);
        });
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(msg.find("made no progress for 0.5 s"), std::string::npos) << msg;
  EXPECT_LT(s, 20.0);  // a bound on the wait, not a speed target: the child was killed
}

TEST(Isolate, PingsKeepASlowDecoderAlive) {
  // Quiet limit 0.4 s; the child works 1.2 s in all but pings every 0.1 s.
  int got = 0;
  run_isolated(
      "scan.dcm", "the test decoder", 0.4,
      [](ChildWriter& w) {
        for (int i = 0; i < 12; ++i) {
          ::usleep(100000);
          w.ping();
        }
        const int v = 42;
        w.write(&v, sizeof v);
      },
      [&](ParentReader& r) { r.read(&got, sizeof got); });
  EXPECT_EQ(got, 42);
}

TEST(Isolate, AnErrorTheParentRaisesPassesThroughAfterACleanChild) {
  const std::string msg = error_of([] {
    run_isolated(
        "scan.dcm", "the test decoder", 30,
        [](ChildWriter& w) {
          const char c = 'x';
          w.write(&c, 1);
        },
        [](ParentReader& r) {
          char c;
          r.read(&c, 1);
          throw sv::Error("scan.dcm: the message the child sent");
        });
  });
  EXPECT_EQ(msg, "scan.dcm: the message the child sent");
}

TEST(Isolate, InProcessModeGivesTheSameResult) {
  ::setenv("SPLINEVIEW_IN_PROCESS_DECODERS", "1", 1);
  pid_t child_pid = 0;
  std::vector<double> got(3);
  run_isolated(
      "in.dat", "the test decoder", 30,
      [&](ChildWriter& w) {
        child_pid = ::getpid();
        const double v[3] = {1.5, -2, 1e300};
        w.ping();
        w.write(v, sizeof v);
      },
      [&](ParentReader& r) { r.read(got.data(), 3 * sizeof(double)); });
  ::unsetenv("SPLINEVIEW_IN_PROCESS_DECODERS");
  EXPECT_EQ(child_pid, ::getpid());  // it ran here
  EXPECT_EQ(got, (std::vector<double>{1.5, -2, 1e300}));
}

}  // namespace
