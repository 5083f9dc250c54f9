#!/usr/bin/env python3
"""Writes assets/mri_t1_head.nrrd, the small real volume bundled with splineview.

Source: KmeansTest_T1UCharRaw.nii.gz from the InsightToolkit examples data (Debian 12 package
insighttoolkit5-examples, /usr/share/doc/insighttoolkit5-examples/examples/Data/), Apache-2.0
(see assets/README.md). Standard library only:

    apt-get install insighttoolkit5-examples      # or: apt-get download ... && dpkg -x ...
    tools/make_volume_asset.py [SOURCE.nii.gz] [OUT.nrrd]

Processing: the NIfTI-1 voxels (int16, all values 0..255, 128 x 128 x 62 as i, j, k) are kept
unchanged as uchar; only the j axis is reversed, so that row 0 of every k slice is the
superior end (the file's j axis runs inferior to superior, and images show row 0 at the top).
The output is NRRD0004 with gzip encoding, x (= i) fastest, 2 x 2 x 3 mm, oriented LIP in LPS
space directions (the viewer's patient frame; see assets/README.md). The result is
deterministic (gzip level 9, mtime 0).
"""
import gzip
import os
import struct
import sys

DEFAULT_SOURCE = ("/usr/share/doc/insighttoolkit5-examples/examples/Data/"
                  "KmeansTest_T1UCharRaw.nii.gz")


def read_nifti1(path):
    data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    endian = "<" if struct.unpack("<i", data[:4])[0] == 348 else ">"
    if struct.unpack(endian + "i", data[:4])[0] != 348:
        sys.exit(f"{path}: not a NIfTI-1 file")
    dim = struct.unpack(endian + "8h", data[40:56])
    datatype, bitpix = struct.unpack(endian + "hh", data[70:74])
    pixdim = struct.unpack(endian + "8f", data[76:108])
    vox_offset = int(struct.unpack(endian + "f", data[108:112])[0])
    scl_slope, scl_inter = struct.unpack(endian + "ff", data[112:120])
    if dim[0] != 3 or datatype != 4 or bitpix != 16:
        sys.exit(f"{path}: expected a 3-D int16 volume, got dim {dim} datatype {datatype}")
    if scl_slope not in (0.0, 1.0) or scl_inter != 0.0:
        sys.exit(f"{path}: unexpected intensity scaling {scl_slope} {scl_inter}")
    nx, ny, nz = dim[1:4]
    count = nx * ny * nz
    values = struct.unpack(f"{endian}{count}h", data[vox_offset:vox_offset + 2 * count])
    return (nx, ny, nz), pixdim[1:4], values


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SOURCE
    out = sys.argv[2] if len(sys.argv) > 2 else "assets/mri_t1_head.nrrd"
    (nx, ny, nz), spacing, values = read_nifti1(source)
    if min(values) < 0 or max(values) > 255:
        sys.exit(f"{source}: values outside 0..255")
    voxels = bytearray(nx * ny * nz)
    for k in range(nz):
        for j in range(ny):
            src = (k * ny + j) * nx
            dst = (k * ny + (ny - 1 - j)) * nx
            voxels[dst:dst + nx] = bytes(values[src:src + nx])
    header = (
        "NRRD0004\n"
        "# splineview bundled volume: T1-weighted MRI of a head, from the InsightToolkit\n"
        "# examples data (KmeansTest_T1UCharRaw.nii.gz), Apache-2.0; j axis reversed so that\n"
        "# row 0 is superior. See assets/README.md. The space lines (added later) state\n"
        "# the orientation: i to the left, j inferior, k posterior (LIP), 2 x 2 x 3 mm.\n"
        "type: uchar\n"
        "dimension: 3\n"
        f"sizes: {nx} {ny} {nz}\n"
        "space: left-posterior-superior\n"
        f"space directions: ({spacing[0]:g},0,0) (0,0,-{spacing[1]:g}) (0,{spacing[2]:g},0)\n"
        "space origin: (-127,-91.5,127)\n"
        "kinds: domain domain domain\n"
        "encoding: gzip\n"
        "\n")
    with open(out + ".tmp", "wb") as f:
        f.write(header.encode("ascii"))
        f.write(gzip.compress(bytes(voxels), compresslevel=9, mtime=0))
    os.replace(out + ".tmp", out)
    print(f"{out}: {nx}x{ny}x{nz} uchar, spacings {spacing[0]:g} {spacing[1]:g} {spacing[2]:g}")


if __name__ == "__main__":
    main()
