"""fastml: the classic machine-learning algorithms of the lecture decks, with a compiled core.

Estimators follow scikit-learn's conventions (fit / predict / predict_proba / score,
get_params / set_params, learned attributes ending in "_") and live in one subpackage per
family; this module only re-exports the public names.

The algorithms follow five lecture decks, cited in docstrings and tests as "004 slide 12":
`fastml.lectures` maps each deck number (000-004) to its title and topics.
"""
from ._base import BaseEstimator, clone
from ._config import show_config
from .exceptions import (ConvergenceWarning, DivergenceError, ModelFileError, NotFittedError,
                         NotScalable)
from . import (datasets, exceptions, feature_extraction, info, lectures, losses, metrics,
               model_selection)
from .feature_extraction import FeatureHasher
from .io import load, save
from .stream import fit_stream
from .linear_model import *  # noqa: F401,F403
from .linear_model import __all__ as _linear_all
from .tree import *  # noqa: F401,F403
from .tree import __all__ as _tree_all
from .naive_bayes import *  # noqa: F401,F403
from .naive_bayes import __all__ as _nb_all

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)

__all__ = ["BaseEstimator", "ConvergenceWarning", "DivergenceError", "ModelFileError",
           "NotFittedError", "NotScalable", "clone",
           "show_config",
           "datasets", "exceptions", "feature_extraction", "FeatureHasher", "info", "lectures",
           "losses", "metrics", "model_selection", "save", "load", "all_estimators", "fit_stream",
           *_linear_all, *_tree_all, *_nb_all]


def all_estimators():
    """(name, class) of every public estimator that learns from an array X, sorted by name
    (the common tests use it). FeatureHasher, which turns raw records (dicts, token lists)
    into X rather than reading one, is left out; tests/test_feature_hasher.py covers it.

    Returns
    -------
    list of (str, type)

    Examples
    --------
    >>> import fastml
    >>> ("GaussianNB", fastml.GaussianNB) in fastml.all_estimators()
    True
    """
    found = []
    for name in __all__:
        obj = globals().get(name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator) and obj is not BaseEstimator \
                and not getattr(obj, "_takes_records", False):
            found.append((name, obj))
    return sorted(found)
