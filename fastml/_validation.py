"""Input checking and conversion: the one place that turns user input into kernel input.

Kernels never see bad data. Everything that reaches them is
- a C-contiguous 2-D float32 or float64 array (float32/float64 kept as given; ints, bools and
  numeric objects become float64), copied only when the input is not already like that, or
- a scipy.sparse CSR matrix with float data and int32 indices whose structure was checked
  (every index in bounds, indptr consistent; `_check_sparse` states the rules), for
  estimators that take it.
Bad input raises a ValueError (TypeError for a wrong kind of object) whose message names the
problem: NaN or inf, empty data, 1-D X, mismatched lengths, one class, a different number of
features at predict time than at fit time. Nothing the user passed in is modified.
"""
import math
import numbers
import os
import sys
import warnings

import numpy as np

from .exceptions import _data_conversion_warning, not_fitted_error

FLOAT_DTYPES = (np.float64, np.float32)


def _is_pandas_frame(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_sparse(X):
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(X)


def feature_names_of(X):
    """Column names of a DataFrame when they are all strings (scikit-learn's rule), else None."""
    if _is_pandas_frame(X):
        names = [c for c in X.columns]
        if names and all(isinstance(c, str) for c in names):
            return np.asarray(names, dtype=object)
    return None


def _frame_to_array(X, name):
    bad = [str(c) for c, dt in zip(X.columns, X.dtypes) if not _is_numeric_dtype(dt)]
    if bad:
        raise TypeError(
            f"{name} has non-numeric columns {bad}: encode them first, or use an estimator that "
            f"takes categorical columns (DecisionTreeClassifier, NaiveBayes)")
    dtypes = {np.dtype(dt) for dt in X.dtypes if _is_plain_numpy(dt)}
    target = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
    return X.to_numpy(dtype=target, na_value=np.nan)


def _is_plain_numpy(dt):
    return isinstance(dt, np.dtype)


def _is_numeric_dtype(dt):
    if isinstance(dt, np.dtype):
        return dt.kind in "biuf"
    kind = getattr(getattr(dt, "numpy_dtype", None), "kind", None)  # pandas nullable dtypes
    return kind in ("b", "i", "u", "f")


def _to_float_array(X, name, dtype):
    if _is_pandas_frame(X):
        X = _frame_to_array(X, name)
    elif hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):  # pandas Series, pyarrow
        X = X.to_numpy()
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} is complex; fastml works on real "
                         f"numbers")
    if arr.dtype in FLOAT_DTYPES and dtype is None:
        return np.ascontiguousarray(arr)
    target = np.float64 if dtype is None else dtype
    if arr.dtype.kind in "biuf":
        return np.ascontiguousarray(arr, dtype=target)
    try:
        return np.ascontiguousarray(arr.astype(target))
    except (TypeError, ValueError) as exc:
        # numpy's own message names the offending value's type (what scikit-learn's checks,
        # and people used to it, look for)
        raise TypeError(
            f"{name} must be numeric; got an array of dtype {arr.dtype} (strings or objects) "
            f"that numpy cannot convert to numbers ({exc}): encode categorical columns first, "
            f"or use an estimator that takes them") from None


