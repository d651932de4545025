"""Sample weights and class weights of the trees and forests (issue 31).

A row of weight w counts w in every class count, target sum and impurity of both builders
(fastml/tree/_grow.pxd's weight_t copies), so:
- integer weights grow the tree of the repeated rows, node for node (n_node_samples aside: it
  counts rows; regression leaf means to round-off, a sum of w * y against w sums of y);
- a weight of 0 drops the row: the very tree of the data without it, n_node_samples included;
- scaling every weight by a constant leaves the tree (and predict_proba) unchanged;
- class_weight="balanced" is scikit-learn's rule, and with it the trees are scikit-learn's.
Forests multiply each tree's bootstrap counts by the weights (scikit-learn's rule up to 1.8),
so the weighted forest is the forest of repeated rows only without a bootstrap."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastml.tree import (DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
                         RandomForestRegressor)
from test_properties import BUDGET

pytestmark = pytest.mark.kernel

STRUCTURE = ("kind", "feature", "threshold", "child_start", "n_child", "missing_child",
             "depth", "weighted_n_node_samples")


def assert_same_tree(a, b, regression=False, scale=1.0, rows=True):
    """The same tree node for node: structure, thresholds, missing sides and weights (a's
    divided by scale); class values exactly, regression values and impurities to round-off;
    n_node_samples only when `rows` (weights and repeats count rows differently)."""
    assert a.node_count == b.node_count
    for name in STRUCTURE + (("n_node_samples",) if rows else ()):
        x, y = getattr(a, name), getattr(b, name)
        if name == "weighted_n_node_samples":
            x = x / scale
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.children, b.children)
    if regression or scale != 1.0:
        np.testing.assert_allclose(a.value / (1.0 if regression else scale), b.value,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(a.impurity, b.impurity)


def data(seed, n=300, d=4, levels=7, nan=0.08, n_classes=3):
    """Few distinct values per column (ties, so the hist builder's bins are the values), some
    missing, a noisy label and a regression target."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(float) * 0.5
    X[rng.random((n, d)) < nan] = np.nan
    signal = (np.nan_to_num(X[:, 0]) > 1.2).astype(int) + (np.nan_to_num(X[:, 1]) < 1)
    y = np.where(rng.random(n) < 0.25, rng.integers(0, n_classes, n), signal % n_classes)
    target = np.nan_to_num(X[:, 0]) * 2 - np.nan_to_num(X[:, 2]) + rng.normal(size=n).round(2)
    return X, y, target


ESTIMATORS = [
    (DecisionTreeClassifier, {}), (DecisionTreeClassifier, dict(criterion="gini")),
    (DecisionTreeClassifier, dict(splitter="hist")),
    (DecisionTreeClassifier, dict(splitter="hist", criterion="gini", max_leaf_nodes=12)),
    (DecisionTreeClassifier, dict(max_features=2, random_state=4)),
    (DecisionTreeClassifier, dict(categorical_features=[3])),
    (DecisionTreeClassifier, dict(categorical_features=[3], categorical_split="binary")),
    (DecisionTreeClassifier, dict(splitter="hist", categorical_features=[3])),
    (DecisionTreeRegressor, {}), (DecisionTreeRegressor, dict(splitter="hist")),
    (DecisionTreeRegressor, dict(categorical_features=[3], categorical_split="binary")),
    (DecisionTreeRegressor, dict(splitter="hist", max_features=3, random_state=1)),
]
IDS = [f"{cls.__name__}-{params}" for cls, params in ESTIMATORS]


def fit(cls, params, X, y, target, **fit_kw):
    est = cls(**params)
    return est.fit(X, target if cls is DecisionTreeRegressor else y, **fit_kw)


@pytest.mark.parametrize("cls, params", ESTIMATORS, ids=IDS)
def test_integer_weights_grow_the_tree_of_repeated_rows(cls, params):
    X, y, target = data(1)
    w = np.random.default_rng(2).integers(0, 4, len(y))
    weighted = fit(cls, params, X, y, target, sample_weight=w)
    repeated = fit(cls, params, np.repeat(X, w, axis=0), np.repeat(y, w), np.repeat(target, w))
    regression = cls is DecisionTreeRegressor
    assert_same_tree(weighted.tree_, repeated.tree_, regression, rows=False)
    assert weighted.tree_.node_count > 20
    if regression:
        np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-12)
    else:
        np.testing.assert_array_equal(weighted.predict_proba(X), repeated.predict_proba(X))


