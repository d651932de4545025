"""One pass of the batch logistic kernel against one read of X (issue 13's goal: <= 1.3x),
interleaved in one process, one thread, min of CPU time (process_time) over rounds.

    python bench/logistic_kernel_vs_read.py [n:classes ...]       # default 300k/1M x 2, 3, 5
    FASTML_OLD_SO=/path/to/_batch_fast.cpython-*.so python bench/...   # also an older build

Rows: the kernel (`_batch_fast.loss_grad`, K = 1 output for 2 classes, K softmax outputs
otherwise), X.sum(), and with FASTML_OLD_SO the same kernel of another build (loaded under its
own path) with a check that both give the same bits. X is (n, 100) standard normal;
FASTML_BENCH_FLOAT32=1 for float32."""
import importlib.util
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import fastml.linear_model._batch_fast as current  # noqa: E402
from fastml.linear_model._base import OutputLayout  # noqa: E402
from fastml.linear_model._sgd import LOSSES  # noqa: E402

ROUNDS = 10


def load_build(path):
    """Another build's _batch_fast (its own .so file, not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location("fastml.linear_model._batch_fast", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case(n, n_classes, dtype, builds):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 100)).astype(dtype)
    y = rng.integers(0, n_classes, n).astype(np.float64)
    layout = OutputLayout(n_classes, "multinomial")
    K = layout.n_outputs
    W = (rng.standard_normal((K, 100)) * 0.1).astype(dtype)
    b, sw = np.zeros(K, dtype), np.ones(n)
    outputs = {name: (np.empty((K, 100)), np.empty(K)) for name in builds}

    def one_pass(name):
        gW, gb = outputs[name]
        return builds[name].loss_grad(X, y, sw, W, b, gW, gb, LOSSES["log"],
                                      layout.label_offset, layout.reference, 1)

    runs = {name: (lambda name=name: one_pass(name)) for name in builds}
    runs["X.sum()"] = X.sum
    best = dict.fromkeys(runs, np.inf)
    for _ in range(ROUNDS):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    same = ""
    if "old" in builds:
        identical = (one_pass("old") == one_pass("new")
                     and all(np.array_equal(a, b) for a, b in zip(outputs["old"],
                                                                  outputs["new"])))
        same = f"  same bits as old: {identical}"
    read = best["X.sum()"]
    cells = "  ".join(f"{name} {t * 1e3:.1f} ms ({t / read:.2f}x)" for name, t in best.items())
    print(f"{n:>8} x 100 {np.dtype(dtype).name}, {n_classes} classes: {cells}{same}",
          flush=True)


def main(argv):
    cases = [(300_000, 2), (1_000_000, 2), (300_000, 3), (1_000_000, 3), (300_000, 5),
             (1_000_000, 5)]
    if argv:
        cases = [tuple(int(v) for v in arg.split(":")) for arg in argv]
    dtype = np.float32 if os.environ.get("FASTML_BENCH_FLOAT32") else np.float64
    builds = {"new": current}
    if os.environ.get("FASTML_OLD_SO"):
        builds = {"old": load_build(os.environ["FASTML_OLD_SO"]), "new": current}
    print("load average", os.getloadavg())
    with threadpool_limits(1):
        for n, n_classes in cases:
            case(n, n_classes, dtype, builds)
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main(sys.argv[1:])
