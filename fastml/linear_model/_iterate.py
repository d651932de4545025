"""The iteration loop of every iterative solver in linear_model (SGD epochs, gradient descent,
the SVM's batch subgradient, the voted and kernel perceptrons): one stopping rule, one
max_iter warning, progress through fastml/_progress.py."""
import warnings

import numpy as np

from ..exceptions import ConvergenceWarning
from .._progress import progress


def iterate(step, max_iter, *, desc, unit, verbose=0, tol=None, n_iter_no_change=1, first=0,
            max_iter_warning=None):
    """The iteration loop of every iterative solver in linear_model: run step(i) for
    i = first, first + 1, ... at most `max_iter` times and return how many ran.

    step(i) returns (watched, shown, done): `done` stops the loop (the solver converged by its
    own test); `watched` (None = no such rule) is the value that must keep improving: with
    tol > 0 the loop stops once it has not dropped by more than tol below the best seen for
    `n_iter_no_change` steps in a row. `shown` (a dict) goes to the progress reporter
    (fastml/_progress.py; `verbose`). When max_iter ends the loop and `max_iter_warning` is a
    message, it is issued as a ConvergenceWarning.
    """
    stop, n_run = StopRule(tol, n_iter_no_change), 0
    with progress(max_iter, desc=desc, unit=unit, verbose=verbose) as bar:
        for i in range(first, first + max_iter):
            watched, shown, done = step(i)
            n_run += 1
            bar.update(**shown)
            if done or (watched is not None and stop(watched)):
                return n_run
    if max_iter_warning:
        warnings.warn(max_iter_warning, ConvergenceWarning)
    return n_run


class StopRule:
    """The early-stopping rule of every iterative solver (`iterate`) and of the SGD family's
    passes over parts (fastml.stream's epochs, the Dask mixing rounds): called with each
    iteration's watched value, True once it has not dropped by more than `tol` below the best
    seen for `n_iter_no_change` calls in a row. Never True with tol None or 0."""

    def __init__(self, tol, n_iter_no_change=1):
        self.tol = tol if tol is not None and tol > 0 else None
        self.patience = n_iter_no_change
        self.best, self.stale = np.inf, 0

    def __call__(self, watched):
        if self.tol is None:
            return False
        self.stale = self.stale + 1 if watched > self.best - self.tol else 0
        self.best = min(self.best, watched)
        return self.stale >= self.patience
