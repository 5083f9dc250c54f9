#!/usr/bin/env python3
"""Writes the seed corpus of the mutation fuzzer (tests/fuzz/seeds/): one tiny valid file per
loader and variant. Everything is written byte by byte here from numpy arrays (deterministic),
except the JPEGs (Debian's cjpeg, package libjpeg-turbo-progs) and the video clip (the
project's own tools/make_clip, built as build*/video/make_clip).

    /usr/bin/python3 tests/fuzz/make_seeds.py [--out tests/fuzz/seeds]
        [--make-clip build-test/video/make_clip] [--cjpeg cjpeg]

The committed seeds were made with this script; rerun it only to change the corpus (the
fuzz case numbers refer to the corpus, so a new corpus gives new cases for the same --seed).
"""
import argparse
import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def ramp(h, w, c=0, hi=255):
    """A deterministic test image: gradients plus a little structure, uint values in [0, hi]."""
    y, x = np.mgrid[0:h, 0:w]
    chans = []
    for k in range(max(c, 1)):
        v = (x * (k + 3) + y * (5 - k) + (x * y) % 7) / float((w + h) * 5 + 7)
        chans.append(np.clip(np.round(v * hi), 0, hi))
    a = np.stack(chans, axis=-1)
    return a if c else a[..., 0]


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


# ---- NRRD ----
def nrrd(sizes, ntype, encoding, body, extra=(), data_file=None):
    lines = ["NRRD0004", "type: %s" % ntype, "dimension: %d" % len(sizes),
             "sizes: " + " ".join(str(s) for s in sizes), "endian: little",
             "encoding: %s" % encoding]
    lines += list(extra)
    if data_file:
        lines.append("data file: %s" % data_file)
    head = ("\n".join(lines) + "\n").encode()
    return head if data_file else head + b"\n" + body


# ---- NIfTI-1 ----
def nifti(a, datatype, bitpix, pixdim=(1.0, 1.0, 1.0)):
    hdr = bytearray(348)
    struct.pack_into("<i", hdr, 0, 348)
    dims = list(reversed(a.shape))
    dim = [len(dims)] + dims + [1] * (7 - len(dims))
    struct.pack_into("<8h", hdr, 40, *dim)
    struct.pack_into("<hh", hdr, 70, datatype, bitpix)
    pd = [1.0] + list(pixdim)[:len(dims)] + [1.0] * (7 - len(dims))
    struct.pack_into("<8f", hdr, 76, *pd)
    struct.pack_into("<fff", hdr, 108, 352.0, 1.0, 0.0)
    hdr[123] = 2  # mm
    hdr[344:348] = b"n+1\0"
    return bytes(hdr) + b"\0\0\0\0" + a.astype(a.dtype.newbyteorder("<")).tobytes()


# ---- PNG ----
def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_filter(rows, bpp):
    """Filters each row with type (row index mod 5), so the decoder meets all five filters."""
    out = bytearray()
    prev = bytes(len(rows[0]))
    for r, row in enumerate(rows):
        ft = r % 5
        f = bytearray([ft])
        for i, v in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][ft]
            f.append((v - pred) & 0xFF)
        out += f
        prev = row
    return bytes(out)


