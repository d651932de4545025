"""categorical_split="binary" (issue 14 part 5): the best two-way partition of a categorical
attribute's levels at each node. Exactness against a brute-force search over every partition
(two classes, regression), the K-class heuristic against its numpy replica, storage (predict,
save/load, pruning, export), and accuracy against scikit-learn on one-hot columns."""
import io
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml import info
from fastml.tree import (DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
                         RandomForestRegressor, export_text)
from fastml.tree._tree_fast import KIND_CATEGORICAL, KIND_LEAF
from test_properties import BUDGET

pytestmark = pytest.mark.kernel


def entropy_cost(y, k):
    """n * H(y) in bits (the builder's cost of a child)."""
    counts = np.bincount(y, minlength=k)
    p = counts[counts > 0] / len(y)
    return -len(y) * float(np.sum(p * np.log2(p)))


def sse_cost(y):
    return float(np.sum((y - y.mean()) ** 2))


def partitions(levels):
    """Every split of the levels into two non-empty groups, each once (the first level left)."""
    first, rest = levels[0], levels[1:]
    for r in range(len(rest)):
        for chosen in combinations(rest, r):
            yield {first, *chosen}


def best_partition_gain(codes, y, cost, min_leaf=1):
    """The largest gain per row over every two-way partition of the levels present (None if
    none leaves min_leaf rows on both sides). No missing values."""
    levels = list(np.unique(codes))
    parent, n, best = cost(y), len(y), None
    for left in partitions(levels):
        mask = np.isin(codes, list(left))
        if mask.sum() < min_leaf or (~mask).sum() < min_leaf:
            continue
        gain = (parent - cost(y[mask]) - cost(y[~mask])) / n
        best = gain if best is None else max(best, gain)
    return best


def prefix_best_gain(codes, y, cost, keys, min_leaf=1):
    """numpy replica of the builder's search: for each key (level -> number), the levels
    sorted by key (then by code) and every prefix that leaves min_leaf rows on both sides;
    the largest gain per row (None if no prefix is allowed)."""
    return prefix_best_split(codes, y, cost, keys, min_leaf)[0]


def prefix_best_split(codes, y, cost, keys, min_leaf=1):
    """prefix_best_gain's (gain, rows of the first group) of the first best prefix."""
    levels = np.unique(codes)
    parent, n, best, best_mask = cost(y), len(y), None, None
    for key in keys:
        order = [v for _, v in sorted((key(v), v) for v in levels)]
        for i in range(1, len(order)):
            mask = np.isin(codes, order[:i])
            if mask.sum() < min_leaf or (~mask).sum() < min_leaf:
                continue
            gain = (parent - cost(y[mask]) - cost(y[~mask])) / n
            if best is None or gain > best + 1e-12:
                best, best_mask = gain, mask
    return best, best_mask


def class_keys(codes, y, k):
    """One ordering per class c (the level's proportion of c); one is enough for k = 2."""
    return [lambda v, c=c: np.mean(y[codes == v] == c) for c in range(1 if k == 2 else k)]


def adjusted_log_p(first, y, k, levels=None):
    """numpy replica of binary mode's attribute score of a split sending the rows `first` to
    its first child: the log p-value of Pearson's chi-square test of its 2 x k table (scipy),
    plus, for a categorical column with `levels` levels at the node, log(2^(levels-1) - 1),
    the number of two-way partitions it was chosen from (Bonferroni)."""
    from scipy.stats import chi2
    table = np.array([np.bincount(y[first], minlength=k), np.bincount(y[~first], minlength=k)])
    statistic, _ = info.chi2_test(table)
    df = (table.sum(axis=0) > 0).sum() - 1
    return float(chi2.logsf(statistic, df)) + (np.log(2.0 ** (levels - 1) - 1) if levels else 0.0)


def node_rows(est, X):
    paths = est.decision_path(X).tocsc()
    return [paths[:, node].nonzero()[0] for node in range(est.tree_.node_count)]


