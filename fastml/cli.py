"""The `fastml` command (also `python -m fastml`).

Subcommands:
  demo       every estimator family on the bundled data, one readable report
  fit        train a model on a CSV / Parquet file, print train and held-out metrics, save it
  predict    predictions (or class probabilities) of a saved model for a data file
  evaluate   metrics of a saved model on a labelled data file
  info-gain  the lectures' "information gains using the training set" table
  tree       that table and the decision tree learned from the file, as text

Each family adds its part of the demo in its own `<family>/_demo.py` (a `run(report)`
function), so the command grows without this file knowing the families' details. Models are
named by short names (MODELS) or by class name and resolved lazily against `fastml`, so a new
estimator is usable here as soon as it is exported.

Errors a user can make (a wrong path, a missing, duplicated or empty column, a column type
fastml cannot read, an unknown model or parameter, a parameter out of range, a text target for
a regressor, a solver that diverges on the data, a damaged or crafted model file) print one
line "fastml: error: ..." on stderr and exit with status 2, never a traceback (USER_ERRORS
lists the exception types; set FASTML_TRACEBACK=1 to see the traceback instead). Anything else
is a bug of fastml's: one line "fastml: internal error: ..." and status 2 as well. A reader
that stops early (`fastml predict ... | head`) ends the command quietly with status 0. Models
are saved with verbose=0, whatever progress the fit itself showed.
"""
import argparse
import importlib
import json
import os
import sys
import time

from ._report import Report, timed_fit  # noqa: F401 (timed_fit: re-exported for callers of cli.timed_fit)
from .exceptions import ModelFileError

FAMILIES = ["linear_model", "tree", "naive_bayes", "feature_extraction"]  # each has a _demo.py

# short name -> class name in fastml (resolved when used, so families can land in any order)
MODELS = {
    "logreg": "LogisticRegression",
    "perceptron": "Perceptron",
    "voted-perceptron": "VotedPerceptron",
    "kernel-perceptron": "KernelPerceptron",
    "svm": "LinearSVM",
    "tree": "DecisionTreeClassifier",
    "tree-regressor": "DecisionTreeRegressor",
    "forest": "RandomForestClassifier",
    "forest-regressor": "RandomForestRegressor",
    "nb": "NaiveBayes",
    "gaussian-nb": "GaussianNB",
    "categorical-nb": "CategoricalNB",
    "linreg": "LinearRegression",
    "ridge": "Ridge",
    "polyreg": "PolynomialRegression",
}

# data files shipped with fastml, usable by name in place of a path
BUNDLED = {"auto-mpg": ("datasets", "data", "auto_mpg.csv")}

PREDICT_CHUNK_ROWS = 65536


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


# ---------------------------------------------------------------------------- demo

def run_demo(args):
    report = Report()
    print("fastml demo: the lectures' algorithms on the bundled Auto MPG data "
          "(Quinlan 1993, UCI; 392 cars)")
    start = time.perf_counter()
    for family in FAMILIES:
        try:
            demo = importlib.import_module(f"fastml.{family}._demo")
        except ModuleNotFoundError as exc:
            if exc.name == f"fastml.{family}._demo":
                continue
            raise
        demo.run(report)
    print(f"\ndone in {time.perf_counter() - start:.2f} s")
    return 0


# ---------------------------------------------------------------------------- models

def predictors():
    """{class name: class} of the estimators this build has that predict: fit, predict and
    evaluate need predict, so a transformer (PolynomialFeatures) is no model here."""
    import fastml
    return {name: cls for name, cls in fastml.all_estimators() if hasattr(cls, "predict")}


def available_models():
    """{name usable with --model: class name} for the estimators this build has."""
    present = predictors()
    names = {short: cls for short, cls in MODELS.items() if cls in present}
    names.update({cls: cls for cls in present if cls not in MODELS.values()})
    return names


def resolve_model(name):
    """The estimator class for a short name (MODELS) or a class name."""
    import fastml
    present = predictors()
    class_name = MODELS.get(name, name)
    if class_name in present:
        return present[class_name]
    choices = ", ".join(available_models())
    if class_name in dict(fastml.all_estimators()):
        raise CLIError(f"{name!r} is a transformer (it has no predict), not a model; "
                       f"available: {choices}")
    if name in MODELS:
        raise CLIError(f"model {name!r} ({class_name}) is not available in this fastml build; "
                       f"available: {choices}")
    raise CLIError(f"unknown model {name!r}; available: {choices}")


