"""Issue 14 part 5: categorical splits that do not fragment the data.

Data (issue14_data): 400,000 rows (BENCH_CAT_N) with 10 categorical columns of 8 levels and 5
real columns, 3 classes; the class bins a score that counts, for 4 of the categorical columns,
whether the row's level is in a fixed random half of that column's levels, plus whether
x0 + x1/2 > 0; 10% of the labels are redrawn at random (so about 0.933 is the best accuracy).
tests/test_tree_categorical_split.py grows the same data, smaller.

Models, criterion entropy unless the row says gini, min_samples_leaf=5, one thread
(threadpoolctl and OpenMP):
fastml on category columns with categorical_split="multiway" (ID3, the default) and "binary",
each also with 000's chi-square pruning (max_pchance=0.01: fully grown trees fit the label
noise); scikit-learn on one-hot columns and on the ordinal codes. Times include the encoding (pandas
categories for fastml, OneHotEncoder for scikit-learn). Accuracy on 100,000 held-out rows.
Run: pytest bench/bench_tree_categorical.py --benchmark-only

The accuracy table over the other generators (GENERATORS: halves with 4 / 20 levels or a
1,000-level noise ID column, scores), as bench/README.md shows it:
python bench/bench_tree_categorical.py ["generator name" ...]
"""
import os

import numpy as np
import pytest

from conftest import record

N = int(os.environ.get("BENCH_CAT_N", 400_000))
N_TEST = 100_000
CATEGORICAL = [f"c{j}" for j in range(10)]


def issue14_data(n, seed):
    """(X, y): X a DataFrame of 10 pandas category columns (levels v0..v7) and 5 floats."""
    return halves_data(n, seed)


def halves_data(n, seed, levels=8, noise=0.1, id_levels=0):
    """issue14_data's kind of data with `levels` levels per categorical column and `noise` of
    the labels redrawn: the class bins a score counting, for 4 of the 10 categorical columns,
    whether the row's level is in a fixed random half of the levels, plus whether
    x0 + x1/2 > 0. id_levels > 0 adds a column "id" of that many levels drawn at random (an
    identifier: pure noise with many levels)."""
    halves = np.array([np.random.default_rng(12345 + j).permutation(levels) < levels // 2
                       for j in range(10)])
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, levels, size=(n, 10))
    real = rng.normal(size=(n, 5))
    in_half = halves[np.arange(10), codes]
    score = in_half[:, :4].sum(axis=1) + (real[:, 0] + 0.5 * real[:, 1] > 0)
    y = np.digitize(score, [1.5, 3.5])
    y = np.where(rng.random(n) < noise, rng.integers(0, 3, n), y)
    frame = categorical_frame(codes, levels, real)
    if id_levels:
        frame["id"] = categorical_frame(rng.integers(0, id_levels, size=(n, 1)), id_levels)["c0"]
    return frame, y


def scores_data(n, seed, levels=8, noise=0.1):
    """Each level of 4 of the 10 categorical columns carries a fixed random score vector over
    the 3 classes; the class is the argmax of the row's 4 vectors summed plus (x0 + x1/2) times
    (1, 0, -1); `noise` of the labels redrawn. Unlike halves, no two-group structure exists."""
    scores = np.array([np.random.default_rng(54321 + j).normal(size=(levels, 3))
                       for j in range(4)])
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, levels, size=(n, 10))
    real = rng.normal(size=(n, 5))
    total = scores[np.arange(4), codes[:, :4]].sum(axis=1)
    total += np.outer(real[:, 0] + 0.5 * real[:, 1], [1.0, 0.0, -1.0])
    y = total.argmax(axis=1)
    y = np.where(rng.random(n) < noise, rng.integers(0, 3, n), y)
    return categorical_frame(codes, levels, real), y


def categorical_frame(codes, levels, real=None):
    """A DataFrame of category columns c0.. (levels v0..) from codes, then float columns r0.."""
    import pandas as pd
    names = np.array([f"v{k}" for k in range(levels)], dtype=object)
    frame = pd.DataFrame({f"c{j}": pd.Categorical(names[codes[:, j]], categories=names)
                          for j in range(codes.shape[1])})
    for j in range(0 if real is None else real.shape[1]):
        frame[f"r{j}"] = real[:, j]
    return frame


