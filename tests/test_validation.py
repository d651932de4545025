"""fastml/_validation.py: conversion without needless copies, and clear errors for bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

import fastml
import fastml.exceptions

from fastml._validation import (check_array, check_n_features, check_sample_weight,
                                check_target, check_X_y)


class Dummy:
    pass


def test_float_arrays_pass_through_without_copy():
    for dtype in (np.float64, np.float32):
        X = np.ones((5, 3), dtype=dtype)
        assert check_array(X) is X


def test_other_dtypes_become_float64_and_order_becomes_c():
    assert check_array(np.ones((4, 2), dtype=np.int32)).dtype == np.float64
    assert check_array([[True, False]]).dtype == np.float64
    F = np.asfortranarray(np.ones((4, 3)))
    out = check_array(F)
    assert out.flags.c_contiguous and out.dtype == np.float64


def test_pandas_frame_keeps_float32_and_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.ones(3, np.float32), "b": np.zeros(3, np.float32)})
    assert check_array(df).dtype == np.float32
    est = Dummy()
    check_n_features(est, df, reset=True)
    assert list(est.feature_names_in_) == ["a", "b"]
    with pytest.raises(ValueError, match="feature names"):
        check_n_features(est, df[["b", "a"]], reset=False)


def test_pandas_string_column_is_named_in_the_error():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "color": ["red", "blue"]})
    with pytest.raises(TypeError, match="color"):
        check_array(df)


@pytest.mark.parametrize("X,match", [
    (np.array([[1.0, np.nan]]), "NaN"),
    (np.array([[1.0, np.inf]]), "infinity"),
    (np.array([[1.0, -np.inf]], dtype=np.float32), "infinity"),
    (np.zeros((0, 3)), "0 samples"),
    (np.zeros((3, 0)), "0 feature"),
    (np.zeros(3), "1-D"),
    (np.zeros((2, 2, 2)), "3 dimensions"),
    (np.array([[1 + 2j]]), "Complex"),
])
def test_bad_arrays_raise_clear_errors(X, match):
    with pytest.raises(ValueError, match=match):
        check_array(X)


def test_nan_allowed_when_asked():
    X = np.array([[1.0, np.nan]])
    assert check_array(X, allow_nan=True) is X
    with pytest.raises(ValueError, match="infinity"):
        check_array(np.array([[np.inf, np.nan]]), allow_nan=True)


def test_sparse_is_csr_with_int32_indices_or_rejected():
    X = sp.random(20, 5, density=0.3, format="coo", random_state=0)
    out = check_array(X, accept_sparse=True)
    assert out.format == "csr" and out.indices.dtype == np.int32
    np.testing.assert_array_equal(out.toarray(), X.toarray())
    with pytest.raises(TypeError, match="sparse"):
        check_array(X)
    bad = sp.csr_matrix(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        check_array(bad, accept_sparse=True)


def test_x_y_lengths_and_targets():
    with pytest.raises(ValueError, match="different numbers of samples"):
        check_X_y(np.ones((3, 2)), [1, 2])
    with pytest.raises(ValueError, match="1-D"):
        check_target(np.ones((3, 2)))
    with pytest.warns(UserWarning, match="A column-vector y was passed"):
        assert check_target(np.ones((3, 1))).shape == (3,)
    with pytest.raises(ValueError, match="missing labels"):
        check_target(np.array(["a", None], dtype=object))


def test_feature_count_checked_after_fit():
    est = Dummy()
    check_n_features(est, np.ones((2, 3)), reset=True)
    assert est.n_features_in_ == 3
    with pytest.raises(ValueError, match="X has 2 features, but Dummy is expecting 3"):
        check_n_features(est, np.ones((2, 2)), reset=False)


def test_sample_weight():
    np.testing.assert_array_equal(check_sample_weight(None, 3), np.ones(3))
    with pytest.raises(ValueError, match="negative"):
        check_sample_weight([1.0, -1.0], 2)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        check_sample_weight([1.0, 1.0], 3)
    with pytest.raises(ValueError, match="zero everywhere"):
        check_sample_weight([0.0, 0.0], 2)


def test_n_jobs_convention():
    import os
    from fastml._validation import check_n_jobs
    assert check_n_jobs(None) == 1 and check_n_jobs(3) == 3
    assert check_n_jobs(-1) == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="n_jobs"):
        check_n_jobs(0)


def test_empty_csr_gets_one_explicit_zero():
    out = check_array(sp.csr_matrix((4, 3)), accept_sparse=True)
    assert out.nnz == 1 and out.data[0] == 0.0
    np.testing.assert_array_equal(out.toarray(), np.zeros((4, 3)))


# ------------------------------------------------------------ CSR structure (issue 12)
def _raw_csr(data, indices, indptr, shape):
    # scipy's constructor does not check index bounds: this is how a bad matrix reaches us.
    return sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices),
                          np.asarray(indptr)), shape=shape)


@pytest.mark.parametrize("indices, indptr, message", [
    ([0, 5], [0, 1, 2], "column index 5 outside"),
    ([0, -1], [0, 1, 2], "column index -1 outside"),
    ([0, 1], [0, 3, 2], "decreasing indptr"),
    ([0, 1], [1, 1, 2], r"indptr\[0\] = 1"),
    ([0, 1], [0, 1, 3], r"indptr\[-1\] = 3"),
])
def test_malformed_csr_is_refused_naming_the_problem(indices, indptr, message):
    X = _raw_csr([1.0, 2.0], indices, [0, 1, 2], (2, 3))
    X.indptr = np.asarray(indptr, dtype=X.indptr.dtype)  # the constructor checks a few only
    with pytest.raises(ValueError, match=message):
        check_array(X, accept_sparse=True)


def test_int64_indices_are_converted_exactly_or_refused():
    X = _raw_csr([1.0, 2.0], np.array([0, 2], dtype=np.int64), np.array([0, 1, 2], np.int64),
                 (2, 3))
    out = check_array(X, accept_sparse=True)
    assert out.indices.dtype == np.int32 and out.indptr.dtype == np.int32
    np.testing.assert_array_equal(out.toarray(), [[1, 0, 0], [0, 0, 2]])
    wraps = _raw_csr([1.0], np.array([2**32 + 1], dtype=np.int64), np.array([0, 1], np.int64),
                     (1, 3))  # astype(int32) would make this index 1: silently wrong
    with pytest.raises(ValueError, match="outside"):
        check_array(wraps, accept_sparse=True)


def test_unsorted_and_duplicate_indices_are_sorted_and_summed_in_a_copy():
    X = _raw_csr([1.0, 2.0, 3.0], np.array([2, 0, 2], dtype=np.int32),
                 np.array([0, 3, 3], dtype=np.int32), (2, 3))
    before = (X.data.copy(), X.indices.copy())
    out = check_array(X, accept_sparse=True)
    np.testing.assert_array_equal(out.toarray(), [[2, 0, 4], [0, 0, 0]])
    assert out.has_canonical_format
    np.testing.assert_array_equal(X.data, before[0])
    np.testing.assert_array_equal(X.indices, before[1])


def test_valid_csr_is_not_copied():
    X = sp.random(20, 5, density=0.3, format="csr", random_state=0, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    out = check_array(X, accept_sparse=True)
    assert out.data is X.data and out.indices is X.indices and out.indptr is X.indptr


def test_csc_and_coo_with_bad_indices_are_refused():
    csc = sp.csc_matrix((np.ones(1), np.array([7]), np.array([0, 1, 1])), shape=(3, 2))
    with pytest.raises(ValueError, match="row index 7 outside"):
        check_array(csc, accept_sparse=True)
    coo = sp.coo_matrix((np.ones(1), (np.array([0]), np.array([1]))), shape=(2, 2))
    coo.col[0] = 9  # scipy checks at construction only
    with pytest.raises(ValueError, match="column index outside"):
        check_array(coo, accept_sparse=True)


def test_sgd_estimators_refuse_out_of_range_csr_instead_of_crashing():
    # Run in a child process: before the check this segfaulted the interpreter.
    from _robust import run_python
    code = ("import numpy as np, scipy.sparse as sp, fastml\n"
            "X = sp.csr_matrix((np.ones(4), np.array([0, 1, 100000, -3]), np.array([0, 1, 2, 3, 4])),"
            " shape=(4, 2))\n"
            "y = np.array([0, 1, 0, 1])\n"
            "for est in (fastml.LogisticRegression(solver='sgd'), fastml.Perceptron()):\n"
            "    try:\n"
            "        est.fit(X, y)\n"
            "    except ValueError as exc:\n"
            "        assert 'outside' in str(exc), exc\n"
            "    else:\n"
            "        raise SystemExit('accepted')\n")
    out = run_python(["-c", code], timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


# ------------------------------------------------------------ sample_weight (issue 12)
@pytest.mark.parametrize("weight, message", [
    (-1, "negative"), (-1.0, "negative"), (np.nan, "NaN"), (np.inf, "infinity"),
    (0, "sums to 0"), (0.0, "sums to 0"), (1 + 2j, "real number"),
])
def test_scalar_sample_weight_is_validated_like_an_array(weight, message):
    with pytest.raises(ValueError, match=message):
        check_sample_weight(weight, 4)


def test_scalar_sample_weight_broadcasts_when_valid():
    np.testing.assert_array_equal(check_sample_weight(2.5, 3), [2.5, 2.5, 2.5])


def test_weights_whose_sum_overflows_get_a_clear_error():
    with pytest.raises(ValueError, match="sums to more than the largest float64"):
        check_sample_weight(np.full(4, 1e308), 4)
    with pytest.raises(ValueError, match="sums to more than"):
        check_sample_weight(1e308, 4)


def test_weights_summing_to_zero_get_a_value_error():
    with pytest.raises(ValueError, match="sums to 0"):
        check_sample_weight(np.zeros(3), 3)


def test_an_estimator_refuses_a_negative_scalar_weight():
    import fastml
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="negative"):
        fastml.LogisticRegression().fit(X, [0, 0, 1, 1], sample_weight=-1)


# ------------------------------------------------------------ label types (issue 12)
@pytest.mark.parametrize("y", [
    [1, "a", 1, "a"], (1, "1", 2, "2"), np.array([1, "a", 1, "a"], dtype=object),
    np.array([2.5, "x", 2.5, "x"], dtype=object),
], ids=["list", "tuple", "object array", "float and str"])
def test_labels_mixing_numbers_and_text_are_refused_naming_the_types(y):
    import fastml
    X = np.arange(4.0).reshape(-1, 1)
    with pytest.raises(ValueError, match=r"mixes label types \[.*'str'\]"):
        fastml.GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="mixes label types"):
        check_target(y)


def test_labels_of_one_type_are_kept():
    assert check_target(["b", "a"]).tolist() == ["b", "a"]
    assert check_target(np.array([1, 2.5], dtype=object)).tolist() == [1, 2.5]


# ------------------------------------------------------------ check_param (issue 12)
from fastml._validation import C_INT_MAX, check_n_jobs, check_param  # noqa: E402


@pytest.mark.parametrize("value", [2**31, 99999999999, -(2**31) - 1, np.int64(2**40), 10**400])
def test_integers_too_large_for_c_are_a_value_error_naming_the_parameter(value):
    with pytest.raises(ValueError, match="max_depth .*too large"):
        check_param("max_depth", value, integer=True, low=1)


def test_c_int_bound_is_inclusive_and_can_be_lifted():
    assert check_param("n", C_INT_MAX, integer=True) == C_INT_MAX
    assert check_param("n", 2**40, integer=True, c_int=False) == 2**40


def test_real_parameters_too_large_for_float64_are_a_value_error():
    with pytest.raises(ValueError, match="alpha = 1000.*too large for a float64"):
        check_param("alpha", 10**400, low=0)


def test_n_jobs_too_large_is_clamped_to_a_thread_count_that_helps():
    import os
    from fastml._validation import MAX_THREADS
    cap = max(MAX_THREADS, os.cpu_count() or 1)
    assert check_n_jobs(10**20) == cap and check_n_jobs(2) == 2
    assert check_n_jobs(-10**20) == 1        # "all but 10**20 cores": at least one thread


def test_a_limit_beyond_c_means_no_limit_and_other_huge_integers_are_value_errors():
    import fastml
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    unlimited = fastml.DecisionTreeClassifier().fit(X, y)
    huge = fastml.DecisionTreeClassifier(max_depth=99999999999).fit(X, y)
    assert (huge.predict(X) == unlimited.predict(X)).all()
    with pytest.raises(ValueError, match="max_iter"):            # a count C must hold
        fastml.Perceptron(max_iter=2**40).fit(X, y)


# ------------------------------------------------------------ CSR structure, property-based
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def raw_csr(draw):
    n_rows, n_cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(0, 3), min_size=n_rows, max_size=n_rows))
    nnz = sum(counts)
    indices = draw(st.lists(st.integers(-2, n_cols + 1) if draw(st.booleans())
                            else st.integers(0, n_cols - 1), min_size=nnz, max_size=nnz))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    if draw(st.booleans()):  # break the pointer array now and then
        i = draw(st.integers(0, n_rows))
        indptr[i] += draw(st.integers(-2, 2))
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    data = draw(st.lists(st.floats(-5, 5), min_size=nnz, max_size=nnz))
    X = sp.csr_matrix((n_rows, n_cols))
    # set the arrays directly: scipy's constructor would refuse some of these shapes
    X.data, X.indices, X.indptr = (np.asarray(data, dtype=np.float64),
                                   np.asarray(indices, dtype=dtype), indptr.astype(dtype))
    return X


def _dense_or_none(X):
    """The matrix a CSR structure means (duplicates summed), or None when it is malformed."""
    n_rows, n_cols = X.shape
    p, idx = X.indptr, X.indices
    if len(p) != n_rows + 1 or p[0] != 0 or p[-1] != len(idx) or np.any(np.diff(p) < 0) \
            or (len(idx) and (idx.min() < 0 or idx.max() >= n_cols)):
        return None
    out = np.zeros(X.shape)
    for r in range(n_rows):
        for k in range(p[r], p[r + 1]):
            out[r, idx[k]] += X.data[k]
    return out


@settings(max_examples=150, deadline=None)
@given(raw_csr())
def test_csr_structure_property(X):
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    expected = _dense_or_none(X)
    if expected is None:
        with pytest.raises(ValueError):
            check_array(X, accept_sparse=True)
    else:
        out = check_array(X, accept_sparse=True)
        assert out.indices.dtype == np.int32 and out.has_canonical_format
        np.testing.assert_allclose(out.toarray(), expected)
    for a, b in zip(before, (X.data, X.indices, X.indptr)):
        np.testing.assert_array_equal(a, b)


def test_negative_random_state_is_a_value_error_naming_it():
    from fastml._validation import check_random_state
    with pytest.raises(ValueError, match="random_state must be a non-negative integer"):
        check_random_state(-5)
    assert check_random_state(np.int64(3)).integers(100) == np.random.default_rng(3).integers(100)


# ------------------------------------------------------------ dense input, property-based
from hypothesis.extra import numpy as hnp  # noqa: E402


@st.composite
def dense_input(draw):
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.uint64, np.bool_,
                                  np.complex128, object, "U3"]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    if dtype is object:
        values = draw(st.lists(st.one_of(st.floats(), st.integers(-10, 10), st.none(),
                                         st.text(max_size=2)),
                               min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        arr = np.empty(shape, dtype=object)
        arr.reshape(-1)[:] = values if values else arr.reshape(-1)
    else:
        arr = draw(hnp.arrays(dtype, shape))
    if arr.ndim == 2 and draw(st.booleans()):
        arr = np.asfortranarray(arr)
    if arr.ndim == 2 and arr.shape[1] > 1 and draw(st.booleans()):
        arr = arr[:, ::2]  # a non-contiguous view
    return arr


@settings(max_examples=200, deadline=None)
@given(dense_input(), st.booleans())
def test_dense_input_gives_the_documented_array_or_a_clear_error(X, allow_nan):
    before = X.copy()
    try:
        out = check_array(X, allow_nan=allow_nan)
    except (ValueError, TypeError) as exc:
        assert str(exc)
    else:
        assert out.ndim == 2 and out.flags.c_contiguous and out.dtype in (np.float32, np.float64)
        assert out.shape == X.shape and out.shape[0] >= 1 and out.shape[1] >= 1
        assert not np.isinf(out).any()
        assert allow_nan or not np.isnan(out).any()
        if X.dtype.kind in "biuf":
            np.testing.assert_array_equal(out, X.astype(out.dtype))
    assert X.dtype == before.dtype and X.shape == before.shape
    assert np.array_equal(X, before, equal_nan=X.dtype.kind in "fc") if X.dtype != object \
        else all(a is b or a == b or (a != a and b != b) for a, b in
                 zip(X.ravel().tolist(), before.ravel().tolist()))


REGRESSORS = ["LinearRegression", "Ridge", "PolynomialRegression", "DecisionTreeRegressor",
              "RandomForestRegressor"]


@pytest.mark.parametrize("name", REGRESSORS)
def test_regressors_take_an_object_y_of_numbers_as_float(name):
    """scikit-learn converts an object-dtype y of numbers to float (check_dtype_object); the
    model must equal the one fitted on the float y."""
    import fastml
    cls = getattr(fastml, name)
    params = {"random_state": 0} if "random_state" in cls._get_param_names() else {}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X @ [1.0, -2.0, 0.5]
    mixed = np.array([int(round(v)) if i % 3 == 0 else np.float64(v)
                      for i, v in enumerate(y)], dtype=object)  # ints, floats, numpy floats
    reference = cls(**params).fit(X, mixed.astype(np.float64)).predict(X)
    np.testing.assert_array_equal(cls(**params).fit(X, mixed).predict(X), reference)
    for bad, shown in [(np.array(["1.5"] * 30, dtype=object), "'1.5'"),
                       (np.array([1.0] * 29 + [None], dtype=object), "None"),
                       (np.array([{}] * 30, dtype=object), "{}")]:
        with pytest.raises(TypeError, match=rf"y must be numeric.*{shown}"):
            cls(**params).fit(X, bad)


def test_non_numeric_x_error_carries_numpy_message():
    """The TypeError for an object X numpy cannot convert includes numpy's own text (what
    scikit-learn's check_dtype_object matches), and still says what to do."""
    X = np.ones((4, 2), dtype=object)
    X[0, 0] = {"foo": "bar"}
    with pytest.raises(TypeError, match=r"X must be numeric.*argument must be .* string.* "
                                        r"number.*encode categorical"):
        check_array(X)


