"""The estimator protocol every fastml estimator follows (scikit-learn's conventions).

- The constructor stores its arguments unchanged (no validation there), so `get_params` /
  `set_params` / `clone` work and an estimator can sit in a scikit-learn Pipeline or grid search.
- `fit` learns attributes whose names end in "_" and returns self.
- Classifiers encode any hashable labels (ints, strings, bools) to 0..K-1 once, in `_encode_labels`.
- Everything an estimator holds is plain Python / numpy, so it pickles (and travels to workers).

scikit-learn is not a runtime dependency: `__sklearn_tags__` builds scikit-learn's tag object only
when scikit-learn asks for it (and so is importable).
"""
from __future__ import annotations

import copy
import functools
import inspect
from typing import TYPE_CHECKING, Any, Dict, Optional

import numpy as np

from .exceptions import ConvergenceWarning, NotFittedError, not_fitted_error  # noqa: F401
from ._router import route
from ._validation import check_target

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import ArrayLike, EstimatorT, MatrixLike, VectorLike


# The private state a fit / partial_fit keeps beside its fitted attributes (the names ending
# in "_"): together they are what a fit owns, and all a failed fit or a refit may drop. Any
# other attribute is not ours (scikit-learn's set_output configuration and metadata requests,
# the callback context a Pipeline puts on its steps around their fit, a user's own; and
# `_pass_totals`, which the SGD family's passes over parts (linear_model/_sgd.py, run by
# fastml.stream and the dask backend) set around their partial_fit calls and drop after
# them: a partial_fit that starts over must keep it). forget_fit drops these too;
# tests/test_linear_state.py checks that the list names every private attribute fits leave.
FIT_STATE = (
    "_engine", "_rng", "_epochs_done",          # the SGD state, its row order, its epochs
    "_single_target",                           # LinearRegression / Ridge: y was 1-D
    "_mistakes", "_vote_pack", "_vote_starts",  # VotedPerceptron (its _VoteStore, the pack)
    "_buffer", "_kparams", "_steps", "_samples_seen", "_weight_seen", "_sv_sq", "_pack",
    "_sq_max",                                  # KernelPerceptron
    "_parent", "_feature",                      # PolynomialFeatures' recurrence
    "_encoder", "_state",                       # trees and forests
    "_parts",                                   # naive Bayes
)


def is_fit_state(name):
    """Does an attribute of this name belong to a fit (see FIT_STATE)?"""
    return (name.endswith("_") and not name.startswith("__")) or name in FIT_STATE


def forget_fit(estimator):
    """Drop everything an earlier fit or partial_fit left on `estimator`: every fitted
    attribute (the names ending in "_": coef_, stats_, rank_, loss_curve_, ...) and every
    private state in FIT_STATE (the SGD state `_engine`, its `_rng`, the epoch counter, the
    perceptrons' mistakes, ...). The constructor's parameters stay, and so does anything else
    (settings scikit-learn keeps on an estimator). What every linear model's `fit` does first
    (`fresh_fit`), a `partial_fit` that starts over, and fastml.stream / Dask before a fit."""
    params = set(estimator._get_param_names())
    for name in list(vars(estimator)):
        if name not in params and is_fit_state(name):
            delattr(estimator, name)


def all_or_nothing(fitting):
    """Decorator of fit (fitting=True) and partial_fit (False): a call that raises leaves no
    half-built model. A failed fit leaves the estimator unfitted (every fitted attribute and
    private fit state goes, the parameters and attributes that are not a fit's stay; predict
    raises NotFittedError). A failed partial_fit leaves the estimator exactly as it was before
    the call: its fitted state is deep-copied first (the model only: coef-sized arrays, or
    the perceptrons' stored mistakes) and put back."""
    def wrap(method):
        @functools.wraps(method)
        def run(self, *args, **kwargs):
            params = set(self._get_param_names())
            state = vars(self)
            saved = {name: value if name in params or fitting else copy.deepcopy(value)
                     for name, value in state.items()}
            try:
                return method(self, *args, **kwargs)
            except BaseException:
                # a failed fit keeps what is not a fit's: dropping it turned a Pipeline's
                # "unexpected keyword argument 'sample_weight'" TypeError into an
                # AttributeError (scikit-learn deletes its callback context after the step)
                state.clear()
                state.update((name, value) for name, value in saved.items()
                             if name in params or not fitting or not is_fit_state(name))
                raise
        return run
    return wrap