def parse_params(pairs):
    """--param k=v ... -> {k: v}; v is read as JSON (numbers, true/false/null, lists), else
    None/True/False, else kept as text."""
    params = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key.isidentifier():
            raise CLIError(f"--param expects NAME=VALUE, got {pair!r}")
        params[key] = _parse_value(text)
    return params


def _parse_value(text):
    literals = {"None": None, "none": None, "True": True, "False": False}
    if text in literals:
        return literals[text]
    try:
        return json.loads(text)
    except ValueError:
        return text


def build_estimator(args):
    """The estimator --model and --param name; progress on (verbose=1) unless --quiet or a
    --param sets it (save_model turns it off again in the file)."""
    cls = resolve_model(args.model)
    est = cls()
    names = est.get_params(deep=False)
    defaults = {}
    if "random_state" in names:
        defaults["random_state"] = args.seed
    if "verbose" in names:
        defaults["verbose"] = 0 if args.quiet else 1
    try:
        est.set_params(**{**defaults, **parse_params(args.param)})
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return est


# ---------------------------------------------------------------------------- data

def load_columns(data, text_columns=()):
    """Typed columns of a data file (or of a bundled data set named in BUNDLED); text_columns
    are read as text (a saved model's, see model_text_columns)."""
    from ._tabular_io import read_table
    if data in BUNDLED and not os.path.exists(data):
        data = os.path.join(os.path.dirname(__file__), *BUNDLED[data])
    return read_table(data, text_columns)


def model_text_columns(model):
    """The columns a saved model took as text at fit: a new file is read with them as text,
    whatever its cells look like (a column of codes "1", "2", "A" whose new cells are all
    digits must not reach the model as numbers, which match none of its levels)."""
    from ._tabular_io import TabularModel
    return model.text_columns() if isinstance(model, TabularModel) else []


def split_target(columns, target, drop=()):
    """(feature columns, target column, rows whose target is present)."""
    from ._tabular_io import missing_mask, take_rows
    if target not in columns:
        raise CLIError(f"the data has no column {target!r}; its columns are {list(columns)}")
    for name in drop:
        if name not in columns:
            raise CLIError(f"--drop names column {name!r}, which the data does not have")
    features = {k: v for k, v in columns.items() if k != target and k not in drop}
    if not features:
        raise CLIError("no feature columns left besides the target")
    keep = ~missing_mask(columns[target])
    if not keep.any():
        raise CLIError(f"the target column {target!r} is empty")
    if not keep.all():
        note(f"dropped {int((~keep).sum())} rows with a missing target")
        features = take_rows(features, keep)
    return features, columns[target][keep]


def target_for(estimator, y, target):
    """The target as the estimator needs it: numbers for a regressor (text is an error);
    labels for a classifier (whole numbers become ints so they print as such)."""
    import numpy as np
    if _kind(estimator) == "regressor":
        if y.dtype == object:
            example = next(v for v in y if v is not None)
            raise CLIError(f"the target column {target!r} holds text (e.g. {example!r}); "
                           f"{type(_inner(estimator)).__name__} is a regressor and needs numbers")
        return y
    if y.dtype != object and np.all(np.mod(y, 1) == 0):
        return y.astype(np.int64)
    return y


def complete_rows(estimator, features):
    """Rows the estimator can take: all, or those without a missing cell when it does not
    handle missing values."""
    import numpy as np
    from ._tabular_io import missing_mask
    n = len(next(iter(features.values())))
    if getattr(estimator, "_allows_nan", False) or getattr(_inner(estimator), "_allows_nan",
                                                           False):
        return np.ones(n, dtype=bool)
    missing = np.zeros(n, dtype=bool)
    for col in features.values():
        missing |= missing_mask(col)
    return ~missing


def _inner(model):
    return getattr(model, "estimator", model)


def _kind(model):
    return getattr(_inner(model), "_estimator_type", None)


def note(line):
    print(f"note: {line}", file=sys.stderr)


# ---------------------------------------------------------------------------- metrics

