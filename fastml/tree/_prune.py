"""000's chi-square pruning: "Build the full decision tree as before. But when you can grow it
no more, start to prune: beginning at the bottom of the tree, delete splits in which
p_chance > MaxPchance; continue working your way up until there are no more prunable nodes."

A split is prunable when all its children are leaves (after pruning below it); its p_chance is
Pearson's chi-square test of the (children x classes) count table (fastml.info.chi2_test; the
same test for multiway, threshold and binary categorical splits, vectorized over the nodes).
Children are created after their parent, so one pass over the nodes in decreasing id order
visits every child before its parent: that single pass is the bottom-up sweep.

With sample weights a node's value holds its weighted class counts, and the table is theirs:
the test reads a weight as that many observations (frequency weights). Integer weights then
prune exactly as the repeated rows would; scaling every weight by c scales the statistic by c
(c times the evidence) and can keep more splits; non-integer weights give the p-value of
counts equal to the weights, an approximation (the chi-square law is that of counts).
"""
import numpy as np

from ._tree_fast import KIND_LEAF, entries


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
    kind = tree.kind
    inner = np.flatnonzero(kind != KIND_LEAF)
    parent, child = split_children(tree, inner)
    # A split's table (children x classes) never changes as nodes below it are collapsed (a
    # collapsed child keeps its counts), so every p_chance is computed at once up front.
    p_chance = p_chances(tree.value, parent, child, tree.node_count)
    up = np.zeros(tree.node_count, dtype=np.int64)
    up[child] = parent
    open_children = np.bincount(parent[kind[child] != KIND_LEAF], minlength=tree.node_count)
    open_children, up, p_chance = open_children.tolist(), up.tolist(), p_chance.tolist()
    make_leaf = kind == KIND_LEAF
    for node in inner[::-1].tolist():  # children before parents: the bottom-up sweep
        if open_children[node] == 0 and p_chance[node] > max_pchance:
            make_leaf[node] = True
            if node > 0:
                open_children[up[node]] -= 1
    return tree.collapsed(make_leaf)


def split_children(tree, inner):
    """(parent, child) for each distinct child of each inner node, sorted by parent."""
    count = tree.n_child[inner]
    parent = np.repeat(inner, count)
    child = tree.children[entries(tree.child_start[inner], count)]
    pairs = np.unique(parent * np.int64(tree.node_count) + child)
    return pairs // tree.node_count, pairs % tree.node_count


def p_chances(value, parent, child, n_nodes):
    """Pearson's chi-square p_chance of every split's (children x classes) count table, as
    fastml.info.chi2_test computes it (empty rows and columns dropped, (r-1)(c-1) degrees of
    freedom, 1.0 when that is 0), for all splits in a few vectorized passes. The p-value is
    the builder's (csrc/fastml_chi2.h, which binary mode's attribute selection uses): one
    implementation of the chi-square tail for growing and pruning."""
    from ._builder_fast import chi2_logsf
    rows = value[child]                       # (pairs, K): each child's class counts
    cols = value[parent]                      # the split node's class counts
    row_sum = rows.sum(axis=1)
    total = cols.sum(axis=1)
    expected = row_sum[:, None] * cols / np.where(total > 0, total, 1.0)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (rows - expected) ** 2 / expected, 0.0)
    statistic = np.bincount(parent, weights=terms.sum(axis=1), minlength=n_nodes)
    r = np.bincount(parent, weights=row_sum > 0, minlength=n_nodes)
    c = (value > 0).sum(axis=1)
    dof = (r - 1) * (c - 1)
    p = np.ones(n_nodes)
    tested = dof > 0
    p[tested] = np.exp(chi2_logsf(statistic[tested], dof[tested]))
    return p
