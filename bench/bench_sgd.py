"""The SGD family at issue 13's sizes, fastml next to scikit-learn in one session, one thread:
logistic SGD, the perceptron and the averaged perceptron (5 epochs, shuffled) at 300k x 100 and
1M x 100 with fastml's block shuffle (shuffle="block", the default) and its full shuffle
(shuffle=True), and fastml's n_jobs=2 at both shuffles (parameter mixing over two threads,
issue 13: wall time is what it buys). Quality: held-out log-loss next to the optimum (L-BFGS to
tol 1e-8), or held-out accuracy. FASTML_BENCH_SGD_ROWS="300000,1000000" sets the sizes.

`python bench/bench_sgd.py` times n_jobs=1 against n_jobs=2 interleaved in one process (wall
and CPU minima of FASTML_BENCH_SGD_ROUNDS rounds, default 5) with the held-out quality of each,
at the default shuffle="block" (plus a shuffle=True row for logistic SGD): the table of
bench/README.md's "n_jobs=2" sections. FASTML_BENCH_WAIT_IDLE=1 starts each pair
only once /proc/loadavg shows no other runnable task (threads only pay on an idle machine:
the scheduler shares a busy one between sessions, not threads).

`python bench/bench_sgd.py sklearn` times fastml's default fits against scikit-learn's
SGDClassifier, interleaved round by round (whole fit() CPU and wall minima, wall median, and
the median over rounds of each round's CPU-time ratio, whose two fits ran back to back): the
table of bench/README.md's "SGD per row" section."""
import os
import time
import warnings

import numpy as np
import pytest

from conftest import record
from fastml import LogisticRegression, Perceptron
from fastml.metrics import log_loss

SIZES = [int(s) for s in os.environ.get("FASTML_BENCH_SGD_ROWS", "300000,1000000").split(",")]
N_FEATURES = 100
ALPHA = 1e-6


