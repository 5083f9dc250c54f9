#!/usr/bin/env python3
"""Mutation fuzzer for splinetool's loaders (issue 12): mutates the seed corpus (seeds/) and
runs every case through the (ASan/UBSan) splinetool, as a line of a `splinetool batch
--keep-going --log` process (100 a process; a line that ends the process runs again alone, as do
the piped cases; tests/fuzz/README.md, "Batches"), judging each run by:

  crash    killed by a signal, a sanitizer report on stderr, or an exit status other than 0/1
           (2 only for a mutated --raw spec, a command-line error);
  hang     more than --timeout seconds (10) of wall time;
  memory   peak RSS (alone: wait4's ru_maxrss; in a batch: the line's growth) above the
           seed's own run (alone, or its line in the seeds' batch) + max(20 x the case file's
           size, --allowance MiB (64)), or above 1 GiB (the sanitizer's hard RSS limit and
           allocation cap are set to that, so a bomb stops there instead of swapping);
  message  exit 1 must print exactly one line on stderr that names the input and holds no
           control bytes (C0, DEL, C1) and only valid UTF-8;
  output   exit 0 must leave OUT (a loadable .npy, or a non-empty video); exit 1 must leave no
           new OUT; no '*.tmp-*' file may be left beside OUT in either case;
  damage   every other case pre-creates OUT with known bytes: after a failure they are intact;
  accepted a case that is certainly corrupt by the format's own rules (a .npy/.nii/raw file
           whose size no longer matches, a PNG critical chunk whose CRC no longer matches) must
           not exit 0;
  seed     the unmutated seed must load (exit 0); a format whose loader is not in the build yet
           ("unsupported file extension") is skipped with the reason printed; the seeds of the
           formats --out-of-core maps must also pass `info SEED --check-mapped`;
  mapped   `info CASE --check-mapped` found that the memory-mapped read of --out-of-core
           (sv::open_mapped) disagrees with the loader: it refuses a file the loader reads, or
           gives other dims, dtype, geometry or values.

Half of the .npy cases (i mod 4 = 2, 3) are piped into `prefilter - OUT` instead of named: the
standard-input path, whose one-line message must name "standard input". Every eighth case of
the formats --out-of-core maps (.npy, NRRD, NIfTI, raw, TIFF; i mod 8 = 5) runs `info CASE
--check-mapped` instead: the loader, the mapped header probe and the mapped read, compared.

Deterministic: case i of --seed S always gets the same mutations (independent of --jobs).

    /usr/bin/python3 tests/fuzz/mutate.py build-test/app/splinetool/splinetool
        [--seed 1] [--cases 600] [--jobs 1] [--formats npy,png,...] [--json out.json]
        [--findings DIR] [--case N]   (--case: run only case N, to reproduce a finding)

Exit status: 0 when every case meets every criterion, 1 otherwise (each failing case listed,
its file kept in the findings folder with the command and stderr), 2 on a usage error.
"""
import argparse
import concurrent.futures
import glob
import gzip
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")
MIB = 1 << 20
GIB = 1 << 30

# ---- the corpus: seed file, format group, extra arguments, companion files ----
# Formats whose loader may not be in the build yet; their cases are skipped (with the reason).
OPTIONAL = {"bmp", "tga", "gif", "hdr", "pnm"}
CORPUS = [
    ("f32.npy", "npy", []), ("f64.npy", "npy", []), ("u8.npy", "npy", []),
    ("u16.npy", "npy", []), ("f32_channels.npy", "npy", ["--channels"]),
    ("i16_be.npy", "npy", []), ("f16.npy", "npy", []), ("i64_fortran.npy", "npy", []),
    ("bool.npy", "npy", []),
    ("raw.nrrd", "nrrd", []), ("rgb_gzip.nrrd", "nrrd", []), ("ascii.nrrd", "nrrd", []),
    ("detached.nhdr", "nhdr", []),
    ("i16.nii", "nifti", []), ("f32.nii.gz", "nifti", []), ("oriented.nii", "nifti", []),
    ("n2_4d.nii", "nifti", ["--volume", "1"]), ("oriented.nrrd", "nrrd", []),
    ("grey8.png", "png", []), ("grey16.png", "png", []), ("rgba8.png", "png", []),
    ("palette.png", "png", []),
    ("baseline.jpg", "jpeg", []), ("progressive.jpg", "jpeg", []),
    ("grey_restart.jpg", "jpeg", []),
    ("rgb24.bmp", "bmp", []), ("rgb.tga", "tga", []), ("rle.tga", "tga", []),
    ("four.gif", "gif", []), ("rgbe.hdr", "hdr", []),
    ("grey.pgm", "pnm", []), ("grey16.pgm", "pnm", []), ("rgb.ppm", "pnm", []),
    ("u16be.dat", "raw", ["--raw", "2x5x6:u16:be"]),
    ("f32_offset.dat", "raw", ["--raw", "6x5:f32:offset=16"]),
    ("clip.mp4", "mp4", []),
    ("ct_i16.dcm", "dicom", []), ("mr_implicit.dcm", "dicom", []), ("rgb.dcm", "dicom", []),
    ("enhanced_mf.dcm", "dicom", []), ("rle.dcm", "dicom", []),
    ("grey16_strips.tif", "tiff", []), ("rgb8_deflate_be.tif", "tiff", []),
    ("f32_tiled.tif", "tiff", []), ("stack_imagej.tif", "tiff", []),
    ("bigtiff_i16.tif", "tiff", []), ("lzw_u8.tif", "tiff", []),
    ("rgb16_planar.tif", "tiff", []),
]
COMPANIONS = {"detached.nhdr": ["detached.raw"]}
FORMAT_ORDER = ["npy", "nrrd", "nhdr", "nifti", "png", "jpeg", "bmp", "tga", "gif", "hdr", "pnm",
                "raw", "mp4", "dicom", "tiff"]
CRITERIA = ["crash", "hang", "memory", "message", "output", "damage", "accepted", "seed",
            "mapped"]
# The formats whose files --out-of-core maps; `info --check-mapped` compares both reads.
MAPPED_FORMATS = {"npy", "nrrd", "nhdr", "nifti", "raw", "tiff"}
MAPPED_DISAGREES = b"the memory-mapped read disagrees with the loader"
# Cases a `splinetool batch` process runs (a sanitized splinetool costs about 0.15 s and 5,000
# page faults just to start and exit); a batch that dies costs at most this many lines again.
BATCH_LINES = 100

INTERESTING = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 16000,
               0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, 1 << 63, (1 << 64) - 1]
NUMBER_TEXT = ["0", "-1", "1", "2147483647", "2147483648", "4294967295", "4294967296",
               "9223372036854775808", "18446744073709551616", "1" + "9" * 300, "1e308",
               "-1e308", "nan", "inf", "3.5", "0x10", "+5", "05", "", "100000 100000 100000"]
CONTROL = [b"\x1b[31m", b"\x1b]0;owned\x07", b"\x0b", b"\x00", b"\r", b"\x7f", b"\xc2\x9b",
           b"\xff\xfe", b"\x08\x08\x08", b"\n\n"]


# ---- generic mutations (bytes in, bytes out) ----
def m_bitflip(d, r):
    d = bytearray(d)
    for _ in range(r.randint(1, 8)):
        if d:
            i = r.randrange(len(d))
            d[i] ^= 1 << r.randrange(8)
    return bytes(d)


def m_byteset(d, r):
    d = bytearray(d)
    for _ in range(r.randint(1, 4)):
        if d:
            d[r.randrange(len(d))] = r.choice([0, 0xFF, r.randrange(256)])
    return bytes(d)