def check_array(X, *, name="X", accept_sparse=False, allow_nan=False, dtype=None,
                ensure_2d=True, ensure_min_samples=1, check_finite=True, estimator=None,
                reset=False):
    """Return X as a C-contiguous float32/float64 2-D array (or CSR if `accept_sparse`).

    dtype=None keeps float32/float64 and converts everything else to float64; a numpy dtype
    forces that dtype. A copy is made only when X is not already in that form. With an
    `estimator`, also check_n_features(estimator, X, reset=reset) on the user's X, so a
    DataFrame's column names are recorded (reset=True) or compared (reset=False).
    """
    if type(X) is np.ndarray and X.ndim == 2 and X.flags.c_contiguous and \
            (X.dtype in FLOAT_DTYPES if dtype is None else X.dtype == dtype) and \
            X.shape[1] > 0 and X.shape[0] >= ensure_min_samples:
        # Already kernel input (the common case of a predict call, where these microseconds
        # are the cost): no conversion to try; the finite and feature checks still run.
        if check_finite:
            _check_finite(X, name, allow_nan)
        if estimator is not None:
            check_n_features(estimator, X, reset=reset)
        return X
    if estimator is not None:
        arr = check_array(X, name=name, accept_sparse=accept_sparse, allow_nan=allow_nan,
                          dtype=dtype, ensure_2d=ensure_2d,
                          ensure_min_samples=ensure_min_samples, check_finite=check_finite)
        check_n_features(estimator, X if feature_names_of(X) is not None else arr, reset=reset)
        return arr
    if X is None:
        raise ValueError(f"{name} is None; expected an array of shape (n_samples, n_features)")
    if _is_sparse(X):
        return _check_sparse(X, name, accept_sparse, allow_nan, dtype, ensure_min_samples)
    arr = _to_float_array(X, name, dtype)
    if ensure_2d:
        if arr.ndim == 0:
            raise ValueError(f"{name} is a scalar; expected a 2-D array (n_samples, n_features)")
        if arr.ndim == 1:
            raise ValueError(
                f"{name} is 1-D (shape {arr.shape}); expected 2-D (n_samples, n_features). "
                f"Reshape your data with X.reshape(-1, 1) for a single feature or "
                f"X.reshape(1, -1) for a single sample")
        if arr.ndim > 2:
            raise ValueError(f"{name} has {arr.ndim} dimensions; expected 2 (n_samples, n_features)")
        if arr.shape[1] == 0:
            raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 "
                             f"is required.")
    if arr.shape[0] < ensure_min_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} samples (shape {arr.shape}); "
            f"at least {ensure_min_samples} required")
    if check_finite:  # False: the caller's kernel detects non-finite values in its own pass
        _check_finite(arr, name, allow_nan)
    return arr


def _check_finite(values, name, allow_nan):
    # np.isfinite over the whole array is one fast pass; only on failure do we look closer.
    if values.dtype.kind != "f" or values.size == 0:
        return
    total = float(np.add.reduce(values, axis=None, dtype=np.float64))
    if math.isfinite(total):
        return
    if np.isinf(values).any():
        raise ValueError(f"{name} contains infinity; fastml needs finite values")
    if not allow_nan and np.isnan(values).any():
        raise ValueError(
            f"{name} contains NaN; impute the missing values first (or use an estimator that "
            f"handles them: DecisionTreeClassifier, NaiveBayes)")


_INT32_MAX = 2**31 - 1  # the kernels index CSR data with int32


def _check_sparse(X, name, accept_sparse, allow_nan, dtype, ensure_min_samples):
    """CSR input for the kernels, checked before anything reads it (scipy's constructor
    accepts a matrix whose indices point outside it, and the kernels index without bounds
    checks). The rules:
    - the structure must be consistent: indptr of length n_rows + 1, indptr[0] = 0,
      non-decreasing, indptr[-1] = len(indices) = len(data), every column index in
      [0, n_features); anything else is a ValueError naming the problem;
    - index arrays of any integer type; they become int32 (exactly: all values were checked
      to fit) and more than 2**31 - 1 stored values or features are refused;
    - unsorted column indices are sorted and duplicate entries summed (scipy's meaning of a
      duplicate), in a copy;
    - a valid CSR matrix with int32 indices, sorted without duplicates, and float data is
      returned as it is (no copy). The input is never modified."""
    import scipy.sparse as sp
    if not accept_sparse:
        raise TypeError(
            f"{name} is a sparse matrix and this estimator needs dense input: use X.toarray()")
    if len(X.shape) != 2:
        raise ValueError(f"{name} is a {len(X.shape)}-D sparse array; expected 2-D "
                         f"(n_samples, n_features)")
    if X.format in ("csr", "csc"):
        n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
        _check_compressed(X.indptr, X.indices, X.data, n_major, n_minor, name, X.format)
    elif X.format == "coo":
        _check_coordinates(X, name)
    X = X if X.format == "csr" else sp.csr_matrix(X)
    if X.shape[0] < ensure_min_samples:
        raise ValueError(f"{name} has {X.shape[0]} samples; at least {ensure_min_samples} required")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 features; at least 1 is required")
    if X.nnz > _INT32_MAX or X.shape[1] > _INT32_MAX:
        raise ValueError(f"{name} has {X.nnz} stored values and {X.shape[1]} features; at most "
                         f"2**31 - 1 of each are supported")
    data = X.data
    target = dtype if dtype is not None else (data.dtype if data.dtype in FLOAT_DTYPES else np.float64)
    if data.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers; its data has dtype {data.dtype}")
    indices = X.indices.astype(np.int32, copy=False)  # exact: checked against the bounds above
    indptr = X.indptr.astype(np.int32, copy=False)
    data = np.ascontiguousarray(data, dtype=target)
    if (data is not X.data) or (indices is not X.indices) or (indptr is not X.indptr):
        X = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.nnz == 0:
        # One explicit zero, so kernels never take the address of an empty buffer; the
        # matrix is unchanged.
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int32)
        indptr[1:] = 1
        X = sp.csr_matrix((np.zeros(1, dtype=X.dtype), np.zeros(1, dtype=np.int32), indptr),
                          shape=X.shape)
    _check_finite(X.data, name, allow_nan)
    return X


