"""Tables as people have them: string / integer / boolean categories, numbers, missing cells.

The one validation layer for estimators that take categorical columns natively (decision trees,
naive Bayes, `information_gain_table`, the CLI's reader). It turns a pandas DataFrame, a numpy
object array of Python values, a string array or a numeric array into
- int32 category codes with a stored, sorted vocabulary per categorical column
  (`CategoryEncoder`): MISSING (-1) for None / NaN / pd.NA, UNSEEN (-2) for a value that is not
  in the vocabulary (a level never seen at fit time), and
- a C-contiguous float64 block of the real-valued columns, NaN for missing (`numeric_block`).
`TabularEncoder` is the trees' view of the same thing: one float64 matrix, categorical codes as
0..L-1, missing as NaN and unseen as -1.0.

Which columns are categorical (`categorical_mask`): "auto" reads dtypes (object, string,
category and bool columns are categorical; integer and float ones are real-valued) and calls an
object column categorical when any of its non-missing values is not a real number (strings,
bools, ...), so an object column of numbers is real-valued. Or give column indices, names
(DataFrame), a boolean mask, "all" or None.

Missing (`is_missing_scalar`, `missing_mask`): None, float NaN, pandas NA / NaT.

Vocabularies (`column_levels`): the sorted distinct non-missing values seen (numeric columns
compare as numbers; a mix that does not sort sorts by type name, then value); a pandas
categorical column contributes its declared categories, seen or not (the dtype says which values
the attribute can take). `CategoryEncoder.partial_fit` grows the vocabularies with new values and
reports where each old level moved, so count tables can follow.

Integer matrices take a compiled path (one pass: level -> code through a lookup table), so a
(10^6, 20) integer matrix is encoded in tens of milliseconds; columns whose ranges are wide
(hashed ids anywhere in int64 or uint64) are sorted per column instead, exactly; a pandas
categorical column maps its few categories once and gathers by the column's own codes.
"""
import numbers

import numpy as np

# MISSING / UNSEEN: the kernels' codes (declared once, in _core/_encode.pxd)
from ._core._encode import MISSING, UNSEEN, encode_float, encode_int, int_levels_present
from ._validation import _check_finite, _is_pandas_frame, _is_sparse, check_array, \
    feature_names_of, state_count

FLOAT_UNSEEN = -1.0  # TabularEncoder's code for an unseen level (missing is NaN there)
# The widest range of integers (summed over the columns) encoded through a dense lookup table
# (4 bytes a value: 16 MB); wider ranges, such as hashed int64 ids, are sorted instead.
MAX_INT_RANGE = 1 << 22


# ----------------------------------------------------------------------------- the table
def check_table(X, name="X"):
    """X as a 2-D DataFrame or numpy array (any dtype), with clear errors for bad shapes.

    Nothing is converted or copied yet: columns are read one at a time by `column`."""
    if X is None:
        raise ValueError(f"{name} is None; expected an array of shape (n_samples, n_features)")
    if _is_sparse(X):
        raise TypeError(f"{name} is a sparse matrix and this estimator needs dense input: "
                        f"use X.toarray()")
    if not _is_pandas_frame(X):
        if hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):
            X = X.to_numpy()
        X = np.asarray(X)
        if X.dtype.kind == "c":
            raise ValueError(f"Complex data not supported: {name} is complex")
        if X.ndim == 1:
            raise ValueError(
                f"{name} is 1-D (shape {X.shape}); expected 2-D (n_samples, n_features). "
                f"Reshape your data with X.reshape(-1, 1) for a single feature or "
                f"X.reshape(1, -1) for a single sample")
        if X.ndim != 2:
            raise ValueError(f"{name} has {X.ndim} dimensions; expected 2-D "
                             f"(n_samples, n_features)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 samples (shape {X.shape}); at least 1 required")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 "
                         f"is required.")
    return X


def column(X, j):
    """Column j of a checked table: a pandas Series or a 1-D numpy array."""
    return X.iloc[:, j] if _is_pandas_frame(X) else X[:, j]


# ------------------------------------------------------------------------- missing values
def is_missing_scalar(v):
    """None, NaN (float or numpy) and pandas' NA / NaT count as missing."""
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return v != v
    return type(v).__name__ in ("NAType", "NaTType")


