"""Reads the viewer's screenshots (8-bit RGB PNG, as screenshot.cpp writes them) with numpy and
zlib only, for the Python viewer tests."""
import struct
import zlib

import numpy as np


def png_rgb(path):
    """Returns the image as an (H, W, 3) int32 array; raises ValueError for anything else."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(path + " is not a PNG")
    pos, idat, w, h, interlace = 8, b"", 0, 0, 0
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            interlace = body[12]
            if depth != 8 or colour != 2 or interlace != 0:
                raise ValueError(path + ": expected 8-bit RGB, not interlaced")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, w * 3 + 1)
    filters = raw[:, 0].astype(np.int64)
    if np.any(filters > 4):
        raise ValueError(path + ": unknown PNG row filter")
    return unfilter(filters, raw[:, 1:].reshape(h, w, 3).astype(np.int32))


def unfilter(filters, lines):
    """Undoes the PNG row filters (types 0-4 of the PNG specification, section 9) of an
    (H, W, 3) image of filtered bytes. A pixel's prediction uses its left (a), upper (b) and
    upper-left (c) neighbours, so every pixel of an anti-diagonal x + y = t depends only on the
    diagonals before it: the image is decoded one diagonal at a time, all of its pixels at
    once, whatever mix of filters its rows use."""
    h, w, _ = lines.shape
    stride = w + 1
    # A zero row above and a zero column left of the image (the specification's "0" for
    # neighbours outside it), flattened so that a, b and c are fixed offsets.
    out = np.zeros(((h + 1) * stride, 3), np.int32)
    flat = lines.reshape(h * w, 3)
    for t in range(h + w - 1):
        y = np.arange(max(0, t - w + 1), min(h - 1, t) + 1)
        x = t - y
        k = (y + 1) * stride + x + 1
        a, b, c = out[k - 1], out[k - stride], out[k - stride - 1]
        f = filters[y][:, None]
        p = a + b - c
        pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
        paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        pred = np.where(f == 0, 0, np.where(f == 1, a, np.where(f == 2, b, np.where(
            f == 3, (a + b) >> 1, paeth))))
        out[k] = (flat[y * w + x] + pred) & 255
    return out.reshape(h + 1, stride, 3)[1:, 1:].copy()
