"""scipy.ndimage.geometric_transform over splineview's map_coordinates."""
import numpy as np

from ._ndimage import map_coordinates

__all__ = ["geometric_transform"]


def geometric_transform(input, mapping, output_shape=None, output=None, order=3,
                        mode="constant", cval=0.0, prefilter=True, extra_arguments=(),
                        extra_keywords=None):
    """scipy.ndimage.geometric_transform: output[o] = spline(input)(mapping(o)), where
    `mapping` is a Python callable taking the output coordinates as a tuple (plus
    extra_arguments and extra_keywords) and returning the input coordinates.

    As in scipy, `mapping` is called once per output point (Python speed). The input
    coordinates are collected first and evaluated in one map_coordinates call, so they are held
    in memory (ndim doubles per output point). scipy's LowLevelCallable mappings are refused
    (TypeError)."""
    if extra_keywords is None:
        extra_keywords = {}
    if not callable(mapping) or type(mapping).__name__ == "LowLevelCallable":
        raise TypeError("mapping must be a Python callable (splineview does not take "
                        "LowLevelCallable)")
    a = np.asarray(input)
    if output_shape is None:
        output_shape = output.shape if isinstance(output, np.ndarray) else a.shape
    output_shape = tuple(int(s) for s in output_shape)
    if a.ndim < 1 or len(output_shape) < 1:
        raise RuntimeError("input and output rank must be > 0")
    count = int(np.prod(output_shape))
    coords = np.empty((a.ndim, count), dtype=np.float64)
    for i, index in enumerate(np.ndindex(*output_shape)):
        c = mapping(index, *extra_arguments, **extra_keywords)
        if len(c) != a.ndim:
            raise RuntimeError("mapping returned %d coordinates for a %d-D input"
                               % (len(c), a.ndim))
        coords[:, i] = c
    coords = coords.reshape((a.ndim,) + output_shape)
    return map_coordinates(a, coords, output=output, order=order, mode=mode, cval=cval,
                           prefilter=prefilter)
