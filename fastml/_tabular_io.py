"""Reading CSV / Parquet files into typed columns, and `TabularModel`, the estimator plus column
encoding that the `fastml` command fits, saves and predicts with.

Typed columns (`read_table`): a dict {column name: 1-D array}, in file order, with
- numbers (integers too) as float64, a missing cell as NaN;
- text as an object array of str, a missing cell as None (text columns are categorical);
- true/false columns as an object array of bool (categorical), missing as None.
An empty cell is missing (and only an empty cell: "NA" is text). Column names must be unique,
and a column must hold one number or one text value per cell (a Parquet list or struct column,
or integers beyond 2**53 that float64 cannot hold exactly, is a ValueError naming the column).
Parquet is read through
pyarrow; CSV through pyarrow when it is installed, else through the standard library, with the
same typing rules.
"""
import csv
import os

import numpy as np

from ._base import BaseEstimator
from ._extras import require
from ._readers import csv_convert_options
from ._tabular import missing_mask, sorted_levels  # noqa: F401  (missing_mask: for the CLI)

PARQUET_SUFFIXES = (".parquet", ".pq")
_TRUE, _FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")


def read_table(path, text_columns=()):
    """{name: column} from a CSV or Parquet file; see the module docstring for the types.
    text_columns: CSV columns read as text whatever their cells look like (a model's text
    columns, whose values may all look like numbers in a new file)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such data file: {path}")
    parquet = path.lower().endswith(PARQUET_SUFFIXES)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        if parquet:
            require("pyarrow", "pandas", "reading Parquet")
        return _read_csv_stdlib(path, text_columns)
    return _read_arrow(path, parquet, text_columns)


def _read_arrow(path, parquet, text_columns=()):
    import pyarrow as pa
    try:
        if parquet:
            import pyarrow.parquet as pq
            table = pq.read_table(path)
        else:
            import pyarrow.csv as pc
            table = pc.read_csv(path, convert_options=csv_convert_options(
                text_columns=text_columns))
    except (pa.ArrowException, OSError) as exc:  # not a CSV / Parquet file, or malformed
        raise ValueError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
    _check_names(table.column_names, path)
    columns = {name: _arrow_column(name, column, path)
               for name, column in zip(table.column_names, table.columns)}
    return _checked(columns, path)


def _arrow_column(name, column, path):
    """One Arrow column as a typed column; a type fastml cannot take is a ValueError naming
    the column."""
    import pyarrow as pa
    kind = column.type
    if pa.types.is_nested(kind):
        raise ValueError(f"{path}: column {name!r} holds {kind} values (lists or records); "
                         f"fastml needs one number or one text value per cell")
    try:
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
            values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
            return np.where(_null_mask(column), np.nan, values)
        if pa.types.is_boolean(kind):
            return _objects(column.to_pylist())
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            column = column.cast(pa.string())
        return _objects(column.to_pylist())
    except pa.ArrowException as exc:
        if pa.types.is_integer(kind):
            raise ValueError(f"{path}: column {name!r} holds integers beyond 2**53 that "
                             f"float64 cannot represent exactly ({exc}); fastml reads numbers "
                             f"as float64: store the column as text if it is an identifier") \
                from None
        raise ValueError(f"{path}: column {name!r} of type {kind} cannot be read as numbers "
                         f"or text: {exc}") from None


def _null_mask(column):
    return np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _objects(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _read_csv_stdlib(path, text_columns=()):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path} is empty (no header row)")
    header, body = rows[0], rows[1:]
    _check_names(header, path)
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}, line {i}: {len(row)} cells, but the header has "
                             f"{len(header)}")
    columns = {name: _typed([row[j] for row in body], name in text_columns)
               for j, name in enumerate(header)}
    return _checked(columns, path)


def _typed(cells, text=False):
    present = [c for c in cells if c != ""]
    if text:
        return _objects([None if c == "" else c for c in cells])
    try:
        return np.array([float(c) if c != "" else np.nan for c in cells], dtype=np.float64)
    except ValueError:
        pass
    if present and all(c in _TRUE or c in _FALSE for c in present):
        return _objects([None if c == "" else c in _TRUE for c in cells])
    return _objects([None if c == "" else c for c in cells])


def _check_names(names, path):
    """Column names are unique: a duplicate would silently hide one of the columns."""
    seen = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{path} has two columns named {name!r}; rename one")
        seen.add(name)


def _checked(columns, path):
    if not columns:
        raise ValueError(f"{path} has no columns")
    if len(next(iter(columns.values()))) == 0:
        raise ValueError(f"{path} has a header but no rows")
    return columns


def is_text(column):
    """True for a categorical (object) column."""
    return column.dtype == object


def take_rows(columns, rows):
    return {name: col[rows] for name, col in columns.items()}


class _WrappedModel(BaseEstimator):
    """What a model saved by `fastml fit` answers through its estimator, once its
    `transform` has turned table columns into the estimator's input."""

    @property
    def _estimator_type(self):
        return getattr(self.estimator, "_estimator_type", None)

    def predict(self, columns):
        return self.estimator.predict(self.transform(columns))

    def predict_proba(self, columns):
        return self.estimator.predict_proba(self.transform(columns))

    @property
    def classes_(self):
        return self.estimator.classes_

    def _check_fitted_state(self):
        """fastml.load calls this on a restored model (io.py, "Crafted files"): a file must not
        hand predict something other than an estimator, or columns that are not names."""
        if not hasattr(self, "feature_names_"):
            return                                     # not fitted: nothing to check
        names = self.feature_names_
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TypeError("feature_names_ must be a list of column names")
        if not isinstance(self.estimator, BaseEstimator) or \
                not hasattr(self.estimator, "predict"):
            raise TypeError(f"its estimator is a {type(self.estimator).__name__}, not a fastml "
                            f"estimator that predicts")


