"""splineview: exact B-spline interpolation (degrees 0 to 7) with scipy.ndimage's interface.

    import numpy as np, splineview
    img = np.random.rand(64, 64)
    coords = np.mgrid[0:63:0.5, 0:63:0.5]
    out = splineview.map_coordinates(img, coords, order=3, mode="mirror")

The functions take scipy.ndimage's arguments and return what scipy returns; they compute in
double precision in C++ (splineview._core), release the GIL while they work and use every core.
CuPy arrays and torch CUDA tensors are processed on their GPU and returned there (where the
package was built with CUDA: splineview._cuda). Beyond scipy: orders 6 and 7,
map_coordinates(..., derivative=axis), spline_filter_out_of_core, zoom_out_of_core,
affine_transform_out_of_core and rotate_out_of_core (host arrays and memory maps larger than the
GPU) and, in splineview.dask, the functions on dask
arrays. B-spline signal processing (NumPy arrays on the CPU; CuPy arrays and torch CUDA tensors on
their GPU): spline_derivative, spline_gradient,
spline_gradient_magnitude, spline_laplace and spline_hessian (exact derivatives of the spline at
the grid, computed in the coefficient domain; not scipy's Gaussian filters),
smoothing_spline_filter (the direct transform with a smoothing parameter), indirect_transform,
reduce2 and expand2 (the least-squares pyramid).
"""
from ._bspline import (expand2, indirect_transform, reduce2, smoothing_spline_filter,
                       spline_derivative, spline_gradient, spline_gradient_magnitude,
                       spline_hessian, spline_laplace)
from ._core import __version__
from ._geometric import geometric_transform
from ._gpu import (affine_transform_out_of_core, rotate_out_of_core, spline_filter_out_of_core,
                   zoom_out_of_core)
from ._ndimage import (affine_transform, map_coordinates, rotate, shift, spline_filter,
                       spline_filter1d, zoom)

__all__ = ["__version__", "affine_transform", "affine_transform_out_of_core", "expand2",
           "geometric_transform", "indirect_transform", "reduce2", "smoothing_spline_filter",
           "spline_derivative", "spline_gradient", "spline_gradient_magnitude", "spline_hessian",
           "spline_laplace", "map_coordinates", "rotate", "rotate_out_of_core", "shift",
           "spline_filter", "spline_filter1d", "spline_filter_out_of_core", "zoom",
           "zoom_out_of_core"]
