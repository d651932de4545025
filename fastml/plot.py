"""Pictures of models and results (matplotlib: `pip install 'fastml-classic[plot]'`).

    from fastml import plot
    plot.plot_loss_curve(model, path="loss.png")                # loss_curve_ per iteration
    plot.plot_decision_regions(clf, X2, y, path="regions.png")  # any classifier, 2 features
    plot.plot_confusion_matrix(y_true, y_pred, path="cm.png")
    plot.plot_tree(tree, feature_names=names, path="tree.png")
    plot.plot_report(model, X, y, path="report.png")            # what `fastml fit --plot` draws
    curves = plot.learning_curves([GaussianNB(), LogisticRegression()], X, y,
                                  sizes=[10, 20, 50, 100], path="curves.png")  # error vs n

`learning_curves` computes first and draws second: it returns its numbers (a
`LearningCurves`) with or without matplotlib. Each drawing function draws into `ax` when
given (and returns it), else into a new figure of `figsize` inches that it saves to `path`
(PNG at `dpi`, so the image is figsize * dpi pixels) when a path is given; it returns the Axes
(plot_report returns the Figure). Figures are made
with matplotlib's object API on the Agg canvas: no pyplot state, no display needed, safe in
threads and on servers.
"""
from __future__ import annotations

import numbers
import os  # noqa: F401  (the PathLike hint is "os.PathLike[str]": resolving it needs os)
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from .model_selection import _n_test_rows
from ._extras import require

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import MatrixLike, PathLike, RandomStateLike, VectorLike

__all__ = ["plot_loss_curve", "plot_learning_curve", "plot_decision_regions",
           "plot_confusion_matrix", "plot_tree", "plot_report", "learning_curves",
           "LearningCurves"]

_PANEL = (5.5, 4.5)


def _new_figure(figsize):
    backend = require("matplotlib.backends.backend_agg", "plot", "fastml.plot")
    figure = require("matplotlib.figure", "plot", "fastml.plot")
    fig = figure.Figure(figsize=figsize, layout="constrained")
    backend.FigureCanvasAgg(fig)
    return fig


def _axes(ax, figsize):
    if ax is not None:
        return ax
    return _new_figure(figsize).add_subplot()


def _save(fig, path, dpi):
    if path is not None:
        fig.savefig(path, dpi=dpi)


def _name(estimator):
    return type(estimator).__name__


# ---------------------------------------------------------------------------- loss curve

def plot_loss_curve(estimator, *, ax=None, title=None, path=None, figsize=(6.4, 4.4), dpi=100):
    """The training loss per iteration / epoch from `loss_curve_` (or a sequence of losses).

    scikit-learn calls this a loss curve (``MLPClassifier.loss_curve_``); a learning curve is
    held-out error against training-set size, which `learning_curves` draws.

    Parameters
    ----------
    estimator : fitted estimator with `loss_curve_`, or a sequence of losses
    ax : matplotlib Axes, optional
        Draw here; otherwise into a new figure of `figsize` inches.
    title : str, optional
        The Axes title (a default names the estimator).
    path : str or path-like, optional
        Save the new figure there (PNG at `dpi`).
    figsize : (float, float)
        Inches of a new figure.
    dpi : int, default 100
        Resolution of the saved picture.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        If there is no non-empty 1-D loss curve.
    ImportError
        Without matplotlib (``pip install 'fastml-classic[plot]'``).

    Examples
    --------
    >>> from fastml import plot
    >>> ax = plot.plot_loss_curve([1.0, 0.5, 0.25])
    >>> ax.get_xlabel(), len(ax.lines[0].get_xdata())
    ('iteration', 3)
    """
    curve = getattr(estimator, "loss_curve_", estimator)
    if isinstance(curve, str) or not hasattr(curve, "__len__"):
        raise ValueError(f"{_name(estimator)} has no loss_curve_ to plot (fit it first, with "
                         f"an iterative solver)")
    curve = np.asarray(curve, dtype=np.float64)
    if curve.ndim != 1 or len(curve) == 0:
        raise ValueError("the loss curve must be a non-empty 1-D sequence of losses")
    ax = _axes(ax, figsize)
    steps = np.arange(1, len(curve) + 1)
    ax.plot(steps, curve, marker="o" if len(curve) <= 30 else None, markersize=4,
            label="training loss")
    positive = curve[np.isfinite(curve) & (curve > 0)]
    if len(positive) == len(curve) and positive.max() / positive.min() > 100:
        ax.set_yscale("log")
    ax.set_xlabel(_step_name(estimator))
    ax.set_ylabel("loss (objective)")
    ax.set_title(title or (f"{_name(estimator)}: loss curve"
                           if hasattr(estimator, "loss_curve_") else "loss curve"))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right")
    _save(ax.figure, path, dpi)
    return ax