class BaseEstimator:
    """Parameters by introspection of `__init__`, a readable repr, and scikit-learn tags.

    Subclasses list every hyper-parameter as a keyword argument of `__init__` and store it
    unchanged under the same name.

    Examples
    --------
    >>> class Model(BaseEstimator):
    ...     def __init__(self, alpha=1.0, depth=None):
    ...         self.alpha, self.depth = alpha, depth
    >>> m = Model(alpha=0.5)
    >>> m
    Model(alpha=0.5)
    >>> m.set_params(depth=3).get_params()
    {'alpha': 0.5, 'depth': 3}
    """

    # Subclasses override these to describe themselves to scikit-learn and to our common tests.
    _estimator_type = None
    _accepts_sparse = False
    _allows_nan = False
    _accepts_categorical = False  # X may hold strings / categories (encoded by fastml itself)
    # Parameters another library's estimator of the same name takes and this one does not,
    # with what to write instead (docs/migrating.rst): LogisticRegression(C=1.0) says which
    # alpha it means, instead of Python's bare "unexpected keyword argument".
    _foreign_params: Dict[str, str] = {}

    def __new__(cls, *args, **kwargs):
        foreign = [name for name in kwargs if name in cls._foreign_params]
        if foreign and foreign[0] not in cls._get_param_names():
            raise TypeError(f"{cls.__name__} has no parameter {foreign[0]!r}: "
                            f"{cls._foreign_params[foreign[0]]}")
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        route(cls)      # a backend's collection (a dask array, say) goes to the backend

    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__}.__init__ must not take *args")
        return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments as a dict (nested estimators' as `name__param` if deep)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self: EstimatorT, **params: Any) -> EstimatorT:
        """Set constructor arguments; unknown names raise a ValueError naming the valid ones."""
        valid = self._get_param_names()
        nested = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                advice = self._foreign_params.get(name)
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}"
                    + (f" ({advice})" if advice else "") + f"; valid parameters are {valid}")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self):
        defaults = {
            name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()
        }
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name)
            default = defaults.get(name, inspect.Parameter.empty)
            if not _same_value(value, default):
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        """scikit-learn's tags (>= 1.6), from the class attributes above, so its tools and
        checks see what the estimator takes: NaN, CSR, categorical strings; its kind; that it
        must be fitted before predicting."""
        from sklearn.utils import (ClassifierTags, InputTags, RegressorTags, Tags, TargetTags,
                                   TransformerTags)
        kind = self._estimator_type
        return Tags(
            estimator_type=kind,
            target_tags=TargetTags(required=kind in ("classifier", "regressor")),
            transformer_tags=TransformerTags() if kind == "transformer" else None,
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
            requires_fit=True,
            input_tags=InputTags(sparse=self._accepts_sparse, allow_nan=self._allows_nan,
                                 categorical=self._accepts_categorical,
                                 string=self._accepts_categorical),
        )

    def _check_is_fitted(self, attribute):
        if not hasattr(self, attribute):
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet: call fit before using it")


def _same_value(a, b):
    if a is b:
        return True
    try:
        same = a == b
        return bool(same) if not isinstance(same, np.ndarray) else bool(same.all())
    except Exception:
        return False


def clone(estimator: EstimatorT) -> EstimatorT:
    """A new unfitted estimator with the same parameters (deep-copied).

    Parameters
    ----------
    estimator : BaseEstimator
        Fitted or not.

    Returns
    -------
    BaseEstimator
        ``type(estimator)(**params)``: no fitted attribute is carried over; a transformer's
        `set_output` setting is, as scikit-learn's clone does.

    Examples
    --------
    >>> from fastml import GaussianNB, clone
    >>> fitted = GaussianNB().fit([[0.0], [1.0]], [0, 1])
    >>> copy = clone(fitted)
    >>> hasattr(copy, "classes_"), copy.get_params() == fitted.get_params()
    (False, True)
    """
    params = {k: copy.deepcopy(v) for k, v in estimator.get_params(deep=False).items()}
    new = type(estimator)(**params)
    # set_output's choice is a setting, not a fit: scikit-learn's clone keeps it too
    if hasattr(estimator, "_sklearn_output_config"):
        new._sklearn_output_config = copy.deepcopy(estimator._sklearn_output_config)
    return new


def _narrow_int_labels(y):
    """(sorted distinct values, int64 codes) of an integer y whose range is at most a few
    times its length, from one bincount; None otherwise (np.unique's sort then)."""
    if y.dtype.kind not in "iu" or y.ndim != 1 or y.size == 0:
        return None
    lo, hi = int(y.min()), int(y.max())
    if hi - lo > max(1024, 4 * y.size) or hi > np.iinfo(np.int64).max:
        return None
    shifted = np.ascontiguousarray(y, dtype=np.int64)    # exact: int64 holds lo..hi here
    if lo:
        shifted = shifted - lo
    present = np.bincount(shifted, minlength=hi - lo + 1) > 0
    levels = np.flatnonzero(present)
    classes = (levels + lo).astype(y.dtype)              # values of y: its dtype holds them
    if len(levels) == len(present):   # every value of lo..hi occurs: they are the codes (y
        return classes, shifted       # itself when it is int64 from 0: see the caller)
    lut = np.cumsum(present, dtype=np.int64) - 1
    return classes, lut[shifted]


def label_codes(classes, y):
    """int64 codes of the labels y among the sorted `classes`; a label not among them raises
    (partial_fit's chunks, the parts of a scaled fit)."""
    y = check_target(y)
    idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    bad = classes[idx] != y
    if np.any(bad):
        raise ValueError(f"y has labels not in classes_ {classes.tolist()!r}: "
                         f"{np.unique(np.asarray(y)[bad]).tolist()!r}")
    return idx.astype(np.int64)


