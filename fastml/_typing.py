"""The names the public API's type hints use (PEP 561: fastml ships ``py.typed``).

Every annotated module starts with ``from __future__ import annotations`` and imports these
names under ``typing.TYPE_CHECKING`` only, so hints are strings at run time: they cost no
import, work on Python 3.9, and tools such as mypy or an IDE read them.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Tuple, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray
from scipy import sparse

#: What ``fit`` and ``predict`` take as X: anything numpy can turn into a 2-D array (lists,
#: ndarrays, pandas DataFrames, Dask collections) or a scipy sparse matrix / array (where the
#: estimator takes CSR).
if TYPE_CHECKING or hasattr(sparse, "sparray"):
    MatrixLike = Union[ArrayLike, sparse.spmatrix, sparse.sparray]
else:  # scipy < 1.11 has no sparray
    MatrixLike = Union[ArrayLike, sparse.spmatrix]

#: Targets and labels: a 1-D array-like (numbers or strings).
VectorLike = ArrayLike

#: A seed, a generator, or None (fresh entropy).
RandomStateLike = Union[int, np.random.Generator, np.random.RandomState, None]

#: A classifier's class_weight: None, "balanced" or a dict {label: weight}.
ClassWeightLike = Union[str, Dict[Any, float], None]

#: A file path.
PathLike = Union[str, "os.PathLike[str]"]

#: The estimator a method returns (``fit`` returns ``self``).
EstimatorT = TypeVar("EstimatorT")

#: What dataset loaders return with ``return_X_y=True``.
XyPair = Tuple[NDArray[Any], NDArray[Any]]

__all__ = ["ArrayLike", "ClassWeightLike", "DTypeLike", "EstimatorT", "MatrixLike", "NDArray",
           "PathLike", "RandomStateLike", "VectorLike", "XyPair"]
