#!/usr/bin/env python3
"""The viewer's command line and its fast failures (issue 12), headless (EGL, no window).

1. --version: exit 0, nothing on stderr, no window; the version, the git commit, and whether
   CUDA and FFmpeg are compiled in.
2. Every example of --help runs: each "  splineview ..." line of the Examples section, in a folder
   holding a copy of assets/ (and scan.raw of the size its --raw spec states), with --headless
   --screenshot added where the line has none; and the --raw option's own "e.g." spec; all of
   them as the lines of one --batch process. Camera
   lines (/dev/video*) are skipped where there is no such device.
3. A bad video source fails fast with one message: a missing file, a text file, a directory and
   malformed synthetic specs each end the screenshot run within 15 s (it took 60 s) with exit 1,
   exactly one line on stderr that names the source and carries the "video:" prefix once, and no
   screenshot written.
4. The video panel never shows a false "0.0 fps": a fresh screenshot (3 frames, no whole second of
   playback yet) reports "measuring fps" and no figure; a figure, once there, is positive.
5. The CUDA notice is plain: no internal names ("GL texture"), and on a machine without an NVIDIA
   driver (no libcuda.so.1) it says so instead of "no NVIDIA driver new enough".
6. Without --mode the file's content picks the mode (issue 13): a 2-D .npy -> zoom, a 3-D .npy
   and the NRRD head -> volume, the clip -> video, a PNG -> zoom (all files in one --batch
   process, whose lines are parsed as command lines); 1-D data is one clear error.
7. --reference (issue 13 item 6): a bad value is one line and exit 2; the zone plate with
   precise and truth reports that reference per view; truth on a file says why on one stderr
   line and in the report, and measures nothing.
8. --batch FILE (several screenshot runs in one process): each job writes what the same options
   write in a process of their own, in every mode that keeps GL state (zoom with accuracy and
   heat map, rotate, volume, deform, zoom again after them): the views pixel for pixel, the
   panel except its frame-time lines, the reports except their timings. A bad line runs
   nothing (exit 2, the line named); a failing job stops the batch with its status, names its
   line, and the jobs before it have written their files, the jobs after it have not; --batch
   with another option is refused.

usage: test_viewer_cli.py SPLINEVIEW ASSETS_DIR OUTDIR PROJECT_VERSION
"""
import ctypes
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, cwd=None, timeout=300):
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return r, time.monotonic() - t0


