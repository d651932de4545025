"""forest_sum's compact copy of a tree (PackedTree in fastml/tree/_tree_fast.pyx, issue 13):
the predictions are those of the Tree's own walk (apply), bit for bit, on continuous,
categorical (multiway and binary), NaN and regression forests, on a hand-made tree with the
nodes the builder never makes (a missing child of its own, a NaN threshold, a repeated child),
for 1 or 2 threads; the copy is made once, sized as documented, and never saved."""
import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml.tree import RandomForestClassifier, RandomForestRegressor
from fastml.tree._tree_fast import (KIND_CATEGORICAL, KIND_LEAF, KIND_THRESHOLD, NODE_DTYPE,
                                    Tree, forest_sum, packed_tree)
from test_properties import BUDGET


def apply_sum(trees, X, normalize):
    """The sum in tree order of each row's leaf values, through each Tree's apply."""
    total = np.zeros((X.shape[0], trees[0].value.shape[1]))
    for t in trees:
        leaf = t.value[t.apply(X)[0]]
        total = total + (leaf / leaf.sum(axis=1, keepdims=True) if normalize else leaf)
    return total


def walk(trees, X, normalize, n_threads=1):
    out = np.zeros((X.shape[0], trees[0].value.shape[1]))
    forest_sum(trees, X, out, normalize, n_threads)
    return out


def w3_like(n, seed, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int) + \
        (X[:, 3] > 1)
    X[rng.random(X.shape) < nan] = np.nan
    return X, y


@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fully_grown_forest_equals_apply(splitter, n_jobs):
    """Deep trees (the case the compact copy is for), more rows than one block per thread."""
    X, y = w3_like(3000, 0, nan=0.02)
    Xt, _ = w3_like(9000, 1, nan=0.02)
    clf = RandomForestClassifier(n_estimators=8, splitter=splitter, n_jobs=n_jobs,
                                 random_state=0).fit(X, y)
    trees = [e.tree_ for e in clf.estimators_]
    ref = apply_sum(trees, Xt, True)
    np.testing.assert_array_equal(walk(trees, Xt, True, n_jobs), ref)
    np.testing.assert_array_equal(clf.predict_proba(Xt), ref / len(trees))
    reg = RandomForestRegressor(n_estimators=5, splitter=splitter, n_jobs=n_jobs,
                                random_state=0).fit(X, y * 1.5 - 0.7)
    trees = [e.tree_ for e in reg.estimators_]
    np.testing.assert_array_equal(reg.predict(Xt), apply_sum(trees, Xt, False)[:, 0] / 5)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_blocks_without_nan_walk_as_apply(n_jobs):
    """A block of rows without NaN takes the walk without the NaN test (csrc/fastml_forest.h),
    a block with one keeps it: trees fit with NaN (nodes send NaN left or right), rows with
    NaN only at the end, so a 2-thread call runs both walks; every sum is apply's."""
    X, y = w3_like(3000, 4, nan=0.05)
    Xt, _ = w3_like(12000, 5)
    Xt[-3:, 1] = np.nan
    clf = RandomForestClassifier(n_estimators=6, n_jobs=n_jobs, random_state=0).fit(X, y)
    trees = [e.tree_ for e in clf.estimators_]
    for rows in (Xt, Xt[:-3], Xt[-20:]):
        np.testing.assert_array_equal(walk(trees, rows, True, n_jobs),
                                      apply_sum(trees, rows, True))


def test_single_leaf_tree_walks_rows_without_columns():
    """A leaf reads column 0 in the lane loop; X without columns (only a single-leaf tree can
    walk it) is walked as a column of zeros, and every row gets the leaf's values."""
    tree = fastml.DecisionTreeRegressor().fit([[0.0], [1.0], [2.0]], [2.5, 2.5, 2.5]).tree_
    assert tree.node_count == 1
    for n in (1, 40):
        np.testing.assert_array_equal(walk([tree, tree], np.zeros((n, 0)), False),
                                      np.full((n, 1), 5.0))


