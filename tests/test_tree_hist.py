"""splitter="hist" (fastml/tree/_hist_fast.pyx): on data of at most max_bins distinct values
per column the histogram search grows exactly the exact splitter's tree (001's thresholds,
counts, gains, ties, missing sides, multiway splits, limits, feature draws, bootstrap counts);
on continuous data its bins are a numpy replica's and its accuracy is the exact tree's."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml import info
from fastml.datasets import load_lecture_mpg, load_x1x2y_table, load_xor
from fastml.tree import (DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
                         RandomForestRegressor)
from fastml.tree._hist_fast import MAX_BINS, bin_features
from fastml.tree._tree_fast import NODE_FIELDS
from test_properties import BUDGET

pytestmark = pytest.mark.kernel


def assert_same_tree(a, b, regression=False):
    """Node for node the same tree: structure, thresholds, counts, values and impurities
    bit for bit (both builders sum a regression node's rows in row order); regression gains
    to round-off (each builder's sweep sums the candidates' costs in its own order)."""
    assert a.node_count == b.node_count
    for name in NODE_FIELDS:
        x, y = a.nodes[name], b.nodes[name]
        if regression and name == "gain":
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.value, b.value)
    np.testing.assert_array_equal(a.children, b.children)
    np.testing.assert_array_equal(a.seen, b.seen)


def discrete_data(seed, n=600, d=4, levels=12, nan=0.1, n_classes=3):
    """Columns of at most `levels` distinct values (some missing), a label that depends on
    two of them plus noise, and a regression target."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(float) * 0.5 - 1.0
    X[rng.random((n, d)) < nan] = np.nan
    signal = (np.nan_to_num(X[:, 0]) > 0.5).astype(int) + (np.nan_to_num(X[:, 1]) < 0)
    y = np.where(rng.random(n) < 0.3, rng.integers(0, n_classes, n), signal % n_classes)
    target = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]) + rng.normal(size=n)
    return X, y, target


# ------------------------------------------------------------------ identical to the exact tree

@pytest.mark.parametrize("params", [
    {}, dict(criterion="gini"), dict(min_samples_leaf=7), dict(max_depth=3),
    dict(max_leaf_nodes=9), dict(max_features=2, random_state=3), dict(min_samples_split=40),
])
@pytest.mark.parametrize("n", [50, 3000])  # small nodes only; and the histogram subtraction
def test_classifier_is_the_exact_tree(params, n):
    X, y, _ = discrete_data(n, n=n)
    exact = DecisionTreeClassifier(**params).fit(X, y)
    hist = DecisionTreeClassifier(splitter="hist", **params).fit(X, y)
    assert_same_tree(exact.tree_, hist.tree_)
    np.testing.assert_array_equal(exact.predict_proba(X), hist.predict_proba(X))


@pytest.mark.parametrize("params", [{}, dict(min_samples_leaf=5), dict(max_leaf_nodes=12),
                                    dict(max_features=0.5, random_state=1)])
@pytest.mark.parametrize("n", [60, 3000])
def test_regressor_is_the_exact_tree(params, n):
    X, _, target = discrete_data(n + 1, n=n)
    exact = DecisionTreeRegressor(**params).fit(X, target)
    hist = DecisionTreeRegressor(splitter="hist", **params).fit(X, target)
    assert_same_tree(exact.tree_, hist.tree_, regression=True)
    np.testing.assert_array_equal(exact.predict(X), hist.predict(X))


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e3, 1e6, 1e12])
def test_regression_ties_do_not_depend_on_the_units_of_y(scale):
    """Two cuts of exactly equal SSE: the first (smallest threshold) wins at any scale of y.
    The tie tolerance used to be absolute (1e-10 per row, in y's units squared): from |y| ~
    1e3 the rounding of the two equal sums exceeded it, and the exact and hist builders,
    summing in different orders, picked different cuts (an outside audit: 147-182 of 3000
    random trees differed at y ~ 1e4-1e6)."""
    X = np.array([[2.0], [0.0], [1.0], [1.0], [0.0], [2.0], [1.0]])
    y = np.array([0.0, 0.0, 0.1, 0.0, 2.0, 2.0, 2.0]) * scale
    sse = lambda v: ((v - v.mean()) ** 2).sum()
    costs = [sse(y[X[:, 0] < t]) + sse(y[X[:, 0] >= t]) for t in (0.5, 1.5)]
    assert costs[0] == pytest.approx(costs[1], rel=1e-12)
    for splitter in ("best", "hist"):
        tree = DecisionTreeRegressor(max_depth=1, splitter=splitter).fit(X, y).tree_
        assert tree.threshold[0] == 0.5


