"""The GPU path of splineview's scipy.ndimage functions: CuPy arrays and torch tensors on a CUDA
device (anything with __cuda_array_interface__ is taken through CuPy) are processed on their
device, on the caller's current stream, and the results come back as arrays of the same library
on the same device. The kernels are splineview._cuda (C++/CUDA, cuda_ndimage.h).

Working precision, as cupyx.scipy.ndimage: float32 input is prefiltered and stored as float32
coefficients, anything else as float64; the weights, positions and sums are double in every
case, and positions are computed with scipy's arithmetic, so boundary modes, cval and order-0
ties are scipy's. spline_filter/spline_filter1d compute in their output dtype when it is float32
or float64 (scipy's default output is float64). A coordinate that is non-finite or beyond 1e12
gives NaN on the device (the CPU path refuses it with an error).

Without the CUDA module (a build without CUDA) or without a usable device, a device array is
copied to the host, processed by the CPU path and copied back, with a warning once per process.
"""
import warnings

import numpy as np

try:
    from . import _cuda
except ImportError:  # a build without CUDA
    _cuda = None

_fallback_warned = False


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "is_cuda")


def is_device_array(x):
    """True for a torch tensor on a CUDA device or an object with __cuda_array_interface__."""
    if _is_torch(x):
        return bool(x.is_cuda)
    return hasattr(type(x), "__cuda_array_interface__")


_availability = None


def gpu_available():
    """(True, "") when the CUDA path can run here, else (False, the reason). Asked of the CUDA
    runtime once per process (the query costs about half a millisecond)."""
    global _availability
    if _availability is None:
        if _cuda is None:
            _availability = (False, "this build of splineview has no CUDA path "
                                    "(splineview._cuda is missing)")
        else:
            ok, why = _cuda.available()
            _availability = (bool(ok), why)
    return _availability


class _Cupy:
    name = "cupy"

    def __init__(self, x):
        import cupy
        self.xp = cupy
        self.device = int(x.device.id)

    def wrap(self, x):
        return x if isinstance(x, self.xp.ndarray) else self.xp.asarray(x)

    def owns(self, x):
        return isinstance(x, self.xp.ndarray)

    def dtype(self, a):
        return np.dtype(a.dtype)

    def ptr(self, a):
        return int(a.data.ptr)

    def stream(self):
        with self.xp.cuda.Device(self.device):
            return int(self.xp.cuda.get_current_stream().ptr)

    def empty(self, shape, dtype):
        with self.xp.cuda.Device(self.device):
            return self.xp.empty(tuple(shape), dtype=dtype)

    def contiguous(self, a, dtype):
        with self.xp.cuda.Device(self.device):
            return self.xp.ascontiguousarray(a.astype(dtype, copy=False))

    def copy(self, a, dtype):
        with self.xp.cuda.Device(self.device):
            return a.astype(dtype, order="C", copy=True)

    def round_half_away(self, r):
        xp = self.xp
        with xp.cuda.Device(self.device):
            return xp.where(r >= 0, xp.floor(r + 0.5), xp.ceil(r - 0.5))

    def clip(self, r, lo, hi):
        with self.xp.cuda.Device(self.device):
            return self.xp.clip(r, lo, hi)

    def astype(self, a, dtype):
        with self.xp.cuda.Device(self.device):
            return a.astype(dtype)

    def fill(self, target, result):
        with self.xp.cuda.Device(self.device):
            target[...] = result

    def zeros(self, shape, dtype):
        with self.xp.cuda.Device(self.device):
            return self.xp.zeros(tuple(shape), dtype=dtype)

    def to_host(self, a):
        return self.xp.asnumpy(a)

    def from_host(self, a):
        with self.xp.cuda.Device(self.device):
            return self.xp.asarray(a)

    def real_imag(self, a):
        return a.real, a.imag


