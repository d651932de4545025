"""000's chi-square pruning: "Build the full decision tree as before. But when you can grow it
no more, start to prune: beginning at the bottom of the tree, delete splits in which
p_chance > MaxPchance; continue working your way up until there are no more prunable nodes."

A split is prunable when all its children are leaves (after pruning below it); its p_chance is
Pearson's chi-square test of the (children x classes) count table (fastml.info.chi2_test).
Children are created after their parent, so one pass over the nodes in decreasing id order
visits every child before its parent: that single pass is the bottom-up sweep.
"""
import numpy as np

from ..info import chi2_test
from ._tree_fast import KIND_LEAF


def chi2_prune(tree, max_pchance):
    """000's bottom-up chi-square pruning of a grown classification tree.

    Parameters
    ----------
    tree : Tree
        Its value holds class counts.
    max_pchance : float in [0, 1]
        Splits (with only leaves below them) whose p_chance exceeds it are collapsed.

    Returns
    -------
    Tree
        A new, compacted tree (tree itself is unchanged).

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import DecisionTreeClassifier
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 0, 1])
    >>> full = DecisionTreeClassifier().fit(X, y).tree_
    >>> full.node_count, chi2_prune(full, 0.05).node_count
    (7, 1)
    """
    kind = tree.kind.copy()
    for node in range(tree.node_count - 1, -1, -1):
        if kind[node] == KIND_LEAF:
            continue
        children = tree.child_ids(node)
        if any(kind[c] != KIND_LEAF for c in children):
            continue
        _, p_chance = chi2_test(tree.value[children])
        if p_chance > max_pchance:
            kind[node] = KIND_LEAF
    return tree.collapsed(kind == KIND_LEAF)
