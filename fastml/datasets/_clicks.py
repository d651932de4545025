"""A generator of click logs (003's case study: estimating click probabilities), with a known
true click model so a learner's log-loss can be compared with the best possible one.

Each impression has five categorical fields with long-tailed (Zipf) frequencies, as ad logs
have: ad, advertiser, site, user and hour/device context. The true model is logistic in the
one-hot encoding of those fields (plus an ad x site interaction for some realism):

    logit P(click) = bias + a[ad] + b[advertiser] + s[site] + u[user] + h[hour] + d[device]
                     + i[ad, site]

with field effects drawn from normal distributions. `drift=True` redraws the ad effects
halfway through the log (preferences change: 003's note on averaging biased towards recent
weights). The best achievable mean log-loss is the mean entropy of the true probabilities,
returned as `true_log_loss`.

Cost grows with the rows, not with the number of levels: a field's ids are drawn by
rejection-inversion (Hormann and Derflinger 1996: exact Zipf variates without a table of the
levels' weights), and a level's effect and its string are made only for levels some row uses
(the effect is a hash of the level and a key drawn from `random_state`, so it is the same
whichever rows use it). A million users or two billion cost the same; only a log too large for
the machine's memory is refused, before anything is allocated.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_param, check_random_state
from ._base import Dataset, to_frame, to_series

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import RandomStateLike

FIELDS = ("ad", "advertiser", "site", "user", "hour", "device")


BYTES_PER_ROW = 6 * 8 + 4 * 8 + 6 * 8 * 3  # the object cells, target / proba / margin, ids


def _zipf_ids(rng, n_rows, n_levels, exponent):
    """Ids 0..n_levels-1 with P(id = k) proportional to 1 / (k + 1)^exponent (a long tail),
    drawn by rejection-inversion: memory and time O(n_rows) whatever n_levels is."""
    s = float(exponent)

    def h(x):                        # the unnormalized weight of rank x (ranks start at 1)
        return np.exp(-s * np.log(x))

    def h_integral(x):               # the integral of h: (x^(1-s) - 1) / (1 - s), stable at s=1
        log_x = np.log(x)
        return _expm1_over(log_x * (1.0 - s)) * log_x

    def h_integral_inverse(y):
        t = np.maximum(y * (1.0 - s), -1.0)
        return np.exp(_log1p_over(t) * y)

    top, bottom = h_integral(1.5) - 1.0, h_integral(n_levels + 0.5)
    squeeze = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0))
    ids = np.empty(n_rows, dtype=np.int64)
    todo = np.arange(n_rows)
    while todo.size:
        u = bottom + rng.random(todo.size) * (top - bottom)
        x = h_integral_inverse(u)
        k = np.clip(np.floor(x + 0.5), 1, n_levels)
        accept = (k - x <= squeeze) | (u >= h_integral(k + 0.5) - h(k))
        ids[todo[accept]] = k[accept].astype(np.int64) - 1
        todo = todo[~accept]
    return ids


def _expm1_over(x):
    """expm1(x) / x, 1 at x = 0."""
    x = np.asarray(x, dtype=np.float64)
    safe = np.where(x == 0.0, 1.0, x)
    return np.where(np.abs(x) < 1e-8, 1.0 + x / 2.0, np.expm1(safe) / safe)


def _log1p_over(x):
    """log1p(x) / x, 1 at x = 0."""
    x = np.asarray(x, dtype=np.float64)
    safe = np.where(x == 0.0, 1.0, x)
    return np.where(np.abs(x) < 1e-8, 1.0 - x / 2.0, np.log1p(safe) / safe)


def _splitmix64(x):
    """The splitmix64 finalizer on a uint64 array (a well-mixed hash of each value)."""
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _level_normals(key, levels):
    """A standard normal per level, a function of (key, level) only (Box-Muller on two hashed
    53-bit uniforms), so an effect does not depend on which other levels the rows use."""
    base = _splitmix64(np.asarray(levels, dtype=np.uint64) * np.uint64(2) ^ np.uint64(key))
    u1 = ((base >> np.uint64(11)).astype(np.float64) + 1.0) / 2.0**53     # in (0, 1]
    u2 = (_splitmix64(base) >> np.uint64(11)).astype(np.float64) / 2.0**53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def _check_fits_in_memory(n_rows):
    """Refuse a log larger than this machine's memory before allocating any of it."""
    need = n_rows * BYTES_PER_ROW
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):   # no sysconf (Windows): numpy will say
        return
    if need > have:
        raise MemoryError(f"make_clicks(n_rows={n_rows}) needs about {need / 2**30:.1f} GiB, "
                          f"more than this machine's {have / 2**30:.1f} GiB of memory; make "
                          f"fewer rows (or several logs of fewer rows)")


