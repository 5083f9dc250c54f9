"""B-spline signal processing beyond interpolation (issue 17), on the CPU: derivative filters
computed in the coefficient domain, smoothing splines (the direct transform with lambda), the
indirect transform and the pyramid's reduce/expand by 2.

The names carry "spline" so that they do not clash with scipy.ndimage's Gaussian filters
(gaussian_gradient_magnitude, gaussian_laplace, ...): these differentiate the interpolating (or
given) B-spline exactly, they do not smooth. Conventions as in splineview's scipy.ndimage
functions: scipy's mode names (default 'mirror'), scipy's errors for a bad order or mode, input
of 1 to 3 dimensions (ValueError beyond), `output` None (float64), a dtype or an array to fill
(then None is returned), computed in double precision in C++ with the GIL released, on every
core (SPLINEVIEW_NUM_THREADS or OMP_NUM_THREADS limit them).

CuPy arrays and torch CUDA tensors (device arrays) run on their GPU (splineview._cuda over
cuda_bspline.h, ordered on the caller's current stream) and come back as arrays of the same
library on the same device, with the same shapes, default dtype (float64), argument checks and
errors as NumPy input. The working precision follows `output`, as spline_filter's on the GPU:
float32 when the output is float32 (output=cupy.float32 or a float32 array), else float64; the
derivative filters read float32 coefficients where they compute in float32. A C-contiguous
device `output` of the working dtype that does not overlap the input is written directly.
reduce2 and expand2 (no `output` argument) compute and return float64 on the device, as on the
CPU (cuda_pyramid.h). Where the package has no CUDA path (a build without CUDA, no usable
device), device arrays go through the CPU with a warning, as splineview's other functions do.
"""
import numpy as np

from . import _core, _gpu
from ._ndimage import (_as_input, _check_mode, _check_order, _check_rank, _filter_dtype,
                       _store)

__all__ = ["spline_derivative", "spline_gradient", "spline_gradient_magnitude", "spline_hessian",
           "spline_laplace", "smoothing_spline_filter", "indirect_transform", "reduce2",
           "expand2"]


def _input(input, what):
    """A NumPy array (the CPU path) or a _gpu.DeviceInput (the GPU path), checked alike."""
    a = _as_input(input)
    _check_rank(a)
    if isinstance(a, _gpu.DeviceInput) and 0 in a.shape:
        raise ValueError("%s has an empty axis" % what)
    return a


def _on_device(a):
    return isinstance(a, _gpu.DeviceInput)


def _span(lib, x):
    """The bytes [first, last) that a C-contiguous device array occupies."""
    if lib.name == "torch":
        return x.data_ptr(), x.data_ptr() + x.numel() * x.element_size()
    return x.data.ptr, x.data.ptr + x.nbytes


def _device_of(lib, x):
    if lib.name == "torch":
        return int(x.device.index) if x.device.index is not None else lib.device
    return int(x.device.id)


def _contiguous(lib, x):
    return bool(x.is_contiguous()) if lib.name == "torch" else bool(x.flags.c_contiguous)


def _direct_target(a, output, shape, work, src):
    """`output` itself when the kernels can write it: a C-contiguous device array of the input's
    library, of `shape` and the working dtype, not overlapping `src`; else None."""
    lib = a.lib
    if output is None or not _gpu.is_device_array(output):
        return None
    t = lib.wrap(output)
    if not lib.owns(t) or tuple(t.shape) != tuple(shape) or lib.dtype(t) != work or \
            not _contiguous(lib, t) or _device_of(lib, t) != lib.device:
        return None
    if src is not None:
        t0, t1 = _span(lib, t)
        s0, s1 = _span(lib, src)
        if t0 < s1 and s0 < t1:
            return None
    return t


