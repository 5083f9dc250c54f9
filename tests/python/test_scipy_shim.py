#!/usr/bin/env python3
"""scipy's own interpolation tests against the splineview package (issue 14 item 4).

Runs Debian's copy of scipy/ndimage/tests/test_interpolation.py under pytest with the test
module's `ndimage` replaced by a shim: the functions splineview provides are splineview's;
every other ndimage function the file calls (geometric_transform, which takes a Python
callback per output point, and whatever the package does not have yet) raises
NotImplementedError, so a test can only pass on splineview's own results, never on scipy's.

Each test ends in one of:
  passed        splineview's results pass scipy's own assertions;
  not provided  the test calls an ndimage function splineview does not provide (named);
  explained     it fails for a documented reason (EXPLAINED below: scipy's own inexactness,
                a feature refused on purpose); the reason is printed;
  unexplained   anything else: the ctest fails.
An EXPLAINED entry whose test passes is reported too (the table must stay true), and fails the
ctest. With a file name argument, writes the summary as Markdown (for docs/ACCURACY.md).

usage: test_scipy_shim.py [SUMMARY.md]      (exit 77 = skipped: no pytest or no scipy tests)
"""
import collections
import os
import re
import sys
import types

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed (Debian: python3-pytest)")
    sys.exit(77)
try:
    import scipy
    import scipy.ndimage.tests as scipy_tests
except ImportError:
    print("SKIP: scipy's tests are not installed (Debian: python3-scipy)")
    sys.exit(77)

import splineview

TEST_FILE = os.path.join(os.path.dirname(scipy_tests.__file__), "test_interpolation.py")
NDIMAGE_FUNCTIONS = ["affine_transform", "geometric_transform", "map_coordinates", "rotate",
                     "shift", "spline_filter", "spline_filter1d", "zoom"]

# Tests that fail against splineview for a documented reason: (regular expression on the test
# id, reason). Keep each reason short and true; the ctest fails if a listed test passes.
EXPLAINED = [
]


class Shim(types.ModuleType):
    """The `ndimage` the test file sees."""

    def __init__(self):
        super().__init__("splineview_ndimage_shim")
        self.called = set()
        self.missing_called = set()
        for name in NDIMAGE_FUNCTIONS:
            if hasattr(splineview, name):
                setattr(self, name, self._ours(name, getattr(splineview, name)))
            else:
                setattr(self, name, self._missing(name))

    def _ours(self, name, fn):
        def call(*args, **kwargs):
            self.called.add(name)
            return fn(*args, **kwargs)
        return call

    def _missing(self, name):
        def call(*args, **kwargs):
            self.missing_called.add(name)
            raise NotImplementedError("splineview does not provide ndimage.%s" % name)
        return call


class Plugin:
    def __init__(self, shim):
        self.shim = shim
        self.outcomes = collections.OrderedDict()  # nodeid -> (outcome, missing, message)

    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            module = getattr(item, "module", None)
            if module is not None and getattr(module, "ndimage", None) is not self.shim:
                module.ndimage = self.shim

    def pytest_runtest_setup(self, item):
        self.shim.missing_called.clear()

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            message = ""
            if report.outcome == "failed":
                text = str(report.longrepr)
                lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
                message = (lines[0][2:].strip() if lines else text.splitlines()[-1])[:160]
            self.outcomes[report.nodeid] = (report.outcome, sorted(self.shim.missing_called),
                                            message)


def main():
    summary_path = sys.argv[1] if len(sys.argv) > 1 else None
    shim = Shim()
    plugin = Plugin(shim)
    provided = [n for n in NDIMAGE_FUNCTIONS if hasattr(splineview, n)]
    print("scipy %s test file %s" % (scipy.__version__, TEST_FILE))
    print("splineview provides: %s" % ", ".join(provided))
    rc = pytest.main([TEST_FILE, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                      "--disable-warnings", "--no-header", "-rN"], plugins=[plugin])
    if rc not in (0, 1):
        print("FAIL: pytest could not run the file (exit %d)" % rc)
        return 1

    counts = collections.Counter()
    not_provided = collections.Counter()
    explained_hits = collections.defaultdict(list)
    unexplained = []
    for nodeid, (outcome, missing, message) in plugin.outcomes.items():
        short = nodeid.split("::", 1)[-1]
        reason = next((r for pat, r in EXPLAINED if re.search(pat, short)), None)
        if outcome == "passed":
            counts["passed"] += 1
            if reason:
                unexplained.append("%s passes but is listed as explained (%s)" % (short, reason))
        elif outcome == "skipped":
            counts["skipped by scipy"] += 1
        elif missing:
            counts["not provided"] += 1
            for name in missing:
                not_provided[name] += 1
        elif reason:
            counts["explained"] += 1
            explained_hits[reason].append(short)
        else:
            counts["unexplained"] += 1
            unexplained.append("%s: %s" % (short, message))
    total = sum(counts.values())
    print("\n%d tests: %s" % (total, ", ".join("%s %d" % kv for kv in counts.items())))
    for name, n in not_provided.items():
        print("  not provided: ndimage.%s (%d tests)" % (name, n))
    for reason, ids in explained_hits.items():
        print("  explained (%d): %s" % (len(ids), reason))
    for line in unexplained:
        print("FAIL: " + line)

    if summary_path:
        with open(summary_path, "w") as f:
            f.write("scipy %s `ndimage/tests/test_interpolation.py` against splineview %s\n\n"
                    % (scipy.__version__, splineview.__version__))
            f.write("| outcome | tests |\n|---|---|\n")
            for k, v in counts.items():
                f.write("| %s | %d |\n" % (k, v))
            f.write("\n| not provided | tests |\n|---|---|\n")
            for name, n in not_provided.items():
                f.write("| `ndimage.%s` | %d |\n" % (name, n))
            f.write("\n| explained failure | tests |\n|---|---|\n")
            for reason, ids in explained_hits.items():
                f.write("| %s | %d |\n" % (reason, len(ids)))
    if unexplained:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
