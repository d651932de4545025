"""Tabular input with categorical columns → one float64 matrix of numbers and integer codes.

`TabularEncoder` is the shared front door for estimators that take categorical attributes
natively (decision trees; naive Bayes can reuse it):
- which columns are categorical: "auto" = pandas category / object / string / bool columns, or
  the columns of an object array that hold strings; or an explicit list of column names,
  indices, or a boolean mask;
- each categorical column gets a vocabulary learned at fit (`categories_[j]`, sorted) and is
  encoded as float codes 0..L-1; a missing value (None, NaN, pandas NA) becomes NaN, and a value
  never seen at fit becomes -1.0 (UNSEEN), so a model can tell "missing" from "new";
- numeric columns pass through as float64 with NaN for missing; infinity is rejected.
Plain numeric input (float/int arrays, numeric frames) takes the fast path of check_array.
"""
import numpy as np

from ._validation import _is_pandas_frame, check_array, feature_names_of

UNSEEN = -1.0


def _is_missing_scalar(v):
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN, pandas NA (raises TypeError for NA: treated below)
    except TypeError:
        return True


def _column_is_categorical(dtype, values):
    kind = getattr(dtype, "kind", None)
    if str(dtype) in ("category", "string", "str") or kind in ("O", "U", "S", "b"):
        if kind == "O":  # an object column of numbers is numeric
            return any(isinstance(v, (str, bytes, bool, np.bool_)) for v in values
                       if not _is_missing_scalar(v))
        return True
    return False


class TabularEncoder:
    """Encode mixed numeric / categorical tables; see the module docstring."""

    def __init__(self, categorical_features="auto"):
        self.categorical_features = categorical_features

    def _columns(self, X, name="X"):
        """A list of 1-D columns, and the column names (strings or None)."""
        if _is_pandas_frame(X):
            return [X.iloc[:, j] for j in range(X.shape[1])], list(X.columns), list(X.dtypes)
        arr = np.asarray(X) if not hasattr(X, "to_numpy") else X.to_numpy()
        if arr.dtype.kind == "c":
            raise ValueError(f"Complex data not supported: {name} is complex")
        if arr.ndim == 1:
            raise ValueError(f"{name} is 1-D (shape {arr.shape}); expected 2-D (n_samples, "
                             f"n_features). Reshape with X.reshape(-1, 1)")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}")
        return [arr[:, j] for j in range(arr.shape[1])], None, [arr.dtype] * arr.shape[1]

    def _resolve_mask(self, columns, names, dtypes):
        spec, n = self.categorical_features, len(columns)
        if isinstance(spec, str) and spec == "auto":
            return np.array([_column_is_categorical(dt, np.asarray(c, dtype=object)[:1000])
                             for c, dt in zip(columns, dtypes)], dtype=bool)
        if spec is None:
            return np.zeros(n, dtype=bool)
        spec = list(spec)
        mask = np.zeros(n, dtype=bool)
        if spec and all(isinstance(s, (bool, np.bool_)) for s in spec):
            if len(spec) != n:
                raise ValueError(f"categorical_features mask has {len(spec)} entries; X has {n} "
                                 f"columns")
            return np.array(spec, dtype=bool)
        for s in spec:
            if isinstance(s, str):
                if names is None or s not in names:
                    raise ValueError(f"categorical_features names column {s!r}, which X does not "
                                     f"have (columns: {names})")
                mask[names.index(s)] = True
            elif isinstance(s, (int, np.integer)) and -n <= s < n:
                mask[s] = True
            else:
                raise ValueError(f"categorical_features entry {s!r} is not a column name or an "
                                 f"index in range for {n} columns")
        return mask

    def _is_plain_numeric(self, X):
        if _is_pandas_frame(X):
            return all(getattr(dt, "kind", "O") in "biuf" for dt in X.dtypes)
        return hasattr(X, "dtype") and getattr(X, "dtype").kind in "biuf"

    def fit(self, X):
        self.fit_transform(X)
        return self

    def fit_transform(self, X):
        if X is None:
            raise ValueError("X is None; expected an array of shape (n_samples, n_features)")
        names = feature_names_of(X)
        self.feature_names_ = (list(names) if names is not None else None)
        if self._is_plain_numeric(X) and not self._explicit():
            out = check_array(X, allow_nan=True, dtype=np.float64)
            self.categorical_mask_ = np.zeros(out.shape[1], dtype=bool)
            self.categories_ = [None] * out.shape[1]
            self.n_features_ = out.shape[1]
            self._fill_names()
            return out
        columns, col_names, dtypes = self._columns(X)
        self.categorical_mask_ = self._resolve_mask(columns, col_names, dtypes)
        self.categories_ = [self._vocabulary(c) if cat else None
                            for c, cat in zip(columns, self.categorical_mask_)]
        self.n_features_ = len(columns)
        self._fill_names()
        return self._encode(columns)

    def transform(self, X, owner="TabularEncoder"):
        """Encode X with the vocabulary learned at fit; `owner` names the model in errors."""
        if self._is_plain_numeric(X) and not self.categorical_mask_.any():
            out = check_array(X, allow_nan=True, dtype=np.float64)
        else:
            out = self._encode(self._columns(X)[0])
        if out.shape[1] != self.n_features_:
            raise ValueError(f"X has {out.shape[1]} features, but {owner} is expecting "
                             f"{self.n_features_} features as input (the number seen at fit)")
        return out

    def _explicit(self):
        spec = self.categorical_features
        return not (spec is None or (isinstance(spec, str) and spec == "auto"))

    def _fill_names(self):
        if self.feature_names_ is None:
            self.feature_names_ = [f"x{j}" for j in range(self.n_features_)]

    @staticmethod
    def _vocabulary(column):
        values = [v for v in np.asarray(column, dtype=object) if not _is_missing_scalar(v)]
        try:
            return np.array(sorted(set(values)), dtype=object)
        except TypeError:  # mixed types: order by their text
            return np.array(sorted(set(values), key=str), dtype=object)

    def _encode(self, columns):
        n = len(columns[0]) if columns else 0
        if n == 0:
            raise ValueError("X has 0 samples; at least 1 required")
        out = np.empty((n, len(columns)), dtype=np.float64)
        for j, col in enumerate(columns):
            if j < len(self.categorical_mask_) and self.categorical_mask_[j]:
                out[:, j] = self._codes(col, self.categories_[j])
            else:
                out[:, j] = self._numeric(col, j)
        if np.isinf(out).any():
            raise ValueError("X contains infinity; fastml needs finite values")
        return out

    @staticmethod
    def _codes(column, vocabulary):
        lookup = {v: float(k) for k, v in enumerate(vocabulary)}
        if hasattr(column, "cat"):  # pandas category: map the few categories, then gather
            per_category = np.array([lookup.get(v, UNSEEN) for v in column.cat.categories] +
                                    [np.nan], dtype=np.float64)
            return per_category[column.cat.codes.to_numpy()]  # code -1 (missing) → last: NaN
        values = np.asarray(column, dtype=object)
        return np.array([np.nan if _is_missing_scalar(v) else lookup.get(v, UNSEEN)
                         for v in values], dtype=np.float64)

    @staticmethod
    def _numeric(column, j):
        if hasattr(column, "to_numpy"):
            column = column.to_numpy(dtype=np.float64, na_value=np.nan)
        values = np.asarray(column)
        try:
            if values.dtype == object:
                return np.array([np.nan if _is_missing_scalar(v) else float(v) for v in values])
            return values.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"column {j} is not numeric and was not declared categorical: "
                            f"argument must be a string or a number the column's kind allows "
                            f"(pass categorical_features)") from None
