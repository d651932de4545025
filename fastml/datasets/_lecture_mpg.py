"""000's discretised MPG table ("A small dataset: Miles Per Gallon"), built from the bundled
Auto MPG data. The deck prints the categories, not the cut points, but it shows twelve cars
twice, raw (slide 53, "Real-Valued inputs") and discretised (slide 17), and those pairs pin
each cut to an interval: mpg 25.0 is bad and 26.0 good, displacement 120 is low and 121
medium, horsepower 79 low / 86 medium / 110 medium / 139 high, weight 2464 low / 2600 medium
/ 3102 medium / 3570 high, acceleration 14 low / 15 medium / 16.5 medium / 18.2 high. The
cuts below are round numbers inside those intervals (120.5 and 25.5 halfway, the deck's
x_i + (x_{i+1} - x_i)/2); with them the twelve cars get slide 17's rows and its six other
rows are categories of real cars:

    mpg           bad < 25.5 <= good
    cylinders     "3", "4", "5", "6", "8" (as categories, as on the slides)
    displacement  low < 120.5 <= medium < 230 <= high
    horsepower    low < 85 <= medium < 120 <= high
    weight        low < 2500 <= medium < 3300 <= high
    acceleration  low < 14.5 <= medium < 17 <= high
    modelyear     70to74 (70-74), 75to78 (75-78), 79to83 (79-83), as on the slides
    maker         america / asia / europe (the data's origin)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ._auto_mpg import load_auto_mpg
from ._base import Dataset, object_matrix, to_frame, to_series

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import XyPair

MPG_GOOD_FROM = 25.5
BINS = {  # column: (cut points, labels); the module docstring says where they come from
    "displacement": ([120.5, 230.0], ["low", "medium", "high"]),
    "horsepower": ([85.0, 120.0], ["low", "medium", "high"]),
    "weight": ([2500.0, 3300.0], ["low", "medium", "high"]),
    "acceleration": ([14.5, 17.0], ["low", "medium", "high"]),
    "model_year": ([75.0, 79.0], ["70to74", "75to78", "79to83"]),
}
FEATURES = ["cylinders", "displacement", "horsepower", "weight", "acceleration", "modelyear",
            "maker"]


def _discretise(values, cuts, labels):
    return np.array(labels, dtype=object)[np.searchsorted(cuts, values, side="right")]


def load_lecture_mpg(*, return_X_y: bool = False, as_frame: bool = False) -> Union[Dataset,
                     XyPair]:
    """The 392 Auto MPG cars as 000's categorical table: 7 categorical attributes (cut points
    in this module's docstring) and mpg "good"/"bad". With return_X_y: X a (392, 7) object
    array of strings (or a DataFrame with as_frame), y an object array of "good"/"bad".

    Parameters
    ----------
    return_X_y : bool, default False
        Return ``(X, y)`` instead of a Dataset.
    as_frame : bool, default False
        pandas DataFrame / Series instead of arrays (needs pandas).

    Returns
    -------
    Dataset or (X, y)

    Raises
    ------
    ImportError
        With as_frame=True when pandas is not installed.

    Examples
    --------
    >>> from fastml.datasets import load_lecture_mpg
    >>> X, y = load_lecture_mpg(return_X_y=True)
    >>> X.shape, sorted(set(y))
    ((392, 7), ['bad', 'good'])
    """
    data = load_auto_mpg()
    raw = data.data
    columns = {
        "cylinders": np.array([str(int(c)) for c in raw["cylinders"]], dtype=object),
        **{("modelyear" if name == "model_year" else name): _discretise(raw[name], *BINS[name])
           for name in BINS},
        "maker": np.asarray(raw["origin"], dtype=object),
    }
    mpg = np.where(data.target >= MPG_GOOD_FROM, "good", "bad").astype(object)
    if return_X_y:
        if as_frame:
            return to_frame({c: columns[c] for c in FEATURES}), to_series(mpg, "mpg")
        return object_matrix(columns, FEATURES), mpg
    return Dataset(data=to_frame({c: columns[c] for c in FEATURES}) if as_frame
                   else {c: columns[c] for c in FEATURES},
                   target=to_series(mpg, "mpg") if as_frame else mpg, feature_names=list(FEATURES), target_name="mpg",
                   DESCR=__doc__)
