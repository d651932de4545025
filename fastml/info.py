"""The information-theoretic quantities of the decision-tree lectures, as public functions.

000 / 001 / 002 (Guestrin, "Decision Trees"):
    H(Y)      = - sum_i P(Y=y_i) log2 P(Y=y_i)                                   (entropy)
    H(Y|X)    = sum_j P(X=x_j) H(Y | X=x_j)                           (conditional entropy)
    IG(X)     = H(Y) - H(Y|X)                                          (information gain)
    H(Y|X:t)  = P(X<t) H(Y|X<t) + P(X>=t) H(Y|X>=t),  IG*(Y|X) = max_t IG(Y|X:t)
                with candidate thresholds t = x_i + (x_{i+1} - x_i)/2 between sorted values
    p_chance  = Pearson chi-square test of independence of the (value x class) table (000's
                "MaxPchance" pruning; the maker table gives 7.2%).

These are plain numpy (they are for reading and teaching); the tree builder computes the same
numbers from integer counts in compiled code, and the tests check that the two agree.

Missing values in `x` are left out of these quantities: what NaiveBayes and the trees treat as
missing (None, NaN -- np.float32 NaN among objects too --, pandas' NA and NaT), found by the
same function (`fastml._tabular.missing_mask`). A label (`y`, or the sequence given to
`entropy`) cannot be missing: the estimators refuse a missing label at fit (there is no class
to count it in), and leaving such rows out here would silently describe other data than the
tree learns from, so a missing label is a ValueError that names it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional, Sequence, TYPE_CHECKING, Tuple, Union

import numpy as np

from ._plans import Statistics
from ._router import backend_for
from ._tabular import missing_mask, refuse_missing_labels
from ._validation import check_param

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import ArrayLike, MatrixLike, VectorLike

__all__ = ["entropy", "conditional_entropy", "information_gain", "best_threshold",
           "chi2_test", "information_gain_table", "InformationGainTable"]

# The tie rule of fastml's trees, defined once: two splits whose information gains (bits per
# row; squared target units per row for regression trees) differ by less than GAIN_TIE are
# tied, and the first one wins. It absorbs the round-off of summing n log n terms in a
# different order, far below any gain that matters (1e-10 bits over 1e6 rows is 1e-4 bits).
# best_threshold below and the compiled builder (fastml/tree/_builder_fast.pyx) both use it.
GAIN_TIE = 1e-10


def _entropy_of_counts(counts, base=2.0):
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size == 0 or counts.max() <= 0:
        return 0.0
    # Divide by the largest count before summing: entropy depends only on the proportions,
    # and counts near 1e308 would overflow the total to inf (and p to 0, giving NaN).
    counts = counts / counts.max()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum() / np.log(base)) + 0.0  # one class: 0.0, not -0.0


def _as_labels(values, name):
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr


def _as_class_labels(values, name):
    """`_as_labels` for labels: a missing one (None, NaN, pd.NA, NaT) is a ValueError."""
    arr = _as_labels(values, name)
    refuse_missing_labels(arr, name)
    return arr


def _check_base(base):
    """The base of the logarithm: a finite number > 0 other than 1 (log(1) = 0 gave inf,
    a negative base NaN, 0 gave -0.0)."""
    check_param("base", base, low=0, low_inclusive=False)
    if base == 1:
        raise ValueError("base must not be 1 (log 1 = 0: no unit of information); got 1")
    return base


def _class_counts(y):
    _, counts = np.unique(y, return_counts=True)
    return counts


def entropy(labels_or_counts: ArrayLike, base: float = 2, *, counts: bool = False) -> float:
    """H(Y) in bits (base 2, the lectures' unit) of a sequence of labels.

    Parameters
    ----------
    labels_or_counts : sequence of labels, sequence of counts, or mapping {class: count}
        Labels cannot be missing (see the module docstring).
    base : float, default=2
        The base of the logarithm: > 0 and not 1.
    counts : bool, default=False
        Read the sequence as class counts (finite, non-negative; any size up to 1e308).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a label is missing (None, NaN, pd.NA, NaT), a count is negative or not finite, or
        `base` is not a finite number > 0 other than 1.

    Examples
    --------
    >>> round(entropy(["t"] * 5 + ["f"]), 3), round(entropy([5, 1], counts=True), 3)  # 001
    (0.65, 0.65)
    >>> entropy({"heads": 1e308, "tails": 1e308})
    1.0
    """
    _check_base(base)
    if isinstance(labels_or_counts, Mapping):
        labels_or_counts, counts = list(labels_or_counts.values()), True
    if counts:
        c = np.asarray(labels_or_counts, dtype=np.float64)
        if c.ndim != 1 or (c < 0).any() or not np.isfinite(c).all():
            raise ValueError("counts must be a 1-D sequence of finite non-negative numbers")
        return _entropy_of_counts(c, base)
    y = _as_class_labels(labels_or_counts, "labels")
    return _entropy_of_counts(_class_counts(y), base)


def _pair(y, x, base):
    _check_base(base)
    y, x = _as_class_labels(y, "y"), _as_labels(x, "x")
    if len(y) != len(x):
        raise ValueError(f"y and x have different lengths: {len(y)} and {len(x)}")
    keep = ~missing_mask(x)
    return y[keep], x[keep]


def conditional_entropy(y: VectorLike, x: VectorLike, base: float = 2) -> float:
    """H(Y|X) = sum_j P(X=x_j) H(Y|X=x_j) for a discrete attribute x.

    Parameters
    ----------
    y, x : 1-D sequences of the same length
        Rows with x missing (None, NaN, pd.NA, NaT) are left out; y cannot be missing.
    base : float, default=2
        The base of the logarithm: > 0 and not 1.

    Returns
    -------
    float

    Examples
    --------
    >>> conditional_entropy([0, 0, 1, 1], ["a", "a", "b", "b"])
    0.0
    """
    y, x = _pair(y, x, base)
    if len(y) == 0:
        return 0.0
    _, inverse = np.unique(x, return_inverse=True)
    total = 0.0
    for j in range(inverse.max() + 1):
        part = y[inverse == j]
        total += len(part) / len(y) * entropy(part, base)
    return total


def information_gain(y: VectorLike, x: VectorLike, threshold: Optional[float] = None,
                     base: float = 2) -> float:
    """IG(Y|X) = H(Y) - H(Y|X); with a threshold t, IG(Y|X:t) of the binary test X < t.

    Parameters
    ----------
    y, x : 1-D sequences of the same length (rows with x missing -- None, NaN, pd.NA, NaT --
        are left out; y cannot be missing)
    threshold : float, optional
    base : float, default=2
        The base of the logarithm: > 0 and not 1.

    Returns
    -------
    float

    Examples
    --------
    >>> information_gain([0, 0, 1, 1], [1.0, 2.0, 3.0, 4.0], threshold=2.5)
    1.0
    """
    y, x = _pair(y, x, base)
    if threshold is not None:
        x = np.asarray(x, dtype=np.float64) < threshold
    return entropy(y, base) - conditional_entropy(y, x, base)


def best_threshold(x: VectorLike, y: VectorLike, base: float = 2) -> Tuple[float, float]:
    """(t, IG*(Y|X)) for a real attribute: the split point t = x_i + (x_{i+1} - x_i)/2 between
    consecutive distinct sorted values with the largest IG(Y|X:t); on ties (gains within
    GAIN_TIE bits of the largest, the compiled builder's rule) the smallest such t. Returns (nan, 0.0) when x takes a single value.

    The lectures' sorted sweep, vectorized: sort once, count the classes of each run of equal
    values, and a cumulative sum gives the class counts left of every cut at once (O(n log n)
    instead of one pass over the data per candidate).

    Parameters
    ----------
    x : 1-D sequence of numbers (missing rows -- NaN, None, pd.NA -- are left out)
    y : 1-D sequence of labels, the same length (none missing)
    base : float, default=2
        The base of the logarithm: > 0 and not 1.

    Returns
    -------
    (threshold, gain) : tuple of floats

    Examples
    --------
    >>> best_threshold([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    (2.5, 1.0)
    """
    y, x = _pair(y, x, base)
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    x = x[order]
    labels = np.unique(y[order], return_inverse=True)[1].reshape(-1)
    new_value = x[1:] != x[:-1]
    cuts = np.flatnonzero(new_value) + 1  # cut i puts x[:cuts[i]] on the left (x < t)
    if len(cuts) == 0:
        return np.nan, 0.0
    run = np.concatenate([[0], np.cumsum(new_value)])  # the run of equal values of each row
    n = len(x)
    h = _n_log2_n(n) - _n_log2_n(np.bincount(labels)).sum()  # n H(Y), in bits
    h_given_cut = (_n_log2_n(cuts) + _n_log2_n(n - cuts)
                   - _class_terms_per_cut(run, labels, len(cuts) + 1))  # n H(Y|X:t)
    gains = (h - h_given_cut) / n / np.log2(base)
    i = np.flatnonzero(gains >= gains.max() - GAIN_TIE)[0]
    return split_point(x[cuts[i] - 1], x[cuts[i]]), float(gains[i])


def _n_log2_n(counts):
    """c log2 c elementwise (0 log 0 = 0): the entropy terms of integer counts."""
    c = np.asarray(counts, dtype=np.float64)
    return c * np.log2(np.maximum(c, 1.0))


_MAX_TABLE = 1 << 22  # cells of one (runs x classes) count table; more classes go in blocks


def _class_terms_per_cut(run, labels, n_runs):
    """For each cut between run j and j+1: sum over classes k of g(left_k) + g(right_k), with
    g(c) = c log2 c and left_k the rows of class k in runs 0..j. Classes are taken in blocks so
    the count table stays small even when y has as many classes as rows."""
    totals = np.bincount(labels)
    out = np.zeros(n_runs - 1)
    block = max(1, _MAX_TABLE // n_runs)
    for lo in range(0, len(totals), block):
        k = min(block, len(totals) - lo)
        mine = (labels >= lo) & (labels < lo + k)
        table = np.bincount(run[mine] * k + labels[mine] - lo, minlength=n_runs * k)
        left = np.cumsum(table.reshape(n_runs, k), axis=0)[:-1]
        out += (_n_log2_n(left) + _n_log2_n(totals[lo:lo + k] - left)).sum(axis=1)
    return out


def split_point(lo: float, hi: float) -> float:
    """The lectures' x_i + (x_{i+1} - x_i)/2, nudged to hi when rounding would leave lo on the
    wrong side of the test x < t, and lo/2 + hi/2 when the gap overflows (the compiled
    builders use the same rule).

    Parameters
    ----------
    lo, hi : float, lo < hi

    Returns
    -------
    float t with lo < t <= hi

    Examples
    --------
    >>> split_point(1.0, 2.0), split_point(1.0, float(np.nextafter(1.0, 2.0))) > 1.0
    (1.5, True)
    """
    lo, hi = float(lo), float(hi)   # numpy scalars would warn on the overflow handled below
    gap = hi - lo
    t = lo + gap / 2.0 if gap != np.inf else lo / 2.0 + hi / 2.0   # the gap overflowed
    if not (lo < t <= hi):
        t = hi
    return float(t)


def chi2_test(contingency_table: ArrayLike) -> Tuple[float, float]:
    """Pearson's chi-square test of independence for a (values x classes) count table.

    Rows and columns that are all zero are dropped; degrees of freedom are (r-1)(c-1).

    Parameters
    ----------
    contingency_table : 2-D array of finite non-negative counts (values x classes)

    Returns
    -------
    (statistic, p_chance) : tuple of floats
        p_chance is the chance of seeing at least this much association if the attribute and
        the class were independent (000: the maker table gives 0.072).

    Examples
    --------
    >>> statistic, p = chi2_test([[10, 0], [0, 10]])
    >>> round(statistic, 1), p < 1e-4
    (20.0, True)
    """
    from scipy.stats import chi2
    if hasattr(contingency_table, "__dask_graph__"):   # a dask crosstab: only the counts come
        contingency_table = contingency_table.compute()
    table = np.asarray(contingency_table, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"contingency_table must be 2-D; got shape {table.shape}")
    if (table < 0).any() or not np.isfinite(table).all():
        raise ValueError("contingency_table must hold finite non-negative counts")
    table = table[(table > 0).any(axis=1)][:, (table > 0).any(axis=0)]
    rows, cols = table.shape
    if rows < 2 or cols < 2:
        return 0.0, 1.0
    # The statistic is proportional to the table's scale: compute it on the table divided by
    # its largest count, then scale back, so counts near 1e308 cannot overflow the sums.
    scale = table.max()
    table = table / scale
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    with np.errstate(over="ignore"):
        statistic = float(((table - expected) ** 2 / expected).sum() * scale)
    return statistic, float(chi2.sf(statistic, (rows - 1) * (cols - 1)))


class InformationGainTable:
    """The lectures' "Information gains using the training set (N records)" table.

    `str(table)` prints it as on the slides.

    Parameters
    ----------
    classes : sequence
        The class labels, in the order of each distribution.
    rows : list of dict
        One per attribute: name, kind ("categorical" / "real"), the values (or the two sides
        "< t" / ">= t"), the class distribution of each value, and the information gain.
    n_records : int

    Attributes
    ----------
    classes, rows, n_records
        As given.

    Examples
    --------
    >>> table = information_gain_table([["a"], ["a"], ["b"], ["b"]], [0, 0, 1, 1])
    >>> table.best(), table.rows[0]["gain"]
    ('x0', 1.0)
    """

    def __init__(self, classes, rows, n_records):
        self.classes, self.rows, self.n_records = list(classes), rows, n_records

    def __str__(self):
        cells = [(row["name"] if k == 0 else "", str(value), " ".join(map(str, dist)),
                  f"{row['gain']:.6g}" if k == 0 else "")
                 for row in self.rows
                 for k, (value, dist) in enumerate(zip(row["values"], row["distribution"]))]
        # the lectures' column widths, widened so that a long name, value or distribution
        # (many classes) never runs into the next column: "1 1" + "0.8" read as "1 10.8"
        widths = [max([minimum] + [len(c[j]) + 2 for c in cells])
                  for j, minimum in enumerate((16, 14, 24))]
        lines = [f"Information gains using the training set ({self.n_records} records)",
                 f"{'values:':<8} " + " ".join(map(str, self.classes)), "",
                 "".join(h.ljust(w) for h, w in zip(("Input", "Value", "Distribution"), widths))
                 + "Info Gain"]
        lines += ["".join(c.ljust(w) for c, w in zip(cell, widths)) + cell[3] for cell in cells]
        return "\n".join(lines)

    __repr__ = __str__

    def best(self):
        """The attribute the tree would split on first (largest gain; first on ties).

        Returns
        -------
        str
        """
        return max(self.rows, key=lambda r: r["gain"])["name"]


def information_gain_table(X: MatrixLike, y: VectorLike, *,
                           feature_names: Optional[Sequence[str]] = None,
                           categorical_features: Union[str, ArrayLike] = "auto") -> InformationGainTable:
    """IG per attribute of X for target y: multiway IG for categorical columns, IG* with its
    threshold for real ones (000's two tables).

    A real attribute's threshold is the split point x_i + (x_{i+1} - x_i)/2 of 000's
    "Choosing threshold split" (as in `best_threshold` and the trees). 000's real-valued
    table prints the upper value x_{i+1} instead ("cylinders < 5" on 40 records that include
    a 5-cylinder car, "acceleration < 18.2", a value of its first row): the same two sides
    of every training row, so the same IG*; only a new value between x_i and x_{i+1} would
    go to another side.

    Parameters
    ----------
    X : DataFrame, 2-D array or object array
        A column with no value at all is refused with an error naming it.
    y : 1-D sequence of labels (none missing)
    feature_names : list of str, optional
    categorical_features : as for DecisionTreeClassifier, default="auto"

    Returns
    -------
    InformationGainTable

    Examples
    --------
    >>> X = [[1.0, "a"], [2.0, "b"], [3.0, "a"], [4.0, "b"]]
    >>> table = information_gain_table(X, ["no", "no", "yes", "yes"], feature_names=["x", "c"])
    >>> [(row["name"], row["gain"]) for row in table.rows]
    [('x', 1.0), ('c', 0.0)]
    """
    backend = backend_for(X)
    if backend is not None:     # a dask collection, say: count reductions where its parts are
        return backend.summarize(_table_plan(feature_names, categorical_features), X, y)
    from ._tabular import TabularEncoder
    enc = TabularEncoder(categorical_features=categorical_features)
    codes = enc.fit_transform(X)
    y = _as_class_labels(y, "y")
    if len(y) != codes.shape[0]:
        raise ValueError(f"X and y have different numbers of samples: {codes.shape[0]} and "
                         f"{len(y)}")
    classes, y_codes = np.unique(y, return_inverse=True)
    names = feature_names if feature_names is not None else enc.feature_names_
    rows = []
    for j, name in enumerate(names):
        col = codes[:, j]
        keep = ~np.isnan(col)
        if not keep.any():
            raise ValueError(f"column {str(name)!r} has no values (every entry is missing): "
                             f"it has no information gain; drop it or fill it in")
        yc, col = y_codes[keep], col[keep]
        if enc.categorical_mask_[j]:
            levels = np.unique(col).astype(int)
            values = [str(enc.categories_[j][k]) for k in levels]
            groups = [col == k for k in levels]
            gain = information_gain(yc, col)
            kind = "categorical"
        else:
            t, gain = best_threshold(col, yc)
            values = [f"< {t:g}", f">= {t:g}"] if not np.isnan(t) else ["(constant)"]
            groups = [col < t, col >= t] if not np.isnan(t) else [np.ones(len(col), bool)]
            kind = "real"
        dist = [np.bincount(yc[g], minlength=len(classes)).tolist() for g in groups]
        rows.append({"name": str(name), "kind": kind, "values": values, "distribution": dist,
                     "gain": float(gain)})
    return InformationGainTable(classes, rows, len(y))


# ---- the table part by part (a Statistics plan of fastml/_plans.py, run by a backend): each
# part counts its (value, class) pairs per column, the counts add up, and the lectures' IG
# (categorical) and IG* sweep over the sorted distinct values (real) run on the sums: equal to
# the table of all rows.

def _table_plan(feature_names, categorical_features):
    import functools
    return Statistics(start=lambda estimator, labels: categorical_features, part=_pair_counts,
                      merge=_add_counts, frames=True,
                      finish=functools.partial(_table_of_counts, feature_names))


def _pair_counts(X, y, w, categorical_features):
    """A part's (rows, [Counter of (value, label) per column, missing values left out] +
    [Counter of labels], the columns' kinds and names by TabularEncoder's rules)."""
    from collections import Counter
    from ._tabular import TabularEncoder, column
    encoder = TabularEncoder(categorical_features=categorical_features).fit(
        X.iloc[:2] if hasattr(X, "iloc") else np.asarray(X)[:2])
    labels = _as_class_labels(y, "y").tolist()
    out = []
    for j in range(X.shape[1]):
        values = np.asarray(column(X, j).to_numpy(dtype=object) if hasattr(X, "iloc")
                            else np.asarray(X)[:, j])
        keep = ~missing_mask(values)
        out.append(Counter(zip(values[keep].tolist(),
                               np.asarray(labels, dtype=object)[keep].tolist())))
    out.append(Counter(labels))
    return len(labels), out, tuple(encoder.categorical_mask_), tuple(encoder.feature_names_)


def _add_counts(a, b):
    if a[2:] != b[2:]:
        raise ValueError("the parts' columns differ in kind (categorical / real) or names; "
                         "give every column one type")
    return a[0] + b[0], [x + y for x, y in zip(a[1], b[1])], a[2], a[3]


def _table_of_counts(feature_names, estimator, counted, schema):
    n_records, columns, mask, names = counted
    classes = np.unique(np.asarray(list(columns[-1])))      # the labels' Counter
    names = feature_names if feature_names is not None else names
    rows = [_table_row(str(name), counts, classes, mask[j])
            for j, (name, counts) in enumerate(zip(names, columns[:-1]))]
    return InformationGainTable(classes, rows, n_records)


def _table_row(name, counts, classes, categorical):
    """One row of the table from a column's (value, class) counts (the formulas above)."""
    from ._tabular import sorted_levels
    if not counts:
        raise ValueError(f"column {name!r} has no values (every entry is missing): it has no "
                         f"information gain; drop it or fill it in")
    index = {c: k for k, c in enumerate(classes.tolist())}
    values = sorted_levels(np.array(list({v for v, _ in counts}), dtype=object)) \
        if categorical else np.unique(np.array([float(v) for v, _ in counts]))
    position = {v: i for i, v in enumerate(values.tolist())}
    table = np.zeros((len(values), len(classes)))
    for (value, label), c in counts.items():
        table[position[value if categorical else float(value)], index[label]] += c
    totals = table.sum(axis=0)
    n = totals.sum()
    h = _n_log2_n(n) - _n_log2_n(totals).sum()         # n H(Y) in bits
    if categorical:
        per_value = table.sum(axis=1)
        h_given = (_n_log2_n(per_value) - _n_log2_n(table).sum(axis=1)).sum()
        return {"name": name, "kind": "categorical", "values": [str(v) for v in values],
                "distribution": table.astype(int).tolist(), "gain": float((h - h_given) / n)}
    if len(values) < 2:
        return {"name": name, "kind": "real", "values": ["(constant)"],
                "distribution": [totals.astype(int).tolist()], "gain": 0.0}
    left = np.cumsum(table, axis=0)[:-1]
    n_left = left.sum(axis=1)
    h_given = (_n_log2_n(n_left) + _n_log2_n(n - n_left)
               - (_n_log2_n(left) + _n_log2_n(totals - left)).sum(axis=1))
    gains = (h - h_given) / n
    i = int(np.flatnonzero(gains >= gains.max() - GAIN_TIE)[0])
    t = split_point(values[i], values[i + 1])
    return {"name": name, "kind": "real", "values": [f"< {t:g}", f">= {t:g}"],
            "distribution": [left[i].astype(int).tolist(),
                             (totals - left[i]).astype(int).tolist()],
            "gain": float(gains[i])}
