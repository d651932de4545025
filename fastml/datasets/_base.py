"""Small helpers shared by the loaders: a dict with attribute access, and the frame switch."""
import numpy as np

from .._extras import require


class Dataset(dict):
    """A loaded data set: `data`, `target`, `feature_names`, `target_name`, `DESCR`
    (keys and attributes both work, as with scikit-learn's Bunch).

    Examples
    --------
    >>> d = Dataset(target=[1, 2])
    >>> d.target is d["target"]
    True
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return list(self.keys())


def to_frame(columns):
    """A pandas DataFrame of the column dict (pandas is optional: a clear error without it)."""
    return require("pandas", "pandas", "as_frame=True").DataFrame(columns)


def to_series(values, name):
    """A pandas Series of the values named name (as_frame's target)."""
    return to_frame({name: values})[name]


def object_matrix(columns, names):
    """Columns of mixed types as one 2-D object array (strings stay strings)."""
    out = np.empty((len(columns[names[0]]), len(names)), dtype=object)
    for j, name in enumerate(names):
        out[:, j] = columns[name]
    return out
