"""The one tabular layer (fastml/_tabular.py): which columns are categorical, missing cells,
vocabularies (sorted, pandas declared categories, grown by partial_fit), codes, and the trees'
float64 view of the same codes."""
import numpy as np
import pytest

from fastml._tabular import (MISSING, UNSEEN, CategoryEncoder, TabularEncoder, categorical_mask,
                             check_table, column_codes, column_levels, is_missing_scalar,
                             missing_mask, numeric_block)

pd = pytest.importorskip("pandas")


def table(rows):
    X = np.empty((len(rows), len(rows[0])), dtype=object)
    X[:] = rows
    return X


# ------------------------------------------------------------------------- auto rules
def test_auto_rules_for_frames():
    X = pd.DataFrame({"s": ["a", "b"], "c": pd.Categorical(["x", "y"]), "b": [True, False],
                      "st": pd.array(["u", None], dtype="string"), "f": [1.0, 2.0],
                      "i": [1, 2], "ni": pd.array([1, None], dtype="Int64"),
                      "on": pd.Series([1, 2.5], dtype=object)})
    mask = categorical_mask(X, "auto")
    assert mask.tolist() == [True, True, True, True, False, False, False, False]


def test_auto_rules_for_arrays():
    X = table([["a", 1.0, None, True], [None, 2, 3.5, False]])
    assert categorical_mask(X, "auto").tolist() == [True, False, False, True]
    assert not categorical_mask(np.zeros((3, 2)), "auto").any()
    assert not categorical_mask(np.zeros((3, 2), dtype=np.int64), "auto").any()
    assert categorical_mask(np.array([["a", "b"]]), "auto").all()
    assert categorical_mask(np.array([[True, False]]), "auto").all()


def test_explicit_specs():
    X = pd.DataFrame({"a": [1, 2], "b": [3, 4], "c": [5, 6]})
    assert categorical_mask(X, ["c", 0]).tolist() == [True, False, True]
    assert categorical_mask(X, [-1]).tolist() == [False, False, True]
    assert categorical_mask(X, [False, True, False]).tolist() == [False, True, False]
    assert categorical_mask(X, "all").all() and not categorical_mask(X, None).any()
    with pytest.raises(ValueError, match="'zz'"):
        categorical_mask(X, ["zz"])
    with pytest.raises(ValueError, match="column index"):
        categorical_mask(X, [3])
    with pytest.raises(ValueError, match="3 booleans"):
        categorical_mask(X, [True, False])


def test_table_shape_errors():
    with pytest.raises(ValueError, match="1-D"):
        check_table(np.array(["a", "b"], dtype=object))
    with pytest.raises(ValueError, match="0 samples"):
        check_table(np.empty((0, 2), dtype=object))
    with pytest.raises(ValueError, match="Complex"):
        check_table(np.ones((2, 2), dtype=complex))


# ---------------------------------------------------------------------- missing values
def test_missing_detection():
    for v in (None, np.nan, np.float32("nan"), pd.NA, pd.NaT):
        assert is_missing_scalar(v), v
    for v in ("", "nan", 0, 0.0, False, "NA"):
        assert not is_missing_scalar(v), v
    assert missing_mask(np.array([1.0, np.nan])).tolist() == [False, True]
    assert missing_mask(table([["a", None, np.nan, pd.NA]])[0]).tolist() == \
        [False, True, True, True]
    assert not missing_mask(np.array([1, 2])).any()


def test_missing_cells_in_every_kind_of_column():
    X = pd.DataFrame({"s": ["a", None, "b"], "c": pd.Categorical(["x", None, "y"]),
                      "st": pd.array(["u", pd.NA, "v"], dtype="string"),
                      "nb": pd.array([True, None, False], dtype="boolean")})
    enc = CategoryEncoder(range(4)).fit(X)
    assert (enc.transform(X)[1] == MISSING).all()
    assert all(len(levels) == 2 for levels in enc.categories_)
    real = numeric_block(table([[1.0, None], [pd.NA, 2]]), [0, 1])
    np.testing.assert_array_equal(real, [[1.0, np.nan], [np.nan, 2.0]])


