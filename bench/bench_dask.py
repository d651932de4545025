"""fit on dask arrays (issue 11): 2 worker processes on this machine. FASTML_BENCH_DASK_ROWS
sets the rows (default 200,000 x 50; the issue's size is 4,000,000) in 16 partitions.

Rows: exact LogisticRegression(lbfgs) and GaussianNB through fastml's Dask drivers, and, when
dask-ml is installed (it is not a dependency), dask-ml's LogisticRegression(solver="lbfgs")
and Incremental(SGDClassifier(loss="log_loss")) on the same persisted array; the quality
column holds the log-loss on the training rows (and, for the naive Bayes rows, the CPU
seconds of client, scheduler and workers together, which still compare when the machine is
loaded). A separate row measures the per-iteration scheduling overhead: one round of tasks
(one per partition) doing nothing."""
import os
import time

import numpy as np
import pytest

from conftest import record

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import fastml  # noqa: E402

N_ROWS = int(os.environ.get("FASTML_BENCH_DASK_ROWS", 200_000))
D, PARTS = 50, 16


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data(client):
    rng = da.random.default_rng(0)
    w = np.random.default_rng(1).normal(size=D) / np.sqrt(D)
    X = rng.normal(size=(N_ROWS, D), chunks=(-(-N_ROWS // PARTS), D))
    y = (rng.uniform(size=N_ROWS, chunks=X.chunks[0]) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    X, y = client.persist([X, y])
    distributed.wait([X, y])
    return X, y


def log_loss(model, X, y):
    p = np.clip(model.predict_proba(X).compute()[np.arange(len(y)), y], 1e-15, 1)
    return float(-np.mean(np.log(p)))


def test_fastml_lbfgs(benchmark, data):
    X, y = data
    model = benchmark.pedantic(lambda: fastml.LogisticRegression().fit(X, y), rounds=2,
                               iterations=1)
    record(benchmark, f"dask logistic {N_ROWS} x {D}", "fastml",
           log_loss=log_loss(model, X, y.compute()), iterations=model.n_iter_)


def cpu_seconds(client, fit):
    """(fit's result, the CPU seconds it took in this process (client and scheduler) plus
    the workers): a measure that still compares on a loaded machine."""
    def total():
        return time.process_time() + sum(client.run(time.process_time).values())
    start = total()
    result = fit()
    return result, total() - start


def test_fastml_gaussian_nb(benchmark, data, client):
    X, y = data
    cpu = []

    def fit():
        model, seconds = cpu_seconds(client, lambda: fastml.GaussianNB().fit(X, y))
        cpu.append(seconds)
        return model
    model = benchmark.pedantic(fit, rounds=2, iterations=1)
    record(benchmark, f"dask naive Bayes {N_ROWS} x {D}", "fastml",
           log_loss=log_loss(model, X, y.compute()), cpu_s=min(cpu))


def test_dask_ml_lbfgs(benchmark, data):
    dask_ml = pytest.importorskip("dask_ml.linear_model")
    X, y = data
    model = benchmark.pedantic(lambda: dask_ml.LogisticRegression(solver="lbfgs").fit(X, y),
                               rounds=2, iterations=1)
    record(benchmark, f"dask logistic {N_ROWS} x {D}", "dask-ml lbfgs",
           log_loss=log_loss(model, X, y.compute()))


def test_dask_ml_incremental_sgd(benchmark, data, client):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    from sklearn.linear_model import SGDClassifier
    X, y = data
    cpu = []

    def fit():
        model = wrappers.Incremental(SGDClassifier(loss="log_loss", random_state=0))
        model, seconds = cpu_seconds(client, lambda: model.fit(X, y, classes=[0, 1]))
        cpu.append(seconds)
        return model
    model = benchmark.pedantic(fit, rounds=2, iterations=1)
    record(benchmark, f"dask naive Bayes {N_ROWS} x {D}", "dask-ml Incremental(SGD)",
           log_loss=log_loss(model, X, y.compute()), cpu_s=min(cpu))


def test_scheduling_overhead(benchmark, data, client):
    """One round of one task per partition that does nothing: the floor of each lbfgs
    iteration of the distributed objective."""
    from fastml._dask import _Partitions
    X, y = data
    parts = _Partitions(X, y, None)
    try:
        benchmark.pedantic(lambda: parts.map(_nothing), rounds=10, iterations=1)
    finally:
        parts.release()
    record(benchmark, "dask per-iteration overhead", "fastml", partitions=PARTS)


def _nothing(X, y, w):
    return None