# The other generators of bench/README.md's table (name: (function, keyword arguments, rows)).
GENERATORS = {
    "issue14: halves, 8 levels, 10% noise": (halves_data, {}, 400_000),
    "halves, 4 levels, 20% noise": (halves_data, {"levels": 4, "noise": 0.2}, 200_000),
    "halves, 20 levels": (halves_data, {"levels": 20}, 200_000),
    "halves + a 1,000-level noise ID column": (halves_data, {"id_levels": 1000}, 200_000),
    "scores, 8 levels": (scores_data, {}, 200_000),
    "scores, 12 levels, 25% noise": (scores_data, {"levels": 12, "noise": 0.25}, 200_000),
}


@pytest.fixture(scope="module")
def data():
    X, y = issue14_data(N, 0)
    Xt, yt = issue14_data(N_TEST, 1)
    return X, y, Xt, yt


def model_for(who, categorical=CATEGORICAL):
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier as SkTree
    criterion = "gini" if "gini" in who else "entropy"
    if who.startswith("fastml"):
        from fastml.tree import DecisionTreeClassifier
        return DecisionTreeClassifier(criterion=criterion, min_samples_leaf=5,
                                      categorical_split=who.split()[1],
                                      max_pchance=0.01 if "max_pchance" in who else None)
    encoder = (OneHotEncoder(sparse_output=False) if who.startswith("sklearn one-hot")
               else OrdinalEncoder())
    return make_pipeline(make_column_transformer((encoder, categorical), remainder="passthrough"),
                         SkTree(criterion=criterion, min_samples_leaf=5, random_state=0))


@pytest.mark.parametrize("who", ["fastml binary", "fastml binary max_pchance=0.01",
                                 "fastml multiway", "fastml multiway max_pchance=0.01",
                                 "sklearn one-hot", "sklearn ordinal",
                                 "fastml binary gini", "sklearn one-hot gini"])
def test_tree_categorical_split(benchmark, data, who, single_thread):
    X, y, Xt, yt = data
    model = model_for(who)
    benchmark.pedantic(lambda: model.fit(X, y), rounds=1, iterations=1, warmup_rounds=0)
    tree = model.tree_ if hasattr(model, "tree_") else model[-1].tree_
    # the "fastml" row is the ratios' base: binary mode is the one issue 14 asks to compare
    record(benchmark, f"tree categorical split {N} rows 10x8 levels + 5 real, 3 classes",
           "fastml" if who == "fastml binary" else who,
           accuracy=model.score(Xt, yt), nodes=tree.node_count)


TABLE_MODELS = ["fastml binary", "sklearn one-hot", "fastml binary gini", "sklearn one-hot gini",
                "fastml multiway"]


def accuracy_table(seed=0, names=None):
    """bench/README.md's table: held-out accuracy (N_TEST rows) of TABLE_MODELS on each
    generator (training seed `seed`, test seed `seed` + 1), one thread; markdown rows."""
    from threadpoolctl import threadpool_limits
    lines = ["| data (rows) | " + " | ".join(TABLE_MODELS) + " |",
             "|---" * (len(TABLE_MODELS) + 1) + "|"]
    for name in names or GENERATORS:
        make, kwargs, n = GENERATORS[name]
        X, y = make(n, seed, **kwargs)
        Xt, yt = make(N_TEST, seed + 1, **kwargs)
        categorical = [c for c in X.columns if X[c].dtype == "category"]
        scores = []
        with threadpool_limits(1):
            for who in TABLE_MODELS:
                scores.append(model_for(who, categorical).fit(X, y).score(Xt, yt))
        lines.append(f"| {name} ({n:,}) | " + " | ".join(f"{a:.4f}" for a in scores) + " |")
        print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":  # python bench/bench_tree_categorical.py [generator names]
    import sys
    print("\n".join(accuracy_table(names=sys.argv[1:] or None)))
