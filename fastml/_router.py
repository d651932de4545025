"""Which backend runs an estimator on a collection that lives elsewhere (a dask array or
DataFrame, a Spark DataFrame). A leaf: it imports no fastml module, and a backend module is imported only
when one of its collections arrives, so the base layer (fastml/_base.py, which routes every
estimator class through here) knows no backend (docs/developers/architecture.rst).

A backend is one module with three functions, each running the estimators' plans
(fastml/_plans.py) and knowing no estimator:
- ``fit(estimator, X, y=None, sample_weight=None, **kwargs)``: the plan of
  ``estimator._scaled_fit()`` over the collection's parts; returns the estimator;
- ``apply(estimator, method, X, *args, **kwargs)``: a lazy collection of
  ``estimator.<method>`` over X's parts (predict, predict_proba, transform, ...);
- ``summarize(plan, X, y)``: a Statistics plan's finished result over X and y (not an
  estimator's: fastml.info's tables).
Adding a backend is one entry in BACKENDS.
"""
import functools
import importlib

# The methods whose X may be a collection of a backend.
ROUTED = ("fit", "predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba",
          "decision_function", "transform")


def is_dask_collection(obj):
    """dask.is_dask_collection without importing dask (a dask collection has a graph)."""
    return hasattr(obj, "__dask_graph__") and not isinstance(obj, type)


def is_spark_frame(obj):
    """A pyspark DataFrame, without importing pyspark."""
    kind = type(obj)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pyspark.sql") and \
        hasattr(obj, "mapInArrow")


# (test on an object, the backend module that runs it): the first whose test accepts wins
BACKENDS = [(is_dask_collection, "fastml._dask"), (is_spark_frame, "fastml._spark")]


def backend_for(obj):
    """The backend module for a collection `obj`, imported now; None for in-memory data."""
    for accepts, module in BACKENDS:
        if accepts(obj):
            return importlib.import_module(module)
    return None


def route(cls):
    """Let a backend take the ROUTED methods of `cls` (and of the classes it inherits them
    from, mixins included) when their X is one of its collections: each method is wrapped
    once, where it is defined, so every estimator that has it is routed."""
    for name in ROUTED:
        owner = next((klass for klass in cls.__mro__ if name in vars(klass)), None)
        if owner is None or owner is object:
            continue
        method = vars(owner)[name]
        if hasattr(method, "fn") and hasattr(method, "check"):   # available_if: wrap its fn
            if not getattr(method.fn, "_routed", False):
                method.fn = _routed(name, method.fn)
        elif callable(method) and not getattr(method, "_routed", False):
            setattr(owner, name, _routed(name, method))


def _routed(name, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        # X as the method takes it (positional or by name; FeatureHasher.fit takes none)
        X = args[0] if args else kwargs.get("X")
        backend = None if X is None else backend_for(X)
        if backend is None:
            return method(self, *args, **kwargs)
        if name == "fit":
            return backend.fit(self, *args, **kwargs)
        return backend.apply(self, name, *args, **kwargs)
    wrapper._routed = True
    return wrapper