def _problem(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n + n // 5, N_FEATURES))
    w = rng.standard_normal(N_FEATURES) / np.sqrt(N_FEATURES)
    y = (X @ w + 0.3 + rng.logistic(size=len(X)) > 0).astype(np.int64)
    return X[:n], y[:n], X[n:], y[n:]


_cache = {}


def data(n):
    if n not in _cache:
        _cache.clear()                          # one size in memory at a time
        X, y, X_test, y_test = _problem(n)
        best = LogisticRegression(alpha=ALPHA, tol=1e-8, max_iter=500).fit(X, y)
        _cache[n] = X, y, X_test, y_test, log_loss(y_test, best.predict_proba(X_test),
                                                    best.classes_)
    return _cache[n]


def _options(who):
    """fastml's options named in a `who` label: the shuffle and n_jobs."""
    return dict(shuffle="block" if "block" in who else True,
                n_jobs=2 if "n_jobs=2" in who else None)


def logistic(who):
    return LogisticRegression(solver="sgd", alpha=ALPHA, max_iter=5, tol=None, random_state=0,
                              **_options(who))


def perceptron(who, average=False):
    return Perceptron(max_iter=5, tol=None, random_state=0, average=average, **_options(who))


def held_out(model, X_test, y_test):
    return log_loss(y_test, model.predict_proba(X_test), model.classes_)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("who", ["fastml shuffle=True", "fastml shuffle='block'",
                                 "fastml shuffle=True n_jobs=2",
                                 "fastml shuffle='block' n_jobs=2", "scikit-learn SGDClassifier"])
def test_logistic_sgd(benchmark, single_thread, n, who):
    X, y, X_test, y_test, optimum = data(n)
    if who.startswith("fastml"):
        model = logistic(who)
    else:
        from sklearn.linear_model import SGDClassifier
        model = SGDClassifier(loss="log_loss", alpha=ALPHA, max_iter=5, tol=None,
                              random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, f"logistic SGD {n} x 100, 5 epochs", who,
           log_loss=held_out(model, X_test, y_test), optimum=optimum)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("who", ["fastml shuffle=True", "fastml shuffle='block'",
                                 "fastml shuffle=True n_jobs=2",
                                 "fastml shuffle='block' n_jobs=2", "scikit-learn"])
def test_perceptron(benchmark, single_thread, n, average, who):
    X, y, X_test, y_test, _ = data(n)
    if who.startswith("fastml"):
        model = perceptron(who, average)
    else:
        from sklearn.linear_model import SGDClassifier
        model = SGDClassifier(loss="perceptron", penalty=None, learning_rate="constant",
                              eta0=1.0, average=average, max_iter=5, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, f"{'averaged ' if average else ''}perceptron {n} x 100, 5 epochs", who,
           accuracy=float(np.mean(model.predict(X_test) == y_test)))


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


# main()'s rows: the task, its model, and fastml's shuffle (the default "block", and the full
# permutation for logistic SGD, where the gather of shuffled rows dominates)
MAIN_TASKS = [("logistic SGD", logistic, "block"), ("logistic SGD", logistic, "shuffle=True"),
              ("perceptron", perceptron, "block"),
              ("averaged perceptron", lambda who: perceptron(who, average=True), "block")]


def main(rounds=int(os.environ.get("FASTML_BENCH_SGD_ROUNDS", "5"))):
    """n_jobs=1 and n_jobs=2 interleaved, round by round: wall and CPU minima, quality."""
    from threadpoolctl import threadpool_limits
    print(f"load average before: {os.getloadavg()}")
    print("| task | shuffle | n_jobs | wall min (s) | CPU min (s) | speed-up (wall) | held-out |")
    print("|---|---|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for n in SIZES:
            X, y, X_test, y_test, optimum = data(n)
            for task, make, shuffle in MAIN_TASKS:
                times = {1: [], 2: []}
                models = {}
                for _ in range(rounds):
                    if os.environ.get("FASTML_BENCH_WAIT_IDLE") == "1":
                        _wait_until_idle()
                    for n_jobs in (1, 2):
                        models[n_jobs] = make(f"fastml {shuffle} n_jobs={n_jobs}")
                        wall, cpu = time.perf_counter(), time.process_time()
                        models[n_jobs].fit(X, y)
                        times[n_jobs].append((time.perf_counter() - wall,
                                              time.process_time() - cpu))
                for n_jobs in (1, 2):
                    wall = min(t[0] for t in times[n_jobs])
                    cpu = min(t[1] for t in times[n_jobs])
                    model = models[n_jobs]
                    quality = (f"log-loss {held_out(model, X_test, y_test):.5f} "
                               f"(optimum {optimum:.5f})" if task == "logistic SGD" else
                               f"accuracy {np.mean(model.predict(X_test) == y_test):.4f}")
                    speedup = min(t[0] for t in times[1]) / wall
                    print(f"| {task} {n} x {N_FEATURES}, 5 epochs | {shuffle} | {n_jobs} | "
                          f"{wall:.3f} | {cpu:.3f} | {speedup:.2f}x | {quality} |", flush=True)
    print(f"load average after: {os.getloadavg()}")


def _sklearn_sgd(task):
    from sklearn.linear_model import SGDClassifier
    if task == "logistic SGD":
        return SGDClassifier(loss="log_loss", alpha=ALPHA, max_iter=5, tol=None, random_state=0)
    return SGDClassifier(loss="perceptron", penalty=None, learning_rate="constant", eta0=1.0,
                         average=task == "averaged perceptron", max_iter=5, tol=None,
                         random_state=0)


def versus_sklearn(rounds=int(os.environ.get("FASTML_BENCH_SGD_ROUNDS", "5"))):
    """fastml's default fits (shuffle="block") and scikit-learn's SGDClassifier interleaved,
    round by round, one thread: whole fit() minima and medians, held-out quality of each."""
    from threadpoolctl import threadpool_limits
    makers = {"logistic SGD": lambda who: logistic(who),
              "perceptron": lambda who: perceptron(who),
              "averaged perceptron": lambda who: perceptron(who, average=True)}
    print(f"load average before: {os.getloadavg()}")
    print("| task | fastml CPU min / wall min / median (s) | scikit-learn CPU min / wall min / "
          "median (s) | ratio (CPU min) | ratio per round (CPU), median | held-out fastml, "
          "scikit-learn |")
    print("|---|---|---|---|---|---|")
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in SIZES:
            X, y, X_test, y_test = _problem(n)
            for task, make in makers.items():
                times = {"fastml": [], "sklearn": []}
                for _ in range(rounds):
                    models = {"fastml": make("fastml shuffle='block'"),
                              "sklearn": _sklearn_sgd(task)}
                    for who, model in models.items():
                        wall, cpu = time.perf_counter(), time.process_time()
                        model.fit(X, y)
                        times[who].append((time.process_time() - cpu,
                                           time.perf_counter() - wall))
                cells, quality = {}, []
                for who, model in models.items():
                    cpu, wall = min(t[0] for t in times[who]), min(t[1] for t in times[who])
                    cells[who] = (cpu, f"{cpu:.3f} / {wall:.3f} / "
                                       f"{np.median([t[1] for t in times[who]]):.3f}")
                    quality.append(f"log-loss {held_out(model, X_test, y_test):.4f}"
                                   if task == "logistic SGD" else
                                   f"accuracy {np.mean(model.predict(X_test) == y_test):.4f}")
                # each round's two fits ran back to back: their ratio cancels the VM's drift
                paired = np.median([s[0] / f[0] for f, s in zip(times["fastml"],
                                                                times["sklearn"])])
                print(f"| {task} {n} x {N_FEATURES} | {cells['fastml'][1]} | "
                      f"{cells['sklearn'][1]} | {cells['sklearn'][0] / cells['fastml'][0]:.2f}x "
                      f"| {paired:.2f}x | {', '.join(quality)} |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    import sys
    versus_sklearn() if sys.argv[1:] == ["sklearn"] else main()
