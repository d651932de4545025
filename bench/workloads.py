"""Named workloads the benchmarks and bench/README.md refer to.

W1: binary logistic data of 800,000 rows x 100 features (issue 33's "W1"): standard normal
features, labels drawn from a logistic model with weights N(0, 1/d) (margins of unit spread,
no intercept), so about a quarter of the labels disagree with the true model's prediction.
Newton reaches scikit-learn's default tol in 3 iterations on it, L-BFGS in 4. The same
generator at other sizes is "W1-like" (tests/test_sgd_threads.py and tests/test_dask.py use
16,000 rows with weights twice as large).

W3 is bench/bench_hist.py's (make_classification, 20 features, 3 classes)."""
import numpy as np

W1_ROWS, W1_FEATURES = 800_000, 100


def w1(n=W1_ROWS, d=W1_FEATURES, seed=0, dtype=np.float64):
    """(X, y) of W1 (or W1-like at n x d rows)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d) / np.sqrt(d)
    X = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(X @ w)))).astype(np.int64)
    return X.astype(dtype, copy=False), y