def left_levels(est, node):
    """The levels (codes) sent to the node's first child, among those seen at the node."""
    t = est.tree_
    start, n = t.child_start[node], t.n_child[node]
    first = t.child_ids(node)[0]
    return {v for v in range(n) if t.seen[start + v] and t.children[start + v] == first}


# ------------------------------------------------------------------ exactness

@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("min_leaf", [1, 4])
def test_two_class_split_equals_brute_force_over_all_partitions(seed, min_leaf):
    """Breiman et al. (1984): for two classes, sorting the levels by class proportion and
    scanning the prefixes finds the best of all 2^(L-1) - 1 partitions. Checked at every node
    of a tree on two categorical columns (so the columns are reused deeper). With
    min_samples_leaf > 1 the best allowed partition need not be a prefix (the theorem is for
    the unconstrained problem): the builder then takes the best allowed prefix, as the numpy
    replica does, which is never better than the brute-force best."""
    rng = np.random.default_rng(seed)
    n = 150
    X = np.column_stack([rng.integers(0, 7, n), rng.integers(0, 5, n)]).astype(float)
    p = rng.random(7)[X[:, 0].astype(int)] * 0.7 + 0.3 * rng.random(5)[X[:, 1].astype(int)]
    y = (rng.random(n) < p).astype(int)
    est = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                 min_samples_leaf=min_leaf).fit(X, y)
    t = est.tree_
    checked, reused = 0, 0
    for node, rows in enumerate(node_rows(est, X)):
        def cost(v):
            return entropy_cost(v, 2)
        codes, y_node = [X[rows, f] for f in range(2)], y[rows]
        splits = [prefix_best_split(c, y_node, cost, class_keys(c, y_node, 2), min_leaf)
                  if len(np.unique(c)) > 1 else (None, None) for c in codes]
        gains = [g for g, _ in splits]
        brute = [best_partition_gain(c, y_node, cost, min_leaf) if len(np.unique(c)) > 1
                 else None for c in codes]
        for g, b in zip(gains, brute):
            assert (g is None) == (b is None) if min_leaf == 1 else (b is not None or g is None)
            if g is not None:
                assert g <= b + 1e-12
                if min_leaf == 1:
                    assert g == pytest.approx(b, abs=1e-12)  # the theorem
        if t.kind[node] == KIND_LEAF:
            assert len(np.unique(y_node)) == 1 or all(g is None for g in gains)
            continue
        assert t.kind[node] == KIND_CATEGORICAL and len(t.child_ids(node)) == 2
        # the attribute: the smallest Bonferroni-adjusted p-value of each one's best split
        log_p = [np.inf if g is None else adjusted_log_p(first, y_node, 2, len(np.unique(c)))
                 for (g, first), c in zip(splits, codes)]
        f = t.feature[node]
        assert f == int(np.argmin(log_p))
        assert t.gain[node] == pytest.approx(gains[f], abs=1e-9)
        # the stored partition is the one scored: recompute its gain from the rows
        mask = np.isin(X[rows, f], list(left_levels(est, node)))
        gain = (entropy_cost(y_node, 2) - entropy_cost(y_node[mask], 2)
                - entropy_cost(y_node[~mask], 2)) / len(rows)
        assert gain == pytest.approx(t.gain[node], abs=1e-9)
        checked += 1
        parent = np.flatnonzero([node in t.child_ids(q) if t.kind[q] != KIND_LEAF else False
                                 for q in range(node)])
        if len(parent) and t.feature[parent[0]] == f:
            reused += 1
    assert checked >= 5
    if min_leaf == 1:
        assert reused >= 1  # an attribute tested again below itself