def missing_mask(values):
    """Which cells of a 1-D numpy array are missing (NaN, None, pd.NA, NaT)."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "mM":           # datetime64 / timedelta64: NaT
        return np.isnat(values)
    if values.dtype == object:
        return np.fromiter((is_missing_scalar(v) for v in values), dtype=bool,
                           count=len(values))
    return np.zeros(len(values), dtype=bool)


def refuse_missing_labels(labels, name):
    """A ValueError naming `name` when a label is missing (`missing_mask`): a missing label is
    not a class (fit refuses one), and NaN, unequal to itself, would be a new label each time
    (scikit-learn refuses NaN labels too). The metrics and fastml.info check labels with it."""
    flat = np.asarray(labels).reshape(-1)
    missing = missing_mask(flat)
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} contains NaN or other missing labels (None, pd.NA, NaT): "
                         f"{int(missing.sum())} of {missing.size}, the first at index {first} "
                         f"({flat[first]!r}); a missing label is not a class (fit refuses it "
                         f"too): drop those rows first")


# --------------------------------------------------------------- which columns are categorical
def _is_categorical_dtype(dtype):
    """bool, strings, objects and pandas category / string / boolean dtypes are categorical;
    integer and float dtypes (numpy or pandas nullable) are real-valued."""
    if isinstance(dtype, np.dtype):
        return dtype.kind not in "iuf"
    import pandas as pd  # a pandas extension dtype: pandas is there
    return not (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def column_is_categorical(col):
    if col.dtype != object:
        return _is_categorical_dtype(col.dtype)
    values = np.asarray(col, dtype=object)
    return any(not _is_real(v) for v in values if not is_missing_scalar(v))


def is_auto(spec):
    return isinstance(spec, str) and spec == "auto"


def categorical_mask(X, categorical_features, n_features=None):
    """Boolean mask of the categorical columns of a checked table (see the module note)."""
    n_features = X.shape[1] if n_features is None else n_features
    spec = categorical_features
    if is_auto(spec):
        if not _is_pandas_frame(X) and X.dtype != object:
            return np.full(n_features, _is_categorical_dtype(X.dtype))
        return np.array([column_is_categorical(column(X, j)) for j in range(n_features)],
                        dtype=bool)
    if isinstance(spec, str) and spec == "all":
        return np.ones(n_features, dtype=bool)
    if spec is None:
        return np.zeros(n_features, dtype=bool)
    if isinstance(spec, (bool, np.bool_)) or not (isinstance(spec, str) or np.iterable(spec)):
        raise ValueError(f"categorical_features must be 'auto', 'all', None, or a list of "
                         f"column indices / names / a boolean mask; got {spec!r}")
    # a list keeps each entry's type (np.asarray would turn ["name", 0] into two strings)
    items = [spec] if isinstance(spec, str) else np.ravel(spec).tolist() \
        if isinstance(spec, np.ndarray) else list(spec)
    if items and all(isinstance(item, (bool, np.bool_)) for item in items):
        if len(items) != n_features:
            raise ValueError(f"categorical_features as a mask needs {n_features} booleans; "
                             f"got {len(items)}")
        return np.array(items, dtype=bool)
    mask = np.zeros(n_features, dtype=bool)
    names = list(X.columns) if _is_pandas_frame(X) else None
    for item in items:
        if isinstance(item, str):
            if names is None or item not in names:
                raise ValueError(f"categorical_features names column {item!r}, which X does "
                                 f"not have (columns: {names})")
            mask[names.index(item)] = True
        elif isinstance(item, numbers.Integral) and -n_features <= item < n_features:
            mask[item] = True
        else:
            raise ValueError(f"categorical_features entry {item!r} is not a column index in "
                             f"[0, {n_features}) or a column name")
    return mask


# --------------------------------------------------------------------------- the numbers
def _plain_values(col, name):
    """A column as a numpy array: numeric pandas columns (nullable too) as float64 with NaN,
    other pandas columns (string, category, boolean) as object with pd.NA as a missing marker;
    floats are checked for infinity."""
    if hasattr(col, "to_numpy") and not isinstance(col, np.ndarray):
        dtype = col.dtype
        if isinstance(dtype, np.dtype):
            values = col.to_numpy()
        elif not _is_categorical_dtype(dtype):
            values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            values = col.to_numpy(dtype=object)
    else:
        values = np.asarray(col)
    if values.dtype.kind == "f":
        _check_finite(values, name, allow_nan=True)
    elif values.dtype == object:
        for v in values:
            if isinstance(v, (float, np.floating)) and np.isinf(v):
                raise ValueError(f"{name} contains infinity; fastml needs finite values")
    return values


def numeric_block(X, columns, name="X"):
    """The given columns of a checked table as C-contiguous float64 (n, len(columns)), NaN for
    missing cells (None, pd.NA); infinity and non-numeric values raise."""
    if not _is_pandas_frame(X) and X.dtype.kind in "biuf":
        out = np.ascontiguousarray(X[:, columns], dtype=np.float64)
        _check_finite(out, name, allow_nan=True)
        return out
    out = np.empty((X.shape[0], len(columns)), dtype=np.float64)
    for t, j in enumerate(columns):
        values = _plain_values(column(X, j), name)
        if values.dtype == object:
            missing = missing_mask(values)
            values = values.copy()
            values[missing] = np.nan
        try:
            out[:, t] = values
        except (TypeError, ValueError):
            raise TypeError(f"{name} column {j} is treated as real-valued but holds "
                            f"non-numbers (e.g. {values[0]!r}): mark it categorical "
                            f"(argument must be a string or a number the column's kind "
                            f"allows)") from None
    _check_finite(out, name, allow_nan=True)
    return out


# ------------------------------------------------------------------------ the vocabularies
def sorted_levels(values):
    """Sorted distinct values; a mix that does not sort (str and int) sorts by type, then
    value."""
    if values.dtype != object:
        return np.unique(values)
    try:
        distinct = set(values.tolist())
    except TypeError:
        bad = next(v for v in values.tolist() if not _hashable(v))
        raise TypeError(f"a categorical cell holds a {type(bad).__name__}; the argument must "
                        f"be a string or a number (or another hashable value)") from None
    try:
        levels = sorted(distinct)
    except TypeError:
        levels = sorted(distinct, key=lambda v: (type(v).__name__, v))
    out = np.empty(len(levels), dtype=object)
    out[:] = levels
    return out


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _numeric_levels(levels):
    return levels.dtype.kind in "biuf"


def _exact_ints(a, b):
    """a and b in one integer dtype that holds both exactly, or None when there is none
    (int64 values below 0 with uint64 values above 2**63 - 1: numpy would use float64)."""
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind in "biu":
        return a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    for dtype in (np.int64, np.uint64):
        info = np.iinfo(dtype)
        if all(v.size == 0 or (v.min() >= info.min and v.max() <= info.max) for v in (a, b)):
            return a.astype(dtype), b.astype(dtype)
    return None


def merge_levels(old, new):
    """Sorted union of two vocabularies and where each old level went in it (None if there
    was no old vocabulary)."""
    if old is None:
        return new, None
    if not (codes_for(new, old) == UNSEEN).any():  # nothing new (most chunks of a stream)
        return old, np.arange(len(old), dtype=np.int64)
    both_ints = old.dtype.kind in "biu" and new.dtype.kind in "biu"
    exact = _exact_ints(old, new) if both_ints else None
    if exact is not None:
        union = np.union1d(*exact)
    elif _numeric_levels(old) and _numeric_levels(new) and not both_ints:
        union = np.union1d(old, new)
    else:  # Python objects compare exactly (ints of any size, strings, mixes)
        union = sorted_levels(np.concatenate([old.astype(object), new.astype(object)]))
    return union, codes_for(old, union).astype(np.int64)


def _declared_categories(col):
    """The declared categories of a pandas categorical column (sorted), else None."""
    if getattr(col.dtype, "name", "") != "category" or not hasattr(col, "cat"):
        return None
    declared = np.asarray(col.cat.categories.to_numpy())
    return sorted_levels(declared if declared.dtype.kind in "biuf"
                         else declared.astype(object))


def column_levels(col, name="X"):
    """The vocabulary of one column: its declared categories (pandas category; every value
    is one of them) or the sorted distinct non-missing values."""
    declared = _declared_categories(col)
    if declared is not None:
        return declared
    values = _plain_values(col, name)
    return sorted_levels(values[~missing_mask(values)])


# ----------------------------------------------------------------------------- the codes
def codes_for(values, levels):
    """int32 codes of `values` (no missing among them) in the vocabulary `levels`."""
    if len(levels) == 0:
        return np.full(len(values), UNSEEN, dtype=np.int32)
    if levels.dtype.kind in "biu" and values.dtype.kind in "biu" and \
            values.dtype != levels.dtype:
        return _int_codes_for(values, levels)
    if _numeric_levels(levels) and values.dtype.kind in "biuf":
        pos = np.searchsorted(levels, values)
        pos_c = np.minimum(pos, len(levels) - 1)
        return np.where(levels[pos_c] == values, pos_c, UNSEEN).astype(np.int32)
    lookup = dict(zip(levels.tolist(), range(len(levels))))
    return np.fromiter((lookup.get(v, UNSEEN) for v in values.tolist()), dtype=np.int32,
                       count=len(values))


def _int_codes_for(values, levels):
    """codes_for for integer values and levels of different dtypes: values the levels' dtype
    cannot hold are unseen, the others are compared in that dtype (exactly, not as float64)."""
    info = np.iinfo(levels.dtype)
    fits = (values >= info.min) & (values <= info.max)
    codes = np.full(len(values), UNSEEN, dtype=np.int32)
    codes[fits] = codes_for(values[fits].astype(levels.dtype), levels)
    return codes


def column_codes(col, levels, name="X"):
    """int32 codes of one column: MISSING for missing cells, UNSEEN outside `levels`."""
    declared = _declared_categories(col)
    if declared is not None:  # map the few categories once, then gather by the column's codes
        per_category = np.append(codes_for(np.asarray(col.cat.categories.to_numpy()), levels),
                                 np.int32(MISSING))
        return per_category[col.cat.codes.to_numpy()]  # code -1 (missing) → last: MISSING
    values = _plain_values(col, name)
    missing = missing_mask(values)
    if not missing.any():
        return codes_for(values, levels)
    codes = np.full(len(values), MISSING, dtype=np.int32)
    codes[~missing] = codes_for(values[~missing], levels)
    return codes


class CategoryEncoder:
    """Per-column vocabularies and int32 codes (MISSING = -1, UNSEEN = -2).

    `CategoryEncoder(columns)` starts with empty vocabularies for the listed columns;
    `partial_fit(X)` grows them (`categories_`, one sorted array per column) and returns, per
    column, the new position of each old level (None for a column seen the first time), so a
    count table can follow; `fit(X)` starts over; `transform(X)` gives the (n, len(columns))
    codes.
    """

    def __init__(self, columns):
        self.columns_ = list(columns)
        self.categories_ = [None] * len(self.columns_)

    def fit(self, X, name="X"):
        self.categories_ = [None] * len(self.columns_)
        self.partial_fit(X, name=name)
        return self

    def partial_fit(self, X, name="X"):
        return self.add_levels(self._levels_of(X, name))

    def add_levels(self, levels):
        """Grow each column's vocabulary to its union with levels[j] (sorted, as fit finds
        them) and return, per column, where each old level went (None for a column seen the
        first time): partial_fit once the levels are known."""
        merged = [merge_levels(old, new) for old, new in zip(self.categories_, levels)]
        self.categories_ = [union for union, _ in merged]   # a new list: all or nothing
        return [where for _, where in merged]

    def _selected(self, X):
        # a whole integer matrix is used as is: a fancy-indexed copy of 10^7 cells costs more
        # than encoding them
        if self.columns_ == list(range(X.shape[1])):
            return X
        return X[:, self.columns_]

    def _levels_of(self, X, name):
        if self._int_matrix(X):
            return _int_matrix_levels(self._selected(X))
        return [column_levels(column(X, j), name) for j in self.columns_]

    def _int_matrix(self, X):
        return not _is_pandas_frame(X) and X.dtype.kind in "biu" and all(
            c.dtype.kind in "biu" for c in self.categories_ if c is not None)

    def _check_fitted_state(self):
        """Vocabularies as fit leaves them (fastml.io.load runs this on a restored encoder):
        one 1-D array (or None before the first fit) per listed column, numeric ones strictly
        increasing (the compiled integer path builds its lookup table from them)."""
        if not isinstance(self.columns_, list) or not isinstance(self.categories_, list):
            raise ValueError("CategoryEncoder.columns_ and categories_ must be lists")
        if len(self.categories_) != len(self.columns_):
            raise ValueError(f"CategoryEncoder has {len(self.columns_)} columns but "
                             f"{len(self.categories_)} vocabularies")
        for j in self.columns_:
            if isinstance(j, bool) or not isinstance(j, numbers.Integral) or j < 0:
                raise ValueError(f"CategoryEncoder column {j!r} is not a column index")
        for levels in self.categories_:
            if levels is None:
                continue
            if not isinstance(levels, np.ndarray) or levels.ndim != 1:
                raise ValueError("a CategoryEncoder vocabulary is not a 1-D array")
            if _numeric_levels(levels) and levels.size and not (np.diff(levels) > 0).all():
                raise ValueError("a CategoryEncoder vocabulary is not sorted and distinct")

    def __getstate__(self):
        """The state without the derived lookup tables (rebuilt on first use; a saved model
        holds only the vocabularies)."""
        return {k: v for k, v in self.__dict__.items() if k != "_derived"}

    def _derived_tables(self):
        """A dict of tables derived from `categories_`, built once per vocabulary list
        (partial_fit replaces the list, which starts a new dict)."""
        cache = self.__dict__.get("_derived")
        if cache is None or cache[0] is not self.categories_:
            cache = self._derived = (self.categories_, {})
        return cache[1]

    def _float_tables(self):
        """(columns, levels, offsets) for the compiled float lookup when every vocabulary is
        floating-point (a model fitted on float codes), else None."""
        tables = self._derived_tables()
        if "float" not in tables:
            cats = self.categories_
            tables["float"] = None
            if cats and all(c is not None and c.dtype.kind == "f" for c in cats):
                tables["float"] = (
                    np.asarray(self.columns_, dtype=np.int64),
                    np.ascontiguousarray(np.concatenate(cats), dtype=np.float64),
                    np.concatenate([[0], np.cumsum([len(c) for c in cats])]).astype(np.int64))
        return tables["float"]

    def _float_codes(self, X):
        """Codes of a float32/float64 numpy X against float vocabularies in one compiled pass
        (the same codes as column_codes), or None when that path does not apply (other
        input, other vocabularies, or an infinite cell: column_codes then raises)."""
        if type(X) is not np.ndarray or X.ndim != 2 or \
                X.dtype not in (np.float64, np.float32) or not X.flags.c_contiguous:
            return None
        tables = self._float_tables()
        if tables is None:
            return None
        codes = np.empty((X.shape[0], len(self.columns_)), dtype=np.int32)
        return codes if encode_float(X, *tables, codes) else None

    def int_lookup(self, X):
        """(Xk, lo, offsets, lut) with which encode_int codes an integer matrix X, or None when
        transform takes another path (the caller may then count without writing codes)."""
        if not self._int_matrix(X):
            return None
        Xk = _as_kernel_ints(self._selected(X))
        tables = self._derived_tables()
        if "int" not in tables:
            tables["int"] = _int_lookup(self.categories_)
        if Xk.dtype == np.uint64 or tables["int"] is None:
            return None
        return (Xk,) + tables["int"]

    def transform(self, X, name="X", n_threads=1):
        codes = self._float_codes(X)
        if codes is not None:
            return codes
        if self._int_matrix(X):
            tables = self._derived_tables()
            if "int" not in tables:
                tables["int"] = _int_lookup(self.categories_)
            return _encode_int_matrix(self._selected(X), self.categories_, n_threads,
                                      tables["int"])
        codes = np.empty((X.shape[0], len(self.columns_)), dtype=np.int32)
        for t, j in enumerate(self.columns_):
            codes[:, t] = column_codes(column(X, j), self.categories_[t], name)
        return codes


# ------------------------------------------------------------- the compiled integer path
def _as_kernel_ints(X):
    """An integer matrix as C-contiguous int32 or int64 (the kernels' two integer types), or
    uint64 when it holds values above 2**63 - 1 (those are sorted, never seen by a kernel)."""
    if X.dtype == np.bool_ or X.dtype.itemsize < 4 or (X.dtype.kind == "u" and
                                                        X.dtype.itemsize == 4):
        return np.ascontiguousarray(X, dtype=np.int64)
    if X.dtype.itemsize == 4:
        return np.ascontiguousarray(X, dtype=np.int32)
    if X.dtype.kind == "u" and X.size and X.max() > np.iinfo(np.int64).max:
        return X
    return np.ascontiguousarray(X, dtype=np.int64)


def _dense_layout(lo, hi):
    """Offsets of each column's slice of one dense lookup table over [lo_j, hi_j], or None
    when the summed width is above MAX_INT_RANGE. The widths are Python ints: hi - lo of
    int64 columns overflows int64 (e.g. [-2**63, 2**63 - 1])."""
    widths = [int(h) - int(l) + 1 for l, h in zip(lo, hi)]
    if sum(widths) > MAX_INT_RANGE:
        return None
    return np.concatenate([[0], np.cumsum(widths, dtype=np.int64)]).astype(np.int64)


def _int_matrix_levels(X):
    """Sorted distinct values per column of an integer matrix: one compiled pass when the
    columns' ranges are narrow, a sort per column otherwise (wide or sparse ids)."""
    Xk = _as_kernel_ints(X)
    offsets = None
    if Xk.dtype != np.uint64:
        lo = Xk.min(axis=0).astype(np.int64)
        offsets = _dense_layout(lo, Xk.max(axis=0))
    if offsets is None:
        return [np.unique(Xk[:, j]) for j in range(Xk.shape[1])]
    present = np.zeros(offsets[-1], dtype=np.uint8)
    int_levels_present(Xk, lo, offsets, present)
    return [lo[j] + np.flatnonzero(present[offsets[j]:offsets[j + 1]])
            for j in range(Xk.shape[1])]


def _int_lookup(categories):
    """(lo, offsets, lut): the dense lookup table of integer vocabularies over each one's
    range, or None when the ranges are too wide or int64 does not hold them."""
    int64 = np.iinfo(np.int64)
    if not all(len(c) == 0 or (c[0] >= int64.min and c[-1] <= int64.max) for c in categories):
        return None
    lo = np.array([c[0] if len(c) else 0 for c in categories], dtype=np.int64)
    offsets = _dense_layout(lo, [c[-1] if len(c) else int(l) - 1
                                 for c, l in zip(categories, lo)])
    if offsets is None:
        return None
    lut = np.full(offsets[-1], UNSEEN, dtype=np.int32)
    for j, c in enumerate(categories):
        lut[offsets[j] + (c.astype(np.int64) - lo[j])] = np.arange(len(c), dtype=np.int32)
    return lo, offsets, lut


def _encode_int_matrix(X, categories, n_threads=1, lookup=False):
    """Codes of an integer matrix: through a dense lookup table over each vocabulary's range
    when the ranges are narrow and int64 holds them, else by binary search per column.
    `lookup`: _int_lookup(categories) when the caller keeps it (False: build it here)."""
    Xk = _as_kernel_ints(X)
    if lookup is False:
        lookup = _int_lookup(categories)
    if Xk.dtype == np.uint64 or lookup is None:
        codes = np.empty(Xk.shape, dtype=np.int32)
        for j in range(Xk.shape[1]):
            codes[:, j] = codes_for(Xk[:, j], categories[j])
        return codes
    codes = np.empty(Xk.shape, dtype=np.int32)
    encode_int(Xk, *lookup, codes, n_threads)
    return codes


# ------------------------------------------------------------ the trees' float64 view
class TabularEncoder:
    """One float64 matrix for the trees: categorical codes 0..L-1 (NaN missing, -1.0 unseen),
    real columns as numbers (NaN missing); see the module docstring for the rules.

    Plain numeric input (float/int arrays, numeric frames) under "auto" takes the fast path of
    check_array."""

    def __init__(self, categorical_features="auto"):
        self.categorical_features = categorical_features

    def fit(self, X):
        self.fit_transform(X)
        return self

    def fit_transform(self, X):
        if X is None:
            raise ValueError("X is None; expected an array of shape (n_samples, n_features)")
        names = feature_names_of(X)
        if _is_plain_numeric(X) and is_auto(self.categorical_features):
            out = check_array(X, allow_nan=True, dtype=np.float64)
            self.categorical_mask_ = np.zeros(out.shape[1], dtype=bool)
            self._codes = CategoryEncoder([])
        else:
            X = check_table(X)
            self.categorical_mask_ = categorical_mask(X, self.categorical_features)
            self._codes = CategoryEncoder(np.flatnonzero(self.categorical_mask_)).fit(X)
            out = None
        self.n_features_ = len(self.categorical_mask_)
        self.categories_ = [None] * self.n_features_
        for j, levels in zip(self._codes.columns_, self._codes.categories_):
            self.categories_[j] = levels
        self.feature_names_ = (list(names) if names is not None else
                               [f"x{j}" for j in range(self.n_features_)])
        return out if out is not None else self._encode(X)

    def _check_fitted_state(self):
        """The trees rely on this (fastml.io.load runs it on a restored encoder): encoded
        matrices have n_features_ columns, categorical column j holds codes below
        len(categories_[j]), and the code tables agree with categories_."""
        if not hasattr(self, "categorical_mask_"):
            return
        mask = self.categorical_mask_
        n = state_count(self, "n_features_", low=1)
        if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.shape != (n,):
            raise ValueError(f"TabularEncoder.categorical_mask_ is not {n} booleans")
        if not isinstance(self._codes, CategoryEncoder) or \
                self._codes.columns_ != np.flatnonzero(mask).tolist():
            raise ValueError("TabularEncoder's code table does not cover its categorical "
                             "columns")
        if not isinstance(self.categories_, list) or len(self.categories_) != n:
            raise ValueError(f"TabularEncoder.categories_ is not a list of {n} entries")
        if not isinstance(self.feature_names_, list) or len(self.feature_names_) != n:
            raise ValueError(f"TabularEncoder.feature_names_ is not a list of {n} names")
        coded = dict(zip(self._codes.columns_, self._codes.categories_))
        for j, levels in enumerate(self.categories_):
            if (levels is None) != (j not in coded) or (
                    levels is not None and (not isinstance(levels, np.ndarray) or
                                            len(levels) != len(coded[j]))):
                raise ValueError(f"TabularEncoder.categories_[{j}] does not match the code "
                                 f"table")

    def transform(self, X, owner="TabularEncoder"):
        """Encode X with the vocabulary learned at fit; `owner` names the model in errors."""
        if _is_plain_numeric(X) and not self.categorical_mask_.any():
            out = check_array(X, allow_nan=True, dtype=np.float64)
            self._check_width(out.shape[1], owner)
            return out
        X = check_table(X)
        self._check_width(X.shape[1], owner)
        return self._encode(X)

    def _check_width(self, n_features, owner):
        if n_features != self.n_features_:
            raise ValueError(f"X has {n_features} features, but {owner} is expecting "
                             f"{self.n_features_} features as input (the number seen at fit)")

    def _encode(self, X):
        out = np.empty(X.shape, dtype=np.float64)
        real = np.flatnonzero(~self.categorical_mask_)
        if len(real):
            out[:, real] = numeric_block(X, real)
        if self.categorical_mask_.any():
            codes = self._codes.transform(X)
            floats = codes.astype(np.float64)
            floats[codes == MISSING] = np.nan
            floats[codes == UNSEEN] = FLOAT_UNSEEN
            out[:, self._codes.columns_] = floats
        return out


def _is_plain_numeric(X):
    """A numeric array or a frame of numeric columns (bool is categorical, so not plain)."""
    if _is_pandas_frame(X):
        return all(getattr(dt, "kind", "O") in "iuf" for dt in X.dtypes)
    return getattr(getattr(X, "dtype", None), "kind", "O") in "iuf"
