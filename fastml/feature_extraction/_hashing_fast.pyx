# Feature hashing (003's click-probability case study; Weinberger et al. 2009; Vowpal Wabbit):
# every (feature name, value) pair becomes column h(name) mod n_features of a sparse row, with
# the value's sign flipped when h < 0 (alternate_sign), so inner products survive collisions
# in expectation. h is the signed 32-bit MurmurHash3 with seed 0, the column |h| mod n (and
# for h = -2^31, whose |h| overflows int32, the value scikit-learn defines), so the matrix is
# bit-identical to scikit-learn's FeatureHasher on the same input.
#
# Two passes. hash_samples walks the Python input once, hashing the UTF-8 bytes of each name
# (or "name=value" for a string value) in C and appending (column, value) to growable buffers:
# no Python object is made per token. finish_rows then sorts each row by column and sums the
# entries that share one (in the order they came), giving canonical CSR. Invariant of the
# first pass: after sample i, entries row_start[i]..row_start[i+1] are sample i's tokens.
from cpython.bytes cimport PyBytes_AsStringAndSize
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy
from cython cimport floating

import numpy as np

cdef extern from "fastml_murmur.h" nogil:
    uint32_t fastml_murmur3_32(const char *key, size_t length, uint32_t seed) noexcept

cdef enum:
    MODE_DICT = 0
    MODE_PAIR = 1
    MODE_STRING = 2
    FIRST_CAPACITY = 4096   # entries; the buffers double from there
    INSERTION_MAX = 32      # rows up to this long sort by insertion (no call overhead)

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


# ------------------------------------------------------------------ growable buffers
ctypedef struct Entries:
    int32_t *column
    double *value
    int64_t size
    int64_t capacity
    char *text           # scratch for "name=value"
    Py_ssize_t text_capacity


cdef int entries_init(Entries *e) except -1:
    e.size, e.capacity, e.text_capacity = 0, FIRST_CAPACITY, 256
    e.column = <int32_t *> malloc(e.capacity * sizeof(int32_t))
    e.value = <double *> malloc(e.capacity * sizeof(double))
    e.text = <char *> malloc(e.text_capacity)
    if e.column == NULL or e.value == NULL or e.text == NULL:
        entries_free(e)
        raise MemoryError()
    return 0


cdef void entries_free(Entries *e) noexcept:
    free(e.column)
    free(e.value)
    free(e.text)
    e.column, e.value, e.text = NULL, NULL, NULL


cdef int entries_grow(Entries *e) except -1:
    cdef int64_t capacity = 2 * e.capacity
    cdef int32_t *column = <int32_t *> realloc(e.column, capacity * sizeof(int32_t))
    if column == NULL:
        raise MemoryError()
    e.column = column
    cdef double *value = <double *> realloc(e.value, capacity * sizeof(double))
    if value == NULL:
        raise MemoryError()
    e.value, e.capacity = value, capacity
    return 0


cdef inline int append(Entries *e, const char *name, Py_ssize_t length, double value,
                       int64_t n_features, bint alternate_sign) except -1:
    cdef int32_t h = <int32_t> fastml_murmur3_32(name, length, 0)
    if e.size == e.capacity:
        entries_grow(e)
    e.column[e.size] = column_of(h, n_features)
    e.value[e.size] = -value if (alternate_sign and h < 0) else value
    e.size += 1
    return 0


# ------------------------------------------------------------------ reading Python input
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


cdef int add_pair(Entries *e, object name, object value, int64_t n_features,
                  bint alternate_sign) except -1:
    """One (name, value): a string value is the token "name=value" with value 1 (scikit-
    learn's rule for categorical values); a number is kept unless it is 0."""
    cdef Py_ssize_t n_name, n_value
    cdef const char *s_name
    cdef const char *s_value
    cdef double v
    if isinstance(value, str):
        s_name = utf8_of(name, &n_name)
        s_value = utf8_of(value, &n_value)
        if n_name + n_value + 1 > e.text_capacity:
            free(e.text)
            e.text_capacity = 2 * (n_name + n_value + 1)
            e.text = <char *> malloc(e.text_capacity)
            if e.text == NULL:
                raise MemoryError()
        memcpy(e.text, s_name, n_name)
        e.text[n_name] = b'='
        memcpy(e.text + n_name + 1, s_value, n_value)
        return append(e, e.text, n_name + 1 + n_value, 1.0, n_features, alternate_sign)
    if isinstance(value, (bytes, bytearray)):
        raise TypeError(f"feature {name!r} has a bytes value {value!r}; values must be numbers "
                        f"or str")
    try:
        v = value
    except TypeError:
        raise TypeError(f"feature {name!r} has a value of type {type(value).__name__}; values "
                        f"must be numbers or str") from None
    if not isfinite(v):
        raise ValueError(f"feature {name!r} has a non-finite value {value!r}; hashed values must "
                         f"be finite numbers")
    if v == 0:
        return 0
    s_name = utf8_of(name, &n_name)
    return append(e, s_name, n_name, v, n_features, alternate_sign)