@pytest.mark.parametrize("cls, params", ESTIMATORS, ids=IDS)
def test_zero_weights_drop_the_rows(cls, params):
    X, y, target = data(3)
    w = np.random.default_rng(4).integers(0, 2, len(y)).astype(float)
    keep = w > 0
    weighted = fit(cls, params, X, y, target, sample_weight=w)
    dropped = fit(cls, params, X[keep], y[keep], target[keep])
    assert_same_tree(weighted.tree_, dropped.tree_, cls is DecisionTreeRegressor)


# binary categorical mode chooses the attribute by a chi-square test, which reads the weights
# as frequencies (as max_pchance does: test_pruning_reads_weights_as_frequencies)
SCALE_FREE = [(cls, params) for cls, params in ESTIMATORS
              if params.get("categorical_split") != "binary"]


@pytest.mark.parametrize("scale", [1e-3, 3.7, 2.0 ** 40])
@pytest.mark.parametrize("cls, params", SCALE_FREE,
                         ids=[f"{cls.__name__}-{params}" for cls, params in SCALE_FREE])
def test_scaling_every_weight_changes_nothing(cls, params, scale):
    X, y, target = data(5)
    w = np.random.default_rng(6).random(len(y)) + 0.05
    one = fit(cls, params, X, y, target, sample_weight=w)
    scaled = fit(cls, params, X, y, target, sample_weight=w * scale)
    regression = cls is DecisionTreeRegressor
    a, b = scaled.tree_, one.tree_
    for name in ("kind", "feature", "threshold", "missing_child", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.weighted_n_node_samples / scale, b.weighted_n_node_samples,
                               rtol=1e-12)
    if regression:
        np.testing.assert_allclose(scaled.predict(X), one.predict(X), rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(scaled.predict_proba(X), one.predict_proba(X), rtol=1e-12,
                                   atol=1e-15)


def test_weights_of_one_are_the_unweighted_tree():
    X, y, target = data(7)
    for splitter in ("best", "hist"):
        plain = DecisionTreeClassifier(splitter=splitter).fit(X, y)
        ones = DecisionTreeClassifier(splitter=splitter).fit(X, y, sample_weight=np.ones(300))
        assert plain.tree_ == ones.tree_


def test_real_weights_exact_and_hist_builders_agree():
    """On columns of few values the hist tree is the exact tree, with weights too (class
    counts summed in another order: values to round-off)."""
    X, y, target = data(8, n=800)
    w = np.random.default_rng(9).random(800) * 3
    for cls, label in ((DecisionTreeClassifier, y), (DecisionTreeRegressor, target)):
        for params in ({}, dict(min_samples_leaf=4, min_weight_fraction_leaf=0.02)):
            exact = cls(**params).fit(X, label, sample_weight=w).tree_
            hist = cls(splitter="hist", **params).fit(X, label, sample_weight=w).tree_
            for name in ("kind", "feature", "threshold", "missing_child", "n_node_samples"):
                np.testing.assert_array_equal(getattr(exact, name), getattr(hist, name))
            np.testing.assert_allclose(exact.value, hist.value, rtol=1e-12)


@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("fraction", [0.01, 0.05, 0.2])
def test_min_weight_fraction_leaf_bounds_every_leaf(splitter, fraction):
    X, y, _ = data(10, n=600)
    w = np.random.default_rng(11).random(600) * 5
    for sample_weight in (None, w):
        tree = DecisionTreeClassifier(splitter=splitter, min_weight_fraction_leaf=fraction).fit(
            X, y, sample_weight=sample_weight).tree_
        total = 600 if sample_weight is None else w.sum()
        leaves = tree.kind == 0
        assert tree.node_count > 1
        assert tree.weighted_n_node_samples[leaves].min() >= fraction * total * (1 - 1e-12)


def sklearn_problem(seed, n_features=5, n=3000):
    """Imbalanced classes, values that float32 holds exactly (scikit-learn's trees split
    float32 copies of X). Ties between candidate splits -- two features, or two cuts, that
    make the same partition, common where a node holds one minority row -- are broken by
    scikit-learn's random feature order and by its round-off, and by fastml's rule (the first
    candidate): the shallow trees here, and the one-column trees, have none on these seeds."""
    from sklearn.datasets import make_classification
    k = 3 if n_features > 1 else 2
    X, y = make_classification(n_samples=n, n_features=n_features, n_informative=n_features,
                               n_redundant=0, n_classes=k, n_clusters_per_class=1,
                               weights=[0.6, 0.3, 0.1][:k] if k == 3 else [0.7, 0.3],
                               random_state=seed)
    return X.astype(np.float32).astype(np.float64), y


def assert_sklearn_tree(ours, theirs, X):
    """The same split in every node of ours, thresholds to 1e-12, and the same
    probabilities. (scikit-learn also splits nodes whose impurity is a round-off residue,
    1e-15, of a pure node, into children of the same class: ours stays a leaf, so only our
    inner nodes are compared.)"""
    t, s = ours.tree_, theirs.tree_

    def walk(i, j):
        if t.kind[i] == 0:
            return 0
        assert s.feature[j] == t.feature[i], (i, j)
        np.testing.assert_allclose(s.threshold[j], t.threshold[i], rtol=1e-12)
        left, right = t.children[t.child_start[i]:t.child_start[i] + 2]
        return 1 + walk(left, s.children_left[j]) + walk(right, s.children_right[j])

    assert walk(0, 0) == np.count_nonzero(t.kind != 0) > 2
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("class_weight", ["balanced", {0: 0.5, 1: 2.0, 2: 3.0}])
@pytest.mark.parametrize("criterion", ["entropy", "gini"])
@pytest.mark.parametrize("case", [(0, 5, dict(max_depth=3)),
                                  (1, 5, dict(max_depth=3, min_weight_fraction_leaf=0.04)),
                                  (0, 1, {}), (1, 1, dict(min_weight_fraction_leaf=0.02))])
def test_class_weight_is_scikit_learns_tree(case, criterion, class_weight):
    """Where the algorithms match (all features, min_samples_leaf 1, no ties), the weighted
    tree is scikit-learn's: the same split in each node, thresholds and probabilities to
    1e-12."""
    from sklearn.tree import DecisionTreeClassifier as SkTree
    seed, n_features, params = case
    X, y = sklearn_problem(seed, n_features, n=3000 if n_features > 1 else 600)
    if n_features == 1 and isinstance(class_weight, dict):
        class_weight = {0: 0.5, 1: 2.0}
    ours = DecisionTreeClassifier(criterion=criterion, class_weight=class_weight, **params)
    theirs = SkTree(criterion=criterion, class_weight=class_weight, random_state=0, **params)
    assert_sklearn_tree(ours.fit(X, y), theirs.fit(X, y), X)


@pytest.mark.parametrize("class_weight", ["balanced", "balanced_subsample"])
def test_balanced_forest_is_scikit_learns_without_bootstrap(class_weight):
    """bootstrap=False and all features: every tree is the balanced tree, in both libraries
    ("balanced_subsample" without a bootstrap is "balanced", as in scikit-learn)."""
    from sklearn.ensemble import RandomForestClassifier as SkForest
    X, y = sklearn_problem(2)
    kw = dict(n_estimators=3, bootstrap=False, max_features=None, class_weight=class_weight,
              max_depth=3)
    ours = RandomForestClassifier(criterion="gini", **kw).fit(X, y)
    theirs = SkForest(criterion="gini", random_state=0, **kw).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-12,
                               atol=1e-12)
    for est, sk in zip(ours.estimators_, theirs.estimators_):
        assert_sklearn_tree(est, sk, X)