def plot_learning_curve(*args, **kwargs):
    """Deprecated alias of `plot_loss_curve`, which draws the loss per epoch (scikit-learn
    calls that a loss curve); it warns (FutureWarning) and will be removed in fastml 0.3.

    Parameters
    ----------
    *args, **kwargs
        Those of `plot_loss_curve`.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import warnings
    >>> from fastml import plot
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     ax = plot.plot_learning_curve([1.0, 0.5])
    >>> caught[0].category.__name__, ax.get_title()
    ('FutureWarning', 'loss curve')
    """
    import warnings
    warnings.warn("plot_learning_curve is renamed plot_loss_curve (it draws loss_curve_; "
                  "learning_curves draws error against training-set size); the old name "
                  "will be removed in fastml 0.3", FutureWarning, stacklevel=2)
    return plot_loss_curve(*args, **kwargs)


def _step_name(estimator):
    solver = getattr(estimator, "solver", None)
    return "epoch" if solver in ("sgd", "minibatch") else "iteration"


# ---------------------------------------------------------------------------- decision regions

def plot_decision_regions(estimator, X, y=None, *, ax=None, feature_names=None, resolution=300,
                          title=None, path=None, figsize=(6.4, 5.2), dpi=100):
    """The class a fitted classifier predicts over the plane of two features, with the points
    of (X, y) on top (colour = true class). Works for any classifier with predict and
    classes_ (fastml or scikit-learn).

    Parameters
    ----------
    estimator : fitted classifier
        Fitted on two features.
    X : array-like of shape (n_samples, 2)
        The points to draw (and the extent of the grid).
    y : array-like of shape (n_samples,), optional
        Their true classes (the points' colours).
    feature_names : two str, optional
        Axis labels.
    resolution : int, default 300
        Grid points per axis.
    ax : matplotlib Axes, optional
        Draw here; otherwise into a new figure of `figsize` inches.
    title : str, optional
        The Axes title (a default names the estimator).
    path : str or path-like, optional
        Save the new figure there (PNG at `dpi`).
    figsize : (float, float)
        Inches of a new figure.
    dpi : int, default 100
        Resolution of the saved picture.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        If X does not have exactly 2 columns.

    Examples
    --------
    >>> from fastml import GaussianNB, plot
    >>> X, y = [[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]], [0, 0, 1, 1]
    >>> ax = plot.plot_decision_regions(GaussianNB().fit(X, y), X, y, resolution=20)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['0', '1']
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"decision regions need exactly 2 features; X has shape {X.shape} "
                         f"(select two columns, e.g. X[:, [0, 1]], and fit on them)")
    classes = np.asarray(estimator.classes_)
    ax = _axes(ax, figsize)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = np.where(hi > lo, (hi - lo) * 0.05, 1.0)
    g0 = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    g1 = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    G0, G1 = np.meshgrid(g0, g1)
    grid_pred = estimator.predict(np.column_stack([G0.ravel(), G1.ravel()]))
    codes = _codes(grid_pred, classes).reshape(G0.shape)
    cmap, colors = _class_colors(len(classes))
    ax.pcolormesh(G0, G1, codes, cmap=cmap, vmin=-0.5, vmax=len(classes) - 0.5, alpha=0.35,
                  shading="auto")
    if y is not None:
        y_codes = _codes(np.asarray(y), classes)
        for k, label in enumerate(classes):
            mask = y_codes == k
            ax.scatter(X[mask, 0], X[mask, 1], color=colors[k], edgecolor="black",
                       linewidth=0.5, s=28, label=str(label))
        ax.legend(title="class", loc="best", framealpha=0.85)
    names = list(feature_names) if feature_names is not None else ["feature 0", "feature 1"]
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.set_title(title or f"{_name(estimator)}: decision regions")
    _save(ax.figure, path, dpi)
    return ax


def _codes(labels, classes):
    index = {c: k for k, c in enumerate(classes.tolist())}
    return np.array([index.get(v, -1) for v in np.asarray(labels).tolist()], dtype=np.float64)


def _class_colors(n):
    from matplotlib.colors import ListedColormap
    import matplotlib
    base = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    colors = [base(k % base.N) for k in range(n)]
    return ListedColormap(colors), colors


# ---------------------------------------------------------------------------- confusion matrix

def plot_confusion_matrix(y_true, y_pred, *, labels=None, normalize=False, ax=None, title=None,
                          path=None, figsize=(5.6, 4.8), dpi=100):
    """counts[i, j] = rows of true class labels[i] predicted as labels[j] (normalize=True:
    each row divided by its total, i.e. per-class recall on the diagonal). The counts are
    `fastml.metrics.confusion_matrix`'s.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : list, optional
        Rows / columns in this order (default: the sorted labels of both); rows with a
        label outside `labels` are left out.
    normalize : bool, default False
        Divide each row by its total.
    ax : matplotlib Axes, optional
        Draw here; otherwise into a new figure of `figsize` inches.
    title : str, optional
        The Axes title (a default names the estimator).
    path : str or path-like, optional
        Save the new figure there (PNG at `dpi`).
    figsize : (float, float)
        Inches of a new figure.
    dpi : int, default 100
        Resolution of the saved picture.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        If the lengths differ.

    Examples
    --------
    >>> from fastml import plot
    >>> ax = plot.plot_confusion_matrix(["a", "b", "b"], ["a", "a", "b"])
    >>> ax.get_title()
    'confusion matrix (accuracy 0.667)'
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred have different lengths: {len(y_true)} and "
                         f"{len(y_pred)}")
    from .metrics import confusion_matrix, unique_labels
    labels = unique_labels(y_true, y_pred) if labels is None else list(labels)
    counts = confusion_matrix(y_true, y_pred, labels).astype(np.float64)
    shown = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1) if normalize else counts
    ax = _axes(ax, figsize)
    image = ax.imshow(shown, cmap="Blues", vmin=0)
    ax.figure.colorbar(image, ax=ax, label="fraction of true class" if normalize else "rows")
    threshold = shown.max() / 2 if shown.size else 0
    for i in range(len(labels)):
        for j in range(len(labels)):
            text = f"{shown[i, j]:.2f}" if normalize else f"{int(shown[i, j])}"
            ax.text(j, i, text, ha="center", va="center",
                    color="white" if shown[i, j] > threshold else "black")
    ticks = np.arange(len(labels))
    ax.set_xticks(ticks, [str(c) for c in labels], rotation=30 if len(labels) > 4 else 0)
    ax.set_yticks(ticks, [str(c) for c in labels])
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    accuracy = np.trace(counts) / max(counts.sum(), 1)
    ax.set_title(title or f"confusion matrix (accuracy {accuracy:.3f})")
    _save(ax.figure, path, dpi)
    return ax


