# Feature hashing (003's click-probability case study; Weinberger et al. 2009; Vowpal Wabbit):
# every (feature name, value) pair becomes column h(name) mod n_features of a sparse row, with
# the value's sign flipped when h < 0 (alternate_sign), so inner products survive collisions
# in expectation. h is the signed 32-bit MurmurHash3 with seed 0, the column |h| mod n (and
# for h = -2^31, whose |h| overflows int32, the value scikit-learn defines), so the matrix is
# bit-identical to scikit-learn's FeatureHasher on the same input.
#
# One pass. hash_samples walks the Python input with the C API (borrowed list items, the
# UTF-8 bytes of an ASCII str read in place), hashes each name (or "name=value" for a string
# value) in C and appends (column, value) to growable buffers: no Python object is made per
# token. At the end of each row the row is made canonical while it is still in cache: sorted
# by column and the entries that share a column summed in the output precision, in place. The
# buffers then are the CSR arrays; numpy wraps them without a copy. Invariant: after sample i,
# entries indptr[i]..indptr[i+1] are sample i's distinct columns, ascending, each with the sum
# of its values in scikit-learn's order (below), except the rows left for `settle_rows`.
#
# The order of the sums is scikit-learn's, so the matrix is its matrix bit for bit: it stores
# each value in the output dtype, then scipy's sum_duplicates sorts every row by column with
# std::sort (csr_sort_indices) unless all rows of the call are already in order, and adds the
# entries of a column left to right. std::sort is not stable past 16 entries: csrc/
# fastml_stdsort.h makes the same moves as GCC's (scipy's Linux wheels; other C++ libraries
# sort, and so sum three or more colliding non-integer values, in another order). A row out
# of order is sorted so at once (the call will sort). A row already in order is the same
# either way unless it has more than 16 entries and three or more in one column: such rows
# wait, unsummed, until the call's end says whether scipy would have sorted them.
from cpython.bytes cimport PyBytes_AsStringAndSize
from cpython.dict cimport PyDict_Next
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from cython.view cimport array as cvarray
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memmove

import numpy as np

from .._core._csrc cimport fastml_check_index

cdef extern from "fastml_murmur.h" nogil:
    uint32_t fastml_murmur3_32(const char *key, size_t length, uint32_t seed) noexcept

cdef extern from "fastml_stdsort.h" nogil:
    void fastml_std_sort(int32_t *c, double *v, ptrdiff_t n) noexcept

# The compact-ASCII layout of a str (CPython's common case: the characters are their own UTF-8
# bytes, stored right after the object header), read without a function call.
cdef extern from "Python.h":
    bint str_is_compact_ascii "PyUnicode_IS_COMPACT_ASCII" (PyObject *o) noexcept
    void *str_data "PyUnicode_DATA" (PyObject *o) noexcept
    Py_ssize_t str_length "PyUnicode_GET_LENGTH" (PyObject *o) noexcept
    bint is_exact_str "PyUnicode_CheckExact" (PyObject *o) noexcept
    bint is_exact_list "PyList_CheckExact" (PyObject *o) noexcept
    bint is_exact_tuple "PyTuple_CheckExact" (PyObject *o) noexcept
    bint is_exact_float "PyFloat_CheckExact" (PyObject *o) noexcept
    double float_value "PyFloat_AS_DOUBLE" (PyObject *o) noexcept

cdef enum:
    MODE_DICT = 0
    MODE_PAIR = 1
    MODE_STRING = 2
    FIRST_CAPACITY = 4096   # entries (and rows); the buffers double from there
    STABLE_MAX = 16         # std::sort is an insertion sort (stable) up to this many entries
    GUESS_MAX = 64          # rows up to this long try a stable insertion sort first

MODES = {"dict": MODE_DICT, "pair": MODE_PAIR, "string": MODE_STRING}