@pytest.mark.parametrize("seed", range(6))
def test_regression_split_equals_brute_force_over_all_partitions(seed):
    """Sorting the levels by mean target is exact for the squared error (Fisher 1958)."""
    rng = np.random.default_rng(seed)
    n = 120
    codes = rng.integers(0, 8, n).astype(float)
    y = rng.normal(size=8)[codes.astype(int)] + rng.normal(scale=0.5, size=n)
    est = DecisionTreeRegressor(categorical_features="all", categorical_split="binary",
                                max_depth=3, min_samples_leaf=3).fit(codes[:, None], y)
    t = est.tree_
    for node, rows in enumerate(node_rows(est, codes[:, None])):
        if t.kind[node] == KIND_LEAF:
            continue
        c, v = codes[rows], y[rows]
        assert t.gain[node] == pytest.approx(
            prefix_best_gain(c, v, sse_cost, [lambda lv: v[c == lv].mean()], 3), rel=1e-9,
            abs=1e-12)
        brute = best_partition_gain(c, v, sse_cost, 3)
        assert t.gain[node] <= brute + 1e-12
        if best_partition_gain(c, v, sse_cost, 1) == pytest.approx(brute, rel=1e-12):
            assert t.gain[node] == pytest.approx(brute, rel=1e-9)  # Fisher's theorem


@pytest.mark.parametrize("seed", range(8))
def test_k_class_split_is_the_best_one_vs_rest_prefix(seed):
    rng = np.random.default_rng(seed)
    n = 200
    codes = rng.integers(0, 8, n).astype(float)
    y = (rng.integers(0, 3, 8)[codes.astype(int)] + (rng.random(n) < 0.3)) % 3
    stump = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                   max_depth=1).fit(codes[:, None], y)
    gain = stump.tree_.gain[0]
    # the numpy replica: one scan per class, levels by their proportion of it
    replica = prefix_best_gain(codes, y, lambda v: entropy_cost(v, 3), class_keys(codes, y, 3))
    assert gain == pytest.approx(replica, abs=1e-9)
    # a heuristic: never better than the best partition, and here within 5% of it
    best = best_partition_gain(codes, y, lambda v: entropy_cost(v, 3))
    assert best * 0.95 <= gain <= best + 1e-9


def maker_table():
    """000's maker table: america 0 bad / 10 good, asia 2 / 5, europe 2 / 2."""
    rows = ([("america", "good")] * 10 + [("asia", "bad")] * 2 + [("asia", "good")] * 5
            + [("europe", "bad")] * 2 + [("europe", "good")] * 2)
    return (np.array([[m] for m, _ in rows], dtype=object), np.array([c for _, c in rows]))


def test_000_maker_table_binary_split_and_its_chi_square_pruning():
    """On 000's maker table the binary split groups asia with europe (bad rate 2/7 and 1/2
    against america's 0): IG from the lecture's counts; then the splits' chi-square tests
    (one degree of freedom each) decide the pruning."""
    X, y = maker_table()
    tree = DecisionTreeClassifier(categorical_split="binary").fit(X, y)
    text = export_text(tree, ["maker"]).splitlines()
    assert text == ["maker = america: predict good (bad: 0, good: 10)",
                    "maker in {asia, europe}",
                    "|   maker = asia: predict good (bad: 2, good: 5)",
                    "|   maker = europe: predict bad (bad: 2, good: 2)"]
    h = lambda *c: -sum(k / sum(c) * np.log2(k / sum(c)) for k in c if k)  # noqa: E731
    ig = h(4, 17) - (10 / 21) * h(0, 10) - (11 / 21) * h(4, 7)
    assert tree.tree_.gain[0] == pytest.approx(ig, abs=1e-12)
    stat, p_root = info.chi2_test([[0, 10], [4, 7]])
    _, p_low = info.chi2_test([[2, 5], [2, 2]])
    # 0.034 (one degree of freedom; the lecture's multiway split has p = 0.072) and 0.477
    assert p_root == pytest.approx(0.034054, abs=1e-6) and p_low == pytest.approx(0.477267, abs=1e-6)
    pruned = DecisionTreeClassifier(categorical_split="binary", max_pchance=0.1).fit(X, y)
    assert pruned.get_n_leaves() == 2  # the lower split goes, the root split stays
    assert export_text(pruned, ["maker"]).splitlines() == [
        "maker = america: predict good (bad: 0, good: 10)",
        "maker in {asia, europe}: predict good (bad: 4, good: 7)"]
    assert DecisionTreeClassifier(categorical_split="binary", max_pchance=0.03).fit(
        X, y).get_n_leaves() == 1