# ------------------------------------------------------------------ vocabularies, codes
def test_sorted_vocabulary_and_unseen():
    X = table([["b", 3], ["a", 1], [None, 3]])
    enc = CategoryEncoder([0, 1]).fit(X)
    assert enc.categories_[0].tolist() == ["a", "b"] and enc.categories_[1].tolist() == [1, 3]
    codes = enc.transform(table([["b", 1], ["zz", 2], [np.nan, 3]]))
    assert codes.tolist() == [[1, 0], [UNSEEN, UNSEEN], [MISSING, 1]]


def test_mixed_types_sort_by_type_then_value():
    levels = column_levels(np.array(["b", 2, "a", 1], dtype=object))
    assert levels.tolist() == [1, 2, "a", "b"]


def test_partial_fit_grows_the_vocabulary_and_says_where_old_levels_went():
    enc = CategoryEncoder([0])
    assert enc.partial_fit(table([["b"], ["d"]])) == [None]
    (moved,) = enc.partial_fit(table([["a"], ["c"], ["d"]]))
    assert enc.categories_[0].tolist() == ["a", "b", "c", "d"]
    assert moved.tolist() == [1, 3]  # "b" moved to 1, "d" to 3
    assert enc.transform(table([["b"], ["e"]])).ravel().tolist() == [1, UNSEEN]
    enc.fit(table([["x"]]))  # fit starts over
    assert enc.categories_[0].tolist() == ["x"]


def test_integer_matrix_path_matches_the_generic_path():
    rng = np.random.default_rng(0)
    X = rng.integers(-3, 40, size=(500, 3))
    enc = CategoryEncoder(range(3)).fit(X[:300])
    generic = CategoryEncoder(range(3)).fit(X[:300].astype(object))
    for a, b in zip(enc.categories_, generic.categories_):
        assert a.tolist() == b.tolist()
    np.testing.assert_array_equal(enc.transform(X), generic.transform(X.astype(object)))
    assert enc.transform(np.array([[1000, -3, 5]])).tolist() == \
        [[UNSEEN, 0, enc.categories_[2].tolist().index(5)]]


def test_pandas_declared_categories_are_the_vocabulary():
    col = pd.Series(pd.Categorical(["lo", None, "hi"], categories=["mid", "hi", "lo"]))
    assert column_levels(col).tolist() == ["hi", "lo", "mid"]  # sorted; "mid" never seen
    assert column_codes(col, column_levels(col)).tolist() == [1, MISSING, 0]
    # the category fast path gives the same codes as reading the values one by one
    levels = np.array(["hi", "zz"], dtype=object)
    assert column_codes(col, levels).tolist() == \
        column_codes(col.astype(object), levels).tolist() == [UNSEEN, MISSING, 0]


# ------------------------------------------------------------------- the trees' view
def test_tabular_encoder_float_view():
    X = pd.DataFrame({"color": pd.Categorical(["red", "blue", None], categories=["red", "blue",
                                                                                 "green"]),
                      "size": [1.0, None, 3.0], "shape": ["o", "x", "o"]})
    enc = TabularEncoder()
    out = enc.fit_transform(X)
    assert enc.categorical_mask_.tolist() == [True, False, True]
    assert enc.categories_[0].tolist() == ["blue", "green", "red"] and enc.categories_[1] is None
    np.testing.assert_array_equal(out, [[2, 1, 0], [0, np.nan, 1], [np.nan, 3, 0]])
    assert enc.feature_names_ == ["color", "size", "shape"]
    new = pd.DataFrame({"color": ["green", "pink"], "size": [0.5, 1.0], "shape": ["z", None]})
    np.testing.assert_array_equal(enc.transform(new), [[1, 0.5, -1.0], [-1.0, 1, np.nan]])
    with pytest.raises(ValueError, match="expecting 3 features"):
        enc.transform(new.iloc[:, :2], owner="Tree")