def metrics_for(model, X, y):
    """{name: value}: accuracy and log-loss for a classifier, RMSE and R² for a regressor.
    Log-loss is left out, with a note, when y holds classes the model never saw (it has no
    probability for them; `fastml.metrics.log_loss` refuses them)."""
    from . import metrics
    pred = model.predict(X)
    if _kind(model) == "regressor":
        return {"rmse": metrics.rmse(y, pred), "r2": metrics.r2_score(y, pred)}, pred
    out = {"accuracy": metrics.accuracy_score(y, pred)}
    if hasattr(_inner(model), "predict_proba"):
        unseen = _unseen_labels(y, model.classes_)
        if unseen:
            note(f"no log-loss: the data has classes the model never saw: {unseen[:5]!r}")
        else:
            out["log_loss"] = metrics.log_loss(y, model.predict_proba(X), model.classes_)
    return out, pred


def _unseen_labels(y, classes):
    from .metrics import unique_labels
    return unique_labels(list(set(y.tolist()) - set(classes.tolist())))


def format_metrics(label, values):
    return f"{label}: " + "  ".join(f"{k}={v:.4f}" for k, v in values.items())


def print_confusion(y, pred, classes, title):
    from .metrics import confusion_matrix
    labels = list(classes.tolist()) + _unseen_labels(y, classes)
    counts = confusion_matrix(y, pred, labels)
    names = [str(c) for c in labels]
    width = max(6, *(len(s) for s in names)) + 2
    print(f"confusion matrix ({title}; rows = true class, columns = predicted):")
    print(" " * width + "".join(f"{s:>{width}}" for s in names))
    for name, row in zip(names, counts):
        print(f"{name:>{width}}" + "".join(f"{c:>{width}d}" for c in row))


# ---------------------------------------------------------------------------- fit, predict, evaluate

def check_can_plot(args):
    """--plot needs matplotlib: say so before the fit, not after it."""
    if getattr(args, "plot", None):
        from ._extras import require
        require("matplotlib", "plot", "--plot")


def run_fit(args):
    import numpy as np
    from .model_selection import train_test_split
    from ._tabular_io import HashedModel, TabularModel, take_rows
    check_can_plot(args)
    estimator = build_estimator(args)
    if args.hash:
        check_takes_sparse(estimator)
    if args.chunk_rows is not None:
        return run_fit_stream(args, estimator)
    columns = load_columns(args.data)
    features, y = split_target(columns, args.target, args.drop)
    y = target_for(estimator, y, args.target)
    model = (HashedModel(estimator, n_features=2**args.hash, target=args.target) if args.hash
             else TabularModel(estimator, target=args.target))
    keep = complete_rows(model if args.hash else estimator, features)
    if not keep.all():
        note(f"dropped {int((~keep).sum())} rows with missing values "
             f"({type(estimator).__name__} does not take missing values)")
        features, y = take_rows(features, keep), y[keep]
    n = len(y)
    if args.test_size > 0:
        train, test = train_test_split(np.arange(n), np.arange(n), test_size=args.test_size,
                                       random_state=args.seed)[:2]
    else:
        train, test = np.arange(n), np.arange(0)
    n_text = sum(col.dtype == object for col in features.values())
    kind = _kind(model)
    described = (f"classification, {len(set(y.tolist()))} classes" if kind == "classifier"
                 else "regression")
    print(f"model: {estimator!r}")
    print(f"data: {args.data}: {n} rows x {len(features)} features ({n_text} text), "
          f"target {args.target!r} ({described})")
    if args.hash:
        print(f"hashing: {len(features)} columns -> 2^{args.hash} features "
              f"(text: 'column=value' tokens, numbers: (column, value) pairs)")
    print(f"split: {len(train)} train, {len(test)} test")
    train_cols, test_cols = take_rows(features, train), take_rows(features, test)
    start = time.perf_counter()
    model.fit(train_cols, y[train])
    print(f"fit time: {time.perf_counter() - start:.4f} s")
    values, _ = metrics_for(model, train_cols, y[train])
    print(format_metrics("train", values))
    shown_cols, shown_y, shown = train_cols, y[train], "train"
    if len(test):
        values, pred = metrics_for(model, test_cols, y[test])
        print(format_metrics("test", values))
        shown_cols, shown_y, shown = test_cols, y[test], "test"
    if kind == "classifier":
        pred = model.predict(shown_cols)
        print_confusion(shown_y, pred, model.classes_, shown)
    if args.out:
        save_model(model, estimator, args.out)
    if args.plot:
        _plot_report(model, shown_cols, shown_y, shown, args.plot)
    return 0


