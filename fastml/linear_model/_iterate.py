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
    use_tol = tol is not None and tol > 0
    best, stale, n_run = np.inf, 0, 0
    with progress(max_iter, desc=desc, unit=unit, verbose=verbose) as bar:
        for i in range(first, first + max_iter):
            watched, shown, done = step(i)
            n_run += 1
            bar.update(**shown)
            if done:
                return n_run
            if use_tol and watched is not None:
                stale = stale + 1 if watched > best - tol else 0
                best = min(best, watched)
                if stale >= n_iter_no_change:
                    return n_run
    if max_iter_warning:
        warnings.warn(max_iter_warning, ConvergenceWarning)
    return n_run