class _Torch:
    name = "torch"

    def __init__(self, x):
        import torch
        self.torch = torch
        self.dev = x.device
        self.device = int(x.device.index if x.device.index is not None else
                          torch.cuda.current_device())
        self._to_np = {torch.float16: np.float16, torch.float32: np.float32,
                       torch.float64: np.float64, torch.uint8: np.uint8, torch.int8: np.int8,
                       torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
                       torch.bool: np.bool_, torch.complex64: np.complex64,
                       torch.complex128: np.complex128}
        self._to_torch = {np.dtype(v): k for k, v in self._to_np.items()}

    def wrap(self, x):
        return x.detach()

    def owns(self, x):
        return isinstance(x, self.torch.Tensor) and x.is_cuda

    def _t(self, dtype):
        try:
            return self._to_torch[np.dtype(dtype)]
        except KeyError:
            raise TypeError("torch has no tensor type for %s" % np.dtype(dtype)) from None

    def dtype(self, a):
        try:
            return np.dtype(self._to_np[a.dtype])
        except KeyError:
            raise TypeError("input must be a numeric tensor, got %s" % a.dtype) from None

    def ptr(self, a):
        return int(a.data_ptr())

    def stream(self):
        return int(self.torch.cuda.current_stream(self.dev).cuda_stream)

    def empty(self, shape, dtype):
        return self.torch.empty(tuple(shape), dtype=self._t(dtype), device=self.dev)

    def contiguous(self, a, dtype):
        return a.to(dtype=self._t(dtype)).contiguous()

    def copy(self, a, dtype):
        out = self.empty(a.shape, dtype)
        out.copy_(a)
        return out

    def round_half_away(self, r):
        t = self.torch
        return t.where(r >= 0, t.floor(r + 0.5), t.ceil(r - 0.5))

    def clip(self, r, lo, hi):
        return r.clamp(lo, hi)

    def astype(self, a, dtype):
        return a.to(dtype=self._t(dtype))

    def fill(self, target, result):
        target.copy_(result)

    def zeros(self, shape, dtype):
        return self.torch.zeros(tuple(shape), dtype=self._t(dtype), device=self.dev)

    def to_host(self, a):
        return a.cpu().numpy()

    def from_host(self, a):
        return self.torch.as_tensor(np.ascontiguousarray(a), device=self.dev)

    def real_imag(self, a):
        return a.real, a.imag


class DeviceInput:
    """A device array with its library: shape, ndim and dtype (a NumPy dtype) as NumPy's."""

    def __init__(self, x):
        if _is_torch(x):
            self.lib = _Torch(x)
        else:
            import cupy
            x = cupy.asarray(x)  # no copy: CuPy reads __cuda_array_interface__
            self.lib = _Cupy(x)
        self.array = self.lib.wrap(x)
        self.shape = tuple(int(n) for n in self.array.shape)
        self.ndim = len(self.shape)
        self.dtype = self.lib.dtype(self.array)


def _usable():
    global _fallback_warned
    ok, why = gpu_available()
    if not ok and not _fallback_warned:
        _fallback_warned = True
        warnings.warn("splineview: device arrays are processed on the CPU (%s)" % why,
                      RuntimeWarning, stacklevel=4)
    return ok


def _work_dtype(dtype):
    return np.dtype(np.float32) if dtype in (np.float32, np.float16) else np.dtype(np.float64)


def _code(dtype):
    return "f" if np.dtype(dtype) == np.float32 else "d"


def _call(a, fn, *args):
    _cuda_fn = getattr(_cuda, fn)
    _cuda_fn(*args, a.lib.stream(), a.lib.device)


# ---- the operations, with the signatures of splineview._core's (plus the working dtype) ----

def spline_filter1d(a, order, axis, mode, work):
    """Coefficients along `axis`, computed in `work` (float32 or float64)."""
    if not _usable():
        from . import _core
        return a.lib.from_host(_core.spline_filter1d(a.lib.to_host(a.array), order, axis, mode))
    rank = a.ndim
    if axis < -rank or axis >= rank:
        raise ValueError("axis %d is out of range for a %d-D array" % (axis, rank))
    out = a.lib.copy(a.array, work)
    if order > 1:
        _call(a, "spline_filter1d", a.lib.ptr(out), _code(work), list(a.shape), axis % rank,
              order, mode)
    return out


