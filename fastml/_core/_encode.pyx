# Integer categorical columns to codes, for fastml/_tabular.py (naive Bayes, trees, forests and
# fastml.info all encode through it).
#
# A column of integers whose range is narrow is encoded through a dense lookup table over
# [lo, hi]: one pass marks the values present (the vocabulary), one pass maps each cell to its
# code. offsets[j] is where column j's slice of the table starts, so all columns share one
# table; a value outside the column's slice is a level never seen at fit (UNSEEN).
from cython.parallel cimport prange
from cython cimport floating
from libc.stdint cimport int32_t, int64_t, uint64_t

from ._typedefs cimport index_t

cdef enum:
    PRED_CHUNK = 1024  # rows per parallel task: enough work to hide the scheduling

# The codes of a missing cell and of a level never seen at fit, declared in _encode.pxd for the
# kernels and exported here for fastml/_tabular.py.
MISSING = MISSING_CODE
UNSEEN = UNSEEN_CODE


def int_levels_present(const int_t[:, ::1] X, const int64_t[::1] lo,
                       const index_t[::1] offsets, unsigned char[::1] present):
    """present[offsets[j] + X[i, j] - lo[j]] = 1 for every cell. Trusted: lo[j] = min of
    column j and max - min < offsets[j + 1] - offsets[j] (checked in Python ints)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j
    if lo.shape[0] != d or offsets.shape[0] != d + 1 or present.shape[0] < offsets[d]:
        raise ValueError("lo, offsets and present do not match X's columns")
    with nogil:
        for i in range(n):
            for j in range(d):
                present[offsets[j] + <index_t> distance(X[i, j], lo[j])] = 1


def encode_int(const int_t[:, ::1] X, const int64_t[::1] lo, const index_t[::1] offsets,
               const int[::1] lut, int[:, ::1] out, int n_threads=1):
    """out[i, j] = lut[offsets[j] + X[i, j] - lo[j]] when X[i, j] is inside column j's range
    [lo[j], lo[j] + offsets[j + 1] - offsets[j]), else UNSEEN: integer levels to codes in one
    pass. Any int64 value is safe (the distance to lo is taken in uint64)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], chunk, i, j
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    cdef uint64_t v
    if lo.shape[0] != d or offsets.shape[0] != d + 1 or lut.shape[0] < offsets[d]:
        raise ValueError("lo, offsets and lut do not match X's columns")
    if out.shape[0] != n or out.shape[1] != d:
        raise ValueError(f"out must be ({n}, {d}); got ({out.shape[0]}, {out.shape[1]})")
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for j in range(d):
                    v = distance(X[i, j], lo[j])
                    if X[i, j] >= lo[j] and v < <uint64_t> (offsets[j + 1] - offsets[j]):
                        out[i, j] = lut[offsets[j] + <index_t> v]
                    else:
                        out[i, j] = UNSEEN_CODE


def encode_float(const floating[:, ::1] X, const index_t[::1] columns, const double[::1] levels,
                 const index_t[::1] offsets, int[:, ::1] out):
    """out[i, t] = the position of X[i, columns[t]] in levels[offsets[t]:offsets[t + 1]]
    (sorted, distinct), MISSING for NaN, UNSEEN when absent: np.searchsorted's lower bound and
    an equality test per cell, as fastml/_tabular.py's codes_for, in float64 (exact for
    float32 cells). Returns False, with out unfinished, at the first infinite cell (the caller
    then takes the path that says so)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = columns.shape[0], i, t, lo, hi, mid
    cdef double v
    cdef bint finite = True
    if offsets.shape[0] != m + 1 or levels.shape[0] < offsets[m]:
        raise ValueError("levels and offsets do not match the columns")
    if out.shape[0] != n or out.shape[1] != m:
        raise ValueError(f"out must be ({n}, {m}); got ({out.shape[0]}, {out.shape[1]})")
    for t in range(m):
        if not 0 <= columns[t] < d:
            raise ValueError(f"column {columns[t]} is outside X's {d} columns")
    with nogil:
        for i in range(n):
            if not finite:
                break
            for t in range(m):
                v = X[i, columns[t]]
                if v != v:
                    out[i, t] = MISSING_CODE
                    continue
                if v - v != 0.0:          # +-inf
                    finite = False
                    break
                lo, hi = offsets[t], offsets[t + 1]
                while lo < hi:            # first level >= v
                    mid = lo + (hi - lo) // 2
                    if levels[mid] < v:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo == offsets[t + 1] or levels[lo] != v:
                    out[i, t] = UNSEEN_CODE
                else:
                    out[i, t] = <int> (lo - offsets[t])
    return finite