class TabularModel(_WrappedModel):
    """A fastml estimator together with the way table columns become its input — what
    `fastml fit --out` saves, so `fastml predict` can read the same kind of file.

    Estimators that take categorical attributes natively (a `categorical_features` parameter)
    get the columns as a DataFrame (or an object array without pandas); the others get numbers,
    with each text column one-hot encoded over the values seen at fit (an unseen value is all
    zeros).
    """

    def __init__(self, estimator=None, target=None):
        self.estimator = estimator
        self.target = target

    @classmethod
    def wrap(cls, estimator, feature_names):
        """A TabularModel around an already fitted estimator that takes the named columns
        as they are (a DataFrame, or an object array without pandas)."""
        model = cls(estimator)
        model.feature_names_, model.native_categorical_, model.categories_ = \
            list(feature_names), True, {}
        return model

    def fit(self, columns, y):
        self.feature_names_ = list(columns)
        self.text_columns_ = [name for name, col in columns.items() if is_text(col)]
        self.native_categorical_ = "categorical_features" in self.estimator.get_params()
        self.categories_ = {} if self.native_categorical_ else {
            name: _vocabulary(col) for name, col in columns.items() if is_text(col)}
        self.estimator.fit(self.transform(columns), y)
        return self

    def text_columns(self):
        """The feature columns that held text at fit: a new file must be read with them as
        text, or a column of digit codes ("1", "2", "A") whose new cells all look like numbers
        would reach the model as numbers, which match none of its levels."""
        if hasattr(self, "text_columns_"):
            return list(self.text_columns_)
        if self.native_categorical_:     # a model saved before text_columns_ was kept
            mask = getattr(self.estimator, "categorical_mask_",     # trees
                           getattr(self.estimator, "categorical_features_", None))  # NaiveBayes
            if mask is None:
                return []
            return [n for n, cat in zip(self.feature_names_, mask) if cat]
        return list(self.categories_)

    def input_names(self):
        """Names of the estimator's input columns (after one-hot encoding)."""
        names = []
        for name in self.feature_names_:
            if name in self.categories_:
                names += [f"{name}={v}" for v in self.categories_[name]]
            else:
                names.append(name)
        return names

    def transform(self, columns):
        """The estimator's input for these table columns."""
        missing = [n for n in self.feature_names_ if n not in columns]
        if missing:
            raise ValueError(f"the data has no column {missing[0]!r} (the model was trained on "
                             f"{self.feature_names_})")
        if self.native_categorical_:
            return _frame({n: columns[n] for n in self.feature_names_})
        parts = []
        for name in self.feature_names_:
            col = columns[name]
            if name in self.categories_:
                lookup = {v: k for k, v in enumerate(self.categories_[name])}
                codes = np.array([lookup.get(v, -1) for v in col])
                parts.append((codes[:, None] == np.arange(len(lookup))).astype(np.float64))
            elif is_text(col):
                raise ValueError(f"column {name!r} holds text, but held numbers when the model "
                                 f"was trained")
            else:
                parts.append(col[:, None])
        return np.hstack(parts)



