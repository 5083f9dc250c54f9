"""splineview on dask arrays: arrays larger than memory, on one machine or a cluster.

    import dask.array as da, splineview.dask as svd
    vol = da.from_zarr("volume.zarr")                      # any chunked dask array, 1-3 D
    coef = svd.spline_filter(vol, order=3, mode="mirror")  # lazy; .compute() or .to_zarr(...)
    big = svd.zoom(vol, 2, order=3, mode="mirror")

The functions take scipy.ndimage's arguments (as splineview's NumPy functions) and return dask
arrays. Every block runs splineview's own functions on its chunk plus a halo: the CPU path for
NumPy chunks, the GPU path for CuPy chunks (a dask array of CuPy arrays, e.g. on dask-cuda
workers). The halo is derived, not guessed (docs/DESIGN.md, "Halos"): a block prefiltered from a
window of `halo` more samples of the mode-extended signal per side differs from the whole
array's result by at most chunk_bound(order, ndim, halo) times the data's range, and
halo(order, ndim, dtype) picks the smallest halo that puts that below half an ulp of the dtype
(cubic, double, 3-D: 31 samples). The windows are read from the mode's extension of the whole
array, so every boundary mode and cval behaves as in the in-memory functions.

- spline_filter: map_overlap with depth = halo on the chunked axes (axes held in one chunk are
  filtered whole, with the mode itself).
- zoom, shift, map_coordinates: the interpolant's coefficients are computed once, in chunks
  with the halo, over the array extended by the mode (a margin wide enough for every tap);
  then each output block reads only the window of coefficients its taps touch: zoom and shift
  resample it separably at scipy's positions; map_coordinates first folds positions into the
  array by the mode's symmetry (or clamps them where the value no longer changes, or masks them
  for 'constant'), computes each coordinate block's bounding box (the windows depend on the
  coordinates' values) and evaluates there.

Running against a cluster: start a scheduler and workers (`dask scheduler`, `dask worker
tcp://HOST:8786` on each machine, with splineview importable there), connect with
`distributed.Client("tcp://HOST:8786")`, keep the data where every worker can read it (a zarr
store on shared storage: `da.from_zarr("/shared/volume.zarr")`) and write results the same way
(`result.to_zarr("/shared/out.zarr")`). See README "Large data".
"""
import itertools

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("splineview.dask needs dask (Debian: python3-dask)") from e

from . import _core, _gpu, _ndimage

__all__ = ["halo", "spline_filter", "zoom", "shift", "map_coordinates"]

# The extension of the samples that the whole array's coefficients belong to, as np.pad modes.
# For spline_filter: the prefilter's own extension (prefilter_boundary in the C++ library).
_FILTER_PAD = {"reflect": "symmetric", "grid-mirror": "symmetric", "nearest": "symmetric",
               "mirror": "reflect", "wrap": "reflect", "constant": "reflect",
               "grid-constant": "reflect", "grid-wrap": "wrap"}
# For interpolation (map_coordinates, zoom, shift): the interpolant's extension (nearest: edge
# values for ever, grid-constant: cval for ever, as sv::Interpolant pads).
_INTERP_PAD = dict(_FILTER_PAD, nearest="edge", **{"grid-constant": "constant"})


def halo(order, ndim, dtype=np.float64, tolerance=None):
    """Samples per side that a chunk of an `ndim`-D array needs for the prefilter of `order`:
    the smallest h with chunk_bound(order, ndim, h) <= tolerance (default: half an ulp of
    `dtype`). 0 for orders 0 and 1 (no prefilter)."""
    order = _ndimage._check_order(order)
    if order < 2:
        return 0
    tol = float(np.finfo(np.dtype(dtype)).eps) / 2 if tolerance is None else float(tolerance)
    return int(_core.prefilter_halo(order, int(ndim), tol))


def chunk_bound(order, ndim, halo):
    """The bound on |chunked - whole| relative to the data's range (docs/DESIGN.md)."""
    return float(_core.chunk_bound(int(order), int(ndim), int(halo)))


def _as_dask(x):
    if isinstance(x, da.Array):
        return x
    if _gpu.is_device_array(x):
        import cupy
        x = cupy.asarray(x)
    return da.from_array(x, chunks="auto")