def _device_run(a, output, shape, host, launch, from_input=False):
    """Runs a device array's operation: `launch(src, result, code)` queues the kernels (`src` the
    input as a C-contiguous array of the working dtype, or with from_input the input as it is;
    `result` a C-contiguous array of `shape` and that dtype; `code` 'f' or 'd'). The result goes
    into `output` as _gpu.store does (None: float64, as the CPU path). Without a CUDA path here,
    host(numpy input) computes it on the CPU (with _gpu's one warning)."""
    lib = a.lib
    if isinstance(output, np.ndarray) and not _gpu.is_device_array(output):
        raise TypeError("output is a NumPy array but the input is on the GPU; pass an array of "
                        "the input's library (%s) or a dtype" % lib.name)
    if not _gpu._usable():
        result = lib.from_host(host(lib.to_host(a.array)))
        return _gpu.store(a, result, output, shape, np.dtype(np.float64))
    work = _filter_dtype(output)
    src = a.array if from_input else lib.contiguous(a.array, work)
    target = _direct_target(a, output, shape, work, None if from_input else src)
    if target is not None and from_input:  # the input is copied into the target first
        t0, t1 = _span(lib, target)
        if _contiguous(lib, a.array):
            s0, s1 = _span(lib, a.array)
            if t0 < s1 and s0 < t1:
                target = None
        else:
            target = None
    result = target if target is not None else lib.empty(shape, work)
    launch(src, result, _gpu._code(work))
    if target is not None:
        return None
    return _gpu.store(a, result, output, shape, np.dtype(np.float64))


def _device_quantity(a, kind, output, shape, pointers, host, degree, mode, cval, prefilter,
                     after=None):
    """A derivative quantity of a device array: `pointers(result)` lists the arrays that
    splineview._cuda.bspline_quantity writes, in its order; after(result) completes it."""
    def launch(src, result, code):
        _gpu._call(a, "bspline_quantity", a.lib.ptr(src), pointers(result), kind, code,
                   list(a.shape), 1, degree, mode, float(cval), bool(prefilter))
        if after is not None:
            after(result)
    return _device_run(a, output, shape, host, launch)


def _orders(order, rank, degree):
    """One non-negative int per axis, each at most `degree`."""
    if isinstance(order, (int, np.integer)) and not isinstance(order, bool):
        if rank != 1:
            raise RuntimeError("order must have one entry per axis: %d entries for a %d-D input"
                               % (1, rank))
        order = [order]
    try:
        values = list(order)
    except TypeError:
        raise TypeError("order must be an int per axis, got %r" % (order,)) from None
    if len(values) != rank:
        raise RuntimeError("order must have one entry per axis: %d entries for a %d-D input"
                           % (len(values), rank))
    out = []
    for v in values:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError("order must be an int per axis, got %r" % (order,))
        if v < 0 or v > degree:
            raise ValueError("derivative order %d is outside 0..degree (degree %d): a B-spline of "
                             "degree n has derivatives up to order n" % (v, degree))
        out.append(int(v))
    return out


def _degrees(degree, rank):
    """degree: one int for every axis or a sequence of one per axis (each 0..7)."""
    if isinstance(degree, (int, np.integer)) and not isinstance(degree, bool):
        return [_check_order(degree)] * rank
    values = list(degree)
    if len(values) != rank:
        raise RuntimeError("degree must be an int or have one entry per axis: %d entries for a "
                           "%d-D input" % (len(values), rank))
    return [_check_order(v) for v in values]


def _derivative_args(input, degree, mode, what):
    a = _input(input, "input")
    degree = _check_order(degree)
    mode = _check_mode(mode)
    return a, degree, mode