def test_pruning_collapses_exactly_the_splits_above_max_pchance():
    rng = np.random.default_rng(3)
    n = 600
    codes = rng.integers(0, 6, size=(n, 2)).astype(float)
    y = ((codes[:, 0] % 2 == 0) ^ (rng.random(n) < 0.2)).astype(int)  # column 1 is noise
    full = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                  min_samples_leaf=5).fit(codes, y)
    pruned = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                    min_samples_leaf=5, max_pchance=0.05).fit(codes, y)
    assert pruned.tree_.node_count < full.tree_.node_count
    t = pruned.tree_
    for node in range(t.node_count):  # no remaining bottom split is prunable
        if t.kind[node] != KIND_LEAF and all(t.kind[c] == KIND_LEAF for c in t.child_ids(node)):
            assert info.chi2_test(t.value[t.child_ids(node)])[1] <= 0.05
    assert t.feature[0] == 0 and left_levels(pruned, 0) in ({0, 2, 4}, {1, 3, 5})


# ------------------------------------------------------------------ the attribute selection

def test_chi2_logsf_matches_scipy_and_stays_finite_where_the_p_value_underflows():
    """The C log chi-square survival function (csrc/fastml_chi2.h) against scipy over df 1..20
    and statistics 1e-3..1e5, relative 1e-10. Where scipy's logsf is -inf (the p-value
    underflows: statistics above ~1,400) the reference is the asymptotic series of the upper
    incomplete gamma, log Q(a, z) = (a-1) log z - z - log Gamma(a) + log sum_k (a-1)...(a-k)/z^k,
    whose terms shrink by a / z < 0.015 there (20 terms: exact to double precision)."""
    from scipy.special import gammaln
    from scipy.stats import chi2
    from fastml.tree._builder_fast import chi2_logsf
    x = np.logspace(-3, 5, 300)[:, None]
    df = np.arange(1, 21)[None, :]
    ours = chi2_logsf(x, df)
    ref = chi2.logsf(x, df)
    finite = np.isfinite(ref)
    assert finite.sum() > 4000 and (~finite).sum() > 500
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-10, atol=0)
    a, z = np.broadcast_arrays(df / 2.0, x / 2.0)
    a, z = a[~finite], z[~finite]
    term, series = np.ones_like(z), np.ones_like(z)
    for k in range(1, 21):
        term = term * (a - k) / z
        series += term
    asymptotic = (a - 1) * np.log(z) - z - gammaln(a) + np.log(series)
    np.testing.assert_allclose(ours[~finite], asymptotic, rtol=1e-10, atol=0)
    assert chi2_logsf(0.0, 3) == 0.0 and chi2_logsf(np.inf, 3) == -np.inf
    assert np.isnan(chi2_logsf(1.0, 0)) and np.isnan(chi2_logsf(np.nan, 2))


def test_a_weak_real_column_beats_a_many_level_noise_column():
    """The selection bias binary mode removes, on a constructed node: a real column that
    carries a little signal (the class is x > 0 with 42% of the labels flipped) against a
    40-level column of pure noise. The noise column's best partition has the larger gain (by
    chance: it is the best of 2^39 - 1), so the highest-gain rule would split on it; the
    adjusted p-value (CHAID's Bonferroni over the partitions) picks the real column, as its
    numpy replica does."""
    rng = np.random.default_rng(0)
    n = 1000
    x, noise = rng.normal(size=n), rng.integers(0, 40, n).astype(float)
    y = ((x > 0) ^ (rng.random(n) < 0.42)).astype(int)

    def cost(v):
        return entropy_cost(v, 2)
    order = np.argsort(x)
    cuts = [(cost(y) - cost(y[order[:i]]) - cost(y[order[i:]])) / n for i in range(1, n)]
    real_gain, cut = max(cuts), int(np.argmax(cuts)) + 1
    noise_gain, noise_first = prefix_best_split(noise, y, cost, class_keys(noise, y, 2))
    assert noise_gain > 1.5 * real_gain > 0.01
    real_first = np.zeros(n, dtype=bool)
    real_first[order[:cut]] = True
    assert adjusted_log_p(real_first, y, 2) < adjusted_log_p(noise_first, y, 2, 40)
    stump = DecisionTreeClassifier(categorical_features=[1], categorical_split="binary",
                                   max_depth=1).fit(np.column_stack([x, noise]), y)
    assert stump.tree_.feature[0] == 0
    assert stump.tree_.gain[0] == pytest.approx(real_gain, abs=1e-12)
    noise_alone_gain = DecisionTreeClassifier(  # the noise column alone: the gain said above
        categorical_features="all", categorical_split="binary", max_depth=1).fit(
        noise[:, None], y).tree_.gain[0]
    assert noise_alone_gain == pytest.approx(noise_gain, abs=1e-12)