# ------------------------------------------------------------------ the hash of one name
cdef inline int32_t column_of(int32_t h, int64_t n_features) noexcept nogil:
    """|h| mod n_features; |-2^31| does not fit int32, and scikit-learn defines that case as
    (2^31 - 1 - (n_features - 1)) mod n_features (= 2^31 mod n_features)."""
    if h == -2147483648:
        return <int32_t> ((2147483647 - (n_features - 1)) % n_features)
    cdef int64_t magnitude = h if h >= 0 else -h
    if n_features & (n_features - 1) == 0:   # the usual 2**k: a mask, not a 64-bit division
        return <int32_t> (magnitude & (n_features - 1))
    return <int32_t> (magnitude % n_features)


def column_for_hash(int32_t h, int64_t n_features):
    """The column of a signed hash h (exposed for the tests of the -2^31 rule)."""
    return column_of(h, n_features)


def murmurhash3_32(key, uint32_t seed=0):
    """The signed 32-bit MurmurHash3 of a str (its UTF-8 bytes) or bytes object, as
    sklearn.utils.murmurhash3_32(key, seed, positive=False) computes it."""
    cdef Py_ssize_t length
    cdef const char *s = utf8_of(key, &length)
    return <int32_t> fastml_murmur3_32(s, length, seed)


def hash_tokens(list tokens, int64_t n_features):
    """(columns int32, signs float64) of each token (str or bytes), value 1: the per-level
    lookup that the DataFrame path gathers from instead of hashing every cell."""
    cdef Py_ssize_t n = len(tokens), i, length
    cdef const char *s
    cdef int32_t h
    columns = np.empty(n, dtype=np.int32)
    signs = np.empty(n, dtype=np.float64)
    cdef int32_t[::1] col = columns
    cdef double[::1] sgn = signs
    for i in range(n):
        s = utf8_of(tokens[i], &length)
        h = <int32_t> fastml_murmur3_32(s, length, 0)
        col[i] = column_of(h, n_features)
        sgn[i] = 1.0 if h >= 0 else -1.0
    return columns, signs


# ------------------------------------------------------------------ reading names
cdef const char *utf8_of(object name, Py_ssize_t *length) except NULL:
    """The bytes a name hashes as: UTF-8 of a str (CPython caches it; free for ASCII), a bytes
    object as it is."""
    cdef char *s
    if isinstance(name, str):
        return PyUnicode_AsUTF8AndSize(name, length)
    if isinstance(name, bytes):
        PyBytes_AsStringAndSize(name, &s, length)
        return s
    raise TypeError(f"feature names must be strings (str or bytes); got {type(name).__name__} "
                    f"{name!r}")


cdef inline const char *bytes_of(PyObject *name, Py_ssize_t *length) except NULL:
    """utf8_of without a call for the common case, an exact str of ASCII characters (borrowed:
    the bytes live as long as the str)."""
    if is_exact_str(name) and str_is_compact_ascii(name):
        length[0] = str_length(name)
        return <const char *> str_data(name)
    return utf8_of(<object> name, length)


# ------------------------------------------------------------------ the CSR being built
ctypedef struct Rows:
    int32_t *column       # indices of the rows so far
    double *value         # their values (each row's duplicates summed in the output precision)
    int64_t size, capacity
    int64_t *indptr       # n_rows + 1 row starts
    int64_t n_rows, row_capacity
    char *text            # scratch for "name=value"
    Py_ssize_t text_capacity
    bint any_out_of_order # a row's columns came out of order: scipy sorts every row
    int32_t saved_column[GUESS_MAX]   # a row as it came, while a stable sort is tried
    double saved_value[GUESS_MAX]
    int64_t *waiting      # rows left unsummed until the end (see the header)
    int64_t n_waiting, waiting_capacity
    int64_t n_features
    bint alternate_sign
    bint single           # float32 output: values are rounded to float32 before summing


cdef int rows_init(Rows *r, int64_t n_features, bint alternate_sign, bint single) except -1:
    r.size, r.capacity, r.n_rows, r.row_capacity = 0, FIRST_CAPACITY, 0, FIRST_CAPACITY
    r.text_capacity = 256
    r.n_features, r.alternate_sign, r.single = n_features, alternate_sign, single
    r.any_out_of_order, r.waiting, r.n_waiting, r.waiting_capacity = False, NULL, 0, 0
    r.column = <int32_t *> malloc(r.capacity * sizeof(int32_t))
    r.value = <double *> malloc(r.capacity * sizeof(double))
    r.indptr = <int64_t *> malloc((r.row_capacity + 1) * sizeof(int64_t))
    r.text = <char *> malloc(r.text_capacity)
    if r.column == NULL or r.value == NULL or r.indptr == NULL or r.text == NULL:
        rows_free(r)
        raise MemoryError()
    r.indptr[0] = 0
    return 0