def _check(x):
    if not 1 <= x.ndim <= 3:
        raise ValueError("input has %d dimensions; splineview handles 1-, 2- and 3-D data only"
                         % x.ndim)
    if x.dtype.kind == "c":
        raise TypeError("complex input is not supported by splineview.dask")
    if min(x.shape) == 0:
        raise RuntimeError("input has an empty axis")


def _pad(x, widths, kind, cval=0.0):
    """x extended by widths[a] samples per side of axis a, as np.pad(kind) would (any width:
    the index map comes from np.pad of the indices); the original chunks are kept."""
    for a, w in enumerate(widths):
        if w == 0:
            continue
        n = x.shape[a]
        if kind == "constant":
            shape = list(x.shape)
            shape[a] = w
            chunks = list(x.chunks)
            chunks[a] = (w,)
            side = da.full(shape, cval, dtype=x.dtype, chunks=tuple(chunks))
            if _is_cupy(x):
                import cupy
                side = side.map_blocks(cupy.asarray, dtype=x.dtype)
            left = right = side
        else:
            idx = np.pad(np.arange(n), w, mode=kind)
            left = da.take(x, idx[:w], axis=a).rechunk({a: w})
            right = da.take(x, idx[n + w:], axis=a).rechunk({a: w})
        inner = x.chunks[a]
        x = da.concatenate([left, x, right], axis=a)
        # The margins join the end chunks (fewer, larger tasks).
        merged = ((w + inner[0] + w,) if len(inner) == 1 else
                  (w + inner[0],) + tuple(inner[1:-1]) + (inner[-1] + w,))
        x = x.rechunk({a: merged})
    return x


def _store_block(b, output, dtype):
    return _ndimage._store(b, output, b.shape, dtype) if not _gpu.is_device_array(b) else \
        _gpu.store(_gpu.DeviceInput(b), b, output, b.shape, dtype)


def _finish(r, output, input_dtype):
    """The output dtype rule of the in-memory functions, blockwise."""
    if output is None:
        dtype = np.dtype(input_dtype)
    elif isinstance(output, (np.ndarray, da.Array)) or _gpu.is_device_array(output):
        raise TypeError("splineview.dask returns a new dask array; pass a dtype as output, not "
                        "an array")
    else:
        dtype = np.dtype(output)
    if r.dtype == dtype:
        return r
    return r.map_blocks(_store_block, dtype, input_dtype, dtype=dtype)


def _filter_block(b, order, modes, work):
    if all(m == modes[0] for m in modes):  # one call: one conversion, every axis
        return _ndimage.spline_filter(b, order=order, mode=modes[0], output=work)
    for a, mode in enumerate(modes):
        b = _ndimage.spline_filter1d(b, order=order, axis=a, mode=mode, output=work)
    return b


def spline_filter(input, order=3, output=np.float64, mode="mirror", *, tolerance=None):
    """scipy.ndimage.spline_filter on a dask array: the coefficients, chunk by chunk with the
    derived halo (computed in `output`'s dtype when it is float32 or float64, else float64)."""
    x = _as_dask(input)
    _check(x)
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    work = _ndimage._filter_dtype(output)
    x = x.astype(work)
    if order < 2:
        return _finish(x, output, np.float64)
    h = halo(order, x.ndim, work, tolerance)
    chunked = [len(c) > 1 for c in x.chunks]
    for a in range(x.ndim):
        if chunked[a] and x.shape[a] <= 2 * h:  # too short to cut: one chunk along it
            x = x.rechunk({a: -1})
            chunked[a] = False
    widths = [h if c else 0 for c in chunked]
    p = _pad(x, widths, _FILTER_PAD[mode])
    r = _filter_chunks(p, order, [mode] * x.ndim, h, work)
    r = r[tuple(slice(w, w + n) for w, n in zip(widths, x.shape))]
    return _finish(r, output, np.float64)