def test_binary_mode_without_categorical_columns_grows_the_gain_tree():
    """The adjusted selection corrects the partitions' bias, so it applies only when the data
    has a categorical column: on real columns alone binary mode is the lectures' tree, the
    same as multiway's and as the hist splitter's (which keeps the gain rule)."""
    X, y = issue14_data(5_000, 3)
    real = X[:, 10:]
    kw = dict(criterion="gini", min_samples_leaf=5)
    binary = DecisionTreeClassifier(categorical_split="binary", **kw).fit(real, y)
    assert binary.tree_ == DecisionTreeClassifier(**kw).fit(real, y).tree_


# ------------------------------------------------------------------ storage and prediction

def colour_data(n=300, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    colours = np.array(["red", "green", "blue", "black", "white"], dtype=object)
    c = rng.integers(0, 5, n)
    x = rng.normal(size=n)
    y = np.where(np.isin(c, [0, 2]), x > -0.5, x > 0.8).astype(int)
    return pd.DataFrame({"colour": pd.Categorical(colours[c]), "x": x}), y


def test_export_text_shows_the_level_sets():
    X, y = colour_data()
    tree = DecisionTreeClassifier(categorical_split="binary", max_depth=2).fit(X, y)
    lines = export_text(tree).splitlines()
    assert lines[0] == "x < 0.769808"
    assert lines[1].startswith("|   colour in {") and lines[2].startswith("|   colour in {")
    groups = [set(line.split("{")[1].split("}")[0].split(", ")) for line in lines[1:3]]
    assert {frozenset(g) for g in groups} == {frozenset({"red", "blue"}),
                                             frozenset({"green", "black", "white"})}


@pytest.mark.parametrize("make", [
    lambda: DecisionTreeClassifier(categorical_split="binary", max_pchance=0.5),
    lambda: DecisionTreeRegressor(categorical_split="binary", min_samples_leaf=3),
    lambda: RandomForestClassifier(n_estimators=4, categorical_split="binary", random_state=0),
    lambda: RandomForestRegressor(n_estimators=4, categorical_split="binary", random_state=0)])
def test_save_load_round_trips_and_predicts_the_same(make):
    X, y = colour_data(400, 1)
    est = make().fit(X, y)
    buf = io.BytesIO()
    fastml.save(est, buf)
    buf.seek(0)
    back = fastml.load(buf)
    assert back.categorical_split == "binary"
    Xt, _ = colour_data(200, 2)
    np.testing.assert_array_equal(back.predict(Xt), est.predict(Xt))
    np.testing.assert_array_equal(back.apply(Xt), est.apply(Xt))
    trees = [e.tree_ for e in est.estimators_] if hasattr(est, "estimators_") else [est.tree_]
    cat_nodes = [len(t.child_ids(i)) for t in trees for i in range(t.node_count)
                 if t.kind[i] == KIND_CATEGORICAL]
    assert cat_nodes and set(cat_nodes) == {2}  # every categorical split is binary


def test_missing_and_unseen_levels_go_to_the_larger_group():
    rng = np.random.default_rng(4)
    n = 500
    c = rng.choice([0.0, 1.0, 2.0, 3.0, 4.0], p=[0.3, 0.3, 0.2, 0.1, 0.1], size=n)
    y = np.isin(c, [2, 3, 4]).astype(int)  # left (levels 0, 1) holds 60% of the rows
    c[:20] = np.nan
    stump = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                   max_depth=1).fit(c[:, None], y)
    t = stump.tree_
    big = t.child_ids(0)[0]
    assert left_levels(stump, 0) == {0, 1} and t.n_node_samples[big] == (c < 2).sum() + 20
    assert t.missing_child[0] == big
    leaves = t.apply(np.array([[np.nan], [1.0], [3.0]]))[0]
    assert leaves.tolist() == [big, big, t.child_ids(0)[1]]
    # a level never seen at fit (categories from the encoder: a new string)
    X = np.array([["a"], ["b"], ["b"], ["c"], ["c"], ["c"]] * 10, dtype=object)
    y2 = np.array([1, 0, 0, 1, 1, 1] * 10)
    est = DecisionTreeClassifier(categorical_split="binary").fit(X, y2)
    assert est.predict(np.array([["zzz"]], dtype=object)).tolist() == [1]  # {a, c}: 40 rows


