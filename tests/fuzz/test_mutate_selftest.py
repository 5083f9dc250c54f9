#!/usr/bin/env python3
"""Checks that mutate.py's criteria can fail (ctest fuzz_harness_selftest): it runs the fuzzer
against a stand-in for splinetool (this file, called with --fake) that loads the unmutated seeds
correctly and misbehaves on every mutated case in one way per mode, and asserts that exactly the
expected criterion is reported, and that a well-behaved stand-in passes.

    /usr/bin/python3 tests/fuzz/test_mutate_selftest.py
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")


def fake_batch(argv):
    """`batch FILE --keep-going --log LOG` as splinetool's: every line of FILE run as a command
    (here a process of its own, writing to the same stdout and stderr), one log record each with
    the stderr offset and the children's peak RSS; a line that ends in a signal or an exit
    status other than 0, 1 or 2 ends the batch so (as a sanitizer abort ends splinetool's)."""
    import resource
    import shlex
    path, log = argv[1], argv[argv.index("--log") + 1]
    failed = 0
    with open(path) as f, open(log, "w") as out:
        for n, line in enumerate(f, 1):
            t0 = time.monotonic()
            status = subprocess.run([sys.executable, os.path.abspath(__file__), "--fake"] +
                                    shlex.split(line)).returncode
            if status < 0:
                os.kill(os.getpid(), -status)
            if status not in (0, 1, 2):
                return status
            failed += status != 0
            out.write(json.dumps({
                "line": n, "status": status, "seconds": time.monotonic() - t0,
                "stdout_end": None, "stderr_end": os.lseek(2, 0, os.SEEK_CUR),
                "start_rss_kib": 1, "peak_rss_kib": 1, "children_peak_rss_kib":
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}) + "\n")
            out.flush()
    return 1 if failed else 0


def fake(argv):
    """The stand-in: `prefilter IN OUT ...` (IN may be "-", standard input), `info IN
    --check-mapped ...` (no OUT), `batch FILE ...`, or --help."""
    if argv[:1] == ["--help"]:
        return 0
    if argv[:1] == ["batch"]:
        return fake_batch(argv)
    mode = os.environ["SV_FAKE_MODE"]
    if argv[:1] == ["info"]:
        status = fake_info(argv[1], mode)
        return misbehave(argv[1], None, mode) if status is None else status
    _, inp, out = argv[:3]
    if inp == "-":  # the harness pipes half of the .npy cases, as splinetool's "-"
        data = sys.stdin.buffer.read()
        inp = "standard input"
    else:
        with open(inp, "rb") as f:
            data = f.read()
    seeds = {open(os.path.join(SEEDS, n), "rb").read() for n in os.listdir(SEEDS)}
    if data in seeds:  # a valid file: a .npy OUT through a temporary, exit 0
        with open(out + ".tmp-1", "wb") as f:
            f.write(b"\x93NUMPY fake output")
        os.replace(out + ".tmp-1", out)
        return 0
    return misbehave(inp, out, mode)


def misbehave(inp, out, mode):
    """A mutated file: fails as `mode` says (out is None for info, which has no OUT)."""
    if mode == "good":
        sys.stderr.write("splinetool: %s: not a valid file\n" % inp)
        return 1
    if mode == "accept":  # every mutated file loads
        with open(out, "wb") as f:
            f.write(b"\x93NUMPY fake output")
        return 0
    if mode == "two_lines":
        sys.stderr.write("splinetool: %s: bad\nmore\n" % inp)
        return 1
    if mode == "escape":
        sys.stderr.write("splinetool: %s: bad \x1b[31mred\n" % inp)
        return 1
    if mode == "unnamed":
        sys.stderr.write("splinetool: something went wrong\n")
        return 1
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "exit3":
        sys.stderr.write("splinetool: %s: bad\n" % inp)
        return 3
    if mode == "sanitizer":
        sys.stderr.write("==1==ERROR: AddressSanitizer: heap-buffer-overflow\n")
        return 86
    if mode == "hang":
        time.sleep(30)
    if mode == "memory":
        block = bytearray(300 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
    if mode == "damage":  # writes OUT in place, then fails
        with open(out, "wb") as f:
            f.write(b"partial")
    if mode == "temp":
        open(out + ".tmp-99", "wb").close()
    sys.stderr.write("splinetool: %s: bad\n" % inp)
    return 1


def fake_info(inp, mode):
    """`info IN --check-mapped`: valid seeds exit 0; mutated files fail with one line, except
    in the modes that misbehave here too ("mapped": the mapped read disagrees; the others as
    prefilter, where they apply without an OUT)."""
    with open(inp, "rb") as f:
        data = f.read()
    seeds = {open(os.path.join(SEEDS, n), "rb").read() for n in os.listdir(SEEDS)}
    if data in seeds or mode == "accept":
        sys.stdout.write('{"command": "info", "mapped": true}\n')
        return 0
    if mode == "mapped":
        sys.stderr.write("splinetool: %s: the memory-mapped read disagrees with the loader: value "
                         "3 is 1, not 2\n" % inp)
        return 1
    if mode in ("segv", "exit3", "sanitizer", "hang", "memory", "two_lines", "escape",
                "unnamed"):
        return None  # as prefilter
    if mode == "temp":
        open(inp + ".tmp-99", "wb").close()
    sys.stderr.write("splinetool: %s: bad\n" % inp)
    return 1


# mode -> the criterion that must be reported (None: none at all)
EXPECT = {"good": None, "accept": "accepted", "two_lines": "message", "escape": "message",
          "unnamed": "message", "segv": "crash", "exit3": "crash", "sanitizer": "crash",
          "hang": "hang", "memory": "memory", "damage": "damage", "temp": "output",
          "mapped": "mapped"}


def main():
    if sys.argv[1:2] == ["--fake"]:
        return fake(sys.argv[2:])
    tmp = tempfile.mkdtemp(prefix="sv-fuzz-selftest-")
    failed = []
    try:
        tool = os.path.join(tmp, "fake-splinetool")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\nexec %s %s --fake \"$@\"\n" % (sys.executable,
                                                                os.path.abspath(__file__)))
        os.chmod(tool, 0o755)
        # The cases: the first 12 .npy ones (pre-created and fresh OUTs alternate) and two
        # whose only mutation changed the size (for the "accepted" oracle).
        sys.path.insert(0, HERE)
        sys.dont_write_bytecode = True
        import mutate  # noqa: E402 (the fuzzer's own case generator)
        data = {n: open(os.path.join(SEEDS, n), "rb").read() for n, _, _ in mutate.CORPUS}
        npy_cases, corrupt = [], []
        for i in range(2000):
            entry, _, _, _, must_reject = mutate.make_case(1, i, mutate.CORPUS, data)
            if entry[1] == "npy":
                if len(npy_cases) < 12:
                    npy_cases.append(i)
                if must_reject and len(corrupt) < 2:
                    corrupt.append(i)
        npy_cases += corrupt
        for mode, want in EXPECT.items():
            js = os.path.join(tmp, mode + ".json")
            picked = npy_cases[:3] if mode in ("hang", "memory") else npy_cases
            r = subprocess.run([sys.executable, os.path.join(HERE, "mutate.py"), tool,
                                "--formats", "npy", "--timeout", "2"] +
                               ["--case=%d" % i for i in picked] + [
                                "--json", js, "--findings", os.path.join(tmp, mode)],
                               capture_output=True, text=True,
                               env=dict(os.environ, SV_FAKE_MODE=mode,
                                        PYTHONDONTWRITEBYTECODE="1"))
            with open(js) as f:
                report = json.load(f)
            got = sorted({x["criterion"] for x in report["failures"]})
            ok = (r.returncode == 0 and not got) if want is None else \
                (r.returncode == 1 and want in got and
                 all(c == want or (mode == "damage" and c == "output") for c in got))
            print("%-10s exit %d, criteria reported %s (expected %s): %s" %
                  (mode, r.returncode, got or "none", want or "none", "ok" if ok else "FAIL"))
            if not ok:
                failed.append(mode)
                print(r.stdout[-2000:], r.stderr[-2000:])
            if want and want != "accepted":  # the findings folder keeps the case and its log
                kept = os.listdir(os.path.join(tmp, mode))
                if not any(k.endswith(".npy") for k in kept) or \
                        not any(k.endswith(".txt") for k in kept):
                    failed.append(mode + " (findings not kept)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (len(EXPECT) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
