"""Feature hashing and hashed logistic SGD on click logs (issue 14, 003's case study) next to
scikit-learn: FeatureHasher on a million 30-token rows (FASTML_BENCH_ROWS overrides the rows),
and the whole click pipeline - hash the log, then logistic SGD - against scikit-learn's
FeatureHasher + SGDClassifier(loss="log_loss"). One thread each. Quality: the matrices are
compared entry for entry; the pipelines by held-out log-loss next to the true model's."""
import os

import numpy as np
import pytest

from conftest import record
from fastml import LogisticRegression
from fastml.datasets import make_clicks
from fastml.feature_extraction import FeatureHasher

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
CLICK_ROWS = min(N_ROWS, 400_000)
ROUNDS = 3


@pytest.fixture(scope="module")
def token_rows():
    """N_ROWS rows of 30 tokens "f<j>=v<level>" with long-tailed levels (a click log's shape)."""
    rng = np.random.default_rng(0)
    vocab = np.array([f"f{j}=v{i}" for j in range(30) for i in range(1000)], dtype=object)
    levels = np.minimum(rng.zipf(1.3, size=(N_ROWS, 30)) - 1, 999)
    return vocab[levels + np.arange(30) * 1000].tolist()


def test_hasher_fastml(benchmark, token_rows, single_thread):
    from sklearn.feature_extraction import FeatureHasher as SkHasher
    X = benchmark.pedantic(FeatureHasher(input_type="string").transform, args=(token_rows,),
                           rounds=ROUNDS, iterations=1)
    reference = SkHasher(input_type="string").transform(token_rows[:20000])
    record(benchmark, f"FeatureHasher {N_ROWS} rows x 30 tokens", "fastml", nnz=X.nnz,
           entries_differing_from_sklearn=int((X[:20000] != reference).nnz))


def test_hasher_sklearn(benchmark, token_rows, single_thread):
    from sklearn.feature_extraction import FeatureHasher as SkHasher
    X = benchmark.pedantic(SkHasher(input_type="string").transform, args=(token_rows,),
                           rounds=ROUNDS, iterations=1)
    record(benchmark, f"FeatureHasher {N_ROWS} rows x 30 tokens", "scikit-learn FeatureHasher",
           nnz=X.nnz)


@pytest.fixture(scope="module")
def clicks():
    log = make_clicks(CLICK_ROWS + 100_000, random_state=0)
    rows = log.data.tolist()
    return rows[:CLICK_ROWS], log.target[:CLICK_ROWS], rows[CLICK_ROWS:], log


def held_out_log_loss(proba, y):
    p = np.clip(proba, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def test_click_pipeline_fastml(benchmark, clicks, single_thread):
    rows, y, test_rows, log = clicks
    hasher = FeatureHasher(2**20, input_type="string")

    def run():
        X = hasher.transform(rows)
        return LogisticRegression(solver="sgd", alpha=1e-6, max_iter=3, tol=None,
                                  random_state=0).fit(X, y)

    model = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    proba = model.predict_proba(hasher.transform(test_rows))[:, 1]
    record(benchmark, f"hashed logistic SGD, {CLICK_ROWS} clicks, 3 epochs", "fastml",
           log_loss=held_out_log_loss(proba, log.target[CLICK_ROWS:]),
           true_model_log_loss=held_out_log_loss(log.proba[CLICK_ROWS:],
                                                 log.target[CLICK_ROWS:]))


def test_click_pipeline_sklearn(benchmark, clicks, single_thread):
    from sklearn.feature_extraction import FeatureHasher as SkHasher
    from sklearn.linear_model import SGDClassifier
    rows, y, test_rows, log = clicks
    hasher = SkHasher(2**20, input_type="string")

    def run():
        X = hasher.transform(rows)
        return SGDClassifier(loss="log_loss", alpha=1e-6, max_iter=3, tol=None,
                             random_state=0).fit(X, y)

    model = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    proba = model.predict_proba(hasher.transform(test_rows))[:, 1]
    record(benchmark, f"hashed logistic SGD, {CLICK_ROWS} clicks, 3 epochs",
           "scikit-learn FeatureHasher + SGDClassifier",
           log_loss=held_out_log_loss(proba, log.target[CLICK_ROWS:]))
