"""Helpers shared by the splinetool tests: run the tool, make temporary files, check failures.

Imported by test_contract.py, test_scipy_oracle.py and test_gl_backend.py; needs numpy (Debian's python3-numpy).
"""
import os
import subprocess
import tempfile

import numpy as np


def signature(args):
    """What a run's code path depends on beyond numbers: the subcommand and the option names
    (the arguments that start with '-' and are not numbers), in order."""
    words = [str(a) for a in args]
    opts = []
    for w in words[1:]:
        if w.startswith("-"):
            try:
                float(w)
            except ValueError:
                opts.append(w.split("=")[0])
    return (words[0] if words else "",) + tuple(opts)


class Tool:
    """The built splinetool binary, run as a subprocess.

    Leak checks: in the sanitizer build LeakSanitizer scans the process at every exit, about a
    third of a short run's page faults (2,300 of 7,400 for splinetool --help), and the oracle
    tests run the same commands hundreds of times with other numbers. So the first
    `leak_first` runs of every signature (subcommand and option names) and then one run in
    `leak_every` of it are leak-checked, the others run with detect_leaks=0. An ASAN_OPTIONS
    that already names detect_leaks (the caller's environment or `env`) is left alone."""

    def __init__(self, path, leak_first=2, leak_every=10):
        self.path = path
        self.leak_first = leak_first
        self.leak_every = leak_every
        self.runs = {}  # signature -> runs so far

    def leak_options(self, args, env):
        sig = signature(args)
        n = self.runs.get(sig, 0)
        self.runs[sig] = n + 1
        if n < self.leak_first or (n - self.leak_first) % self.leak_every == self.leak_every - 1:
            return None
        asan = (env or {}).get("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", ""))
        if "detect_leaks" in asan:
            return None
        return {"ASAN_OPTIONS": (asan + ":" if asan else "") + "detect_leaks=0"}

    def run(self, *args, timeout=300, env=None):
        """Runs splinetool with `args` (converted to str); returns the CompletedProcess.
        `env`: variables to set on top of this process's environment."""
        full_env = None
        leak = self.leak_options(args, env)
        if env or leak:
            full_env = dict(os.environ)
            full_env.update(env or {})
            full_env.update(leak or {})
        return subprocess.run([self.path] + [str(a) for a in args], capture_output=True,
                              text=True, timeout=timeout, env=full_env)

    def ok(self, *args):
        """Runs splinetool and raises AssertionError (with its stderr) unless it exits 0."""
        r = self.run(*args)
        if r.returncode != 0:
            raise AssertionError("splinetool %s failed (%d): %s" %
                                 (" ".join(str(a) for a in args), r.returncode, r.stderr))
        return r


class Workdir:
    """A temporary directory with helpers to write .npy inputs and read outputs."""

    def __init__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="splinetool-test-")
        self.dir = self._tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        p = self.path(name)
        np.save(p, array)
        return p

    def write_bytes(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def listing(self):
        return sorted(os.listdir(self.dir))

    def close(self):
        self._tmp.cleanup()


def load(path):
    return np.load(path, allow_pickle=False)