def test_fast_path_for_ready_arrays_still_validates():
    """Issue 13: a float C-contiguous 2-D array is returned as is (no conversion to try), but
    NaN / inf, the feature count, the dtype asked for and the minimum rows are still checked."""
    class Fitted:
        n_features_in_ = 3
    row = np.array([[1.0, 2.0, 3.0]])
    assert check_array(row) is row
    assert check_array(row, estimator=Fitted()) is row
    for bad, match in ((np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")):
        X = row.copy()
        X[0, 1] = bad
        with pytest.raises(ValueError, match=match):
            check_array(X, estimator=Fitted())
    X = row.copy()
    X[0, 1] = np.nan
    assert check_array(X, allow_nan=True) is X
    with pytest.raises(ValueError, match="expecting 3 features"):
        check_array(np.ones((1, 4)), estimator=Fitted())
    f32 = row.astype(np.float32)
    assert check_array(f32) is f32
    assert check_array(f32, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="at least 2"):
        check_array(row, ensure_min_samples=2)
    with pytest.raises(ValueError, match="0 feature"):
        check_array(np.ones((2, 0)))
    big = np.array([[1e308, 1e308]])                      # the sum overflows, values finite
    with np.errstate(over="ignore"):
        assert check_array(big) is big


# ------------------------------------------------ a column-vector y: scikit-learn's warning
COLUMN_MESSAGE = ("A column-vector y was passed when a 1d array was expected. Please change the "
                  "shape of y to (n_samples, ), for example using ravel().")


def test_a_column_vector_y_is_flattened_with_sklearns_warning():
    from fastml.exceptions import DataConversionWarning
    with pytest.warns(DataConversionWarning) as record:
        y = check_target(np.array([[1], [2], [1]]))
    assert y.tolist() == [1, 2, 1]
    assert [str(w.message) for w in record] == [COLUMN_MESSAGE]
    assert record[0].filename == __file__  # points at the caller outside fastml
    assert issubclass(DataConversionWarning, UserWarning)


def test_no_warning_where_a_column_is_not_a_training_target():
    import warnings
    from fastml._validation import check_regression_targets
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_target(np.array([[0], [1]]), name="classes").shape == (2,)
        assert check_target(np.array([[0], [1]]), warn=False).shape == (2,)
        assert check_target(np.array([0, 1])).shape == (2,)
        assert check_regression_targets(np.ones((3, 1))).shape == (3, 1)  # one target column


@pytest.mark.parametrize("name", ["GaussianNB", "NaiveBayes", "LogisticRegression", "Perceptron",
                                  "DecisionTreeClassifier", "DecisionTreeRegressor",
                                  "RandomForestRegressor"])
def test_estimators_taking_one_target_warn_once_on_a_column_y(name):
    """scikit-learn's check_supervised_y_2d: y[:, None] was flattened silently."""
    sk_exceptions = pytest.importorskip("sklearn.exceptions")
    import warnings
    cls = getattr(fastml, name)
    seeded = {"random_state": 0} if "random_state" in cls._get_param_names() else {}
    est = cls(**seeded)
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (np.arange(30) % 3).astype(float if est._estimator_type == "regressor" else int)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y[:, None])
    column = [w for w in record if issubclass(w.category, sk_exceptions.DataConversionWarning)]
    assert [str(w.message) for w in column] == [COLUMN_MESSAGE]
    assert issubclass(column[0].category, fastml.exceptions.DataConversionWarning)
    assert column[0].filename == __file__
    np.testing.assert_array_equal(est.predict(X), cls(**seeded).fit(X, y).predict(X))


@pytest.mark.parametrize("name", ["LinearRegression", "Ridge", "PolynomialRegression"])
def test_multi_target_regressors_read_a_column_y_as_one_target_without_warning(name):
    import warnings
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = X @ [1.0, 2.0, -1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = getattr(fastml, name)().fit(X, y[:, None])
    assert est.predict(X).shape == (30, 1)  # scikit-learn's shape for a (n, 1) y


def test_the_warning_class_needs_no_sklearn_import():
    """Importing sklearn.exceptions costs ~1.2 s (it imports most of scikit-learn): fastml
    uses scikit-learn's class only when scikit-learn is already loaded."""
    from _robust import run_python
    code = (
        "import sys, warnings, numpy as np\n"
        "from fastml._validation import check_target\n"
        "from fastml.exceptions import DataConversionWarning\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    check_target(np.ones((2, 1)))\n"
        "assert w[0].category is DataConversionWarning, w[0].category\n"
        "assert 'sklearn' not in sys.modules\n"
        "import sklearn.exceptions as sk\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    check_target(np.ones((2, 1)))\n"
        "assert issubclass(w[0].category, sk.DataConversionWarning)\n"
        "assert issubclass(w[0].category, DataConversionWarning)\n"
        "assert w[0].category.__name__ == 'DataConversionWarning'\n"
        "import pickle\n"
        "assert type(pickle.loads(pickle.dumps(w[0].message))) is w[0].category\n"
        "print('ok')\n")
    out = run_python(["-c", code], timeout=120)     # not in the checkout's root (_robust)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_partial_fit_classes_errors_name_classes():
    # "y must be 1-D" was said of partial_fit's classes (an outside audit)
    import fastml
    X = np.zeros((2, 2))
    for est in (fastml.LinearSVM(), fastml.Perceptron(), fastml.KernelPerceptron(),
                fastml.LogisticRegression(solver="sgd")):
        with pytest.raises(ValueError, match="classes must be 1-D"):
            est.partial_fit(X, [0, 1], classes=[[0, 1]])
        with pytest.raises(ValueError, match="at least 2 classes in classes"):
            fastml.clone(est).partial_fit(X, [0, 0], classes=[0])


def test_not_fitted_error_is_sklearns_once_sklearn_is_imported():
    """`except sklearn.exceptions.NotFittedError` catches fastml's (check_estimators_unfitted
    passes), yet `import fastml` never imports scikit-learn for it."""
    from _robust import run_python
    code = ("import sys, fastml\n"
            "assert 'sklearn' not in sys.modules\n"
            "try:\n    fastml.GaussianNB().predict([[1.0]])\n"
            "except fastml.NotFittedError as e:\n    first = e\n"
            "assert type(first) is fastml.NotFittedError\n"
            "import sklearn.exceptions\n"
            "try:\n    fastml.Perceptron().predict([[1.0]])\n"
            "except sklearn.exceptions.NotFittedError as e:\n"
            "    assert isinstance(e, fastml.NotFittedError) and 'not fitted' in str(e)\n"
            "print('ok')\n")
    out = run_python(["-c", code], timeout=120)     # not in the checkout's root (_robust)
    assert out.stdout.strip() == "ok", out.stderr