def save_model(model, estimator, path):
    """Save the model with verbose=0: the progress the CLI showed while fitting must not
    follow the model into a user's program (fit, partial_fit and predict would print)."""
    from .io import save
    if "verbose" in estimator.get_params(deep=False):
        estimator.set_params(verbose=0)
    save(model, path)
    print(f"saved model to {path}")


def check_takes_sparse(estimator):
    """--hash gives a sparse matrix: refuse, naming the models that take one, an estimator
    that would need it dense (2**BITS columns)."""
    import fastml
    if getattr(estimator, "_accepts_sparse", False):
        return
    takers = [short for short, cls in available_models().items()
              if getattr(getattr(fastml, cls, None), "_accepts_sparse", False)]
    raise CLIError(f"--hash gives sparse features, which {type(estimator).__name__} does not "
                   f"take; use one of: {', '.join(takers)}")


def run_fit_stream(args, estimator):
    """fit --chunk-rows: stream the file through fastml.fit_stream (all rows, no test split)."""
    from .stream import fit_stream
    from ._tabular_io import TabularModel
    print(f"model: {estimator!r}")
    start = time.perf_counter()
    try:
        if args.hash:
            hashed = _hashed_stream(args, estimator)
            fit_stream(estimator, hashed.chunks, verbose=0 if args.quiet else 1)
        else:
            fit_stream(estimator, args.data, args.target, chunk_rows=args.chunk_rows,
                       drop=list(args.drop), verbose=0 if args.quiet else 1)
    except (TypeError, ValueError, FileNotFoundError) as exc:
        raise CLIError(str(exc)) from None
    print(f"data: {args.data}: streamed in chunks of {args.chunk_rows} rows, target "
          f"{args.target!r} (all rows train the model: no test split when streaming)")
    print(f"fit time: {time.perf_counter() - start:.4f} s")
    if args.out:
        if args.hash:
            model = hashed.model
        else:
            names = getattr(estimator, "feature_names_in_", None)
            model = TabularModel.wrap(estimator, list(names))
        save_model(model, estimator, args.out)
    return 0


class _HashedChunks:
    """fit --hash --chunk-rows: the file's chunks as hashed (X, y) pairs for fit_stream (a
    callable source: fit_stream may read the labels in a pass of its own, then the data)."""

    def __init__(self, model, reader, chunk_rows, estimator):
        self.model, self.reader, self.chunk_rows = model, reader, chunk_rows
        self.estimator = estimator

    def chunks(self):
        from ._tabular_io import missing_mask
        names, target = self.model.feature_names_, self.model.target
        from ._readers import read_ahead
        for table in read_ahead(self.reader.batches(names + [target], self.chunk_rows)):
            frame = table.to_pandas()
            y = frame[target].to_numpy()
            keep = ~missing_mask(y)          # rows without a label teach nothing
            if not keep.any():
                continue
            cols = {n: frame[n].to_numpy()[keep] for n in names}
            yield self.model.transform(cols), target_for(self.estimator, y[keep], target)


def _hashed_stream(args, estimator):
    from ._readers import open_source
    from ._tabular_io import HashedModel
    reader = open_source(args.data)
    names = reader.column_names()
    if args.target not in names:
        raise CLIError(f"the data has no column {args.target!r}; its columns are {names}")
    for name in args.drop:
        if name not in names:
            raise CLIError(f"--drop names column {name!r}, which the data does not have")
    model = HashedModel(estimator, n_features=2**args.hash, target=args.target)
    model.feature_names_ = [n for n in names if n != args.target and n not in args.drop]
    if not model.feature_names_:
        raise CLIError("no feature columns left besides the target")
    print(f"hashing: {len(model.feature_names_)} columns -> 2^{args.hash} features "
          f"(text: 'column=value' tokens, numbers: (column, value) pairs)")
    return _HashedChunks(model, reader, args.chunk_rows, estimator)