def test_n_jobs_grows_the_same_binary_tree():
    X, y = issue14_data(12_000, 0)
    one = DecisionTreeClassifier(categorical_features=list(range(10)), min_samples_leaf=5,
                                 categorical_split="binary").fit(X, y)
    two = DecisionTreeClassifier(categorical_features=list(range(10)), min_samples_leaf=5,
                                 categorical_split="binary", n_jobs=2).fit(X, y)
    assert one.tree_ == two.tree_


def test_bad_categorical_split_is_refused():
    X, y = colour_data(50)
    for est in (DecisionTreeClassifier(categorical_split="two"),
                RandomForestRegressor(categorical_split=None)):
        with pytest.raises(ValueError, match="categorical_split"):
            est.fit(X, y)


# ------------------------------------------------------------------ issue 14's data

def issue14_data(n, seed):
    """Issue 14 part 5's data, small: 10 categorical columns of 8 levels (as codes 0..7) and 5
    real ones, 3 classes. The same rule as bench/bench_tree_categorical.py's issue14_data:
    the class bins a score that counts, for 4 of the categorical columns, whether the level is
    in a fixed random half of its levels, plus whether x0 + x1/2 > 0; 10% of the labels are
    redrawn at random."""
    halves = np.array([np.random.default_rng(12345 + j).permutation(8) < 4 for j in range(10)])
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, size=(n, 10))
    real = rng.normal(size=(n, 5))
    in_half = halves[np.arange(10), codes]
    score = in_half[:, :4].sum(axis=1) + (real[:, 0] + 0.5 * real[:, 1] > 0)
    y = np.digitize(score, [1.5, 3.5])
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), y)
    return np.column_stack([codes, real]).astype(float), y


def test_binary_splits_reach_sklearn_one_hot_accuracy_where_multiway_falls_short():
    """Issue 14's comparison, at 30k rows: the binary tree is at least as accurate as
    scikit-learn's on one-hot columns, and multiway is not. Fully grown trees fit the 10%
    label noise; 000's chi-square pruning removes more of it, so the pruned tree is checked
    too, and the pruning against the old one-node-at-a-time implementation
    (fastml.info.chi2_test)."""
    from sklearn.tree import DecisionTreeClassifier as SkTree
    X, y = issue14_data(30_000, 0)
    Xt, yt = issue14_data(20_000, 1)
    kw = dict(categorical_features=list(range(10)), min_samples_leaf=5)
    multiway = DecisionTreeClassifier(**kw).fit(X, y)
    binary = DecisionTreeClassifier(categorical_split="binary", **kw).fit(X, y)
    pruned = DecisionTreeClassifier(categorical_split="binary", max_pchance=0.01, **kw).fit(X, y)

    def one_hot(X):
        return np.column_stack([np.eye(8)[X[:, :10].astype(int)].reshape(len(X), 80), X[:, 10:]])

    sk = SkTree(criterion="entropy", min_samples_leaf=5, random_state=0).fit(one_hot(X), y)
    acc = {"multiway": multiway.score(Xt, yt), "binary": binary.score(Xt, yt),
           "pruned": pruned.score(Xt, yt), "one-hot": sk.score(one_hot(Xt), yt)}
    assert acc["pruned"] > acc["binary"] >= acc["one-hot"] > acc["multiway"], acc
    assert binary.tree_.node_count < multiway.tree_.node_count
    assert pruned.tree_ == one_node_at_a_time_prune(binary.tree_, 0.01)


