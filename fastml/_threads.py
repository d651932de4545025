"""BLAS's thread pool, limited for a block of code and restored after it (the one place).

Kernels that call BLAS from inside their own threads, or on blocks too small to share, run
BLAS on one thread. The limit is scoped: leaving the `with` block restores every library's
previous setting, so a fit never leaves the host process's BLAS single-threaded. threadpoolctl
scans the loaded libraries once per process (the scan costs milliseconds: never per call).
How many threads fastml's own kernels use is `_validation.check_n_jobs`.
"""
import contextlib
import threading

_CONTROLLER = None


def _blas_controller():
    """threadpoolctl's controller over the BLAS libraries, created once; None without
    threadpoolctl or without a BLAS it can drive."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER = ThreadpoolController().select(user_api="blas")
        except Exception:  # not installed, or nothing it can drive
            _CONTROLLER = False
    return _CONTROLLER or None


def blas_threads():
    """The largest thread count the loaded BLAS libraries are set to (1 when unknown)."""
    blas = _blas_controller()
    if blas is None:
        return 1
    return max([lib.num_threads for lib in blas.lib_controllers] or [1])


_LOCK = threading.Lock()
_ACTIVE = []      # [the limit in force, callers inside it, threadpoolctl's limiter]


@contextlib.contextmanager
def blas_limit(n_threads=1):
    """Context manager: BLAS on at most `n_threads` threads inside, the previous setting after.

    Safe across threads: the first caller to enter sets the limit and the last one to leave
    restores what was there before (concurrent callers each saving and restoring would leave
    BLAS at the limit). Callers that overlap share the first one's limit."""
    blas = _blas_controller()
    if blas is None:
        yield
        return
    with _LOCK:
        if not _ACTIVE:
            _ACTIVE.extend([n_threads, 0, blas.limit(limits=n_threads)])
        _ACTIVE[1] += 1
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE[1] -= 1
            if _ACTIVE[1] == 0:
                _ACTIVE[2].restore_original_limits()
                _ACTIVE.clear()