def test_balanced_counts_weighted_rows():
    """With sample_weight, "balanced" divides by each class's summed weight (scikit-learn's
    forests and compute_class_weight; its single tree counts rows instead)."""
    X, y, _ = data(12)
    w = np.random.default_rng(13).random(len(y)) * 2
    tree = DecisionTreeClassifier(class_weight="balanced").fit(X, y, sample_weight=w).tree_
    root = tree.value[0]
    np.testing.assert_allclose(root, np.full(3, w.sum() / 3), rtol=1e-12)


def test_class_weight_dict_multiplies_sample_weight():
    X, y, _ = data(14)
    w = np.random.default_rng(15).random(len(y)) + 0.5
    factors = {0: 2.0, 1: 0.5, 2: 1.0}
    by_dict = DecisionTreeClassifier(class_weight=factors).fit(X, y, sample_weight=w)
    by_hand = DecisionTreeClassifier().fit(X, y, sample_weight=w * np.vectorize(factors.get)(y))
    assert by_dict.tree_ == by_hand.tree_


# ------------------------------------------------------------------ forests

@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_forest_without_bootstrap_is_the_forest_of_repeated_rows(cls, splitter):
    X, y, target = data(16)
    label = y if cls is RandomForestClassifier else target
    w = np.random.default_rng(17).integers(0, 4, len(y))
    kw = dict(n_estimators=4, bootstrap=False, max_features=2, random_state=3,
              splitter=splitter)
    weighted = cls(**kw).fit(X, label, sample_weight=w)
    repeated = cls(**kw).fit(np.repeat(X, w, axis=0), np.repeat(label, w))
    for a, b in zip(weighted.estimators_, repeated.estimators_):
        assert_same_tree(a.tree_, b.tree_, cls is RandomForestRegressor, rows=False)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-12)


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_forest_weights_multiply_the_bootstrap_counts(splitter):
    """A forest tree is the single tree grown with weights counts x sample_weight: scaling
    the weights changes no tree, and a tree's root holds the weighted draws."""
    X, y, _ = data(18)
    w = np.random.default_rng(19).random(len(y)) + 0.1
    kw = dict(n_estimators=3, random_state=5, splitter=splitter)
    plain = RandomForestClassifier(**kw).fit(X, y)
    weighted = RandomForestClassifier(**kw).fit(X, y, sample_weight=w)
    scaled = RandomForestClassifier(**kw).fit(X, y, sample_weight=w * 8.0)
    for p, a, b in zip(plain.estimators_, weighted.estimators_, scaled.estimators_):
        assert_same_tree(b.tree_, a.tree_, scale=8.0)
        # the bootstrap is the unweighted forest's: the same rows at the root
        assert p.tree_.n_node_samples[0] == a.tree_.n_node_samples[0]
    np.testing.assert_allclose(weighted.predict_proba(X), scaled.predict_proba(X), rtol=1e-12)


