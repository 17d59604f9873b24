"""Single-threaded OpenBLAS while the command line runs (``single_threaded_blas``).

Why. The reference's solvers make thousands of SMALL dense solves (``epasto2020_gwa.optimal_C``:
one 121 x 121 system per Newton step at d = 11). OpenBLAS spreads even these over its
threads, and when the cores are busy with other processes each call waits for them. On the
project's 2-core machine under load, one instance of the §6 experiment, and
``userdp reproduce epasto2020-synthetic --quick``, ran an order of magnitude slower with the
default threads than with one, nearly all of the time in ``np.linalg.solve``; on the idle
machine the two are the same: one thread costs nothing here (measured: docs/performance.md,
"audits/engine/blas.py").

How. Like threadpoolctl (not a dependency of userdp), it finds the OpenBLAS libraries
loaded in this process (Linux: /proc/self/maps) and calls their ``set_num_threads``, then
restores the previous count. It does nothing when OPENBLAS_NUM_THREADS or OMP_NUM_THREADS
is set (the user chose), or where the libraries cannot be found (other systems, other
BLAS): results never depend on it, only the time does.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

__all__ = ["single_threaded_blas", "openblas_thread_setters"]

# (setter, getter) symbol names: plain OpenBLAS, and the prefixed/suffixed builds that
# numpy (64-bit integers) and scipy wheels bundle.
_SYMBOLS = [
    ("openblas_set_num_threads", "openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
]


def openblas_thread_setters() -> list[tuple]:
    """(set_num_threads, get_num_threads) of every OpenBLAS library loaded in this process."""
    import numpy.linalg  # noqa: F401  (load both bundled BLAS libraries first, so both are found)
    import scipy.linalg  # noqa: F401

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return []
    out = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                out.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return out


@contextlib.contextmanager
def single_threaded_blas():
    """While the block runs, every OpenBLAS library in this process uses one thread (module
    docstring); then the previous counts come back. Nothing where the user set the count."""
    chosen = any(os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
    setters = [] if chosen else openblas_thread_setters()
    saved = [(setter, int(getter())) for setter, getter in setters]
    for setter, _ in saved:
        setter(1)
    try:
        yield
    finally:
        for setter, n in saved:
            setter(n)