def _filter_chunks(p, order, modes, h, work):
    """The prefilter of p, block by block: axes cut into several chunks get `h` samples of
    overlap from the neighbours (mirror beyond a block: within the bound, as the caller has put
    the true extension there); axes held in one chunk are filtered whole with modes[a]."""
    chunked = [len(c) > 1 for c in p.chunks]
    depth = {a: (h if chunked[a] else 0) for a in range(p.ndim)}
    block_modes = ["mirror" if c else m for c, m in zip(chunked, modes)]
    return p.map_overlap(_filter_block, depth=depth, boundary="none", trim=True, dtype=work,
                         order=order, modes=block_modes, work=work)


def _coefficients(x, order, mode, cval, prefilter, h, margin):
    """The interpolant's coefficients over [-margin, n + margin) per axis, lazily: the mode's
    extension of x, prefiltered in chunks with halo h (accurate to the bound wherever they are
    at least h from those ends; the evaluation reads only such). Orders 0-1 or prefilter=False:
    the extended samples themselves."""
    p = _pad(x.astype(np.float64) if not _is_cupy(x) else x, [margin] * x.ndim,
             _INTERP_PAD[mode], cval)
    if not prefilter or order < 2:
        return p
    for a in range(p.ndim):
        if len(p.chunks[a]) > 1 and min(p.chunks[a]) < h:
            p = p.rechunk({a: max(h, max(p.chunks[a]))})
    work = np.float32 if p.dtype == np.float32 else np.float64
    return _filter_chunks(p, order, ["mirror"] * x.ndim, h, work)


# ---- evaluation on windows --------------------------------------------------------------

def _window_bounds(pmin, pmax, order, h, n, margin):
    """[lo, hi) of the input window (in sample indices, within [-margin, n + margin)) that
    positions in [pmin, pmax] need: the taps and the halo around them."""
    taps = order // 2 + 1
    lo = int(np.floor(pmin)) - taps - h
    hi = int(np.ceil(pmax)) + taps + h + 1
    return max(lo, -margin), min(hi, n + margin)


def _resample_block(window, tables, order, cval, prefilter, masks):
    """The window's spline (mirror beyond it) at the per-axis positions; masked points
    ('constant' outside the array) take cval."""
    if _gpu.is_device_array(window):
        r = _gpu._tables(_gpu.DeviceInput(window), tables, order, "mirror", cval, prefilter)
    else:
        r = _core.resample_axes(np.ascontiguousarray(window, dtype=np.float64),
                                [list(map(float, t)) for t in tables], order, "mirror", cval,
                                prefilter)
    if masks is not None:
        outside = np.zeros(r.shape, dtype=bool)
        for a, m in enumerate(masks):
            shape = [1] * r.ndim
            shape[a] = len(m)
            outside = outside | m.reshape(shape)
        if outside.any():
            if _gpu.is_device_array(r):
                import cupy
                r = cupy.where(cupy.asarray(outside), cval, r)
            else:
                r[outside] = cval
    return r


def _fold(x, n, mode, order, reach):
    """Positions on an axis of n samples mapped to where the mode says the same value lies
    (scipy's mappings with its arithmetic; sampler.cpp), so that every window is near the array."""
    x = np.asarray(x, dtype=np.float64)
    if mode in ("reflect", "grid-mirror", "mirror") and n > 1:
        p = float(2 * n) if mode != "mirror" else float(2 * n - 2)
        out = x.copy()
        low, high = x < 0, x >= n
        if mode == "mirror":
            t = x[low] + p * np.trunc(-x[low] / p)
            out[low] = np.where(t <= 1 - n, t + p, -t)
            t = x[high] - p * np.trunc(x[high] / p)
            out[high] = np.where(t >= n, p - t, t)
        else:
            t = x[low]
            deep = t < -p
            t = np.where(deep, t + p * np.trunc(-t / p), t)
            out[low] = np.where(t < -n, t + p, -t - 1)
            t = x[high] - p * np.trunc(x[high] / p)
            out[high] = np.where(t >= n, p - t - 1, t)
        return out
    if mode in ("reflect", "grid-mirror", "mirror"):
        return np.zeros_like(x)
    if mode == "grid-wrap":
        out = x.copy()
        o = (x < 0) | (x >= n)
        out[o] = x[o] - n * np.floor(x[o] / n)
        return out
    if mode == "wrap":
        if n <= 1:
            return np.zeros_like(x)
        p = float(n - 1)
        out = x.copy()
        low, high = x < 0, x > n - 1
        out[low] = x[low] + p * (np.trunc(-x[low] / p) + 1)
        out[high] = x[high] - p * np.trunc(x[high] / p)
        return out
    if mode in ("nearest", "grid-constant"):
        return np.clip(x, -reach, n - 1 + reach)
    return x  # constant: masked by the caller


