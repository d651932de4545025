# 2-D arrays from columns, in the layout the consuming kernel reads best.
#
# Arrow keeps one buffer per column. fit_stream turns each numeric Arrow chunk into a numpy
# array with one copy (instead of Arrow -> pandas, a copy into a column-major block, -> numpy,
# a transposing copy), in the layout of the estimator that will read it:
# - row-major (C order) for kernels that walk rows (the SGD family): a transposing copy, a
#   block of rows at a time, so the writes stay in cache (the block's output fits in L2) and
#   each column is read as a run of consecutive values;
# - column-major (F order) for kernels that do not care about the row layout (least-squares
#   statistics through BLAS): one memcpy per column, about half the cost.
# Both run without the GIL: fit_stream calls them from its read-ahead thread while the main
# thread fits the previous chunk.
import numpy as np

cimport numpy as cnp
from cython cimport floating
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from ._csrc cimport fastml_check_index

cnp.import_array()

cdef enum:
    # Output bytes per block: well inside a 256 KB L2 cache, large enough to amortize the loop.
    BLOCK_BYTES = 131072


cdef void copy_rows(const floating **columns, Py_ssize_t n_rows, Py_ssize_t n_cols,
                    floating *out) noexcept nogil:
    """out[i * n_cols + j] = columns[j][i], block by block of rows."""
    cdef Py_ssize_t block = max(1, BLOCK_BYTES // (n_cols * sizeof(floating)))
    cdef Py_ssize_t start = 0, stop, i, j
    cdef const floating *column
    while start < n_rows:
        stop = min(start + block, n_rows)
        for j in range(n_cols):
            column = columns[j]
            for i in range(start, stop):
                fastml_check_index(i * n_cols + j, n_rows * n_cols)
                out[i * n_cols + j] = column[i]
        start = stop


cdef void copy_columns(const floating **columns, Py_ssize_t n_rows, Py_ssize_t n_cols,
                       floating *out, Py_ssize_t column_stride) noexcept nogil:
    """out[j * column_stride + i] = columns[j][i]: one memcpy per column."""
    cdef Py_ssize_t j
    for j in range(n_cols):
        memcpy(out + j * column_stride, columns[j], n_rows * sizeof(floating))


def rows_from_columns(columns):
    """A new C-contiguous (n_rows, n_columns) array whose column j is ``columns[j]``.

    `columns` is a non-empty sequence of 1-D arrays of one length and one dtype, float64 or
    float32 (the caller converts other types first). Each column is read where it lies when it
    is contiguous (no intermediate copy).

    >>> rows_from_columns([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    array([[1., 3.],
           [2., 4.]])
    """
    arrays = _checked(columns)
    out = np.empty((arrays[0].shape[0], len(arrays)), dtype=arrays[0].dtype)
    _fill_rows(arrays, out, 0)
    return out


def fill_from_columns(columns, out, Py_ssize_t start=0):
    """``out[start:start + m, j] = columns[j]`` for every j, m the columns' length.

    `columns` as for `rows_from_columns`; `out` a writeable C- or F-contiguous 2-D array of
    their dtype with one column per item of `columns` and at least start + m rows. Filling an
    array piece by piece (one call per Arrow record batch) copies each value once.

    >>> out = np.empty((3, 2), order="F")
    >>> fill_from_columns([np.array([1.0, 2.0]), np.array([3.0, 4.0])], out)
    >>> fill_from_columns([np.array([5.0]), np.array([6.0])], out, 2)
    >>> out
    array([[1., 3.],
           [2., 4.],
           [5., 6.]])
    """
    arrays = _checked(columns)
    m = arrays[0].shape[0]
    if not isinstance(out, np.ndarray) or out.ndim != 2 or out.dtype != arrays[0].dtype:
        raise TypeError(f"fill_from_columns writes into a 2-D {arrays[0].dtype} array")
    if out.shape[1] != len(arrays) or start < 0 or start + m > out.shape[0]:
        raise ValueError(f"fill_from_columns: {len(arrays)} columns of {m} rows from row "
                         f"{start} do not fit an array of shape {out.shape}")
    if not out.flags.writeable:
        raise ValueError("fill_from_columns: the output array is read-only")
    if out.flags.c_contiguous:
        _fill_rows(arrays, out, start)
    elif out.flags.f_contiguous:
        _fill_columns(arrays, out, start)
    else:
        raise ValueError("fill_from_columns writes into a C- or F-contiguous array")


def _checked(columns):
    """The columns as C-contiguous 1-D arrays of one length and one float dtype."""
    arrays = [np.ascontiguousarray(c) for c in columns]
    if not arrays:
        raise ValueError("fill_from_columns needs at least one column")
    dtype, n_rows = arrays[0].dtype, arrays[0].shape[0]
    if dtype not in (np.float64, np.float32):
        raise TypeError(f"fill_from_columns copies float64 or float32 columns; got {dtype}")
    for a in arrays:
        if a.ndim != 1 or a.shape[0] != n_rows or a.dtype != dtype:
            raise ValueError("fill_from_columns needs 1-D columns of one length and one dtype")
    return arrays


cdef const floating **column_pointers(list arrays, floating tag) except NULL:
    """A malloc'ed array of the columns' data pointers (the caller frees it); the arrays must
    stay alive while it is used. `tag` only selects the fused type."""
    cdef Py_ssize_t j, n_cols = len(arrays)
    cdef const floating[::1] column
    cdef const floating **pointers = <const floating **> malloc(n_cols * sizeof(floating *))
    if pointers == NULL:
        raise MemoryError()
    for j in range(n_cols):
        column = arrays[j]
        pointers[j] = &column[0] if column.shape[0] else NULL
    return pointers


def _fill_rows(list arrays, floating[:, ::1] out, Py_ssize_t start):
    """out[start:start + m] = the columns side by side (checked by the caller)."""
    cdef Py_ssize_t m = arrays[0].shape[0]
    if m == 0:
        return
    cdef const floating **pointers = column_pointers(arrays, out[0, 0])
    with nogil:
        copy_rows(pointers, m, out.shape[1], &out[start, 0])
    free(pointers)


def _fill_columns(list arrays, floating[::1, :] out, Py_ssize_t start):
    """out[start:start + m, j] = arrays[j] for every j (checked by the caller)."""
    cdef Py_ssize_t m = arrays[0].shape[0]
    if m == 0:
        return
    cdef const floating **pointers = column_pointers(arrays, out[0, 0])
    with nogil:
        fastml_check_index(start + m - 1, out.shape[0])
        copy_columns(pointers, m, out.shape[1], &out[start, 0], out.shape[0])
    free(pointers)
