"""A generator of click logs (003's case study: estimating click probabilities), with a known
true click model so a learner's log-loss can be compared with the best possible one.

Each impression has five categorical fields with long-tailed (Zipf) frequencies, as ad logs
have: ad, advertiser, site, user and hour/device context. The true model is logistic in the
one-hot encoding of those fields (plus an ad x site interaction for some realism):

    logit P(click) = bias + a[ad] + b[advertiser] + s[site] + u[user] + h[hour] + d[device]
                     + i[ad, site]

with field effects drawn once from normal distributions. `drift=True` redraws the ad effects
halfway through the log (preferences change: 003's note on averaging biased towards recent
weights). The best achievable mean log-loss is the mean entropy of the true probabilities,
returned as `true_log_loss`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_param, check_random_state
from ._base import Dataset, to_frame, to_series

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import RandomStateLike

FIELDS = ("ad", "advertiser", "site", "user", "hour", "device")


def _zipf_ids(rng, n_rows, n_levels, exponent):
    """Ids 0..n_levels-1 with P(id = k) proportional to 1 / (k + 1)^exponent (a long tail)."""
    weights = 1.0 / np.arange(1, n_levels + 1) ** exponent
    return rng.choice(n_levels, size=n_rows, p=weights / weights.sum())


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
    rng = check_random_state(random_state)
    n_advertisers = n_ads // 10
    levels = {"ad": n_ads, "advertiser": n_advertisers, "site": n_sites, "user": n_users,
              "hour": 24, "device": 4}
    ids = {"ad": _zipf_ids(rng, n_rows, n_ads, 1.1), "site": _zipf_ids(rng, n_rows, n_sites, 1.0),
           "user": _zipf_ids(rng, n_rows, n_users, 0.9), "hour": rng.integers(0, 24, n_rows),
           "device": rng.choice(4, size=n_rows, p=[0.55, 0.3, 0.1, 0.05])}
    ids["advertiser"] = ids["ad"] % n_advertisers
    scale = {"ad": 0.6, "advertiser": 0.4, "site": 0.5, "user": 0.3, "hour": 0.15, "device": 0.2}
    effects = {f: rng.normal(scale=scale[f], size=levels[f]) for f in FIELDS}
    interaction = rng.normal(scale=0.3, size=64)        # ad x site, through a small table
    margin = sum(effects[f][ids[f]] for f in FIELDS)
    margin = margin + interaction[(ids["ad"] * 31 + ids["site"]) % 64]
    if drift:
        later = np.arange(n_rows) >= n_rows // 2
        new_ads = rng.normal(scale=scale["ad"], size=n_ads)
        margin = margin + np.where(later, new_ads[ids["ad"]] - effects["ad"][ids["ad"]], 0.0)
    # The bias that makes the average impression click at base_rate.
    margin = margin - np.median(margin) + np.log(base_rate / (1.0 - base_rate))
    proba = 1.0 / (1.0 + np.exp(-margin))
    clicked = (rng.random(n_rows) < proba).astype(np.int64)
    data = np.empty((n_rows, len(FIELDS)), dtype=object)
    for j, f in enumerate(FIELDS):          # one str object per level, shared by its rows
        names = np.array([f"{f}{k}" for k in range(levels[f])], dtype=object)
        data[:, j] = names[ids[f]]
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