def test_forest_balanced_subsample_balances_each_trees_sample():
    X, y, _ = data(20, n=500)
    y = np.where(np.random.default_rng(21).random(500) < 0.15, 2, y % 2)   # imbalanced
    w = np.random.default_rng(22).random(500) + 0.5
    forest = RandomForestClassifier(n_estimators=5, class_weight="balanced_subsample",
                                    random_state=0).fit(X, y, sample_weight=w)
    for est in forest.estimators_:
        root = est.tree_.value[0]
        np.testing.assert_allclose(root, np.full(3, root.sum() / 3), rtol=1e-12)
    balanced = RandomForestClassifier(n_estimators=5, class_weight="balanced",
                                      random_state=0).fit(X, y)
    roots = np.array([est.tree_.value[0] for est in balanced.estimators_])
    assert np.ptp(roots / roots.sum(axis=1, keepdims=True), axis=0).max() > 0.01


@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
def test_out_of_bag_score_is_weighted(cls):
    from fastml.metrics import accuracy_score, r2_score
    X, y, target = data(23, n=500)
    label = y if cls is RandomForestClassifier else target
    w = np.random.default_rng(24).random(500) * 3
    forest = cls(n_estimators=15, oob_score=True, random_state=0).fit(X, label,
                                                                      sample_weight=w)
    if cls is RandomForestClassifier:
        oob = forest.oob_decision_function_
        seen = ~np.isnan(oob).any(axis=1)
        expected = accuracy_score(y[seen], forest.classes_[oob[seen].argmax(axis=1)],
                                  sample_weight=w[seen])
    else:
        oob = forest.oob_prediction_
        seen = ~np.isnan(oob)
        expected = r2_score(target[seen], oob[seen], sample_weight=w[seen])
    assert forest.oob_score_ == pytest.approx(expected, rel=1e-12)
    unweighted = cls(n_estimators=15, oob_score=True, random_state=0).fit(X, label)
    assert forest.oob_score_ != unweighted.oob_score_


# ------------------------------------------------------------------ pruning on weighted counts