class ClassifierMixin:
    """Label encoding for any hashable labels, and accuracy as `score`."""

    _estimator_type = "classifier"

    def _encode_labels(self, y, *, min_classes=2, name="y"):
        """Learn `classes_` (sorted unique labels) and return y as int64 codes 0..K-1 (name:
        what errors call y, e.g. partial_fit's "classes")."""
        y = check_target(y, name=name)
        if y.dtype.kind == "f" and not np.all(np.mod(y, 1) == 0):
            raise ValueError(
                f"Unknown label type: continuous values in y; {type(self).__name__} is a "
                f"classifier and needs discrete labels (use a regressor for continuous targets)")
        # Integer labels of a narrow range (the common case) are counted, not sorted:
        # np.unique's sort costs more than a whole GaussianNB moment pass or a third of a
        # logistic gradient pass. Same classes_ (dtype included) and codes either way.
        found = _narrow_int_labels(y)
        classes, codes = found if found is not None else np.unique(y, return_inverse=True)
        if np.shares_memory(codes, y):   # int64 labels 0..K-1 are their own codes: the
            codes = codes.copy()         # estimators may write theirs, never the user's y
        if len(classes) < min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {min_classes} classes in {name}; "
                f"got {len(classes)} class(es): {classes.tolist()!r}")
        self.classes_ = classes
        return codes.astype(np.int64, copy=False).reshape(-1)

    def _encode_known_labels(self, y):
        """Codes for y against an existing `classes_` (partial_fit); unseen labels raise."""
        return label_codes(self.classes_, y)

    def score(self, X: MatrixLike, y: VectorLike,
              sample_weight: Optional[ArrayLike] = None) -> float:
        """Mean accuracy of `predict(X)` against y."""
        from .metrics import accuracy_score
        return accuracy_score(check_target(y, warn=False), self.predict(X),
                              sample_weight=sample_weight)   # a score's y: no warning


class RegressorMixin:
    """R² as `score` (1 - SS_res / SS_tot, averaged uniformly over outputs)."""

    _estimator_type = "regressor"

    def score(self, X: MatrixLike, y: VectorLike,
              sample_weight: Optional[ArrayLike] = None) -> float:
        """R² of `predict(X)` against y (`fastml.metrics.r2_score`)."""
        from .metrics import r2_score
        y = np.asarray(y, dtype=np.float64)
        return r2_score(y, self.predict(X), sample_weight=sample_weight)


class TransformerMixin:
    """fit_transform, and scikit-learn's `set_output(transform="pandas")`: the output of
    transform / fit_transform becomes a DataFrame with `get_feature_names_out()` as columns
    (and X's index when X is a DataFrame)."""

    _estimator_type = "transformer"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("transform", "fit_transform"):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_wraps_output", False):
                setattr(cls, name, _wrap_output(cls.__dict__[name]))

    def fit_transform(self, X: MatrixLike, y: Optional[VectorLike] = None,
                      **fit_params: Any) -> Any:
        return self.fit(X, y, **fit_params).transform(X)

    def set_output(self: EstimatorT, *, transform: Optional[str] = None) -> EstimatorT:
        """Output container of transform / fit_transform: "pandas", or "default" (numpy /
        CSR); None leaves the setting unchanged. Returns self."""
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise ValueError(f"set_output(transform=...) must be 'default' or 'pandas'; "
                             f"got {transform!r}")
        self._sklearn_output_config = {"transform": transform}  # scikit-learn's name: its
        return self                                                # clone() keeps it


def _wrap_output(method):
    """transform / fit_transform whose result follows `set_output`."""
    import functools

    @functools.wraps(method)
    def wrapped(self, X, *args, **kwargs):
        out = method(self, X, *args, **kwargs)
        if getattr(self, "_sklearn_output_config", {}).get("transform") != "pandas":
            return out
        import pandas as pd
        index = X.index if isinstance(X, pd.DataFrame) else None
        columns = self.get_feature_names_out() if hasattr(self, "get_feature_names_out") else None
        if hasattr(out, "tocoo"):  # CSR stays sparse: a DataFrame of pandas' sparse columns
            return pd.DataFrame.sparse.from_spmatrix(out, index=index, columns=columns)
        return pd.DataFrame(out, columns=columns, index=index)

    wrapped._wraps_output = True
    return wrapped


class available_if:
    """Decorator: the method exists only when check(self) is true (else AttributeError), so
    `hasattr(est, "partial_fit")` tells the truth (scikit-learn's pipelines and checks ask)."""

    def __init__(self, check, reason):
        self.check, self.reason = check, reason

    def __call__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        return self

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        if not self.check(obj):
            raise AttributeError(f"{type(obj).__name__}.{self.name} {self.reason}")
        return self.fn.__get__(obj, owner)
