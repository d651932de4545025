"""Sparse X (scipy CSR / CSC) for the histogram trees and forests (issue 31): binned from the
nonzeros (fastml/tree/_binning_fast.pyx), grown from the rows' entries with each zero bin the
node's total minus the other bins (fastml/tree/_hist_fast.pyx), walked by a binary search in
each row's entries; never a dense copy of X. A sparse fit is the dense fit of the same data:
the same bins and codes, and node for node the same tree (classification bit for bit;
regression and weighted fits to round-off, their zero bins being differences of sums)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastml.tree import (DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
                         RandomForestRegressor)
from fastml.tree._hist_fast import bin_features, bin_sparse
from test_properties import BUDGET

pytestmark = pytest.mark.kernel


def sparse_data(seed, n=800, d=40, density=0.15, nan=0.01, levels=None):
    """Mostly zeros, some NaN and explicit zeros, a label and a target from a few columns."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, d)) if levels is None else \
        rng.integers(-levels, levels + 1, (n, d)).astype(float)
    X = np.where(rng.random((n, d)) < density, values, 0.0)
    X[rng.random((n, d)) < nan] = np.nan
    x = np.nan_to_num(X)
    y = (x[:, 0] + x[:, 1] - x[:, 2] > 0).astype(int) + (x[:, 3] > 0.5)
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), y)
    target = x[:, 0] * 2 + x[:, 4] + 0.1 * rng.normal(size=n)
    return X, y, target


def stored(X):
    """X as CSR that also stores some of its zeros (explicit zeros are zeros)."""
    S = sp.csr_matrix(X).tocoo()
    rows, cols = np.nonzero(X[:20] == 0)
    return sp.csr_matrix((np.concatenate([S.data, np.zeros(len(rows))]),
                          (np.concatenate([S.row, rows]), np.concatenate([S.col, cols]))),
                         shape=X.shape)


def assert_same_tree(a, b, exact=True):
    from test_tree_weights import assert_same_tree as same
    if exact:
        assert a == b
    else:
        same(a, b, regression=True)


# ------------------------------------------------------------------ binning

@pytest.mark.parametrize("max_bins", [2, 7, 255])
@pytest.mark.parametrize("levels", [None, 3])
def test_sparse_bins_are_the_dense_bins(max_bins, levels):
    X, _, _ = sparse_data(0, n=3000, d=12, density=0.4, levels=levels)
    dense = bin_features(X, np.zeros(12, np.uint8), np.zeros(12, np.int32), max_bins=max_bins)
    for S in (stored(X), sp.csc_matrix(X)):
        b = bin_sparse(S, max_bins=max_bins)
        np.testing.assert_array_equal(b.n_bins, dense.n_bins)
        for f in range(12):
            for mine, theirs in zip(b.ends(f), dense.ends(f)):
                np.testing.assert_array_equal(mine, theirs)
        codes = np.repeat(b.zero_bin[None, :], 3000, axis=0)     # rows not listed: zero bin
        rows = np.repeat(np.arange(3000), np.diff(b.indptr))
        codes[rows, b.indices] = b.codes
        np.testing.assert_array_equal(codes.T, dense.bins)
        assert (b.codes != b.zero_bin[b.indices]).all()     # only entries off the zero bin


def test_quantile_bins_of_a_long_sparse_column_use_the_dense_sample():
    """More rows than the quantile sample (50,000) and more distinct values than bins: the
    sampled rows, their zeros included, place the same edges."""
    rng = np.random.default_rng(1)
    n = 60_000
    X = np.where(rng.random((n, 2)) < 0.3, rng.normal(size=(n, 2)), 0.0)
    dense = bin_features(X, np.zeros(2, np.uint8), np.zeros(2, np.int32))
    b = bin_sparse(sp.csr_matrix(X))
    assert dense.n_bins.tolist() == b.n_bins.tolist() == [255, 255]
    for f in range(2):
        np.testing.assert_array_equal(b.ends(f)[0], dense.ends(f)[0])


@settings(BUDGET, max_examples=40)
@given(n=st.integers(1, 300), d=st.integers(1, 5), max_bins=st.integers(2, 40),
       density=st.sampled_from([0.0, 0.05, 0.5, 1.0]), seed=st.integers(0, 2**32 - 1),
       distinct=st.sampled_from([2, 9, 10**6]))
