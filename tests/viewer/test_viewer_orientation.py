#!/usr/bin/env python3
"""The volume mode shows a volume in patient space whatever its storage order: the same
asymmetric volume written by nibabel in several axis orders and flips (each with its matching
affine, NIfTI sform and qform) renders, in the viewer's volume mode (--screenshot --report; all
files in one --batch process), identical view pixels in every view (axial, coronal, sagittal
and the oblique, whose angles are relative to the patient frame) and identical orientation
letters; the report's orientation
code is nibabel's aff2axcodes, and the letters follow the radiological convention
(slice_geometry.h). A mislabelled file (LAS data written with the RAS affine) must be told
apart by the same comparison, so the test can fail.

The comparison: nearest on an isotropic volume with odd dims (the crosshair starts on the same
central voxel in every storage order), view by view over the rectangles of the report; pixels
whose sample position (the report's grid) lies within 1e-3 of a voxel boundary in either file
are left out (nearest may round those either way; they are counted, and must be few).

usage: test_viewer_orientation.py SPLINEVIEW OUTDIR
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_batch import run_batch  # noqa: E402
from viewer_png import png_rgb  # noqa: E402

try:
    import nibabel as nib
    from nibabel.orientations import axcodes2ornt, ornt_transform
except ImportError:  # pragma: no cover
    print("SKIP: nibabel is not installed (python3-nibabel)")
    sys.exit(77)

# Storage orders: (i, j, k) axis codes, flips and permutations (sagittal and coronal
# acquisitions among them).
CODES = ["RAS", "LAS", "LPS", "PIR", "LIA", "ASL", "IRP"]
SPACING = 2.0  # mm, isotropic
SHAPE_RAS = (33, 39, 27)  # (i, j, k) of the canonical RAS storage: odd


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def canonical_volume():
    """An asymmetric head-like phantom in RAS storage, data[i, j, k], values 0..250."""
    ni, nj, nk = SHAPE_RAS
    i, j, k = np.meshgrid(np.arange(ni), np.arange(nj), np.arange(nk), indexing="ij")
    # Normalised coordinates in [-1, 1]: x right, y anterior, z superior.
    x, y, z = (2 * i / (ni - 1) - 1, 2 * j / (nj - 1) - 1, 2 * k / (nk - 1) - 1)
    v = np.zeros(SHAPE_RAS, np.float64)
    head = x ** 2 / 0.8 + y ** 2 / 0.9 + z ** 2 / 0.85 < 1
    v[head] = 60 + 40 * (z[head] + 1)  # brighter towards superior
    v[(x - 0.35) ** 2 + (y - 0.4) ** 2 + (z - 0.3) ** 2 < 0.06] = 230  # right anterior superior
    v[(x < -0.3) & (x > -0.5) & (y < -0.2) & (y > -0.7) & (np.abs(z) < 0.5)] = 170  # left, back
    v[(np.abs(x) < 0.1) & (y > 0.6) & (y < 0.9) & (z > -0.4) & (z < 0.0)] = 250  # "nose"
    v += (i * 7 + j * 13 + k * 29) % 11  # a texture that any flip or transpose changes
    return v.astype(np.float32)


def write_orientations(outdir):
    data = canonical_volume()
    affine = np.diag([SPACING, SPACING, SPACING, 1.0])
    affine[:3, 3] = [-(n - 1) * SPACING / 2 for n in SHAPE_RAS]  # centred on the origin
    canonical = nib.Nifti1Image(data, affine)
    files = {}
    for code in CODES:
        img = canonical.as_reoriented(ornt_transform(axcodes2ornt("RAS"), axcodes2ornt(code)))
        got = "".join(nib.aff2axcodes(img.affine))
        if got != code:
            fail("nibabel reoriented to %s, asked for %s" % (got, code))
        out = nib.Nifti1Image(np.asarray(img.dataobj), img.affine)
        out.set_sform(img.affine, code=1)
        out.set_qform(img.affine, code=1)
        path = os.path.join(outdir, "phantom_%s.nii" % code)
        nib.save(out, path)
        files[code] = (path, img.affine)
    # Mislabelled: the LAS array written with the RAS affine (what a viewer that ignored the
    # affine, or got one axis wrong, would show).
    las = nib.load(files["LAS"][0])
    bad = nib.Nifti1Image(np.asarray(las.dataobj), affine)
    bad.set_sform(affine, code=1)
    bad.set_qform(affine, code=1)
    files["mislabelled"] = (os.path.join(outdir, "phantom_mislabelled.nii"), affine)
    nib.save(bad, files["mislabelled"][0])
    return files


def render_all(viewer, files, outdir):
    """Every file's views, rendered in one viewer process (--batch): {name: (image, report)}."""
    jobs, outputs = [], {}
    for name, (path, _) in files.items():
        shot = os.path.join(outdir, name + ".png")
        report = os.path.join(outdir, name + ".json")
        for p in (shot, report):
            if os.path.exists(p):
                os.remove(p)
        jobs.append([path, "--mode", "volume", "--method", "nearest", "--no-accuracy",
                     "--window", "255", "--level", "127.5", "--size", "1000x700",
                     "--screenshot", shot, "--report", report])
        outputs[name] = (shot, report)
    r = run_batch(viewer, jobs, os.path.join(outdir, "jobs.txt"))
    if r.returncode != 0:
        fail("splineview --batch exited %d: %s" % (r.returncode, r.stderr))
    return {name: (png_rgb(shot), json.load(open(report)))
            for name, (shot, report) in outputs.items()}