def test_pruning_with_integer_weights_is_the_pruning_of_repeated_rows():
    X, y, _ = data(25)
    w = np.random.default_rng(26).integers(0, 4, len(y))
    kw = dict(max_pchance=0.05)
    weighted = DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w)
    repeated = DecisionTreeClassifier(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_same_tree(weighted.tree_, repeated.tree_, rows=False)
    assert weighted.tree_.node_count < DecisionTreeClassifier().fit(
        X, y, sample_weight=w).tree_.node_count


def test_pruning_reads_weights_as_frequencies():
    """The chi-square test takes a weight as that many observations: doubling every weight
    doubles the statistic, so a split pruned at weight 1 can survive at weight 2 (the grown
    tree is the same; see the tree user guide)."""
    from fastml.tree._prune import p_chances, split_children
    X, y, _ = data(27)
    full = DecisionTreeClassifier().fit(X, y).tree_
    inner = np.flatnonzero(full.kind != 0)
    parent, child = split_children(full, inner)
    p1 = p_chances(full.value, parent, child, full.node_count)
    p2 = p_chances(full.value * 2, parent, child, full.node_count)
    tested = p1 < 1
    assert (p2[tested] <= p1[tested]).all() and (p2[tested] < p1[tested]).any()
    one = DecisionTreeClassifier(max_pchance=0.05).fit(X, y, sample_weight=np.ones(len(y)))
    two = DecisionTreeClassifier(max_pchance=0.05).fit(X, y, sample_weight=np.full(len(y), 2.))
    assert two.tree_.node_count >= one.tree_.node_count


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("cls", [DecisionTreeClassifier, RandomForestClassifier,
                                 DecisionTreeRegressor, RandomForestRegressor])
def test_bad_weights_are_refused(cls):
    X, y, target = data(28, n=40)
    label = y if "Classifier" in cls.__name__ else target
    for bad, message in ((-np.ones(40), "negative"), (np.full(40, np.nan), "NaN"),
                         (np.ones(39), "shape"), (np.zeros(40), "sums to 0"),
                         (np.full(40, 1e300), "between"), ("heavy", "numbers")):
        with pytest.raises(ValueError, match=message):
            cls(n_estimators=2).fit(X, label, sample_weight=bad) if "Forest" in cls.__name__ \
                else cls().fit(X, label, sample_weight=bad)
    with pytest.raises(ValueError, match="min_weight_fraction_leaf"):
        cls(min_weight_fraction_leaf=0.6).fit(X, label)
    w = np.ones(40)
    w_copy = w.copy()
    cls().fit(X, label, sample_weight=w)
    np.testing.assert_array_equal(w, w_copy)


def test_bad_class_weights_are_refused():
    X, y, _ = data(29, n=40)
    for bad, message in (("balance", "class_weight"), ({0: -1.0}, "finite numbers >= 0"),
                         ({7: 2.0}, "not classes"), ("balanced_subsample", "class_weight")):
        with pytest.raises(ValueError, match=message):
            DecisionTreeClassifier(class_weight=bad).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        RandomForestClassifier(class_weight="subsample").fit(X, y)
    with pytest.raises(ValueError, match="0 on every row"):
        DecisionTreeClassifier(class_weight={0: 0, 1: 0, 2: 0}).fit(X, y)


def test_regression_weights_that_overflow_the_squares_are_refused():
    X, y, target = data(30, n=40)
    with pytest.raises(ValueError, match="overflow"):
        DecisionTreeRegressor().fit(X, target * 1e150, sample_weight=np.full(40, 1e100))


# ------------------------------------------------------------------ properties

@st.composite
def weighted_problem(draw):
    """Small tables of few values (some missing), 2-3 classes, integer weights 0..3 under
    which every class keeps some weight (so the repeated rows have the same classes)."""
    n = draw(st.integers(2, 40))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, draw(st.integers(2, 6)), (n, d)).astype(float)
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.15]))] = np.nan
    y = np.arange(n) % draw(st.integers(2, 3))
    rng.shuffle(y)
    w = rng.integers(0, 4, n)
    for c in np.unique(y):      # a row of each class keeps a weight
        w[np.flatnonzero(y == c)[0]] = max(w[np.flatnonzero(y == c)[0]], 1)
    return X, y, w


@BUDGET
@given(problem=weighted_problem(), splitter=st.sampled_from(["best", "hist"]),
       criterion=st.sampled_from(["entropy", "gini"]))
def test_property_integer_weights_are_repeated_rows(problem, splitter, criterion):
    X, y, w = problem
    kw = dict(splitter=splitter, criterion=criterion)
    weighted = DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w)
    repeated = DecisionTreeClassifier(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_same_tree(weighted.tree_, repeated.tree_, rows=False)


@BUDGET
@given(problem=weighted_problem(), splitter=st.sampled_from(["best", "hist"]),
       scale=st.sampled_from([0.25, 3.0, 1e-6]))
def test_property_regression_weights_are_repeated_rows_and_scale_free(problem, splitter,
                                                                        scale):
    X, y, w = problem
    target = y * 1.5 + np.nan_to_num(X[:, 0])
    weighted = DecisionTreeRegressor(splitter=splitter).fit(X, target, sample_weight=w)
    repeated = DecisionTreeRegressor(splitter=splitter).fit(np.repeat(X, w, axis=0),
                                                            np.repeat(target, w))
    assert_same_tree(weighted.tree_, repeated.tree_, regression=True, rows=False)
    scaled = DecisionTreeRegressor(splitter=splitter).fit(X, target, sample_weight=w * scale)
    np.testing.assert_array_equal(scaled.tree_.feature, weighted.tree_.feature)
    np.testing.assert_allclose(scaled.predict(X), weighted.predict(X), rtol=1e-12, atol=1e-12)
