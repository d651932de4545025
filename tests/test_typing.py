"""Issue 15: the public API carries type hints (PEP 561, fastml ships py.typed) and every
hint resolves: a name a hint uses but no module defines fails here, not in a user's mypy run."""
import inspect
import typing

import pytest

import fastml
import fastml._typing
from fastml import datasets, info, io, losses, metrics, model_selection, plot

FUNCTIONS = [fastml.clone, fastml.save, fastml.load, fastml.fit_stream, fastml.export_text,
             model_selection.train_test_split, plot.learning_curves,
             *[getattr(m, name) for m in (info, losses, metrics, datasets)
               for name in m.__all__ if inspect.isfunction(getattr(m, name))]]


def resolved_hints(fn):
    """typing.get_type_hints with the names the modules import under TYPE_CHECKING."""
    module = inspect.getmodule(fn)
    public = {name: getattr(fastml, name) for name in fastml.__all__}  # e.g. to_logistic's
    exported = {name: getattr(fastml._typing, name) for name in fastml._typing.__all__}
    namespace = {**public, **exported, **vars(module)}
    return typing.get_type_hints(fn, globalns=namespace)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_public_function_is_fully_annotated_and_its_hints_resolve(fn):
    hints = resolved_hints(fn)
    params = [p for p in inspect.signature(fn).parameters.values()]
    assert "return" in hints, f"{fn.__name__} has no return annotation"
    missing = [p.name for p in params if p.name not in hints]
    assert not missing, f"{fn.__name__}: parameters without a hint: {missing}"


def test_package_is_marked_typed():
    import os
    assert os.path.exists(os.path.join(os.path.dirname(fastml.__file__), "py.typed"))


def public_methods():
    """Every public method (and __init__) of every estimator, once per defining class."""
    seen = {}
    classes = [cls for _, cls in fastml.all_estimators()] + [fastml.FeatureHasher]
    for cls in classes:
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if (name == "__init__" or not name.startswith("_")) and \
                    fn.__module__.startswith("fastml"):
                seen.setdefault(fn.__qualname__, fn)
    return sorted(seen.items())


@pytest.mark.parametrize("qualname, fn", public_methods(), ids=lambda v: v if isinstance(v, str)
                         else "")
def test_estimator_method_is_fully_annotated_and_its_hints_resolve(qualname, fn):
    hints = resolved_hints(fn)
    params = [p.name for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    assert "return" in hints, f"{qualname} has no return annotation"
    missing = [name for name in params if name not in hints]
    assert not missing, f"{qualname}: parameters without a hint: {missing}"
