#!/usr/bin/env python3
"""DICOM reading (sv::load_dicom through splinetool) against series written from scratch with
pydicom: values via `splinetool compare SERIES ref.npy --json` (max_abs 0 against numpy's
float64 array in our (z, y, x) order, after sorting the slices), geometry via
`splinetool info SERIES --json` against the affine computed here from IPP/IOP/PixelSpacing
(LPS -> RAS: x and y negated), and the refusals (mixed series, duplicate positions, uneven
spacing, empty folder, mixed sizes).

usage: test_dicom_oracle.py SPLINETOOL          (exit 77 = skipped: no pydicom)
"""
import json
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from cli_util import Tool, Workdir  # noqa: E402

try:
    import pydicom
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, ImplicitVRLittleEndian, generate_uid
except ImportError:
    print("SKIP: pydicom is not installed (Debian: python3-pydicom)")
    sys.exit(77)

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def dicom_file(path, pixels, ipp=None, iop=None, spacing=(0.8, 0.6), series_uid=None,
               slope=None, intercept=None, signed=False, bits_stored=None, thickness=None,
               photometric="MONOCHROME2", implicit=False, modality="CT"):
    """Writes one slice. `pixels`: (rows, cols) integer array, or (rows, cols, 3) uint8 RGB."""
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.2" if modality == "CT" else \
        "1.2.840.10008.5.1.4.1.1.4"
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ImplicitVRLittleEndian if implicit else ExplicitVRLittleEndian
    ds = FileDataset(path, {}, file_meta=meta, preamble=b"\0" * 128)
    ds.is_little_endian = True
    ds.is_implicit_VR = implicit
    ds.SOPClassUID = meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.Modality = modality
    ds.SeriesInstanceUID = series_uid or "1.2.3.4"
    ds.StudyInstanceUID = "1.2.3"
    ds.Rows, ds.Columns = pixels.shape[0], pixels.shape[1]
    rgb = pixels.ndim == 3
    ds.SamplesPerPixel = 3 if rgb else 1
    ds.PhotometricInterpretation = "RGB" if rgb else photometric
    if rgb:
        ds.PlanarConfiguration = 0
    bits = pixels.dtype.itemsize * 8
    ds.BitsAllocated = bits
    ds.BitsStored = bits_stored or bits
    ds.HighBit = ds.BitsStored - 1
    ds.PixelRepresentation = 1 if signed else 0
    if ipp is not None:
        ds.ImagePositionPatient = [float(v) for v in ipp]
    if iop is not None:
        ds.ImageOrientationPatient = [float(v) for v in iop]
    if spacing is not None:
        ds.PixelSpacing = [float(spacing[0]), float(spacing[1])]
    if thickness is not None:
        ds.SliceThickness = thickness
    if slope is not None:
        ds.RescaleSlope = slope
        ds.RescaleIntercept = intercept
    ds.PixelData = np.ascontiguousarray(pixels).astype(pixels.dtype.newbyteorder("<")).tobytes()
    ds.save_as(path, write_like_original=False)


def series_geometry(iop, first_ipp, step, n):
    """IPPs of n slices: first_ipp + q * step * normal (LPS)."""
    r = np.array(iop[:3], float)
    c = np.array(iop[3:], float)
    normal = np.cross(r, c)
    return [np.array(first_ipp, float) + q * step * normal for q in range(n)]


def expected_affine(iop, ipps_sorted, spacing):
    """RAS affine from IOP, the sorted IPPs and PixelSpacing (row spacing, column spacing)."""
    r = np.array(iop[:3], float)
    c = np.array(iop[3:], float)
    m = np.eye(4)
    m[:3, 0] = r * spacing[1]
    m[:3, 1] = c * spacing[0]
    n = len(ipps_sorted)
    if n > 1:
        m[:3, 2] = (ipps_sorted[-1] - ipps_sorted[0]) / (n - 1)
    else:
        m[:3, 2] = np.cross(r, c)
    m[:3, 3] = ipps_sorted[0]
    flip = np.diag([-1.0, -1.0, 1.0, 1.0])
    return flip @ m


