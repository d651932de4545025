"""Naive Bayes fitted part by part: the Statistics plan (fastml/_plans.py) of all three models.

Each part is fitted by an unfitted copy of the estimator, through partial_fit with the classes
the part holds (so no pass is spent finding the classes first, and a one-shot stream may bring
a new label in any chunk). Two parts' models merge over the union of their classes: a class
one side lacks holds nothing there; counts add, moments merge by Chan's formula, category
vocabularies grow to their union first (the parts' `merged`). The merged model is finished
once, over exactly the labels seen, with the estimator's priors. Equal to fit on all rows.
"""
import copy

import numpy as np

from .._base import clone
from .._plans import Statistics, adopt, union_labels
from .._validation import check_sample_weight, check_target


def naive_bayes_plan(estimator, layout):
    """The plan; parts come as DataFrames when categorical_features names columns."""
    return Statistics(start=template, part=statistics, merge=merge, finish=finish,
                      layout=layout, frames=_names_columns(estimator.get_params().get(
                          "categorical_features")))


def _names_columns(spec):
    """Whether categorical_features names columns (the parts then keep their names)."""
    if spec is None or isinstance(spec, str):
        return isinstance(spec, str) and spec not in ("auto", "all")
    items = np.ravel(spec).tolist() if isinstance(spec, np.ndarray) else list(spec)
    return any(isinstance(item, str) for item in items)


def template(estimator, labels=None):
    """An unfitted copy to fit each part with; no priors nor class_weight, as a part's
    classes are not all the classes: the estimator's are applied to the merged counts once
    the classes are known (finish)."""
    estimator._check_params()
    model = type(estimator)(**estimator.get_params(deep=False))
    model.priors = model.class_weight = None
    return model


def statistics(X, y, w, template):
    """(model, labels): a copy of `template` fitted on the part's rows with the classes they
    hold, and those labels. The weights are checked as fit checks them (NaN, inf, negative:
    refused), but may all be 0: such rows add their labels as classes (count 0), as in fit,
    and nothing else (model None). A single class is fitted with a stand-in second class that
    holds no row (partial_fit wants two; finish drops it)."""
    y = check_target(y)
    if w is not None:
        w = check_sample_weight(w, X.shape[0], whole=False)
        if not w.any():
            return None, np.unique(y)
    model = clone(template)
    if len(y) and bool((y == y[0]).all()):
        model.partial_fit(X, y, classes=[y[0], _stand_in_label(y[0])], sample_weight=w)
        return model, y[:1]
    model.partial_fit(X, y, sample_weight=w)
    return model, model.classes_


def _stand_in_label(label):
    """A label of the same kind as `label` and different from it."""
    if isinstance(label, (bool, np.bool_)):
        return not label
    if isinstance(label, (str, bytes)):
        return label + type(label)("_" if isinstance(label, str) else b"_")
    if isinstance(label, (float, np.floating)):
        return np.nextafter(label, 0.0 if label else 1.0)
    return label - 1 if label > 0 else label + 1


def merge(a, b):
    """The (model, labels) of the rows of a and b: labels united, models merged over the
    union of their classes."""
    (model_a, labels_a), (model_b, labels_b) = a, b
    labels = union_labels(labels_a, labels_b)
    if model_a is None or model_b is None:
        return (model_b if model_a is None else model_a), labels
    if getattr(model_a, "categorical_features_", None) is not None and not np.array_equal(
            model_a.categorical_features_, model_b.categorical_features_):
        column = int(np.flatnonzero(model_a.categorical_features_ !=
                                    model_b.categorical_features_)[0])
        raise ValueError(f"column {column} is categorical in some parts and numeric in "
                         f"others; give it one type (e.g. astype(str) or astype(float))")
    classes = np.union1d(model_a.classes_, model_b.classes_)
    model_a, model_b = with_classes(model_a, classes), with_classes(model_b, classes)
    model_a.class_count_ = model_a.class_count_ + model_b.class_count_
    model_a._parts = [mine.merged(theirs) for mine, theirs in zip(model_a._parts,
                                                                  model_b._parts)]
    return model_a, labels


def with_classes(model, classes):
    """A copy of `model` over `classes` (sorted): its per-class rows moved to their classes'
    places, zeros for the classes it has not seen; its classes missing from `classes` are
    stand-ins holding nothing and are dropped."""
    place = np.searchsorted(classes, model.classes_).clip(max=len(classes) - 1)
    place = np.where(classes[place] == model.classes_, place, -1)
    kept = place >= 0
    model = copy.copy(model)
    counts = np.zeros(len(classes))
    counts[place[kept]] = model.class_count_[kept]
    model.classes_, model.class_count_ = classes, counts
    model._parts = [part.with_classes(place, len(classes)) for part in model._parts]
    return model


def finish(estimator, statistics, schema):
    """Give `estimator` the merged model, over exactly the labels seen (stand-ins dropped),
    with its own priors."""
    model, labels = (None, None) if statistics is None else statistics
    if model is None:
        raise ValueError("X has 0 samples" if labels is None else
                         "sample_weight sums to 0: there is nothing to estimate the class "
                         "probabilities from")
    template(estimator)._encode_labels(labels)   # fit's rules: 2 classes, not continuous
    model = with_classes(model, labels)
    model.priors, model.class_weight = estimator.priors, estimator.class_weight
    model._finalize()
    adopt(estimator, model)