def test_tabular_encoder_plain_numbers_and_explicit_columns():
    X = np.array([[1.0, 5.0], [2.0, np.nan]])
    enc = TabularEncoder()
    np.testing.assert_array_equal(enc.fit_transform(X), X)
    assert not enc.categorical_mask_.any() and enc.feature_names_ == ["x0", "x1"]
    enc = TabularEncoder(categorical_features=[1])
    np.testing.assert_array_equal(enc.fit_transform(np.array([[1.0, 7.0], [2.0, 5.0]])),
                                  [[1.0, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="infinity"):
        TabularEncoder().fit_transform(table([["a", np.inf]]))
    with pytest.raises(TypeError, match="argument must be a string.* number"):
        TabularEncoder().fit_transform(table([["a", {}]]))


def test_cli_reader_uses_the_same_missing_rule_and_vocabulary():
    from fastml._tabular_io import _vocabulary
    from fastml._tabular_io import missing_mask as io_missing
    col = table([["b", None, "a", "b"]])[0]
    assert io_missing(col).tolist() == [False, True, False, False]
    assert _vocabulary(col) == ["a", "b"]


# ------------------------------------------------------- integer ranges beyond int64 arithmetic
WIDE = [np.array([[-(2**62), 0], [2**62 + 2**61, 6917529027641081859]]),  # issue 12's crash
        np.array([[-2**63, 1], [2**63 - 1, 2], [0, 3]])]                 # the whole int64 range


@pytest.mark.parametrize("X", WIDE)
def test_integer_columns_spanning_int64_encode_every_path(X):
    """A range wider than int64 arithmetic (hi - lo overflows) crashed or corrupted the heap in
    every estimator that encodes integer categories; it takes the sort path now."""
    import fastml
    from fastml.info import information_gain_table
    y = np.arange(len(X)) % 2
    enc = CategoryEncoder(range(X.shape[1])).fit(X)
    for j in range(X.shape[1]):
        np.testing.assert_array_equal(enc.categories_[j], np.unique(X[:, j]))
    np.testing.assert_array_equal(enc.transform(X), np.argsort(np.argsort(X, axis=0), axis=0))
    for model in (fastml.CategoricalNB(), fastml.NaiveBayes(categorical_features="all"),
                  fastml.DecisionTreeClassifier(categorical_features="all"),
                  fastml.RandomForestClassifier(n_estimators=5, categorical_features="all",
                                                bootstrap=False, random_state=0)):
        assert model.fit(X, y).predict(X).tolist() == y.tolist(), type(model).__name__
    text = str(information_gain_table(X, y, categorical_features="all"))
    assert "x0" in text and "x1" in text


def wide_ids(rng, n, dtype):
    info = np.iinfo(dtype)
    pool = rng.integers(info.min, info.max, size=(max(2, n // 4), 3), dtype=dtype,
                        endpoint=True)
    rows = rng.integers(0, len(pool), size=(n, 3))      # each id repeats about 4 times
    return np.ascontiguousarray(np.take_along_axis(pool, rows, axis=0))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_hashed_ids_match_unique_codes(dtype):
    """Realistic hashed ids (wide, sparse ranges) are encoded by sorting: the same codes as
    np.unique's inverse, unseen ids included, for int64 and uint64 alike."""
    rng = np.random.default_rng(0)
    for trial in range(5):
        X = wide_ids(rng, 400, dtype)
        X[:, 2] = X[:, 2] % 7                             # a narrow column beside wide ones
        enc = CategoryEncoder(range(3)).fit(X)
        Z = np.concatenate([X[:50], wide_ids(rng, 50, dtype)])
        codes = enc.transform(Z)
        for j in range(3):
            levels = np.unique(X[:, j])
            np.testing.assert_array_equal(enc.categories_[j], levels)
            np.testing.assert_array_equal(codes[:50, j], np.unique(X[:, j], return_inverse=True)
                                          [1][:50])
            seen = np.isin(Z[:, j], levels)
            assert (codes[~seen, j] == UNSEEN).all()


def test_int64_and_uint64_chunks_merge_exactly():
    """Vocabularies of int64 and uint64 chunks merge without float64 rounding (numpy's
    common type for the pair): 2**63 + 1 and 2**63 stay two levels."""
    enc = CategoryEncoder([0])
    enc.partial_fit(np.array([[2**63], [2**63 + 1]], dtype=np.uint64))
    enc.partial_fit(np.array([[-5], [2**62]], dtype=np.int64))
    assert enc.categories_[0].tolist() == [-5, 2**62, 2**63, 2**63 + 1]
    codes = enc.transform(np.array([[2**63 + 1], [5], [2**63 + 2]], dtype=np.uint64))
    assert codes[:, 0].tolist() == [3, UNSEEN, UNSEEN]
    assert enc.transform(np.array([[2**62], [-6]]))[:, 0].tolist() == [1, UNSEEN]


def test_dense_encoding_kernel_is_exact_at_the_int64_edges():
    """encode_int measures x - lo in uint64 (the signed difference of far-apart values is
    undefined in C, which the sanitizer build reports): the edges of int64 map exactly."""
    from fastml._core._encode import encode_int
    lo = np.array([2**63 - 4], dtype=np.int64)
    offsets = np.array([0, 4], dtype=np.int64)
    lut = np.arange(4, dtype=np.int32)
    X = np.array([[-2**63 + 1], [-2**63], [2**63 - 1], [2**63 - 4], [0]], dtype=np.int64)
    out = np.empty((5, 1), dtype=np.int32)
    encode_int(X, lo, offsets, lut, out, 1)
    assert out[:, 0].tolist() == [UNSEEN, UNSEEN, 3, 0, UNSEEN]


def test_integer_columns_of_any_range_encode_like_np_unique():
    """Property (issue 12): any int64 / uint64 matrix, narrow or spanning the whole type,
    gets np.unique's vocabularies and codes, and values outside them are UNSEEN."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra import numpy as hnp

    def matrices(dtype):
        info = np.iinfo(dtype)
        edges = st.sampled_from([info.min, info.min + 1, -1 if info.min else 0, 0, 1,
                                 info.max - 1, info.max])
        values = st.one_of(edges, st.integers(info.min, info.max), st.integers(-3, 3).map(
            lambda v: max(info.min, v)))
        return hnp.arrays(dtype, hnp.array_shapes(min_dims=2, max_dims=2, max_side=12),
                          elements=values)

    @settings(max_examples=60, deadline=None)
    @given(st.sampled_from([np.int64, np.uint64, np.int32, np.int8]).flatmap(
        lambda dt: st.tuples(matrices(dt), matrices(dt))))
    def check(pair):
        X, Z = pair
        if Z.shape[1] != X.shape[1]:
            Z = np.resize(Z, (Z.shape[0], X.shape[1]))
        enc = CategoryEncoder(range(X.shape[1])).fit(X)
        codes = enc.transform(Z)
        for j in range(X.shape[1]):
            levels = np.unique(X[:, j])
            np.testing.assert_array_equal(enc.categories_[j], levels)
            pos = np.searchsorted(levels, Z[:, j])
            found = (pos < len(levels)) & (levels[np.minimum(pos, len(levels) - 1)] == Z[:, j])
            np.testing.assert_array_equal(codes[:, j], np.where(found, pos, UNSEEN))

    check()


@pytest.mark.parametrize("spec", [True, False, 3.5, 7])
def test_categorical_features_scalar_is_a_clear_error(spec):
    # True raised "TypeError: 'bool' object is not iterable" (an outside audit)
    from fastml import DecisionTreeClassifier
    with pytest.raises(ValueError, match="categorical_features must be"):
        DecisionTreeClassifier(categorical_features=spec).fit([[0.0], [1.0]], [0, 1])


def test_split_point_of_a_gap_that_overflows():
    # -1e308 .. 1e308: the gap is inf, and the cut fell back to hi (1e308) instead of 0
    from fastml import DecisionTreeClassifier
    from fastml.info import split_point
    assert split_point(-1e308, 1e308) == 0.0 and split_point(1.0, 2.0) == 1.5
    for splitter in ("best", "hist"):
        tree = DecisionTreeClassifier(splitter=splitter).fit([[-1e308], [1e308]], [0, 1])
        assert tree.tree_.threshold[0] == 0.0