def spline_filter(a, order, mode, work):
    if not _usable():
        from . import _core
        return a.lib.from_host(_core.spline_filter(a.lib.to_host(a.array), order, mode))
    out = a.lib.copy(a.array, work)
    if order > 1:
        _call(a, "spline_filter", a.lib.ptr(out), _code(work), list(a.shape), order, mode)
    return out


def _coefficients(a, order, mode, cval, prefilter):
    """(coefficients, extents, shift): what sv::Interpolant holds, on the device."""
    work = _work_dtype(a.dtype)
    lib = a.lib
    if not prefilter or order < 2:
        return lib.contiguous(a.array, work), list(a.shape), 0.0
    pad = int(_cuda.interpolation_pad(mode, order))
    if pad:
        src = lib.contiguous(a.array, work)
        dims = [n + 2 * pad for n in a.shape]
        coef = lib.empty(dims, work)
        _call(a, "pad", lib.ptr(src), lib.ptr(coef), _code(work), list(a.shape), pad,
              mode == "nearest", float(cval))
    else:
        dims = list(a.shape)
        coef = lib.copy(a.array, work)
    _call(a, "spline_filter", lib.ptr(coef), _code(work), dims, order, mode)
    return coef, dims, float(pad)


def _host_fallback(a, name, *args):
    from . import _core
    return a.lib.from_host(getattr(_core, name)(a.lib.to_host(a.array), *args))


def map_coordinates(a, coordinates, order, mode, cval, prefilter, derivative_axis=-1):
    """coordinates: a DeviceInput of the same library or a NumPy array, shape (d, ...)."""
    lib = a.lib
    if isinstance(coordinates, DeviceInput):
        c = coordinates.array
        cdtype = np.float32 if coordinates.dtype == np.float32 else np.float64
        if not _usable():
            return _host_fallback(a, "map_coordinates", lib.to_host(c).astype(np.float64),
                                  order, mode, cval, prefilter, derivative_axis)
        c = lib.contiguous(c, cdtype)
        shape = coordinates.shape[1:]
    else:
        host = np.ascontiguousarray(coordinates, dtype=np.float64)
        if not _usable():
            return _host_fallback(a, "map_coordinates", host, order, mode, cval, prefilter,
                                  derivative_axis)
        c = lib.from_host(host)
        cdtype = np.float64
        shape = host.shape[1:]
    coef, dims, shift = _coefficients(a, order, mode, cval, prefilter)
    work = _work_dtype(a.dtype)
    out = lib.empty(shape, work)
    m = int(np.prod(shape, dtype=np.int64))
    if m:
        _call(a, "map_coordinates", lib.ptr(coef), _code(work), dims, order, mode, float(cval),
              shift, int(derivative_axis), lib.ptr(c), _code(cdtype), m, lib.ptr(out))
    return out


def _tables(a, tables, order, mode, cval, prefilter):
    coef, dims, shift = _coefficients(a, order, mode, cval, prefilter)
    work = _work_dtype(a.dtype)
    out = a.lib.empty([len(t) for t in tables], work)
    _call(a, "sample_tables", a.lib.ptr(coef), _code(work), dims, order, mode, float(cval), shift,
          [list(map(float, t)) for t in tables], a.lib.ptr(out))
    return out


# scipy's positions with its arithmetic (lib/include/splineview/transform.h); NumPy's float64
# operations round each step as the C++ code does.
def _zoom_positions(n_in, n_out, grid_mode):
    num = float(n_in if grid_mode else n_in - 1)
    div = float(n_out if grid_mode else n_out - 1)
    z = num / div if div != 0 else 1.0
    i = np.arange(n_out, dtype=np.float64)
    return ((i + 0.5) * z) - 0.5 if grid_mode else i * z


