"""Issue 33's one-pass table: how many reads of X each pass-over-X path costs, one thread.

    python bench/reads_of_x.py                          # this CPU's copies
    FASTML_DISABLE_AVX512=1 python bench/reads_of_x.py  # the AVX2 copies AVX2 machines run

"A read of X" is numpy's X.sum() over the same array (the cost of streaming X from memory once
on this machine), timed in the same rounds. Every figure is a CPU-time minimum over ROUNDS
rounds (FASTML_BENCH_ROUNDS, default 5), the paths and the reads interleaved; BLAS and OpenMP
on one thread (threadpoolctl). Rows: one pass of the batch kernel (a "gd" iteration, an L-BFGS
evaluation) at 1M x 100, float64 and float32, 2 and 5 classes; a default "gd" fit at 1M x 100
against issue 33's 1.3 (T + 3) reads; L-BFGS and Newton on W1 (bench/workloads.py), with
their evaluations (passes) per fit; GaussianNB's fit at 1M x 100 (5 classes) and
CategoricalNB's at 1M x 20 int64 codes (3 classes, 10 levels), against a read of their X."""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import w1  # noqa: E402

ROUNDS = int(os.environ.get("FASTML_BENCH_ROUNDS", "5"))


def cpu_min(fn, read):
    """(min CPU time of fn, min CPU time of read), interleaved over ROUNDS rounds."""
    best, best_read = np.inf, np.inf
    for _ in range(ROUNDS):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
        start = time.process_time()
        read()
        best_read = min(best_read, time.process_time() - start)
    return best, best_read


def kernel_pass(n_classes, dtype):
    from fastml.linear_model import _batch_fast
    from fastml.linear_model._base import OutputLayout
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1_000_000, 100)).astype(dtype)
    layout = OutputLayout(n_classes, "multinomial")
    K = layout.n_outputs
    y = rng.integers(0, n_classes, len(X)).astype(np.float64)
    W, b, sw = rng.standard_normal((K, 100)) * 0.1, np.zeros(K), np.ones(len(X))
    gW, gb = np.empty((K, 100)), np.empty(K)
    t, read = cpu_min(lambda: _batch_fast.loss_grad(X, y, sw, W, b, gW, gb, 0,
                                                    layout.label_offset, layout.reference, 1),
                      X.sum)
    return f"one pass, 1M x 100 {np.dtype(dtype).name}, {n_classes} classes", t, read, ""


class PassCount:
    """Counts the batch kernel's passes (with or without the Hessian) during a fit."""

    def __enter__(self):
        from fastml.linear_model import _logistic
        self.owner, self.original, self.passes = _logistic._batch, _logistic._batch.loss_grad, 0

        def counted(*args, **kwargs):
            self.passes += 1
            return self.original(*args, **kwargs)
        self.owner.loss_grad = counted
        return self

    def __exit__(self, *exc):
        self.owner.loss_grad = self.original


def logistic_fit(name, X, y, goal=None, **params):
    from fastml import LogisticRegression
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with PassCount() as count:
            model = LogisticRegression(**params).fit(X, y)
        t, read = cpu_min(lambda: LogisticRegression(**params).fit(X, y), X.sum)
    note = f"{count.passes} passes, {model.n_iter_} iterations"
    if goal is not None:
        note += f"; goal {goal(model.n_iter_):.1f} reads"
    if params.get("solver", "lbfgs") == "lbfgs":
        note += f"; {t / count.passes / read:.2f} reads per evaluation"
    return name, t, read, note


def naive_bayes_fits():
    from fastml import CategoricalNB, GaussianNB
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1_000_000, 100))
    y = rng.integers(0, 5, len(X))
    t, read = cpu_min(lambda: GaussianNB().fit(X, y), X.sum)
    yield "GaussianNB fit, 1M x 100, 5 classes", t, read, "goal 1.5 reads"
    codes = rng.integers(0, 10, size=(1_000_000, 20))
    yc = rng.integers(0, 3, len(codes))
    t, read = cpu_min(lambda: CategoricalNB().fit(codes, yc), codes.sum)
    yield "CategoricalNB fit, 1M x 20 int64 codes, 3 classes", t, read, "goal 2 reads"


def main():
    from threadpoolctl import threadpool_limits
    from fastml.linear_model import _batch_fast
    copies = (f"multinomial pass {'AVX-512' if _batch_fast.AVX512_COPY else 'portable AVX2'}, "
              f"Newton Hessian {_batch_fast.GRAM_COPY}")
    print(f"load average before: {os.getloadavg()}; {copies}")
    print("| path | CPU min (s) | read of X (s) | reads of X | |")
    print("|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        rows = [kernel_pass(c, t) for c in (2, 5) for t in (np.float64, np.float32)]
        rng = np.random.default_rng(0)
        X = rng.standard_normal((1_000_000, 100))
        y = (X @ (rng.standard_normal(100) / 10) + rng.logistic(size=len(X)) > 0).astype(int)
        rows.append(logistic_fit("default gd fit, 1M x 100", X, y, solver="gd",
                                 goal=lambda T: 1.3 * (T + 3)))
        del X, y
        X, y = w1()
        rows.append(logistic_fit("L-BFGS fit, W1", X, y))
        rows.append(logistic_fit("Newton fit, W1", X, y, solver="newton"))
        del X, y
        rows.extend(naive_bayes_fits())
    for name, t, read, note in rows:
        print(f"| {name} | {t:.4f} | {read:.4f} | {t / read:.2f} | {note} |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
