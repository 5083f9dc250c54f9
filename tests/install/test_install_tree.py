#!/usr/bin/env python3
"""`cmake --install` of a build tree into a fresh prefix, and the installed programs at work.

1. `cmake --install BUILD --prefix P` (P emptied first) puts bin/splinetool, its modules in
   lib/splineview/ (splinetool-video.so, splinetool-dicom.so; splinetool-gl.so with the viewer), the bundled assets in
   share/splineview/assets/ and, with the viewer, bin/splineview.
2. The installed splinetool prints the same --version as the build tree's, and its prefilter of a
   random .npy is bit for bit the build tree's.
3. It loads its modules from P/lib/splineview (seen through LD_DEBUG=files): upscale-video's
   --codec check runs in the video module (an unknown encoder is named as FFmpeg's verdict, exit
   2), `info` on a DICOM file reads it through the DICOM module (shape as the build tree's), and
   --backend gl samples like --backend cpu (to 1e-5; skipped, with the reason, where no GL
   context can be made).
4. Without its modules (the executable copied alone) or with a damaged one, --backend gl,
   upscale-video and a DICOM input fail with exit 1 and one line naming the module and the
   reason; commands that need no module still work.
6. The Python package is installed in P/lib/python3.X/dist-packages/splineview, imports from
   there (PYTHONPATH set to that folder; Debian's python3 reads /usr/local/lib/python3.X/
   dist-packages by itself) and its map_coordinates equals the build tree's bit for bit.
5. The installed viewer (headless, EGL) renders its default image from P/share/splineview/assets
   (--report's path), and the screenshot is not blank. Skipped, with the reason, without a viewer.

usage: test_install_tree.py CMAKE BUILD_DIR PREFIX
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, env=ENV, timeout=600, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, **kw)


def ok(cmd, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        fail("%s: exit %d\nstdout: %s\nstderr: %s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                      r.stderr[-3000:]))
    return r


def loaded_objects(cmd):
    """Paths of the shared objects the loader maps while running cmd (LD_DEBUG=files)."""
    r = run(cmd, env=dict(ENV, LD_DEBUG="files"))
    paths = set()
    for line in r.stderr.splitlines():
        if "generating link map" in line and "file=" in line:
            paths.add(line.split("file=", 1)[1].split()[0])
    return r, paths


def one_line_error(r, what, module):
    lines = r.stderr.strip().splitlines()
    if r.returncode != 1 or len(lines) != 1:
        fail("%s: expected exit 1 and one stderr line, got %d and %r" % (what, r.returncode,
                                                                        r.stderr))
    if module not in lines[0] or not lines[0].startswith("splinetool: "):
        fail("%s: the error does not name %s: %r" % (what, module, lines[0]))
    return lines[0]


PACKAGE_PROBE = """
import sys, numpy as np, splineview
rng = np.random.default_rng(5)
a = rng.random((17, 13))
c = rng.uniform(-3, 20, (2, 500))
np.save(sys.argv[1], splineview.map_coordinates(a, c, order=3, mode="mirror"))
print(splineview.__file__)
"""


def check_python_package(build, prefix):
    """6. The installed package imports from the prefix (Debian's dist-packages layout) and
    computes what the build tree's package computes, bit for bit."""
    built = os.path.join(build, "python", "splineview")
    if not os.path.isdir(built):
        print("SKIP Python package: this build has none (needs python3-dev and pybind11-dev)")
        return
    found = [os.path.join(root) for root, dirs, files in os.walk(os.path.join(prefix, "lib"))
             if os.path.basename(root) == "splineview" and "__init__.py" in files]
    if len(found) != 1 or "dist-packages" not in found[0]:
        fail("installed Python package: expected one <prefix>/lib/python3*/dist-packages/"
             "splineview, found %r" % found)
    site = os.path.dirname(found[0])
    env = dict(ENV, PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    core = [f for f in os.listdir(found[0]) if f.startswith("_core")]
    if not core:
        fail("installed Python package: no _core module in %s" % found[0])
    # A sanitized build's module needs the sanitizer runtimes loaded first (ldd names them).
    deps = run(["ldd", os.path.join(found[0], core[0])]).stdout
    preload = [line.split("=>")[1].split()[0] for line in deps.splitlines()
               if ("libasan" in line or "libubsan" in line) and "=>" in line]
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    outs = []
    for where in (site, os.path.dirname(built)):
        out = tempfile.mktemp(suffix=".npy")
        r = run([sys.executable, "-c", PACKAGE_PROBE, out], env=dict(env, PYTHONPATH=where))
        if r.returncode != 0:
            fail("import splineview from %s: exit %d: %s" % (where, r.returncode, r.stderr[-2000:]))
        imported = r.stdout.strip().splitlines()[-1]
        if not imported.startswith(where):
            fail("splineview imported from %s, expected under %s" % (imported, where))
        outs.append(np.load(out))
        os.remove(out)
    if not np.array_equal(outs[0], outs[1]):
        fail("the installed package's map_coordinates differs from the build tree's")
    print("Python package installed in %s: imports from there, map_coordinates as the build "
          "tree's" % site)


def main():
    cmake, build, prefix = sys.argv[1:4]
    build, prefix = os.path.abspath(build), os.path.abspath(prefix)
    shutil.rmtree(prefix, ignore_errors=True)
    os.makedirs(prefix)

    # 1. the install
    ok([cmake, "--install", build, "--prefix", prefix])
    tool = os.path.join(prefix, "bin", "splinetool")
    viewer = os.path.join(prefix, "bin", "splineview")
    moddir = os.path.join(prefix, "lib", "splineview")
    assets = os.path.join(prefix, "share", "splineview", "assets")
    build_tool = os.path.join(build, "app", "splinetool", "splinetool")
    has_gl = os.path.exists(os.path.join(build, "app", "splinetool", "splinetool-gl.so"))
    has_viewer = os.path.exists(os.path.join(build, "app", "viewer", "splineview"))
    expected = [tool, os.path.join(moddir, "splinetool-video.so"),
                os.path.join(moddir, "splinetool-dicom.so")]
    expected += [os.path.join(assets, n) for n in sorted(os.listdir(
        os.path.join(os.path.dirname(__file__), "..", "..", "assets")))]
    if has_gl:
        expected.append(os.path.join(moddir, "splinetool-gl.so"))
    if has_viewer:
        expected.append(viewer)
    missing = [p for p in expected if not os.path.isfile(p)]
    if missing:
        fail("not installed: %s" % missing)
    print("installed: %d files checked under %s" % (len(expected), prefix))

    # 2. --version and a prefilter, against the build tree
    v_inst, v_build = ok([tool, "--version"]).stdout, ok([build_tool, "--version"]).stdout
    if v_inst != v_build:
        fail("--version differs:\ninstalled: %s\nbuild tree: %s" % (v_inst, v_build))
    work = os.path.join(prefix, "work")
    os.makedirs(work)
    rng = np.random.default_rng(14)
    src = os.path.join(work, "in.npy")
    np.save(src, rng.standard_normal((23, 17)))
    a, b = os.path.join(work, "a.npy"), os.path.join(work, "b.npy")
    r, objects = loaded_objects([tool, "prefilter", src, a, "--degree", "5"])
    if r.returncode != 0:
        fail("installed prefilter: %s" % r.stderr)
    ok([build_tool, "prefilter", src, b, "--degree", "5"])
    if not np.array_equal(np.load(a), np.load(b)):
        fail("installed and build-tree prefilter differ")
    modules_loaded = [p for p in objects if "splinetool-" in p]
    if modules_loaded:
        fail("prefilter loaded modules it does not need: %s" % modules_loaded)
    print("installed splinetool: --version and prefilter as the build tree's, no module loaded")

    # 3. the modules, loaded from the prefix
    video_mod = os.path.join(moddir, "splinetool-video.so")
    clip = os.path.join(assets, "coffee_pan.mp4")
    r, objects = loaded_objects([tool, "upscale-video", clip, os.path.join(work, "o.mkv"),
                                 "--scale", "2", "--codec", "no-such-encoder"])
    if video_mod not in objects:
        fail("upscale-video did not load %s (loaded: %s)" % (
            video_mod, sorted(p for p in objects if "splinetool" in p)))
    if r.returncode != 2 or "no-such-encoder" not in r.stderr:
        fail("--codec no-such-encoder: exit %d, %r" % (r.returncode, r.stderr))
    said = [l for l in r.stderr.splitlines() if l.startswith("splinetool: ")]
    print("video module loaded from the prefix: %s" % said)
    dicom_mod = os.path.join(moddir, "splinetool-dicom.so")
    seed = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                         "fuzz", "seeds", "ct_i16.dcm"))
    r, objects = loaded_objects([tool, "info", seed, "--json"])
    if dicom_mod not in objects or r.returncode != 0:
        fail("info on a DICOM file: exit %d, %s loaded: %s" % (
            r.returncode, dicom_mod, dicom_mod in objects))
    shape = json.loads(r.stdout)["shape"]
    info_build = json.loads(ok([build_tool, "info", seed, "--json"]).stdout)
    if shape != info_build["shape"]:
        fail("DICOM shape %s, build tree %s" % (shape, info_build["shape"]))
    print("DICOM module loaded from the prefix: %s shape %s" % (os.path.basename(seed), shape))
    if has_gl:
        gl_mod = os.path.join(moddir, "splinetool-gl.so")
        coords = os.path.join(work, "coords.npy")
        np.save(coords, rng.uniform(-2, 20, (50, 2)))
        g, c = os.path.join(work, "g.npy"), os.path.join(work, "c.npy")
        r, objects = loaded_objects([tool, "sample", src, coords, g, "--backend", "gl",
                                     "--fetch", "precise"])
        if gl_mod not in objects:
            fail("--backend gl did not load %s: %s" % (gl_mod, r.stderr))
        if r.returncode != 0:
            print("SKIP --backend gl result: no GL context here: " + r.stderr.strip())
        else:
            ok([tool, "sample", src, coords, c])
            err = np.max(np.abs(np.load(g) - np.load(c)))
            if not err <= 1e-5 * np.ptp(np.load(src)):
                fail("--backend gl vs cpu: max abs %g" % err)
            print("GL module loaded from the prefix; gl vs cpu max abs %.3g" % err)

    # 4. a missing and a damaged module
    # (outside the prefix, in a folder whose ../lib/splineview does not exist)
    lone = os.path.join(tempfile.mkdtemp(prefix="splinetool-lone-"), "bin")
    os.makedirs(lone)
    if os.path.exists(os.path.join(lone, "..", "lib", "splineview")):
        fail("cannot test a missing module: %s/../lib/splineview exists" % lone)
    shutil.copy2(tool, lone)
    lone_tool = os.path.join(lone, "splinetool")
    r = run([lone_tool, "upscale-video", clip, os.path.join(work, "x.mkv"), "--scale", "0.25",
             "--quiet"], timeout=120)
    line = one_line_error(r, "upscale-video without its module", "splinetool-video.so")
    if "not found" not in line or lone not in line:
        fail("the missing-module error says neither 'not found' nor where it looked: %r" % line)
    print("missing: " + line)
    line = one_line_error(run([lone_tool, "info", seed]), "DICOM without its module",
                          "splinetool-dicom.so")
    print("missing: " + line)
    ok([lone_tool, "prefilter", src, os.path.join(work, "lone.npy"), "--degree", "5"])
    if not np.array_equal(np.load(os.path.join(work, "lone.npy")), np.load(b)):
        fail("prefilter without the modules differs")
    if has_gl:
        line = one_line_error(run([lone_tool, "sample", src, coords, g, "--backend", "gl"]),
                              "--backend gl without its module", "splinetool-gl.so")
        if not line.startswith("splinetool: --backend gl needs splinetool-gl.so: "):
            fail("unexpected wording: %r" % line)
        with open(os.path.join(lone, "splinetool-gl.so"), "wb") as f:
            f.write(b"not an ELF file\n")
        line = one_line_error(run([lone_tool, "sample", src, coords, g, "--backend", "gl"]),
                              "--backend gl with a damaged module", "splinetool-gl.so")
        print("damaged: " + line)
    shutil.rmtree(os.path.dirname(lone))

    # 6. the installed Python package
    check_python_package(build, prefix)

    # 5. the installed viewer
    if not has_viewer:
        print("SKIP viewer part: this build has no viewer (SPLINEVIEW_BUILD_VIEWER=OFF)")
        return
    shot, report = os.path.join(work, "shot.png"), os.path.join(work, "shot.json")
    r = run([viewer, "--headless", "--size", "480x300", "--screenshot", shot, "--report", report],
            cwd=work)
    if r.returncode != 0:
        probe = r.stderr.strip()
        if "EGL" in probe or "context" in probe.lower():
            print("SKIP viewer part: no headless GL context: " + probe)
            return
        fail("installed viewer: exit %d: %s" % (r.returncode, probe))
    with open(report) as f:
        path = json.load(f).get("path", "")
    if os.path.realpath(os.path.dirname(path)) != os.path.realpath(assets):
        fail("the installed viewer opened %r, not the installed asset in %s" % (path, assets))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "viewer"))
    from viewer_png import png_rgb
    img = png_rgb(shot)
    if img.shape[:2] != (300, 480) or img.std() < 10:
        fail("the screenshot %s is %s with standard deviation %.1f: not the image" % (
            shot, img.shape, img.std()))
    print("installed viewer: default image from %s, screenshot %s, std %.1f" % (
        path, img.shape, img.std()))


if __name__ == "__main__":
    main()