def _reach(mode, order):
    """Beyond this distance from the array the value no longer changes (nearest: the edge
    value; grid-constant: cval), to double precision: the interpolant's pad plus the taps."""
    return int(_core.interpolation_pad(mode, order)) + order + 2


def _separable(x, tables, out_shape, out_chunks, order, mode, cval, prefilter, tolerance):
    """Output block by output block: the input window its positions need, resampled."""
    n = x.shape
    ndim = x.ndim
    h = halo(order, ndim, np.float64, tolerance) if prefilter else 0
    masks = None
    if mode == "constant":
        masks = [(t < 0) | (t > m - 1) for t, m in zip(tables, n)]
        tables = [np.where(mk, 0.0, t) for t, mk in zip(tables, masks)]
    else:
        reach = _reach(mode, order)
        tables = [_fold(t, m, mode, order, reach) for t, m in zip(tables, n)]
    margin = (order // 2 + 2 + h + (_reach(mode, order) if mode in ("nearest", "grid-constant")
                                     else 0))
    p = _coefficients(x, order, mode, cval, prefilter, h, margin)
    starts = [np.concatenate([[0], np.cumsum(c)]) for c in out_chunks]
    blocks = np.empty([len(c) for c in out_chunks], dtype=object)
    for index in itertools.product(*[range(len(c)) for c in out_chunks]):
        slices, local, bmasks = [], [], []
        for a, i in enumerate(index):
            o0, o1 = starts[a][i], starts[a][i + 1]
            t = tables[a][o0:o1]
            lo, hi = _window_bounds(t.min(), t.max(), order, 0, n[a], margin)
            slices.append(slice(lo + margin, hi + margin))
            local.append(t - lo)
            if masks is not None:
                bmasks.append(masks[a][o0:o1])
        window = p[tuple(slices)]
        block = dask.delayed(_resample_block)(window, local, order, cval, False,
                                              bmasks if masks is not None else None)
        meta_dtype = np.float32 if (_is_cupy(x) and x.dtype == np.float32) else np.float64
        blocks[index] = da.from_delayed(block, shape=tuple(len(t) for t in local),
                                        dtype=meta_dtype, meta=x._meta.astype(meta_dtype))
    return da.block(blocks.tolist())


def _is_cupy(x):
    return type(x._meta).__module__.split(".")[0] == "cupy"


def _output_chunks(x, shape, chunks):
    if chunks is not None:
        return da.core.normalize_chunks(chunks, shape, dtype=np.float64)
    # Each output chunk about the size of an input chunk scaled by the zoom.
    sizes = []
    for c, n_in, n_out in zip(x.chunks, x.shape, shape):
        step = max(1, int(round(max(c) * n_out / n_in)))
        sizes.append(step)
    return da.core.normalize_chunks(tuple(sizes), shape, dtype=np.float64)


def zoom(input, zoom, output=None, order=3, mode="constant", cval=0.0, prefilter=True, *,
         grid_mode=False, chunks=None, tolerance=None):
    """scipy.ndimage.zoom on a dask array (output chunks: `chunks`, or the input's scaled)."""
    x = _as_dask(input)
    _check(x)
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    factors = [float(z) for z in _ndimage._sequence(zoom, x.ndim, "zoom")]
    shape = tuple(int(round(n * z)) for n, z in zip(x.shape, factors))
    if min(shape) <= 0:
        raise RuntimeError("the zoomed shape %s is empty" % (shape,))
    tables = [_gpu._zoom_positions(n, m, grid_mode) for n, m in zip(x.shape, shape)]
    out_chunks = _output_chunks(x, shape, chunks)
    r = _separable(x, tables, shape, out_chunks, order, mode, float(cval), bool(prefilter),
                   tolerance)
    return _finish(r, output, x.dtype)