def spline_derivative(input, order, degree=3, mode="mirror", prefilter=True, output=None, *,
                      cval=0.0):
    """The partial derivative of multi-index `order` (one int per axis, each 0..degree; a plain
    int for 1-D input) of the B-spline of `degree` through `input`, at the grid points.

    Not scipy.ndimage's Gaussian derivative (gaussian_filter(..., order=...)): the exact
    derivative of the interpolating spline (prefilter=True; with False `input` holds the
    B-spline coefficients, as scipy's prefilter=False), computed in the coefficient domain:
    forward differences of the coefficients, then the indirect transform of the lower degree
    (docs/DESIGN.md, "Derivatives and the coefficient domain"). Equals
    map_coordinates(..., derivative=axis) at the grid points for first derivatives. Every scipy
    mode; cval for 'grid-constant'. Result float64 unless `output` says otherwise."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_derivative")
    orders = _orders(order, a.ndim, degree)
    if _on_device(a):
        def launch(src, result, code):
            _gpu._call(a, "bspline_derivative", a.lib.ptr(src), a.lib.ptr(result), code,
                       list(a.shape), 1, orders, degree, mode, float(cval), bool(prefilter))
        return _device_run(a, output, a.shape,
                           lambda h: spline_derivative(h, orders, degree, mode, prefilter,
                                                       cval=cval), launch)
    result = _core.derivative_filter(a, orders, degree, mode, float(cval), bool(prefilter))
    return _store(result, output, a.shape, np.dtype(np.float64))


def spline_gradient(input, degree=3, mode="mirror", prefilter=True, output=None, *, cval=0.0):
    """The gradient of the B-spline through `input` at the grid points: an array of shape
    (ndim, *input.shape), component k = d s / dx_k (array axis k, sample units). Not
    scipy.ndimage's Gaussian gradient; arguments as spline_derivative (degree >= 1)."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_gradient")
    if degree < 1:
        raise ValueError("spline_gradient needs degree >= 1 (degree 0 is piecewise constant)")
    if _on_device(a):
        return _device_quantity(
            a, "gradient", output, (a.ndim,) + a.shape,
            lambda r: [a.lib.ptr(r[k]) for k in range(a.ndim)],
            lambda h: spline_gradient(h, degree, mode, prefilter, cval=cval),
            degree, mode, cval, prefilter)
    result = _core.derivative_quantity(a, "gradient", degree, mode, float(cval), bool(prefilter))
    return _store(result, output, (a.ndim,) + a.shape, np.dtype(np.float64))


def spline_gradient_magnitude(input, degree=3, mode="mirror", prefilter=True, output=None, *,
                              cval=0.0):
    """sqrt(sum_k (d s / dx_k)^2) of the B-spline through `input` at the grid points (input's
    shape). Not scipy.ndimage.gaussian_gradient_magnitude (no smoothing, exact derivatives of
    the spline); arguments as spline_derivative (degree >= 1)."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_gradient_magnitude")
    if degree < 1:
        raise ValueError("spline_gradient_magnitude needs degree >= 1")
    if _on_device(a):
        return _device_quantity(
            a, "gradient_magnitude", output, a.shape, lambda r: [a.lib.ptr(r)],
            lambda h: spline_gradient_magnitude(h, degree, mode, prefilter, cval=cval),
            degree, mode, cval, prefilter)
    result = _core.derivative_quantity(a, "gradient_magnitude", degree, mode, float(cval),
                                       bool(prefilter))
    return _store(result, output, a.shape, np.dtype(np.float64))


def spline_laplace(input, degree=3, mode="mirror", prefilter=True, output=None, *, cval=0.0):
    """sum_k d^2 s / dx_k^2 of the B-spline through `input` at the grid points, computed in the
    coefficient domain (each second derivative lowers the degree by two). Not
    scipy.ndimage.laplace (a [1, -2, 1] stencil) nor gaussian_laplace; degree >= 2."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_laplace")
    if degree < 2:
        raise ValueError("spline_laplace needs degree >= 2 (got %d): a spline of degree %d has no "
                         "second derivative" % (degree, degree))
    if _on_device(a):
        return _device_quantity(
            a, "laplacian", output, a.shape, lambda r: [a.lib.ptr(r)],
            lambda h: spline_laplace(h, degree, mode, prefilter, cval=cval),
            degree, mode, cval, prefilter)
    result = _core.derivative_quantity(a, "laplacian", degree, mode, float(cval),
                                       bool(prefilter))
    return _store(result, output, a.shape, np.dtype(np.float64))