# ---------------------------------------------------------------------------- trees

def plot_tree(estimator, *, feature_names=None, ax=None, title=None, path=None,
              figsize=None, dpi=100, **kwargs):
    """Draw a fitted decision tree (fastml.tree.plot_tree). figsize=None sizes the figure from
    the tree, about an inch per leaf and per level, so big trees stay readable.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : list of str, optional
    ax : matplotlib Axes, optional
        Draw here; otherwise into a new figure of `figsize` inches.
    title : str, optional
        The Axes title (a default names the estimator).
    path : str or path-like, optional
        Save the new figure there (PNG at `dpi`).
    figsize : (float, float)
        Inches of a new figure.
    dpi : int, default 100
        Resolution of the saved picture.
    **kwargs
        Passed to `fastml.tree.plot_tree`.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> from fastml import DecisionTreeClassifier, plot
    >>> tree = DecisionTreeClassifier().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    >>> plot.plot_tree(tree).get_title()
    'DecisionTreeClassifier'
    """
    from .tree import plot_tree as draw_tree
    if ax is None and figsize is None:
        tree = estimator.tree_
        figsize = (min(max(6.0, 1.05 * tree.n_leaves), 80.0),
                   max(4.0, 1.1 * (tree.max_depth + 1)))
    ax = _axes(ax, figsize)
    draw_tree(estimator, ax=ax, feature_names=feature_names, **kwargs)
    ax.set_title(title or f"{_name(estimator)}")
    _save(ax.figure, path, dpi)
    return ax


