"""The plan protocol: how an estimator is fitted on data that comes in parts (the chunks of a
file, the partitions of a dask collection or of a Spark DataFrame), defined once here; see
docs/developers/architecture.rst for the picture and how to add an estimator or a backend.

An estimator says how it scales through one private method, ``_scaled_fit()``, which returns
one of the plans below or raises NotScalable with the reason. The maths of each plan lives in
the estimator's family; an executor (fastml/stream.py folds over a source's chunks one after
the other; the backends fastml/_dask.py and fastml/_spark.py hand their parts to
`run_on_parts`) runs any plan without knowing the estimator:

- Statistics: per part, statistics; merged pairwise; finished once (naive Bayes, least
  squares, information-gain tables). Exact.
- Objective: a sum over parts evaluated at the parameters an iterative solver asks for
  (LogisticRegression's L-BFGS / gd / Newton). The parts are prepared (validated, encoded)
  once; an executor that can hold them (dask: persisted on the workers; Spark: held by the
  tasks of a barrier stage) keeps them between evaluations. Exact.
- Passes: passes of partial_fit over the parts (the SGD family): one after the other in a
  stream, or a local pass per part mixed by the family's rule on workers.
- Ensemble: members grown per part from the part's rows (forests). Approximate.
- Columns: fitted from the columns alone, no row read (PolynomialFeatures).

The contract every executor relies on:
- every per-part function is a module-level function of the family (picklable by reference:
  it travels to workers), called on one part's rows as ``fn(X, y, w, context, ...)``: X a
  2-D array (a DataFrame when the plan has ``frames=True``), y the labels / targets, w the
  sample weights or None, context the small picklable value the plan's ``start`` returned; a
  part without rows is never passed;
- what a per-part function returns (statistics, sums, models) is small and serializable;
- ``start(estimator, labels)`` runs once on the driver before any part is read (labels: the
  LabelSummary of the whole data when the plan ``needs_labels``, else None);
- the executor fits a working copy (``transaction``), so a fit that fails anywhere leaves the
  estimator exactly as it was; it records the feature names itself (``record_features``).
"""
import contextlib
import copy

import numpy as np

from ._base import forget_fit, is_fit_state
from .exceptions import NotScalable

ARCHITECTURE = "docs/developers/architecture.rst"


class Plan:
    """What every plan tells its executor.

    needs_labels : run a LabelSummary pass over the labels and weights before `start`.
    classes : that pass collects the classes too (a classifier).
    frames : give the parts their columns as DataFrames (named or categorical columns); else
        numeric arrays.
    layout : "C" or "F", the order of the arrays an executor builds from columnar data ("F"
        costs it less; kernels that walk rows want "C").
    exact : the result equals `fit` on all rows (else it is documented as approximate).
    """
    kind = None
    needs_labels = classes = False
    frames = False
    layout = "C"
    exact = True

    def __init__(self, **fields):
        for name, value in fields.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)


class Statistics(Plan):
    """One pass: ``part(X, y, w, context)`` -> the part's statistics (None: nothing to add),
    ``merge(a, b)`` -> the statistics of both (associative; executors merge in part order),
    ``finish(estimator, statistics, schema)`` sets the fitted attributes."""
    kind = "statistics"
    start = staticmethod(lambda estimator, labels: None)
    part = merge = finish = None


class Objective(Plan):
    """A sum over parts for an iterative solver.

    ``prepare(X, y, w, context)`` -> the part as the terms take it (validated once);
    ``solve(estimator, context, total, schema)`` runs the family's solver and sets the fitted
    attributes, where ``total(fn, *args)`` is the sum over the prepared parts of
    ``fn(prepared, context, *args)`` (each a number, an array or a tuple of them, added
    elementwise; None counts as nothing), computed where the parts are."""
    kind = "objective"
    needs_labels = classes = True
    start = prepare = solve = None