def _check_compressed(indptr, indices, data, n_major, n_minor, name, fmt):
    """The structure of a CSR (rows major) or CSC (columns major) matrix, read only."""
    major, minor = ("row", "column") if fmt == "csr" else ("column", "row")
    for part, arr in (("indptr", indptr), ("indices", indices)):
        if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"{name} ({fmt}) has a malformed {part}: expected a 1-D integer "
                             f"array")
    if len(indptr) != n_major + 1:
        raise ValueError(f"{name} ({fmt}) has an indptr of length {len(indptr)}; expected "
                         f"{n_major + 1} ({major}s + 1)")
    if indptr[0] != 0:
        raise ValueError(f"{name} ({fmt}) has indptr[0] = {indptr[0]}; it must be 0")
    nnz = int(indptr[-1])
    if not nnz == len(indices) == len(np.asarray(data)):
        raise ValueError(f"{name} ({fmt}) is inconsistent: indptr[-1] = {nnz}, but it holds "
                         f"{len(indices)} indices and {len(np.asarray(data))} values")
    if n_major and (indptr[1:] < indptr[:-1]).any():
        at = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
        raise ValueError(f"{name} ({fmt}) has a decreasing indptr at {major} {at}")
    if nnz:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= n_minor:
            bad = low if low < 0 else high
            raise ValueError(f"{name} ({fmt}) has {minor} index {bad} outside [0, {n_minor})")


def _check_coordinates(X, name):
    for part, values, bound in (("row", X.row, X.shape[0]), ("column", X.col, X.shape[1])):
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= bound):
            raise ValueError(f"{name} (coo) has a {part} index outside [0, {bound})")


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel():
    """The `stacklevel` that makes a warning raised by the caller of this function point at
    the first frame outside fastml (the user's fit call), however deep the call came from."""
    level, frame = 2, sys._getframe(2)  # 2: the caller of the function that warns
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


COLUMN_Y_MESSAGE = ("A column-vector y was passed when a 1d array was expected. Please change "
                    "the shape of y to (n_samples, ), for example using ravel().")


def check_target(y, *, name="y", numeric=False, warn=None):
    """y as a 1-D array. A column vector (n, 1) is flattened with scikit-learn's
    DataConversionWarning (`fastml.exceptions.DataConversionWarning`, which is also
    scikit-learn's class when scikit-learn is imported): this is the y of an estimator that
    takes one target. warn=None warns when `name` is "y" (not for partial_fit's `classes`);
    pass warn=False where y is not a training target (a score's y_true: scikit-learn's
    metrics flatten a column silently). Multi-target regressors use
    `check_regression_targets`, which keeps (n, 1) as one column, without a warning."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    given = y
    y = np.asarray(y)
    if y.dtype.kind in "US" and not isinstance(given, np.ndarray):
        # numpy turns [1, "a"] into two strings: look at what was given before it did
        _check_label_types(np.asarray(given, dtype=object).ravel(), name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
        if warn or (warn is None and name == "y"):
            warnings.warn(COLUMN_Y_MESSAGE, _data_conversion_warning(),
                          stacklevel=_user_stacklevel())
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {y.shape}")
    if y.size == 0:
        raise ValueError(f"{name} is empty; at least 1 sample is required")
    if numeric or y.dtype.kind == "f":
        y = _numeric_target(y, name)
        if not np.isfinite(y.astype(np.float64, copy=False)).all():
            raise ValueError(f"{name} contains NaN or infinity")
    elif y.dtype == object:
        if any(v is None or (isinstance(v, float) and v != v) for v in y):
            raise ValueError(f"{name} contains missing labels (None or NaN)")
        _check_label_types(y, name)
    return y


def _check_label_types(values, name):
    """Labels are all text or all numbers: a mix (1 and "1") is refused rather than silently
    turned into strings or sorted by an arbitrary rule."""
    types = {type(v) for v in values.tolist()}
    text = {t for t in types if issubclass(t, (str, bytes))}
    if text and len(types) > len(text):
        found = sorted(t.__name__ for t in types)
        raise ValueError(f"{name} mixes label types {found}: use one type for every label "
                        f"(e.g. all str, or all int)")


def check_X_y(X, y, *, accept_sparse=False, allow_nan=False, dtype=None, y_numeric=False,
              multi_output=False, check_finite=True, estimator=None, reset=True):
    """Validate X and y together; their numbers of samples must agree. With an `estimator`,
    record (reset=True) or check its features as check_array does."""
    X = check_array(X, accept_sparse=accept_sparse, allow_nan=allow_nan, dtype=dtype,
                    check_finite=check_finite, estimator=estimator, reset=reset)
    if multi_output:
        y = check_regression_targets(y)
    else:
        y = check_target(y, numeric=y_numeric)
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y have different numbers of samples: X has {X.shape[0]}, y has {y.shape[0]}")
    return X, y


def check_regression_targets(y, name="y"):
    """Regression targets: 1-D (n,) or 2-D (n, n_outputs), finite, float64."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    y = _numeric_target(np.asarray(y), name)
    if y.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D; got shape {y.shape}")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least 1 sample is required")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return y