def make_clicks(n_rows: int = 100_000, *, n_ads: int = 2_000, n_sites: int = 500,
                n_users: int = 100_000, drift: bool = False, base_rate: float = 0.03,
                random_state: RandomStateLike = None, as_frame: bool = False) -> Dataset:
    """A click log with a known click-probability model.

    Parameters
    ----------
    n_rows : int, default 100_000
        Impressions.
    n_ads, n_sites, n_users : int
        Levels of the long-tailed fields (advertisers are n_ads // 10; hours 24; devices 4).
    drift : bool, default False
        Redraw the ad effects at the middle row, so the click model changes halfway.
    base_rate : float, default 0.03
        The click rate of an average impression (sets the bias).
    random_state : int, Generator or None
    as_frame : bool, default False
        Return pandas DataFrames (needs pandas) instead of object arrays.

    Returns
    -------
    Dataset
        ``data``: (n_rows, 6) strings such as ``"ad17"`` (the fields of FIELDS);
        ``target``: 0/1 clicks; ``proba``: the true click probabilities;
        ``true_log_loss``: the mean entropy of ``proba`` (the best mean log-loss any model
        can reach on average); ``feature_names``; ``DESCR``.

    Examples
    --------
    >>> from fastml.datasets import make_clicks
    >>> log = make_clicks(1000, random_state=0)
    >>> log.data.shape, log.target.shape, sorted(set(log.target.tolist()))
    ((1000, 6), (1000,), [0, 1])
    >>> bool(0 < log.true_log_loss < 0.7)
    True
    """
    for name, value, low in (("n_rows", n_rows, 1), ("n_ads", n_ads, 10),
                             ("n_sites", n_sites, 1), ("n_users", n_users, 1)):
        check_param(name, value, low=low, high=2**31 - 1, integer=True)
    check_param("base_rate", base_rate, low=0.0, low_inclusive=False, high=1.0)
    if base_rate == 1.0:
        raise ValueError("base_rate must be < 1 (a click rate strictly between 0 and 1)")
    _check_fits_in_memory(n_rows)
    rng = check_random_state(random_state)
    n_advertisers = n_ads // 10
    ids = {"ad": _zipf_ids(rng, n_rows, n_ads, 1.1), "site": _zipf_ids(rng, n_rows, n_sites, 1.0),
           "user": _zipf_ids(rng, n_rows, n_users, 0.9), "hour": rng.integers(0, 24, n_rows),
           "device": rng.choice(4, size=n_rows, p=[0.55, 0.3, 0.1, 0.05])}
    ids["advertiser"] = ids["ad"] % n_advertisers
    scale = {"ad": 0.6, "advertiser": 0.4, "site": 0.5, "user": 0.3, "hour": 0.15, "device": 0.2}
    keys = {f: int(rng.integers(2**63)) for f in FIELDS + ("drift",)}
    interaction = rng.normal(scale=0.3, size=64)        # ad x site, through a small table
    # (used levels, each row's index into them): effects and strings for used levels only
    used = {f: np.unique(ids[f], return_inverse=True) for f in FIELDS}
    margin = sum(scale[f] * _level_normals(keys[f], used[f][0])[used[f][1]] for f in FIELDS)
    margin = margin + interaction[(ids["ad"] * 31 + ids["site"]) % 64]
    if drift:
        later = np.arange(n_rows) >= n_rows // 2
        ads, row_ad = used["ad"]
        change = scale["ad"] * (_level_normals(keys["drift"], ads)
                                - _level_normals(keys["ad"], ads))
        margin = margin + np.where(later, change[row_ad], 0.0)
    # The bias that makes the average impression click at base_rate.
    margin = margin - np.median(margin) + np.log(base_rate / (1.0 - base_rate))
    proba = 1.0 / (1.0 + np.exp(-margin))
    clicked = (rng.random(n_rows) < proba).astype(np.int64)
    data = np.empty((n_rows, len(FIELDS)), dtype=object)
    for j, f in enumerate(FIELDS):          # one str object per used level, shared by its rows
        levels, row_level = used[f]
        names = np.array([f"{f}{k}" for k in levels.tolist()], dtype=object)
        data[:, j] = names[row_level]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(proba * np.log(proba) + (1.0 - proba) * np.log1p(-proba))
    out = Dataset(data=data, target=clicked, proba=proba,
                  true_log_loss=float(np.mean(np.nan_to_num(entropy))),
                  feature_names=list(FIELDS), target_name="clicked",
                  DESCR=__doc__)
    if as_frame:
        out["data"] = to_frame({f: data[:, j] for j, f in enumerate(FIELDS)})
        out["target"] = to_series(clicked, "clicked")
    return out
