"""Trees and forests, fastml next to scikit-learn on the same data (issue 4's targets).

- continuous: 500,000 x 20, 3 classes, criterion entropy, min_samples_leaf=5 (one thread; and
  fastml with n_jobs=2: its large nodes search the features in two OpenMP threads)
- categorical: 500,000 rows, 10 categorical columns of 8 levels + 5 real columns; fastml's
  native multiway split on pandas category columns vs scikit-learn on one-hot columns, the
  encoding included in both
- forest: 100 trees, n_jobs=2 (BENCH_FOREST_N rows x 20, default 100,000)
- forest predict: predict_proba of 100 fully grown trees (fit on BENCH_FOREST_N rows; fastml
  splitter "best" and "hist", scikit-learn criterion="entropy") on the 100,000 held-out rows,
  both libraries at n_jobs=1 and at n_jobs=2 (issue 13: >= 3x scikit-learn)
Sizes can be lowered with BENCH_TREE_N / BENCH_FOREST_N for a quick run. Accuracy is on
100,000 held-out rows.
Run: pytest bench/bench_tree.py --benchmark-only
"""
import os

import numpy as np
import pytest

from conftest import record

N = int(os.environ.get("BENCH_TREE_N", 500_000))
N_FOREST = int(os.environ.get("BENCH_FOREST_N", 100_000))
N_TEST = 100_000


def once(benchmark, fn):
    return benchmark.pedantic(fn, rounds=1, iterations=1, warmup_rounds=0)


@pytest.fixture(scope="module")
def continuous():
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=N + N_TEST, n_features=20, n_informative=10,
                               n_classes=3, random_state=0)
    return X[:N], y[:N], X[N:], y[N:]


@pytest.mark.parametrize("who", ["sklearn", "fastml"])
def test_tree_continuous(benchmark, continuous, who, single_thread):
    X, y, Xt, yt = continuous
    if who == "fastml":
        from fastml.tree import DecisionTreeClassifier
        model = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5)
    else:
        from sklearn.tree import DecisionTreeClassifier
        model = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5, random_state=0)
    once(benchmark, lambda: model.fit(X, y))
    record(benchmark, f"tree continuous {N}x20 entropy msl=5", who,
           accuracy=model.score(Xt, yt), leaves=model.get_n_leaves())


def test_tree_continuous_two_threads(benchmark, continuous):
    from fastml.tree import DecisionTreeClassifier
    X, y, Xt, yt = continuous
    model = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5, n_jobs=2)
    once(benchmark, lambda: model.fit(X, y))
    record(benchmark, f"tree continuous {N}x20 entropy msl=5", "fastml n_jobs=2",
           accuracy=model.score(Xt, yt), leaves=model.get_n_leaves())


def categorical_frame(n, seed):
    import pandas as pd
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, size=(n, 10))
    real = rng.normal(size=(n, 5))
    signal = ((codes[:, 0] % 3 == 0) ^ (codes[:, 1] > 4)) + (codes[:, 2] < 2) + \
        (real[:, 0] + 0.5 * real[:, 1] > 0.8)
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), np.minimum(signal, 2))
    levels = np.array([f"v{k}" for k in range(8)], dtype=object)
    frame = pd.DataFrame({f"c{j}": pd.Categorical(levels[codes[:, j]], categories=levels)
                          for j in range(10)})
    for j in range(5):
        frame[f"r{j}"] = real[:, j]
    return frame, y


@pytest.fixture(scope="module")
def categorical():
    X, y = categorical_frame(N, 0)
    Xt, yt = categorical_frame(N_TEST, 1)
    return X, y, Xt, yt


@pytest.mark.parametrize("who", ["sklearn one-hot", "fastml"])
def test_tree_categorical(benchmark, categorical, who, single_thread):
    X, y, Xt, yt = categorical
    if who == "fastml":
        from fastml.tree import DecisionTreeClassifier
        model = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5)
    else:
        from sklearn.compose import make_column_transformer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder
        from sklearn.tree import DecisionTreeClassifier
        onehot = make_column_transformer(
            (OneHotEncoder(sparse_output=False), [f"c{j}" for j in range(10)]),
            remainder="passthrough")
        model = make_pipeline(onehot, DecisionTreeClassifier(criterion="entropy",
                                                             min_samples_leaf=5,
                                                             random_state=0))
    once(benchmark, lambda: model.fit(X, y))
    record(benchmark, f"tree categorical {N} rows 10x8 levels + 5 real", who,
           accuracy=model.score(Xt, yt))


@pytest.mark.parametrize("who", ["sklearn", "fastml"])
def test_forest(benchmark, continuous, who):
    X, y, Xt, yt = continuous
    X, y = X[:N_FOREST], y[:N_FOREST]
    if who == "fastml":
        from fastml.tree import RandomForestClassifier
        model = RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0)
    else:
        from sklearn.ensemble import RandomForestClassifier
        model = RandomForestClassifier(n_estimators=100, criterion="entropy", n_jobs=2,
                                       random_state=0)
    once(benchmark, lambda: model.fit(X, y))
    record(benchmark, f"forest 100 trees n_jobs=2 {N_FOREST}x20 entropy", who,
           accuracy=model.score(Xt, yt))


@pytest.fixture(scope="module")
def forests(continuous):
    """The three forests of the predict rows, fitted once (2 threads)."""
    from sklearn.ensemble import RandomForestClassifier as SkForest
    from fastml.tree import RandomForestClassifier
    X, y, _, _ = continuous
    X, y = X[:N_FOREST], y[:N_FOREST]
    return {"fastml": RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0),
            "fastml hist": RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0,
                                                  splitter="hist"),
            "sklearn": SkForest(n_estimators=100, criterion="entropy", n_jobs=2,
                                random_state=0)}, (X, y)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("who", ["sklearn", "fastml", "fastml hist"])
def test_forest_predict(benchmark, continuous, forests, who, n_jobs, single_thread):
    models, (X, y) = forests
    model = models[who]
    if not hasattr(model, "classes_"):
        model.fit(X, y)
    model.n_jobs = n_jobs
    Xt, yt = continuous[2], continuous[3]
    model.predict_proba(Xt[:100])       # fastml's compact copies are made on first use
    proba = benchmark.pedantic(lambda: model.predict_proba(Xt), rounds=3, iterations=1)
    record(benchmark, f"forest predict_proba {len(Xt)} rows, 100 trees fit on {N_FOREST}, "
           f"n_jobs={n_jobs}", who, accuracy=np.mean(model.classes_[proba.argmax(1)] == yt))
