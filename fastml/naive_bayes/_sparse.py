"""Naive Bayes on sparse X (CSR, as fastml._validation.check_array returns it): the categorical
counts, the Gaussian moments and both parts' joint log-likelihoods from the stored entries.

What a sparse zero means: the value 0. In a categorical column it is the level 0 (a one-hot
column has the levels 0 and 1; a count column 0, 1, 2, ...), counted for every row of the
class with no entry stored in that column; in a real (Gaussian) column it is the number 0.
A stored 0 means the same; a stored NaN is a missing cell, as in dense X. So a sparse X gives
the model its dense copy would, and nothing n_samples x n_features is allocated: the work is
a few arrays of the stored entries (rows, codes, weights) and (n_classes, n_features) tables.
"""
import numpy as np

from .._tabular import UNSEEN, codes_for


def entry_rows(X):
    """The row of each stored entry of CSR X."""
    return np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))


def _zero_present(X, rows, sw):
    """Per column: does some row of positive weight hold the value 0 there (no stored entry,
    or a stored 0)? Counted in rows (not weights), so rounding cannot invent a level."""
    positive = sw > 0
    stored = np.bincount(X.indices[positive[rows]], minlength=X.shape[1])
    explicit = np.zeros(X.shape[1], dtype=bool)
    explicit[X.indices[positive[rows] & (X.data == 0)]] = True
    return (stored < np.count_nonzero(positive)) | explicit


def column_levels(X, sw):
    """Per column the sorted distinct values in rows of positive weight (the dense encoder's
    vocabulary of the same data): the stored non-missing values, and 0 where _zero_present."""
    rows = entry_rows(X)
    keep = (sw[rows] > 0) & ~np.isnan(X.data)
    cols, vals = X.indices[keep], X.data[keep]
    zero_cols = np.flatnonzero(_zero_present(X, rows, sw))
    cols = np.concatenate([cols, zero_cols]).astype(np.int64)
    vals = np.concatenate([vals, np.zeros(len(zero_cols), dtype=X.data.dtype)])
    order = np.lexsort((vals, cols))
    cols, vals = cols[order], vals[order]
    distinct = np.ones(len(cols), dtype=bool)
    distinct[1:] = (cols[1:] != cols[:-1]) | (vals[1:] != vals[:-1])
    cols, vals = cols[distinct], vals[distinct]
    bounds = np.searchsorted(cols, np.arange(1, X.shape[1]))
    return np.split(vals, bounds)


