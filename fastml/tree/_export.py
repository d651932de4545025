"""Reading a fitted tree: `export_text` prints it the way the lectures draw their trees
(one line per branch, "attribute = value" for multiway splits, "attribute < t" / ">= t" for
threshold splits, "predict <class>" with the class counts at the leaves); `plot_tree` draws it
with matplotlib (an optional dependency)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..exceptions import not_fitted_error
from .._extras import require

from ._tree_fast import KIND_CATEGORICAL, KIND_LEAF

__all__ = ["export_text", "plot_tree"]


def _fitted_tree(model):
    tree = getattr(model, "tree_", None)
    if tree is None:
        raise not_fitted_error(f"this {type(model).__name__} is not fitted yet: call fit first")
    return tree


def _feature_names(model, feature_names):
    if feature_names is not None:
        names = list(feature_names)
        if len(names) != model.n_features_in_:
            raise ValueError(f"feature_names has {len(names)} names; the tree has "
                             f"{model.n_features_in_} features")
        return names
    encoder = getattr(model, "_encoder", None)
    return list(encoder.feature_names_) if encoder is not None else \
        [f"x{j}" for j in range(model.n_features_in_)]


def _fmt(value):
    return f"{value:.6g}" if isinstance(value, (float, np.floating)) else str(value)


def branches(model, node, names):
    """(label, child) for each branch of an internal node, in child order."""
    t = model.tree_
    f, start, n = t.feature[node], t.child_start[node], t.n_child[node]
    if t.kind[node] != KIND_CATEGORICAL:
        if t.threshold[node] == np.inf:   # the missing-vs-present cut: every value goes left
            return [(f"{names[f]} is known", t.children[start]),
                    (f"{names[f]} is missing", t.children[start + 1])]
        thr = _fmt(t.threshold[node])
        return [(f"{names[f]} < {thr}", t.children[start]),
                (f"{names[f]} >= {thr}", t.children[start + 1])]
    levels = model.categories_[f]
    out = []
    for child in dict.fromkeys(t.children[start:start + n].tolist()):
        values = [_fmt(levels[v]) for v in range(n)
                  if t.children[start + v] == child and t.seen[start + v]]
        label = f"{names[f]} = {values[0]}" if len(values) == 1 else \
            f"{names[f]} in {{{', '.join(values)}}}"
        out.append((label, child))
    return out


def leaf_text(model, node):
    t = model.tree_
    value = t.value[node]
    if hasattr(model, "classes_"):
        counts = ", ".join(f"{c}: {int(k)}" for c, k in zip(model.classes_, value))
        return f"predict {model.classes_[int(np.argmax(value))]} ({counts})"
    return f"predict {value[0]:.6g} (n = {t.n_node_samples[node]})"


def leaf_box_text(model, node):
    """A leaf's label in a drawing: short enough for the leaf's slot (two lines)."""
    t = model.tree_
    value = t.value[node]
    if hasattr(model, "classes_"):
        counts = " / ".join(str(int(k)) for k in value)
        return f"{model.classes_[int(np.argmax(value))]}\n{counts}"
    return f"{value[0]:.4g}\nn={t.n_node_samples[node]}"


def export_text(model: Any, feature_names: Optional[Sequence[str]] = None, *,
                max_depth: Optional[int] = None) -> str:
    """The tree as indented text.

    For example, 000's MPG tree::

        cylinders = 4
        |   maker = america: predict good (bad: 0, good: 10)
        ...

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
        (or one of a forest's ``estimators_``).
    feature_names : list of str, optional
        Column names (default: the fitted ones, or x0, x1, ...).
    max_depth : int, optional
        Subtrees deeper than this are shown as "...".

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import DecisionTreeClassifier
    >>> tree = DecisionTreeClassifier().fit(np.array([[0.0], [1.0], [2.0], [3.0]]),
    ...                                     ["bad", "bad", "good", "good"])
    >>> print(export_text(tree, ["mpg"]), end="")
    mpg < 1.5: predict bad (bad: 2, good: 0)
    mpg >= 1.5: predict good (bad: 0, good: 2)
    """
    tree = _fitted_tree(model)
    names = _feature_names(model, feature_names)
    if tree.kind[0] == KIND_LEAF:
        return leaf_text(model, 0) + "\n"
    lines = []

    def walk(node, depth):
        for label, child in branches(model, node, names):
            prefix = "|   " * depth + label
            if tree.kind[child] == KIND_LEAF:
                lines.append(f"{prefix}: {leaf_text(model, child)}")
            elif max_depth is not None and depth + 1 > max_depth:
                lines.append(f"{prefix}: ...")
            else:
                lines.append(prefix)
                walk(child, depth + 1)

    walk(0, 0)
    return "\n".join(lines) + "\n"


def plot_tree(model: Any, feature_names: Optional[Sequence[str]] = None, *, ax: Any = None,
              fontsize: float = 8) -> Any:
    """Draw the tree with matplotlib (``pip install 'fastml-classic[plot]'``).

    Leaves are spread evenly left to right; each parent sits above its children. A leaf shows
    its predicted class over the class counts in classes_ order (a regression leaf: its value
    over its number of samples).

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : list of str, optional
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure sized from the tree).
    fontsize : int, default=8

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from fastml import DecisionTreeClassifier
    >>> tree = DecisionTreeClassifier().fit(np.array([[0.0], [1.0]]), [0, 1])
    >>> ax = plot_tree(tree)
    >>> len(ax.texts)  # the root, its two leaves and the two edge labels
    5
    """
    plt = require("matplotlib.pyplot", "plot", "plot_tree")
    tree = _fitted_tree(model)
    names = _feature_names(model, feature_names)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(4 + tree.n_leaves, 30), 2 + 1.2 * tree.max_depth))
    positions, next_leaf = {}, [0]

    def place(node):
        if tree.kind[node] == KIND_LEAF:
            positions[node] = next_leaf[0]
            next_leaf[0] += 1
        else:
            xs = [place(child) for _, child in branches(model, node, names)]
            positions[node] = (min(xs) + max(xs)) / 2
        return positions[node]

    place(0)
    box = dict(boxstyle="round", fc="white", ec="gray")

    def draw(node):
        x, y = positions[node], -tree.depth[node]
        text = leaf_box_text(model, node) if tree.kind[node] == KIND_LEAF else \
            names[tree.feature[node]]
        ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, bbox=box)
        if tree.kind[node] != KIND_LEAF:
            for label, child in branches(model, node, names):
                cx, cy = positions[child], -tree.depth[child]
                ax.plot([x, cx], [y, cy], color="gray", lw=0.8, zorder=0)
                # Edge labels sit near the child, on the outer side of the edge, where
                # siblings are furthest apart (near the parent they would overlap).
                lx, ly = x + 0.6 * (cx - x), y + 0.6 * (cy - y)
                side = "right" if cx < x else "left" if cx > x else "center"
                ax.text(lx + (-0.08 if side == "right" else 0.08 if side == "left" else 0), ly,
                        label.split(" ", 1)[1], fontsize=fontsize, ha=side, va="center",
                        color="darkblue")
                draw(child)

    draw(0)
    ax.set_xlim(-1, max(next_leaf[0], 1))
    ax.set_ylim(-tree.max_depth - 0.5, 0.5)
    ax.axis("off")
    return ax