class Passes(Plan):
    """Passes of partial_fit (the SGD family).

    ``start(estimator, labels)`` -> the context of every part (classes known);
    ``step(X, y, w, context, model, epoch, totals)`` -> (model, PassTerms): one part of
    pass `epoch` fitted in place (a stream's chunks, one after the other; model None: the
    first part); totals: (rows, weight) of one whole pass, which the steps weigh by, or None
    (not known yet: the running sums);
    ``local(X, y, w, context, model, epoch, totals, part, seed)`` -> (model, PassTerms): the
    same on a copy of `model`, its row order drawn from (seed, epoch, part) (on workers);
    ``mix(models, weights, start)`` -> the model mixed from the parts' (None when the
    family has no mixing rule: `why_not_mixed` says why);
    ``seed(estimator)`` -> an int from the estimator's random_state for `local`;
    ``schedule(epochs)`` -> (passes, stop): epochs is the number of passes the caller asked
    for (None: the estimator's own, max_iter), stop(loss, progressive) is True once the
    passes should end;
    ``finish(estimator, model, curve, progressive)`` sets the fitted attributes;
    ``totals(context, labels)`` -> (rows, weight) of one whole pass as the steps count it,
    from the label pass's summary (default: its rows and weight; a family whose steps
    reweigh the rows, e.g. by class_weight, counts their weight its way)."""
    kind = "passes"
    start = step = local = mix = seed = schedule = finish = None
    totals = staticmethod(lambda context, labels: labels.totals)
    why_not_mixed = None


class Ensemble(Plan):
    """Members grown per part.

    ``start(estimator, labels, schema)`` -> the template every part grows with;
    ``deal(template, sizes)`` -> [(count, seed)] per part, from the parts' total weights;
    ``grow(X, y, w, template, count, seed)`` -> that many members on the part's rows;
    ``finish(estimator, template, members, schema)`` sets the fitted attributes.
    `why_not_sequential` says why a stream (whose parts are chunks of one file) does not
    grow it."""
    kind = "ensemble"
    exact = False
    start = deal = grow = finish = None
    why_not_sequential = None


class Columns(Plan):
    """Fitted from the columns alone: ``finish(estimator, sample)`` with `sample` one row of
    zeros (or the first row) carrying the columns."""
    kind = "columns"
    finish = None


class Schema:
    """What an executor knows of the features: their number, names (None without names) and
    the float dtype of the arrays it built (float32 when every column is, else float64)."""

    def __init__(self, n_features, names=None, dtype=np.float64):
        self.n_features, self.names, self.dtype = int(n_features), names, np.dtype(dtype)


def float_dtype(dtypes):
    """float32 when every dtype is float32, else float64 (what validation makes of X)."""
    dtypes = list(dtypes)
    float32 = bool(dtypes) and all(isinstance(d, np.dtype) and d == np.float32 for d in dtypes)
    return np.dtype(np.float32 if float32 else np.float64)


class PassTerms:
    """What one part of a pass adds to the pass's curves: the sums of its rows' losses and
    progressive losses weighted by their sample weights, their weight and their number."""
    __slots__ = ("loss", "progressive", "weight", "rows")

    def __init__(self, loss, progressive, weight, rows):
        self.loss, self.progressive, self.weight, self.rows = loss, progressive, weight, rows

    def __add__(self, other):
        return PassTerms(self.loss + other.loss, self.progressive + other.progressive,
                         self.weight + other.weight, self.rows + other.rows)

    def means(self):
        """(mean loss, mean progressive loss) of the rows summed here (NaN without weight)."""
        if not self.weight:
            return np.nan, np.nan
        return self.loss / self.weight, self.progressive / self.weight