def test_regression_trees_are_identical_at_any_scale_of_y():
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(20, 200))
        X = rng.integers(0, 6, (n, 2)).astype(float)
        y = (rng.integers(0, 5, n) + rng.choice([0, 0.1, 0.25], n)) * 10.0 ** (trial % 7)
        exact = DecisionTreeRegressor().fit(X, y)
        hist = DecisionTreeRegressor(splitter="hist").fit(X, y)
        assert_same_tree(exact.tree_, hist.tree_, regression=True)
        np.testing.assert_array_equal(exact.predict(X + 0.5), hist.predict(X + 0.5))


def test_categorical_multiway_and_missing_levels_are_the_exact_tree():
    rng = np.random.default_rng(5)
    n = 2500
    X = np.column_stack([rng.integers(0, 7, n), rng.integers(0, 40, n) / 4.0,
                         rng.integers(0, 3, n)]).astype(float)
    X[rng.random(n) < 0.05, 0] = np.nan
    y = ((X[:, 0] % 3 == 0) ^ (X[:, 1] > 5)).astype(int)
    y[rng.random(n) < 0.1] ^= 1
    for Est, target, reg in ((DecisionTreeClassifier, y, False),
                             (DecisionTreeRegressor, y + X[:, 1], True)):
        kw = dict(categorical_features=[0, 2], min_samples_leaf=3)
        exact = Est(**kw).fit(X, target)
        hist = Est(splitter="hist", **kw).fit(X, target)
        assert_same_tree(exact.tree_, hist.tree_, regression=reg)
        assert (hist.tree_.kind == 2).any()  # multiway splits were made


@pytest.mark.parametrize("Forest", [RandomForestClassifier, RandomForestRegressor])
def test_forest_trees_are_the_exact_trees(Forest):
    # bootstrap counts become row weights: the same counts as the exact builder's repeats
    X, y, target = discrete_data(7, n=2500)
    reg = Forest is RandomForestRegressor
    kw = dict(n_estimators=4, random_state=0, min_samples_leaf=2, oob_score=True)
    exact = Forest(**kw).fit(X, target if reg else y)
    hist = Forest(splitter="hist", **kw).fit(X, target if reg else y)
    for a, b in zip(exact.estimators_, hist.estimators_):
        assert_same_tree(a.tree_, b.tree_, regression=reg)
        assert b.splitter == "hist"
    assert hist.oob_score_ == pytest.approx(exact.oob_score_, rel=1e-12)


def test_lecture_examples_give_the_lecture_trees():
    X, y = load_xor()  # two levels of zero-gain splits (000)
    assert DecisionTreeClassifier(splitter="hist").fit(X, y).get_depth() == 2
    X, y = load_x1x2y_table(return_X_y=True)  # 001: IG(X1) = 0.32, H(Y) = 0.65
    tree = DecisionTreeClassifier(splitter="hist", max_depth=1).fit(X, y).tree_
    assert tree.feature[0] == 0 and round(tree.gain[0], 2) == 0.32
    assert tree.gain[0] == pytest.approx(info.information_gain(y, X[:, 0]))


