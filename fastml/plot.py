"""Pictures of models and results (matplotlib, the optional extra `pip install fastml[plot]`).

    from fastml import plot
    plot.plot_learning_curve(model, path="loss.png")            # loss_curve_ per iteration
    plot.plot_decision_regions(clf, X2, y, path="regions.png")  # any classifier, 2 features
    plot.plot_confusion_matrix(y_true, y_pred, path="cm.png")
    plot.plot_tree(tree, feature_names=names, path="tree.png")
    plot.plot_report(model, X, y, path="report.png")            # what `fastml fit --plot` draws

Each function draws into `ax` when given (and returns it), else into a new figure of
`figsize` inches that it saves to `path` (PNG at `dpi`, so the image is figsize * dpi pixels)
when a path is given; it returns the Axes (plot_report returns the Figure). Figures are made
with matplotlib's object API on the Agg canvas: no pyplot state, no display needed, safe in
threads and on servers.
"""
import numpy as np

__all__ = ["plot_learning_curve", "plot_decision_regions", "plot_confusion_matrix",
           "plot_tree", "plot_report"]

_PANEL = (5.5, 4.5)


def _new_figure(figsize):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("fastml.plot needs matplotlib: pip install 'fastml[plot]'") from None
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
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


# ---------------------------------------------------------------------------- learning curve

def plot_learning_curve(estimator, *, ax=None, title=None, path=None, figsize=(6.4, 4.4),
                        dpi=100):
    """The training loss per iteration / epoch from `loss_curve_` (or a sequence of losses).

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
        Without matplotlib (``pip install 'fastml[plot]'``).

    Examples
    --------
    >>> from fastml import plot
    >>> ax = plot.plot_learning_curve([1.0, 0.5, 0.25])
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
    ax.set_title(title or (f"{_name(estimator)}: learning curve"
                           if hasattr(estimator, "loss_curve_") else "learning curve"))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right")
    _save(ax.figure, path, dpi)
    return ax


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
        panels.append((1, lambda ax: plot_learning_curve(estimator, ax=ax)))
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