def test_property_sparse_binning_is_dense_binning(n, d, max_bins, density, seed, distinct):
    rng = np.random.default_rng(seed)
    X = rng.integers(-distinct, distinct, (n, d)) * 0.5 * (rng.random((n, d)) < density)
    X[rng.random((n, d)) < 0.05] = np.nan
    dense = bin_features(X, np.zeros(d, np.uint8), np.zeros(d, np.int32), max_bins=max_bins)
    b = bin_sparse(sp.csr_matrix(X), max_bins=max_bins)
    np.testing.assert_array_equal(b.n_bins, dense.n_bins)
    codes = np.repeat(b.zero_bin[None, :], n, axis=0)
    codes[np.repeat(np.arange(n), np.diff(b.indptr)), b.indices] = b.codes
    np.testing.assert_array_equal(codes.T, dense.bins)


# ------------------------------------------------------------------ trees and forests

CLASSIFIERS = [dict(), dict(criterion="gini", min_samples_leaf=3), dict(max_leaf_nodes=15),
               dict(max_features=5, random_state=2), dict(max_bins=8)]


@pytest.mark.parametrize("params", CLASSIFIERS, ids=str)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_tree_is_the_dense_tree(params, fmt):
    X, y, _ = sparse_data(2)
    dense = DecisionTreeClassifier(splitter="hist", **params).fit(X, y)
    sparse = DecisionTreeClassifier(splitter="hist", **params).fit(
        sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X), y)
    assert dense.tree_.node_count > 20
    assert_same_tree(sparse.tree_, dense.tree_)
    S = sp.csr_matrix(X)
    np.testing.assert_array_equal(sparse.predict_proba(S), dense.predict_proba(X))
    np.testing.assert_array_equal(sparse.predict_proba(X), dense.predict_proba(X))
    np.testing.assert_array_equal(sparse.apply(S), dense.apply(X))
    assert (sparse.decision_path(S) != dense.decision_path(X)).nnz == 0


@pytest.mark.parametrize("params", [dict(), dict(min_samples_leaf=4, max_features=0.3,
                                                 random_state=1)], ids=str)
def test_sparse_regression_tree_is_the_dense_tree(params):
    X, _, target = sparse_data(3)
    dense = DecisionTreeRegressor(splitter="hist", **params).fit(X, target)
    sparse = DecisionTreeRegressor(splitter="hist", **params).fit(stored(X), target)
    assert_same_tree(sparse.tree_, dense.tree_, exact=False)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X), rtol=1e-12)


def test_sparse_weighted_trees_are_the_dense_trees():
    X, y, target = sparse_data(4)
    w = np.random.default_rng(5).random(len(y)) * 3 * (np.arange(len(y)) % 7 != 0)
    for cls, label in ((DecisionTreeClassifier, y), (DecisionTreeRegressor, target)):
        kw = dict(splitter="hist", min_weight_fraction_leaf=0.01)
        dense = cls(**kw).fit(X, label, sample_weight=w)
        sparse = cls(**kw).fit(sp.csr_matrix(X), label, sample_weight=w)
        assert_same_tree(sparse.tree_, dense.tree_, exact=False)
    counts = np.random.default_rng(6).integers(0, 3, len(y))     # integer weights: exact
    dense = DecisionTreeClassifier(splitter="hist").fit(X, y, sample_weight=counts)
    sparse = DecisionTreeClassifier(splitter="hist").fit(sp.csr_matrix(X), y,
                                                         sample_weight=counts)
    assert_same_tree(sparse.tree_, dense.tree_)


@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
def test_sparse_forest_is_the_dense_forest(cls):
    """The default feature draw (sqrt / all features), bootstrap and out-of-bag score: the
    same trees, predictions and scores."""
    X, y, target = sparse_data(7)
    label = y if cls is RandomForestClassifier else target
    kw = dict(n_estimators=6, splitter="hist", oob_score=True, random_state=3, n_jobs=2)
    dense = cls(**kw).fit(X, label)
    sparse = cls(**kw).fit(sp.csr_matrix(X), label)
    for a, b in zip(sparse.estimators_, dense.estimators_):
        assert_same_tree(a.tree_, b.tree_, exact=cls is RandomForestClassifier)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X), rtol=1e-12)
    assert sparse.oob_score_ == pytest.approx(dense.oob_score_, rel=1e-12)
    np.testing.assert_array_equal(sparse.apply(sp.csr_matrix(X)), dense.apply(X))