@pytest.mark.parametrize("categorical_split", ["multiway", "binary"])
def test_categorical_forest_equals_apply(categorical_split):
    import pandas as pd
    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame({"a": pd.Categorical(rng.choice(list("pqrstu"), n)),
                          "b": pd.Categorical(rng.choice(list("xyz"), n)),
                          "r": rng.normal(size=n)})
    y = (frame["a"].isin(["p", "q"]) ^ (frame["r"] > 0)).astype(int)
    clf = RandomForestClassifier(n_estimators=10, categorical_split=categorical_split,
                                 random_state=0).fit(frame, y)
    test = frame.sample(600, random_state=1).reset_index(drop=True)
    test.loc[:20, "a"] = np.nan       # missing categories take the majority path
    Xe = clf._encode(test)
    trees = [e.tree_ for e in clf.estimators_]
    np.testing.assert_array_equal(walk(trees, Xe, True), apply_sum(trees, Xe, True))
    if categorical_split == "multiway":
        assert any((t.kind == KIND_CATEGORICAL).any() for t in trees)
        # level codes the nodes never saw (outside 0..n_child-1) also take the majority path
        Xe = Xe.copy()
        Xe[:50, 0] = np.arange(50) - 20.0
        np.testing.assert_array_equal(walk(trees, Xe, True), apply_sum(trees, Xe, True))


def hand_made_tree(value=None):
    """Nodes a loaded file may hold though the builder never makes them: a threshold node
    whose missing child is neither of its children (a grandchild), one with a NaN threshold,
    a categorical node whose entries repeat a child, and a leaf reached from two parents;
    `value`: the nodes' values (default: all different)."""
    rows = [  # kind, feature, threshold, child_start, n_child, missing_child
        (KIND_THRESHOLD, 0, 0.5, 0, 2, 4),       # 0: missing -> 4, a child of node 1
        (KIND_CATEGORICAL, 1, np.nan, 2, 3, 3),  # 1: levels 0, 1, 2 -> 3, 4, 3
        (KIND_THRESHOLD, 1, np.nan, 5, 2, 5),    # 2: NaN threshold: numbers go right (6)
        (KIND_LEAF, -1, np.nan, 0, 0, -1),       # 3
        (KIND_LEAF, -1, np.nan, 0, 0, -1),       # 4
        (KIND_LEAF, -1, np.nan, 0, 0, -1),       # 5
        (KIND_LEAF, -1, np.nan, 0, 0, -1),       # 6
    ]
    nodes = np.zeros(len(rows), dtype=NODE_DTYPE)
    for i, (kind, f, t, cs, nc, m) in enumerate(rows):
        nodes[i] = (kind, f, t, cs, nc, m, 1, 1.0, 0, 0.0, 0.0)
    children = np.array([1, 2, 3, 4, 3, 5, 6], dtype=np.int64)
    if value is None:
        value = np.arange(1.0, 1.0 + 2 * len(rows)).reshape(-1, 2)
    tree = Tree.__new__(Tree)
    tree._adopt(nodes, value, children, np.ones(len(children), dtype=np.int32))
    return tree


def test_hand_made_tree_equals_apply():
    tree = hand_made_tree()
    X = np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 2.0], [0.0, np.nan], [0.0, 7.0],
                  [0.0, -1.0], [0.0, 1.9], [1.0, 0.0], [1.0, np.nan], [1.0, -np.inf],
                  [np.nan, 0.0], [np.nan, np.nan], [-np.inf, 1.0], [np.inf, 5.0]])
    for normalize in (False, True):
        got = walk([tree, tree], X, normalize)
        np.testing.assert_array_equal(got, apply_sum([tree, tree], X, normalize))
    # every node of the tree is reached by some row above
    assert set(tree.apply(X)[0]) == {3, 4, 5, 6}


def distinct_leaf_vectors(tree, normalize):
    """How many different vectors of values (bit for bit) the tree's leaves hold."""
    leaf = tree.value[tree.kind == KIND_LEAF]
    if normalize:
        leaf = leaf / leaf.sum(axis=1, keepdims=True)
    return len(np.unique(leaf.view(np.uint64), axis=0))


