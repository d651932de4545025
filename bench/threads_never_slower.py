"""Every estimator that takes n_jobs, fitted (and, where n_jobs reaches it, predicting) with
n_jobs=1 and n_jobs=2 interleaved round by round in one process: the check of issue 33 that no
path is slower with two threads than with one. A benchmark, not a unit test (it needs two idle
cores to mean anything): it prints a table and exits with status 1 when some estimator's
two-thread time is slower than its one-thread time beyond noise, that is when even the fastest
of its two-thread rounds is more than NOISE (5%) slower than the median one-thread round.

    python bench/threads_never_slower.py            # all rows (a few minutes on 2 cores)
    python bench/threads_never_slower.py newton     # rows whose name contains "newton"

BLAS runs on one thread (threadpoolctl) so that n_jobs alone decides the threads. Set
FASTML_BENCH_WAIT_IDLE=1 to start each pair only when /proc/loadavg shows no other runnable
task: on a machine shared with other work the scheduler splits the cores between processes, not
between one process's threads, and a two-thread fit cannot gain. The load average is printed
before and after. FASTML_BENCH_ROUNDS (default 5) sets the rounds.

The data sets: W1-like rows (bench/workloads.py: Gaussian features, labels from a logistic
model) of 200,000 x 100 for the linear models (5,000 x 10 for the kernel perceptron),
1,000,000 x 100 for GaussianNB, 1,000,000 x 20 integer codes for CategoricalNB, W3
(bench/bench_hist.py's shape, 100,000 x 20, 3 classes; a regression target for the
regressors) for the trees, forests and NaiveBayes, 200,000 x 5 for the polynomial rows."""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import w1  # noqa: E402

NOISE = 0.05
ROUNDS = int(os.environ.get("FASTML_BENCH_ROUNDS", "5"))


def _wait_until_idle():
    """Until four samples 0.1 s apart show one runnable task (this one) on the machine."""
    def runnable():
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])

    def busy():
        samples = []
        for _ in range(4):
            samples.append(runnable())
            time.sleep(0.1)
        return max(samples) > 1

    while busy():
        time.sleep(0.5)


def _data():
    rng = np.random.default_rng(0)
    X, y = w1(200_000)
    X5 = X[:, :50]
    y5 = np.argmax(X5 @ rng.normal(size=(50, 5)) + rng.gumbel(size=(len(X5), 5)), axis=1)
    Xg = rng.standard_normal((1_000_000, 100))
    yg = rng.integers(0, 5, len(Xg))
    codes = rng.integers(0, 10, size=(1_000_000, 20))
    from sklearn.datasets import make_classification
    Xt, yt = make_classification(100_000, 20, n_informative=10, n_classes=3, random_state=0)
    xp = rng.uniform(-1, 1, size=(200_000, 5))
    return dict(w1=(X, y), w1_5=(X5, y5), gauss=(Xg, yg), codes=(codes, yg), w3=(Xt, yt),
                w3_reg=(Xt, Xt[:, 0] * 2 + Xt[:, 1] ** 2 + rng.normal(size=len(Xt))),
                w1_reg=(X, X @ rng.normal(size=100) + rng.normal(size=len(X))),
                poly=(xp, xp @ rng.normal(size=5) + xp[:, 0] ** 3), kernel=(X[:5000, :10],
                                                                           y[:5000]))


class _Transform:
    """PolynomialFeatures as a row of the table: fit and transform."""

    def __init__(self, n_jobs):
        import fastml
        self.model = fastml.PolynomialFeatures(degree=3, n_jobs=n_jobs)

    def fit(self, X, y):
        self.model.fit(X).transform(X)
        return self