def _vocabulary(column):
    return sorted_levels(column[~missing_mask(column)]).tolist()


def _frame(columns):
    """A pandas DataFrame of the columns when pandas is installed, else a 2-D object array."""
    try:
        import pandas as pd
    except ImportError:
        return np.column_stack([np.asarray(c, dtype=object) for c in columns.values()])
    return pd.DataFrame(columns)


class HashedModel(_WrappedModel):
    """A fastml estimator fed through the hashing trick (003's click data): what
    `fastml fit --hash BITS` saves, so `fastml predict` hashes new rows the same way.

    Each row becomes the record {column: cell} of its feature columns, hashed by
    `fastml.FeatureHasher(n_features)` (signed 32-bit MurmurHash3, alternate signs; the same
    matrix as scikit-learn's FeatureHasher): a text cell ``v`` of column ``c`` is the token
    ``"c=v"`` with value 1; a numeric cell ``x`` is the pair ``(c, x)``, one feature per
    column carrying the number (a true/false cell counts as 1/0, and a 0 adds nothing); a
    missing cell is left out. No vocabulary is learned, so values never seen at fit still
    land in a column, and every row is complete.

    Parameters
    ----------
    estimator : fastml estimator
        Takes the sparse hashed rows (e.g. LogisticRegression).
    n_features : int, default 2**20
        Columns of the hashed matrix.
    target : str, optional
        The name of the target column (for the record).

    Attributes
    ----------
    feature_names_ : list of str
        The table columns hashed, in order.
    """

    _allows_nan = True   # a missing cell is left out of the row's record

    def __init__(self, estimator=None, n_features=2**20, target=None):
        self.estimator = estimator
        self.n_features = n_features
        self.target = target

    def fit(self, columns, y):
        """Hash the table `columns` ({name: 1-D array} or a DataFrame) and fit the
        estimator on it; returns self."""
        self.feature_names_ = list(columns)
        self.estimator.fit(self.transform(columns), y)
        return self

    def hasher(self):
        """The FeatureHasher this model uses (it holds no state besides n_features)."""
        from .feature_extraction import FeatureHasher
        return FeatureHasher(n_features=self.n_features, input_type="dict")

    def transform(self, columns):
        """The hashed CSR matrix (n_rows, n_features) of these table columns."""
        missing = [n for n in self.feature_names_ if n not in columns]
        if missing:
            raise ValueError(f"the data has no column {missing[0]!r} (the model was trained on "
                             f"{self.feature_names_})")
        cols = {n: np.asarray(columns[n]) for n in self.feature_names_}
        try:
            import pandas as pd
        except ImportError:        # one dict per row: slower, the same matrix
            return self.hasher().transform(_records(cols))
        # a DataFrame is hashed column by column, each distinct value once
        return self.hasher().transform(pd.DataFrame(cols, copy=False))

    def input_names(self):
        """The hashed matrix has no column names."""
        return None


def _records(columns):
    """[{name: cell}] per row, missing cells left out (what FeatureHasher's dict input takes)."""
    names = list(columns)
    present = {n: ~missing_mask(c) for n, c in columns.items()}
    n_rows = len(next(iter(columns.values()))) if columns else 0
    return [{n: columns[n][i] for n in names if present[n][i]} for i in range(n_rows)]
