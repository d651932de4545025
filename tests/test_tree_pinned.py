"""Fitted trees pinned to their arrays: the exact and histogram builders share their growing
code (fastml/tree/_grow.pxd), and a change there must leave every tree the same node for
node. Each case fits a fixed dataset and compares a digest of the tree's arrays with the one
the builders gave before that code was shared (PINNED below). Re-pinned twice since, on
purpose: the missing-vs-present cut (2026-11-26) changed exactly the trees of data with
missing values whose new digests hold +inf thresholds; the others kept theirs. And the
feature draw by hashed keys (_grow.pxd's Draw, for sparse data and growth-order free node
seeds) changed exactly the three trees that draw features (max_features < n_features).

The digest covers every node field, the values, the children table and the seen flags; the
float fields a sum of logs or of squares produces (impurity, gain, regression values) enter
it rounded to 12 significant digits, so another libm's last-bit differences do not count,
while thresholds (midpoints of data values) and class counts enter exactly."""
import hashlib

import numpy as np
import pandas as pd
import pytest

from fastml.tree import DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier
pytestmark = pytest.mark.kernel

ROUNDED = ("impurity", "gain")
# The node fields the digests were taken over. weighted_n_node_samples came later (sample
# weights): for these unweighted fits it equals n_node_samples, which test_tree_arrays_pinned
# checks, so the digests stay the ones the builders gave before.
PINNED_FIELDS = ("kind", "feature", "threshold", "child_start", "n_child", "missing_child",
                 "n_node_samples", "depth", "impurity", "gain")


def digest(tree, regression=False):
    """sha256 of the tree's arrays (see the module docstring), first 16 hex digits."""
    h = hashlib.sha256()
    for name in PINNED_FIELDS:
        a = np.asarray(tree.nodes[name])
        if name in ROUNDED:
            a = np.array([float(f"{v:.12g}") for v in a])
        h.update(name.encode())
        h.update(np.ascontiguousarray(a).tobytes())
    value = np.asarray(tree.value)
    if regression:
        value = np.array([float(f"{v:.12g}") for v in value.ravel()])
    for a in (value, tree.children, tree.seen):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def continuous(n=3000, seed=0, nan=0.05):
    """A W3-like table: 8 informative-ish columns, 3 classes, some values missing."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] - 0.7 * X[:, 3] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, [-0.5, 0.6])
    X[rng.random(X.shape) < nan] = np.nan
    return X, y, score


def categorical(n=3000, seed=1):
    """Six 8-level columns and two real ones, 3 classes, some missing levels."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, size=(n, 6))
    real = rng.normal(size=(n, 2))
    signal = ((codes[:, 0] % 3 == 0) ^ (codes[:, 1] > 4)) + (codes[:, 2] < 2) + (real[:, 0] > 0.8)
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), np.minimum(signal, 2))
    levels = np.array([f"v{k}" for k in range(8)], dtype=object)
    cols = {f"c{j}": pd.Categorical(levels[codes[:, j]], categories=levels) for j in range(6)}
    frame = pd.DataFrame(cols)
    frame.loc[rng.random(n) < 0.05, "c0"] = np.nan
    frame["r0"], frame["r1"] = real[:, 0], real[:, 1]
    return frame, y


def fits():
    X, y, score = continuous()
    Xc, yc = categorical()
    Xr = np.round(X, 1)  # few distinct values: hist bins one per value
    return {
        "exact entropy": lambda: DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=3).fit(X, y),
        "exact gini best-first": lambda: DecisionTreeClassifier(
            criterion="gini", max_leaf_nodes=40).fit(X, y),
        "exact max_features": lambda: DecisionTreeClassifier(
            max_features=3, random_state=7, max_depth=8).fit(X, y),
        "exact categorical": lambda: DecisionTreeClassifier(min_samples_leaf=2).fit(Xc, yc),
        "exact regression": lambda: DecisionTreeRegressor(min_samples_leaf=4).fit(X, score),
        "hist entropy": lambda: DecisionTreeClassifier(
            splitter="hist", criterion="entropy", min_samples_leaf=3).fit(X, y),
        "hist few values": lambda: DecisionTreeClassifier(
            splitter="hist", max_leaf_nodes=60).fit(Xr, y),
        "hist categorical": lambda: DecisionTreeClassifier(
            splitter="hist", min_samples_leaf=2).fit(Xc, yc),
        "hist regression": lambda: DecisionTreeRegressor(
            splitter="hist", min_samples_leaf=4).fit(X, score),
        "hist forest tree": lambda: RandomForestClassifier(
            n_estimators=2, splitter="hist", max_features=3, random_state=3).fit(X, y)
        .estimators_[1],
        "exact forest tree": lambda: RandomForestClassifier(
            n_estimators=2, max_features=3, random_state=3).fit(X, y).estimators_[1],
    }


# Generated by the builders of commit 1653112 (before _grow.pxd).
PINNED = {
    "exact entropy": "670a3371770fb943",  # 731 nodes
    "exact gini best-first": "51df75b865fa439f",  # 79 nodes
    "exact max_features": "3844c90e5ffd5fe4",  # 245 nodes (keyed draw)
    "exact categorical": "21e9a219dc40472b",  # 1163 nodes
    "exact regression": "b88eafccafbc65d5",  # 1227 nodes
    "hist entropy": "aac6367ae25b44f1",  # 739 nodes
    "hist few values": "de90e3df136ca96c",  # 119 nodes
    "hist categorical": "8cea1b7c826acb1b",  # 1152 nodes
    "hist regression": "24923453c630e0e0",  # 1203 nodes
    "hist forest tree": "1ac0953c1a4c6e4d",  # 811 nodes (keyed draw)
    "exact forest tree": "a2c4841a2c51acfa",  # 817 nodes (keyed draw)
}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_tree_arrays_pinned(case):
    model = fits()[case]()
    assert digest(model.tree_, isinstance(model, DecisionTreeRegressor)) == PINNED[case]
    np.testing.assert_array_equal(model.tree_.weighted_n_node_samples,
                                  model.tree_.n_node_samples.astype(np.float64))