def zoom(a, shape, order, mode, cval, prefilter, grid_mode):
    if not _usable():
        return _host_fallback(a, "zoom", shape, order, mode, cval, prefilter, grid_mode)
    tables = [_zoom_positions(n, m, grid_mode) for n, m in zip(a.shape, shape)]
    return _tables(a, tables, order, mode, cval, prefilter)


def shift(a, shifts, order, mode, cval, prefilter):
    if not _usable():
        return _host_fallback(a, "shift", shifts, order, mode, cval, prefilter)
    tables = [np.arange(n, dtype=np.float64) + (-s) for n, s in zip(a.shape, shifts)]
    return _tables(a, tables, order, mode, cval, prefilter)


def affine_transform(a, matrix, offset, output_shape, order, mode, cval, prefilter, diagonal_1d):
    if not _usable():
        return _host_fallback(a, "affine_transform", matrix, offset, output_shape, order, mode,
                              cval, prefilter, diagonal_1d)
    if diagonal_1d:  # scipy's zoom_shift positions: (o + offset / m) * m
        tables = []
        for n, m, off in zip(output_shape, matrix, offset):
            i = np.arange(n, dtype=np.float64)
            tables.append((i + off / m) * m if m != 0 else i * 0.0 + off)
        return _tables(a, tables, order, mode, cval, prefilter)
    coef, dims, shift_ = _coefficients(a, order, mode, cval, prefilter)
    work = _work_dtype(a.dtype)
    out = a.lib.empty(output_shape, work)
    _call(a, "sample_affine", a.lib.ptr(coef), _code(work), dims, order, mode, float(cval),
          shift_, [float(v) for v in matrix], [float(v) for v in offset],
          [int(n) for n in output_shape], a.lib.ptr(out))
    return out


def affine_transform_planes(a, axis_a, axis_b, matrix, offset, out_a, out_b, order, mode, cval,
                            prefilter):
    """3-D rotate: the 2-D transform of every plane parallel to (axis_a, axis_b), as one 3-D
    transform whose matrix is the identity on the third axis. Its positions on that axis are
    integers, where the 3-D spline equals the plane's 2-D spline (interpolation), so the result
    is scipy's plane-by-plane one to rounding."""
    if not _usable():
        return _host_fallback(a, "affine_transform_planes", axis_a, axis_b, matrix, offset,
                              out_a, out_b, order, mode, cval, prefilter)
    m3 = np.eye(3)
    m3[axis_a, axis_a], m3[axis_a, axis_b] = matrix[0], matrix[1]
    m3[axis_b, axis_a], m3[axis_b, axis_b] = matrix[2], matrix[3]
    off3 = [0.0, 0.0, 0.0]
    off3[axis_a], off3[axis_b] = offset[0], offset[1]
    shape = list(a.shape)
    shape[axis_a], shape[axis_b] = out_a, out_b
    return affine_transform(a, list(m3.ravel()), off3, shape, order, mode, cval, prefilter,
                            False)


def as_float64(a):
    return a.lib.contiguous(a.array, np.float64)


def zeros(a, shape):
    return a.lib.zeros(shape, np.float64)


def store(a, result, output, shape, input_dtype):
    """_ndimage._store for device results: output None (the input's dtype), a dtype, or an
    array of the input's library on its device to fill (then None is returned)."""
    lib = a.lib
    if output is None:
        dtype, target = np.dtype(input_dtype), None
    elif is_device_array(output):
        target = lib.wrap(output)
        if not lib.owns(target):
            raise TypeError("output must be an array of the input's library (%s)" % lib.name)
        if tuple(target.shape) != tuple(shape):
            raise RuntimeError("output shape %s does not match the result's %s"
                               % (tuple(target.shape), tuple(shape)))
        dtype = lib.dtype(target)
    elif isinstance(output, np.ndarray):
        raise TypeError("output is a NumPy array but the input is on the GPU; pass an array of "
                        "the input's library (%s) or a dtype" % lib.name)
    else:
        dtype, target = np.dtype(output), None
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError("complex output is not supported by splineview")
    if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
        r = lib.round_half_away(result)
        if dtype != np.bool_:
            info = np.iinfo(dtype)
            r = lib.clip(r, int(info.min), int(info.max))
        result = r
    if target is not None:
        lib.fill(target, result)
        return None
    if lib.dtype(result) == dtype:
        return result
    return lib.astype(result, dtype)


