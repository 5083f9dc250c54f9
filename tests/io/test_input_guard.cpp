// Tests of the loaders' input guard (splineview/input.h) and of their messages (text.h):
// devices, FIFOs and sockets are refused at once unless opted in, and then read no further than
// the header claims; compressed data that claims far more than it holds fails as truncated
// having allocated about what it held (peak RSS measured in a forked child); messages quote file
// text printable and short; .nhdr errors name the header and the data file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "splineview/error.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/text.h"
#include "temp_dir_test.h"

namespace {

using svtest::io::write_bytes;

class InputGuardTest : public svtest::TempDirTest {};

// The message of the sv::Error that fn throws ("" and a test failure when none is thrown).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no sv::Error thrown";
  return "";
}

// True when the message is one line of bytes a terminal prints as they are.
bool is_clean_line(const std::string& m) {
  for (char ch : m) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// What a forked child reports: its exit status and what it wrote.
struct ChildResult {
  int status = 0;
  std::string text;
};

// Runs fn in a forked child that is killed by SIGALRM after `seconds`; the string fn returns
// comes back through a pipe. A loader that blocks or reads without end shows as a signalled
// child instead of hanging the test.
ChildResult run_in_child(const std::function<std::string()>& fn, unsigned seconds) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(seconds);
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    }
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t w = ::write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildResult r;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "no error";
}

void expect_exited(const ChildResult& r) {
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
      << "the child did not finish in time (signal "
      << (WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0) << "): " << r.text;
}