def test_chi_square_pruning_is_the_exact_trees():
    # 000's MaxPchance pruning runs on the grown tree's counts, the same counts
    X, y = load_lecture_mpg(return_X_y=True)
    for max_pchance in (None, 0.1, 0.01):
        exact = DecisionTreeClassifier(max_pchance=max_pchance).fit(X[:200], y[:200])
        hist = DecisionTreeClassifier(splitter="hist", max_pchance=max_pchance).fit(
            X[:200], y[:200])
        assert_same_tree(exact.tree_, hist.tree_)
    assert hist.get_n_leaves() < DecisionTreeClassifier(splitter="hist").fit(
        X[:200], y[:200]).get_n_leaves()


def test_threads_grow_the_same_tree():
    X, y, target = discrete_data(11, n=20000, d=6)
    one = DecisionTreeClassifier(splitter="hist").fit(X, y)
    two = DecisionTreeClassifier(splitter="hist", n_jobs=2).fit(X, y)
    assert_same_tree(one.tree_, two.tree_)
    one = DecisionTreeRegressor(splitter="hist").fit(X, target)
    two = DecisionTreeRegressor(splitter="hist", n_jobs=2).fit(X, target)
    assert_same_tree(one.tree_, two.tree_, regression=True)
    # continuous columns: the binning's threads (row blocks) and the forest's share the bins
    X = np.random.default_rng(2).normal(size=(8000, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    one = RandomForestClassifier(n_estimators=4, splitter="hist", random_state=1).fit(X, y)
    two = RandomForestClassifier(n_estimators=4, splitter="hist", random_state=1,
                                 n_jobs=2).fit(X, y)
    for a, b in zip(one.estimators_, two.estimators_):
        assert_same_tree(a.tree_, b.tree_)


@settings(BUDGET, max_examples=25)
@given(data=st.data())
def test_property_hist_equals_exact_on_few_values(data):
    n = data.draw(st.integers(2, 400))
    d = data.draw(st.integers(1, 4))
    levels = data.draw(st.integers(1, 30))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, levels, (n, d)).astype(float) * data.draw(st.sampled_from([1.0, 0.1]))
    if data.draw(st.booleans()):
        X[rng.random((n, d)) < 0.2] = np.nan
    y = rng.integers(0, data.draw(st.integers(2, 4)), n)
    if len(np.unique(y)) < 2:
        y[0], y[-1] = 0, 1
    params = dict(min_samples_leaf=data.draw(st.integers(1, 5)),
                  max_depth=data.draw(st.sampled_from([None, 1, 4])),
                  max_leaf_nodes=data.draw(st.sampled_from([None, 2, 8])),
                  max_features=data.draw(st.sampled_from([None, 1])), random_state=0,
                  categorical_features=data.draw(st.sampled_from([None, [0]])))
    regression = data.draw(st.booleans())
    Est = DecisionTreeRegressor if regression else DecisionTreeClassifier
    scale = 10.0 ** data.draw(st.integers(-6, 9))
    target = np.nan_to_num(y + rng.normal(size=n) * X[:, 0]) * scale if regression else y
    exact = Est(**params).fit(X, target)
    hist = Est(splitter="hist", **params).fit(X, target)
    assert_same_tree(exact.tree_, hist.tree_, regression=regression)


# ------------------------------------------------------------------ continuous columns

def test_bins_are_a_numpy_replica():
    rng = np.random.default_rng(0)
    n = 5000
    X = np.column_stack([rng.normal(size=n), rng.exponential(size=n),
                         np.where(rng.random(n) < 0.5, 0.0, rng.normal(size=n)),  # heavy 0
                         rng.integers(0, 9, n) * 1.5])
    X[rng.random(n) < 0.05, 1] = np.nan
    b = bin_features(X, np.zeros(4, np.uint8), np.zeros(4, np.int32), max_bins=32)
    assert b.bins.shape == (4, n) and b.bins.dtype == np.uint8
    assert (b.bins[1] == 255).sum() == np.isnan(X[:, 1]).sum()
    assert b.n_bins.tolist()[3] == 9  # one bin per distinct value
    for f in range(4):
        x, codes = X[:, f], b.bins[f].astype(int)
        lo, hi = b.ends(f)
        ok = ~np.isnan(x)
        assert codes[ok].max() < b.n_bins[f] <= 32
        for k in range(b.n_bins[f]):  # the bins are ordered intervals with the stored ends
            inside = x[ok][codes[ok] == k]
            assert len(inside) > 0
            if f == 3:  # a bin per value: its ends are that value
                assert inside.min() == inside.max() == lo[k] == hi[k]
            else:  # quantile bins: [lo, hi) between the edges
                assert lo[k] <= inside.min() and inside.max() < hi[k]
            if k:
                assert hi[k - 1] <= lo[k]
            # numpy's replica of the binning: bisect_right over the edges
            nb = b.n_bins[f]  # the edges: 000's midpoints between the bins' ends
            edges = hi[:nb - 1] + (lo[1:nb] - hi[:nb - 1]) / 2
            np.testing.assert_array_equal(np.searchsorted(edges, x[ok], side="right"),
                                          codes[ok])
    # equal-frequency bins; the heavy value takes one bin, the rest are shared out again
    sizes = np.bincount(b.bins[0], minlength=32)[:32]
    assert sizes.min() > 0.5 * n / 32 and sizes.max() < 1.5 * n / 32
    heavy, zeros = np.bincount(b.bins[2]), (X[:, 2] == 0).sum()
    assert zeros <= heavy.max() < zeros + n / 32 and b.n_bins[2] >= 30


@settings(BUDGET, max_examples=40)
@given(n=st.integers(1, 2100), max_bins=st.integers(2, MAX_BINS), seed=st.integers(0, 2**32 - 1),
       distinct=st.sampled_from([3, 40, 10**6]))
def test_bin_codes_are_bisect_right_of_the_edges(n, max_bins, seed, distinct):
    """Any row count (the 16-row groups of the search and the rows after the last group),
    any max_bins, NaN, +-inf-free values with ties: each code is numpy's bisect_right over
    the edges, NaN is 255."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, distinct, (n, 2)) * rng.normal(size=2) + rng.normal(size=2)
    X[rng.random((n, 2)) < 0.1] = np.nan
    b = bin_features(X, np.zeros(2, np.uint8), np.zeros(2, np.int32), max_bins=max_bins)
    for f in range(2):
        x, codes, nb = X[:, f], b.bins[f].astype(int), b.n_bins[f]
        lo, hi = b.ends(f)
        ok = ~np.isnan(x)
        assert (codes[~ok] == 255).all()
        edges = hi[:nb - 1] + (lo[1:nb] - hi[:nb - 1]) / 2
        np.testing.assert_array_equal(codes[ok], np.searchsorted(edges, x[ok], side="right"))


def test_continuous_accuracy_matches_the_exact_tree():
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=30000, n_features=10, n_informative=6, n_classes=3,
                               random_state=0)
    train, test = slice(0, 20000), slice(20000, None)
    exact = DecisionTreeClassifier(min_samples_leaf=5).fit(X[train], y[train])
    hist = DecisionTreeClassifier(min_samples_leaf=5, splitter="hist").fit(X[train], y[train])
    assert abs(exact.score(X[test], y[test]) - hist.score(X[test], y[test])) < 0.01
    # every threshold separates the training values as the bins do: predict on the raw
    # training rows reproduces the leaf counts the builder saw
    leaves = hist.apply(X[train])
    counts = np.zeros_like(hist.tree_.value)
    np.add.at(counts, (leaves, y[train]), 1)
    np.testing.assert_array_equal(counts[hist.tree_.kind == 0],
                                  hist.tree_.value[hist.tree_.kind == 0])
    coarse = DecisionTreeClassifier(max_depth=1, splitter="hist", max_bins=2).fit(X, y)
    assert coarse.get_n_leaves() == 2  # two bins per column: one cut each


def test_save_load_round_trip(tmp_path):
    X, y, target = discrete_data(3, n=500)
    for est in (DecisionTreeClassifier(splitter="hist", max_bins=40).fit(X, y),
                RandomForestRegressor(n_estimators=3, splitter="hist", random_state=0)
                .fit(X, target)):
        path = tmp_path / "model.fml"
        fastml.save(est, path)
        back = fastml.load(path)
        assert back.get_params() == est.get_params()
        np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_inputs_are_not_modified():
    X, y, target = discrete_data(4, n=300)
    X0, y0 = X.copy(), y.copy()
    DecisionTreeClassifier(splitter="hist").fit(X, y)
    RandomForestClassifier(n_estimators=2, splitter="hist").fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("params, match", [
    (dict(splitter="random"), "splitter"), (dict(splitter="hist", max_bins=1), "max_bins"),
    (dict(splitter="hist", max_bins=256), "max_bins"),
    (dict(splitter="hist", max_bins=2.5), "max_bins"),
])
def test_bad_parameters_are_refused(params, match):
    X, y, _ = discrete_data(0, n=50)
    for Est in (DecisionTreeClassifier, RandomForestClassifier):
        with pytest.raises(ValueError, match=match):
            Est(**params).fit(X, y)


def test_more_than_255_levels_is_a_clear_error():
    X = np.array([f"level{i}" for i in range(300)], dtype=object).reshape(-1, 1)
    y = np.arange(300) % 2
    with pytest.raises(ValueError, match="at most 255 levels"):
        DecisionTreeClassifier(splitter="hist").fit(X, y)
    assert DecisionTreeClassifier().fit(X, y).get_n_leaves() > 1  # the exact splitter takes it
    assert MAX_BINS == 255


def test_binary_categorical_split_needs_the_exact_splitter():
    X = np.array([["a"], ["b"], ["c"], ["a"]] * 5, dtype=object)
    y = np.array([0, 1, 1, 0] * 5)
    with pytest.raises(ValueError, match="categorical_split"):
        DecisionTreeClassifier(splitter="hist", categorical_split="binary").fit(X, y)
    # without categorical columns the option has nothing to act on
    Xn = np.arange(20.0).reshape(-1, 1)
    hist = DecisionTreeClassifier(splitter="hist", categorical_split="binary").fit(Xn, y)
    assert_same_tree(hist.tree_, DecisionTreeClassifier().fit(Xn, y).tree_)


# ------------------------------------------------------------------ subtrees grown in threads

@pytest.mark.parametrize("case", ["entropy", "gini msl", "draws", "regression", "weighted",
                                  "weighted regression", "sparse", "missing"])
def test_subtrees_grown_in_threads_are_the_one_thread_tree(case):
    """n_jobs=2 splits the large nodes, then grows the subtrees below them in two threads
    and renumbers the nodes as the depth-first growth does: node for node the same tree
    (weighted and regression sums too: each subtree gets its parent's histograms)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(12)
    n = 30_000
    X = rng.normal(size=(n, 6))
    if case == "missing":
        X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) > 0) \
        .astype(int) + (np.nan_to_num(X[:, 3]) > 1)
    y = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), y)
    target = np.nan_to_num(X[:, 0]) + rng.normal(size=n)
    w = rng.random(n) * 2 if "weighted" in case else None
    cls, label, kw = DecisionTreeClassifier, y, {}
    if "regression" in case:
        cls, label = DecisionTreeRegressor, target
    if case == "gini msl":
        kw = dict(criterion="gini", min_samples_leaf=4)
    if case == "draws":
        kw = dict(max_features=3, random_state=5)
    if case == "sparse":
        X = sp.csr_matrix(np.where(X > 0.5, X, 0.0))
    one = cls(splitter="hist", n_jobs=1, **kw).fit(X, label, sample_weight=w)
    two = cls(splitter="hist", n_jobs=2, **kw).fit(X, label, sample_weight=w)
    assert one.tree_.node_count > 1000
    assert two.tree_ == one.tree_
