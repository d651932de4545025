"""The Auto MPG data (provenance in data/PROVENANCE.md), read with the standard library."""
from __future__ import annotations

import csv
import os
from typing import TYPE_CHECKING, Union

import numpy as np

from ._base import Dataset, to_frame, to_series

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import XyPair

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
NUMERIC = ["cylinders", "displacement", "horsepower", "weight", "acceleration", "model_year"]
ALL_COLUMNS = ["mpg"] + NUMERIC + ["origin", "name"]


def _read_columns(dropna):
    path = os.path.join(DATA_DIR, "auto_mpg.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if dropna:
        rows = [r for r in rows if r["mpg"] != "" and r["horsepower"] != ""]
    cols = {}
    for name in ["mpg"] + NUMERIC:
        cols[name] = np.array([float(r[name]) if r[name] != "" else np.nan for r in rows])
    for name in ("origin", "name"):
        cols[name] = np.array([r[name] for r in rows], dtype=object)
    return cols


def load_auto_mpg(*, return_X_y: bool = False, as_frame: bool = False,
                  dropna: bool = True) -> Union[Dataset, XyPair]:
    """The Auto MPG data: 392 cars (406 with `dropna=False`, which keeps rows with missing
    mpg / horsepower as NaN).

    return_X_y=True gives (X, y): X the six numeric columns (cylinders, displacement,
    horsepower, weight, acceleration, model_year) as float64, y the mpg. Otherwise a Dataset
    with `data` (all columns but mpg: a dict of arrays, or a DataFrame with as_frame=True),
    `target` (mpg), `feature_names` and `DESCR`.

    Parameters
    ----------
    return_X_y : bool, default False
        Return ``(X, y)`` instead of a Dataset.
    as_frame : bool, default False
        pandas DataFrame / Series instead of arrays (needs pandas).
    dropna : bool, default True
        Leave out the 14 cars whose mpg or horsepower is missing.

    Returns
    -------
    Dataset or (X, y)
        X of shape (392, 6) float64 and y of shape (392,) with return_X_y.

    Raises
    ------
    ImportError
        With as_frame=True when pandas is not installed.

    Examples
    --------
    >>> from fastml.datasets import load_auto_mpg
    >>> X, y = load_auto_mpg(return_X_y=True)
    >>> X.shape, round(float(y.mean()), 2)
    ((392, 6), 23.45)
    """
    cols = _read_columns(dropna)
    if return_X_y:
        if as_frame:
            return to_frame({c: cols[c] for c in NUMERIC}), to_series(cols["mpg"], "mpg")
        X = np.column_stack([cols[c] for c in NUMERIC])
        return X, cols["mpg"]
    features = {c: cols[c] for c in NUMERIC + ["origin", "name"]}
    return Dataset(
        data=to_frame(features) if as_frame else features,
        target=to_series(cols["mpg"], "mpg") if as_frame else cols["mpg"],
        feature_names=NUMERIC + ["origin", "name"],
        target_name="mpg",
        DESCR=open(os.path.join(DATA_DIR, "PROVENANCE.md")).read(),
    )