def _numeric_target(y, name):
    """A regressor's targets as numbers: numeric dtypes as they are, an object array of numbers
    (Python or numpy ints, floats, bools: what pandas or a list of mixed numbers gives)
    converted to float64, as scikit-learn does. Anything else (text, None, other objects) is a
    TypeError naming `name`; text is refused even when it looks like a number ("1.5"), so a
    column of labels is not taken for targets by accident."""
    if y.dtype.kind in "biuf":
        return y
    if y.dtype != object:
        raise TypeError(f"{name} must be numeric for a regressor; got dtype {y.dtype}")
    values = y.ravel().tolist()
    bad = [v for v in values if not isinstance(v, (numbers.Real, np.number))
           or isinstance(v, np.timedelta64)]  # a timedelta64 is an np.integer
    if bad:
        bad = bad[0]
        raise TypeError(f"{name} must be numeric for a regressor; its object array holds "
                        f"{bad!r} ({type(bad).__name__})")
    try:
        return y.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as exc:  # e.g. an int beyond float64
        raise TypeError(f"{name} must be numeric for a regressor; numpy cannot convert it to "
                        f"float64 ({exc})") from None


def check_sample_weight(sample_weight, n_samples, dtype=np.float64, *, whole=True):
    """None → ones; otherwise a finite, non-negative 1-D array of length n_samples with a
    positive, finite sum. A scalar means that weight on every row and is checked the same way
    (a negative, NaN or zero scalar is refused, not broadcast). whole=False: the rows are one
    part of the data (a chunk, a partition), whose weights may all be 0 (the sum over all
    parts is checked once, by whoever adds them up)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=dtype)
    if isinstance(sample_weight, (numbers.Number, np.generic)) and \
            not isinstance(sample_weight, (bool, np.bool_)):
        if not isinstance(sample_weight, numbers.Real):
            raise ValueError(f"sample_weight must be a real number; got {sample_weight!r}")
        w = np.full(n_samples, sample_weight, dtype=dtype)
    else:
        try:
            w = np.ascontiguousarray(sample_weight, dtype=dtype)
        except (TypeError, ValueError):
            raise ValueError("sample_weight must hold numbers") from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},); got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinity")
    if (w < 0).any():
        raise ValueError("sample_weight contains negative values")
    with np.errstate(over="ignore"):
        total = np.sum(w, dtype=np.float64)
    if total == 0 and whole:
        raise ValueError("sample_weight sums to 0 (zero everywhere): nothing to learn from")
    if not np.isfinite(total):
        raise ValueError("sample_weight sums to more than the largest float64 (~1.8e308); "
                         "divide the weights by a common factor (only their ratios matter)")
    return w


# ------------------------------------------------------------------ class weights
BALANCED_IN_PARTIAL_FIT = (
    "class_weight='balanced' needs the class counts of all the training data, and a "
    "partial_fit call sees one chunk: pass a dict instead, e.g. {c: n / (n_classes * n_c)} "
    "from the class counts n_c of the whole data set (what 'balanced' computes in fit)")


def check_class_weight(class_weight, *, partial=False):
    """The class_weight parameter: None, "balanced" or a dict {label: weight >= 0, finite}.
    partial=True (a partial_fit call) refuses "balanced": it needs the class counts of all
    the data (BALANCED_IN_PARTIAL_FIT). ValueError naming the problem otherwise."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict "
                             f"{{label: weight}}; got {class_weight!r}")
        if partial:
            raise ValueError(BALANCED_IN_PARTIAL_FIT)
        return class_weight
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}; "
                         f"got {type(class_weight).__name__} {class_weight!r}")
    for label, weight in class_weight.items():
        if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real) or \
                not math.isfinite(weight) or weight < 0:
            raise ValueError(f"class_weight[{label!r}] = {weight!r}: class weights must be "
                             f"finite numbers >= 0")
    return class_weight