def run_predict_stream(args):
    """predict --chunk-rows: read, predict and write one chunk at a time."""
    import csv
    import numpy as np
    from ._readers import open_source, read_ahead
    model = load_model(args.model)
    reader = open_source(args.data, model_text_columns(model))
    model, _ = model_input(model, {n: None for n in reader.column_names()})
    stream = open(args.out, "w", newline="") if args.out else sys.stdout
    n = 0
    try:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow([f"P({c})" for c in model.classes_.tolist()] if args.proba
                        else ["prediction"])
        for table in read_ahead(reader.batches(model.feature_names_, args.chunk_rows)):
            frame = table.to_pandas()
            cols = {name: frame[name].to_numpy() for name in model.feature_names_}
            rows = np.flatnonzero(complete_rows(model, cols))   # the others stay empty
            picked = {name: col[rows] for name, col in cols.items()}
            result = (model.predict_proba(picked) if args.proba else model.predict(picked)) \
                if len(rows) else []
            outputs = [None] * len(frame)
            for i, value in zip(rows, np.asarray(result).tolist()):
                outputs[i] = value
            for value in outputs:
                if value is None:
                    writer.writerow([""] * (len(model.classes_) if args.proba else 1))
                else:
                    writer.writerow([_cell(v) for v in value] if args.proba else [_cell(value)])
            n += len(frame)
    finally:
        if args.out:
            stream.close()
    if args.out:
        print(f"wrote {n} {'probability rows' if args.proba else 'predictions'} to {args.out}")
    return 0


def load_model(path):
    """The fitted model a file holds; a CLIError for anything else (a file that is not a
    model file, an object that does not predict, a model never fitted)."""
    from ._base import BaseEstimator
    from ._tabular_io import HashedModel, TabularModel
    from .io import load
    if not os.path.isfile(path):
        raise CLIError(f"no such model file: {path}")
    try:
        model = load(path)
    except ModelFileError as exc:
        raise CLIError(f"{path}: {exc}") from None
    if not isinstance(model, BaseEstimator) or not hasattr(model, "predict"):
        raise CLIError(f"{path} holds a {type(model).__name__}, not a model that predicts "
                       f"(write one with 'fastml fit --out' or fastml.save)")
    if isinstance(model, (TabularModel, HashedModel)) and not hasattr(model, "feature_names_"):
        raise CLIError(f"{path} holds a {type(model).__name__} that was never fitted "
                       f"(it has no feature_names_)")
    return model


def model_input(model, columns):
    """(model, its feature columns of a data file). A TabularModel knows its columns; a bare
    estimator saved from Python gets the columns it was fitted on (feature_names_in_), or all
    of them, handed over as they are."""
    from ._tabular_io import HashedModel, TabularModel
    if not isinstance(model, (TabularModel, HashedModel)):
        names = getattr(model, "feature_names_in_", None)
        model = TabularModel.wrap(model, list(names) if names is not None else list(columns))
    absent = [n for n in model.feature_names_ if n not in columns]
    if absent:
        raise CLIError(f"the data has no column {absent[0]!r} (the model was trained on "
                       f"{model.feature_names_})")
    return model, {n: columns[n] for n in model.feature_names_}


def run_predict(args):
    import numpy as np
    from ._progress import chunks
    from ._tabular_io import take_rows
    if args.chunk_rows is not None:
        return run_predict_stream(args)
    model = load_model(args.model)
    model, features = model_input(model, load_columns(args.data, model_text_columns(model)))
    if args.proba and not hasattr(_inner(model), "predict_proba"):
        raise CLIError(f"{type(_inner(model)).__name__} does not give probabilities "
                       f"(predict_proba); drop --proba")
    n = len(next(iter(features.values())))
    keep = complete_rows(model, features)
    rows = np.flatnonzero(keep)
    if not keep.all():
        note(f"{n - len(rows)} rows have missing values the model cannot take; their "
             f"prediction is left empty")
    outputs = [None] * n
    verbose = 0 if args.quiet or len(rows) <= PREDICT_CHUNK_ROWS else 1
    for part in chunks(len(rows), PREDICT_CHUNK_ROWS, desc="predict", verbose=verbose):
        cols = take_rows(features, rows[part])
        result = model.predict_proba(cols) if args.proba else model.predict(cols)
        for i, value in zip(rows[part], result.tolist()):
            outputs[i] = value
    header = ([f"P({c})" for c in model.classes_.tolist()] if args.proba else ["prediction"])
    _write_rows(args.out, header, outputs, args.proba)
    if args.out:
        print(f"wrote {n} {'probability rows' if args.proba else 'predictions'} to {args.out}")
    return 0