cdef int add_sample(Entries *e, object sample, int mode, int64_t n_features,
                    bint alternate_sign) except -1:
    cdef Py_ssize_t length
    cdef const char *s
    cdef Py_ssize_t position = 0
    cdef PyObject *name_ref
    cdef PyObject *value_ref
    if mode == MODE_DICT:
        if isinstance(sample, dict):        # walk the dict in place: no item tuples
            while PyDict_Next(sample, &position, &name_ref, &value_ref):
                add_pair(e, <object> name_ref, <object> value_ref, n_features, alternate_sign)
        elif hasattr(sample, "items"):
            for name, value in sample.items():
                add_pair(e, name, value, n_features, alternate_sign)
        else:
            raise TypeError(f"input_type='dict' takes one mapping per sample; got "
                            f"{type(sample).__name__}")
    elif mode == MODE_PAIR:
        for pair in sample:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(f"input_type='pair' takes (feature, value) pairs; got {pair!r}")
            add_pair(e, (<tuple> pair)[0], (<tuple> pair)[1], n_features, alternate_sign)
    else:
        if isinstance(sample, (str, bytes)):
            raise ValueError("input_type='string' takes one iterable of strings per sample, "
                             "not a single string: wrap it in a list")
        if isinstance(sample, list):        # the common case, without the iterator protocol
            for name in <list> sample:
                s = utf8_of(name, &length)
                append(e, s, length, 1.0, n_features, alternate_sign)
        else:
            for name in sample:
                s = utf8_of(name, &length)
                append(e, s, length, 1.0, n_features, alternate_sign)
    return 0


def hash_samples(raw_X, str input_type, int64_t n_features, bint alternate_sign):
    """(indptr int64, columns int32, values float64) of every sample in raw_X, in input order
    within each row (duplicates not yet summed)."""
    cdef int mode = MODES[input_type]
    cdef Entries e
    starts = [0]
    entries_init(&e)
    try:
        if isinstance(raw_X, list):
            for sample in <list> raw_X:
                add_sample(&e, sample, mode, n_features, alternate_sign)
                starts.append(e.size)
        else:
            for sample in raw_X:
                add_sample(&e, sample, mode, n_features, alternate_sign)
                starts.append(e.size)
        columns = np.empty(e.size, dtype=np.int32)
        values = np.empty(e.size, dtype=np.float64)
        if e.size:
            memcpy(<void *> <size_t> columns.ctypes.data, e.column, e.size * sizeof(int32_t))
            memcpy(<void *> <size_t> values.ctypes.data, e.value, e.size * sizeof(double))
    finally:
        entries_free(&e)
    return np.asarray(starts, dtype=np.int64), columns, values


# ------------------------------------------------------------------ canonical rows
# An entry's sort key is (column << 32) | position: ordering by it orders by column and keeps
# the input order among entries of one column, with one integer comparison.
cdef int key_less(const void *a, const void *b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t *> a)[0], y = (<const uint64_t *> b)[0]
    return -1 if x < y else (1 if x > y else 0)


cdef void sort_keys(uint64_t *keys, Py_ssize_t n) noexcept nogil:
    """Ascending: insertion sort for short rows, qsort otherwise."""
    cdef Py_ssize_t i, j
    cdef uint64_t k
    if n > INSERTION_MAX:
        qsort(keys, n, sizeof(uint64_t), key_less)
        return
    for i in range(1, n):
        k = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > k:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = k


def finish_rows(const int64_t[::1] indptr, const int32_t[::1] columns,
                const double[::1] values, floating[::1] out_values, int32_t[::1] out_columns,
                int64_t[::1] out_indptr):
    """Sort each row by column and sum entries that share a column, in input order and in the
    output precision (each value rounded to it first, as scikit-learn stores them), into
    out_* (sized for the worst case, no duplicates). Returns the number of entries written."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i, p, q, n, longest = 0
    cdef int64_t written = 0, start
    cdef uint64_t *keys
    cdef const double *row_values
    cdef uint32_t column
    cdef floating acc
    if columns.shape[0] != values.shape[0] or out_indptr.shape[0] != indptr.shape[0] \
            or out_values.shape[0] < values.shape[0] or out_columns.shape[0] < values.shape[0]:
        raise ValueError("finish_rows: inconsistent buffer shapes")
    for i in range(n_rows):
        longest = max(longest, indptr[i + 1] - indptr[i])
    if longest > 2147483647:
        raise ValueError("finish_rows: a row has more than 2**31 - 1 entries")
    keys = <uint64_t *> malloc(max(longest, 1) * sizeof(uint64_t))
    if keys == NULL:
        raise MemoryError()
    with nogil:
        out_indptr[0] = 0
        for i in range(n_rows):
            start = indptr[i]
            n = indptr[i + 1] - start
            row_values = &values[start] if n else NULL
            for p in range(n):
                keys[p] = ((<uint64_t> <uint32_t> columns[start + p]) << 32) | <uint64_t> p
            sort_keys(keys, n)
            p = 0
            while p < n:
                column = <uint32_t> (keys[p] >> 32)
                acc = <floating> row_values[keys[p] & 0xFFFFFFFFu]
                q = p + 1
                while q < n and <uint32_t> (keys[q] >> 32) == column:
                    acc = acc + <floating> row_values[keys[q] & 0xFFFFFFFFu]
                    q += 1
                out_columns[written] = <int32_t> column
                out_values[written] = acc
                written += 1
                p = q
            out_indptr[i + 1] = written
    free(keys)
    return written
