"""B-spline signal processing beyond interpolation (issue 17), on the CPU: derivative filters
computed in the coefficient domain, smoothing splines (the direct transform with lambda), the
indirect transform and the pyramid's reduce/expand by 2.

The names carry "spline" so that they do not clash with scipy.ndimage's Gaussian filters
(gaussian_gradient_magnitude, gaussian_laplace, ...): these differentiate the interpolating (or
given) B-spline exactly, they do not smooth. Conventions as in splineview's scipy.ndimage
functions: scipy's mode names (default 'mirror'), scipy's errors for a bad order or mode, input
of 1 to 3 dimensions (ValueError beyond), `output` None (float64), a dtype or an array to fill
(then None is returned), computed in double precision in C++ with the GIL released, on every
core (SPLINEVIEW_NUM_THREADS or OMP_NUM_THREADS limit them). Host (NumPy) arrays only: a CuPy
array or torch CUDA tensor is refused with TypeError (the GPU path is not there yet).
"""
import numpy as np

from . import _core, _gpu
from ._ndimage import _as_input, _check_mode, _check_order, _check_rank, _store

__all__ = ["spline_derivative", "spline_gradient", "spline_gradient_magnitude", "spline_hessian",
           "spline_laplace", "smoothing_spline_filter", "indirect_transform", "reduce2",
           "expand2"]


def _host_input(input, what):
    if _gpu.is_device_array(input):
        raise TypeError("%s runs on the CPU only: pass a NumPy array (the GPU path of issue 17 "
                        "is not there yet)" % what)
    a = _as_input(input)
    _check_rank(a)
    return a


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
    a = _host_input(input, what)
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
    result = _core.derivative_filter(a, orders, degree, mode, float(cval), bool(prefilter))
    return _store(result, output, a.shape, np.dtype(np.float64))


def spline_gradient(input, degree=3, mode="mirror", prefilter=True, output=None, *, cval=0.0):
    """The gradient of the B-spline through `input` at the grid points: an array of shape
    (ndim, *input.shape), component k = d s / dx_k (array axis k, sample units). Not
    scipy.ndimage's Gaussian gradient; arguments as spline_derivative (degree >= 1)."""
    a, degree, mode = _derivative_args(input, degree, mode, "spline_gradient")
    if degree < 1:
        raise ValueError("spline_gradient needs degree >= 1 (degree 0 is piecewise constant)")
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
    a = _host_input(input, "smoothing_spline_filter")
    lam = _check_lambda(lam)
    degrees = _degrees(degree, a.ndim)
    mode = _check_mode(mode)
    if lam > 0:
        for n in degrees:
            if n % 2 == 0:
                raise ValueError("a smoothing spline (lam > 0) needs an odd degree (1, 3, 5 or "
                                 "7), got %d: even degrees have no smoothing spline of this form"
                                 % n)
    result = _core.direct_transform(a, degrees, lam, mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def indirect_transform(coeffs, degree=3, mode="mirror", output=None):
    """The samples at the grid s[j] = sum_k c[k] beta_n(j - k) of the B-spline with coefficients
    `coeffs` (the inverse of spline_filter for the same degree and mode), `degree` one for every
    axis or one per axis (0..7), the coefficients extended by `mode` as spline_filter's."""
    a = _host_input(coeffs, "indirect_transform")
    degrees = _degrees(degree, a.ndim)
    mode = _check_mode(mode)
    result = _core.indirect_transform(a, degrees, mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def reduce2(input, degree=3, mode="mirror", prefilter=True, coefficients=False):
    """Halves every axis: the least-squares approximation of the spline of `input` (samples, or
    with prefilter=False its coefficients) in the spline space of twice the spacing, an
    anti-aliased downsampling by 2 (docs/DESIGN.md, "The B-spline pyramid"). ceil(N/2) samples
    per axis; 'mirror' puts coarse sample l at fine 2l, 'reflect' (= 'grid-mirror') and
    'grid-wrap' (even N) at 2l + 1/2; other modes are refused. Returns the coarse samples, or
    with coefficients=True the coarse B-spline coefficients (what expand2 takes). float64."""
    a = _host_input(input, "reduce2")
    degree = _check_order(degree)
    mode = _check_mode(mode)
    coarse, samples = _core.reduce2(a, degree, mode, bool(prefilter))
    return coarse if coefficients else samples


def expand2(coeffs, shape, degree=3, mode="mirror"):
    """The exact samples on the fine grid `shape` of the coarse spline whose coefficients
    reduce2(..., coefficients=True) returned for an array of that shape with the same degree and
    mode. float64 of `shape`."""
    a = _host_input(coeffs, "expand2")
    degree = _check_order(degree)
    mode = _check_mode(mode)
    shape = [int(n) for n in shape]
    return _core.expand2(a, shape, degree, mode)