def class_weight_factors(class_weight, classes, class_totals):
    """The weight of each class (float64, one per entry of `classes`), scikit-learn's rule:
    None, 1 each; "balanced", total / (n_classes * class_totals) with total the sum of
    class_totals (scikit-learn's compute_class_weight, whose class counts are weighted by
    sample_weight when given; n_classes counts the classes with a positive total, and a
    class without one, which has no rows to weigh, gets 0); a dict, its value for each
    class it names and 1 for the others (a key that is no class is an error only when some
    class is not named, as in scikit-learn: then it is likely a misspelt label).

    class_totals are the (sample-weighted) row counts of each class over ALL the training
    data: fit passes its own; a streaming or distributed driver passes the totals of its
    label pass, so "balanced" means the same whatever the chunks."""
    classes = np.asarray(classes)
    totals = np.asarray(class_totals, dtype=np.float64)
    if class_weight is None:
        return np.ones(len(classes))
    if isinstance(class_weight, str):           # "balanced" (check_class_weight)
        present = totals > 0    # a class without weight has no rows to weigh: factor 0
        factors = np.zeros(len(classes))
        factors[present] = totals.sum() / (np.count_nonzero(present) * totals[present])
        return factors
    factors = np.ones(len(classes))
    named = 0
    for k, label in enumerate(classes.tolist()):
        if label in class_weight:
            factors[k] = float(class_weight[label])
            named += 1
    if named < len(classes) and named != len(class_weight):
        unknown = [key for key in class_weight if key not in set(classes.tolist())]
        raise ValueError(f"class_weight names {unknown!r}, which are not classes of y "
                         f"{classes.tolist()!r}")
    return factors


def class_sample_weight(class_weight, classes, codes, sample_weight, *, partial=False):
    """sample_weight (checked, float64) times each row's class weight (class_weight_factors,
    with this data's class totals), for rows of class codes 0..K-1 of `classes`: the one
    place a classifier's fit turns class_weight into sample weights. partial=True: a
    partial_fit call ("balanced" refused). The product must keep a positive sum."""
    class_weight = check_class_weight(class_weight, partial=partial)
    if class_weight is None:
        return sample_weight
    totals = np.bincount(codes, weights=sample_weight, minlength=len(classes))
    weights = sample_weight * class_weight_factors(class_weight, classes, totals)[codes]
    if not np.sum(weights) > 0:
        raise ValueError("sample_weight times class_weight is 0 on every row: nothing to "
                         "learn from (class_weight gives the classes present weight 0)")
    if not np.isfinite(np.sum(weights)):
        raise ValueError("sample_weight times class_weight sums to more than the largest "
                         "float64; divide the weights by a common factor")
    return weights


def check_n_features(estimator, X, *, reset):
    """At fit (reset=True) record `n_features_in_` (and `feature_names_in_` for a DataFrame
    with string column names); afterwards insist the same number of features comes back."""
    n = X.shape[1]
    names = feature_names_of(X)
    if reset:
        estimator.n_features_in_ = n
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return
    if not hasattr(estimator, "n_features_in_"):
        raise not_fitted_error(
            f"this {type(estimator).__name__} is not fitted yet: call fit before using it")
    if n != estimator.n_features_in_:
        raise ValueError(
            f"X has {n} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input (the number it was fitted with)")
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is not None and names is not None and list(names) != list(fitted):
        raise ValueError(
            f"X has feature names {list(names)} that differ from those seen at fit "
            f"{list(fitted)} (same names, same order are required)")


