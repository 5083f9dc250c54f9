// TempFileGuard: a fixed table of registered temporary paths that an async-signal-safe handler
// can walk (no allocation, no locks: each slot is claimed and published with atomics).
#include "splineview/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

namespace sv {
namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;

// state: 0 free, 1 being written or cleared, 2 active (the handler unlinks it).
struct Slot {
  std::atomic<int> state{0};
  char path[kPathMax];
};

Slot g_slots[kSlots];
std::atomic<bool> g_installed{false};
std::once_flag g_install_once;

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU};

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  // The signal is blocked while its handler runs; it is delivered again, with the default action,
  // as soon as it is unblocked here.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::raise(sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void install_handlers() {
  for (int sig : kSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    const bool is_default = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
    if (!is_default) continue;  // the program has its own handler (or ignores the signal)
    struct sigaction sa {};
    sa.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (int other : kSignals) sigaddset(&sa.sa_mask, other);
    sa.sa_flags = 0;
    ::sigaction(sig, &sa, nullptr);
  }
  g_installed.store(true);
}

int claim_slot(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void free_slot(int i) {
  if (i < 0) return;
  g_slots[i].state.store(1, std::memory_order_release);
  g_slots[i].path[0] = '\0';
  g_slots[i].state.store(0, std::memory_order_release);
}

}  // namespace

TempFileGuard::TempFileGuard(const std::string& path) : path_(path) {
  if (path_.empty()) return;  // nothing to guard (a slot claimed here would never be freed)
  std::call_once(g_install_once, install_handlers);
  slot_ = claim_slot(path);
}

TempFileGuard::~TempFileGuard() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  free_slot(slot_);
}

TempFileGuard::TempFileGuard(TempFileGuard&& other) noexcept
    : path_(std::move(other.path_)), slot_(other.slot_) {
  other.path_.clear();
  other.slot_ = -1;
}

TempFileGuard& TempFileGuard::operator=(TempFileGuard&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) {
      ::unlink(path_.c_str());
      free_slot(slot_);
    }
    path_ = std::move(other.path_);
    slot_ = other.slot_;
    other.path_.clear();
    other.slot_ = -1;
  }
  return *this;
}

void TempFileGuard::release() {
  free_slot(slot_);
  slot_ = -1;
  path_.clear();
}

bool temp_file_handlers_installed() {
  return g_installed.load();
}

}  // namespace sv