def test_many_sparse_columns_are_never_densified():
    """100,000 columns, few listed per row: a dense n x d copy would be 8 GB. The draw ranks
    only the columns a node's rows list."""
    rng = np.random.default_rng(8)
    n, d = 10_000, 100_000
    rows = np.repeat(np.arange(n), 5)
    cols = rng.integers(20, d, rows.size)
    cols[::5] = rng.integers(0, 20, n)          # each row lists one of 20 frequent columns
    S = sp.csr_matrix((rng.choice([1.0, 2.0], rows.size), (rows, cols)), shape=(n, d))
    y = (cols[::5] < 6).astype(int)             # ... which decides its class
    forest = RandomForestClassifier(n_estimators=3, splitter="hist", random_state=0,
                                    max_depth=12).fit(S, y)
    assert forest.predict_proba(S[:100]).shape == (100, 2)
    tree = DecisionTreeClassifier(splitter="hist", max_depth=8).fit(S, y)
    assert tree.score(S, y) == 1.0 and tree.tree_.node_count == 13


def test_rows_and_columns_without_entries():
    X = np.zeros((30, 6))
    X[::3, 1] = 1.0
    X[5, 4] = np.nan
    y = (np.arange(30) % 3 == 0).astype(int)
    dense = DecisionTreeClassifier(splitter="hist").fit(X, y)
    sparse = DecisionTreeClassifier(splitter="hist").fit(sp.csr_matrix(X), y)
    assert_same_tree(sparse.tree_, dense.tree_)
    assert sparse.tree_.feature[0] == 1
    empty = sp.csr_matrix((30, 6))
    assert DecisionTreeClassifier(splitter="hist").fit(empty, y).tree_.node_count == 1


def test_sparse_input_errors_name_the_problem():
    X, y, _ = sparse_data(9, n=60)
    S = sp.csr_matrix(X)
    for est in (DecisionTreeClassifier(), RandomForestClassifier(n_estimators=2)):
        with pytest.raises(ValueError, match="splitter='hist'"):
            est.fit(S, y)
    with pytest.raises(ValueError, match="categorical_features"):
        DecisionTreeClassifier(splitter="hist", categorical_features=[0]).fit(S, y)
    bad = S.copy()
    bad.data[0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        DecisionTreeClassifier(splitter="hist").fit(bad, y)
    tree = DecisionTreeClassifier(splitter="hist").fit(S, y)
    with pytest.raises(ValueError, match="features"):
        tree.predict(sp.csr_matrix(X[:, :5]))
    frame_model = DecisionTreeClassifier(splitter="hist").fit(
        np.column_stack([X[:, :3], np.where(y > 0, "a", "b")]).astype(object), y)
    with pytest.raises(ValueError, match="categorical"):
        frame_model.predict(sp.csr_matrix(X[:, :4]))


def test_sparse_input_is_not_modified():
    X, y, _ = sparse_data(10, n=100)
    S = stored(X)
    S.has_canonical_format = False    # as a user's matrix may be flagged
    before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
    DecisionTreeClassifier(splitter="hist").fit(S, y).predict(S)
    for a, b in zip(before, (S.data, S.indices, S.indptr)):
        np.testing.assert_array_equal(a, b)


def test_tags_say_hist_takes_sparse():
    from sklearn.utils import get_tags
    for cls in (DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
                RandomForestRegressor):
        assert get_tags(cls(splitter="hist")).input_tags.sparse
        assert not get_tags(cls()).input_tags.sparse


@BUDGET
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 120), d=st.integers(1, 8),
       density=st.sampled_from([0.02, 0.2, 0.7]), max_features=st.sampled_from([None, 2]),
       weighted=st.booleans())
def test_property_sparse_fit_is_dense_fit(seed, n, d, density, max_features, weighted):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (n, d)) * 1.0 * (rng.random((n, d)) < density)
    X[rng.random((n, d)) < 0.03] = np.nan
    y = rng.integers(0, 2, n)
    y[0], y[-1] = 0, 1
    w = rng.integers(0, 3, n) if weighted else None
    if w is not None:
        w[0] = w[-1] = 1
    kw = dict(splitter="hist", max_features=max_features, random_state=seed % 7)
    dense = DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w)
    sparse = DecisionTreeClassifier(**kw).fit(sp.csr_matrix(X), y, sample_weight=w)
    assert sparse.tree_ == dense.tree_
    np.testing.assert_array_equal(sparse.predict_proba(sp.csr_matrix(X)),
                                  dense.predict_proba(X))