def spline_filter_out_of_core(a, order=3, mode="mirror", *, memory_budget=None, pinned=False,
                              device=0):
    """B-spline coefficients of a float32 host array computed in place on the GPU in slabs, so
    the array need not fit in GPU memory (nor in RAM: an np.memmap of a file works, e.g.
    np.load(path, mmap_mode="r+") of a float32 .npy). Each slab carries a halo derived from the
    filter (docs/DESIGN.md, "Halos"): the result equals the whole-array coefficients to below
    float precision. memory_budget: device bytes to use (default 80% of the free memory);
    pinned=True: `a` is page-locked memory (no staging copies). Returns the pass's figures
    (slabs, halo, seconds, bytes moved). The mode is the prefilter's (as spline_filter's).

    Raises RuntimeError without a CUDA device, TypeError/ValueError for other arrays."""
    from . import _ndimage
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    if not isinstance(a, np.ndarray):
        raise TypeError("spline_filter_out_of_core takes a NumPy array (or np.memmap) in host "
                        "memory; device arrays fit their device: use spline_filter")
    if a.dtype != np.float32 or not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError("spline_filter_out_of_core works in place on a writable, C-contiguous "
                         "float32 array (got %s, %s%s)" % (
                             a.dtype, "C-contiguous" if a.flags.c_contiguous else "strided",
                             "" if a.flags.writeable else ", read-only"))
    if not 1 <= a.ndim <= 3:
        raise ValueError("input has %d dimensions; splineview handles 1-, 2- and 3-D data only"
                         % a.ndim)
    if min(a.shape) == 0:
        raise ValueError("input has an empty axis")
    ok, why = gpu_available()
    if not ok:
        raise RuntimeError("spline_filter_out_of_core needs a CUDA device: " + why)
    budget = 0 if memory_budget is None else int(memory_budget)
    return dict(_cuda.prefilter_out_of_core(a.ctypes.data, list(a.shape), 1, order, mode, budget,
                                            bool(pinned), int(device)))


def _host_input(a, name, in_memory):
    """The checks of an out-of-core call's input: a C-contiguous float32 NumPy array (or
    np.memmap) of 1-3 dimensions without an empty axis."""
    if not isinstance(a, np.ndarray):
        raise TypeError("%s takes a NumPy array (or np.memmap) in host memory; device arrays "
                        "fit their device: use %s" % (name, in_memory))
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        raise ValueError("%s reads a C-contiguous float32 array (got %s, %s)" % (
            name, a.dtype, "C-contiguous" if a.flags.c_contiguous else "strided"))
    if not 1 <= a.ndim <= 3:
        raise ValueError("input has %d dimensions; splineview handles 1-, 2- and 3-D data only"
                         % a.ndim)
    if min(a.shape) == 0:
        raise ValueError("input has an empty axis")
    return a


def _host_output(a, output, shape, pinned, name, what):
    """The output of an out-of-core call (a new float32 array, or the given writable C-contiguous
    float32 array of `shape`, not overlapping `a`), after the pinned and device checks."""
    if output is None:
        output = np.empty(shape, dtype=np.float32)
    elif not isinstance(output, np.ndarray) or output.dtype != np.float32 or \
            not output.flags.c_contiguous or not output.flags.writeable:
        raise ValueError("%s writes a writable, C-contiguous float32 NumPy array" % name)
    if tuple(output.shape) != tuple(shape):
        raise ValueError("%s: output has shape %s, %s gives %s"
                         % (name, tuple(output.shape), what, tuple(shape)))
    if np.shares_memory(a, output):
        raise ValueError("%s: input and output overlap" % name)
    if pinned and (isinstance(a, np.memmap) or isinstance(output, np.memmap)):
        raise ValueError("%s: pinned=True page-locks the arrays, and a memory map of a file "
                         "cannot be page-locked; use pinned=False for memory maps" % name)
    ok, why = gpu_available()
    if not ok:
        raise RuntimeError("%s needs a CUDA device: %s" % (name, why))
    return output