def info(tool, path):
    r = tool.run("info", path, "--json")
    if r.returncode != 0:
        raise AssertionError("info %s failed: %s" % (path, r.stderr))
    return json.loads(r.stdout)


def compare_exact(tool, wd, path, ref, name, *extra):
    ref_path = wd.save(name + "_ref.npy", ref.astype(np.float64))
    r = tool.run("compare", path, ref_path, "--json", *extra)
    if r.returncode != 0:
        check(False, "%s: compare failed: %s" % (name, r.stderr.strip()))
        return
    j = json.loads(r.stdout)
    check(j.get("max_abs") == 0, "%s: max_abs %s (expected 0)" % (name, j.get("max_abs")))


def write_series(wd, name, volume, iop, first_ipp, step, shuffle=True, **kw):
    """volume: (n, rows, cols) stored values in k order; files named out of order."""
    folder = wd.path(name)
    os.makedirs(folder)
    n = volume.shape[0]
    ipps = series_geometry(iop, first_ipp, step, n)
    order = list(range(n))
    if shuffle:
        random.Random(7).shuffle(order)
    for file_no, q in enumerate(order):
        dicom_file(os.path.join(folder, "IM%04d" % (n - file_no)), volume[q], ipp=ipps[q],
                   iop=iop, **kw)
    return folder, ipps


def test_ct_int16_slope(tool, wd):
    rng = np.random.default_rng(1)
    vol = rng.integers(-1024, 3000, size=(6, 5, 7)).astype(np.int16)
    iop = [1, 0, 0, 0, 1, 0]
    folder, ipps = write_series(wd, "ct", vol, iop, [-100.5, -80.25, 30.0], 2.5,
                                slope=0.5, intercept=-1000.0, signed=True)
    compare_exact(tool, wd, folder, vol.astype(np.float64) * 0.5 - 1000.0, "ct_int16_slope")
    j = info(tool, folder)
    check(j["dims"] == [6, 5, 7], "ct dims %s" % j["dims"])
    check(j["dtype"] == "float64", "ct dtype %s (rescaled -> float64)" % j["dtype"])
    check(j["orientation"] == "LPS", "axial series orientation %s (expected LPS)" % j["orientation"])
    check(j["orientation_source"] == "dicom", "source %s" % j["orientation_source"])
    exp = expected_affine(iop, ipps, (0.8, 0.6))
    check(np.allclose(np.array(j["affine"]), exp, atol=1e-6),
          "ct affine\n%s\nexpected\n%s" % (np.array(j["affine"]), exp))
    check(np.allclose(j["spacing"], [2.5, 0.8, 0.6]), "ct spacing %s" % j["spacing"])


def test_ct_int16_raw(tool, wd):
    vol = np.random.default_rng(2).integers(-2000, 2000, size=(3, 4, 4)).astype(np.int16)
    folder, _ = write_series(wd, "ct_raw", vol, [1, 0, 0, 0, 1, 0], [0, 0, 0], 1.0,
                             slope=1, intercept=0, signed=True)
    compare_exact(tool, wd, folder, vol, "ct_int16_identity")
    j = info(tool, folder)
    check(j["dtype"] in ("int16",), "int16 dtype %s" % j["dtype"])


def test_bits_stored(tool, wd):
    # 12 of 16 bits stored, signed: garbage in the top 4 bits must be masked and the sign
    # extended from bit 11.
    vals = np.array([[-2048, -1, 0, 2047]], dtype=np.int16)
    raw = (vals.astype(np.int32) & 0x0FFF) | 0xA000  # junk in the high bits
    folder = wd.path("bits12")
    os.makedirs(folder)
    dicom_file(os.path.join(folder, "a.dcm"), raw.astype(np.uint16).view(np.int16),
               ipp=[0, 0, 0], iop=[1, 0, 0, 0, 1, 0], signed=True, bits_stored=12)
    compare_exact(tool, wd, os.path.join(folder, "a.dcm"), vals, "bits_stored_12_signed")