# ---------------------------------------------------------------------------- report

def plot_report(estimator, X, y, *, feature_names=None, title=None, path=None, dpi=100):
    """The pictures that fit the model, side by side: the confusion matrix on (X, y) for a
    classifier (predicted vs true values for a regressor), the decision regions when X has two
    features, the learning curve when the model has loss_curve_, the tree for a tree.

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        True targets of X.
    feature_names : list of str, optional
    title : str, optional
        Names the data (e.g. "test").
    path : str or path-like, optional
        Save the figure there (PNG at `dpi`).
    dpi : int, default 100

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from fastml import GaussianNB, plot
    >>> X, y = [[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]], [0, 0, 1, 1]
    >>> fig = plot.plot_report(GaussianNB().fit(X, y), X, y, title="train")
    >>> len(fig.axes) >= 2
    True
    """
    y = np.asarray(y)
    panels = []  # (width in panels, draw(ax))
    classifier = getattr(estimator, "_estimator_type", None) == "classifier"
    if classifier:
        panels.append((1, lambda ax: plot_confusion_matrix(
            y, estimator.predict(X), labels=list(np.asarray(estimator.classes_).tolist()),
            ax=ax, title=f"confusion matrix ({title})" if title else None)))
    else:
        panels.append((1, lambda ax: _plot_predicted_vs_true(estimator, X, y, ax, title)))
    numeric = _numeric_or_none(X)
    if classifier and numeric is not None and numeric.shape[1] == 2:
        panels.append((1, lambda ax: plot_decision_regions(estimator, numeric, y, ax=ax,
                                                           feature_names=feature_names)))
    if len(getattr(estimator, "loss_curve_", ()) or ()) > 0:
        panels.append((1, lambda ax: plot_loss_curve(estimator, ax=ax)))
    if "Tree" in _name(estimator) and hasattr(estimator, "get_depth"):
        panels.append((2, lambda ax: plot_tree(estimator, ax=ax, feature_names=feature_names)))
    widths = [w for w, _ in panels]
    fig = _new_figure((_PANEL[0] * sum(widths), _PANEL[1]))
    grid = fig.add_gridspec(1, len(panels), width_ratios=widths)
    for k, (_, draw) in enumerate(panels):
        draw(fig.add_subplot(grid[0, k]))
    fig.suptitle(f"{_name(estimator)}" + (f" on {title} data" if title else ""))
    _save(fig, path, dpi)
    return fig


def _plot_predicted_vs_true(estimator, X, y, ax, title):
    y = y.astype(np.float64)
    pred = np.asarray(estimator.predict(X), dtype=np.float64)
    ax.scatter(y, pred, s=14, alpha=0.7, edgecolor="none", label="rows")
    lo, hi = float(min(y.min(), pred.min())), float(max(y.max(), pred.max()))
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, label="perfect prediction")
    from .metrics import rmse as root_mean_squared_error
    rmse = root_mean_squared_error(y, pred)
    ax.set_xlabel("true value")
    ax.set_ylabel("predicted value")
    ax.set_title(f"predicted vs true{f' ({title})' if title else ''}, RMSE {rmse:.3g}")
    ax.legend(loc="upper left")
    ax.grid(True, alpha=0.3)
    return ax


def _numeric_or_none(X):
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr if arr.ndim == 2 and np.isfinite(arr).all() else None


# ---------------------------------------------------------------------------- learning curves

SCORINGS = ("error", "log_loss", "rmse")
_SCORE_LABELS = {"error": "held-out error (1 - accuracy)", "log_loss": "held-out log-loss",
                 "rmse": "held-out RMSE"}