def test_compact_copy_size_and_caching():
    """A builder's tree packs into node_count slots plus at most one alignment pad per
    threshold node, 16 bytes each and a 4-byte leaf offset each, plus n_values doubles per
    distinct vector of leaf values (a fully grown classifier's leaves are pure: one vector per
    class); it is made once."""
    X, y = w3_like(2000, 0, nan=0.05)
    tree = fastml.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
    packed = packed_tree(tree)
    assert packed is packed_tree(tree)
    assert tree.node_count <= packed.node_count <= tree.node_count + 1
    assert distinct_leaf_vectors(tree, True) == 3 < tree.n_leaves
    assert packed.nbytes == 20 * packed.node_count + 4 + 8 * 3 * 3
    raw = packed_tree(tree, False)
    assert raw is not packed                          # raw values: a copy of its own
    assert raw.nbytes == 20 * raw.node_count + 4 + 8 * 3 * distinct_leaf_vectors(tree, False)


def test_leaf_values_are_shared_only_when_equal_bit_for_bit():
    """Leaves share one stored vector only when their values have the same bits: 0.0 and
    -0.0 (equal as numbers, different sums when added to -0.0) stay apart, NaN is kept."""
    leaves = [[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0], [np.nan, 1.0]]     # nodes 3, 4, 5, 6
    tree = hand_made_tree(np.array([[9.0, 9.0]] * 3 + leaves))
    # 4 distinct vectors -> 3: one vector (2 doubles) fewer than the default tree's copy
    assert packed_tree(hand_made_tree(), False).nbytes - packed_tree(tree, False).nbytes == 16
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, np.nan], [1.0, 0.0]])
    assert tree.apply(X)[0].tolist() == [3, 4, 5, 6]
    out = np.full((4, 2), -0.0)
    forest_sum([tree], X, out, False)
    np.testing.assert_array_equal(out, leaves)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(leaves))


def test_compact_copy_is_not_saved_and_is_rebuilt():
    X, y = w3_like(1500, 2, nan=0.05)
    clf = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    expected = clf.predict_proba(X)                  # makes the copies
    assert set(clf.estimators_[0].tree_.__getstate__()) == {"arrays"}
    buf = io.BytesIO()
    fastml.save(clf, buf)
    plain = io.BytesIO()
    fastml.save(RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y), plain)
    assert buf.getvalue() == plain.getvalue()        # the same file with or without copies
    buf.seek(0)
    np.testing.assert_array_equal(fastml.load(buf).predict_proba(X), expected)
    # a tree re-adopting other arrays drops its copy
    tree = clf.estimators_[0].tree_
    other = clf.estimators_[1].tree_
    tree._adopt_state(other.__getstate__())
    np.testing.assert_array_equal(walk([tree], X, True), apply_sum([other], X, True))


@settings(BUDGET, max_examples=20)
@given(st.integers(0, 2**31 - 1), st.integers(1, 5000), st.integers(1, 4),
       st.sampled_from([None, 3, 12]), st.sampled_from([1, 2]), st.booleans())
def test_property_compact_walk_equals_apply(seed, n_rows, n_trees, depth, n_threads, regress):
    """On random data with NaN and a categorical column, any depth, any number of rows
    (one lane to several blocks), 1 or 2 threads: the compact walk's sums are apply's."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 4))
    X[:, 3] = rng.integers(0, 5, 400)
    y = (X[:, 0] + (X[:, 3] == 2) + rng.normal(size=400) > 0.5).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    params = dict(n_estimators=n_trees, max_depth=depth, categorical_features=[3],
                  random_state=seed)
    model = (RandomForestRegressor(**params).fit(X, y + rng.normal(size=400))
             if regress else RandomForestClassifier(**params).fit(X, y))
    Xt = rng.normal(size=(n_rows, 4))
    Xt[:, 3] = rng.integers(-1, 7, n_rows)
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    trees = [e.tree_ for e in model.estimators_]
    np.testing.assert_array_equal(walk(trees, Xt, not regress, n_threads),
                                  apply_sum(trees, Xt, not regress))