def shift(input, shift, output=None, order=3, mode="constant", cval=0.0, prefilter=True, *,
          tolerance=None):
    """scipy.ndimage.shift on a dask array (output chunks as the input's)."""
    x = _as_dask(input)
    _check(x)
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    shifts = [float(s) for s in _ndimage._sequence(shift, x.ndim, "shift")]
    tables = [np.arange(n, dtype=np.float64) + (-s) for n, s in zip(x.shape, shifts)]
    r = _separable(x, tables, x.shape, x.chunks, order, mode, float(cval), bool(prefilter),
                   tolerance)
    return _finish(r, output, x.dtype)


def _coords_block(window, coords, lo, order, cval, prefilter, mask):
    c = coords - np.asarray(lo, dtype=np.float64).reshape((-1,) + (1,) * (coords.ndim - 1))
    r = _ndimage.map_coordinates(window, c, order=order, mode="mirror", cval=cval,
                                 prefilter=prefilter, output=np.float64)
    if mask is not None:
        r = np.where(mask, cval, r)
    return r


def map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0,
                    prefilter=True, *, tolerance=None):
    """scipy.ndimage.map_coordinates on a dask array; `coordinates` (d, ...) a dask or NumPy
    array, evaluated block by block along its trailing axes (the result has its chunks)."""
    x = _as_dask(input)
    _check(x)
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    c = coordinates if isinstance(coordinates, da.Array) else da.from_array(
        np.asarray(coordinates, dtype=np.float64), chunks="auto")
    if c.ndim < 1 or c.shape[0] != x.ndim:
        raise RuntimeError("invalid shape for coordinate array: %s for a %d-D input"
                           % (c.shape, x.ndim))
    if c.ndim == 1:
        c = c[:, None]
        squeeze = True
    else:
        squeeze = False
    c = c.rechunk({0: -1}).astype(np.float64)
    n = x.shape
    h = halo(order, x.ndim, np.float64, tolerance) if prefilter else 0
    reach = _reach(mode, order)
    margin = order // 2 + 2 + h + (reach if mode in ("nearest", "grid-constant") else 0)

    def fold(block):
        out = np.empty_like(block)
        for a in range(block.shape[0]):
            if mode == "constant":
                out[a] = block[a]
            else:
                out[a] = _fold(block[a], n[a], mode, order, reach)
        return out

    folded = c.map_blocks(fold, dtype=np.float64)
    if mode == "constant":
        outside = da.any((c < 0) | (c > np.array(n).reshape((-1,) + (1,) * (c.ndim - 1)) - 1),
                         axis=0)
        folded = da.where(outside[None], 0.0, folded)
    else:
        outside = None
    # The bounding box of every block of coordinates (computed now: the windows depend on it).
    block_ids = list(itertools.product(*[range(len(ch)) for ch in folded.chunks[1:]]))
    lows, highs = [], []
    for bid in block_ids:
        blk = folded.blocks[(0,) + bid]
        lows.append(blk.min(axis=tuple(range(1, blk.ndim))))
        highs.append(blk.max(axis=tuple(range(1, blk.ndim))))
    lows, highs = dask.compute(lows, highs)
    p = _coefficients(x, order, mode, cval, prefilter, h, margin)
    blocks = np.empty([len(ch) for ch in folded.chunks[1:]], dtype=object)
    for bid, lo_, hi_ in zip(block_ids, lows, highs):
        if not (np.all(np.isfinite(lo_)) and np.all(np.isfinite(hi_))):
            raise ValueError("map_coordinates: non-finite coordinates in block %s" % (bid,))
        slices, lo = [], []
        for a in range(x.ndim):
            l, hh = _window_bounds(lo_[a], hi_[a], order, 0, n[a], margin)
            slices.append(slice(l + margin, hh + margin))
            lo.append(l)
        blk = folded.blocks[(0,) + bid]
        mask = outside.blocks[bid] if outside is not None else None
        d = dask.delayed(_coords_block)(p[tuple(slices)], blk, lo, order, float(cval), False,
                                        mask)
        blocks[bid] = da.from_delayed(d, shape=blk.shape[1:], dtype=np.float64)
    r = da.block(blocks.tolist())
    if squeeze:
        r = r[0]
    return _finish(r, output, x.dtype)
