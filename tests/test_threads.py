"""Thread safety and no process-wide side effects.

- 8 threads calling predict / predict_proba / decision_function / transform on one fitted
  model at the same time get exactly the answers one thread gets (the kernels release the GIL,
  so shared scratch buffers or lazily-built caches would show here);
- fitting and predicting leaves the process's BLAS / OpenMP thread settings as they were
  (threadpoolctl.threadpool_info() compared before and after). The settings are first set to an
  unusual value (3) so a library that resets them to 1 or to its default is caught.
"""
import threading

import numpy as np
import pytest

from _robust import ESTIMATORS, METHODS, fitted, good_data, make

threadpoolctl = pytest.importorskip("threadpoolctl")

N_THREADS = 8
ROUNDS = 3


def answers(est, X):
    return {m: np.asarray(getattr(est, m)(X)) for m in METHODS if hasattr(est, m)}


@pytest.mark.parametrize("cls", [c for _, c in ESTIMATORS], ids=[n for n, _ in ESTIMATORS])
def test_eight_threads_agree_with_one(cls):
    est, _, _ = fitted(cls)
    X, _ = good_data(est, n=3000, seed=1)  # big enough that the kernels run in parallel
    expected = answers(est, X)
    results, errors = [None] * N_THREADS, []
    start = threading.Barrier(N_THREADS)

    def work(i):
        try:
            start.wait()
            results[i] = [answers(est, X) for _ in range(ROUNDS)]
        except BaseException as exc:  # noqa: B902 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for per_thread in results:
        for got in per_thread:
            for method, value in expected.items():
                np.testing.assert_array_equal(got[method], value, err_msg=method)


def thread_settings():
    return sorted((lib["user_api"], lib["internal_api"], lib["filepath"], lib["num_threads"])
                  for lib in threadpoolctl.threadpool_info())


@pytest.mark.parametrize("cls", [c for _, c in ESTIMATORS], ids=[n for n, _ in ESTIMATORS])
def test_fit_and_predict_leave_thread_settings_unchanged(cls):
    est = make(cls)
    X, y = good_data(est, n=300)
    est.fit(X, y)  # loads every library the estimator uses before the comparison
    with threadpoolctl.threadpool_limits(limits=3):
        before = thread_settings()
        assert any(lib[3] == 3 for lib in before) or not before
        make(cls).fit(X, y)
        answers(est, X)
        if hasattr(est, "partial_fit") and cls.__name__ != "LogisticRegression":
            make(cls).partial_fit(X, y, **({"classes": np.unique(y)}
                                           if est._estimator_type == "classifier" else {}))
        after = thread_settings()
    assert after == before


def test_thread_settings_unchanged_while_other_threads_fit():
    """KernelPerceptron and LinearRegression limit BLAS inside their kernels: that limit must
    be scoped to the call (issue 12), also when several fits run at once."""
    from fastml import KernelPerceptron, LinearRegression
    X, y = good_data(make(KernelPerceptron), n=400)
    Xr, yr = good_data(make(LinearRegression), n=400)
    with threadpoolctl.threadpool_limits(limits=3):
        before = thread_settings()
        threads = [threading.Thread(target=lambda: KernelPerceptron(max_iter=2, random_state=0)
                                    .fit(X, y).predict(X)) for _ in range(2)]
        threads += [threading.Thread(target=lambda: LinearRegression().fit(Xr, yr).predict(Xr))
                    for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert thread_settings() == before