def _rows():
    """(name, data key, make(n_jobs), what to time: "fit" or "fit+predict"): every estimator
    that takes n_jobs, and each solver or splitter whose threads differ."""
    import fastml
    L = fastml.LogisticRegression
    sgd = dict(max_iter=3, tol=None, random_state=0)
    return [
        ("LogisticRegression lbfgs", "w1", lambda j: L(n_jobs=j), "fit"),
        ("LogisticRegression gd", "w1", lambda j: L(solver="gd", n_jobs=j), "fit"),
        ("LogisticRegression newton", "w1", lambda j: L(solver="newton", n_jobs=j), "fit"),
        ("LogisticRegression lbfgs 5 classes", "w1_5", lambda j: L(n_jobs=j), "fit"),
        ("LogisticRegression newton 5 classes", "w1_5", lambda j: L(solver="newton", n_jobs=j),
         "fit"),
        ("LogisticRegression sgd", "w1", lambda j: L(solver="sgd", n_jobs=j, **sgd), "fit"),
        ("Perceptron", "w1", lambda j: fastml.Perceptron(n_jobs=j, **sgd), "fit"),
        ("LinearSVM sgd", "w1", lambda j: fastml.LinearSVM(n_jobs=j, **sgd), "fit"),
        ("LinearSVM subgradient", "w1", lambda j: fastml.LinearSVM(
            solver="subgradient", max_iter=10, tol=None, n_jobs=j), "fit"),
        ("LinearRegression normal", "w1_reg", lambda j: fastml.LinearRegression(n_jobs=j),
         "fit+predict"),
        ("LinearRegression sgd", "w1_reg", lambda j: fastml.LinearRegression(
            solver="sgd", n_jobs=j, **sgd), "fit"),
        ("Ridge normal", "w1_reg", lambda j: fastml.Ridge(n_jobs=j), "fit"),
        ("PolynomialRegression degree 3", "poly", lambda j: fastml.PolynomialRegression(
            degree=3, n_jobs=j), "fit+predict"),
        ("PolynomialFeatures degree 3", "poly", _Transform, "fit"),
        ("GaussianNB", "gauss", lambda j: fastml.GaussianNB(n_jobs=j), "fit+predict"),
        ("CategoricalNB", "codes", lambda j: fastml.CategoricalNB(n_jobs=j), "fit+predict"),
        ("NaiveBayes (Gaussian columns)", "w3", lambda j: fastml.NaiveBayes(n_jobs=j),
         "fit+predict"),
        ("KernelPerceptron rbf", "kernel", lambda j: fastml.KernelPerceptron(
            max_iter=1, random_state=0, n_jobs=j), "fit+predict"),
        ("DecisionTreeClassifier best", "w3", lambda j: fastml.DecisionTreeClassifier(
            n_jobs=j), "fit"),
        ("DecisionTreeClassifier hist", "w3", lambda j: fastml.DecisionTreeClassifier(
            splitter="hist", n_jobs=j), "fit"),
        ("DecisionTreeRegressor best", "w3_reg", lambda j: fastml.DecisionTreeRegressor(
            max_depth=12, n_jobs=j), "fit"),
        ("RandomForestClassifier hist 10 trees", "w3", lambda j: fastml.RandomForestClassifier(
            10, splitter="hist", random_state=0, n_jobs=j), "fit+predict"),
        ("RandomForestRegressor 10 trees", "w3_reg", lambda j: fastml.RandomForestRegressor(
            10, max_depth=12, random_state=0, n_jobs=j), "fit+predict"),
    ]


def _run(make, X, y, what):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, y)
        if what == "fit+predict":
            model.predict(X)


def main(selected):
    from threadpoolctl import threadpool_limits
    data = _data()
    rows = [r for r in _rows() if not selected or any(s in r[0] for s in selected)]
    print(f"load average before: {os.getloadavg()}")
    print("| estimator | timed | n_jobs=1 wall median (min) | n_jobs=2 wall median (min) | "
          "speed-up (medians) | verdict |")
    print("|---|---|---|---|---|---|")
    failed = []
    with threadpool_limits(limits=1, user_api="blas"):
        for name, key, make, what in rows:
            X, y = data[key]
            _run(lambda: make(1), X, y, what)          # warm up (imports, first touches)
            times = {1: [], 2: []}
            for _ in range(ROUNDS):
                if os.environ.get("FASTML_BENCH_WAIT_IDLE") == "1":
                    _wait_until_idle()
                for n_jobs in (1, 2):
                    start = time.perf_counter()
                    _run(lambda: make(n_jobs), X, y, what)
                    times[n_jobs].append(time.perf_counter() - start)
            one, two = np.median(times[1]), np.median(times[2])
            slower = min(times[2]) > (1 + NOISE) * one
            if slower:
                failed.append(name)
            print(f"| {name} | {what} | {one:.3f} ({min(times[1]):.3f}) | {two:.3f} "
                  f"({min(times[2]):.3f}) | {one / two:.2f}x | "
                  f"{'SLOWER with 2 threads' if slower else 'ok'} |", flush=True)
    print(f"load average after: {os.getloadavg()}")
    if failed:
        print("slower with n_jobs=2 than with n_jobs=1 beyond noise: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