cdef void rows_free(Rows *r) noexcept:
    free(r.column)
    free(r.value)
    free(r.indptr)
    free(r.text)
    free(r.waiting)
    r.column, r.value, r.indptr, r.text, r.waiting = NULL, NULL, NULL, NULL, NULL


cdef int reserve(Rows *r, int64_t extra) except -1:
    """Room for `extra` more entries (capacity doubles; realloc moves big blocks by remapping
    their pages, without a copy)."""
    cdef int64_t capacity = r.capacity
    if r.size + extra <= capacity:
        return 0
    while capacity < r.size + extra:
        capacity *= 2
    cdef int32_t *column = <int32_t *> realloc(r.column, capacity * sizeof(int32_t))
    if column == NULL:
        raise MemoryError()
    r.column = column
    cdef double *value = <double *> realloc(r.value, capacity * sizeof(double))
    if value == NULL:
        raise MemoryError()
    r.value, r.capacity = value, capacity
    return 0


cdef inline int push(Rows *r, const char *name, Py_ssize_t length, double value) except -1:
    """Append the entry of one name (room for it checked here: one predictable branch)."""
    cdef int32_t h = <int32_t> fastml_murmur3_32(name, length, 0)
    if r.size == r.capacity:
        reserve(r, 1)
    if r.alternate_sign and h < 0:
        value = -value
    r.column[r.size] = column_of(h, r.n_features)
    r.value[r.size] = <double> <float> value if r.single else value
    r.size += 1
    return 0


# ------------------------------------------------------------------ canonical rows
cdef void insertion_sort(int32_t *column, double *value, Py_ssize_t n) noexcept nogil:
    """Ascending by column, stable (equal columns keep their input order)."""
    cdef Py_ssize_t i, j
    cdef int32_t c
    cdef double v
    for i in range(1, n):
        c = column[i]
        v = value[i]
        j = i - 1
        while j >= 0 and column[j] > c:
            column[j + 1] = column[j]
            value[j + 1] = value[j]
            j -= 1
        column[j + 1] = c
        value[j + 1] = v


cdef void sort_as_scipy(Rows *r, int32_t *column, double *value, Py_ssize_t n) noexcept nogil:
    """The row in std::sort's order (csrc/fastml_stdsort.h), or in an order whose sums are the
    same: up to STABLE_MAX entries std::sort is a stable insertion sort; past that only the
    order of three or more entries of one column can change a sum, so a short row is first
    sorted stably, and sorted again from its input order by std::sort's moves only when it
    has such a column (rare with many columns: the moves cost ~1.3x the insertion sort)."""
    if n <= GUESS_MAX:
        if n > STABLE_MAX:
            memcpy(r.saved_column, column, n * sizeof(int32_t))
            memcpy(r.saved_value, value, n * sizeof(double))
        insertion_sort(column, value, n)
        if not order_matters(column, n):
            return
        memcpy(column, r.saved_column, n * sizeof(int32_t))
        memcpy(value, r.saved_value, n * sizeof(double))
    fastml_std_sort(column, value, n)


cdef bint in_order(const int32_t *column, Py_ssize_t n) noexcept nogil:
    """Columns non-decreasing (scipy's has_sorted_indices, for one row)."""
    cdef Py_ssize_t p
    for p in range(1, n):
        if column[p] < column[p - 1]:
            return False
    return True


cdef bint order_matters(const int32_t *column, Py_ssize_t n) noexcept nogil:
    """For a row in order: could std::sort change its sums? Only past STABLE_MAX entries,
    and only where three or more share a column (two add the same either way round)."""
    cdef Py_ssize_t p
    if n <= STABLE_MAX:
        return False
    for p in range(2, n):
        if column[p] == column[p - 2]:
            return True
    return False