# ----------------------------------------------------------------------------- labels
class LabelSummary:
    """What one pass over the labels and weights finds: the sorted distinct labels (None when
    not asked for) with the summed sample weight of each (`class_totals`, what
    class_weight="balanced" needs of the whole data), the number of rows and their total
    weight (None: not known, a one-shot stream's first chunk)."""

    def __init__(self, classes, rows, weight, class_totals=None):
        self.classes, self.rows, self.weight = classes, rows, weight
        self.class_totals = class_totals

    @property
    def totals(self):
        """(rows, weight) of one pass over all the data, or None."""
        return None if self.rows is None else (self.rows, self.weight)

    def merge(self, other):
        if self.classes is None or other.classes is None:
            mine = self if other.classes is None else other
            return LabelSummary(mine.classes, self.rows + other.rows,
                                self.weight + other.weight, mine.class_totals)
        classes = union_labels(self.classes, other.classes)
        totals = np.zeros(len(classes))
        for part in (self, other):
            totals[np.searchsorted(classes, part.classes)] += part.class_totals
        return LabelSummary(classes, self.rows + other.rows, self.weight + other.weight,
                            totals)


def union_labels(a, b):
    """The sorted union of two parts' labels; labels of two kinds (numbers in one part, text
    in another) are a clear error, not numpy's "'<' not supported between 'int' and 'str'"."""
    try:
        return np.union1d(a, b)
    except TypeError:
        raise ValueError(f"the labels change type between parts: {a[:3].tolist()!r} ... "
                         f"and {b[:3].tolist()!r} ...; give the target one type in every "
                         f"part (e.g. astype(str))") from None


def label_summary(X, y, w, with_classes):
    """A part's LabelSummary (X is not read: executors that can read the label columns alone
    pass None). The weights are checked as fit checks them (NaN, inf, negative: refused); the
    labels as classes, those of rows of weight 0 included, as fit makes them classes."""
    from ._validation import check_sample_weight, check_target
    y = np.asarray(y) if not hasattr(y, "to_numpy") else y.to_numpy()
    n = len(y)
    w = None if w is None else check_sample_weight(w, n, whole=False)
    weight = float(n) if w is None else float(np.sum(w))
    if not (with_classes and n):
        return LabelSummary(None, n, weight)
    classes, codes = np.unique(check_target(y), return_inverse=True)
    return LabelSummary(classes, n, weight,
                        np.bincount(codes.ravel(), weights=w, minlength=len(classes)))


def merge_summaries(a, b):
    return a.merge(b)


def class_factors(class_weight, labels):
    """Each class's weight under `class_weight` (None, "balanced" or a dict: scikit-learn's
    rule, class_weight_factors), from the whole data's class totals of the label pass, so
    "balanced" means what it means in fit whatever the parts; None without class weights.
    A family's plan multiplies its parts' sample weights by them (weigh_rows)."""
    from ._validation import check_class_weight, class_weight_factors
    class_weight = check_class_weight(class_weight)
    if class_weight is None:
        return None
    if isinstance(class_weight, str) and labels.rows is None:
        raise ValueError("class_weight='balanced' needs the class counts of all the data, and "
                         "a one-shot iterator cannot be read twice to count them first: pass "
                         "a file or a callable returning a fresh iterable, or a dict of class "
                         "weights")
    return class_weight_factors(class_weight, labels.classes, labels.class_totals)


def weigh_rows(factors, classes, y, w):
    """A part's sample weights (None: 1 each) times each row's class factor."""
    from ._base import label_codes
    by_class = factors[label_codes(classes, y)]
    return by_class if w is None else np.asarray(w, dtype=np.float64) * by_class


# ------------------------------------------------------------------------- the executors
def plan_for(estimator, where):
    """The estimator's plan, or NotScalable saying why not: `where` ends the message's first
    words ("cannot be fitted by fit_stream")."""
    name = type(estimator).__name__
    scaled_fit = getattr(estimator, "_scaled_fit", None)
    if scaled_fit is None:
        has = [m for m in ("partial_fit", "fit") if callable(getattr(estimator, m, None))]
        raise NotScalable(
            f"{name} cannot be fitted {where}: it has no plan for fitting part by part "
            f"(a `_scaled_fit` method, see {ARCHITECTURE}); its {' and '.join(has) or 'fit'} "
            f"alone does not say how the parts' results combine. Fit it in memory")
    try:
        return scaled_fit()
    except NotScalable as error:
        raise NotScalable(f"{name} cannot be fitted {where}: {error}") from None


