"""The hashing trick (003's case study, estimating click probabilities): records of symbolic
features become sparse rows of a fixed width without a vocabulary, so a stream of clicks with
ever-new ad, user and context ids can be learned online (SGD / partial_fit) in bounded memory.

Column of a feature = |MurmurHash3_32(name)| mod n_features, its value's sign flipped when the
hash is negative (alternate_sign), exactly as scikit-learn's FeatureHasher and Vowpal Wabbit's
design (Weinberger et al., "Feature hashing for large scale multitask learning", 2009) do, so a
model trained on one's output can score the other's. The kernel is _hashing_fast.pyx.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Iterable, Optional

import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._validation import _is_pandas_frame, check_param
from . import _hashing_fast

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import DTypeLike, EstimatorT, MatrixLike, VectorLike

INPUT_TYPES = tuple(_hashing_fast.MODES)
MAX_FEATURES = 2**31 - 1   # columns are int32, as in scikit-learn


class FeatureHasher(TransformerMixin, BaseEstimator):
    """Map records of (feature name, value) to a sparse matrix through a hash of the names.

    The output equals ``sklearn.feature_extraction.FeatureHasher`` with the same parameters on
    the same input, entry for entry: the signed 32-bit MurmurHash3 (seed 0) of each name's
    UTF-8 bytes picks the column, a string value ``v`` of feature ``f`` is the token ``"f=v"``
    with value 1, values of 0 are dropped, and entries that land in one column are summed
    (in the output dtype) in the order scikit-learn sums them: scipy sorts each row with
    C++'s ``std::sort`` (unless every row of the call is in order already), which is not
    stable past 16 entries, and fastml makes the same moves as GCC's ``std::sort``. So the
    values are identical bit for bit wherever scipy's sort is GCC's (its Linux wheels). On
    other platforms scipy's C++ library may order three or more colliding non-integer values
    of a row longer than 16 entries differently; such an entry, the sum of m values v_i, is
    then within (m - 1) eps sum |v_i| of scikit-learn's (eps of the output dtype), as any
    order of the sum is of the exact one. The hashing runs in C without a Python object per
    token.

    Parameters
    ----------
    n_features : int, default 2**20
        Columns of the output (1 to 2**31 - 1). Fewer columns mean more collisions.
    input_type : {"dict", "pair", "string"}, default "dict"
        What one sample is: a mapping {name: value}; an iterable of (name, value) pairs; or an
        iterable of names (value 1). A pandas DataFrame is also accepted whatever the
        input_type: each row is the mapping {column name: cell}, so string cells become
        ``"column=value"`` tokens and numeric cells keep their value; missing cells are left
        out (scikit-learn would hash a NaN value).
    dtype : numpy float dtype, default np.float64
        float32 or float64 output values.
    alternate_sign : bool, default True
        Flip the value's sign when the hash is negative, so collisions cancel in expectation
        and inner products are preserved on average.

    Examples
    --------
    >>> from fastml.feature_extraction import FeatureHasher
    >>> h = FeatureHasher(n_features=10)
    >>> h.transform([{"dog": 1, "cat": 2, "elephant": 4}, {"dog": 2, "run": 5}]).toarray()
    array([[ 0.,  0., -4., -1.,  0.,  0.,  0.,  0.,  0.,  2.],
           [ 0.,  0.,  0., -2., -5.,  0.,  0.,  0.,  0.,  0.]])
    >>> h = FeatureHasher(n_features=8, input_type="string")
    >>> h.transform([["dog", "cat", "snake"], ["snake", "dog"]]).toarray()
    array([[ 0.,  0.,  0., -1.,  0., -1.,  0.,  1.],
           [ 0.,  0.,  0., -1.,  0., -1.,  0.,  0.]])
    """

    _takes_records = True     # raw records in, X out (fastml.all_estimators() leaves it out)
    _estimator_type = "transformer"

    def __init__(self, n_features: int = 2**20, input_type: str = "dict",
                 dtype: DTypeLike = np.float64, alternate_sign: bool = True) -> None:
        self.n_features = n_features
        self.input_type = input_type
        self.dtype = dtype
        self.alternate_sign = alternate_sign

    def fit(self: EstimatorT, X: Optional[MatrixLike] = None,
            y: Optional[VectorLike] = None) -> EstimatorT:
        """Check the parameters (the hasher learns nothing); returns self."""
        self._check_params()
        return self

    def transform(self, raw_X: Iterable[Any]) -> Any:
        """Hash the samples of `raw_X` into a CSR matrix (n_samples, n_features).

        Parameters
        ----------
        raw_X : iterable of samples, or a pandas DataFrame
            Samples as `input_type` describes; a generator is read once.

        Returns
        -------
        X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
            Sorted column indices, entries sharing a column summed.
        """
        import scipy.sparse as sp
        dtype = self._check_params()
        single = dtype == np.float32   # values rounded to float32 before they are summed
        if _is_pandas_frame(raw_X):
            indptr, columns, values = self._frame_entries(raw_X)
            indptr, nnz = _hashing_fast.finish_rows(indptr, columns, values, single)
            columns, values = columns[:nnz], values[:nnz]
        else:
            if isinstance(raw_X, (str, bytes)) or not hasattr(raw_X, "__iter__"):
                raise TypeError(f"raw_X must be an iterable of samples; got "
                                f"{type(raw_X).__name__}")
            indptr, columns, values = _hashing_fast.hash_samples(
                raw_X, self.input_type, int(self.n_features), bool(self.alternate_sign), single)
        n_rows = len(indptr) - 1
        if n_rows == 0:
            raise ValueError("FeatureHasher got no samples: cannot hash an empty sequence")
        index_dtype = np.int32 if len(columns) <= np.iinfo(np.int32).max else np.int64
        return sp.csr_matrix((values.astype(dtype, copy=False),
                              columns.astype(index_dtype, copy=False),
                              indptr.astype(index_dtype, copy=False)),
                             shape=(n_rows, int(self.n_features)), dtype=dtype)

    def _check_params(self):
        check_param("n_features", self.n_features, low=1, high=MAX_FEATURES, integer=True)
        check_param("input_type", self.input_type, choices=INPUT_TYPES)
        if not isinstance(self.alternate_sign, (bool, np.bool_)):
            raise TypeError(f"alternate_sign must be True or False; got {self.alternate_sign!r}")
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64; got {self.dtype!r}")
        return dtype

    # ---- DataFrames: hash each column's distinct values once, then gather per row

    def _frame_entries(self, frame):
        n, n_features = len(frame), int(self.n_features)
        width = frame.shape[1]
        cols = np.zeros((n, width), dtype=np.int32)
        vals = np.zeros((n, width), dtype=np.float64)
        for j, name in enumerate(frame.columns):
            cols[:, j], vals[:, j] = self._column_entries(frame.iloc[:, j], str(name),
                                                          n_features)
        keep = vals != 0            # zeros and missing cells (value 0) hold no entry
        indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int64)
        return indptr, np.ascontiguousarray(cols[keep]), np.ascontiguousarray(vals[keep])

    def _column_entries(self, column, name, n_features):
        """(columns, values) of one DataFrame column's cells; value 0 for a missing cell."""
        import pandas as pd
        sign = bool(self.alternate_sign)
        if column.dtype.kind in "biuf":
            v = column.to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isinf(v).any():
                raise ValueError(f"column {name!r} has an infinite value; hashed values must be "
                                 f"finite numbers")
            hashed, signs = _hashing_fast.hash_tokens([name], n_features)
            v = np.nan_to_num(v, nan=0.0)
            return np.full(len(v), hashed[0], dtype=np.int32), v * (signs[0] if sign else 1.0)
        codes, levels = pd.factorize(column, use_na_sentinel=True)
        level_cols, level_vals = self._level_entries(list(levels), name, n_features)
        missing = codes < 0
        codes = np.where(missing, 0, codes)
        if len(levels) == 0:
            return np.zeros(len(codes), dtype=np.int32), np.zeros(len(codes))
        return level_cols[codes], np.where(missing, 0.0, level_vals[codes])

    def _level_entries(self, levels, name, n_features):
        """(column, value) of each distinct cell value: a string is the token "name=value"
        with value 1; a number keeps its value under the column's own name."""
        tokens = [f"{name}={v}" if isinstance(v, str) else name for v in levels]
        for v in levels:
            if not isinstance(v, str) and (not isinstance(v, numbers.Real)
                                           or not np.isfinite(v)):
                raise TypeError(f"column {name!r} holds {v!r} ({type(v).__name__}); cells must "
                                f"be strings or finite numbers")
        hashed, signs = _hashing_fast.hash_tokens(tokens, n_features)
        values = np.array([1.0 if isinstance(v, str) else float(v) for v in levels])
        return hashed, values * (signs if self.alternate_sign else 1.0)
