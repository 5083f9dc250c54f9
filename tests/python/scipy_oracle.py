"""What the package's scipy oracle tests share (test_scipy_api.py, test_transforms.py): the mode
names, the tolerance, the failure list, the difference measure and the exact oracle for the
modes scipy pads by only 12 samples. Imported after the test has checked that scipy exists."""
import numpy as np
import scipy.ndimage as ndi

MODES = ["reflect", "grid-mirror", "mirror", "grid-wrap", "wrap", "nearest", "constant",
         "grid-constant"]
TOL = 1e-12
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def maxdiff(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def padded_oracle(a, coords, order, mode, cval):
    """scipy's own map_coordinates(prefilter=True) algorithm for 'nearest' and 'grid-constant'
    with 48 samples of padding instead of its 12: exact to double precision. The padded array
    is prefiltered with mirror ends, which bring a reflected copy of the data back at 2 * pad
    samples from it and pad samples beyond the padding's outer edge; its effect on the
    coefficients decays as |z|^distance, |z| <= 0.4306 for orders 2-5, so 0.4306^48 = 2.5e-18
    of the data's range. (200 samples made a 3-D case's padded copy 500 MB.)"""
    pad = 48
    if mode == "nearest":
        p = np.pad(a, pad, mode="edge")
    else:
        p = np.pad(a, pad, mode="constant", constant_values=cval)
    c = ndi.spline_filter(p, order=order, mode="mirror")
    return ndi.map_coordinates(c, coords + pad, order=order, mode=mode, cval=cval,
                               prefilter=False)