def put_int(d, off, width, value, big):
    d = bytearray(d)
    v = value & ((1 << (8 * width)) - 1)
    raw = v.to_bytes(width, "big" if big else "little")
    d[off:off + width] = raw[:max(0, len(d) - off)]
    return bytes(d)


def m_interesting(d, r, fields=None, big=None):
    """An interesting integer at one of `fields` [(offset, width)] or anywhere in the first
    512 bytes."""
    if not d:
        return d
    if fields:
        off, width = r.choice(fields)
    else:
        width = r.choice([1, 2, 4, 8])
        off = r.randrange(min(len(d), 512))
    value = r.choice(INTERESTING)
    if r.random() < 0.2:
        value = -value
    return put_int(d, off, width, value, r.random() < 0.5 if big is None else big)


def m_truncate(d, r):
    if len(d) <= 1:
        return b""
    return d[:r.choice([0, 1, len(d) // 2, len(d) - 1, r.randrange(len(d))])]


def m_extend(d, r):
    n = r.choice([1, 7, 64, 4096])
    junk = r.choice([bytes(n), b"\xff" * n, bytes(r.randrange(256) for _ in range(n)),
                     (d * (n // max(len(d), 1) + 1))[:n]])
    return d + junk


def m_slice(d, r):
    """Duplicates or deletes a random span (a chunk/segment-agnostic version of the below)."""
    if len(d) < 2:
        return d
    a = r.randrange(len(d))
    b = min(len(d), a + r.choice([1, 4, 16, 128, len(d)]))
    return d[:b] + d[a:b] + d[b:] if r.random() < 0.5 else d[:a] + d[b:]


GENERIC = [m_bitflip, m_byteset, m_interesting, m_truncate, m_extend, m_slice]
SIZE_CHANGING = {m_truncate, m_extend}


# ---- text headers (NRRD, .npy dict, PNM, HDR) ----
def mutate_numbers(text, r):
    nums = list(re.finditer(rb"-?\d+(\.\d+)?(e[+-]?\d+)?", text))
    if not nums:
        return text + r.choice(NUMBER_TEXT).encode()
    m = r.choice(nums)
    return text[:m.start()] + r.choice(NUMBER_TEXT).encode() + text[m.end():]


def mutate_lines(text, r, extra_lines):
    lines = text.split(b"\n")
    op = r.randrange(5)
    i = r.randrange(len(lines))
    if op == 0:  # duplicate a line (a key given twice)
        lines.insert(i, lines[i])
    elif op == 1:  # delete a line
        del lines[i]
    elif op == 2:  # control bytes injected
        pos = r.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:pos] + r.choice(CONTROL) + lines[i][pos:]
    elif op == 3:  # a line replaced with a known-nasty one
        lines[i] = r.choice(extra_lines)
    else:  # a long value
        lines[i] = lines[i] + b"x" * r.choice([100, 5000])
    return b"\n".join(lines)


NRRD_LINES = [b"data file: /dev/zero", b"data file: /dev/urandom", b"data file: /etc",
              b"data file: LIST", b"data file: missing_%d.raw 1 3 1", b"encoding: bzip2",
              b"encoding: gzip", b"encoding: raw", b"encoding: hex", b"type: \x1b[2Jfloat",
              b"type: int64", b"type: block", b"endian: big", b"sizes: 100000 100000 100000",
              b"sizes: 4294967296 1", b"dimension: 16", b"dimension: 0", b"byte skip: -1",
              b"line skip: 3", b"kinds: RGBA-color domain domain", b"kinds: vector vector",
              b"space directions: (nan,0,0) (0,1e308,0) (0,0,-1)", b"spacings: 0 -1 nan",
              b"NRRD0009", b"\x00\x00\x00"]


def m_nrrd(d, r):
    cut = d.find(b"\n\n")
    head, body = (d, b"") if cut < 0 else (d[:cut], d[cut:])
    if r.random() < 0.4:
        return mutate_numbers(head, r) + body
    return mutate_lines(head, r, NRRD_LINES) + body


def m_text_header(d, r, lines_max=4):
    """Numbers or control bytes in the first lines (PNM, Radiance HDR headers)."""
    parts = d.split(b"\n", lines_max)
    head, rest = b"\n".join(parts[:-1]), parts[-1]
    if r.random() < 0.7:
        head = mutate_numbers(head, r)
    else:
        head = mutate_lines(head, r, [b"P7", b"#?RGBE", b"FORMAT=32-bit_rle_xyze",
                                      b"-Y 100000 +X 100000", b"+Y 6 -X 5"])
    return head + b"\n" + rest


NPY_DESCR = [b"'<f4'", b"'>f4'", b"'<f8'", b"'|u1'", b"'<u2'", b"'<i8'", b"'|O'", b"'<c8'",
             b"'|b1'", b"'<U4'", b"'<f2'", b"'\x1b[31m'", b"'<f4", b"''", b"'" + b"A" * 300 + b"'",
             b"'>i2'", b"'>f2'", b"'<u8'", b"'|i1'", b"'>i8'", b"'<M8[ns]'", b"'<f16'", b"'|V8'"]


def m_npy(d, r):
    if len(d) < 10 or not d.startswith(b"\x93NUMPY"):
        return m_bitflip(d, r)
    hl = struct.unpack_from("<H", d, 8)[0]
    head, body = d[10:10 + hl], d[10 + hl:]
    op = r.randrange(7)
    if op == 0:
        head = mutate_numbers(head, r)
    elif op == 1:
        head = re.sub(rb"'descr': *'[^']*'", b"'descr': " + r.choice(NPY_DESCR), head)
    elif op == 2:
        head = head.replace(b"False", r.choice([b"True", b"1", b"None", b"Fals"]))
    elif op == 3:  # a key twice, or one missing
        keys = [b"'descr': '<f8', ", b"'shape': (1000000000, 1000000000), ",
                b"'fortran_order': False, ", b"'extra': 1, "]
        head = head.replace(b"{", b"{" + r.choice(keys), 1) if r.random() < 0.6 else \
            re.sub(rb"'shape': *\([^)]*\), *", b"", head)
    elif op == 4:
        pos = r.randrange(len(head) + 1)
        head = head[:pos] + r.choice(CONTROL) + head[pos:]
    elif op == 5:  # the header length field lies
        return put_int(d, 8, 2, r.choice(INTERESTING), False)
    else:  # version bytes
        return put_int(d, 6, 2, r.choice([0x0002, 0x0003, 0x0100, 0x00FF, 0]), False)
    if r.random() < 0.8:  # keep the length field honest, so the parser reads the new text
        return d[:8] + struct.pack("<H", len(head)) + head + body
    return d[:10] + head + body


# ---- PNG chunks (CRC fixed up, so mutations reach past the checksum) ----
def png_chunks(d):
    out, i = [], 8
    while i + 12 <= len(d):
        n = struct.unpack_from(">I", d, i)[0]
        if i + 12 + n > len(d):
            break
        out.append([d[i + 4:i + 8], d[i + 8:i + 8 + n]])
        i += 12 + n
    return out


def png_join(chunks):
    out = b"\x89PNG\r\n\x1a\n"
    for kind, data in chunks:
        out += struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return out


def inflate(data, wbits, limit=MIB):
    """At most `limit` bytes of a zlib (wbits 15) or gzip (31) stream, or None when it is not
    one. Bounded so that a bomb from an earlier mutation never grows this process (its peak
    RSS would be inherited by the children it starts and read as theirs)."""
    try:
        out = zlib.decompressobj(wbits).decompress(data, limit)
    except zlib.error:
        return None
    return out or None


BOMB_CACHE = {}


def bomb(n_mib):
    """zlib and gzip streams of n_mib MiB of zeros (about 1 KiB per MiB), made once."""
    if n_mib not in BOMB_CACHE:
        z = zlib.compressobj(9)
        gz = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = bytes(MIB)
        zb, gb = [], []
        for _ in range(n_mib):
            zb.append(z.compress(chunk))
            gb.append(gz.compress(chunk))
        BOMB_CACHE[n_mib] = (b"".join(zb) + z.flush(), b"".join(gb) + gz.flush())
    return BOMB_CACHE[n_mib]


def m_png(d, r):
    chunks = png_chunks(d)
    if not chunks:
        return m_bitflip(d, r)
    op = r.randrange(7)
    i = r.randrange(len(chunks))
    if op == 0:  # IHDR fields
        ihdr = chunks[0][1]
        f = r.choice([(0, 4), (4, 4), (8, 1), (9, 1), (10, 1), (11, 1), (12, 1)])
        if f[1] == 4:
            v = r.choice([0, 1, 16000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 20])
        else:
            v = r.choice([0, 1, 2, 3, 4, 6, 7, 8, 16, 255])
        chunks[0][1] = put_int(ihdr, f[0], f[1], v, True)
    elif op == 1:
        del chunks[i]
    elif op == 2:
        chunks.insert(i, list(chunks[i]))
    elif op == 3:
        j = r.randrange(len(chunks))
        chunks[i], chunks[j] = chunks[j], chunks[i]
    elif op == 4:  # chunk data mutated, CRC recomputed
        chunks[i][1] = r.choice([m_bitflip, m_byteset, m_truncate, m_extend])(chunks[i][1], r)
    elif op == 5:  # image data: inflate, mutate, deflate again
        idat = b"".join(c[1] for c in chunks if c[0] == b"IDAT")
        raw = inflate(idat, 15) or idat
        raw = r.choice([m_bitflip, m_byteset, m_truncate, m_extend, m_slice])(raw, r)
        chunks = [c for c in chunks if c[0] != b"IDAT"]
        chunks.insert(len(chunks) - 1 if chunks else 0, [b"IDAT", zlib.compress(raw, 9)])
    else:  # decompression bomb: 256 MiB of zeros behind a small image
        chunks = [c for c in chunks if c[0] != b"IDAT"]
        chunks.insert(len(chunks) - 1 if chunks else 0, [b"IDAT", bomb(256)[0]])
    return png_join(chunks)


def png_crc_broken(d):
    """True when some critical chunk's stored CRC does not match (libpng must refuse)."""
    i = 8
    while i + 12 <= len(d):
        n = struct.unpack_from(">I", d, i)[0]
        if i + 12 + n > len(d):
            return False
        kind = d[i + 4:i + 8]
        crc = struct.unpack_from(">I", d, i + 8 + n)[0]
        if kind in (b"IHDR", b"PLTE", b"IDAT", b"IEND") and \
                zlib.crc32(d[i + 4:i + 8 + n]) & 0xFFFFFFFF != crc:
            return True
        i += 12 + n
    return False


# ---- JPEG segments ----
def jpeg_segments(d):
    """[(start, end, marker)] of the segments before the first scan, then the rest."""
    segs, i = [], 2
    while i + 4 <= len(d) and d[i] == 0xFF:
        marker = d[i + 1]
        n = struct.unpack_from(">H", d, i + 2)[0]
        segs.append((i, i + 2 + n, marker))
        if marker == 0xDA:
            break
        i += 2 + n
    return segs


def m_jpeg(d, r):
    segs = jpeg_segments(d)
    if not segs:
        return m_bitflip(d, r)
    op = r.randrange(6)
    a, b, marker = r.choice(segs)
    sof = [s for s in segs if s[2] in (0xC0, 0xC1, 0xC2)]
    if op == 0 and sof:  # frame header: height, width, precision, component count
        s = sof[0][0]
        f = r.choice([(s + 5, 2, None), (s + 7, 2, None), (s + 4, 1, [0, 1, 12, 16, 255]),
                      (s + 9, 1, [0, 2, 4, 255])])
        v = r.choice(f[2] or [0, 1, 0x7FFF, 0xFFFF, 16000, 0x8000])
        return put_int(d, f[0], f[1], v, True)
    if op == 1:  # a segment deleted (DQT, DHT, SOF, SOS ...)
        return d[:a] + d[b:]
    if op == 2:  # a segment duplicated
        return d[:b] + d[a:b] + d[b:]
    if op == 3:  # segment length lies
        return put_int(d, a + 2, 2, r.choice([0, 1, 2, 0xFFFF, b - a + 10]), True)
    if op == 4:  # scan data cut, end marker appended
        start = segs[-1][1]
        return d[:r.randint(start, max(start, len(d) - 2))] + b"\xff\xd9"
    d2 = bytearray(d)  # scan data bytes replaced
    start = segs[-1][1]
    for _ in range(r.randint(1, 6)):
        if start < len(d2) - 2:
            d2[r.randrange(start, len(d2) - 2)] = r.choice([0xFF, 0x00, r.randrange(256)])
    return bytes(d2)


# ---- gzip payloads (.nii.gz, gzip NRRD) ----
def regzip(d, r, inner):
    """Inflates, mutates the payload with `inner`, deflates again; or lies in the trailer; or
    appends a bomb of zeros to the payload."""
    raw = inflate(d, 31)
    if raw is None:
        return m_bitflip(d, r)
    op = r.randrange(4)
    if op == 0:
        return gzip.compress(inner(raw, r), 6, mtime=0)
    if op == 1:  # the ISIZE trailer lies
        return d[:-4] + struct.pack("<I", r.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF]))
    if op == 2:  # a second gzip member: the payload inflates to 256 MiB more than it should
        return gzip.compress(raw, 6, mtime=0) + bomb(256)[1]
    return gzip.compress(raw[:r.randrange(len(raw) + 1)], 6, mtime=0)  # cut payload


def nifti_fields(d, r):
    fields = [(0, 4), (40, 2), (42, 2), (44, 2), (46, 2), (48, 2), (70, 2), (72, 2)]
    if r.random() < 0.3:  # float fields: vox_offset, scl_slope, scl_inter, pixdim
        off = r.choice([108, 112, 116, 80, 84, 88])
        v = r.choice([0.0, -1.0, 1e30, -1e30, float("nan"), float("inf"), 3.4e38, 1e-40,
                      2.0 ** 31, 353.0])
        d = bytearray(d)
        d[off:off + 4] = struct.pack("<f", v)
        return bytes(d)
    return m_interesting(d, r, fields, big=False)


def m_nifti_plain(d, r):
    return nifti_fields(d, r) if r.random() < 0.5 else r.choice(GENERIC)(d, r)


def m_nifti_gz(d, r):
    return regzip(d, r, m_nifti_plain) if r.random() < 0.7 else r.choice(GENERIC)(d, r)


def m_nrrd_any(d, r):
    if b"encoding: gzip" in d and r.random() < 0.5:
        cut = d.find(b"\n\n")
        head, body = d[:cut + 2], d[cut + 2:]
        return head + regzip(body, r, lambda x, rr: rr.choice(GENERIC)(x, rr))
    return m_nrrd(d, r) if r.random() < 0.6 else r.choice(GENERIC)(d, r)


BMP_FIELDS = [(2, 4), (10, 4), (14, 4), (18, 4), (22, 4), (26, 2), (28, 2), (30, 4), (34, 4),
              (46, 4)]
TGA_FIELDS = [(0, 1), (1, 1), (2, 1), (3, 2), (5, 2), (7, 1), (12, 2), (14, 2), (16, 1),
              (17, 1)]
GIF_FIELDS = [(6, 2), (8, 2), (10, 1), (25 + 8 + 5, 2), (25 + 8 + 7, 2), (25 + 8 + 9, 1),
              (25 + 8 + 10, 1)]


def fields_or_generic(fields):
    def mut(d, r):
        if r.random() < 0.5:
            return m_interesting(d, r, fields, big=False)
        return r.choice(GENERIC)(d, r)
    return mut


def m_mp4(d, r):
    if r.random() < 0.4:  # box sizes and types at the top level
        boxes, i = [], 0
        while i + 8 <= len(d):
            n = struct.unpack_from(">I", d, i)[0]
            boxes.append(i)
            if n < 8:
                break
            i += n
        if not boxes:
            return r.choice(GENERIC)(d, r)
        off = r.choice(boxes)
        if r.random() < 0.7:
            return put_int(d, off, 4, r.choice(INTERESTING), True)
        return d[:off + 4] + r.choice([b"free", b"moov", b"mdat", b"\0\0\0\0"]) + d[off + 8:]
    return r.choice(GENERIC)(d, r)


def dicom_elements(d):
    """(tag offset, length offset, length width, value offset, value length) of the elements
    of an explicit or implicit VR little-endian Part 10 file, sequences entered (best effort:
    stops at the first thing it cannot follow)."""
    out = []
    if len(d) < 132 or d[128:132] != b"DICM":
        return out
    implicit = b"1.2.840.10008.1.2\0" in d[132:400] and b"1.2.840.10008.1.2.1" not in d[132:400]
    i = 132
    while i + 8 <= len(d):
        group, _ = struct.unpack_from("<HH", d, i)
        vr = d[i + 4:i + 6]
        if group == 0xFFFE:  # item or delimiter: enter it
            out.append((i, i + 4, 4, i + 8, 0))
            i += 8
            continue
        if (implicit and group != 2) or not vr.isalpha():
            n, lo, head = struct.unpack_from("<I", d, i + 4)[0], i + 4, 8
            width = 4
        elif vr in (b"OB", b"OW", b"SQ", b"UN", b"UT", b"OF", b"OD", b"OL", b"UC", b"UR"):
            if i + 12 > len(d):
                break
            n, lo, head, width = struct.unpack_from("<I", d, i + 8)[0], i + 8, 12, 4
        else:
            n, lo, head, width = struct.unpack_from("<H", d, i + 6)[0], i + 6, 8, 2
        out.append((i, lo, width, i + head, 0 if n == 0xFFFFFFFF else n))
        if n == 0xFFFFFFFF or vr == b"SQ":
            i += head  # step into the sequence
        else:
            i += head + n
    return out


DICOM_TEXT = [b"-1", b"0", b"1e308", b"nan", b"inf", b"65536", b"1\\2\\3", b"", b"\\\\",
              b"MONOCHROME1", b"YBR_FULL", b"PALETTE COLOR", b"RGB", b"1.2.840.10008.1.2.2",
              b"1.2.840.10008.1.2.1.99", b"1.2.840.10008.1.2.4.50", b"1.2.840.10008.1.2.4.90",
              b"100000", b"4294967296"]


def m_dicom(d, r):
    """A length, a value or a tag of one element; else a generic mutation."""
    els = dicom_elements(d)
    if not els or r.random() < 0.3:
        return r.choice(GENERIC)(d, r)
    tag_off, len_off, width, val_off, n = r.choice(els)
    op = r.randrange(4)
    if op == 0:  # the length
        return put_int(d, len_off, width, r.choice(INTERESTING), False)
    if op == 1 and n:  # a value replaced by text (numbers, UIDs, photometric names)
        text = r.choice(DICOM_TEXT)
        text += b" " * (len(text) % 2)
        return d[:val_off] + text + d[val_off + n:]
    if op == 2 and n:  # an integer inside the value (US fields: Rows, BitsAllocated, ...)
        w = r.choice([1, 2, 4])
        return put_int(d, val_off + r.randrange(max(1, n - w + 1)), w, r.choice(INTERESTING),
                       False)
    return put_int(d, tag_off, 4, r.choice([0x00107FE0, 0xE000FFFE, 0xE00DFFFE, 0xE0DDFFFE,
                                            0x00100028, r.randrange(1 << 32)]), False)


def tiff_fields(d):
    """(big_endian, [(offset, width)]) of a TIFF's header pointer, every IFD's entry count,
    entries (tag, type, count, value or offset) and next-IFD pointer, and the values of
    out-of-line LONG/SHORT arrays (strip offsets and byte counts); first 8 IFDs."""
    if len(d) < 8 or d[:2] not in (b"II", b"MM"):
        return False, []
    bo = "<" if d[:2] == b"II" else ">"
    big = struct.unpack_from(bo + "H", d, 2)[0] == 43
    osz, cnt_w, ent = (8, 8, 20) if big else (4, 2, 12)
    fields = [(4 if not big else 8, osz)]
    ptr = struct.unpack_from(bo + ("Q" if big else "I"), d, 8 if big else 4)[0]
    seen = set()
    while ptr and ptr not in seen and len(seen) < 8 and ptr + cnt_w <= len(d):
        seen.add(ptr)
        n = struct.unpack_from(bo + ("Q" if big else "H"), d, ptr)[0]
        fields.append((ptr, cnt_w))
        base = ptr + cnt_w
        for k in range(min(n, 64)):
            e = base + k * ent
            if e + ent > len(d):
                break
            _, typ, count = struct.unpack_from(bo + "HH" + ("Q" if big else "I"), d, e)
            fields += [(e, 2), (e + 2, 2), (e + 4, osz), (e + 4 + osz, osz)]
            size = {3: 2, 4: 4, 16: 8}.get(typ, 0) * count
            if size > osz:  # out-of-line array: its elements
                at = struct.unpack_from(bo + ("Q" if big else "I"), d, e + 4 + osz)[0]
                w = {3: 2, 4: 4, 16: 8}[typ]
                fields += [(at + w * i, w) for i in range(min(count, 16)) if at + w * i + w
                           <= len(d)]
        nxt = base + n * ent
        if nxt + osz > len(d):
            break
        fields.append((nxt, osz))
        ptr = struct.unpack_from(bo + ("Q" if big else "I"), d, nxt)[0]
    return bo == ">", fields


# Values that select other code paths when written into a TIFF field: compressions (JPEG,
# OJPEG, LZMA, zstd, WebP, CCITT), photometrics (palette, CMYK, YCbCr, CIELab), sample formats
# (void, complex), bit depths, tags (SubIFDs, ImageDepth, Orientation), types (RATIONAL, LONG8).
TIFF_VALUES = [3, 4, 5, 6, 7, 8, 12, 16, 24, 32773, 34925, 50000, 50001, 32946, 34887, 330,
               32997, 274, 0xFFFF, 1 << 31]


def m_tiff(d, r):
    """An interesting or TIFF-specific integer at a header, IFD or strip-array field; else a
    generic mutation."""
    big_endian, fields = tiff_fields(d)
    if not fields or r.random() < 0.3:
        return r.choice(GENERIC)(d, r)
    if r.random() < 0.3:
        off, width = r.choice(fields)
        return put_int(d, off, width, r.choice(TIFF_VALUES), big_endian)
    return m_interesting(d, r, fields, big=big_endian)


RAW_SPEC_NUMS = ["0", "1", "4294967296", "18446744073709551615", "1" + "0" * 40, "-5", "2.5",
                 "nan", "1e308", ""]


def m_raw_spec(spec, r):
    op = r.randrange(4)
    if op == 0:
        return re.sub(r"\d+", lambda m: r.choice(RAW_SPEC_NUMS) if r.random() < 0.5 else
                      m.group(0), spec)
    if op == 1:
        parts = spec.split(":")
        parts[min(1, len(parts) - 1)] = r.choice(["u32", "f16", "", "\x1b[31mu8", "U8",
                                                   "f32f32"])
        return ":".join(parts)
    if op == 2:
        return spec + r.choice([":be:le", ":offset=99999999999999", ":spacing=0x0x0",
                                ":spacing=nanxinfx1", ":offset=-1", ":", "::", ":foo=1",
                                ":spacing=1e400x1x1"])
    pos = r.randrange(len(spec) + 1)
    return spec[:pos] + r.choice(["\x1b[2J", "\x0b", "\x7f", "x", "xx0", "\u00e9"]) + spec[pos:]


FORMAT_MUTATORS = {
    "npy": lambda d, r: m_npy(d, r) if r.random() < 0.5 else r.choice(GENERIC)(d, r),
    "nrrd": m_nrrd_any,
    "nhdr": lambda d, r: m_nrrd(d, r) if r.random() < 0.7 else r.choice(GENERIC)(d, r),
    "png": lambda d, r: m_png(d, r) if r.random() < 0.6 else r.choice(GENERIC)(d, r),
    "jpeg": lambda d, r: m_jpeg(d, r) if r.random() < 0.6 else r.choice(GENERIC)(d, r),
    "bmp": fields_or_generic(BMP_FIELDS),
    "tga": fields_or_generic(TGA_FIELDS),
    "gif": fields_or_generic(GIF_FIELDS),
    "hdr": lambda d, r: m_text_header(d, r) if r.random() < 0.5 else r.choice(GENERIC)(d, r),
    "pnm": lambda d, r: m_text_header(d, r, 3) if r.random() < 0.5 else r.choice(GENERIC)(d, r),
    "raw": lambda d, r: r.choice(GENERIC)(d, r),
    "mp4": m_mp4,
    "dicom": m_dicom,
    "tiff": m_tiff,
}


def make_case(seed, index, corpus, data):
    """Case `index` of run `seed`: (entry, mutated bytes, names of the mutations, spec or
    None, must_reject)."""
    r = random.Random("%d:%d" % (seed, index))
    name, fmt, extra = corpus[index % len(corpus)]
    d = data[name]
    names = []
    spec = None
    must_reject = False
    if fmt == "nifti" and name.endswith(".gz"):
        mut = m_nifti_gz
    elif fmt == "nifti":
        mut = m_nifti_plain
    else:
        mut = FORMAT_MUTATORS[fmt]
    if fmt == "raw" and r.random() < 0.25:  # the --raw spec itself is mutated
        spec = m_raw_spec(extra[1], r)
        names.append("raw-spec")
    else:
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            tag = []  # the generic mutation that ran, if one did
            d = mut(d, _Recorder(r, tag))
            names.append(tag[0][2:] if tag else fmt + "-specific")
        # A size change alone makes these certainly corrupt: their size must match the header
        # (or the --raw spec) exactly.
        exact = fmt in ("npy", "raw") or (fmt == "nifti" and not name.endswith(".gz"))
        must_reject = exact and len(names) == 1 and names[0] in ("truncate", "extend")
    if fmt == "png" and png_crc_broken(d):
        must_reject = True
        names.append("crc-broken")
    return (name, fmt, extra), d, names, spec, must_reject


class _Recorder:
    """Wraps the case's random generator: records the first mutation function chosen with
    choice(), so the report can say what was done."""

    def __init__(self, base, tag):
        self._base = base
        self._tag = tag

    def __getattr__(self, name):
        return getattr(self._base, name)

    def choice(self, seq):
        v = self._base.choice(seq)
        if callable(v) and not self._tag and getattr(v, "__name__", "").startswith("m_"):
            self._tag.append(v.__name__)
        return v


# ---- running one command ----
SANITIZER = re.compile(rb"ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|"
                       rb"runtime error:|SUMMARY: (Address|Undefined|Leak)")
SANITIZER_MEMORY = re.compile(rb"rss limit exhausted|allocation-size-too-big|"
                              rb"requested allocation size|out of memory|allocator is out of")


def tool_env():
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ("exitcode=86:detect_leaks=1:hard_rss_limit_mb=1024:"
                           "max_allocation_size_mb=1024:allocator_may_return_null=0:"
                           "abort_on_error=0:symbolize=1:handle_abort=1")
    env["UBSAN_OPTIONS"] = "exitcode=87:print_stacktrace=1:halt_on_error=1"
    env["LSAN_OPTIONS"] = "exitcode=88"
    env["SPLINEVIEW_FFMPEG_LOG"] = "0"
    return env


def run_tool(argv, cwd, timeout, stdin_path=None):
    """Runs argv in cwd (standard input: stdin_path, else nothing); returns (status, stderr
    bytes, seconds, peak RSS bytes, timed_out). status: the exit code, or -signal."""
    err_path = os.path.join(cwd, ".stderr")
    env = tool_env()
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out, \
            open(stdin_path or os.devnull, "rb") as inp:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, stdin=inp,
                             env=env, start_new_session=True)
        timed_out = []

        def kill():
            timed_out.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, wstatus, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(wstatus)
        secs = time.monotonic() - t0
    with open(err_path, "rb") as f:
        stderr = f.read()
    os.unlink(err_path)
    return p.returncode, stderr, secs, ru.ru_maxrss * 1024, bool(timed_out)


def batch_quote(word):
    """`word` as one word of a `splinetool batch` line."""
    if word and re.fullmatch(r"[A-Za-z0-9_./,:=+@%^-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def run_batch(tool, lines, cwd, timeout):
    """Runs the command lines (argument lists, relative to cwd) through one `splinetool batch
    --keep-going --log` process with run_tool's environment, stderr in a file; stops it (the
    whole process group) when no command has ended for `timeout` seconds. Returns (status,
    records, timed_out, tail): the exit status (or -signal), whether the watchdog stopped it,
    what stderr holds after the last command that ended, and, for every command that ended, its
    log record with its own stderr ("stderr": the bytes between the previous command's end
    and its own, the batch's "batch FILE line N: " taken out of the error line), its peak
    resident growth ("rss": bytes above the process's size when it started, or above it in a
    child it waited for, e.g. an isolated decoder) and "timed_out" (over `timeout`)."""
    cmd_path = os.path.join(cwd, ".batch.txt")
    log_path = os.path.join(cwd, ".batch.log")
    err_path = os.path.join(cwd, ".batch.err")
    with open(cmd_path, "w") as f:
        for argv in lines:
            f.write(" ".join(batch_quote(a) for a in argv) + "\n")
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out, \
            open(os.devnull, "rb") as inp:
        p = subprocess.Popen([tool, "batch", ".batch.txt", "--keep-going", "--log",
                              ".batch.log"], cwd=cwd, stdout=out, stderr=err, stdin=inp,
                             env=tool_env(), start_new_session=True)
        timed_out = False
        size, last = -1, time.monotonic()
        while p.poll() is None:
            time.sleep(0.05)
            now = time.monotonic()
            try:
                grown = os.path.getsize(log_path)
            except OSError:
                grown = -1
            if grown != size:
                size, last = grown, now
            elif now - last > timeout:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
                break
        status = p.returncode
    with open(err_path, "rb") as f:
        stderr = f.read()
    records = []
    if os.path.exists(log_path):
        with open(log_path, "rb") as f:
            for raw in f.read().split(b"\n"):
                try:
                    records.append(json.loads(raw))
                except ValueError:
                    break  # the last line, cut by a crash
    begin, children = 0, 0
    for r in records:
        own = stderr[begin:r["stderr_end"]]
        begin = r["stderr_end"]
        r["stderr"] = own.replace(b"splinetool: batch .batch.txt line %d: " % r["line"],
                                  b"splinetool: ")
        start = (r["start_rss_kib"] or 0) * 1024
        growth = max(0, (r["peak_rss_kib"] or 0) * 1024 - start)
        child = (r["children_peak_rss_kib"] or 0) * 1024
        if child > children:  # a child of this command set a new peak
            growth = max(growth, child - start)
            children = child
        r["rss"] = growth
        r["timed_out"] = r["seconds"] > timeout
    for name in (cmd_path, log_path, err_path):
        os.unlink(name)
    return status, records, timed_out, stderr[begin:]


SENTINEL = b"SENTINEL: an existing OUT that a failed run must leave byte for byte.\n" * 4


def control_free(msg):
    """True when msg (without its final newline) is valid UTF-8 without C0/DEL/C1 controls."""
    try:
        text = msg.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


def judge(entry, case_name, out_name, status, stderr, secs, rss, timed_out, workdir,
          precreated, baseline_rss, size, spec_mutated, must_reject, opts):
    """Returns [(criterion, detail)] for one finished run."""
    fails = []
    _, fmt, _ = entry
    out_path = os.path.join(workdir, out_name) if out_name else None
    if timed_out:
        fails.append(("hang", "killed after %.0f s" % opts.timeout))
    if SANITIZER_MEMORY.search(stderr):
        fails.append(("memory", "sanitizer memory limit: " + first_line(stderr)))
    elif SANITIZER.search(stderr):
        fails.append(("crash", "sanitizer report: " + sanitizer_line(stderr)))
    elif not timed_out and status < 0:
        fails.append(("crash", "killed by signal %d" % -status))
    elif not timed_out and status not in (0, 1) and not (status == 2 and spec_mutated):
        fails.append(("crash", "exit status %d: %s" % (status, first_line(stderr))))
    limit = baseline_rss + max(20 * size, opts.allowance * MIB)
    if rss > min(limit, GIB) and not any(c == "memory" for c, _ in fails):
        fails.append(("memory", "peak RSS %.1f MiB > %.1f MiB (seed run %.1f MiB + max(20 x "
                      "%d B, %d MiB), at most 1 GiB)" % (rss / MIB, min(limit, GIB) / MIB,
                                                         baseline_rss / MIB, size,
                                                         opts.allowance)))
    if status in (1, 2) and not timed_out:
        lines = stderr.split(b"\n")
        if stderr.count(b"\n") != 1 or not stderr.endswith(b"\n"):
            fails.append(("message", "%d lines on stderr: %r" % (len(lines) - 1,
                                                                 stderr[:300])))
        elif not control_free(stderr[:-1]):
            fails.append(("message", "control or non-UTF-8 bytes: %r" % stderr[:300]))
        elif status == 1 and case_name.encode() not in stderr:
            fails.append(("message", "does not name %s: %r" % (case_name, stderr[:300])))
        elif status == 2 and b"--raw" not in stderr:
            fails.append(("message", "does not name --raw: %r" % stderr[:300]))
    if MAPPED_DISAGREES in stderr:
        fails.append(("mapped", first_line(stderr)))
    left = [f for f in os.listdir(workdir) if ".tmp-" in f]
    if left:
        fails.append(("output", "temporary files left: %s" % ", ".join(left)))
    exists = out_path is not None and os.path.exists(out_path)
    if status == 0:
        if out_path is None:
            pass  # info: no OUT
        elif not exists:
            fails.append(("output", "exit 0 without OUT"))
        else:
            with open(out_path, "rb") as f:
                got = f.read()
            if got == SENTINEL:
                fails.append(("output", "exit 0 but OUT still holds the old bytes"))
            elif out_name.endswith(".npy") and not got.startswith(b"\x93NUMPY"):
                fails.append(("output", "exit 0 but OUT is not a .npy file"))
            elif len(got) == 0:
                fails.append(("output", "exit 0 but OUT is empty"))
        if must_reject:
            fails.append(("accepted", "a corrupt file (by the format's rules) loaded, exit 0"))
    elif status != 0 and not timed_out and out_path is not None:
        if precreated:
            with open(out_path, "rb") as f:
                if f.read() != SENTINEL:
                    fails.append(("damage", "the existing OUT was changed by a failed run"))
        elif exists:
            fails.append(("output", "exit %d but OUT was created" % status))
    return fails


def first_line(b):
    return b.split(b"\n", 1)[0][:200].decode("utf-8", "replace")


def sanitizer_line(b):
    for line in b.split(b"\n"):
        if SANITIZER.search(line):
            return line[:200].decode("utf-8", "replace")
    return first_line(b)


def checks_mapped(entry, index, spec, via_stdin):
    """Whether case `index` runs `info CASE --check-mapped` (every eighth case of a mapped
    format; never a piped one or one whose --raw spec is mutated)."""
    return entry[1] in MAPPED_FORMATS and spec is None and not via_stdin and index % 8 == 5


def command_for(entry, case_name, spec, via_stdin=False, check_mapped=False, folder=""):
    """The command line and OUT's name (None for info, which writes no OUT); the files' names
    in the command are under `folder` (a batch runs every case in a folder of its own)."""
    name, fmt, extra = entry
    at = (folder + "/") if folder else ""
    if fmt == "mp4":
        return ["upscale-video", at + case_name, at + "out.mp4", "--scale", "1",
                "--quiet"], "out.mp4"
    args = list(extra)
    if spec is not None:
        args = ["--raw", spec]
    if check_mapped:
        return ["info", at + case_name, "--check-mapped"] + args, None
    return ["prefilter", "-" if via_stdin else at + case_name, at + "out.npy"] + args, "out.npy"


def case_file_name(entry):
    name = entry[0]
    ext = ".nii.gz" if name.endswith(".nii.gz") else os.path.splitext(name)[1]
    return "case" + ext


def setup_case(entry, data, spec, workdir, precreate, via_stdin=False, check_mapped=False,
               folder=""):
    """Writes the case (and its companions) into a clean workdir; returns the case's file
    name, OUT's name, the command (its files under `folder`) and the name a message must
    contain ("standard input" when piped)."""
    os.makedirs(workdir, exist_ok=True)
    for f in os.listdir(workdir):
        p = os.path.join(workdir, f)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
    case_name = case_file_name(entry)
    with open(os.path.join(workdir, case_name), "wb") as f:
        f.write(data)
    for comp in COMPANIONS.get(entry[0], []):
        shutil.copy(os.path.join(SEEDS, comp), os.path.join(workdir, comp))
    args, out_name = command_for(entry, case_name, spec, via_stdin, check_mapped, folder)
    if precreate and out_name:
        with open(os.path.join(workdir, out_name), "wb") as f:
            f.write(SENTINEL)
    named = "standard input" if via_stdin else ((folder + "/") if folder else "") + case_name
    return case_name, out_name, args, named


def run_case(tool, entry, data, spec, workdir, precreate, timeout_opts, via_stdin=False,
             check_mapped=False):
    """Writes the case (and its companions) into a clean workdir, runs it in a process of its
    own (via_stdin: the case piped into `prefilter -`; check_mapped: `info CASE
    --check-mapped`), returns the raw result, the names used and the name a message must
    contain ("standard input" when piped)."""
    case_name, out_name, args, named = setup_case(entry, data, spec, workdir, precreate,
                                                  via_stdin, check_mapped)
    res = run_tool([tool] + args, workdir, timeout_opts.timeout,
                   os.path.join(workdir, case_name) if via_stdin else None)
    return case_name, out_name, args, res, named


def snapshot_tool(tool, tmp_root):
    """Copies the tool, and the modules it loads from its own folder (splinetool-gl.so,
    splinetool-video.so), into tmp_root once it runs (`--help` exits 0); waits up to 120 s while
    it is being relinked."""
    copy = os.path.join(tmp_root, os.path.basename(tool))
    modules = glob.glob(os.path.join(os.path.dirname(os.path.abspath(tool)), "splinetool-*.so"))
    deadline = time.monotonic() + 120
    while True:
        try:
            shutil.copy2(tool, copy)
            for m in modules:
                shutil.copy2(m, os.path.join(tmp_root, os.path.basename(m)))
            if subprocess.run([copy, "--help"], capture_output=True, timeout=60,
                              env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0")).returncode == 0:
                return copy
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("mutate.py: %s does not run" % tool)
        time.sleep(5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("splinetool")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=None,
                    help="number of cases (default: $SPLINEVIEW_FUZZ_CASES or 600)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="hang limit, seconds")
    ap.add_argument("--allowance", type=int, default=64,
                    help="MiB above the seed's own peak RSS always allowed")
    ap.add_argument("--formats", default="",
                    help="comma-separated format groups (default all): only their cases run; "
                    "case numbers stay those of the whole corpus (round robin over its seeds)")
    ap.add_argument("--case", type=int, action="append", default=[],
                    help="run only this case number (repeatable)")
    ap.add_argument("--json", default="")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="one line per case: exit, seconds, peak RSS, first stderr line")
    ap.add_argument("--findings", default="fuzz_findings")
    opts = ap.parse_args()
    if opts.cases is None:
        opts.cases = int(os.environ.get("SPLINEVIEW_FUZZ_CASES", "600"))
    if not os.access(opts.splinetool, os.X_OK):
        print("mutate.py: %s is not an executable" % opts.splinetool, file=sys.stderr)
        return 2
    tool = os.path.abspath(opts.splinetool)
    wanted = set(f for f in opts.formats.split(",") if f)
    unknown = wanted - set(FORMAT_ORDER)
    if unknown:
        print("mutate.py: unknown formats %s" % ",".join(sorted(unknown)), file=sys.stderr)
        return 2
    data = {}
    for name, _, _ in CORPUS:
        with open(os.path.join(SEEDS, name), "rb") as f:
            data[name] = f.read()
    t_start = time.monotonic()
    tmp_root = tempfile.mkdtemp(prefix="sv-fuzz-")
    failures = []
    stats = {f: {"cases": 0, "exit0": 0, "exit1": 0, "exit_other": 0, "skipped": 0,
                 "fail": {c: 0 for c in CRITERIA}, "max_seconds": 0.0} for f in FORMAT_ORDER}
    skipped = {}
    baseline = {}
    try:
        # A private copy of the tool: the build tree may be relinked while the run goes on.
        tool = snapshot_tool(tool, tmp_root)
        # The seeds themselves: each must load; its peak RSS is the baseline of its cases. The
        # seeds that --out-of-core maps must also read the same both ways. All through one
        # `splinetool batch` (each seed in a folder of its own), or a process each where the
        # batch itself fails; a case judged in a process of its own gets its seed's own
        # process as baseline (proc_baseline), a case judged in a batch its seed's line.
        seed_jobs = []  # (entry, check_mapped)
        for entry in CORPUS:
            if not wanted or entry[1] in wanted:
                seed_jobs.append((entry, False))
        for entry in CORPUS:
            if (not wanted or entry[1] in wanted) and entry[1] in MAPPED_FORMATS:
                seed_jobs.append((entry, True))
        wd = os.path.join(tmp_root, "seed")
        os.mkdir(wd)
        lines = []
        for k, (entry, mapped) in enumerate(seed_jobs):
            lines.append(setup_case(entry, data[entry[0]], None, os.path.join(wd, "s%d" % k),
                                    False, check_mapped=mapped, folder="s%d" % k)[2])
        status, records, _, _ = run_batch(tool, lines, wd, max(opts.timeout, 60))
        seed_results = []
        if status in (0, 1) and len(records) == len(lines):
            seed_results = [(r["status"], r["stderr"], r["rss"]) for r in records]
        else:
            print("the seeds' batch failed (exit %d after %d of %d lines); one process each" %
                  (status, len(records), len(lines)))
            for entry, mapped in seed_jobs:
                _, _, _, (st, err, _, rss, _), _ = run_case(tool, entry, data[entry[0]], None,
                                                            wd, False, opts,
                                                            check_mapped=mapped)
                seed_results.append((st, err, rss))
        batch_baseline = {}
        for (entry, mapped), (status, stderr, rss), argv in zip(seed_jobs, seed_results, lines):
            name, fmt, _ = entry
            if not mapped:
                batch_baseline[name] = rss
                baseline[name] = None  # its own process: measured when first needed
                if status == 0:
                    continue
                if fmt in OPTIONAL and b"unsupported file extension" in stderr:
                    skipped[fmt] = first_line(stderr)
                    continue
                detail = "the unmutated seed fails (exit %d): %s" % (status, first_line(stderr))
            elif status == 0:
                continue
            else:
                detail = ("the unmutated seed fails `info --check-mapped` (exit %d): %s" %
                          (status, first_line(stderr)))
            stats[fmt]["fail"]["seed"] += 1
            failures.append({"case": None, "format": fmt, "seed_file": name, "mutations": [],
                             "criterion": "seed", "detail": detail, "command": argv,
                             "file": None})
        for fmt, why in sorted(skipped.items()):
            print("SKIP %s: loader not in this build yet (%s)" % (fmt, why))

        indices = opts.case or list(range(opts.cases))
        todo = []
        for i in indices:
            entry, d, names, spec, must_reject = make_case(opts.seed, i, CORPUS, data)
            fmt = entry[1]
            if (wanted and fmt not in wanted) or entry[0] not in baseline:
                continue
            if fmt in skipped:
                stats[fmt]["skipped"] += 1
                continue
            todo.append((i, entry, d, names, spec, must_reject))

        os.makedirs(opts.findings, exist_ok=True)
        lock = threading.Lock()
        local = threading.local()
        baseline_lock = threading.Lock()

        def proc_baseline(entry):
            """The seed's peak RSS in a process of its own (the baseline of a case run so)."""
            with baseline_lock:
                if baseline[entry[0]] is None:
                    bwd = tempfile.mkdtemp(dir=tmp_root)
                    baseline[entry[0]] = run_case(tool, entry, data[entry[0]], None, bwd,
                                                  False, opts)[3][3]
                    shutil.rmtree(bwd, ignore_errors=True)
                return baseline[entry[0]]

        def kind(item):
            """(via_stdin, check_mapped, precreate) of a case."""
            i, entry, _, _, spec, _ = item
            # Half of the .npy cases go through standard input (`prefilter - OUT < case`): the
            # pipe path of the input guard, bounded by the header like a file.
            via_stdin = entry[1] == "npy" and spec is None and i % 4 >= 2
            check_mapped = checks_mapped(entry, i, spec, via_stdin)
            return via_stdin, check_mapped, i % 2 == 1 and not check_mapped

        def record(item, wd, case_name, out_name, args, res, named, base):
            """Judges one finished run (its files in wd) and books it."""
            i, entry, d, names, spec, must_reject = item
            _, _, precreate = kind(item)
            status, stderr, secs, rss, timed_out = res
            fails = judge(entry, named, out_name, status, stderr, secs, rss, timed_out,
                          wd, precreate, base, len(d), spec is not None, must_reject, opts)
            fmt = entry[1]
            with lock:
                if opts.verbose:
                    print("case %5d %-5s %-18s %-32s exit %3d %5.2f s %6.1f MiB %s" % (
                        i, fmt, entry[0], "+".join(names)[:32], status, secs, rss / MIB,
                        first_line(stderr)[:160]), flush=True)
                st = stats[fmt]
                st["cases"] += 1
                st["max_seconds"] = max(st["max_seconds"], secs)
                key = {0: "exit0", 1: "exit1"}.get(status, "exit_other")
                st[key] += 1
                for crit, detail in fails:
                    st["fail"][crit] += 1
                if fails:
                    keep = "case%05d-%s-%s" % (i, fmt, case_name.replace("case", "", 1)
                                               .lstrip(".").replace(".", "_"))
                    kept = os.path.join(opts.findings, keep + os.path.splitext(case_name)[1])
                    if case_name.endswith(".nii.gz"):
                        kept = os.path.join(opts.findings, keep + ".nii.gz")
                    shutil.copy(os.path.join(wd, case_name), kept)
                    for comp in COMPANIONS.get(entry[0], []):
                        shutil.copy(os.path.join(SEEDS, comp), os.path.join(opts.findings, comp))
                    with open(os.path.join(opts.findings, keep + ".txt"), "wb") as f:
                        f.write(("case %d (seed %d) from %s, mutations %s\ncommand: splinetool "
                                 "%s\nexit %d, %.2f s, peak RSS %.1f MiB\nfailed: %s\n"
                                 "stderr:\n" % (i, opts.seed, entry[0], "+".join(names),
                                                " ".join(args), status, secs, rss / MIB,
                                                "; ".join("%s: %s" % c for c in fails)))
                                .encode() + stderr)
                    for crit, detail in fails:
                        failures.append({"case": i, "format": fmt, "seed_file": entry[0],
                                         "mutations": names, "criterion": crit,
                                         "detail": detail, "command": args,
                                         "exit": status, "seconds": round(secs, 3),
                                         "peak_rss_mib": round(rss / MIB, 1), "file": kept})

        def work(item):
            """One case in a process of its own."""
            i, entry, d, names, spec, must_reject = item
            if not hasattr(local, "wd"):
                local.wd = tempfile.mkdtemp(dir=tmp_root)
            via_stdin, check_mapped, precreate = kind(item)
            case_name, out_name, args, res, named = run_case(tool, entry, d, spec, local.wd,
                                                             precreate, opts, via_stdin,
                                                             check_mapped)
            record(item, local.wd, case_name, out_name, args, res, named, proc_baseline(entry))

        def work_batch(items):
            """Cases through `splinetool batch --keep-going`, each judged from its line as from
            a process of its own (status, its stderr, seconds, its peak resident growth, its
            folder), against its seed's line. Where the batch process itself dies (a sanitizer
            abort, a signal, the hang watchdog), the line it died on runs again in a process of
            its own (judged as such: that names the culprit; a line stopped by the watchdog is
            judged a hang from the batch) and a new batch takes the rest;
            where every line ran but the process failed at its exit (a leak report), every case
            runs again in a process of its own."""
            bwd = tempfile.mkdtemp(dir=tmp_root)
            while items:
                shutil.rmtree(bwd)
                os.mkdir(bwd)
                setups = []
                for item in items:
                    i, entry, d, names, spec, must_reject = item
                    via_stdin, check_mapped, precreate = kind(item)
                    folder = "c%05d" % i
                    setups.append(setup_case(entry, d, spec, os.path.join(bwd, folder),
                                             precreate, via_stdin, check_mapped, folder))
                status, records, hung, tail = run_batch(tool, [st[2] for st in setups], bwd,
                                                        opts.timeout)
                complete = status in (0, 1) and len(records) == len(items)
                if not complete and len(records) == len(items):
                    for item in items:  # failed at its exit: each alone names the culprit
                        work(item)
                    break
                for item, (case_name, out_name, args, named), r in zip(items, setups, records):
                    res = (r["status"], r["stderr"], r["seconds"], r["rss"], r["timed_out"])
                    record(item, os.path.join(bwd, "c%05d" % item[0]), case_name, out_name,
                           args, res, named, batch_baseline[item[1][0]])
                if complete:
                    break
                k = len(records)  # the line the batch died on
                if hung:  # it ran longer than --timeout: judged from the batch as a hang
                    case_name, out_name, args, named = setups[k]
                    record(items[k], os.path.join(bwd, "c%05d" % items[k][0]), case_name,
                           out_name, args, (status, tail, opts.timeout, 0, True), named,
                           batch_baseline[items[k][1][0]])
                else:  # alone, judged as such: that names the culprit
                    work(items[k])
                items = items[k + 1:]
            shutil.rmtree(bwd, ignore_errors=True)

        # The piped cases need standard input of their own: a process each. The others run in
        # batches of BATCH_LINES.
        alone = [item for item in todo if kind(item)[0]]
        batched = [item for item in todo if not kind(item)[0]]
        chunks = [batched[k:k + BATCH_LINES] for k in range(0, len(batched), BATCH_LINES)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as ex:
            futures = [ex.submit(work_batch, c) for c in chunks]
            futures += [ex.submit(work, item) for item in alone]
            for f in futures:
                f.result()
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    elapsed = time.monotonic() - t_start

    # ---- report ----
    head = "%-6s %6s %6s %6s %5s " % ("format", "cases", "exit0", "exit1", "other") + \
        " ".join("%8s" % c for c in CRITERIA) + "  max_s"
    print(head)
    print("-" * len(head))
    tot = {"cases": 0, "exit0": 0, "exit1": 0, "exit_other": 0}
    totf = {c: 0 for c in CRITERIA}
    for fmt in FORMAT_ORDER:
        st = stats[fmt]
        if fmt in skipped:
            print("%-6s  skipped: %d cases (loader not in this build yet)" % (fmt, st["skipped"]))
            continue
        if not st["cases"] and not any(st["fail"].values()):
            continue
        for k in tot:
            tot[k] += st[k]
        for c in CRITERIA:
            totf[c] += st["fail"][c]
        print("%-6s %6d %6d %6d %5d " % (fmt, st["cases"], st["exit0"], st["exit1"],
                                         st["exit_other"]) +
              " ".join("%8d" % st["fail"][c] for c in CRITERIA) + "  %5.2f" % st["max_seconds"])
    print("-" * len(head))
    print("%-6s %6d %6d %6d %5d " % ("all", tot["cases"], tot["exit0"], tot["exit1"],
                                     tot["exit_other"]) +
          " ".join("%8d" % totf[c] for c in CRITERIA))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("seed %d, %d cases in %.1f s (%d jobs); the runner's own peak RSS %.0f MiB (a floor "
          "under every child's reading)" % (opts.seed, tot["cases"], elapsed, opts.jobs, own))
    if failures:
        print("\nFAILURES (files kept in %s):" % os.path.abspath(opts.findings))
        for f in failures:
            print("  case %s [%s %s %s] %s: %s" % (f["case"], f["format"], f["seed_file"],
                                                  "+".join(f["mutations"]), f["criterion"],
                                                  f["detail"][:300]))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"seed": opts.seed, "cases": tot["cases"], "seconds": round(elapsed, 1),
                       "jobs": opts.jobs, "tool": tool, "timeout_s": opts.timeout,
                       "allowance_mib": opts.allowance, "skipped_formats": skipped,
                       "formats": stats, "failures": failures}, f, indent=1)
    n_fail = len({(f["case"], f["seed_file"]) for f in failures})
    print("%d passed, %d failed" % (tot["cases"] - n_fail, n_fail))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
