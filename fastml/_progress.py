"""Progress reporting for `verbose=` in the library and the `fastml` command.

One helper serves every long loop (SGD epochs, batch-solver iterations, the trees of a forest,
chunks of a large prediction):

    from .._progress import progress
    with progress(total=max_iter, desc="LogisticRegression", unit="epoch",
                  verbose=self.verbose) as bar:
        for epoch in range(max_iter):
            ...
            bar.update(loss=mean_loss)          # one step, shows the current loss

    for tree in track(range(n_estimators), desc="RandomForest", unit="tree", verbose=v): ...
    for rows in chunks(n_rows, 65536, desc="predict", verbose=v): out[rows] = f(X[rows])

verbose=0 (or False/None): nothing is printed, and the cost is one no-op call per step.
verbose=1: a bar on stderr, only when stderr is a terminal (a bar in a log file or a pipe is
noise): tqdm's when tqdm is installed (`pip install 'fastml-classic[progress]'`), otherwise one
line "[desc] 3/10 epoch  loss=0.1234  0.52 s" rewritten in place, at most 10 times a second.
verbose>=2: one line per step (a log, no bar), terminal or not, with or without tqdm.
Progress goes to stderr so it never mixes with results printed on stdout.
"""
import numbers
import sys
import time

import numpy as np

__all__ = ["progress", "track", "chunks"]


def _load_tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def check_verbose(verbose):
    """verbose as an int >= 0 (None / False: 0, True: 1); ValueError naming it otherwise."""
    if verbose is None:
        return 0
    if isinstance(verbose, (bool, np.bool_)):
        return int(verbose)
    if not isinstance(verbose, numbers.Integral) or verbose < 0:
        raise ValueError(f"verbose must be an integer >= 0 (0, False or None: silent; 1: a "
                         f"progress bar; 2: a line per step); got {verbose!r}")
    return int(verbose)


def progress(total=None, *, desc="", unit="it", verbose=0, file=None):
    """A progress reporter for a loop of `total` steps (None when unknown).

    Returns an object with `update(n=1, **values)` (advance n steps and show the named
    values, e.g. loss=0.25) and `close()`; it is also a context manager that closes itself.
    """
    verbose = check_verbose(verbose)
    stream = file if file is not None else sys.stderr
    if verbose >= 2:
        return _Lines(total, desc, unit, stream)
    if not verbose or not _is_terminal(stream):
        return _Silent()
    tqdm = _load_tqdm()
    if tqdm is None:
        return _InPlace(total, desc, unit, stream)
    return _Bar(tqdm(total=total, desc=desc, unit=unit, file=stream, leave=True,
                     dynamic_ncols=True, mininterval=0.2))


def _is_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def track(iterable, *, total=None, desc="", unit="it", verbose=0, file=None):
    """Yield the items of `iterable`, advancing a progress reporter by one per item."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with progress(total, desc=desc, unit=unit, verbose=verbose, file=file) as bar:
        for item in iterable:
            yield item
            bar.update()


def chunks(n_rows, chunk_rows, *, desc="predict", verbose=0, file=None):
    """Yield `slice`s of at most `chunk_rows` rows covering range(n_rows), with progress in
    rows (for predicting on data too large to process in one block)."""
    chunk_rows = max(1, int(chunk_rows))
    with progress(n_rows, desc=desc, unit="row", verbose=verbose, file=file) as bar:
        for start in range(0, n_rows, chunk_rows):
            stop = min(n_rows, start + chunk_rows)
            yield slice(start, stop)
            bar.update(stop - start)


class _Reporter:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Silent(_Reporter):
    def update(self, n=1, **values):
        pass

    def close(self):
        pass


class _Bar(_Reporter):
    def __init__(self, bar):
        self.bar = bar

    def update(self, n=1, **values):
        if values:
            self.bar.set_postfix(values, refresh=False)
        self.bar.update(n)

    def close(self):
        self.bar.close()


class _Text(_Reporter):
    """The state a text reporter shows: "[desc] 3/10 epoch  loss=0.25  0.52 s"."""

    def __init__(self, total, desc, unit, stream):
        self.total, self.desc, self.unit, self.stream = total, desc, unit, stream
        self.done, self.values = 0, {}
        self.start = time.perf_counter()

    def update(self, n=1, **values):
        self.done += n
        self.values = values or self.values
        self._show()

    def _text(self):
        count = f"{self.done}/{self.total}" if self.total else f"{self.done}"
        shown = "".join(f"  {k}={_fmt(v)}" for k, v in self.values.items())
        elapsed = time.perf_counter() - self.start
        return f"[{self.desc}] {count} {self.unit}{shown}  {elapsed:.2f} s"


class _Lines(_Text):
    """A log: one line per step (verbose >= 2)."""

    def _show(self):
        self.stream.write(self._text() + "\n")
        self.stream.flush()

    def close(self):
        pass


class _InPlace(_Text):
    """One line on a terminal, rewritten in place (carriage return) at most every
    `INTERVAL` seconds, and ended with a newline when the loop closes."""
    INTERVAL = 0.1

    def __init__(self, total, desc, unit, stream):
        super().__init__(total, desc, unit, stream)
        self.shown_at, self.width = None, 0

    def _show(self, force=False):
        now = time.perf_counter()
        if not force and self.shown_at is not None and now - self.shown_at < self.INTERVAL:
            return
        text = self._text()
        self.stream.write("\r" + text.ljust(self.width))   # pad over a longer earlier text
        self.stream.flush()
        self.shown_at, self.width = now, len(text)

    def close(self):
        self._show(force=True)
        self.stream.write("\n")
        self.stream.flush()


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
