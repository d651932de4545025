# Row access for kernels that take dense C-contiguous or CSR X through one code path:
# a row is (values, column indices, nnz) with indices == NULL meaning a dense row of nnz values.
from cython cimport floating
from .._core._blas cimport fm_dot, fm_axpy


cdef inline void get_row(const floating *data, const int *indptr, const int *indices,
                         Py_ssize_t n_features, Py_ssize_t i, const floating **x,
                         const int **idx, Py_ssize_t *nnz) noexcept nogil:
    if indices == NULL:
        x[0] = data + i * n_features
        idx[0] = NULL
        nnz[0] = n_features
    else:
        x[0] = data + indptr[i]
        idx[0] = indices + indptr[i]
        nnz[0] = indptr[i + 1] - indptr[i]


cdef inline double row_dot(const floating *x, const int *idx, Py_ssize_t nnz,
                           const floating *w) noexcept nogil:
    """x . w (BLAS for a dense row)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    if idx == NULL:
        return fm_dot(<int> nnz, x, w)
    for j in range(nnz):
        s += x[j] * w[idx[j]]
    return s


cdef inline void row_axpy(const floating *x, const int *idx, Py_ssize_t nnz, double c,
                          floating *w) noexcept nogil:
    """w += c x (BLAS for a dense row)."""
    cdef Py_ssize_t j
    if idx == NULL:
        fm_axpy(<int> nnz, <floating> c, x, w)
        return
    for j in range(nnz):
        w[idx[j]] += <floating> (c * x[j])


cdef inline void row_axpy_double(const floating *x, const int *idx, Py_ssize_t nnz, double c,
                                 double *a) noexcept nogil:
    """a += c x into a float64 accumulator."""
    cdef Py_ssize_t j
    if idx == NULL:
        for j in range(nnz):
            a[j] += c * x[j]
        return
    for j in range(nnz):
        a[idx[j]] += c * x[j]