std::string gzip(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  EXPECT_EQ(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Bytes that do not compress (a fixed LCG, so the test is deterministic).
std::string noise(std::size_t n) {
  std::string s(n, '\0');
  std::uint64_t x = 88172645463325252ull;
  for (char& c : s) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  return s;
}

void put_le(std::string& h, std::size_t off, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_f32(std::string& h, std::size_t off, float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  put_le(h, off, u, 4);
}

// A NIfTI-1 header plus the 4-byte extension flag (352 bytes) for float32 voxels of dims
// nx x ny x nz (offsets of struct nifti_1_header).
std::string nifti_header(int nx, int ny, int nz) {
  std::string h(352, '\0');
  put_le(h, 0, 348, 4);                              // sizeof_hdr
  put_le(h, 40, 3, 2);                               // dim[0]
  put_le(h, 42, static_cast<std::uint64_t>(nx), 2);  // dim[1]
  put_le(h, 44, static_cast<std::uint64_t>(ny), 2);  // dim[2]
  put_le(h, 46, static_cast<std::uint64_t>(nz), 2);  // dim[3]
  for (std::size_t i = 4; i <= 7; ++i) put_le(h, 40 + 2 * i, 1, 2);
  put_le(h, 70, 16, 2);                                               // datatype DT_FLOAT32
  put_le(h, 72, 32, 2);                                               // bitpix
  for (std::size_t i = 0; i <= 7; ++i) put_f32(h, 76 + 4 * i, 1.0f);  // pixdim
  put_f32(h, 108, 352.0f);                                            // vox_offset
  put_f32(h, 112, 1.0f);                                              // scl_slope
  std::memcpy(&h[344], "n+1", 4);
  return h;
}

// A .npy (version 1.0) holding `values` as little-endian float32 of shape (n,), with `descr`
// written into its header.
std::string npy_f32(const std::vector<float>& values, const std::string& descr = "<f4") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(values.size()) + ",), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string s = "\x93NUMPY";
  s += '\x01';
  s += '\x00';
  s += static_cast<char>(dict.size() & 0xff);
  s += static_cast<char>(dict.size() >> 8);
  s += dict;
  for (float f : values) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    std::string b(4, '\0');
    put_le(b, 0, u, 4);
    s += b;
  }
  return s;
}

// Feeds `bytes` into the FIFO `p` from a thread (opening it without blocking for up to 10 s,
// so that a reader that never comes cannot hang the test; SIGPIPE blocked in that thread).
std::thread feed_fifo(const std::string& p, std::string bytes) {
  return std::thread([p, bytes = std::move(bytes)] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int fd = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (fd < 0 && std::chrono::steady_clock::now() < deadline) {
      fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    ::close(fd);
  });
}

// ------------------------------------------------------------------------------ refused inputs

// Item 6: /dev/zero and a FIFO fail at once, whatever the loader, and the message names the
// input and what it is. (The old code read /dev/zero until memory ran out and blocked on the
// FIFO for a writer: here the child would be killed by its alarm.)
TEST_F(InputGuardTest, DevicesFifosAndSocketsAreRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(path("f.npy").c_str(), 0600), 0);
  const std::string fifo = path("f.npy");
  // A socket.
  const std::string sock = path("s.nrrd");
  const int sfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sfd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(sfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // A .nhdr whose data file is /dev/zero.
  const std::string nhdr = path("h.nhdr");
  write_bytes(nhdr,
              "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nendian: little\nencoding: raw\n"
              "data file: /dev/zero\n");

  struct Case {
    std::string name, path, needle;
    std::function<void()> load;
  };
  const sv::RawSpec spec = sv::parse_raw_spec("4x4:u8");
  const std::vector<Case> cases = {
      {"raw /dev/zero", "/dev/zero", "(a character device); only regular files are read",
       [&] { sv::load_raw("/dev/zero", spec, false); }},
      {"npy /dev/zero", "/dev/zero", "(a character device)",
       [&] { sv::load_npy("/dev/zero", false); }},
      {"nrrd /dev/zero", "/dev/zero", "(a character device)", [&] { sv::load_nrrd("/dev/zero"); }},
      {"nifti /dev/zero", "/dev/zero", "(a character device)",
       [&] { sv::load_nifti("/dev/zero"); }},
      {"any raw /dev/zero", "/dev/zero", "(a character device)",
       [&] { sv::load_any("/dev/zero", false, spec); }},
      {"nhdr data file", nhdr, "detached data file: /dev/zero: not a regular file (a character",
       [&] { sv::load_nrrd(nhdr); }},
      {"fifo npy", fifo, "(a FIFO)", [&] { sv::load_npy(fifo, false); }},
      {"fifo raw", fifo, "(a FIFO)", [&] { sv::load_raw(fifo, spec, false); }},
      {"fifo nifti", fifo, "(a FIFO)", [&] { sv::load_nifti(fifo); }},
      {"socket", sock, "(a socket)", [&] { sv::load_nrrd(sock); }},
      {"image", "/dev/zero", "(a character device)", [&] { sv::load_image("/dev/zero"); }},
      {"check_input fifo", fifo, "(a FIFO)", [&] { sv::check_input(fifo); }},
      {"check_input device", "/dev/zero", "(a character device)",
       [&] { sv::check_input("/dev/zero"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto t0 = std::chrono::steady_clock::now();
    const ChildResult r = run_in_child([&] { return message_of(c.load); }, 10);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    expect_exited(r);
    EXPECT_EQ(r.text.rfind(c.path + ": ", 0), 0u) << r.text;
    EXPECT_NE(r.text.find(c.needle), std::string::npos) << r.text;
    EXPECT_LT(s, 5.0);
  }
  ::close(sfd);

  // A directory keeps its plain message.
  const std::string msg = error_of([&] { sv::load_npy(dir_.string(), false); });
  EXPECT_EQ(msg, dir_.string() + ": cannot open: Is a directory");
}

// Opted in, a device is read only as far as the header claims plus one byte: /dev/zero, which
// never ends, fails at once as "more than" / trailing data / a bad header.
TEST_F(InputGuardTest, OptedInDevicesAreReadNoFurtherThanClaimed) {
  const std::string nhdr = path("h.nhdr");
  const std::string gz_nhdr = path("g.nhdr");
  const std::string ascii_nhdr = path("a.nhdr");
  write_bytes(nhdr,
              "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nendian: little\nencoding: raw\n"
              "data file: /dev/zero\n");
  write_bytes(gz_nhdr,
              "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nendian: little\nencoding: gzip\n"
              "data file: /dev/zero\n");
  write_bytes(ascii_nhdr,
              "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nencoding: ascii\n"
              "data file: /dev/zero\n");
  struct Case {
    std::string name, path, needle;
    std::function<void()> load;
  };
  const std::vector<Case> cases = {
      {"raw", "/dev/zero", "the file holds more than 48 bytes, the raw spec needs 48",
       [] { sv::load_raw("/dev/zero", sv::parse_raw_spec("3x4:f32"), false); }},
      {"npy", "/dev/zero", "bad magic", [] { sv::load_npy("/dev/zero", false); }},
      {"nifti", "/dev/zero", "sizeof_hdr is 0", [] { sv::load_nifti("/dev/zero"); }},
      {"nrrd", "/dev/zero", "bad magic", [] { sv::load_nrrd("/dev/zero"); }},
      {"image (no size up front)", "/dev/zero",
       "more than 67108864 bytes from a non-regular file (a character device)",
       [] { sv::load_image("/dev/zero"); }},
      {"nhdr raw", nhdr, "detached data file: /dev/zero: trailing data: expected 16 data bytes",
       [&] { sv::load_nrrd(nhdr); }},
      {"nhdr gzip", gz_nhdr, "detached data file: /dev/zero: corrupt gzip data",
       [&] { sv::load_nrrd(gz_nhdr); }},
      {"nhdr ascii", ascii_nhdr, "detached data file: /dev/zero: malformed ascii data",
       [&] { sv::load_nrrd(ascii_nhdr); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ChildResult r = run_in_child(
        [&] {
          sv::ScopedInputOptions allow({true});
          return message_of(c.load);
        },
        10);
    expect_exited(r);
    EXPECT_EQ(r.text.rfind(c.path + ": ", 0), 0u) << r.text;
    EXPECT_NE(r.text.find(c.needle), std::string::npos) << r.text;
  }
  // check_input looks without opening: an opted-in FIFO passes (and does not block).
  ASSERT_EQ(::mkfifo(path("f").c_str(), 0600), 0);
  const ChildResult r = run_in_child(
      [&] {
        sv::ScopedInputOptions allow({true});
        return message_of([&] { sv::check_input(path("f")); });
      },
      10);
  expect_exited(r);
  EXPECT_EQ(r.text, "no error");
  EXPECT_NE(error_of([&] { sv::check_input(path("missing")); }).find("cannot open: No such file"),
            std::string::npos);
  // The option is restored by the scope.
  EXPECT_FALSE(sv::input_options().allow_special);
}

// Opted in, pipes carry every format: .npy, NRRD with attached gzip data, .nii.gz and raw.
TEST_F(InputGuardTest, OptedInFifosLoad) {
  sv::ScopedInputOptions allow({true});
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.125f};
  std::string f32(16, '\0');
  std::memcpy(&f32[0], values.data(), 16);  // little endian on the machines we build for

  struct Case {
    std::string name, bytes;
    std::function<sv::Loaded(const std::string&)> load;
  };
  const std::vector<Case> cases = {
      {"npy", npy_f32(values), [](const std::string& p) { return sv::load_npy(p, false); }},
      {"nrrd gzip",
       "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nendian: little\nencoding: gzip\n\n" +
           gzip(f32),
       [](const std::string& p) { return sv::load_nrrd(p); }},
      {"nrrd ascii",
       "NRRD0004\ntype: float\ndimension: 1\nsizes: 4\nencoding: ascii\n\n1.5 -2 3.25 0.125\n",
       [](const std::string& p) { return sv::load_nrrd(p); }},
      {"nii.gz", gzip(nifti_header(4, 1, 1) + f32),
       [](const std::string& p) { return sv::load_nifti(p); }},
      {"raw", f32,
       [](const std::string& p) { return sv::load_raw(p, sv::parse_raw_spec("4:f32"), false); }},
  };
  int k = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string p = path("fifo" + std::to_string(k++));
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    std::thread writer = feed_fifo(p, c.bytes);
    try {
      const sv::Loaded l = c.load(p);
      ASSERT_EQ(l.array.size(), 4u);
      for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(l.array[i], static_cast<double>(values[i]));
    } catch (const sv::Error& e) {
      ADD_FAILURE() << e.what();
    }
    writer.join();
  }
  // A trailing byte through a pipe is trailing data, as in a file.
  const std::string p = path("fifo-trailing");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  std::thread writer = feed_fifo(p, npy_f32(values) + "x");
  const std::string msg = error_of([&] { sv::load_npy(p, false); });
  writer.join();
  EXPECT_NE(msg.find("trailing data: expected 16 data bytes, found more"), std::string::npos)
      << msg;
}

// -------------------------------------------------------------------------- bounded inflation

// The growth of the peak RSS of a forked child while it loads `p` (KiB), and the message.
ChildResult load_in_child_measuring_rss(const std::function<void()>& load) {
  return run_in_child(
      [&] {
        rusage before{};
        ::getrusage(RUSAGE_SELF, &before);
        const std::string msg = message_of(load);
        rusage after{};
        ::getrusage(RUSAGE_SELF, &after);
        return std::to_string(after.ru_maxrss - before.ru_maxrss) + " " + msg;
      },
      60);
}

// Item 7: 1.7 MB of gzip data whose header claims 1.5 GiB (within deflate's 1032:1, so the
// ratio check lets it through) must fail as truncated having grown its buffer with what
// inflated: the child's peak RSS grows by less than 200 MiB (the old code allocated and zeroed
// the 1.5 GiB first).
TEST_F(InputGuardTest, CompressedDataThatClaimsGigabytesAllocatesWhatInflates) {
  const std::string data = gzip(noise(1700000));
  ASSERT_GT(data.size(), (std::size_t{3} << 29) / 1032);
  const std::string nii = path("big.nii.gz");
  write_bytes(nii, gzip(nifti_header(1024, 1024, 384) + noise(1700000)));
  const std::string nrrd = path("big.nrrd");
  write_bytes(nrrd,
              "NRRD0004\ntype: float\ndimension: 3\nsizes: 1024 1024 384\nendian: little\n"
              "encoding: gzip\n\n" +
                  data);
  struct Case {
    std::string name, path;
    std::function<void()> load;
  };
  const std::vector<Case> cases = {
      {"nii.gz", nii, [&] { sv::load_nifti(nii); }},
      {"gzip nrrd", nrrd, [&] { sv::load_nrrd(nrrd); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ChildResult r = load_in_child_measuring_rss(c.load);
    expect_exited(r);
    const std::size_t space = r.text.find(' ');
    ASSERT_NE(space, std::string::npos) << r.text;
    const long grown_kib = std::stol(r.text.substr(0, space));
    const std::string msg = r.text.substr(space + 1);
    EXPECT_EQ(msg.rfind(c.path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    EXPECT_LT(grown_kib, 200 * 1024) << "peak RSS grew by " << grown_kib << " KiB: " << msg;
  }
}

// ---------------------------------------------------------------------------------- messages

TEST(Printable, EscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(sv::printable("float"), "float");
  EXPECT_EQ(sv::printable("\x1b[31mfloat"), "\\x1B[31mfloat");
  EXPECT_EQ(sv::printable("a\nb\tc\vd\re\x7f"), "a\\x0Ab\\x09c\\x0Bd\\x0De\\x7F");
  EXPECT_EQ(sv::printable(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(sv::printable("back\\slash"), "back\\\\slash");
  // Well-formed UTF-8 passes; broken UTF-8 is escaped byte by byte.
  EXPECT_EQ(sv::printable("\xc2\xb5m \xce\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82"),
            "\xc2\xb5m \xce\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82");
  EXPECT_EQ(sv::printable("\xff\xfe"), "\\xFF\\xFE");
  EXPECT_EQ(sv::printable("\xc0\x80"), "\\xC0\\x80");                    // overlong NUL
  EXPECT_EQ(sv::printable("\xed\xa0\x80"), "\\xED\\xA0\\x80");           // a surrogate
  EXPECT_EQ(sv::printable("\xf4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // beyond U+10FFFF
  EXPECT_EQ(sv::printable("x\xe6\x97"), "x\\xE6\\x97");                  // cut off
  EXPECT_EQ(sv::printable("\x80y"), "\\x80y");                           // stray continuation
  // C1 controls (CSI U+009B), line separators and bidi overrides are escaped too.
  EXPECT_EQ(sv::printable("\xc2\x9b"
                          "2J"),
            "\\xC2\\x9B2J");
  EXPECT_EQ(sv::printable("a\xe2\x80\xa8"
                          "b"),
            "a\\xE2\\x80\\xA8b");
  EXPECT_EQ(sv::printable("\xe2\x80\xae"
                          "gpj.exe"),
            "\\xE2\\x80\\xAEgpj.exe");
}

TEST(Printable, ShortensAtABoundaryWithinTheLimit) {
  const std::string long_text(500, 'a');
  const std::string p = sv::printable(long_text, 40);
  EXPECT_EQ(p, std::string(37, 'a') + "...");
  // An escape or a UTF-8 character is never cut in half.
  std::string esc;
  for (int i = 0; i < 50; ++i) esc += '\x1b';
  const std::string pe = sv::printable(esc, 40);
  EXPECT_LE(pe.size(), 40u);
  EXPECT_EQ(pe, std::string("\\x1B\\x1B\\x1B\\x1B\\x1B\\x1B\\x1B\\x1B\\x1B") + "...");
  std::string utf;
  for (int i = 0; i < 50; ++i) utf += "\xe6\x97\xa5";
  const std::string pu = sv::printable(utf, 40);
  EXPECT_LE(pu.size(), 40u);
  EXPECT_EQ((pu.size() - 3) % 3, 0u);
  EXPECT_EQ(pu.substr(pu.size() - 3), "...");
  // Exactly at the limit: nothing cut.
  EXPECT_EQ(sv::printable(std::string(40, 'b'), 40), std::string(40, 'b'));
}

TEST(Printable, NumbersAreNotEchoedInFull) {
  const std::string digits(300, '7');
  const std::string s = sv::short_number(digits);
  EXPECT_LT(s.size(), 50u);
  EXPECT_NE(s.find("(300 characters)"), std::string::npos) << s;
  EXPECT_EQ(s.rfind("777777777777...", 0), 0u) << s;
  EXPECT_EQ(sv::short_number("1e308"), "1e308");
  EXPECT_EQ(sv::format_number(1e308), "1e+308");
  EXPECT_EQ(sv::format_number(0.5), "0.5");
  EXPECT_EQ(sv::format_number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(sv::format_number(std::numeric_limits<double>::quiet_NaN()), "nan");
}

// Item 9: escape sequences, bells and vertical tabs in a NRRD type, key, data file or a .npy
// descr come out escaped, on one line; 300-digit sizes are not echoed.
TEST_F(InputGuardTest, LoaderMessagesArePrintableAndShort) {
  struct Case {
    std::string name, file, bytes, needle;
    std::function<void(const std::string&)> load;
  };
  const auto nrrd = [](const std::string& p) { sv::load_nrrd(p); };
  const auto npy = [](const std::string& p) { sv::load_npy(p, false); };
  const std::string npy_bad = npy_f32({1.0f}, "\x0b\x1b]0;pwn\x07");
  const std::vector<Case> cases = {
      {"nrrd type", "t.nrrd",
       "NRRD0004\ntype: \x1b[31mfloat\ndimension: 1\nsizes: 1\nencoding: raw\n\n1234",
       "unsupported NRRD type '\\x1B[31mfloat'", nrrd},
      {"nrrd vertical tab", "v.nrrd",
       "NRRD0004\ntype: float\ndimension: 1\x0b"
       "2\nsizes: 1\nencoding: raw\n\n1234",
       "bad 'dimension: 1\\x0B2'", nrrd},
      {"nrrd key", "k.nrrd", "NRRD0004\n\x1b]0;pwn\x07 line\n\n", "\\x1B]0;pwn\\x07 line", nrrd},
      {"nrrd endian", "e.nrrd",
       "NRRD0004\ntype: float\ndimension: 1\nsizes: 1\nendian: \x1b[2J\nencoding: raw\n\n1234",
       "bad 'endian: \\x1B[2j'", nrrd},
      {"nrrd data file", "d.nhdr",
       "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 1\nencoding: raw\ndata file: \x1b[2Jx.raw\n",
       "\\x1B[2Jx.raw: cannot open", nrrd},
      {"nrrd 300-digit size", "s.nrrd",
       "NRRD0004\ntype: uchar\ndimension: 1\nsizes: " + std::string(300, '9') +
           "\nencoding: raw\n\n1",
       "(300 characters)", nrrd},
      {"nrrd long line", "l.nrrd", "NRRD0004\n" + std::string(5000, 'x') + "\n\n", "...", nrrd},
      {"npy descr", "d.npy", npy_bad, "unsupported dtype '\\x0B\\x1B]0;pwn\\x07'", npy},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string p = path(c.file);
    write_bytes(p, c.bytes);
    const std::string msg = error_of([&] { c.load(p); });
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    EXPECT_TRUE(is_clean_line(msg)) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << msg;
    EXPECT_LT(msg.size(), p.size() + 300) << msg;
  }
  // A raw spec is quoted the same way.
  try {
    sv::parse_raw_spec("4x4:\x1b[31mu8");
    ADD_FAILURE() << "no error";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(is_clean_line(msg)) << msg;
    EXPECT_NE(msg.find("raw volume spec '4x4:\\x1B[31mu8'"), std::string::npos) << msg;
  }
  try {
    sv::parse_raw_spec(std::string(300, '9') + ":u8");
    ADD_FAILURE() << "no error";
  } catch (const sv::Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
  }
}

// Item 10: every error of a .nhdr names the header; errors in its data also name the data file.
TEST_F(InputGuardTest, DetachedHeaderErrorsNameTheHeader) {
  const std::string h = path("h.nhdr");
  const std::string data = path("h.raw");
  struct Case {
    std::string name, header, data, needle;
  };
  const std::string head = "NRRD0004\ntype: uchar\ndimension: 1\n";
  const std::vector<Case> cases = {
      {"bad sizes", head + "sizes: 2 x\nencoding: raw\ndata file: h.raw\n", "ab",
       "'sizes' lists 2 values"},
      {"bad size",
       "NRRD0004\ntype: uchar\ndimension: 1\nsizes: x\nencoding: raw\ndata file: "
       "h.raw\n",
       "ab", "bad size 'x' in 'sizes: x'"},
      {"raw truncated", head + "sizes: 3\nencoding: raw\ndata file: h.raw\n", "ab",
       "detached data file: " + data + ": truncated: expected 3 data bytes, found 2"},
      {"raw trailing", head + "sizes: 1\nencoding: raw\ndata file: h.raw\n", "ab",
       "detached data file: " + data + ": trailing data"},
      {"gzip truncated", head + "sizes: 4\nencoding: gzip\ndata file: h.raw\n", gzip("ab"),
       "detached data file: " + data + ": truncated"},
      {"gzip corrupt", head + "sizes: 4\nencoding: gzip\ndata file: h.raw\n", "not gzip",
       "detached data file: " + data + ": corrupt gzip data"},
      {"ascii", head + "sizes: 3\nencoding: ascii\ndata file: h.raw\n", "1 2  ",
       "detached data file: " + data + ": truncated: expected 3 ascii values, found 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    write_bytes(h, c.header);
    write_bytes(data, c.data);
    const std::string msg = error_of([&] { sv::load_nrrd(h); });
    EXPECT_EQ(msg.rfind(h + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << msg;
  }
}

}  // namespace
