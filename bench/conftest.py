"""Shared benchmark plumbing: fastml and its peers run side by side in one session, and at the
end a table of ratios is printed (and written to bench/results.md).

A benchmark declares its place in the table with `record(benchmark, group, who, **quality)`:
`group` names the task (same data, same work), `who` is "fastml" or the peer's name, and
`quality` holds what makes the comparison fair (accuracy, log-loss, RMSE...). The ratio column
is peer time / fastml time (> 1 means fastml is faster), using each one's minimum time; for a
fastml variant (who = "fastml n_jobs=2", say) it is fastml's time / the variant's time.

Run: `pytest bench/ --benchmark-only` (all), or one file / `-k` expression. Threads: BLAS and
OpenMP default to one thread for the whole session (the environment variables below are set
before numpy loads, so no row is unknowingly multi-threaded, peers included); a benchmark that
measures threads asks for them explicitly (`n_jobs=2`, `threadpool_limits(2)`), and its row
says so. The `single_thread` fixture re-applies the limit inside a benchmark. The table's
header records the thread pools that were loaded.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # an explicit setting by the caller wins

import numpy as np  # noqa: E402
import pytest  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "results.md")


def record(benchmark, group, who, **quality):
    benchmark.group = group
    if getattr(benchmark, "stats", None) is not None:  # already ran: fix the stored group too
        benchmark.stats.group = group
    benchmark.extra_info["who"] = who
    for key, value in quality.items():
        benchmark.extra_info[key] = float(value) if np.isscalar(value) else value


@pytest.fixture
def single_thread():
    """Limit BLAS and OpenMP pools to one thread for the duration of a benchmark."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        yield


def _table(benchmarks):
    groups = {}
    for bench in benchmarks:
        who = bench.extra_info.get("who")
        if who is None or bench.stats is None:
            continue
        groups.setdefault(bench.group, []).append((who, bench))
    lines = ["| task | who | min time (s) | ratio (peer / fastml) | quality |",
             "|---|---|---|---|---|"]
    for group in sorted(groups):
        entries = groups[group]
        ours = [b for who, b in entries if who == "fastml"]
        base = ours[0].stats.min if ours else None
        for who, bench in sorted(entries, key=lambda e: e[0] != "fastml"):
            t = bench.stats.min
            if who == "fastml" or base is None:
                ratio = ""
            elif who.startswith("fastml"):      # a fastml variant (e.g. n_jobs=2): speed-up
                ratio = f"speed-up {base / t:.2f}x over fastml"
            else:
                ratio = f"{t / base:.2f}x"
            quality = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                for k, v in bench.extra_info.items() if k != "who")
            lines.append(f"| {group} | {who} | {t:.4f} | {ratio} | {quality} |")
    return "\n".join(lines)


def pytest_sessionfinish(session, exitstatus):
    bs = getattr(session.config, "_benchmarksession", None)
    if bs is None or not bs.benchmarks:
        return
    table = _threads_line() + "\n\n" + _table(bs.benchmarks)
    with open(RESULTS, "w") as f:
        f.write(table + "\n")
    print("\n\nfastml vs peers (ratio > 1: fastml faster)\n" + table)


def _threads_line():
    """The default thread count of every BLAS / OpenMP pool loaded during the session."""
    from threadpoolctl import threadpool_info
    pools = ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info())
    env = ", ".join(f"{v}={os.environ.get(v)}" for v in ("OMP_NUM_THREADS",
                                                         "OPENBLAS_NUM_THREADS"))
    return f"Thread pools at the end of the session: {pools or 'none'} ({env})."