def test_mr_uint16_orientations(tool, wd):
    cases = {
        "axial": ([1, 0, 0, 0, 1, 0], "LPS"),
        "sagittal": ([0, 1, 0, 0, 0, -1], "PIR"),
        "coronal": ([1, 0, 0, 0, 0, -1], "LIP"),
    }
    # oblique: rotate the axial frame by 20 degrees about z and 10 about x
    a, b = np.radians(20), np.radians(10)
    rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, np.cos(b), -np.sin(b)], [0, np.sin(b), np.cos(b)]])
    rot = rx @ rz
    cases["oblique"] = (list(rot[:, 0]) + list(rot[:, 1]), "LPS")
    for k, (name, (iop, code)) in enumerate(cases.items()):
        vol = np.random.default_rng(10 + k).integers(0, 65535, size=(5, 6, 4)).astype(np.uint16)
        folder, ipps = write_series(wd, "mr_" + name, vol, iop, [12.5, -7.0, 40.0], 3.0,
                                    modality="MR", spacing=(1.25, 0.75))
        compare_exact(tool, wd, folder, vol, "mr_" + name)
        j = info(tool, folder)
        check(j["dtype"] == "uint16", "%s dtype %s" % (name, j["dtype"]))
        check(j["orientation"] == code, "%s orientation %s (expected %s)" %
              (name, j["orientation"], code))
        exp = expected_affine(iop, ipps, (1.25, 0.75))
        check(np.allclose(np.array(j["affine"]), exp, atol=1e-5),
              "%s affine\n%s\nexpected\n%s" % (name, np.array(j["affine"]), exp))


def test_reversed_positions(tool, wd):
    # Slices whose files list positions downwards: k still increases along the normal.
    vol = np.random.default_rng(3).integers(0, 255, size=(4, 3, 3)).astype(np.uint8)
    iop = [1, 0, 0, 0, 1, 0]
    folder, ipps = write_series(wd, "rev", vol, iop, [0, 0, 50], -2.0, shuffle=True)
    ref = vol[::-1]  # sorted by increasing z
    compare_exact(tool, wd, folder, ref, "reversed_positions")
    j = info(tool, folder)
    exp = expected_affine(iop, ipps[::-1], (0.8, 0.6))
    check(np.allclose(np.array(j["affine"]), exp, atol=1e-6), "reversed affine %s" % j["affine"])
    check(j["dtype"] == "uint8", "uint8 dtype %s" % j["dtype"])


def test_single_slice(tool, wd):
    img = np.random.default_rng(4).integers(0, 4000, size=(5, 6)).astype(np.uint16)
    path = wd.path("single.dcm")
    iop = [1, 0, 0, 0, 1, 0]
    dicom_file(path, img, ipp=[1, 2, 3], iop=iop, thickness=5.0, implicit=True)
    compare_exact(tool, wd, path, img, "single_slice")
    j = info(tool, path)
    check(j["dims"] == [5, 6], "single dims %s" % j["dims"])
    exp = expected_affine(iop, [np.array([1.0, 2, 3])], (0.8, 0.6))
    exp[:3, 2] *= 5.0
    check(np.allclose(np.array(j["affine"]), exp, atol=1e-6), "single affine %s" % j["affine"])
    # The same file without an extension is found by its DICM marker.
    noext = wd.path("IM0001")
    with open(path, "rb") as src, open(noext, "wb") as dst:
        dst.write(src.read())
    compare_exact(tool, wd, noext, img, "single_slice_no_extension")
    # No geometry at all: unoriented.
    plain = wd.path("plain.dcm")
    dicom_file(plain, img, spacing=None)
    j = info(tool, plain)
    check(j["oriented"] is False and j["orientation"] is None, "unoriented: %s" % j)