def add_up(values):
    """The elementwise sum of per-part results: numbers, arrays, PassTerms, or tuples of them
    (None: a part that adds nothing). None when every part gave None."""
    total = None
    for value in values:
        if value is None:
            continue
        if total is None:
            total = value
        elif isinstance(value, tuple):
            total = tuple(a + b for a, b in zip(total, value))
        else:
            total = total + value
    return total


@contextlib.contextmanager
def transaction(estimator):
    """Fit a working copy of `estimator` in its place: the copy (its parameters shared, no
    fitted state) is yielded to the executor; when the fit succeeds its fitted state becomes
    the estimator's (the earlier fit dropped), and when it fails anywhere the estimator is
    exactly as it was (its fit, n_iter_, and the state of a random Generator it was given as
    a parameter, which the fit may have drawn from)."""
    params = estimator.get_params(deep=False)
    generators = {name: copy.deepcopy(value.bit_generator.state)
                  for name, value in params.items() if hasattr(value, "bit_generator")}
    legacy = {name: value.get_state() for name, value in params.items()
              if isinstance(value, np.random.RandomState)}
    working = copy.copy(estimator)
    forget_fit(working)
    try:
        yield working
    except BaseException:
        for name, state in generators.items():
            params[name].bit_generator.state = state
        for name, state in legacy.items():
            params[name].set_state(state)
        raise
    forget_fit(estimator)
    names = set(estimator._get_param_names())
    for name, value in vars(working).items():
        if name not in names and is_fit_state(name):
            setattr(estimator, name, value)


def adopt(estimator, fitted):
    """Copy the fitted state of `fitted` (an estimator of the same class) onto `estimator`."""
    names = set(estimator._get_param_names())
    for name, value in vars(fitted).items():
        if name not in names and is_fit_state(name):
            setattr(estimator, name, value)


def record_features(estimator, schema):
    """n_features_in_ and, when the columns have string names, feature_names_in_, as fit
    records them."""
    from ._validation import check_n_features
    if schema.names is not None:
        import pandas as pd
        check_n_features(estimator, pd.DataFrame(columns=list(schema.names)), reset=True)
    else:
        estimator.n_features_in_ = schema.n_features
        if "feature_names_in_" in vars(estimator):
            del estimator.feature_names_in_


def located(error, part, index, start):
    """A data error raised while a part was fitted ("X contains infinity") with the part it
    came from ("in chunk 2, rows from 50"; start None: not known). Errors that already say
    where (a chunk or block number), and ValueError's subclasses, are kept."""
    import re
    message = str(error)
    if type(error) is not ValueError or re.search(r"\b(chunk|block|partition) \d", message):
        return error
    rows = "" if start is None else f", rows from {start}"
    return ValueError(f"{message} (in {part} {index}{rows})")


# ------------------------------------------------------- the plans over a backend's parts
def run_on_parts(estimator, plan, parts, where):
    """Run `plan` on `estimator` (a working copy: see `transaction`) over the parts of a
    backend (the dask partitions, a Spark DataFrame's partitions or Parquet row groups), the
    same maths for every backend; the backend only moves data. `parts` has:

    - ``schema()``: the Schema of the features;
    - ``labels(with_classes, each=False)``: the whole data's LabelSummary (its weights checked
      as fit checks them), with each=True also every part's (None for a part without rows);
    - ``map_reduce(fn, merge, *args)``: ``fn(X, y, w, *args)`` on every part, merged in part
      order (None when no part has rows);
    - ``map(fn, *args, indexed=False)``: ``[fn(X, y, w, *args)]`` per part (with indexed,
      ``fn(X, y, w, index, *args)``), None for a part without rows;
    - ``derive(fn, *args)``: parts ``fn(X, y, w, *args)`` kept where the parts are, whose
      ``map(fn, *args)`` gives ``[fn(value, *args)]`` and ``release()`` frees them.

    Every per-part function's ValueError comes back naming its part (`located`)."""
    if plan.kind == "passes" and plan.mix is None:
        raise NotScalable(f"{type(estimator).__name__} cannot be fitted {where}: "
                          f"{plan.why_not_mixed}")
    _PART_RUNNERS[plan.kind](estimator, plan, parts)