def _write_rows(path, header, outputs, many):
    import csv
    width = len(header)
    stream = open(path, "w", newline="") if path else sys.stdout
    try:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(header)
        for value in outputs:
            if value is None:
                writer.writerow([""] * width)
            else:
                writer.writerow([_cell(v) for v in value] if many else [_cell(value)])
    finally:
        if path:
            stream.close()


def _cell(v):
    return repr(v) if isinstance(v, float) else str(v)


def run_evaluate(args):
    from ._tabular_io import take_rows
    check_can_plot(args)
    model = load_model(args.model)
    columns = load_columns(args.data, model_text_columns(model))
    features, y = split_target(columns, args.target)
    model, features = model_input(model, features)
    y = target_for(model, y, args.target)
    keep = complete_rows(model, features)
    if not keep.all():
        note(f"skipped {int((~keep).sum())} rows with missing values the model cannot take")
        features, y = take_rows(features, keep), y[keep]
    print(f"model: {_inner(model)!r}")
    print(f"data: {args.data}: {len(y)} rows, target {args.target!r}")
    values, pred = metrics_for(model, features, y)
    print(format_metrics("evaluate", values))
    if _kind(model) == "classifier":
        print_confusion(y, pred, model.classes_, "evaluate")
    if args.plot:
        _plot_report(model, features, y, "evaluate", args.plot)
    return 0


# ---------------------------------------------------------------------------- info-gain / tree

def _labelled_frame(args):
    from ._tabular_io import _frame, missing_mask
    features, y = split_target(load_columns(args.data), args.target, args.drop)
    empty = [name for name, col in features.items() if missing_mask(col).all()]
    if empty:
        raise CLIError(f"column {empty[0]!r} has no values (every cell is empty); leave it out "
                       f"with --drop {','.join(empty)}")
    return _frame(features), list(features), y


def run_info_gain(args):
    info = _optional("fastml.info", "the information-gain table")
    X, names, y = _labelled_frame(args)
    print(info.information_gain_table(X, y, feature_names=names))
    return 0


def run_tree(args):
    import fastml
    info = _optional("fastml.info", "the information-gain table")
    tree = _optional("fastml.tree", "decision trees")
    if not hasattr(fastml, "DecisionTreeClassifier") or not hasattr(tree, "export_text"):
        raise CLIError("decision trees are not available in this fastml build yet")
    check_can_plot(args)
    X, names, y = _labelled_frame(args)
    print(info.information_gain_table(X, y, feature_names=names))
    params = {"max_depth": args.max_depth, "max_pchance": args.max_pchance}
    model = fastml.DecisionTreeClassifier(**params, **_seed_if_any(args))
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    print(f"\ndecision tree ({_tree_size(model)}; fit {seconds * 1e3:.1f} ms; training accuracy "
          f"{float((model.predict(X) == y).mean()):.4f}):")
    print(tree.export_text(model, feature_names=names))
    if args.plot:
        from . import plot
        plot.plot_tree(model, feature_names=names, path=args.plot)
        print(f"wrote {args.plot}")
    return 0


def _seed_if_any(args):
    import fastml
    return ({"random_state": args.seed}
            if "random_state" in fastml.DecisionTreeClassifier._get_param_names() else {})


def _tree_size(model):
    parts = []
    for name, method in (("depth", "get_depth"), ("leaves", "get_n_leaves")):
        if hasattr(model, method):
            parts.append(f"{name} {getattr(model, method)()}")
    return ", ".join(parts) or "fitted"


def _optional(module, what):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise CLIError(f"{what} ({module}) is not available in this fastml build yet") \
                from None
        raise


def _plot_report(model, features, y, title, path):
    from . import plot
    inner = _inner(model)
    X = model.transform(features) if hasattr(model, "transform") else features
    names = model.input_names() if hasattr(model, "input_names") else None
    plot.plot_report(inner, X, y, title=title, feature_names=names, path=path)
    print(f"wrote {path}")


# ---------------------------------------------------------------------------- parser