def test_rgb(tool, wd):
    img = np.random.default_rng(5).integers(0, 255, size=(4, 5, 3)).astype(np.uint8)
    path = wd.path("rgb.dcm")
    dicom_file(path, img, ipp=[0, 0, 0], iop=[1, 0, 0, 0, 1, 0])
    j = info(tool, path)
    check(j["channels"] == 3 and j["dims"] == [4, 5], "rgb dims %s channels %s" %
          (j["dims"], j["channels"]))


def test_rle(tool, wd):
    """RLE Lossless (decoded by splineview itself, not GDCM): 8-bit, 16-bit signed and RGB
    files compressed by pydicom's own encoder load with exactly the pixels they hold; damaged
    segments are one clear error."""
    import pydicom
    from pydicom.uid import RLELossless
    rng = np.random.default_rng(9)
    cases = {
        "u8": rng.integers(0, 256, size=(7, 9)).astype(np.uint8),
        "i16": rng.integers(-3000, 3000, size=(6, 11)).astype(np.int16),
        "rgb": rng.integers(0, 256, size=(5, 4, 3)).astype(np.uint8),
    }
    # Runs of equal values too, so that replicate runs are exercised.
    cases["u8"][2, :] = 77
    cases["i16"][:, 3] = -1234
    for name, px in cases.items():
        path = wd.path("rle_%s.dcm" % name)
        dicom_file(path, px, ipp=[0, 0, 0], iop=[1, 0, 0, 0, 1, 0], signed=px.dtype.kind == "i")
        ds = pydicom.dcmread(path)
        ds.compress(RLELossless)
        ds.save_as(path)
        check(pydicom.dcmread(path).file_meta.TransferSyntaxUID == RLELossless,
              "rle %s: not RLE after compress" % name)
        compare_exact(tool, wd, path, px, "rle_" + name, *(["--channels"] if px.ndim == 3 else []))
    # A segment cut short: the decoder says which and where.
    path = wd.path("rle_u8.dcm")
    ds = pydicom.dcmread(path)
    from pydicom.encaps import decode_data_sequence, encapsulate
    frag = decode_data_sequence(ds.PixelData)[0]
    ds.PixelData = encapsulate([frag[:len(frag) - 20]])
    bad = wd.path("rle_cut.dcm")
    ds.save_as(bad)
    expect_refusal(tool, bad, ["RLE"], "rle cut")


def test_extra_files_skipped(tool, wd):
    vol = np.random.default_rng(6).integers(0, 255, size=(3, 3, 3)).astype(np.uint8)
    folder, _ = write_series(wd, "extra", vol, [1, 0, 0, 0, 1, 0], [0, 0, 0], 1.0)
    with open(os.path.join(folder, "README.txt"), "w") as f:
        f.write("not dicom\n")
    os.makedirs(os.path.join(folder, "sub"))
    compare_exact(tool, wd, folder, vol, "extra_files_skipped")


def expect_refusal(tool, path, words, name):
    r = tool.run("info", path, "--json")
    msg = r.stderr.strip()
    check(r.returncode != 0, "%s: accepted (expected a refusal)" % name)
    check(len(msg.splitlines()) == 1, "%s: message not one line: %r" % (name, msg))
    for w in words:
        check(w in msg, "%s: %r not in %r" % (name, w, msg))
    check("Sanitizer" not in r.stderr, "%s: sanitizer report" % name)


