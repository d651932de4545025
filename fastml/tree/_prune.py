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
from ._classes import KIND_LEAF, Tree


def chi2_prune(tree, max_pchance):
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
    return compact(tree, kind)


def compact(tree, kind):
    """The tree restricted to the nodes still reachable with the new kinds, renumbered in
    creation order (so children still come after their parents)."""
    keep = np.zeros(tree.node_count, dtype=bool)
    keep[0] = True
    for node in range(tree.node_count):  # parents before children
        if keep[node] and kind[node] != KIND_LEAF:
            keep[tree.child_ids(node)] = True
    new_id = np.cumsum(keep) - 1
    arrays = {name: getattr(tree, name)[keep].copy() for name in
              ("feature", "threshold", "n_node_samples", "depth", "impurity", "gain", "value")}
    arrays["kind"] = kind[keep].astype(np.int32)
    child_start, n_child, missing, children, seen = [], [], [], [], []
    for node in np.flatnonzero(keep):
        if kind[node] == KIND_LEAF:
            child_start.append(0), n_child.append(0), missing.append(-1)
            continue
        s, n = tree.child_start[node], tree.n_child[node]
        child_start.append(len(children))
        n_child.append(n)
        children.extend(new_id[tree.children[s:s + n]].tolist())
        seen.extend(tree.seen[s:s + n].tolist())
        missing.append(int(new_id[tree.missing_child[node]]))
    arrays["child_start"] = np.array(child_start, dtype=np.int32)
    arrays["n_child"] = np.array(n_child, dtype=np.int32)
    arrays["missing_child"] = np.array(missing, dtype=np.int32)
    arrays["children"] = np.array(children, dtype=np.int32)
    arrays["seen"] = np.array(seen, dtype=np.int32)
    leaves = arrays["kind"] == KIND_LEAF
    arrays["feature"][leaves] = -1
    arrays["gain"][leaves] = 0.0
    arrays["threshold"][leaves] = np.nan
    return Tree(arrays)
