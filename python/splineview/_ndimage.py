"""scipy.ndimage's interpolation signatures over splineview's exact library.

Each function takes the arguments of its scipy.ndimage namesake and returns what scipy returns
(a new array, or None when `output` is an array to fill), computed in double precision by the
C++ library in splineview._core. Differences from scipy are documented per function and in the
project's docs/ACCURACY.md ("Boundary modes and scipy").
"""
import numpy as np

from . import _core

__all__ = ["spline_filter1d", "spline_filter", "map_coordinates"]

_MODES = ("reflect", "grid-mirror", "mirror", "grid-wrap", "wrap", "nearest", "constant",
          "grid-constant")


def _check_mode(mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise RuntimeError("boundary mode not supported: %r (expected one of %s)"
                           % (mode, ", ".join(_MODES)))
    return mode


def _check_order(order):
    if not isinstance(order, (int, np.integer)) or isinstance(order, bool):
        raise TypeError("spline order must be an integer, got %r" % (order,))
    if order < 0 or order > 7:
        raise RuntimeError("spline order not supported: %d (splineview: 0 to 7)" % order)
    return int(order)


def _as_input(input):
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("complex input is not supported by splineview")
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_):
        raise TypeError("input must be a numeric array, got dtype %s" % a.dtype)
    if a.ndim == 0:
        raise RuntimeError("input must have at least one dimension")
    return a


def _store(result, output, shape, input_dtype):
    """Returns (array, return_value) as scipy does: `output` None -> a new array of the input's
    dtype; a dtype (or type) -> a new array of it; an ndarray -> filled in place and None
    returned. Integer outputs are rounded half away from zero (scipy's rule) and clipped to the
    type's range (where scipy's C cast is undefined)."""
    if output is None:
        dtype = input_dtype
        target = None
    elif isinstance(output, np.ndarray):
        if output.shape != tuple(shape):
            raise RuntimeError("output shape %s does not match the result's %s"
                               % (output.shape, tuple(shape)))
        dtype = output.dtype
        target = output
    else:
        dtype = np.dtype(output)
        target = None
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError("complex output is not supported by splineview")
    if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
        r = np.where(result >= 0, np.floor(result + 0.5), np.ceil(result - 0.5))
        if dtype != np.bool_:
            info = np.iinfo(dtype)
            r = np.clip(r, info.min, info.max)
        result = r
    if target is not None:
        np.copyto(target, result, casting="unsafe")
        return None
    if result.dtype == dtype:
        return result
    return result.astype(dtype)


def spline_filter1d(input, order=3, axis=-1, output=np.float64, mode="mirror"):
    """Coefficients of the B-spline of `order` along one axis (scipy.ndimage.spline_filter1d).

    Exact for every line length, including lines shorter than the filter's reach, where scipy's
    own 'reflect' and 'mirror' start values are approximations."""
    a = _as_input(input)
    order = _check_order(order)
    mode = _check_mode(mode)
    if order in (0, 1):
        result = a.astype(np.float64)
    else:
        result = _core.spline_filter1d(a, order, int(axis), mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def spline_filter(input, order=3, output=np.float64, mode="mirror"):
    """Multidimensional B-spline coefficients (scipy.ndimage.spline_filter), every axis."""
    a = _as_input(input)
    order = _check_order(order)
    mode = _check_mode(mode)
    if order in (0, 1):
        result = a.astype(np.float64)
    else:
        result = _core.spline_filter(a, order, mode)
    return _store(result, output, a.shape, np.dtype(np.float64))


def map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0,
                    prefilter=True):
    """The spline of `order` through `input`, evaluated at `coordinates` (shape (d, ...))
    (scipy.ndimage.map_coordinates). With prefilter=True the samples are interpolated; with
    prefilter=False `input` is taken as coefficients."""
    a = _as_input(input)
    order = _check_order(order)
    mode = _check_mode(mode)
    c = np.asarray(coordinates)
    if np.iscomplexobj(c):
        raise TypeError("complex coordinates are not supported")
    if c.ndim < 1 or c.shape[0] != a.ndim:
        raise RuntimeError("invalid shape for coordinate array: %s for a %d-D input"
                           % (c.shape, a.ndim))
    result = _core.map_coordinates(a, c, order, mode, float(cval), bool(prefilter))
    return _store(result, output, c.shape[1:], a.dtype)
