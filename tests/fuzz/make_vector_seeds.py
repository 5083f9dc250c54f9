#!/usr/bin/env python3
"""Writes the NIfTI vector-image seeds of the libFuzzer target fuzz_nifti (seeds_vector/):
NiftyReg-style cubic B-spline control-point grids (reg_f3d -cpp), each a 5-D vector image
(dim = (5, M_x, M_y, M_z, 1, R)) of world positions with intent_code 1007 (vector),
intent_name NREG_TRANS and intent_p1 = 2, the grid's transform a reference's scaled by the
spacing (2 voxels) with the origin one spacing before the reference's voxel 0, so that
fuzz_nifti's derived reference accepts the unmutated seeds and the conversion runs:

  niftyreg_3d.nii      3-D, 7 x 6 x 5 points, float32, sform and qform (NIfTI-1)
  niftyreg_2d.nii.gz   2-D, 6 x 5 points, 2 components, float64, qform only, gzip
  niftyreg_n2.nii      3-D, 6 x 5 x 5 points, float32, sform (NIfTI-2)

These are not in seeds/ (the corpus of mutate.py, whose every seed must load through
`splinetool prefilter`, which reads images only). run_libfuzzer.sh adds them to the nifti
corpus. Header fields are packed at the offsets of the NIfTI-1 and NIfTI-2 standards.

    /usr/bin/python3 tests/fuzz/make_vector_seeds.py
"""
import gzip
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "seeds_vector")


def positions(G, M, r, rng):
    """World positions G q of every control point q, plus a small deformation, as the file
    stores them: (R, M_z, M_y, M_x), one component after another."""
    q = np.stack(np.meshgrid(*[np.arange(m) for m in M], indexing="ij"), -1).astype(float)
    w = q @ G[:r, :r].T + G[:r, 3] + rng.uniform(-0.3, 0.3, q.shape)
    if r == 2:
        w = w[:, :, None, :]
    return np.ascontiguousarray(np.transpose(w, (3, 2, 1, 0)))


def header1(M, r, datatype, bitpix, G, qform, sform):
    h = bytearray(352)
    struct.pack_into("<i", h, 0, 348)
    dim = [5, M[0], M[1], M[2] if r == 3 else 1, 1, r, 1, 1]
    struct.pack_into("<8h", h, 40, *dim)
    struct.pack_into("<fff", h, 56, 2.0, 0.0, 0.0)  # intent_p1 = CUB_SPLINE_GRID
    struct.pack_into("<hhh", h, 68, 1007, datatype, bitpix)
    sp = [float(np.linalg.norm(G[:3, c])) for c in range(3)]
    struct.pack_into("<8f", h, 76, 1.0, *sp, 1.0, 1.0, 1.0, 1.0)
    struct.pack_into("<fff", h, 108, 352.0, 1.0, 0.0)
    h[123] = 2  # mm
    h[148:148 + 46] = b"Control point position from NiftyReg (reg_f3d)"
    struct.pack_into("<hh", h, 252, 1 if qform else 0, 1 if sform else 0)
    # The seeds' directions are the identity: quaternion 0, qoffset the origin.
    struct.pack_into("<6f", h, 256, 0.0, 0.0, 0.0, *G[:3, 3])
    if sform:
        struct.pack_into("<12f", h, 280, *G[:3, :].reshape(-1))
    h[328:338] = b"NREG_TRANS"
    h[344:348] = b"n+1\0"
    return bytes(h)


def header2(M, r, G):
    h = bytearray(544)
    struct.pack_into("<i", h, 0, 540)
    h[4:12] = b"n+2\0\r\n\032\n"
    struct.pack_into("<hh", h, 12, 16, 32)
    struct.pack_into("<8q", h, 16, 5, M[0], M[1], M[2], 1, r, 1, 1)
    struct.pack_into("<3d", h, 80, 2.0, 0.0, 0.0)  # intent_p1..3
    sp = [float(np.linalg.norm(G[:3, c])) for c in range(3)]
    struct.pack_into("<8d", h, 104, 1.0, *sp, 1.0, 1.0, 1.0, 1.0)
    struct.pack_into("<qdd", h, 168, 544, 1.0, 0.0)
    h[240:240 + 46] = b"Control point position from NiftyReg (reg_f3d)"
    struct.pack_into("<ii", h, 344, 0, 1)  # qform_code, sform_code
    struct.pack_into("<12d", h, 400, *G[:3, :].reshape(-1))
    struct.pack_into("<ii", h, 500, 2, 1007)  # xyzt_units mm, intent_code vector
    h[508:518] = b"NREG_TRANS"
    return bytes(h)


def grid_transform(voxel, r, delta=2):
    """A reference with voxel sizes `voxel` at origin (10, -5, 3): the grid's transform."""
    G = np.eye(4)
    for a in range(3):
        d = delta if a < r else 1
        G[a, a] = voxel[a] * d
        G[a, 3] = (10.0, -5.0, 3.0)[a] - (voxel[a] * d if a < r else 0)
    return G


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(16)
    G = grid_transform((1.0, 1.0, 2.0), 3)
    M = (7, 6, 5)
    data = positions(G, M, 3, rng).astype("<f4").tobytes()
    with open(os.path.join(OUT, "niftyreg_3d.nii"), "wb") as f:
        f.write(header1(M, 3, 16, 32, G, True, True) + data)
    G2 = grid_transform((0.75, 1.25, 1.0), 2)
    M2 = (6, 5)
    data = positions(G2, M2, 2, rng).astype("<f8").tobytes()
    with open(os.path.join(OUT, "niftyreg_2d.nii.gz"), "wb") as f:
        f.write(gzip.compress(header1(M2 + (1,), 2, 64, 64, G2, True, False) + data, mtime=0))
    M3 = (6, 5, 5)
    data = positions(G, M3, 3, rng).astype("<f4").tobytes()
    with open(os.path.join(OUT, "niftyreg_n2.nii"), "wb") as f:
        f.write(header2(M3, 3, G) + data)
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)), "bytes")


if __name__ == "__main__":
    main()
