# Row access for the kernels that take dense C-contiguous or CSR X through one code path
# (_sgd_fast.pyx, _batch_fast.pyx): `row_source` unpacks X once into a RowSource, and
# `get_row` gives row i as (values, column indices, nnz), indices == NULL meaning a dense row
# of nnz = n_features values.
from cython cimport floating
from .._core._csrc cimport (fastml_check_index, fastml_row_dot_f64, fastml_row_dot_f32,
                            fastml_row_dot_f32_f64,
                            fastml_axpy_f64, fastml_axpy_f32, fastml_axpy_acc_f64,
                            fastml_axpy_acc_f32)


ctypedef struct RowSource:
    const void *data        # the values (float32 or float64): dense X, or the CSR data array
    const int *indptr       # CSR: row starts (n_rows + 1); NULL for dense rows
    const int *indices      # CSR: column indices; NULL for dense rows
    Py_ssize_t n_rows
    Py_ssize_t n_features


cdef inline int row_source(object X, const floating[:, ::1] like, RowSource *src) except -1:
    """Fill src from X: a dense C-contiguous array or a CSR matrix whose values have the dtype
    of `like` (the weights, (K, n_features))."""
    return row_source_of(X, like.shape[1], <floating> 0, src)


cdef inline int row_source_of(object X, Py_ssize_t n_features, floating kind,
                              RowSource *src) except -1:
    """Fill src from X: a dense C-contiguous array or a CSR matrix of n_features columns whose
    values have the type of `kind` (only its type matters). O(1) shape checks (the kernels'
    contract in fastml/_core/__init__.py); the CSR indices' values were validated in Python."""
    cdef const floating[:, ::1] dense
    cdef const floating[::1] values
    cdef const int[::1] indptr, indices
    cdef Py_ssize_t n
    src.n_features = n_features
    if hasattr(X, "indptr"):
        values, indptr, indices = X.data, X.indptr, X.indices
        n = indptr.shape[0] - 1
        if (n < 0 or X.shape[1] != src.n_features or indices.shape[0] < indptr[n]
                or values.shape[0] < indptr[n]):
            raise ValueError("the CSR matrix's arrays do not agree with its shape")
        src.data = &values[0] if values.shape[0] else NULL
        src.indptr = &indptr[0]
        src.indices = &indices[0] if indices.shape[0] else NULL
        if src.indices == NULL:     # no stored values at all: every row is empty
            src.indices = src.indptr
        src.n_rows = n
    else:
        dense = X
        if dense.shape[1] != src.n_features:
            raise ValueError(f"X has {dense.shape[1]} columns; the weights have "
                             f"{src.n_features}")
        src.data = &dense[0, 0] if dense.shape[0] and dense.shape[1] else NULL
        src.indptr = src.indices = NULL
        src.n_rows = dense.shape[0]
    return 0


cdef inline void get_row(const RowSource *src, Py_ssize_t i, const floating **x,
                         const int **idx, Py_ssize_t *nnz) noexcept nogil:
    cdef Py_ssize_t q
    fastml_check_index(i, src.n_rows)
    if src.indices == NULL:
        x[0] = <const floating *> src.data + i * src.n_features
        idx[0] = NULL
        nnz[0] = src.n_features
    else:
        x[0] = <const floating *> src.data + src.indptr[i]
        idx[0] = src.indices + src.indptr[i]
        nnz[0] = src.indptr[i + 1] - src.indptr[i]
        for q in range(nnz[0]):             # the debug build's check of validation's promise
            fastml_check_index(idx[0][q], src.n_features)


cdef inline double row_dot(const floating *x, const int *idx, Py_ssize_t nnz,
                           const floating *w) noexcept nogil:
    """x . w. A dense row (idx NULL): the SIMD loop of csrc/fastml_simd.h, not BLAS, whose
    dispatch costs more than the ~100 multiply-adds of a row (the SGD loop calls this per row)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    if idx == NULL:
        if floating is double:
            return fastml_row_dot_f64(x, w, nnz)
        else:
            return fastml_row_dot_f32(x, w, nnz)
    for j in range(nnz):
        s += x[j] * w[idx[j]]
    return s


cdef inline double row_dot_double(const floating *x, const int *idx, Py_ssize_t nnz,
                                  const double *a) noexcept nogil:
    """x . a for a float64 vector a (row_dot's loops, products in float64)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    if idx == NULL:
        if floating is double:
            return fastml_row_dot_f64(x, a, nnz)
        else:
            return fastml_row_dot_f32_f64(x, a, nnz)
    for j in range(nnz):
        s += x[j] * a[idx[j]]
    return s


cdef inline void row_axpy(const floating *x, const int *idx, Py_ssize_t nnz, double c,
                          floating *w) noexcept nogil:
    """w += c x, each w[j] += (floating) (c x[j]) (a dense row: csrc/fastml_simd.h's loop, the
    same rounding as the CSR loop below)."""
    cdef Py_ssize_t j
    if idx == NULL:
        if floating is double:
            fastml_axpy_f64(c, x, w, nnz)
        else:
            fastml_axpy_f32(c, x, w, nnz)
        return
    for j in range(nnz):
        w[idx[j]] += <floating> (c * x[j])


cdef inline void row_axpy_double(const floating *x, const int *idx, Py_ssize_t nnz, double c,
                                 double *a) noexcept nogil:
    """a += c x into a float64 accumulator (a dense row: csrc/fastml_simd.h's loop, the same
    rounding as the CSR loop below)."""
    cdef Py_ssize_t j
    if idx == NULL:
        if floating is double:
            fastml_axpy_acc_f64(c, x, a, nnz)
        else:
            fastml_axpy_acc_f32(c, x, a, nnz)
        return
    for j in range(nnz):
        a[idx[j]] += c * x[j]