class LearningCurves:
    """Held-out scores of several estimators against the training-set size: what
    `learning_curves` returns. All numbers are lower-is-better.

    Parameters
    ----------
    sizes : array of int, shape (n_sizes,)
        Training-set sizes, increasing.
    scores : dict of str to array of shape (n_repeats, n_sizes)
        Per estimator name, the held-out score of every repeat at every size.
    scoring : str
        What the scores are ("error", "log_loss", "rmse", or the callable's name).
    n_test : int
        Rows held out in each repeat.

    Attributes
    ----------
    sizes, scores, scoring, n_test
        As given.
    names : list of str
        The estimators' names, in the order given.
    ax : matplotlib Axes or None
        Where the curves were drawn (None when they were not).

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.plot import LearningCurves
    >>> curves = LearningCurves([10, 20], {"a": np.array([[0.3, 0.2], [0.1, 0.2]])}, "error", 5)
    >>> curves.mean("a"), curves.std("a")
    (array([0.2, 0.2]), array([0.14142136, 0.        ]))
    """

    def __init__(self, sizes: Sequence[int], scores: Dict[str, Any], scoring: str,
                 n_test: int) -> None:
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.scores = {name: np.asarray(s, dtype=np.float64) for name, s in scores.items()}
        self.names = list(self.scores)
        self.scoring, self.n_test = scoring, int(n_test)
        self.ax = None

    @property
    def n_repeats(self):
        """Random subsamples per size."""
        return next(iter(self.scores.values())).shape[0] if self.scores else 0

    def mean(self, name):
        """The mean score over the repeats at each size, shape (n_sizes,)."""
        return self.scores[name].mean(axis=0)

    def std(self, name):
        """The spread over the repeats at each size: the sample standard deviation (n - 1
        denominator; zeros with a single repeat), shape (n_sizes,)."""
        s = self.scores[name]
        return s.std(axis=0, ddof=1) if s.shape[0] > 1 else np.zeros(s.shape[1])

    def as_dict(self):
        """{"sizes", "scoring", "n_test", "scores", "mean", "std"}: plain arrays, e.g. for a
        DataFrame or JSON."""
        return {"sizes": self.sizes.copy(), "scoring": self.scoring, "n_test": self.n_test,
                "scores": {n: s.copy() for n, s in self.scores.items()},
                "mean": {n: self.mean(n) for n in self.names},
                "std": {n: self.std(n) for n in self.names}}

    def table(self):
        """The curves as text: one row per size, "mean ± std" per estimator."""
        width = max(16, *(len(n) + 2 for n in self.names)) if self.names else 16
        lines = ["size".rjust(6) + "".join(n.rjust(width) for n in self.names)]
        for k, size in enumerate(self.sizes):
            cells = "".join(f"{self.mean(n)[k]:.4f} ± {self.std(n)[k]:.4f}".rjust(width)
                            for n in self.names)
            lines.append(f"{size:>6d}{cells}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"LearningCurves(sizes={self.sizes.tolist()}, names={self.names}, "
                f"scoring={self.scoring!r}, n_repeats={self.n_repeats}, n_test={self.n_test})")

    def plot(self, *, ax: Any = None, title: Optional[str] = None,
             path: Optional[PathLike] = None, figsize: Tuple[float, float] = (6.4, 4.4),
             dpi: int = 100) -> Any:
        """Draw each estimator's mean score against the training-set size, with a band of
        plus / minus one standard deviation over the repeats.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw here; otherwise into a new figure of `figsize` inches.
        title : str, optional
            The Axes title (a default says how many repeats and test rows).
        path : str or path-like, optional
            Save the new figure there (PNG at `dpi`).
        figsize : (float, float)
            Inches of a new figure.
        dpi : int, default 100
            Resolution of the saved picture.

        Returns
        -------
        matplotlib Axes

        Raises
        ------
        ImportError
            Without matplotlib (``pip install 'fastml-classic[plot]'``).
        """
        ax = _axes(ax, figsize)
        for name in self.names:
            mean, std = self.mean(name), self.std(name)
            line, = ax.plot(self.sizes, mean, marker="o", markersize=4, label=name)
            ax.fill_between(self.sizes, mean - std, mean + std, color=line.get_color(),
                            alpha=0.2, linewidth=0)
        if len(self.sizes) > 1 and self.sizes[-1] >= 10 * self.sizes[0]:
            ax.set_xscale("log")   # the small sizes are where the curves differ most
        ax.set_xlabel("training-set size (rows)")
        ax.set_ylabel(_SCORE_LABELS.get(self.scoring, f"held-out {self.scoring}"))
        ax.set_title(title or f"learning curves ({self.n_repeats} random subsamples, "
                              f"{self.n_test} test rows)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right")
        _save(ax.figure, path, dpi)
        self.ax = ax
        return ax


def learning_curves(estimators: Any, X: MatrixLike, y: VectorLike, *,
                    sizes: Sequence[Union[int, float]] = (0.1, 0.25, 0.5, 0.75, 1.0),
                    n_repeats: int = 10, test_size: Union[float, int] = 0.25,
                    scoring: Union[str, Callable[..., float], None] = None,
                    random_state: RandomStateLike = None, draw: Union[str, bool] = "auto",
                    ax: Any = None, title: Optional[str] = None, path: Optional[PathLike] = None,
                    figsize: Tuple[float, float] = (6.4, 4.4),
                    dpi: int = 100) -> LearningCurves:
    """Held-out error against training-set size for several estimators, over repeated random
    subsamples (lecture 002: Gaussian naive Bayes reaches its asymptotic error with fewer
    examples, logistic regression has the lower asymptotic error; Ng & Jordan 2002).

    Each repeat r = 0 .. n_repeats-1 draws ``order = rng.permutation(n)`` from
    ``rng = numpy.random.default_rng(random_state)`` (one generator for all repeats), holds out
    ``test = order[:n_test]`` and keeps ``pool = order[n_test:]`` for training. For
    classifiers the pool is reordered so that its first row of each class (by sorted label)
    comes first, the rest following in order, so every training set holds every class. The
    training set of size s is ``pool[:s]`` (nested: a larger set extends a smaller one, as more
    data would). Each estimator is cloned, fitted on it and scored on the test rows.

    Parameters
    ----------
    estimators : estimator, list of estimators, or dict of str to estimator
        The models to compare (cloned for every fit; the given objects are left unfitted).
        Names are their repr, or the dict's keys.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sizes : sequence of int or float, default (0.1, 0.25, 0.5, 0.75, 1.0)
        Training-set sizes: an int is a number of rows, a float in (0, 1] a fraction of the
        n - n_test training rows (rounded down). Sorted; repeated sizes are merged. For
        classifiers each must be at least the number of classes.
    n_repeats : int, default 10
        Random subsamples per size (the spread of the curves comes from them).
    test_size : float or int, default 0.25
        Held-out rows per repeat: a fraction in (0, 1) of n (rounded) or a number of rows.
    scoring : {"error", "log_loss", "rmse"} or callable, default None
        "error" (1 - accuracy; the default for classifiers), "log_loss" (needs
        predict_proba), "rmse" (the default for regressors), or
        ``scoring(estimator, X_test, y_test) -> float``, lower meaning better.
    random_state : None, int or numpy Generator
        Seed of the splits.
    draw : {"auto", True, False}, default "auto"
        Draw the curves (`LearningCurves.plot`): "auto" when matplotlib is installed (or
        when `ax` or `path` is given), True always (ImportError without matplotlib), False
        never.
    ax, title, path, figsize, dpi
        Passed to `LearningCurves.plot`.

    Returns
    -------
    LearningCurves
        ``scores[name]`` of shape (n_repeats, n_sizes), ``mean(name)``, ``std(name)``,
        ``sizes``, and ``ax`` when drawn.

    Raises
    ------
    ValueError
        If a size, test_size, n_repeats or scoring is out of range, the estimators mix
        classifiers and regressors, or the training rows lack a class.
    TypeError
        If an element of `estimators` is not an estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import GaussianNB, LogisticRegression
    >>> from fastml.plot import learning_curves
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0)
    >>> curves = learning_curves([GaussianNB(), LogisticRegression()], X, y,
    ...                          sizes=[4, 20, 150], n_repeats=5, random_state=0, draw=False)
    >>> curves.names, curves.scores["GaussianNB()"].shape
    (['GaussianNB()', 'LogisticRegression()'], (5, 3))
    >>> bool(curves.mean("LogisticRegression()")[-1] < 0.3)
    True
    """
    from ._base import clone
    from .model_selection import _take
    from ._validation import check_random_state
    named = _named_estimators(estimators)
    kinds = {getattr(est, "_estimator_type", None) for est in named.values()}
    if len(kinds) > 1:
        raise ValueError(f"the estimators mix kinds {sorted(map(str, kinds))}: compare "
                         f"classifiers with classifiers and regressors with regressors")
    classify = kinds == {"classifier"}
    score, scoring_name = _scorer(scoring, classify)
    y_arr = np.asarray(y)
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if y_arr.ndim != 1 or len(y_arr) != n:
        raise ValueError(f"y must be 1-D with one value per row of X; X has {n} rows, y has "
                         f"shape {y_arr.shape}")
    n_test = _n_test_rows(test_size, n)
    if isinstance(n_repeats, (bool, np.bool_)) or not isinstance(n_repeats, numbers.Integral) \
            or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer; got {n_repeats!r}")
    classes = np.unique(y_arr) if classify else None
    sizes = _train_sizes(sizes, n - n_test, len(classes) if classify else 1)
    rng = check_random_state(random_state)
    scores = {name: np.empty((n_repeats, len(sizes))) for name in named}
    for r in range(n_repeats):
        order = rng.permutation(n)
        test, pool = order[:n_test], order[n_test:]
        if classify:
            pool = _each_class_first(pool, y_arr, classes)
        X_test, y_test = _take(X, test), y_arr[test]
        for k, size in enumerate(sizes):
            train = pool[:size]
            X_train, y_train = _take(X, train), y_arr[train]
            for name, est in named.items():
                model = clone(est).fit(X_train, y_train)
                scores[name][r, k] = score(model, X_test, y_test)
    curves = LearningCurves(sizes, scores, scoring_name, n_test)
    if _should_draw(draw, ax, path):
        curves.plot(ax=ax, title=title, path=path, figsize=figsize, dpi=dpi)
    return curves


def _named_estimators(estimators):
    if isinstance(estimators, dict):
        named = {str(k): v for k, v in estimators.items()}
    else:
        items = [estimators] if hasattr(estimators, "get_params") else list(estimators)
        named = {}
        for est in items:
            name, k = repr(est), 2
            while name in named:            # the same model twice: keep both curves
                name, k = f"{repr(est)} #{k}", k + 1
            named[name] = est
    if not named:
        raise ValueError("estimators is empty: give at least one estimator")
    for name, est in named.items():
        if not (hasattr(est, "get_params") and hasattr(est, "fit")):
            raise TypeError(f"{name!r} is not an estimator (no fit / get_params); got "
                            f"{type(est).__name__}")
    return named


def _scorer(scoring, classify):
    from . import metrics
    if callable(scoring):
        return (lambda m, X, y: float(scoring(m, X, y))), getattr(scoring, "__name__", "score")
    if scoring is None:
        scoring = "error" if classify else "rmse"
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS} or a callable; got {scoring!r}")
    if scoring == "error":
        return (lambda m, X, y: 1.0 - metrics.accuracy_score(y, m.predict(X))), scoring
    if scoring == "log_loss":
        if not classify:
            raise ValueError("scoring='log_loss' needs classifiers")
        return (lambda m, X, y: metrics.log_loss(y, m.predict_proba(X), m.classes_)), scoring
    return (lambda m, X, y: metrics.rmse(y, m.predict(X))), scoring