def check_random_state(seed):
    """A numpy Generator from None, an int, a Generator or a legacy RandomState."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, (numbers.Integral, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {seed}")
        return np.random.default_rng(int(seed))
    raise ValueError(f"random_state must be None, an int or a numpy Generator; got {seed!r}")


def seed_from(rng):
    """A 64-bit seed for the C generator of a kernel, drawn from a numpy Generator."""
    return int(rng.integers(0, 2**63 - 1, dtype=np.int64))


C_INT_MAX = 2**31 - 1  # the kernels' `int` (32 bits on every platform fastml supports)


def check_param(name, value, *, choices=None, low=None, high=None, integer=False,
                low_inclusive=True, allow_none=False, c_int=True):
    """Validate one hyper-parameter at fit time with a message that names it.

    integer=True accepts Python and numpy integers (not bools); with c_int=True (the default)
    the value must also fit a C int, [-2**31, 2**31 - 1], so it reaches a kernel without an
    OverflowError (pass c_int=False for a count that Python alone uses). Real values must be
    finite and representable as a float64. Every failure is a ValueError naming `name`."""
    if value is None and allow_none:
        return value
    if choices is not None:
        if value not in choices:
            raise ValueError(f"{name} must be one of {sorted(map(str, choices))}; got {value!r}")
        return value
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {what}; got {value!r}")
    if integer and c_int and not -C_INT_MAX - 1 <= value <= C_INT_MAX:
        raise ValueError(f"{name} = {value} is too large: it must fit a C int "
                         f"(at most 2**31 - 1 = {C_INT_MAX} in size)")
    if not integer:
        try:
            as_float = float(value)
        except OverflowError:
            raise ValueError(f"{name} = {value} is too large for a float64") from None
        if not np.isfinite(as_float):
            raise ValueError(f"{name} must be finite; got {value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}; got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}; got {value!r}")
    return value


MAX_THREADS = 64  # more OpenMP threads than this (or than the cores, if more) never helps


def check_n_jobs(n_jobs):
    """Threads to use for `n_jobs`: None = 1, a positive int = that many, -1 = every core,
    -2 = all but one, and so on (joblib's convention); 0 is an error. A count above
    max(MAX_THREADS, cores) is clamped to it, so no size a kernel derives from it overflows."""
    import os
    if n_jobs is None:
        return 1
    check_param("n_jobs", n_jobs, integer=True, c_int=False)
    if n_jobs == 0:
        raise ValueError("n_jobs must be a number of threads (>= 1), or -1 for every core; got 0")
    cores = os.cpu_count() or 1
    if n_jobs > 0:
        return int(min(n_jobs, max(MAX_THREADS, cores)))
    return max(1, cores + 1 + int(max(n_jobs, -cores)))


# ------------------------------------------------------------ fitted state read from a file
def state_array(owner, name, dtype=None, shape=None, contiguous=True):
    """`owner.<name>` if it is a numpy array of exactly this dtype and shape (a tuple whose
    entries may be None = any length, or an int = that many dimensions), C-contiguous when
    the compiled kernels read it; else ValueError. For `_check_fitted_state` methods, which
    `fastml.io.load` runs on every restored object (the kernels index these arrays without
    bounds checks, so a crafted model file must not reach them)."""
    value = getattr(owner, name)
    where = f"{type(owner).__name__}.{name}"
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{where} is a {type(value).__name__}, not an array")
    if dtype is not None and value.dtype != np.dtype(dtype):
        raise ValueError(f"{where} has dtype {value.dtype}; expected {np.dtype(dtype)}")
    if isinstance(shape, int):
        shape = (None,) * shape
    if shape is not None and (value.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(value.shape, shape))):
        raise ValueError(f"{where} has shape {value.shape}; expected "
                         f"{tuple('any' if s is None else s for s in shape)}")
    if contiguous and not value.flags.c_contiguous:
        raise ValueError(f"{where} is not C-contiguous")
    return value


def state_count(owner, name, low=0):
    """`owner.<name>` if it is an integer >= low (not a bool); else ValueError."""
    value = getattr(owner, name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < low:
        raise ValueError(f"{type(owner).__name__}.{name} = {value!r} is not an integer "
                         f">= {low}")
    return int(value)