def level_codes(cols, vals, levels):
    """The code of each entry (cols[i], vals[i]) in its column's vocabulary levels[col]
    (sorted), UNSEEN where the value is not a level: one sort of the entries with the levels,
    each entry landing after its equal level when there is one."""
    # numeric vocabularies here; one of objects (text, or numbers mixed with text: a model
    # fitted on a table) by the dense encoder's lookup, column by column, below
    numeric = [np.asarray(lv, dtype=np.float64) if lv.dtype.kind in "biuf" else np.zeros(0)
               for lv in levels]
    sizes = np.array([len(lv) for lv in numeric], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    level_cols = np.repeat(np.arange(len(levels)), sizes)
    level_vals = np.concatenate(numeric) if len(levels) else np.zeros(0)
    n_levels = len(level_vals)
    vals = np.asarray(vals, dtype=np.float64)
    key_cols = np.concatenate([level_cols, cols])
    key_vals = np.concatenate([level_vals, vals])
    is_entry = np.concatenate([np.zeros(n_levels, dtype=bool), np.ones(len(cols), dtype=bool)])
    order = np.lexsort((is_entry, key_vals, key_cols))
    # the latest level at or before each position of the sorted keys (levels are already in
    # (column, value) order, so their indices increase along it)
    latest = np.maximum.accumulate(np.where(order < n_levels, order, -1))
    entries = is_entry[order]                       # the sorted positions of the entries
    entry, level = order[entries] - n_levels, latest[entries]
    found = level >= 0
    found[found] &= (level_cols[level[found]] == cols[entry[found]]) & \
        (level_vals[level[found]] == vals[entry[found]])
    codes = np.full(len(cols), UNSEEN, dtype=np.int64)
    codes[entry[found]] = level[found] - offsets[cols[entry[found]]]
    for j in (j for j, lv in enumerate(levels) if lv.dtype.kind not in "biuf"):
        mine = cols == j
        codes[mine] = codes_for(vals[mine], levels[j])
    return codes


def category_counts(X, y, sw, levels, n_classes):
    """(n_classes, total levels) weighted counts of each column's levels (levels: the
    vocabularies, in the count table's column order): the stored values by their codes, the
    level 0 of each column also for the rows of the class without an entry there."""
    d = X.shape[1]
    sizes = np.array([len(lv) for lv in levels], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    width = int(offsets[-1])
    rows = entry_rows(X)
    w, cls = sw[rows], y[rows]
    counted = np.flatnonzero(~np.isnan(X.data))
    codes = level_codes(X.indices[counted], X.data[counted], levels)
    counted, codes = counted[codes >= 0], codes[codes >= 0]   # (unseen: rows of weight 0)
    keys = cls[counted] * width + offsets[X.indices[counted]] + codes
    counts = np.bincount(keys, weights=w[counted], minlength=n_classes * width).reshape(
        n_classes, width)
    class_weight = np.bincount(y, weights=sw, minlength=n_classes)
    stored = np.bincount(cls * d + X.indices, weights=w, minlength=n_classes * d).reshape(
        n_classes, d)
    implicit = np.maximum(class_weight[:, None] - stored, 0.0)
    zero = level_codes(np.arange(d), np.zeros(d), levels)
    has = zero >= 0
    counts[:, offsets[:-1][has] + zero[has]] += implicit[:, has]
    return counts


def categorical_jll(X, table, table_offsets, levels, out):
    """out (n, K) += sum over the columns of log P(x_j | k), from the table of
    _CategoricalPart.finalize (per column its levels' rows, then the unseen level's). Each row
    starts from the sum of the columns' level-0 terms, and each stored entry swaps its
    column's 0 term for its own (a missing cell's for none). -inf terms (smoothing="none")
    are counted apart from the finite ones, so a swap never computes inf - inf."""
    d = X.shape[1]
    zero = level_codes(np.arange(d), np.zeros(d), levels)
    zero_rows = np.where(zero >= 0, table_offsets[:-1] + zero, table_offsets[1:] - 1)
    present = ~np.isnan(X.data)
    codes = np.full(X.nnz, UNSEEN, dtype=np.int64)
    codes[present] = level_codes(X.indices[present], X.data[present], levels)
    own_rows = np.where(codes >= 0, table_offsets[X.indices] + codes,
                        table_offsets[X.indices + 1] - 1)
    own = table[own_rows]
    own[~present] = 0.0                      # a missing cell adds no term
    _add_swapped_terms(X, table[zero_rows], own, out)


def _add_swapped_terms(X, zero_terms, own, out):
    """out (n, K) += the sum of the columns' terms at 0 (zero_terms (d, K)), with each stored
    entry's own term (own (nnz, K)) in place of its column's: finite parts summed, -inf terms
    counted (a row with any -inf term is -inf)."""
    rows = entry_rows(X)
    replaced = zero_terms[X.indices]
    finite = np.where(np.isneginf(zero_terms), 0.0, zero_terms).sum(axis=0)
    infinite = np.isneginf(zero_terms).sum(axis=0)
    delta = np.where(np.isneginf(own), 0.0, own) - np.where(np.isneginf(replaced), 0.0,
                                                           replaced)
    count = np.isneginf(own).astype(np.int64) - np.isneginf(replaced)
    n = X.shape[0]
    for k in range(out.shape[1]):
        total = finite[k] + np.bincount(rows, weights=delta[:, k], minlength=n)
        n_inf = infinite[k] + np.bincount(rows, weights=count[:, k], minlength=n)
        out[:, k] += np.where(n_inf > 0, -np.inf, total)


def gaussian_moments(X, y, sw, n_classes):
    """The moments of _GaussianPart (count, shift, mean about the shift, M2; each (K, d)) of
    the non-missing values, zeros included, with shift 0: the means from the stored sums over
    the counts, then M2 from the stored values' squared deviations plus the zeros' (each
    mean^2), two passes over the stored entries as the dense kernel's centered sums are."""
    d = X.shape[1]
    rows = entry_rows(X)
    w, cls, cols = sw[rows], y[rows], X.indices
    values = X.data.astype(np.float64)
    present = ~np.isnan(values)
    keys = cls * d + cols

    def per_cell(weights, where):
        return np.bincount(keys[where], weights=weights[where],
                           minlength=n_classes * d).reshape(n_classes, d)

    class_weight = np.bincount(y, weights=sw, minlength=n_classes)
    count = np.maximum(class_weight[:, None] - per_cell(w, ~present), 0.0)
    stored = per_cell(w, present)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, per_cell(w * values, present) / np.where(count > 0, count,
                                                                            1.0), 0.0)
    deviation = np.where(present, values - mean[cls, cols], 0.0)
    m2 = per_cell(w * deviation * deviation, present) + \
        np.maximum(count - stored, 0.0) * mean * mean
    return count, np.zeros_like(mean), mean, m2


def gaussian_jll(X, kernel_mean, a, b, out):
    """out (n, K) += sum over the columns of a - b (x_j - mean)^2 (_GaussianPart's tables,
    each (K, d)): every row from the columns' terms at 0, each stored entry's own term in
    place of its column's (none for a missing cell)."""
    zero_terms = (a - b * kernel_mean * kernel_mean).T              # (d, K)
    cols = X.indices
    values = X.data.astype(np.float64)[:, None]
    own = a.T[cols] - b.T[cols] * (values - kernel_mean.T[cols]) ** 2
    own[np.isnan(X.data)] = 0.0
    _add_swapped_terms(X, zero_terms, own, out)
