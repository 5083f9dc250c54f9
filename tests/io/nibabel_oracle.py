#!/usr/bin/env python3
"""NIfTI-1 oracle for test_volume_io (IoVolumeTest.NiftiNibabelOracle), using Debian's nibabel.

  nibabel_oracle.py write DIR   nibabel writes NAME.nii / NAME.nii.gz files and, for each, what
                                nibabel itself reads back from that file: NAME.want.npy (float64,
                                axes reversed to (z, y, x)) and NAME.zooms.txt (zooms in the
                                same order); the C++ loader must agree.
  nibabel_oracle.py check DIR   reads the files the C++ writer made (o_*.nii[.gz]) next to their
                                .npy twins and checks shape, stored dtype, zooms and values.
Exit status 77 when nibabel is missing (the C++ test then skips with that reason).
"""
import os
import sys

import numpy as np

try:
    import nibabel as nib
except ImportError:
    print("python3-nibabel is not installed")
    sys.exit(77)


def reversed_axes(a):
    return np.ascontiguousarray(np.transpose(a, tuple(range(a.ndim))[::-1]))


def write(d):
    rng = np.random.default_rng(5)
    shape = (5, 4, 3)  # nibabel order (x, y, z)
    zooms = (0.5, 0.75, 2.5)
    cases = {
        "u1": rng.integers(0, 256, shape).astype(np.uint8),
        "i1": rng.integers(-128, 128, shape).astype(np.int8),
        "i2": rng.integers(-32768, 32768, shape).astype(np.int16),
        "u2": rng.integers(0, 65536, shape).astype(np.uint16),
        "i4": rng.integers(-2**31, 2**31, shape).astype(np.int32),
        "f4": rng.standard_normal(shape).astype(np.float32),
        "f8": rng.standard_normal(shape),
        # big-endian data and header
        "be_i2": rng.integers(-32768, 32768, shape).astype(">i2"),
        "be_f4": rng.standard_normal(shape).astype(">f4"),
    }
    for name, data in cases.items():
        for ext in (".nii", ".nii.gz"):
            hdr = nib.Nifti1Header(endianness=">" if name.startswith("be_") else "<")
            img = nib.Nifti1Image(data, np.diag(zooms + (1.0,)), header=hdr)
            img.header.set_data_dtype(data.dtype)
            img.header.set_zooms(zooms)
            save(d, name + ext.replace(".", "_"), ext, img)
    # Floats stored as int16 with a slope and intercept that nibabel chooses.
    scaled = rng.standard_normal(shape) * 100 + 20
    img = nib.Nifti1Image(scaled, np.diag(zooms + (1.0,)))
    img.header.set_data_dtype(np.int16)
    save(d, "scaled_nii", ".nii", img)
    # A 2-D image and a 4-D file whose fourth axis has size 1.
    save(d, "two_d_nii", ".nii", nib.Nifti1Image(rng.random((6, 7)).astype(np.float32), np.eye(4)))
    save(d, "four_d_nii", ".nii",
         nib.Nifti1Image(rng.random((3, 4, 2, 1)).astype(np.float32), np.eye(4)))


def save(d, stem, ext, img):
    path = os.path.join(d, stem + ext)
    nib.save(img, path)
    back = nib.load(path)
    data = np.asarray(back.get_fdata(dtype=np.float64))
    zooms = list(back.header.get_zooms())
    while data.ndim > 3 and data.shape[-1] == 1:  # the loader drops trailing size-1 axes
        data = data[..., 0]
        zooms = zooms[:-1]
    np.save(os.path.join(d, stem + ".want.npy"), reversed_axes(data))
    with open(os.path.join(d, stem + ".zooms.txt"), "w") as f:
        f.write(" ".join(repr(float(z)) for z in reversed(zooms[: data.ndim])))


def check(d):
    names = sorted(n for n in os.listdir(d) if n.startswith("o_") and ".nii" in n)
    assert names, "no o_*.nii files in " + d
    for name in names:
        stem = name.split(".nii")[0]
        img = nib.load(os.path.join(d, name))
        want = np.load(os.path.join(d, stem + ".npy"))
        with open(os.path.join(d, stem + ".spacing.txt")) as f:
            spacing = [float(s) for s in f.read().split()]
        got = reversed_axes(np.asarray(img.dataobj))
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("="), \
            (name, got.dtype, want.dtype)
        assert np.array_equal(got, want), name
        zooms = list(reversed(img.header.get_zooms()))
        assert np.allclose(zooms, spacing, rtol=1e-7, atol=0), (name, zooms, spacing)
        slope, inter = img.header.get_slope_inter()
        assert slope in (None, 1.0) and inter in (None, 0.0), (name, slope, inter)
    print("nibabel read %d files" % len(names))


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