def build_parser():
    parser = argparse.ArgumentParser(
        prog="fastml", description="Classic machine learning from the lecture decks.",
        epilog="examples:\n  fastml demo\n  fastml fit cars.csv --target origin --model tree "
               "--out cars.fastml\n  fastml predict cars.fastml new_cars.csv\n"
               "run 'fastml COMMAND --help' for each command's options",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="store_true",
                        help="print fastml's version (with --verbose: the build report of "
                             "fastml.show_config(), for bug reports) and exit")
    parser.add_argument("--verbose", action="store_true", help="with --version: the full report")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name, help, description, example, func):
        p = sub.add_parser(name, help=help, description=description,
                           epilog="example:\n  " + example,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=func)
        return p

    data_help = ("a CSV or Parquet file (text columns are categorical, empty cells missing), or "
                 "the name of a bundled data set: " + ", ".join(BUNDLED))

    command("demo", "train every family on the bundled data and report",
            "Train every estimator family on the bundled Auto MPG data and print train/test "
            "metrics and fit times.", "fastml demo", run_demo)

    fit = command(
        "fit", "train a model on a data file and report train / held-out metrics",
        "Train a model, print its train and held-out metrics (accuracy, log-loss and the "
        "confusion matrix for classifiers; RMSE and R2 for regressors) and the fit time.",
        "fastml fit auto-mpg --target origin --model logreg --param alpha=0.01 --out cars.fastml"
        "\n  fastml fit cars.parquet --target mpg --model ridge --test-size 0.3",
        run_fit)
    fit.add_argument("data", metavar="DATA", help=data_help)
    fit.add_argument("--target", required=True, metavar="COL", help="the column to predict")
    fit.add_argument("--model", required=True, metavar="NAME",
                     help="short name (" + ", ".join(MODELS) + ") or an estimator class name")
    fit.add_argument("--param", action="append", metavar="K=V",
                     help="an estimator parameter, repeatable (e.g. --param max_depth=4)")
    fit.add_argument("--test-size", type=_fraction, default=0.2, metavar="F",
                     help="fraction of rows held out for testing (default 0.2; 0 = none)")
    fit.add_argument("--drop", type=_names, default=(), metavar="COLS",
                     help="comma-separated columns not to use as features")
    fit.add_argument("--seed", type=int, default=0, help="seed of the split and the model")
    fit.add_argument("--out", metavar="MODEL", help="save the fitted model to this file")
    fit.add_argument("--plot", metavar="PNG", help="write a picture of the fit to this file")
    fit.add_argument("--quiet", action="store_true", help="no progress bar")
    fit.add_argument("--chunk-rows", type=_positive_rows, default=None, metavar="N",
                     help="stream a Parquet / CSV file N rows at a time (bounded memory)")
    fit.add_argument("--hash", type=_hash_bits, default=None, metavar="BITS",
                     help="hash the feature columns into 2**BITS sparse features (FeatureHasher: "
                          "a text cell is the token 'column=value', a number the pair "
                          "(column, value), a missing cell nothing); predict hashes alike")

    predict = command(
        "predict", "predict with a saved model",
        "Write one prediction per row of DATA (CSV with a header) to --out or stdout.",
        "fastml predict cars.fastml new_cars.csv --out predictions.csv --proba", run_predict)
    predict.add_argument("model", metavar="MODEL", help="a model file written by 'fastml fit'")
    predict.add_argument("data", metavar="DATA", help=data_help)
    predict.add_argument("--out", metavar="FILE", help="CSV file to write (default: stdout)")
    predict.add_argument("--proba", action="store_true",
                         help="write class probabilities instead of labels")
    predict.add_argument("--quiet", action="store_true", help="no progress bar")
    predict.add_argument("--chunk-rows", type=_positive_rows, default=None, metavar="N",
                         help="read, predict and write N rows at a time (bounded memory)")

    evaluate = command(
        "evaluate", "metrics of a saved model on labelled data",
        "Print a saved model's metrics on DATA (accuracy, log-loss and the confusion matrix, "
        "or RMSE and R2).", "fastml evaluate cars.fastml test_cars.csv --target origin",
        run_evaluate)
    evaluate.add_argument("model", metavar="MODEL", help="a model file written by 'fastml fit'")
    evaluate.add_argument("data", metavar="DATA", help=data_help)
    evaluate.add_argument("--target", required=True, metavar="COL", help="the true labels")
    evaluate.add_argument("--plot", metavar="PNG", help="write a picture to this file")

    info_gain = command(
        "info-gain", "the information gain of every attribute",
        "Print the lectures' 'information gains using the training set' table: IG for "
        "categorical attributes, IG* and its threshold for real ones.",
        "fastml info-gain auto-mpg --target origin --drop name", run_info_gain)
    info_gain.add_argument("data", metavar="DATA", help=data_help)
    info_gain.add_argument("--target", required=True, metavar="COL", help="the class column")
    info_gain.add_argument("--drop", type=_names, default=(), metavar="COLS",
                           help="comma-separated columns to leave out")

    tree = command(
        "tree", "the information-gain table and the decision tree as text",
        "Print the information-gain table, then grow a decision tree (ID3 multiway splits on "
        "categorical attributes, IG* thresholds on real ones, optional chi-square pruning) "
        "and print it.", "fastml tree auto-mpg --target origin --drop name --max-depth 3",
        run_tree)
    tree.add_argument("data", metavar="DATA", help=data_help)
    tree.add_argument("--target", required=True, metavar="COL", help="the class column")
    tree.add_argument("--drop", type=_names, default=(), metavar="COLS",
                      help="comma-separated columns to leave out")
    tree.add_argument("--max-depth", type=int, default=None, metavar="N")
    tree.add_argument("--max-pchance", type=_fraction, default=None, metavar="P",
                      help="chi-square pruning: collapse splits with p_chance above P")
    tree.add_argument("--seed", type=int, default=0)
    tree.add_argument("--plot", metavar="PNG", help="draw the tree into this file")
    return parser


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def _positive_rows(text):
    try:
        rows = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows, got {text!r}") \
            from None
    if rows < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 row per chunk, got {rows}")
    return rows