def test_refusals(tool, wd):
    rng = np.random.default_rng(8)
    iop = [1, 0, 0, 0, 1, 0]
    # Two series in one folder.
    folder = wd.path("mixed")
    os.makedirs(folder)
    for q in range(3):
        dicom_file(os.path.join(folder, "a%d" % q), rng.integers(0, 9, (3, 3)).astype(np.uint8),
                   ipp=[0, 0, q], iop=iop, series_uid="1.2.3.10")
    for q in range(2):
        dicom_file(os.path.join(folder, "b%d" % q), rng.integers(0, 9, (3, 3)).astype(np.uint8),
                   ipp=[0, 0, q], iop=iop, series_uid="1.2.3.20")
    expect_refusal(tool, folder, ["2 DICOM series", "3 files", "2 files"], "mixed_series")
    # Duplicate position.
    folder = wd.path("dup")
    os.makedirs(folder)
    for q, z in enumerate([0, 1, 1, 2]):
        dicom_file(os.path.join(folder, "s%d" % q), rng.integers(0, 9, (3, 3)).astype(np.uint8),
                   ipp=[0, 0, z], iop=iop)
    expect_refusal(tool, folder, ["duplicate slice position"], "duplicate_position")
    # Uneven spacing (a missing slice).
    folder = wd.path("gap")
    os.makedirs(folder)
    for q, z in enumerate([0, 1, 2, 4, 5]):
        dicom_file(os.path.join(folder, "s%d" % q), rng.integers(0, 9, (3, 3)).astype(np.uint8),
                   ipp=[0, 0, z], iop=iop)
    expect_refusal(tool, folder, ["uneven slice spacing", "gap of 2 mm"], "uneven_spacing")
    # Mixed sizes.
    folder = wd.path("sizes")
    os.makedirs(folder)
    dicom_file(os.path.join(folder, "s0"), np.zeros((3, 3), np.uint8), ipp=[0, 0, 0], iop=iop)
    dicom_file(os.path.join(folder, "s1"), np.zeros((4, 3), np.uint8), ipp=[0, 0, 1], iop=iop)
    expect_refusal(tool, folder, ["mixed image sizes"], "mixed_sizes")
    # Mixed orientation.
    folder = wd.path("orient")
    os.makedirs(folder)
    dicom_file(os.path.join(folder, "s0"), np.zeros((3, 3), np.uint8), ipp=[0, 0, 0], iop=iop)
    dicom_file(os.path.join(folder, "s1"), np.zeros((3, 3), np.uint8), ipp=[0, 0, 1],
               iop=[0, 1, 0, 0, 0, -1])
    expect_refusal(tool, folder, ["mixed orientations"], "mixed_orientation")
    # Missing positions in a multi-slice series.
    folder = wd.path("nopos")
    os.makedirs(folder)
    for q in range(2):
        dicom_file(os.path.join(folder, "s%d" % q), np.zeros((3, 3), np.uint8))
    expect_refusal(tool, folder, ["ImagePositionPatient"], "missing_positions")
    # Empty folder, and a folder with no DICOM.
    folder = wd.path("empty")
    os.makedirs(folder)
    # (load_any reads a folder without DICOM as a stack of slices: its own refusal; the DICOM
    # reader's "no DICOM image files" is tested in tests/io/test_dicom.cpp.)
    expect_refusal(tool, folder, ["empty"], "empty_folder")
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("x")
    expect_refusal(tool, folder, ["empty"], "no_dicom")
    # A truncated file.
    good = wd.path("good.dcm")
    dicom_file(good, np.arange(64, dtype=np.uint16).reshape(8, 8), ipp=[0, 0, 0], iop=iop)
    data = open(good, "rb").read()
    bad = wd.write_bytes("truncated.dcm", data[:-40])
    expect_refusal(tool, bad, ["truncated.dcm"], "truncated")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = Tool(sys.argv[1])
    wd = Workdir()
    try:
        for t in (test_ct_int16_slope, test_ct_int16_raw, test_bits_stored,
                  test_mr_uint16_orientations, test_reversed_positions, test_single_slice,
                  test_rgb, test_rle, test_extra_files_skipped, test_refusals):
            try:
                t(tool, wd)
                print("ran", t.__name__)
            except Exception as e:  # a crash of one case is a failure, not the end of the run
                FAILURES.append("%s: %s" % (t.__name__, e))
                print("FAIL:", t.__name__, e)
    finally:
        wd.close()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("all DICOM oracle checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