def boundary_mask(view, dims):
    """Pixels of the view whose sample position lies within 1e-3 of a voxel boundary."""
    g = view["grid"]
    r = np.arange(g["rows"], dtype=np.float64)[:, None]
    c = np.arange(g["cols"], dtype=np.float64)[None, :]
    mask = np.zeros((g["rows"], g["cols"]), bool)
    for d in range(3):
        p = g["origin"][d] + r * g["step_row"][d] + c * g["step_col"][d]
        mask |= np.abs(p - np.floor(p) - 0.5) < 1e-3
    return mask


def views_of(img, rep):
    out = {}
    for v in rep["views"]:
        x, y, w, h = (int(round(t)) for t in v["rect"])
        out[v["plane"]] = (img[y:y + h, x:x + w, :], v)
    return out


def compare(ref, other, name):
    """(total differing pixels over the unambiguous ones, fraction left out, first problem)."""
    img_a, rep_a = ref
    img_b, rep_b = other
    a, b = views_of(img_a, rep_a), views_of(img_b, rep_b)
    differing, left_out, total, problem = 0, 0, 0, None
    for plane in ("axial", "coronal", "sagittal", "oblique"):
        pa, va = a[plane]
        pb, vb = b[plane]
        if va["rect"] != vb["rect"]:
            return None, 0, "%s: %s rect %r vs %r" % (name, plane, vb["rect"], va["rect"])
        mask = boundary_mask(va, rep_a["dims_zyx"]) | boundary_mask(vb, rep_b["dims_zyx"])
        diff = np.any(pa != pb, axis=2) & ~mask
        differing += int(diff.sum())
        left_out += int(mask.sum())
        total += mask.size
        if diff.any() and problem is None:
            ys, xs = np.nonzero(diff)
            problem = "%s: %s view differs at %d pixels, first at (%d, %d) of the view" % (
                name, plane, int(diff.sum()), xs[0], ys[0])
    return differing, left_out / total, problem


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    viewer, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    files = write_orientations(outdir)
    shots = render_all(viewer, files, outdir)
    for name, (path, affine) in files.items():
        rep = shots[name][1]
        expected = "".join(nib.aff2axcodes(affine))
        if rep.get("oriented") is not True or rep.get("orientation") != expected:
            fail("%s: report orientation %r (oriented %r), nibabel says %s"
                 % (name, rep.get("orientation"), rep.get("oriented"), expected))
        print("%-12s orientation %s (= nibabel), crosshair world %s"
              % (name, rep["orientation"], rep["crosshair"]["world_ras"]))

    ref = shots["RAS"]
    # The radiological letters and the patient-frame normals (slice_geometry.h).
    expected_letters = {"axial": ("R", "L", "A", "P"), "coronal": ("R", "L", "S", "I"),
                        "sagittal": ("A", "P", "S", "I")}
    expected_normals = {"axial": [0, 0, 1], "coronal": [0, 1, 0], "sagittal": [1, 0, 0]}
    for v in ref[1]["views"]:
        if v["plane"] in expected_letters:
            got = tuple(v["letters"][e] for e in ("left", "right", "top", "bottom"))
            if got != expected_letters[v["plane"]] or v["name"] != v["plane"]:
                fail("RAS %s view: name %r letters %r, expected %r"
                     % (v["plane"], v["name"], got, expected_letters[v["plane"]]))
            if np.abs(np.array(v["normal_ras"]) - expected_normals[v["plane"]]).max() > 1e-12:
                fail("%s normal %r" % (v["plane"], v["normal_ras"]))
    for plane, (pixels, _) in views_of(*ref).items():
        if pixels.mean(axis=2).std() < 20:
            fail("the RAS %s view is nearly uniform: nothing to compare" % plane)

    worst_left_out = 0.0
    for code in CODES[1:]:
        other = shots[code]
        letters_ref = [v["letters"] for v in ref[1]["views"]]
        letters = [v["letters"] for v in other[1]["views"]]
        if letters != letters_ref:
            fail("%s: letters %r differ from RAS's %r" % (code, letters, letters_ref))
        differing, left_out, problem = compare(ref, other, code)
        if differing is None or differing:
            fail(problem)
        if left_out > 0.01:
            fail("%s: %.2f%% of the pixels sit on voxel boundaries: the comparison is too weak"
                 % (code, 100 * left_out))
        worst_left_out = max(worst_left_out, left_out)
        print("%s: all four views identical to RAS's (%.3f%% of pixels on voxel boundaries "
              "left out), letters identical" % (code, 100 * left_out))

    # The mislabelled file must fail the same comparison.
    differing, _, problem = compare(ref, shots["mislabelled"], "mislabelled LAS-as-RAS")
    if differing is None or differing < 1000:
        fail("the LAS data labelled RAS is not told apart (%r differing pixels)" % differing)
    print("mislabelled LAS-as-RAS told apart: " + problem)
    print("PASS: %d storage orders show the same patient-space views and letters"
          % len(CODES))


if __name__ == "__main__":
    main()
