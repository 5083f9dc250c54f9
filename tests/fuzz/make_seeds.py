#!/usr/bin/env python3
"""Writes the seed corpus of the mutation fuzzer (tests/fuzz/seeds/): one tiny valid file per
loader and variant. Everything is written byte by byte here from numpy arrays (deterministic),
except the JPEGs (Debian's cjpeg, package libjpeg-turbo-progs) and the video clip (the
project's own tools/make_clip, built as build*/video/make_clip) and the DICOM files (pydicom,
Debian python3-pydicom; --only-dicom writes just those).

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


def nifti_oriented(a, datatype, bitpix):
    """NIfTI-1 with a qform (180 degrees about z: LPS) and a different sform (sagittal)."""
    b = bytearray(nifti(a, datatype, bitpix, (0.8, 0.9, 2.0)))
    struct.pack_into("<hh", b, 252, 1, 2)  # qform_code, sform_code
    struct.pack_into("<6f", b, 256, 0.0, 0.0, 1.0, 10.0, -20.0, 30.0)  # quatern b c d, qoffset
    struct.pack_into("<12f", b, 280, 0, 0, 2.0, -5, -0.8, 0, 0, 7, 0, -0.9, 0, 9)  # srow x y z
    return bytes(b)


def nifti2(a, datatype, bitpix, pixdim=(1.0, 1.0, 1.0)):
    """NIfTI-2 single file (540-byte header, vox_offset 544), little endian, sform (code 1)."""
    hdr = bytearray(540)
    struct.pack_into("<i", hdr, 0, 540)
    hdr[4:12] = b"n+2\0\r\n\032\n"
    struct.pack_into("<hh", hdr, 12, datatype, bitpix)
    dims = list(reversed(a.shape))
    struct.pack_into("<8q", hdr, 16, len(dims), *(dims + [1] * (7 - len(dims))))
    pd = [1.0] + list(pixdim)[:3] + [1.0] * 4
    struct.pack_into("<8d", hdr, 104, *pd)
    struct.pack_into("<qdd", hdr, 168, 544, 1.0, 0.0)
    struct.pack_into("<ii", hdr, 344, 0, 1)  # qform_code, sform_code
    struct.pack_into("<12d", hdr, 400, -pd[1], 0, 0, 1, 0, pd[2], 0, 2, 0, 0, pd[3], 3)
    struct.pack_into("<i", hdr, 500, 2)  # xyzt_units: mm
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


# ---- DICOM (pydicom, Debian python3-pydicom): tiny files of the kinds sv::load_dicom reads ----
def dicom_seeds(out):
    """ct_i16.dcm (explicit VR, int16, rescale, geometry), mr_implicit.dcm (implicit VR,
    12 of 16 bits), rgb.dcm (RGB), enhanced_mf.dcm (3 frames, per-frame functional groups),
    rle.dcm (RLE Lossless). UIDs are fixed so that the seeds are deterministic."""
    from pydicom.dataset import Dataset, FileDataset, FileMetaDataset
    from pydicom.sequence import Sequence
    from pydicom.uid import ExplicitVRLittleEndian, ImplicitVRLittleEndian, RLELossless

    def base(name, pixels, implicit=False, sop="1.2.840.10008.5.1.4.1.1.2"):
        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID = sop
        meta.MediaStorageSOPInstanceUID = "1.2.826.0.1.3680043.8.498.1." + str(len(name))
        meta.TransferSyntaxUID = ImplicitVRLittleEndian if implicit else ExplicitVRLittleEndian
        meta.ImplementationClassUID = "1.2.826.0.1.3680043.8.498.1"
        ds = FileDataset(name, {}, file_meta=meta, preamble=b"\0" * 128)
        ds.is_little_endian = True
        ds.is_implicit_VR = implicit
        ds.SOPClassUID = sop
        ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
        ds.SeriesInstanceUID = "1.2.826.0.1.3680043.8.498.2"
        ds.Rows, ds.Columns = pixels.shape[-3 if pixels.ndim == 3 and pixels.shape[-1] == 3
                                            else -2], pixels.shape[-2 if pixels.ndim == 3 and
                                                                   pixels.shape[-1] == 3 else -1]
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated = pixels.dtype.itemsize * 8
        ds.BitsStored = ds.BitsAllocated
        ds.HighBit = ds.BitsStored - 1
        ds.PixelRepresentation = 1 if pixels.dtype.kind == "i" else 0
        ds.PixelSpacing = [0.7, 0.6]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.ImagePositionPatient = [-10, -20, 30]
        ds.PixelData = pixels.astype(pixels.dtype.newbyteorder("<")).tobytes()
        return ds

    def save(ds, name):
        ds.save_as(os.path.join(out, name), write_like_original=False)

    ct = base("ct_i16.dcm", (ramp(5, 6, 0, 3000).astype("i2") - 1024))
    ct.RescaleSlope, ct.RescaleIntercept = 1, -1024
    ct.SliceThickness = 2.5
    save(ct, "ct_i16.dcm")
    mr = base("mr_implicit.dcm", (ramp(4, 5, 0, 4095).astype("<u2") | 0xF000), implicit=True,
              sop="1.2.840.10008.5.1.4.1.1.4")
    mr.BitsStored, mr.HighBit = 12, 11
    save(mr, "mr_implicit.dcm")
    rgb = base("rgb.dcm", ramp(4, 5, 3, 255).astype("u1"), sop="1.2.840.10008.5.1.4.1.1.7")
    rgb.SamplesPerPixel, rgb.PhotometricInterpretation, rgb.PlanarConfiguration = 3, "RGB", 0
    save(rgb, "rgb.dcm")
    frames = ramp(4, 5, 0, 60000).astype("<u2")[None].repeat(3, 0)
    mf = base("enhanced_mf.dcm", frames, sop="1.2.840.10008.5.1.4.1.1.4.1")
    del mf.ImagePositionPatient, mf.ImageOrientationPatient, mf.PixelSpacing
    mf.NumberOfFrames = 3
    shared = Dataset()
    orient, measures = Dataset(), Dataset()
    orient.ImageOrientationPatient = [0, 1, 0, 0, 0, -1]
    measures.PixelSpacing, measures.SliceThickness = [0.5, 0.5], 1.5
    shared.PlaneOrientationSequence = Sequence([orient])
    shared.PixelMeasuresSequence = Sequence([measures])
    mf.SharedFunctionalGroupsSequence = Sequence([shared])
    per = []
    for f in range(3):
        item, pos, pvt = Dataset(), Dataset(), Dataset()
        pos.ImagePositionPatient = [5.0 + 1.5 * f, -20, 30]
        pvt.RescaleSlope, pvt.RescaleIntercept = 1, 0
        item.PlanePositionSequence = Sequence([pos])
        item.PixelValueTransformationSequence = Sequence([pvt])
        per.append(item)
    mf.PerFrameFunctionalGroupsSequence = Sequence(per)
    save(mf, "enhanced_mf.dcm")
    rle = base("rle.dcm", ramp(6, 5, 0, 200).astype("u1"))
    rle.compress(RLELossless)
    save(rle, "rle.dcm")


# ---- TIFF (issue 13 item 3): written byte by byte (IFD entries, strips or tiles) ----
TIFF_TYPES = {1: "B", 2: "B", 3: "H", 4: "I", 16: "Q"}


def tiff_file(pages, bo="<", bigtiff=False):
    """A TIFF (or BigTIFF) whose pages are (tags, chunks, offsets_tag, counts_tag); tags maps a
    tag to (type, values): type 2 (ASCII) takes bytes, 5 (RATIONAL) (num, den) pairs. Each
    page's strips or tiles come first, then its IFD, then the IFD's out-of-line values."""
    off_fmt, off_size = ("Q", 8) if bigtiff else ("I", 4)
    out = bytearray(b"II" if bo == "<" else b"MM")
    out += struct.pack(bo + "HHHQ", 43, 8, 0, 0) if bigtiff else struct.pack(bo + "HI", 42, 0)
    ptr = 8 if bigtiff else 4
    for tags, chunks, offsets_tag, counts_tag in pages:
        offsets = []
        for c in chunks:
            out += b"\0" * (len(out) % 2)
            offsets.append(len(out))
            out += c
        tags = dict(tags)
        tags[offsets_tag] = (16 if bigtiff else 4, offsets)
        tags[counts_tag] = (16 if bigtiff else 4, [len(c) for c in chunks])
        out += b"\0" * (len(out) % 2)
        ifd = len(out)
        struct.pack_into(bo + off_fmt, out, ptr, ifd)
        entry = 20 if bigtiff else 12
        extra_at = ifd + off_size + len(tags) * entry + off_size if bigtiff else \
            ifd + 2 + len(tags) * entry + 4
        entries, extra = bytearray(), bytearray()
        for tag in sorted(tags):
            typ, vals = tags[tag]
            if typ == 2:
                raw, count = bytes(vals), len(vals)
            elif typ == 5:
                raw = b"".join(struct.pack(bo + "II", n, d) for n, d in vals)
                count = len(vals)
            else:
                raw, count = struct.pack(bo + TIFF_TYPES[typ] * len(vals), *vals), len(vals)
            if len(raw) <= off_size:
                val = raw.ljust(off_size, b"\0")
            else:
                extra += b"\0" * (len(extra) % 2)
                val = struct.pack(bo + off_fmt, extra_at + len(extra))
                extra += raw
            entries += struct.pack(bo + "HH" + off_fmt, tag, typ, count) + val
        out += struct.pack(bo + ("Q" if bigtiff else "H"), len(tags)) + entries
        ptr = len(out)
        out += b"\0" * off_size + extra
    return bytes(out)


def packbits(data):
    """PackBits: runs of 3..128 equal bytes as (1 - n, byte), the rest as literals."""
    out, i = bytearray(), 0
    while i < len(data):
        j = i
        while j < len(data) and j - i < 128 and data[j] == data[i]:
            j += 1
        if j - i >= 3:
            out += bytes([257 - (j - i), data[i]])
            i = j
            continue
        j = i
        while j < len(data) and j - i < 128 and not (j + 2 < len(data) and data[j] ==
                                                       data[j + 1] == data[j + 2]):
            j += 1
        out += bytes([j - i - 1]) + data[i:j]
        i = j
    return bytes(out)


def lzw(data):
    """TIFF LZW (MSB first) for short inputs: fewer than 250 bytes keep every code 9 bits
    wide (the table never reaches the 511 entries where the width grows)."""
    assert len(data) < 250
    table = {bytes([i]): i for i in range(256)}
    codes, w, nxt = [256], b"", 258
    for byte in data:
        wc = w + bytes([byte])
        if wc in table:
            w = wc
            continue
        codes.append(table[w])
        table[wc] = nxt
        nxt += 1
        w = bytes([byte])
    if w:
        codes.append(table[w])
    codes.append(257)
    bits = "".join(format(c, "09b") for c in codes)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def tiff_page(a, bo, compression=1, predictor=1, photometric=1, sample_format=1,
              rows_per_strip=None, tile=None, description=None, resolution=None,
              planar_separate=False):
    """One page of array `a` (h, w) or (h, w, samples)."""
    h, w = a.shape[:2]
    spp = a.shape[2] if a.ndim == 3 else 1
    a = a.astype(a.dtype.newbyteorder(bo))
    bits = a.dtype.itemsize * 8

    def encode(block):
        block = np.ascontiguousarray(block)
        if predictor == 2:  # horizontal differencing per row, per sample
            flat = block.reshape(block.shape[0], -1, spp if block.ndim == 3 else 1)
            diff = flat.copy()
            diff[:, 1:] = flat[:, 1:] - flat[:, :-1]
            block = diff
        raw = block.astype(a.dtype).tobytes()
        if compression == 5:
            return lzw(raw)
        if compression == 8:
            return zlib.compress(raw, 9)
        if compression == 32773:
            return packbits(raw)
        return raw

    tags = {256: (3, [w]), 257: (3, [h]), 258: (3, [bits] * spp), 259: (3, [compression]),
            262: (3, [photometric]), 277: (3, [spp]), 339: (3, [sample_format] * spp)}
    if predictor != 1:
        tags[317] = (3, [predictor])
    if description:
        tags[270] = (2, description.encode() + b"\0")
    if resolution:
        (xn, xd), (yn, yd), unit = resolution
        tags[282] = (5, [(xn, xd)])
        tags[283] = (5, [(yn, yd)])
        tags[296] = (3, [unit])
    if planar_separate:
        tags[284] = (3, [2])
    chunks = []
    planes = [a[..., s] for s in range(spp)] if planar_separate else [a]
    if tile:
        tags[322] = (3, [tile])
        tags[323] = (3, [tile])
        for p in planes:
            for ty in range(0, h, tile):
                for tx in range(0, w, tile):
                    t = np.zeros((tile, tile) + p.shape[2:], a.dtype)
                    part = p[ty:ty + tile, tx:tx + tile]
                    t[:part.shape[0], :part.shape[1]] = part
                    chunks.append(encode(t))
        return tags, chunks, 324, 325
    rps = rows_per_strip or h
    tags[278] = (3, [rps])
    for p in planes:
        for y in range(0, h, rps):
            chunks.append(encode(p[y:y + rps]))
    return tags, chunks, 273, 279


def tiff_seeds(out):
    seeds = {}
    g16 = ramp(6, 8, 0, 65535).astype("u2")
    seeds["grey16_strips.tif"] = tiff_file([tiff_page(g16, "<", rows_per_strip=2)])
    rgb = ramp(5, 7, 3, 255).astype("u1")
    seeds["rgb8_deflate_be.tif"] = tiff_file([tiff_page(rgb, ">", compression=8, predictor=2,
                                                        photometric=2)], ">")
    f32 = (ramp(20, 18, 0, 1000) / 7.0).astype("f4")
    seeds["f32_tiled.tif"] = tiff_file([tiff_page(f32, "<", compression=8, sample_format=3,
                                                  tile=16)])
    pages = [tiff_page((ramp(6, 5, 0, 200) + 20 * z).astype("u1"), "<", compression=32773,
                       description=("ImageJ=1.11a\nimages=3\nslices=3\nunit=micron\n"
                                    "spacing=2.5\nloop=false\n") if z == 0 else None,
                       resolution=((4, 1), (4, 1), 1)) for z in range(3)]
    seeds["stack_imagej.tif"] = tiff_file(pages)
    i16 = (ramp(5, 6, 0, 2000).astype("i2") - 1000)
    seeds["bigtiff_i16.tif"] = tiff_file([tiff_page(i16, "<", sample_format=2,
                                                    resolution=((10, 1), (20, 1), 3))],
                                         bigtiff=True)
    seeds["lzw_u8.tif"] = tiff_file([tiff_page(ramp(8, 12, 0, 255).astype("u1"), "<",
                                               compression=5, rows_per_strip=4)])
    rgb16 = ramp(4, 6, 3, 65535).astype("u2")
    seeds["rgb16_planar.tif"] = tiff_file([tiff_page(rgb16, "<", photometric=2,
                                                     planar_separate=True)])
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "seeds"))
    ap.add_argument("--make-clip", default=os.path.join(ROOT, "build-test/video/make_clip"))
    ap.add_argument("--cjpeg", default=shutil.which("cjpeg") or "cjpeg")
    ap.add_argument("--only-tiff", action="store_true", help="write only the TIFF seeds")
    ap.add_argument("--only-dicom", action="store_true",
                    help="write only the DICOM seeds (needs python3-pydicom)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tiff_seeds(args.out)
    if args.only_tiff:
        return
    dicom_seeds(args.out)
    if args.only_dicom:
        return
    files = {}

    g = ramp(6, 5, 0, 1000) / 1000.0
    files["f32.npy"] = g.astype("<f4")
    files["f64.npy"] = (g * 3 - 1).astype("<f8")
    files["u8.npy"] = ramp(6, 5, 0, 255).astype("u1")
    files["u16.npy"] = ramp(3, 4, 0, 65535).reshape(1, 3, 4).repeat(2, 0).astype("<u2")
    files["f32_channels.npy"] = (ramp(4, 5, 3, 1000) / 1000.0).astype("<f4")
    # Other dtypes, byte orders and Fortran order (issue 13 item 3).
    files["i16_be.npy"] = (ramp(6, 5, 0, 2000) - 1000).astype(">i2")
    files["f16.npy"] = (g * 7 - 3).astype("<f2")
    files["i64_fortran.npy"] = np.asfortranarray(
        (ramp(3, 4, 0, 1000) * 1000).reshape(1, 3, 4).repeat(2, 0).astype("<i8"))
    files["bool.npy"] = ramp(6, 5, 0, 255) > 100
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
    blobs["oriented.nii"] = nifti_oriented(ramp(4, 5, 0, 250).astype("u1").reshape(1, 4, 5)
                                           .repeat(3, 0), 2, 8)
    # 4-D: 3 volumes of 2 x 4 x 5 (read with --volume 1).
    blobs["n2_4d.nii"] = nifti2(ramp(4, 5, 0, 100).astype("<f4").reshape(1, 1, 4, 5)
                                .repeat(2, 1).repeat(3, 0), 16, 32, (0.7, 0.8, 2.5))
    blobs["oriented.nrrd"] = nrrd([5, 4, 3], "short", "raw",
                                  (ramp(4, 5, 0, 900).astype("<i2").reshape(1, 4, 5)
                                   .repeat(3, 0)).tobytes(),
                                  ["space: left-posterior-superior",
                                   "space directions: (0,0.9,0) (0,0,-1.1) (2.5,0,0)",
                                   "space origin: (-10.5,20,35)"])

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
