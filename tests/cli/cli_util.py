"""Helpers shared by the splinetool tests: run the tool, make temporary files, check failures.

Imported by test_contract.py, test_scipy_oracle.py and test_gl_backend.py; needs numpy (Debian's python3-numpy).
Tool.batch runs many commands through one `splinetool batch` process (a sanitized splinetool
costs about 0.15 s and 5,000-7,000 page faults just to start and exit).
"""
import json
import os
import re
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


def batch_quote(word):
    """`word` as one word of a batch line (app/splinetool/README.md, "Batches")."""
    word = str(word)
    if word and re.fullmatch(r"[A-Za-z0-9_./,:=+@%^-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


class LineResult:
    """One command of a batch, shaped like subprocess.CompletedProcess: args, returncode,
    stdout and stderr (text) as a separate run would give them; the error line's
    "batch FILE line N: " is taken out again, so stderr reads "splinetool: <message>"."""

    def __init__(self, args, returncode, stdout, stderr, line):
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr
        self.line = line


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

    def batch(self, commands, timeout=None, env=None, cwd=None):
        """Runs every command (a sequence of arguments, converted to str) in one
        `splinetool batch FILE --keep-going --log LOG` process, its stdout and stderr in files;
        returns one LineResult a command, its output cut out at the offsets of the log.

        Raises AssertionError when the batch process itself went wrong: an exit status other
        than 0 (every line passed) or 1 (some failed), a log that does not hold one record a
        command, or output beyond the last command other than the --keep-going summary line.
        Leak checks happen once, at the batch process's exit (covering every line), unless
        ASAN_OPTIONS (this process's, or `env`) turns them off."""
        commands = [[str(a) for a in c] for c in commands]
        if not commands:
            return []
        with tempfile.TemporaryDirectory(prefix="splinetool-batch-") as tmp:
            cmd_path = os.path.join(tmp, "commands.txt")
            log_path = os.path.join(tmp, "log.jsonl")
            with open(cmd_path, "w") as f:
                for c in commands:
                    f.write(" ".join(batch_quote(a) for a in c) + "\n")
            full_env = None
            if env:
                full_env = dict(os.environ)
                full_env.update(env)
            with open(os.path.join(tmp, "out"), "w+b") as out, \
                    open(os.path.join(tmp, "err"), "w+b") as err:
                p = subprocess.run([self.path, "batch", cmd_path, "--keep-going", "--log",
                                    log_path], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   timeout=timeout, env=full_env, cwd=cwd)
                out.seek(0)
                err.seek(0)
                stdout, stderr = out.read(), err.read()
            records = []
            if os.path.exists(log_path):
                with open(log_path) as f:
                    records = [json.loads(line) for line in f]
            tail = stderr[records[-1]["stderr_end"]:] if records else stderr
            failed = [r for r in records if r["status"] != 0]
            summary = re.fullmatch(rb"splinetool: batch \S+: %d of %d commands failed "
                                   rb"\(lines? [0-9, .]+\)\n" % (len(failed), len(commands)),
                                   tail)
            if p.returncode not in (0, 1) or len(records) != len(commands) or \
                    (p.returncode == 1) != bool(failed) or (failed and not summary) or \
                    (not failed and tail):
                raise AssertionError(
                    "splinetool batch of %d commands: exit %d, %d log records; stderr ends: %s"
                    % (len(commands), p.returncode, len(records),
                       stderr[-3000:].decode("utf-8", "replace")))
            results = []
            o = e = 0
            for c, r in zip(commands, records):
                assert r["line"] == len(results) + 1, r
                so = stdout[o:r["stdout_end"]].decode("utf-8", "replace")
                se = stderr[e:r["stderr_end"]].decode("utf-8", "replace")
                o, e = r["stdout_end"], r["stderr_end"]
                prefix = "splinetool: batch %s line %d: " % (cmd_path, r["line"])
                se = se.replace(prefix, "splinetool: ")
                results.append(LineResult(c, r["status"], so, se, r["line"]))
            return results

    def ok_all(self, commands, **kwargs):
        """Tool.batch, raising AssertionError (with the command and its stderr) unless every
        command exits 0, as ok() does for one; returns the LineResults."""
        results = self.batch(commands, **kwargs)
        bad = [r for r in results if r.returncode != 0]
        if bad:
            raise AssertionError("\n".join("splinetool %s failed (%d): %s" % (
                " ".join(r.args), r.returncode, r.stderr) for r in bad[:5]))
        return results


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