cdef Py_ssize_t sum_duplicates(const int32_t *column, const double *value, Py_ssize_t n,
                               int32_t *out_column, double *out_value, bint single) noexcept nogil:
    """Sum the runs of equal columns of a sorted row, left to right in the output precision,
    into out_* (which may be the input itself, or start before it: the write position never
    passes the read position). Returns the new length; a sum of 0 stays an explicit entry,
    as in scikit-learn."""
    cdef Py_ssize_t p = 0, q, w = 0
    cdef int32_t c
    cdef double acc
    cdef float acc32
    while p < n:
        c = column[p]
        q = p + 1
        if single:
            acc32 = <float> value[p]
            while q < n and column[q] == c:
                acc32 = acc32 + <float> value[q]
                q += 1
            acc = acc32
        else:
            acc = value[p]
            while q < n and column[q] == c:
                acc = acc + value[q]
                q += 1
        out_column[w] = c
        out_value[w] = acc
        w += 1
        p = q
    return w


cdef int end_row(Rows *r) except -1:
    """Make the row just appended canonical (sorted, duplicates summed; or waiting, see the
    header) and record its end."""
    cdef int64_t start = r.indptr[r.n_rows]
    cdef Py_ssize_t n = r.size - start
    cdef int64_t *grown
    if not in_order(r.column + start, n):
        r.any_out_of_order = True
        sort_as_scipy(r, r.column + start, r.value + start, n)
    elif order_matters(r.column + start, n):
        if r.n_waiting == r.waiting_capacity:
            r.waiting_capacity = 2 * r.waiting_capacity + 16
            grown = <int64_t *> realloc(r.waiting, r.waiting_capacity * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            r.waiting = grown
        r.waiting[r.n_waiting] = r.n_rows
        r.n_waiting += 1
        n = -1                              # summed by settle_rows
    if n >= 0:
        r.size = start + sum_duplicates(r.column + start, r.value + start, n,
                                        r.column + start, r.value + start, r.single)
    if r.n_rows == r.row_capacity:
        grown = <int64_t *> realloc(r.indptr, (2 * r.row_capacity + 1) * sizeof(int64_t))
        if grown == NULL:
            raise MemoryError()
        r.indptr, r.row_capacity = grown, 2 * r.row_capacity
    r.n_rows += 1
    r.indptr[r.n_rows] = r.size
    return 0


cdef void settle_rows(Rows *r) noexcept nogil:
    """Sum the waiting rows, sorted first when some row of the call was out of order (as
    scipy then sorts them all), and close the gaps they leave: every row from the first
    waiting one moves down to its place."""
    cdef int64_t i, k = 0, start, n, written
    if r.n_waiting == 0:
        return
    written = r.indptr[r.waiting[0]]
    for i in range(r.waiting[0], r.n_rows):
        start, n = r.indptr[i], r.indptr[i + 1] - r.indptr[i]
        if k < r.n_waiting and r.waiting[k] == i:
            k += 1
            if r.any_out_of_order:
                fastml_std_sort(r.column + start, r.value + start, n)
            n = sum_duplicates(r.column + start, r.value + start, n, r.column + written,
                               r.value + written, r.single)
        else:
            memmove(r.column + written, r.column + start, n * sizeof(int32_t))
            memmove(r.value + written, r.value + start, n * sizeof(double))
        r.indptr[i] = written
        written += n
    r.indptr[r.n_rows] = written
    r.size = written
    r.n_waiting = 0


# ------------------------------------------------------------------ reading Python input
cdef int add_token(Rows *r, PyObject *name, PyObject *value) except -1:
    """One (name, value): a string value is the token "name=value" with value 1 (scikit-
    learn's rule for categorical values); a number is kept unless it is 0."""
    cdef Py_ssize_t n_name, n_value
    cdef const char *s_name
    cdef const char *s_value
    cdef double v
    if is_exact_float(value):
        v = float_value(value)
    elif isinstance(<object> value, str):
        s_name = bytes_of(name, &n_name)
        s_value = bytes_of(value, &n_value)
        if n_name + n_value + 1 > r.text_capacity:
            free(r.text)
            r.text_capacity = 2 * (n_name + n_value + 1)
            r.text = <char *> malloc(r.text_capacity)
            if r.text == NULL:
                raise MemoryError()
        memcpy(r.text, s_name, n_name)
        r.text[n_name] = b'='
        memcpy(r.text + n_name + 1, s_value, n_value)
        return push(r, r.text, n_name + 1 + n_value, 1.0)
    else:
        # a conversion can run Python code (__float__) that drops the caller's references:
        # hold them until the name is hashed
        held_name, held_value = <object> name, <object> value
        v = number_of(held_name, held_value)
        return add_number(r, <PyObject *> held_name, held_value, v)
    return add_number(r, name, <object> value, v)


cdef int add_number(Rows *r, PyObject *name, object value, double v) except -1:
    cdef Py_ssize_t n_name
    cdef const char *s_name
    if not isfinite(v):
        raise ValueError(f"feature {<object> name!r} has a non-finite value {value!r}; "
                         f"hashed values must be finite numbers")
    if v == 0:
        return 0
    s_name = bytes_of(name, &n_name)
    return push(r, s_name, n_name, v)


cdef double number_of(object name, object value) except? -1.0:
    if isinstance(value, (bytes, bytearray)):
        raise TypeError(f"feature {name!r} has a bytes value {value!r}; values must be numbers "
                        f"or str")
    try:
        return value
    except TypeError:
        raise TypeError(f"feature {name!r} has a value of type {type(value).__name__}; values "
                        f"must be numbers or str") from None


cdef int add_strings(Rows *r, object sample) except -1:
    """input_type="string": every item is a name with value 1."""
    cdef Py_ssize_t i, length
    cdef const char *s
    cdef PyObject *item
    if is_exact_list(<PyObject *> sample):   # the common case: borrowed items, no iterator
        for i in range(PyList_GET_SIZE(sample)):
            item = PyList_GET_ITEM(sample, i)
            s = bytes_of(item, &length)
            push(r, s, length, 1.0)
        return 0
    if isinstance(sample, (str, bytes)):
        raise ValueError("input_type='string' takes one iterable of strings per sample, "
                         "not a single string: wrap it in a list")
    for name in sample:
        s = utf8_of(name, &length)
        push(r, s, length, 1.0)
    return 0


cdef int add_pairs(Rows *r, object sample) except -1:
    """input_type="pair": every item is a (name, value) tuple."""
    cdef Py_ssize_t i
    if is_exact_list(<PyObject *> sample):
        i = 0
        while i < PyList_GET_SIZE(sample):   # re-read: a value's __float__ could shrink it
            pair = <object> PyList_GET_ITEM(sample, i)   # held while its items are read
            if not is_exact_tuple(<PyObject *> pair) or PyTuple_GET_SIZE(pair) != 2:
                bad_pair(pair)
            add_token(r, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1))
            i += 1
        return 0
    for item in sample:
        if not isinstance(item, tuple) or len(item) != 2:
            bad_pair(item)
        add_token(r, <PyObject *> (<tuple> item)[0], <PyObject *> (<tuple> item)[1])
    return 0