def _statistics_on_parts(estimator, plan, parts):
    """One pass: the parts' statistics merged in part order, finished once."""
    context = plan.start(estimator, parts.labels(plan.classes) if plan.needs_labels else None)
    total = parts.map_reduce(plan.part, plan.merge, context)
    if total is None:
        raise ValueError("X has 0 samples")
    plan.finish(estimator, total, parts.schema())


def _objective_on_parts(estimator, plan, parts):
    """The parts prepared once and kept where they are; each evaluation of the solver's
    objective sends the parameters to every part and adds up what comes back."""
    context = plan.start(estimator, parts.labels(plan.classes))
    prepared = parts.derive(plan.prepare, context)
    try:
        plan.solve(estimator, context,
                   lambda fn, *args: add_up(prepared.map(fn, context, *args)), parts.schema())
    finally:
        prepared.release()


def _passes_on_parts(estimator, plan, parts):
    """Iterative parameter mixing: each round, one local pass per part from the mixed model
    (its row order drawn from the seed, the round and the part's index, so a rerun part gives
    the same model), mixed by the family's rule weighted by the parts' weights."""
    labels = parts.labels(plan.classes)
    context, seed = plan.start(estimator, labels), plan.seed(estimator)
    totals = plan.totals(context, labels)
    n_passes, stop = plan.schedule(estimator, None)
    model, curve, progressive = None, [], []
    for epoch in range(n_passes):
        local = [r for r in parts.map(local_pass, plan.local, context, model, epoch,
                                      totals, seed, indexed=True) if r is not None]
        terms = [t for _, t in local]
        model = plan.mix([m for m, _ in local], [t.weight for t in terms], model)
        loss, progressive_loss = add_up(terms).means()
        curve.append(loss)
        progressive.append(progressive_loss)
        if stop(loss, progressive_loss):
            break
    plan.finish(estimator, model, curve, progressive)


def local_pass(X, y, w, index, local, context, model, epoch, totals, seed):
    """A Passes plan's local pass on part `index` (the per-part function the backends map)."""
    return local(X, y, w, context, model, epoch, totals, index, seed)


def _ensemble_on_parts(estimator, plan, parts):
    """Each part grows its share of the members (dealt by the parts' weights)."""
    labels, each = parts.labels(plan.classes, each=True)
    schema = parts.schema()
    template = plan.start(estimator, labels if plan.needs_labels else None, schema)
    # dealt by weight (rows when unweighted): a part whose rows all weigh 0 grows nothing
    sizes = [0 if s is None else s.weight for s in each]
    grown = parts.map(grow_share, plan.grow, template, plan.deal(template, sizes),
                      indexed=True)
    plan.finish(estimator, template, [m for members in grown if members for m in members],
                schema)


def grow_share(X, y, w, index, grow, template, deals):
    """An Ensemble plan's members on part `index`: its share of `deals`."""
    count, seed = deals[index]
    return grow(X, y, w, template, count, seed) if count else None


_PART_RUNNERS = {"statistics": _statistics_on_parts, "objective": _objective_on_parts,
                 "passes": _passes_on_parts, "ensemble": _ensemble_on_parts}


def merged_labels(found, each=False):
    """The LabelSummary of the parts' summaries `found` (None: a part without rows), with
    each=True also `found`; no rows, or no weight, is an error as in fit."""
    import functools
    if not any(s is not None for s in found):
        raise ValueError("X has 0 samples")
    summary = functools.reduce(merge_summaries, [s for s in found if s is not None])
    if summary.weight == 0:
        raise ValueError("sample_weight sums to 0 (zero everywhere): nothing to learn from")
    return (summary, found) if each else summary