def _hash_bits(text):
    try:
        bits = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of bits (1 to 30), got "
                                         f"{text!r}") from None
    if not 1 <= bits <= 30:
        raise argparse.ArgumentTypeError(f"expected 1 to 30 bits (2 to 2**30 features), got "
                                         f"{bits}")
    return bits


def _names(text):
    return tuple(s.strip() for s in text.split(",") if s.strip())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (e.g. ConvergenceWarning) as one readable line, without source code."""
    print(f"warning: {message}", file=file or sys.stderr)


# What a user's data, parameters or files can cause: one line on stderr and exit status 2,
# never a traceback. ArithmeticError covers FloatingPointError (e.g. SGD diverging),
# OverflowError and ZeroDivisionError; KeyError comes from a column that is not there.
USER_ERRORS = (CLIError, ModelFileError, ValueError, TypeError, ArithmeticError, RecursionError,
               MemoryError, KeyError, IndexError, OSError, ImportError)


def error_message(exc):
    """The one line printed for a user error: the exception's first line, with what kind of
    problem it is when the message alone would not say."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, KeyError):
        return f"no such column or key: {text}"
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + text if text else ''} (the data or a parameter is too large)"
    if isinstance(exc, RecursionError):
        return f"the input is nested too deeply ({text})"
    if isinstance(exc, ArithmeticError) and not isinstance(exc, (FloatingPointError,)):
        return f"numerical error ({type(exc).__name__}): {text}"
    if isinstance(exc, ImportError) and not text:
        return f"a required package is missing ({type(exc).__name__})"
    return text or type(exc).__name__


def main(argv=None):
    """Run the `fastml` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: sys.argv[1:]).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user error (one line on stderr, no traceback).

    Examples
    --------
    >>> main(["fit", "no-such-file.csv", "--target", "y", "--model", "tree"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__, show_config
        show_config() if args.verbose else print(f"fastml {__version__}")
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    import warnings
    shown_before, warnings.showwarning = warnings.showwarning, _show_warning
    try:
        status = args.func(args)
        sys.stdout.flush()       # a reader that left early shows here, not at exit
        return status
    except BrokenPipeError:
        # `fastml predict ... | head`: the reader has what it wanted; stop quietly, as cat does
        # (stdout goes to /dev/null, so the interpreter's last flush cannot fail again)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 (the CLI's contract: one line, status 2)
        if os.environ.get("FASTML_TRACEBACK"):
            raise
        if isinstance(exc, USER_ERRORS):
            print(f"fastml: error: {error_message(exc)}", file=sys.stderr)
        else:
            print(f"fastml: internal error: {type(exc).__name__}: {error_message(exc)} "
                  f"(FASTML_TRACEBACK=1 shows the traceback; please report it)",
                  file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = shown_before