cdef int bad_pair(object pair) except -1:
    raise TypeError(f"input_type='pair' takes (feature, value) pairs; got {pair!r}")


cdef int add_mapping(Rows *r, object sample) except -1:
    """input_type="dict": the sample's items, a dict walked in place (no item tuples)."""
    cdef Py_ssize_t position = 0
    cdef PyObject *name_ref
    cdef PyObject *value_ref
    if isinstance(sample, dict):
        while PyDict_Next(sample, &position, &name_ref, &value_ref):
            add_token(r, name_ref, value_ref)
    elif hasattr(sample, "items"):
        for name, value in sample.items():
            add_token(r, <PyObject *> name, <PyObject *> value)
    else:
        raise TypeError(f"input_type='dict' takes one mapping per sample; got "
                        f"{type(sample).__name__}")
    return 0


cdef int add_sample(Rows *r, object sample, int mode) except -1:
    if mode == MODE_STRING:
        add_strings(r, sample)
    elif mode == MODE_PAIR:
        add_pairs(r, sample)
    else:
        add_mapping(r, sample)
    return end_row(r)


cdef object owned_array(void **data, int64_t n, Py_ssize_t itemsize, str fmt, dtype):
    """A numpy array that takes over the malloc'd block *data (n items; *data is set to NULL
    and the array frees the block), shrunk to its size first."""
    cdef cvarray wrapper
    cdef void *block
    if n == 0:
        return np.empty(0, dtype=dtype)
    block = realloc(data[0], n * itemsize)
    if block == NULL:
        raise MemoryError()
    data[0] = NULL
    wrapper = cvarray(shape=(n,), itemsize=itemsize, format=fmt, mode="c",
                      allocate_buffer=False)
    wrapper.data = <char *> block
    wrapper.callback_free_data = free
    return np.asarray(wrapper)