def png(pixels, color_type, depth, palette=None, trns=None):
    h, w = pixels.shape[:2]
    chans = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    dt = ">u2" if depth == 16 else "u1"
    flat = pixels.reshape(h, w * chans).astype(dt)
    rows = [flat[r].tobytes() for r in range(h)]
    bpp = chans * depth // 8
    out = b"\x89PNG\r\n\x1a\n"
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0))
    if palette is not None:
        out += png_chunk(b"PLTE", bytes(palette))
    if trns is not None:
        out += png_chunk(b"tRNS", bytes(trns))
    z = zlib.compress(png_filter(rows, bpp), 9)
    out += png_chunk(b"IDAT", z[:len(z) // 2]) + png_chunk(b"IDAT", z[len(z) // 2:])
    return out + png_chunk(b"IEND", b"")


# ---- BMP, TGA, GIF, HDR, PNM ----
def bmp24(rgb):
    h, w, _ = rgb.shape
    stride = (w * 3 + 3) & ~3
    body = bytearray()
    for r in range(h - 1, -1, -1):  # bottom-up
        row = rgb[r][:, ::-1].astype("u1").tobytes()  # BGR
        body += row + bytes(stride - len(row))
    head = struct.pack("<2sIHHI", b"BM", 54 + len(body), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(body), 2835, 2835, 0, 0)
    return head + info + bytes(body)


def tga(rgb, rle):
    h, w, _ = rgb.shape
    head = struct.pack("<BBBHHBHHHHBB", 0, 0, 10 if rle else 2, 0, 0, 0, 0, 0, w, h, 24, 0x20)
    bgr = rgb[..., ::-1].astype("u1")
    if not rle:
        return head + bgr.tobytes()
    body = bytearray()
    for r in range(h):  # one run of the row's first pixel, then raw packets
        row = bgr[r]
        body += bytes([0x80 | 1]) + row[0].tobytes()  # run of 2
        rest = row[2:]
        body += bytes([len(rest) - 1]) + rest.tobytes()
    return head + bytes(body)


def gif(idx, palette):
    """89a, 4-colour global table, LZW with a clear code every two codes (all codes 3 bits)."""
    h, w = idx.shape
    out = b"GIF89a" + struct.pack("<HHBBB", w, h, 0x81, 0, 0) + bytes(palette)
    out += b"\x21\xf9\x04\x00\x00\x00\x00\x00"  # graphic control extension
    out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0)
    codes = []
    px = [int(v) for v in idx.reshape(-1)]
    for i in range(0, len(px), 2):
        codes.append(4)  # clear
        codes += px[i:i + 2]
    codes.append(5)  # end of information
    bits, nbits, data = 0, 0, bytearray()
    for c in codes:
        bits |= c << nbits
        nbits += 3
        while nbits >= 8:
            data.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8
    if nbits:
        data.append(bits & 0xFF)
    out += b"\x02"
    for i in range(0, len(data), 255):
        block = data[i:i + 255]
        out += bytes([len(block)]) + bytes(block)
    return out + b"\x00\x3b"


def hdr(rgb_float):
    h, w, _ = rgb_float.shape
    out = bytearray(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %d +X %d\n" % (h, w))
    for v in rgb_float.reshape(-1, 3):
        m = float(max(v))
        if m < 1e-32:
            out += b"\0\0\0\0"
            continue
        mant, e = np.frexp(m)
        scale = mant * 256.0 / m
        out += bytes([int(v[0] * scale), int(v[1] * scale), int(v[2] * scale), e + 128])
    return bytes(out)


def cjpeg(tool, ppm_bytes, args, tmp):
    src = os.path.join(tmp, "in.ppm")
    dst = os.path.join(tmp, "out.jpg")
    with open(src, "wb") as f:
        f.write(ppm_bytes)
    subprocess.run([tool] + args + ["-outfile", dst, src], check=True)
    with open(dst, "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "seeds"))
    ap.add_argument("--make-clip", default=os.path.join(ROOT, "build-test/video/make_clip"))
    ap.add_argument("--cjpeg", default=shutil.which("cjpeg") or "cjpeg")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = {}

    g = ramp(6, 5, 0, 1000) / 1000.0
    files["f32.npy"] = g.astype("<f4")
    files["f64.npy"] = (g * 3 - 1).astype("<f8")
    files["u8.npy"] = ramp(6, 5, 0, 255).astype("u1")
    files["u16.npy"] = ramp(3, 4, 0, 65535).reshape(1, 3, 4).repeat(2, 0).astype("<u2")
    files["f32_channels.npy"] = (ramp(4, 5, 3, 1000) / 1000.0).astype("<f4")
    for name, a in list(files.items()):
        p = os.path.join(args.out, name)
        np.save(p, a)
        files[name] = None

    blobs = {}
    vol = (ramp(4, 5, 0, 100) / 10.0).astype("<f4")
    blobs["raw.nrrd"] = nrrd([5, 4], "float", "raw", vol.tobytes(),
                            ["spacings: 0.5 2", "kinds: domain domain"])
    rgb = ramp(4, 5, 3, 255).astype("u1")
    blobs["rgb_gzip.nrrd"] = nrrd([3, 5, 4], "uchar", "gzip", gz(rgb.tobytes()),
                                 ["kinds: RGB-color domain domain"])
    asc = ramp(3, 4, 0, 300).astype("i2") - 100
    blobs["ascii.nrrd"] = nrrd([4, 3], "short", "ascii",
                              ("\n".join(" ".join(str(v) for v in row) for row in asc) + "\n")
                              .encode())
    v3 = ramp(3, 4, 0, 65535).reshape(1, 3, 4).repeat(2, 0).astype("<u2")
    blobs["detached.nhdr"] = nrrd([4, 3, 2], "ushort", "raw", None,
                                 ["space directions: (1,0,0) (0,1,0) (0,0,2.5)"],
                                 data_file="detached.raw")
    blobs["detached.raw"] = v3.tobytes()

    blobs["i16.nii"] = nifti((ramp(4, 5, 0, 2000).astype("i2") - 1000).reshape(1, 4, 5)
                             .repeat(2, 0), 4, 16, (0.9, 0.9, 3.0))
    blobs["f32.nii.gz"] = gz(nifti((ramp(4, 5, 0, 100) / 7.0).astype("<f4"), 16, 32))

    blobs["grey8.png"] = png(ramp(6, 5, 0, 255), 0, 8)
    blobs["grey16.png"] = png(ramp(5, 6, 0, 65535), 0, 16)
    blobs["rgba8.png"] = png(ramp(5, 5, 4, 255), 6, 8)
    pal = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
    blobs["palette.png"] = png(ramp(6, 6, 0, 4), 3, 8, pal, [255, 128, 255, 255, 0])

    ppm = b"P6\n7 6\n255\n" + ramp(6, 7, 3, 255).astype("u1").tobytes()
    with tempfile.TemporaryDirectory() as tmp:
        blobs["baseline.jpg"] = cjpeg(args.cjpeg, ppm, ["-quality", "90"], tmp)
        blobs["progressive.jpg"] = cjpeg(args.cjpeg, ppm, ["-quality", "90", "-progressive"],
                                         tmp)
        blobs["grey_restart.jpg"] = cjpeg(args.cjpeg, ppm, ["-grayscale", "-restart", "1B"],
                                          tmp)

    blobs["rgb24.bmp"] = bmp24(ramp(5, 6, 3, 255))
    blobs["rgb.tga"] = tga(ramp(4, 5, 3, 255), False)
    blobs["rle.tga"] = tga(ramp(4, 5, 3, 255), True)
    blobs["four.gif"] = gif(ramp(5, 6, 0, 3).astype(int), [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0,
                                                          255])
    blobs["rgbe.hdr"] = hdr(ramp(4, 5, 3, 1000) / 250.0)
    blobs["grey.pgm"] = b"P5\n5 6\n255\n" + ramp(6, 5, 0, 255).astype("u1").tobytes()
    blobs["grey16.pgm"] = b"P5\n# sixteen\n4 3\n65535\n" + ramp(3, 4, 0, 65535).astype(
        ">u2").tobytes()
    blobs["rgb.ppm"] = ppm

    blobs["u16be.dat"] = ramp(5, 6, 0, 65535).reshape(1, 5, 6).repeat(2, 0).astype(
        ">u2").tobytes()
    blobs["f32_offset.dat"] = b"HEADER--16bytes!" + g.astype("<f4").tobytes()

    for name, data in blobs.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)

    clip = os.path.join(args.out, "clip.mp4")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    r = subprocess.run([args.make_clip, os.path.join(ROOT, "assets/ascent.png"), clip, "--width",
                        "32", "--height", "24", "--fps", "10", "--seconds", "0.3", "--crf", "35"],
                       capture_output=True, env=env)
    if r.returncode != 0:
        sys.exit("make_clip failed: %s" % r.stderr.decode(errors="replace"))
    for name in sorted(os.listdir(args.out)):
        print("%-22s %6d bytes" % (name, os.path.getsize(os.path.join(args.out, name))))


if __name__ == "__main__":
    main()