def check_version(viewer, project_version):
    r, _ = run([viewer, "--version"])
    if r.returncode != 0 or r.stderr:
        fail("--version: exit %d, stderr %r" % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    m = re.fullmatch(r"splineview (\S+) \(git ([0-9a-f]{7,40}(\+dirty)?|unknown)\)", lines[0])
    if not m:
        fail("--version: first line %r is not 'splineview VERSION (git COMMIT)'" % lines[0])
    if m.group(1) != project_version:
        fail("--version says %s, the project is %s" % (m.group(1), project_version))
    for what in ("CUDA", "FFmpeg"):
        line = [l for l in lines if l.startswith(what + ": ")]
        if len(line) != 1 or not re.match(what + r": (not )?compiled in", line[0]):
            fail("--version: no '%s: compiled in / not compiled in' line in %r" % (what, lines))
    print("--version: " + " | ".join(lines))
    return any(l.startswith("CUDA: compiled in") for l in lines)


def raw_size(spec):
    """Bytes of a raw file laid out per DIMS:TYPE[...] (offset included)."""
    parts = spec.split(":")
    n = 1
    for d in parts[0].split("x"):
        n *= int(d)
    size = {"u8": 1, "u16": 2, "i16": 2, "f32": 4, "f64": 8}[parts[1]]
    offset = 0
    for p in parts[2:]:
        if p.startswith("offset="):
            offset = int(p[len("offset="):])
    return offset + n * size


def prepare_raw(args, workdir):
    """Creates the file a --raw example reads (deterministic content, the size its spec says)."""
    if "--raw" not in args:
        return
    spec = args[args.index("--raw") + 1]
    files = [a for a in args if not a.startswith("-") and a.endswith(".raw")]
    for f in files:
        size = raw_size(spec)
        with open(os.path.join(workdir, f), "wb") as out:
            out.write(bytes((i * 7 + (i >> 9)) & 255 for i in range(size)))


def check_help_examples(viewer, assets, outdir):
    r, _ = run([viewer, "--help"])
    if r.returncode != 0:
        fail("--help: exit %d" % r.returncode)
    text = r.stdout
    if "Examples" not in text:
        fail("--help has no Examples section")
    examples = [l.strip() for l in text[text.index("Examples"):].splitlines()
                if l.startswith("  splineview ")]
    if len(examples) < 5:
        fail("--help shows only %d examples" % len(examples))
    # The --raw option's own example spec (wrapped help text joined first).
    flat = " ".join(text.split())
    m = re.search(r"--raw .*?\(e\.g\. ([^)\s]+)\)", flat)
    if not m:
        fail("the --raw help has no (e.g. SPEC) example")
    examples.append("splineview --mode volume example.raw --raw " + m.group(1))

    workdir = os.path.join(outdir, "examples")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    shutil.copytree(assets, os.path.join(workdir, "assets"))
    # All examples in one viewer process (--batch: each line parsed as its command line would
    # be, each run as a process of its own runs it; check_batch checks that).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from viewer_batch import run_batch
    jobs, lines = [], []
    for i, line in enumerate(examples):
        args = shlex.split(line)[1:]
        cameras = [a for a in args if a.startswith("/dev/video")]
        if cameras and not all(os.path.exists(c) for c in cameras):
            print("skip (no camera here): " + line)
            continue
        prepare_raw(args, workdir)
        if "--screenshot" not in args:
            args += ["--screenshot", "example%d.png" % i]
        if "--headless" not in args:
            args += ["--headless"]
        if "--size" not in args:
            args += ["--size", "640x400"]
        jobs.append(args)
        lines.append(line)
    t0 = time.monotonic()
    r = run_batch(viewer, jobs, os.path.join(outdir, "examples.txt"), cwd=workdir)
    if r.returncode != 0:
        # The batch names the failing job's line (line 1 is the file's comment).
        m = re.search(r"examples\.txt:(\d+) failed", r.stderr)
        which = lines[int(m.group(1)) - 2] if m else "?"
        fail("the --help example '%s' exits %d: %s" % (which, r.returncode, r.stderr.strip()))
    for args, line in zip(jobs, lines):
        shot = args[args.index("--screenshot") + 1]
        if not os.path.getsize(os.path.join(workdir, shot)) > 0:
            fail("the --help example '%s' wrote no screenshot" % line)
        print("ok: " + line)
    print("--help: %d examples run (%.1f s in one process)" % (len(jobs), time.monotonic() - t0))


def check_bad_video_sources(viewer, outdir):
    os.makedirs(outdir, exist_ok=True)
    text = os.path.join(outdir, "notes.mp4")
    with open(text, "w") as f:
        f.write("not a video\n" * 100)
    folder = os.path.join(outdir, "a_folder.mp4")
    os.makedirs(folder, exist_ok=True)
    shot = os.path.join(outdir, "bad_source.png")
    for source, named in ((os.path.join(outdir, "no_such_clip.mp4"), "no_such_clip.mp4"),
                          (text, "notes.mp4"), (folder, "a_folder.mp4"),
                          ("synthetic:0x0", "synthetic:0x0"), ("synthetic:10x10", "synthetic:10x10"),
                          ("synthetic:640", "synthetic:640")):
        if os.path.exists(shot):
            os.remove(shot)
        r, secs = run([viewer, "--mode", "video", source, "--headless", "--size", "256x144",
                       "--screenshot", shot], timeout=120)
        err = r.stderr
        lines = [l for l in err.splitlines() if l.strip()]
        print("%s: exit %d in %.1f s: %s" % (source, r.returncode, secs, err.strip()))
        if r.returncode != 1:
            fail("%s: exit status %d, expected 1" % (source, r.returncode))
        if secs > 15:
            fail("%s: the error took %.1f s (at most 15 s, even in the sanitizer build)"
                 % (source, secs))
        if len(lines) != 1:
            fail("%s: expected one line on stderr, got %d: %r" % (source, len(lines), err))
        if not lines[0].startswith("splineview: error: video: ") or lines[0].count("video:") != 1:
            fail("%s: expected one 'video:' prefix: %r" % (source, lines[0]))
        if named not in lines[0]:
            fail("%s: the message does not name the source: %r" % (source, lines[0]))
        if os.path.exists(shot):
            fail("%s: a screenshot was written although the source is bad" % source)


def check_fps_and_notice(viewer, assets, outdir, cuda_compiled):
    shot, rep = os.path.join(outdir, "fps.png"), os.path.join(outdir, "fps.json")
    r, _ = run([viewer, "--mode", "video", "synthetic:320x180", "--headless", "--size", "480x300",
                "--screenshot", shot, "--report", rep])
    if r.returncode != 0:
        fail("video screenshot: exit %d: %s" % (r.returncode, r.stderr))
    j = json.load(open(rep))
    print("video screenshot: %d frames shown, fps %r (%s), notice %r"
          % (j["frames_shown"], j["video_fps"], j["video_fps_text"], j["notice"]))
    if "0.0 fps" in j["video_fps_text"] or j["video_fps"] == 0:
        fail("the panel shows a false 0.0 fps: %r" % j["video_fps_text"])
    if j["video_fps"] is None and j["video_fps_text"] != "measuring fps":
        fail("no figure yet, but the panel says %r" % j["video_fps_text"])
    if j["video_fps"] is not None and not j["video_fps"] > 0:
        fail("a measured figure must be positive: %r" % j["video_fps"])
    # A run that lasts: after a second of frames there is a positive figure.
    rep2 = os.path.join(outdir, "fps_long.json")
    r, secs = run([viewer, "--mode", "video", "synthetic:64x48", "--headless", "--size",
                   "256x160", "--screenshot", shot, "--report", rep2, "--measure", "1500"])
    j2 = json.load(open(rep2))
    print("after --measure 1500 (%.1f s): fps %r (%s)" % (secs, j2["video_fps"],
                                                          j2["video_fps_text"]))
    if r.returncode != 0 or not (j2["video_fps"] or 0) > 0:
        fail("no positive fps figure after 1500 frames (%.1f s): %r" % (secs, j2.get("video_fps")))

    notice = j["notice"]
    for text in (notice, r.stderr):
        if "GL texture" in text:
            fail("internal names in a user message: %r" % text)
    try:
        ctypes.CDLL("libcuda.so.1")
        has_driver = True
    except OSError:
        has_driver = False
    if not has_driver and cuda_compiled:
        if "new enough" in notice or "no NVIDIA driver is installed" not in notice:
            fail("no NVIDIA driver here, but the notice says %r" % notice)
    # The zoom mode's fallback line on stderr, too.
    r, _ = run([viewer, os.path.join(assets, "coffee.png"), "--headless", "--size", "480x300",
                "--screenshot", os.path.join(outdir, "zoom.png")])
    if r.returncode != 0:
        fail("zoom screenshot: exit %d: %s" % (r.returncode, r.stderr))
    if "GL texture" in r.stderr:
        fail("internal names on stderr: %r" % r.stderr)
    if not has_driver and "new enough" in r.stderr:
        fail("no NVIDIA driver here, but stderr says %r" % r.stderr)
    print("notices: %r / %r" % (notice, r.stderr.strip()))


def check_mode_from_content(viewer, assets, outdir):
    """Without --mode the file picks the mode: .npy, PNG, TIFF and DICOM images -> zoom; .npy,
    NRRD, NIfTI, multi-page TIFF, multi-frame DICOM and a DICOM series folder -> volume; a
    video -> video; a 1-D .npy is one clear error."""
    try:
        import numpy as np
    except ImportError:
        print("mode from content: numpy missing, skipped")
        return
    d = os.path.join(outdir, "modes")
    os.makedirs(d, exist_ok=True)
    img = os.path.join(d, "img.npy")
    np.save(img, (np.arange(48 * 64).reshape(48, 64) * 37 % 4096).astype(np.uint16))
    vol = os.path.join(d, "vol.npy")
    np.save(vol, np.random.default_rng(1).random((8, 12, 16)).astype(np.float32))
    cases = [(img, "zoom"), (vol, "volume"), (os.path.join(assets, "coffee_pan.mp4"), "video"),
             (os.path.join(assets, "coffee.png"), "zoom"),
             (os.path.join(assets, "mri_t1_head.nrrd"), "volume")]
    # TIFF, NIfTI and DICOM, each written here by its independent Python library (skipped, with
    # the reason printed, where the library is missing), plus the DICOM seeds of the fuzz corpus
    # (a CT slice, an Enhanced multi-frame file).
    here = os.path.dirname(os.path.abspath(__file__))
    seeds = os.path.join(here, "..", "fuzz", "seeds")
    cases += [(os.path.join(seeds, "ct_i16.dcm"), "zoom"),
              (os.path.join(seeds, "enhanced_mf.dcm"), "volume")]
    rng = np.random.default_rng(2)
    try:
        import tifffile
        tif2 = os.path.join(d, "img.tif")
        tifffile.imwrite(tif2, rng.integers(0, 4096, (40, 56), dtype=np.uint16))
        tif3 = os.path.join(d, "stack.tif")
        tifffile.imwrite(tif3, rng.random((6, 20, 24), dtype=np.float32))
        cases += [(tif2, "zoom"), (tif3, "volume")]
    except ImportError:
        print("mode from content: tifffile missing, TIFF cases skipped")
    try:
        import nibabel
        nii = os.path.join(d, "vol.nii.gz")
        aff = np.diag([-1.5, 1.0, 2.0, 1.0])
        nibabel.save(nibabel.Nifti1Image(rng.integers(-100, 900, (16, 12, 8)).astype(np.int16),
                                         aff), nii)
        cases += [(nii, "volume")]
    except ImportError:
        print("mode from content: nibabel missing, NIfTI case skipped")
    try:
        sys.path.insert(0, os.path.join(here, "..", "io"))
        import test_dicom_oracle as dcm
        series = os.path.join(d, "series")
        os.makedirs(series, exist_ok=True)
        for q in range(4):
            dcm.dicom_file(os.path.join(series, "IM%d" % q),
                           rng.integers(0, 3000, (10, 12)).astype(np.uint16),
                           ipp=(0.0, 0.0, 2.5 * q), iop=(1, 0, 0, 0, 1, 0))
        cases += [(series, "volume")]
    except (ImportError, SystemExit):
        print("mode from content: pydicom missing, DICOM series case skipped")
    # All files in one viewer process (--batch: each line parsed as a command line of its own).
    sys.path.insert(0, here)
    from viewer_batch import run_batch
    jobs = []
    for i, (src, want) in enumerate(cases):
        shot, report = os.path.join(d, "s%d.png" % i), os.path.join(d, "r%d.json" % i)
        for f in (shot, report):
            if os.path.exists(f):
                os.remove(f)
        jobs.append([src, "--headless", "--size", "640x400", "--screenshot", shot, "--report",
                     report])
    r = run_batch(viewer, jobs, os.path.join(d, "jobs.txt"))
    if r.returncode != 0:
        fail("no --mode: splineview --batch exit %d: %s" % (r.returncode, r.stderr.strip()))
    for i, (src, want) in enumerate(cases):
        with open(os.path.join(d, "r%d.json" % i)) as f:
            got = json.load(f).get("mode")
        if got != want:
            fail("no --mode, %s: mode %r, expected %r" % (src, got, want))
    line = os.path.join(d, "line.npy")
    np.save(line, np.arange(10.0))
    r, _ = run([viewer, line, "--headless", "--screenshot", os.path.join(d, "x.png")])
    if r.returncode != 1 or "1-D" not in r.stderr or r.stderr.count("\n") != 1:
        fail("a 1-D .npy: exit %d, stderr %r" % (r.returncode, r.stderr))
    print("mode from content: %d files, each in its mode (%s); 1-D refused"
          % (len(cases), ", ".join("%s -> %s" % (os.path.basename(c), m) for c, m in cases)))


def check_reference(viewer, assets, outdir):
    r, _ = run([viewer, "--reference", "exact", "--headless", "--screenshot",
                os.path.join(outdir, "x.png")])
    if r.returncode != 2 or "--reference" not in r.stderr or r.stderr.count("\n") != 1:
        fail("--reference exact: exit %d, stderr %r" % (r.returncode, r.stderr))
    report = os.path.join(outdir, "ref.json")
    for ref, want in (("precise", "method:precise"), ("truth", "truth")):
        r, _ = run([viewer, "zone-plate", "--reference", ref, "--layout", "pair", "--methods",
                    "nearest,precise", "--zoom", "2.7", "--headless", "--size", "640x400",
                    "--screenshot", os.path.join(outdir, "ref.png"), "--report", report])
        if r.returncode != 0:
            fail("zone-plate --reference %s: exit %d: %s" % (ref, r.returncode, r.stderr))
        with open(report) as f:
            j = json.load(f)
        got = [v.get("accuracy", {}).get("reference") for v in j["views"]]
        if j.get("accuracy_reference") != want or got != [want, want]:
            fail("zone-plate --reference %s: report says %r, views %r" %
                 (ref, j.get("accuracy_reference"), got))
    r, _ = run([viewer, os.path.join(assets, "coffee.png"), "--reference", "truth", "--headless",
                "--size", "640x400", "--screenshot", os.path.join(outdir, "ref.png"), "--report",
                report])
    lines = [l for l in r.stderr.splitlines() if "ground truth" in l]
    with open(report) as f:
        j = json.load(f)
    if (r.returncode != 0 or len(lines) != 1 or "accuracy_reference_problem" not in j or
            any("accuracy" in v for v in j["views"])):
        fail("coffee.png --reference truth: exit %d, stderr %r, report %r" %
             (r.returncode, r.stderr, j))
    print("--reference: bad value refused, zone plate precise/truth reported, truth on a file "
          "refused with a reason")


def same_report(a, b, path="report"):
    """Differences between two reports, timing fields (names with ms, seconds, fps, times,
    timing) left out: a list of paths."""
    timing = re.compile(r"(^|_)(ms|seconds|fps|times|timing)($|_)")
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if timing.search(k):
                continue
            if k not in a or k not in b:
                out.append("%s.%s" % (path, k))
            else:
                out += same_report(a[k], b[k], "%s.%s" % (path, k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += same_report(x, y, "%s[%d]" % (path, i))
        return out
    return [] if a == b else [path]


def check_batch(viewer, assets, outdir):
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from viewer_batch import run_batch
    from viewer_png import png_rgb
    d = os.path.join(outdir, "batch")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    coffee = os.path.join(assets, "coffee.png")
    head = os.path.join(assets, "mri_t1_head.nrrd")
    runs = [[coffee, "--layout", "grid", "--methods", "nearest,lut,otf,precise", "--zoom", "3",
             "--angle", "20", "--size", "640x400"],
            ["--mode", "rotate", coffee, "--steps", "2", "--step-angle", "30", "--cpu-prefilter",
             "--size", "640x400"],
            ["--mode", "volume", head, "--methods", "nearest,otf,otf,precise", "--size", "640x480"],
            ["--mode", "deform", "--preset", "folding", "--size", "640x400"],
            [coffee, "--zoom", "5", "--heat-map", "--center", "100,80", "--size", "480x300"]]
    jobs = []
    for i, args in enumerate(runs):
        jobs.append(args + ["--screenshot", os.path.join(d, "batch%d.png" % i), "--report",
                            os.path.join(d, "batch%d.json" % i)])
        r, _ = run([viewer] + args + ["--headless", "--screenshot",
                                      os.path.join(d, "single%d.png" % i), "--report",
                                      os.path.join(d, "single%d.json" % i)])
        if r.returncode != 0:
            fail("separate run %s: exit %d: %s" % (args, r.returncode, r.stderr))
    r = run_batch(viewer, jobs, os.path.join(d, "jobs.txt"))
    if r.returncode != 0:
        fail("--batch: exit %d: %s" % (r.returncode, r.stderr))
    panel = 360
    for i, args in enumerate(runs):
        a = png_rgb(os.path.join(d, "batch%d.png" % i))
        b = png_rgb(os.path.join(d, "single%d.png" % i))
        if a.shape != b.shape or not np.array_equal(a[:, panel:], b[:, panel:]):
            fail("--batch job %d (%s): the views differ from a separate run's" % (i, args))
        rows = np.flatnonzero((a[:, :panel] != b[:, :panel]).any(axis=(1, 2)))
        # The frame-time line and its 40-pixel plot: the only part of the panel two runs differ in.
        if len(rows) and rows[-1] - rows[0] > 64:
            fail("--batch job %d (%s): the panel differs in rows %d..%d, more than the frame-time "
                 "lines" % (i, args, rows[0], rows[-1]))
        with open(os.path.join(d, "batch%d.json" % i)) as f:
            ra = json.load(f)
        with open(os.path.join(d, "single%d.json" % i)) as f:
            rb = json.load(f)
        diff = same_report(ra, rb)
        if diff:
            fail("--batch job %d (%s): the report differs from a separate run's in %s"
                 % (i, args, diff))
    print("--batch: %d jobs in one process, each as a separate run (views pixel for pixel, "
          "reports but timings)" % len(runs))

    # A bad line: nothing runs, the line is named.
    first = os.path.join(d, "first.png")
    r = run_batch(viewer, [[coffee, "--size", "256x160", "--screenshot", first],
                           [coffee, "--zoom", "abc", "--screenshot", os.path.join(d, "x.png")]],
                  os.path.join(d, "bad_line.txt"))
    if r.returncode != 2 or "bad_line.txt:3" not in r.stderr or os.path.exists(first):
        fail("--batch with a bad line 3: exit %d, stderr %r, first job run: %s"
             % (r.returncode, r.stderr, os.path.exists(first)))
    # A failing job: its status, its line named, the jobs before it done, the ones after not.
    last = os.path.join(d, "last.png")
    r = run_batch(viewer, [[coffee, "--size", "256x160", "--screenshot", first],
                           [os.path.join(d, "no_such.png"), "--screenshot",
                            os.path.join(d, "y.png")],
                           [coffee, "--size", "256x160", "--screenshot", last]],
                  os.path.join(d, "failing.txt"))
    if (r.returncode != 1 or "failing.txt:3" not in r.stderr or "no_such.png" not in r.stderr
            or not os.path.exists(first) or os.path.exists(last)):
        fail("--batch with a failing job on line 3: exit %d, stderr %r, before written %s, "
             "after written %s" % (r.returncode, r.stderr, os.path.exists(first),
                                   os.path.exists(last)))
    r, _ = run([viewer, "--batch", os.path.join(d, "jobs.txt"), "--zoom", "2"])
    if r.returncode != 2 or "--batch" not in r.stderr:
        fail("--batch with another option: exit %d, stderr %r" % (r.returncode, r.stderr))
    print("--batch: a bad line runs nothing (exit 2), a failing job stops the batch with its "
          "status, another option is refused")


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    viewer, assets, outdir, project_version = sys.argv[1:5]
    viewer, assets, outdir = (os.path.abspath(p) for p in (viewer, assets, outdir))
    os.makedirs(outdir, exist_ok=True)
    probe, _ = run([viewer, "--mode", "video", "synthetic:64x48", "--headless", "--size",
                    "128x96", "--screenshot", os.path.join(outdir, "probe.png")])
    if probe.returncode != 0 and ("EGL" in probe.stderr or "context" in probe.stderr):
        print("SKIP: no headless GL context: " + probe.stderr.strip())
        sys.exit(77)
    cuda_compiled = check_version(viewer, project_version)
    check_bad_video_sources(viewer, outdir)
    check_fps_and_notice(viewer, assets, outdir, cuda_compiled)
    check_help_examples(viewer, assets, outdir)
    check_mode_from_content(viewer, assets, outdir)
    check_reference(viewer, assets, outdir)
    check_batch(viewer, assets, outdir)
    print("PASS: mode from content, --version, fast single-prefix video errors, fps text, notices, --help examples")


if __name__ == "__main__":
    main()