@pytest.mark.parametrize("criterion", ["entropy", "gini"])
def test_unpruned_binary_tree_beats_sklearn_one_hot_on_issue14_data(criterion):
    """Issue 14 part 5's acceptance, at 60k training rows: min_samples_leaf=5, unpruned,
    binary categorical splits against scikit-learn's tree on one-hot columns. Measured over 8
    seeds (bench/README.md, "Binary splits: unbiased attribute selection") the binary tree led
    by 3.4 to 4.6 points (entropy) and 5.5 to 6.4 points (gini), and at 400k rows (seeds 0, 1)
    by 1.5 and 1.8 (entropy), 1.6 and 1.3 (gini): the 2-point floor asserted here is well below
    the smallest lead at this size. Before the adjusted attribute selection the unpruned binary
    tree trailed one-hot by 0.9 points (entropy) at 400k rows."""
    from sklearn.tree import DecisionTreeClassifier as SkTree
    X, y = issue14_data(60_000, 0)
    Xt, yt = issue14_data(20_000, 1)
    binary = DecisionTreeClassifier(criterion=criterion, categorical_split="binary",
                                    categorical_features=list(range(10)),
                                    min_samples_leaf=5).fit(X, y)

    def one_hot(X):
        return np.column_stack([np.eye(8)[X[:, :10].astype(int)].reshape(len(X), 80), X[:, 10:]])

    sk = SkTree(criterion=criterion, min_samples_leaf=5, random_state=0).fit(one_hot(X), y)
    assert binary.score(Xt, yt) >= sk.score(one_hot(Xt), yt) + 0.02


def one_node_at_a_time_prune(tree, max_pchance):
    """000's bottom-up sweep, one chi-square test per node (the former chi2_prune)."""
    kind = tree.kind.copy()
    for node in range(tree.node_count - 1, -1, -1):
        children = tree.child_ids(node) if kind[node] != KIND_LEAF else []
        if children and all(kind[c] == KIND_LEAF for c in children) and \
                info.chi2_test(tree.value[children])[1] > max_pchance:
            kind[node] = KIND_LEAF
    return tree.collapsed(kind == KIND_LEAF)


# ------------------------------------------------------------------ property

@settings(BUDGET, max_examples=40)
@given(data=st.data())
def test_property_two_class_binary_stump_is_the_best_partition(data):
    """Any small two-class sample on one categorical column: the binary stump's gain equals
    the numpy replica's best allowed prefix, which with min_samples_leaf=1 is the brute-force
    best over all partitions; its leaves hold the training counts."""
    n_levels = data.draw(st.integers(2, 7))
    n = data.draw(st.integers(4, 40))
    codes = np.array(data.draw(st.lists(st.integers(0, n_levels - 1), min_size=n, max_size=n)),
                     dtype=float)
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y[:2] = [0, 1]  # a classifier needs two classes
    min_leaf = data.draw(st.integers(1, 3))
    stump = DecisionTreeClassifier(categorical_features="all", categorical_split="binary",
                                   max_depth=1, min_samples_leaf=min_leaf).fit(codes[:, None], y)
    t = stump.tree_
    def cost(v):
        return entropy_cost(v, 2)
    best = None
    if len(np.unique(codes)) > 1:
        best = prefix_best_gain(codes, y, cost, class_keys(codes, y, 2), min_leaf)
        if min_leaf == 1:
            assert best == pytest.approx(best_partition_gain(codes, y, cost), abs=1e-12)
    if best is None:
        assert t.node_count == 1
        return
    assert t.kind[0] == KIND_CATEGORICAL
    assert t.gain[0] == pytest.approx(best, abs=1e-9)
    leaves = stump.apply(codes[:, None])
    for leaf in np.unique(leaves):
        counts = np.bincount(y[leaves == leaf], minlength=2)
        np.testing.assert_array_equal(t.value[leaf], counts)