def _train_sizes(sizes, n_pool, least):
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise ValueError(f"sizes must be a sequence of row counts or fractions; got {sizes!r}")
    out = []
    for s in sizes:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Real):
            raise ValueError(f"sizes holds {s!r}; give row counts (int) or fractions in (0, 1]")
        if isinstance(s, numbers.Integral):
            rows = int(s)
        elif 0 < s <= 1:
            rows = int(s * n_pool)
        else:
            raise ValueError(f"sizes holds {s!r}: a float must be a fraction in (0, 1] of the "
                             f"{n_pool} training rows (or give a whole number of rows)")
        if not least <= rows <= n_pool:
            why = (f"the {least} classes (every training set holds each class)" if least > 1
                   else "1")
            raise ValueError(f"sizes holds {s!r} = {rows} rows; a size must be at least {why} "
                             f"and at most the {n_pool} rows left after the test split")
        out.append(rows)
    if not out:
        raise ValueError("sizes is empty: give at least one training-set size")
    return np.unique(np.array(out, dtype=np.int64))


def _each_class_first(pool, y, classes):
    """The pool with its first row of each class moved to the front (rows in pool order),
    so that every prefix of at least len(classes) rows holds every class."""
    present, first = np.unique(y[pool], return_index=True)
    if len(present) < len(classes):
        absent = np.setdiff1d(classes, present)
        raise ValueError(f"after holding out the test rows, no training row has class "
                         f"{absent.tolist()[0]!r}; use a smaller test_size or more data")
    first = np.sort(first)
    return np.concatenate([pool[first], np.delete(pool, first)])


def _should_draw(draw, ax, path):
    if draw not in ("auto", True, False):
        raise ValueError(f"draw must be 'auto', True or False; got {draw!r}")
    if draw is False:
        return False
    if draw is True or ax is not None or path is not None:
        return True
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True
