"""Helpers shared by the splinetool tests: run the tool, make temporary files, check failures.

Imported by test_contract.py, test_scipy_oracle.py and test_gl_backend.py; needs numpy (Debian's python3-numpy).
"""
import os
import subprocess
import tempfile

import numpy as np


class Tool:
    """The built splinetool binary, run as a subprocess."""

    def __init__(self, path):
        self.path = path

    def run(self, *args, timeout=300, env=None):
        """Runs splinetool with `args` (converted to str); returns the CompletedProcess.
        `env`: variables to set on top of this process's environment."""
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
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