def zoom_out_of_core(input, zoom, output=None, order=3, mode="constant", cval=0.0,
                     prefilter=True, *, grid_mode=False, memory_budget=None, slab_slices=None,
                     pinned=False, stats=None, device=0):
    """scipy.ndimage.zoom of a float32 host array on the GPU in output slabs, so neither the
    input nor the output need fit in GPU memory (nor in RAM: `input` may be an np.memmap of a
    .npy or raw file, opened read-only, and `output` an np.memmap opened for writing, e.g.
    np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=...)). Each slab's input
    window carries the filter's halo (docs/DESIGN.md, "Halos"), so the result equals the
    in-memory zoom to float rounding. One channel, 1-3 D; every mode, cval, orders 0-7,
    grid_mode as scipy.

    output: None (a new float32 array) or a writable C-contiguous float32 array of the output
    shape, round(shape * zoom) per axis. memory_budget: device bytes (default 80% of the free
    memory); slab_slices: at most this many output slices per slab (default: what the budget
    allows). pinned=True page-locks both arrays for the call (cudaHostRegister, once per call;
    not for memory maps of files, which cannot be locked): then no host copies, and the
    transfers overlap the kernels (about the transfer floor on an H100); the locking itself
    costs about 40 ms per GB. stats: a dict to receive the pass's
    figures (slabs, halo, seconds, bytes moved, lock_seconds). Returns the output.

    Raises RuntimeError without a CUDA device, TypeError/ValueError for other arrays."""
    from . import _ndimage
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    a = _host_input(input, "zoom_out_of_core", "zoom")
    factors = [float(z) for z in _ndimage._sequence(zoom, a.ndim, "zoom")]
    shape = tuple(int(round(n * z)) for n, z in zip(a.shape, factors))
    if min(shape) <= 0:
        raise ValueError("zoom_out_of_core: the output shape %s has an empty axis" % (shape,))
    if grid_mode and mode in ("constant", "wrap"):
        warnings.warn("It is recommended to use mode = %s instead of %s when grid_mode is True."
                      % ("grid-constant" if mode == "constant" else "grid-wrap", mode))
    output = _host_output(a, output, shape, pinned, "zoom_out_of_core", "the zoom")
    budget = 0 if memory_budget is None else int(memory_budget)
    st = dict(_cuda.zoom_out_of_core(a.ctypes.data, list(a.shape), output.ctypes.data,
                                     list(shape), order, mode, float(cval), bool(prefilter),
                                     bool(grid_mode), budget,
                                     0 if slab_slices is None else int(slab_slices),
                                     bool(pinned), int(device)))
    if stats is not None:
        stats.update(st)
    return output


def _affine_out_of_core(a, matrix, offset, shape, output, order, mode, cval, prefilter,
                        memory_budget, slab_slices, pinned, stats, device):
    budget = 0 if memory_budget is None else int(memory_budget)
    st = dict(_cuda.affine_out_of_core(a.ctypes.data, list(a.shape), output.ctypes.data,
                                       list(shape), [float(v) for v in np.ravel(matrix)],
                                       [float(v) for v in offset], order, mode, float(cval),
                                       bool(prefilter), budget,
                                       0 if slab_slices is None else int(slab_slices),
                                       bool(pinned), int(device)))
    if stats is not None:
        stats.update(st)
    return output