def hash_samples(raw_X, str input_type, int64_t n_features, bint alternate_sign,
                 bint single=False):
    """(indptr int64, columns int32, values float64) of the samples in raw_X: canonical CSR
    (each row's columns ascending, entries of one column summed in input order, in float32
    first when `single`)."""
    cdef int mode = MODES[input_type]
    cdef Rows r
    cdef Py_ssize_t i
    rows_init(&r, n_features, alternate_sign, single)
    try:
        if is_exact_list(<PyObject *> raw_X):
            i = 0
            while i < PyList_GET_SIZE(raw_X):
                sample = <object> PyList_GET_ITEM(raw_X, i)   # held while it is read
                add_sample(&r, sample, mode)
                i += 1
        else:
            for sample in raw_X:
                add_sample(&r, sample, mode)
        settle_rows(&r)
        columns = owned_array(<void **> &r.column, r.size, sizeof(int32_t), "i", np.int32)
        values = owned_array(<void **> &r.value, r.size, sizeof(double), "d", np.float64)
        indptr = owned_array(<void **> &r.indptr, r.n_rows + 1, sizeof(int64_t), "q",
                             np.int64)
    finally:
        rows_free(&r)
    return indptr, columns, values


# ------------------------------------------------------------------ rows built elsewhere
def finish_rows(const int64_t[::1] indptr, int32_t[::1] columns, double[::1] values,
                bint single=False):
    """Make rows appended in input order canonical, in place, as hash_samples does (the
    DataFrame path builds its rows with numpy): every row sorted with std::sort when some row
    is out of order, then each column's entries summed. Returns (indptr, nnz): the new row
    starts and the number of entries kept at the front of columns and values."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i
    cdef int64_t written = 0, start, n
    cdef bint sort = False
    cdef Rows r
    if columns.shape[0] != values.shape[0] or (n_rows >= 0 and indptr[n_rows] != columns.shape[0]):
        raise ValueError("finish_rows: inconsistent buffer shapes")
    out = np.empty(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] out_indptr = out
    out_indptr[0] = 0
    for i in range(n_rows):
        if indptr[i + 1] - indptr[i] > 1 and not in_order(&columns[indptr[i]],
                                                          indptr[i + 1] - indptr[i]):
            sort = True
    for i in range(n_rows):
        start = indptr[i]
        n = indptr[i + 1] - start
        if sort and n > 1:
            sort_as_scipy(&r, &columns[start], &values[start], n)
        if n:
            written += sum_duplicates(&columns[start], &values[start], n, &columns[written],
                                      &values[written], single)
        out_indptr[i + 1] = written
    return out, written


def std_sort_permutation(const int32_t[::1] columns):
    """The order std::sort (csrc/fastml_stdsort.h) leaves the positions of `columns` in: the
    tests compare it with scipy's sort_indices."""
    cdef Py_ssize_t n = columns.shape[0]
    keys = np.array(columns, dtype=np.int32)
    order = np.arange(n, dtype=np.float64)
    cdef int32_t[::1] c = keys
    cdef double[::1] v = order
    if n:
        fastml_std_sort(&c[0], &v[0], n)
    return keys, order.astype(np.intp)
