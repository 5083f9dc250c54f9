"""GPU-machine benchmark aid (not part of splineview): the numpy names that numpy 2 removed and
Debian's dask/distributed 2022.12 (carried in .pydeps) still use, restored as aliases so that
the dask-on-CuPy check can run with that machine's numpy 2 and CuPy."""
import sys
import types

try:
    import numpy as np
except Exception:  # pragma: no cover
    np = None

if np is not None and int(np.__version__.split(".")[0]) >= 2:
    compat = types.ModuleType("numpy.compat")
    compat.basestring, compat.unicode, compat.long = str, str, int
    sys.modules.setdefault("numpy.compat", compat)
    np.compat = compat
    for old, new in (("round_", "round"), ("product", "prod"), ("cumproduct", "cumprod"),
                     ("alltrue", "all"), ("sometrue", "any"), ("NaN", "nan"), ("Inf", "inf"),
                     ("float_", "float64"), ("complex_", "complex128"), ("infty", "inf")):
        if old not in np.__dict__:
            setattr(np, old, getattr(np, new))
    try:
        import numpy.core.numeric  # noqa: F401
        import numpy.core.multiarray  # noqa: F401
    except Exception:
        sys.modules["numpy.core"] = np._core
        sys.modules["numpy.core.numeric"] = np._core.numeric
        sys.modules["numpy.core.multiarray"] = np._core.multiarray
        np.core = np._core
    mod = sys.modules.get("numpy.core.multiarray")
    if mod is not None and not hasattr(mod, "LIST_PICKLE"):
        mod.LIST_PICKLE = 1
    import warnings
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="dask")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="distributed")