def affine_transform_out_of_core(input, matrix, offset=0.0, output_shape=None, output=None,
                                 order=3, mode="constant", cval=0.0, prefilter=True, *,
                                 memory_budget=None, slab_slices=None, pinned=False, stats=None,
                                 device=0):
    """scipy.ndimage.affine_transform of a float32 host array on the GPU in output slabs along
    the first axis, so neither the input nor the output need fit in GPU memory (nor in RAM:
    memory maps of files, as zoom_out_of_core takes them). matrix: (ndim, ndim), (ndim, ndim + 1)
    or (ndim + 1, ndim + 1) homogeneous, as scipy reads them; the output has the input's rank
    (output_shape, default the input's). The 1-D (diagonal) form is refused: scipy computes its
    positions another way (use zoom_out_of_core, or the diagonal matrix). Each slab's input
    window spans the first-axis positions of the slab's corners plus the taps and the filter's
    halo (docs/DESIGN.md, "Out of core on the GPU"), so the result equals the in-memory
    transform to float rounding; a matrix that mixes the first axis with the others needs wider
    windows, and a memory_budget that cannot hold one output slice's window raises RuntimeError
    naming the slices it needs. Other arguments as zoom_out_of_core. Returns the output."""
    from . import _ndimage
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    a = _host_input(input, "affine_transform_out_of_core", "affine_transform")
    if output_shape is None:
        output_shape = a.shape if output is None or not isinstance(output, np.ndarray) \
            else output.shape
    shape = tuple(int(n) for n in output_shape)
    if len(shape) != a.ndim:
        raise ValueError("affine_transform_out_of_core: the output must have the input's %d "
                         "dimensions (got %d)" % (a.ndim, len(shape)))
    if min(shape) <= 0:
        raise ValueError("affine_transform_out_of_core: the output shape %s has an empty axis"
                         % (shape,))
    m, off = _ndimage._affine_parts(matrix, offset, a.shape, shape)
    if m.ndim == 1:
        raise ValueError("affine_transform_out_of_core takes a square matrix; for the 1-D "
                         "(diagonal) form use zoom_out_of_core or np.diag(matrix)")
    output = _host_output(a, output, shape, pinned, "affine_transform_out_of_core",
                          "output_shape")
    return _affine_out_of_core(a, m, off, shape, output, order, mode, cval, prefilter,
                               memory_budget, slab_slices, pinned, stats, device)


def rotate_out_of_core(input, angle, axes=(1, 0), reshape=True, output=None, order=3,
                       mode="constant", cval=0.0, prefilter=True, *, memory_budget=None,
                       slab_slices=None, pinned=False, stats=None, device=0):
    """scipy.ndimage.rotate of a float32 host array (2-D or 3-D) on the GPU in output slabs along
    the first axis (see affine_transform_out_of_core): scipy's matrix and output shape to the
    last bit. A rotation in the plane of the last two axes (axes=(1, 2) of a volume) keeps each
    output slice on its own input slice: thin windows; a plane that holds the first axis needs
    the input slices each output slice crosses. Other arguments as zoom_out_of_core. Returns
    the output."""
    from . import _ndimage
    order = _ndimage._check_order(order)
    mode = _ndimage._check_mode(mode)
    a = _host_input(input, "rotate_out_of_core", "rotate")
    if a.ndim < 2:
        raise ValueError("input array should be at least 2D")
    axes = _ndimage._rotation_axes(axes, a.ndim)
    rot, plane_offset, _, shape = _ndimage._rotation_plan(a.shape, angle, axes, reshape)
    if min(shape) <= 0:
        raise ValueError("rotate_out_of_core: the output shape %s has an empty axis" % (shape,))
    m = np.eye(a.ndim)
    off = np.zeros(a.ndim)
    for i, p in enumerate(axes):
        off[p] = plane_offset[i]
        for j, q in enumerate(axes):
            m[p, q] = rot[i, j]
    output = _host_output(a, output, shape, pinned, "rotate_out_of_core", "the rotation")
    return _affine_out_of_core(a, m, off, shape, output, order, mode, cval, prefilter,
                               memory_budget, slab_slices, pinned, stats, device)
