# Row-major (C-order) arrays from columns, a block of rows at a time.
#
# Arrow keeps one buffer per column, while fastml's kernels read rows. fit_stream turns each
# numeric Arrow chunk into the kernels' layout with this one copy, instead of Arrow -> pandas
# (a copy into a column-major block) -> numpy (a transposing copy). Copying a block of rows at
# a time keeps the writes in cache (the block's output fits in L2) and reads each column as a
# run of consecutive values.
import numpy as np

cimport numpy as cnp
from cython cimport floating
from libc.stdlib cimport free, malloc

cnp.import_array()

cdef enum:
    # Output bytes per block: well inside a 256 KB L2 cache, large enough to amortize the loop.
    BLOCK_BYTES = 131072


cdef void copy_rows(const floating **columns, Py_ssize_t n_rows, Py_ssize_t n_cols,
                    floating *out) noexcept nogil:
    """out[i, j] = columns[j][i], block by block of rows."""
    cdef Py_ssize_t block = max(1, BLOCK_BYTES // (n_cols * sizeof(floating)))
    cdef Py_ssize_t start = 0, stop, i, j
    cdef const floating *column
    while start < n_rows:
        stop = min(start + block, n_rows)
        for j in range(n_cols):
            column = columns[j]
            for i in range(start, stop):
                out[i * n_cols + j] = column[i]
        start = stop


def rows_from_columns(columns):
    """A new C-contiguous (n_rows, n_columns) array whose column j is ``columns[j]``.

    `columns` is a non-empty sequence of 1-D arrays of one length and one dtype, float64 or
    float32 (the caller converts other types first). Each column is read where it lies when it
    is contiguous (no intermediate copy).

    >>> rows_from_columns([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    array([[1., 3.],
           [2., 4.]])
    """
    arrays = [np.ascontiguousarray(c) for c in columns]
    if not arrays:
        raise ValueError("rows_from_columns needs at least one column")
    dtype, n_rows = arrays[0].dtype, arrays[0].shape[0]
    if dtype not in (np.float64, np.float32):
        raise TypeError(f"rows_from_columns copies float64 or float32 columns; got {dtype}")
    for a in arrays:
        if a.ndim != 1 or a.shape[0] != n_rows or a.dtype != dtype:
            raise ValueError("rows_from_columns needs 1-D columns of one length and one dtype")
    out = np.empty((n_rows, len(arrays)), dtype=dtype)
    _fill(arrays, out)
    return out


def _fill(list arrays, floating[:, ::1] out):
    """out[:, j] = arrays[j] (float64 or float32, C-contiguous, checked by the caller)."""
    cdef Py_ssize_t j, n_cols = len(arrays)
    cdef const floating[::1] column
    cdef const floating **pointers = <const floating **> malloc(n_cols * sizeof(floating *))
    if pointers == NULL:
        raise MemoryError()
    try:
        for j in range(n_cols):
            column = arrays[j]
            pointers[j] = &column[0] if column.shape[0] else NULL
        if out.shape[0]:
            with nogil:
                copy_rows(pointers, out.shape[0], n_cols, &out[0, 0])
    finally:
        free(pointers)