def spline_hessian(input, degree=3, mode="mirror", prefilter=True, output=None, *, cval=0.0):
    """The second derivatives of the B-spline through `input` at the grid points: an array of
    shape (ndim, ndim, *input.shape), symmetric, [i, j] = d^2 s / dx_i dx_j (the ndim(ndim+1)/2
    distinct ones are computed once). Not a Gaussian Hessian; degree >= 2."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_hessian")
    if degree < 2:
        raise ValueError("spline_hessian needs degree >= 2 (got %d)" % degree)
    r = a.ndim
    if _on_device(a):
        def mirror(full):  # the lower triangle, after the kernels, on the caller's stream
            for i in range(r):
                for j in range(i + 1, r):
                    a.lib.fill(full[j, i], full[i, j])
        # The kernels write the upper triangle (sv::hessian_index order) in place.
        return _device_quantity(
            a, "hessian", output, (r, r) + a.shape,
            lambda full: [a.lib.ptr(full[i, j]) for i in range(r) for j in range(i, r)],
            lambda h: spline_hessian(h, degree, mode, prefilter, cval=cval),
            degree, mode, cval, prefilter, after=mirror)
    upper = _core.derivative_quantity(a, "hessian", degree, mode, float(cval), bool(prefilter))
    r = a.ndim
    full = np.empty((r, r) + a.shape, dtype=np.float64)
    k = 0
    for i in range(r):  # the upper triangle row by row (sv::hessian_index)
        for j in range(i, r):
            full[i, j] = upper[k]
            full[j, i] = upper[k]
            k += 1
    return _store(full, output, full.shape, np.dtype(np.float64))


def _check_lambda(lam):
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
        raise TypeError("lam must be a real number, got %r" % (lam,))
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError("lam must be finite and >= 0 (got %r)" % lam)
    return lam


def smoothing_spline_filter(input, lam, degree=3, mode="mirror", output=None):
    """The B-spline coefficients of the smoothing spline of `input` (the direct transform with a
    smoothing parameter): per axis, the spline s of degree n = 2r - 1 that minimises
    sum_k (f[k] - s(k))^2 + lam * integral (s^(r)(x))^2 dx over the signal extended by `mode`,
    i.e. f filtered by 1 / (B_n(z) + lam (-z + 2 - z^-1)^r) (Unser's smoothing splines; the
    tensor product of the 1-D filters in 2-D and 3-D). lam = 0 is spline_filter (the
    interpolating prefilter); lam > 0 needs odd degrees (1, 3, 5, 7). `degree`: one for every
    axis or one per axis. indirect_transform of the result gives the smoothed samples. Modes as
    spline_filter ('nearest' extends as 'reflect'; 'wrap' and the constants as 'mirror')."""
    a = _input(input, "input")
    lam = _check_lambda(lam)
    degrees = _degrees(degree, a.ndim)
    mode = _check_mode(mode)
    if lam > 0:
        for n in degrees:
            if n % 2 == 0:
                raise ValueError("a smoothing spline (lam > 0) needs an odd degree (1, 3, 5 or "
                                 "7), got %d: even degrees have no smoothing spline of this form"
                                 % n)
    if _on_device(a):
        def launch(src, result, code):  # a copy of the input, then the transform in place
            a.lib.fill(result, src)
            _gpu._call(a, "bspline_direct_transform", a.lib.ptr(result), code, list(a.shape), 1,
                       degrees, lam, mode)
        return _device_run(a, output, a.shape,
                           lambda h: smoothing_spline_filter(h, lam, degrees, mode), launch,
                           from_input=True)
    result = _core.direct_transform(a, degrees, lam, mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def indirect_transform(coeffs, degree=3, mode="mirror", output=None):
    """The samples at the grid s[j] = sum_k c[k] beta_n(j - k) of the B-spline with coefficients
    `coeffs` (the inverse of spline_filter for the same degree and mode), `degree` one for every
    axis or one per axis (0..7), the coefficients extended by `mode` as spline_filter's."""
    a = _input(coeffs, "input")
    degrees = _degrees(degree, a.ndim)
    mode = _check_mode(mode)
    if _on_device(a):
        def launch(src, result, code):
            _gpu._call(a, "bspline_indirect_transform", a.lib.ptr(src), a.lib.ptr(result), code,
                       list(a.shape), 1, degrees, mode)
        return _device_run(a, output, a.shape,
                           lambda h: indirect_transform(h, degrees, mode), launch)
    result = _core.indirect_transform(a, degrees, mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def reduce2(input, degree=3, mode="mirror", prefilter=True, coefficients=False):
    """Halves every axis: the least-squares approximation of the spline of `input` (samples, or
    with prefilter=False its coefficients) in the spline space of twice the spacing, an
    anti-aliased downsampling by 2 (docs/DESIGN.md, "The B-spline pyramid"). ceil(N/2) samples
    per axis; 'mirror' puts coarse sample l at fine 2l, 'reflect' (= 'grid-mirror') and
    'grid-wrap' (even N) at 2l + 1/2; other modes are refused. Returns the coarse samples, or
    with coefficients=True the coarse B-spline coefficients (what expand2 takes). float64."""
    a = _input(input, "input")
    degree = _check_order(degree)
    mode = _check_mode(mode)
    if _on_device(a):
        return _device_reduce2(a, degree, mode, bool(prefilter), bool(coefficients))
    coarse, samples = _core.reduce2(a, degree, mode, bool(prefilter))
    return coarse if coefficients else samples


def _device_reduce2(a, degree, mode, prefilter, coefficients):
    """reduce2 of a device array (cuda_pyramid.h, float64 as the CPU path); the coarse samples
    are computed only when they are returned."""
    lib = a.lib
    if not _gpu._usable():
        coarse, samples = _core.reduce2(lib.to_host(a.array), degree, mode, prefilter)
        return lib.from_host(coarse if coefficients else samples)
    dims = [int(n) for n in _gpu._cuda.bspline_reduce2_shape(list(a.shape), degree, mode)]
    src = lib.contiguous(a.array, np.float64)
    coef = lib.empty(dims, np.float64)
    samples = None if coefficients else lib.empty(dims, np.float64)
    _gpu._call(a, "bspline_reduce2", lib.ptr(src), lib.ptr(coef),
               0 if samples is None else lib.ptr(samples), "d", list(a.shape), 1, degree, mode,
               prefilter)
    return coef if coefficients else samples


def expand2(coeffs, shape, degree=3, mode="mirror"):
    """The exact samples on the fine grid `shape` of the coarse spline whose coefficients
    reduce2(..., coefficients=True) returned for an array of that shape with the same degree and
    mode. float64 of `shape`."""
    a = _input(coeffs, "coefficients")
    degree = _check_order(degree)
    mode = _check_mode(mode)
    shape = [int(n) for n in shape]
    if _on_device(a):
        lib = a.lib
        if not _gpu._usable():
            return lib.from_host(_core.expand2(lib.to_host(a.array), shape, degree, mode))
        fine = [int(n) for n in _gpu._cuda.bspline_expand2_shape(list(a.shape), shape, degree,
                                                                 mode)]
        src = lib.contiguous(a.array, np.float64)
        out = lib.empty(fine, np.float64)
        _gpu._call(a, "bspline_expand2", lib.ptr(src), lib.ptr(out), "d", list(a.shape), 1, fine,
                   degree, mode)
        return out
    return _core.expand2(a, shape, degree, mode)
