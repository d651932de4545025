# The fitted decision tree: one array of Node structs (declared in _tree_fast.pxd) owned by the
# Tree class, as scikit-learn's Tree does, with the walks that use it (apply, the decision
# path), the structure check every tree passes before it is walked, and the compaction that
# chi-square pruning needs. The builder (_builder_fast.pyx) grows a TreeBuffer of the same
# layout and hands it over with tree_from_buffer.
#
# Safety: the walks index the arrays without bounds checks, so a Tree only becomes walkable
# through _adopt, which checks that every child id lies after its parent and inside the tree
# (so every walk ends within node_count steps), that a node's children entries lie inside the
# children table, and that a threshold node has exactly two of them; apply checks at entry that
# X has a column for every feature the tree tests. A tree read by fastml.io.load or unpickled
# is checked the same way before it can be walked.
from libc.math cimport isnan, INFINITY, NAN
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset

from cython.parallel cimport prange

import numpy as np

from .._core._csrc cimport fastml_check_index

# The first sizes of a TreeBuffer's arrays (they double when full).
cdef index_t FIRST_NODES = 64
cdef index_t FIRST_CHILDREN = 128

# The node kinds as plain module-level ints for Python code (`from ._tree_fast import
# KIND_LEAF`): the cpdef enum in _tree_fast.pxd exposes them only as NodeKind members.
globals().update({name: int(kind) for name, kind in NodeKind.__members__.items()})

NODE_FIELDS = ("kind", "feature", "threshold", "child_start", "n_child", "missing_child",
               "n_node_samples", "weighted_n_node_samples", "depth", "impurity", "gain")
cdef Node _probe
# numpy's view of the Node struct: the offsets are the C compiler's, so the two always agree.
NODE_DTYPE = np.dtype({
    "names": list(NODE_FIELDS),
    "formats": [np.intc, np.int64, np.float64, np.int64, np.int64, np.int64, np.int64,
                np.float64, np.int64, np.float64, np.float64],
    "offsets": [<Py_ssize_t> (<char *> &_probe.kind - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.feature - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.threshold - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.child_start - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.n_child - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.missing_child - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.n_node_samples - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.weighted_n_node_samples - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.depth - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.impurity - <char *> &_probe),
                <Py_ssize_t> (<char *> &_probe.gain - <char *> &_probe)],
    "itemsize": sizeof(Node),
})


# ---------------------------------------------------------------- the builder's growable arrays

cdef int grow_array(void **p, Py_ssize_t n, Py_ssize_t size) noexcept nogil:
    cdef void *q = realloc(p[0], n * size)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef int buffer_init(TreeBuffer *t, index_t n_values) noexcept nogil:
    """An empty buffer for nodes of n_values values each; -1 when memory runs out."""
    memset(t, 0, sizeof(TreeBuffer))
    t.n_values = n_values
    return buffer_reserve(t, FIRST_NODES, FIRST_CHILDREN)


cdef int buffer_reserve(TreeBuffer *t, index_t nodes, index_t children) noexcept nogil:
    """Room for at least this many nodes and children entries; -1 when memory runs out."""
    cdef int bad = 0
    if nodes > t.cap_nodes:
        bad |= grow_array(<void **> &t.nodes, nodes, sizeof(Node))
        bad |= grow_array(<void **> &t.value, nodes * t.n_values, sizeof(double))
        if not bad:
            t.cap_nodes = nodes
    if children > t.cap_children:
        bad |= grow_array(<void **> &t.children, children, sizeof(index_t))
        bad |= grow_array(<void **> &t.seen, children, sizeof(int))
        if not bad:
            t.cap_children = children
    return -1 if bad else 0


cdef index_t buffer_add_leaf(TreeBuffer *t, index_t depth, count_t n,
                             double w) noexcept nogil:
    """Append a leaf of n rows of total weight w (the builder makes it internal if it splits
    it); its id, or -1 when memory runs out. Its value and impurity are the caller's to
    fill."""
    cdef index_t i = t.n_nodes
    cdef Node *node
    if i == t.cap_nodes and buffer_reserve(t, 2 * t.cap_nodes, t.cap_children) < 0:
        return -1
    node = &t.nodes[i]
    node.kind = KIND_LEAF
    node.feature = -1
    node.threshold = NAN
    node.child_start = 0
    node.n_child = 0
    node.missing_child = -1
    node.n_node_samples = n
    node.weighted_n_node_samples = w
    node.depth = depth
    node.impurity = 0.0
    node.gain = 0.0
    t.n_nodes += 1
    return i


cdef void buffer_free(TreeBuffer *t) noexcept nogil:
    free(t.nodes); free(t.value); free(t.children); free(t.seen)
    memset(t, 0, sizeof(TreeBuffer))


cdef Tree tree_from_buffer(TreeBuffer *t):
    """The finished tree, copied out of the builder's buffer (which the caller frees)."""
    cdef index_t n = t.n_nodes, k = t.n_children
    nodes = np.empty(n, dtype=NODE_DTYPE)
    value = np.empty((n, t.n_values), dtype=np.float64)
    children = np.empty(k, dtype=np.int64)
    seen = np.empty(k, dtype=np.int32)
    cdef char[::1] raw = nodes.view(np.int8)
    cdef double[:, ::1] v = value
    cdef index_t[::1] c = children
    cdef int[::1] s = seen
    if n > 0:
        memcpy(&raw[0], t.nodes, n * sizeof(Node))
        memcpy(&v[0, 0], t.value, n * t.n_values * sizeof(double))
    if k > 0:
        memcpy(&c[0], t.children, k * sizeof(index_t))
        memcpy(&s[0], t.seen, k * sizeof(int))
    tree = Tree.__new__(Tree)
    tree._adopt(nodes, value, children, seen)
    return tree


# ---------------------------------------------------------------- walking the tree

cdef inline index_t next_node(const Node *nodes, const index_t *children, index_t i,
                              const double *x) noexcept nogil:
    """The child of node i that the row x goes to."""
    return next_node_at(nodes, children, i, x[nodes[i].feature])


cdef inline index_t next_node_at(const Node *nodes, const index_t *children, index_t i,
                                 double v) noexcept nogil:
    """The child of node i for the value v of its feature."""
    cdef const Node *node = &nodes[i]
    if isnan(v):
        return node.missing_child
    if node.kind == KIND_THRESHOLD:
        return children[node.child_start + (0 if v < node.threshold else 1)]
    if v < 0 or v >= node.n_child:  # a category never seen at fit: the majority path
        return node.missing_child
    return children[node.child_start + <index_t> v]


cdef class RowReader:
    """The rows of X, dense (C-contiguous float64) or CSR, for the walks of apply and
    decision_path: next() steps one row down one node."""
    cdef const double[:, ::1] dense
    cdef const int64_t[::1] indptr
    cdef const int32_t[::1] indices
    cdef const double[::1] data
    cdef bint sparse

    def __cinit__(self, X):
        self.sparse = hasattr(X, "tocsr")
        if self.sparse:
            self.indptr, self.indices, self.data = csr_arrays(X)
        else:
            self.dense = X

    cdef inline index_t next(self, const Node *nodes, const index_t *children, index_t node,
                             Py_ssize_t i) noexcept nogil:
        cdef int64_t start
        if not self.sparse:
            return next_node(nodes, children, node, &self.dense[i, 0])
        start = self.indptr[i]
        return next_node_at(nodes, children, node, fastml_sparse_value(
            &self.indices[0] + start, &self.data[0] + start, self.indptr[i + 1] - start,
            <int32_t> nodes[node].feature))


def _restore(state):
    """Unpickling: a Tree from its __getstate__, checked before it can be walked."""
    tree = Tree.__new__(Tree)
    tree._adopt_state(state)
    return tree


cdef object read_only(object a):
    a.flags.writeable = False
    return a


cdef class Tree:
    """The arrays of a fitted decision tree.

    Node ``i`` is ``nodes[i]``, a record with the fields of ``NODE_FIELDS`` (each also an
    attribute: ``tree.kind[i]``, ``tree.feature[i]`` ...). ``kind`` is ``KIND_LEAF``,
    ``KIND_THRESHOLD`` (the test ``x[feature] < threshold``; its two children entries are
    [left, right]) or ``KIND_CATEGORICAL`` (one children entry per level code of the column,
    ``seen`` telling which levels had rows at the node). A missing value, or a category the
    node never saw, goes to ``missing_child``. The arrays are read-only views.

    Attributes
    ----------
    nodes : ndarray of dtype NODE_DTYPE, shape (node_count,)
    value : ndarray of shape (node_count, n_values)
        Class counts of the training rows at each node (their summed sample weights when
        the fit had weights; classification) or their (weighted) mean target.
    children : ndarray of int64
        The children table: node i's entries are ``children[child_start[i]:][:n_child[i]]``.
    seen : ndarray of int32, the same length as ``children``
    node_count, n_leaves, max_depth : int

    Examples
    --------
    >>> import fastml
    >>> est = fastml.DecisionTreeClassifier().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    >>> t = est.tree_
    >>> t.node_count, int(t.kind[0]) == KIND_THRESHOLD, float(t.threshold[0])
    (3, True, 1.5)
    >>> t.apply(np.array([[0.5], [2.5]]))[0].tolist()
    [1, 2]
    """

    def __cinit__(self):
        self._n_nodes = 0
        self._n_columns = 0
        self._pending = None
        self._packed = None

    # ------------------------------------------------------------ construction and checks
    def _adopt(self, nodes, value, children, seen):
        """Own these arrays once they pass the structure check (ValueError otherwise)."""
        self._n_nodes = 0  # not walkable until the check has passed
        self._packed = None
        for a, dtype in ((nodes, NODE_DTYPE), (value, np.float64), (children, np.int64),
                         (seen, np.int32)):
            if not isinstance(a, np.ndarray) or a.dtype != dtype or not a.flags.c_contiguous:
                raise ValueError(f"a Tree's arrays must be C-contiguous of dtype {dtype}")
        check_structure(nodes, value, children, seen)
        cdef const char[::1] raw = nodes.view(np.int8)
        cdef const index_t[::1] table = children
        cdef const double[:, ::1] values = value
        self.nodes = read_only(nodes)
        self.value = read_only(value)
        self.children = read_only(children)
        self.seen = read_only(seen)
        self._nodes = <const Node *> &raw[0]
        self._children = &table[0] if table.shape[0] > 0 else NULL
        self._value = &values[0, 0]             # check_structure: one row per node, n >= 1
        self._n_values = values.shape[1]
        inner = nodes["kind"] != KIND_LEAF
        self._n_columns = int(nodes["feature"][inner].max()) + 1 if inner.any() else 0
        self._n_nodes = len(nodes)

    def _adopt_state(self, state):
        """Rebuild from __getstate__'s dict, refusing anything the builder could not have made."""
        if not isinstance(state, dict) or set(state) != {"arrays"} or \
                not isinstance(state["arrays"], dict):
            raise ValueError("a Tree's state must be {'arrays': {name: array}}")
        arrays = state["arrays"]
        expected = set(NODE_FIELDS) | {"value", "children", "seen"}
        if set(arrays) == expected - {"weighted_n_node_samples"} and \
                isinstance(arrays.get("n_node_samples"), np.ndarray):
            # saved before sample weights: every row weighed 1, so the weight is the count
            arrays = dict(arrays, weighted_n_node_samples=arrays["n_node_samples"].astype(
                np.float64))
        if set(arrays) != expected:
            raise ValueError(f"a Tree's arrays must be exactly {sorted(expected)}")
        n = None
        for name in NODE_FIELDS:
            a = arrays[name]
            want = NODE_DTYPE.fields[name][0]
            if not isinstance(a, np.ndarray) or a.dtype != want or a.ndim != 1:
                raise ValueError(f"Tree.{name} must be a 1-D array of dtype {want}")
            if n is None:
                n = len(a)
            elif len(a) != n:
                raise ValueError(f"Tree.{name} has {len(a)} entries; expected {n}")
        value, children, seen = arrays["value"], arrays["children"], arrays["seen"]
        if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != 2:
            raise ValueError("Tree.value must be a 2-D float64 array")
        if not isinstance(children, np.ndarray) or children.dtype != np.int64 or children.ndim != 1:
            raise ValueError("Tree.children must be a 1-D int64 array")
        if not isinstance(seen, np.ndarray) or seen.dtype != np.int32 or \
                seen.shape != children.shape:
            raise ValueError("Tree.seen must be an int32 array the length of Tree.children")
        nodes = np.zeros(n, dtype=NODE_DTYPE)
        for name in NODE_FIELDS:
            nodes[name] = arrays[name]
        # np.array copies into arrays of our own (C-contiguous, never a caller's memmap)
        self._adopt(nodes, np.array(value), np.array(children), np.array(seen))

    def __getstate__(self):
        arrays = {name: np.ascontiguousarray(self.nodes[name]) for name in NODE_FIELDS}
        arrays.update(value=np.array(self.value), children=np.array(self.children),
                      seen=np.array(self.seen))
        return {"arrays": arrays}

    def __setstate__(self, state):
        # fastml.io.load sets the state, then calls _check_fitted_state, which checks it
        self._n_nodes = 0
        self._packed = None
        self._pending = state

    def __eq__(self, other):
        """Trees are equal when their arrays are (NaN equal to NaN)."""
        if not isinstance(other, Tree):
            return NotImplemented
        mine, theirs = self.__getstate__()["arrays"], other.__getstate__()["arrays"]
        return all(mine[k].shape == theirs[k].shape and
                   np.array_equal(mine[k], theirs[k], equal_nan=mine[k].dtype.kind == "f")
                   for k in mine)

    __hash__ = None

    def __reduce__(self):
        return _restore, (self.__getstate__(),)

    def _check_fitted_state(self):
        """Run by fastml.io.load: adopt the state read from the file, or raise ValueError."""
        if self._pending is not None:
            state, self._pending = self._pending, None
            self._adopt_state(state)
        if self._n_nodes == 0:
            raise ValueError("the tree has no nodes")

    def check_columns(self, n_features, n_values, n_levels):
        """Raise ValueError unless the tree fits the estimator that holds it: it tests only
        columns 0..n_features-1, a categorical split exactly where n_levels[j] > 0 (one
        children entry per level), and holds n_values values per node."""
        if self.value.shape[1] != n_values:
            raise ValueError(f"the tree holds {self.value.shape[1]} values per node; "
                             f"expected {n_values}")
        kind = self.kind
        inner = np.flatnonzero(kind != KIND_LEAF)
        feature = self.feature[inner]
        if (feature >= n_features).any():
            raise ValueError(f"a tree node tests a feature outside 0..{n_features - 1}")
        categorical = kind[inner] == KIND_CATEGORICAL
        levels = np.asarray(n_levels, dtype=np.int64)[feature]
        if (categorical != (levels > 0)).any():
            raise ValueError("a tree node's split kind does not match its column's kind")
        if (self.n_child[inner][categorical] != levels[categorical]).any():
            raise ValueError("a tree node has the wrong number of children for its split")

    # ------------------------------------------------------------ reading
    @property
    def node_count(self):
        return self._n_nodes

    @property
    def max_depth(self):
        return int(self.depth.max())

    @property
    def n_leaves(self):
        return int((self.kind == KIND_LEAF).sum())

    @property
    def kind(self): return self.nodes["kind"]

    @property
    def feature(self): return self.nodes["feature"]

    @property
    def threshold(self): return self.nodes["threshold"]

    @property
    def child_start(self): return self.nodes["child_start"]

    @property
    def n_child(self): return self.nodes["n_child"]

    @property
    def missing_child(self): return self.nodes["missing_child"]

    @property
    def n_node_samples(self): return self.nodes["n_node_samples"]

    @property
    def weighted_n_node_samples(self): return self.nodes["weighted_n_node_samples"]

    @property
    def depth(self): return self.nodes["depth"]

    @property
    def impurity(self): return self.nodes["impurity"]

    @property
    def gain(self): return self.nodes["gain"]

    def child_ids(self, node):
        """The distinct children of a node, in child order."""
        start, n = self.child_start[node], self.n_child[node]
        return list(dict.fromkeys(self.children[start:start + n].tolist()))

    # ------------------------------------------------------------ walking
    def _walkable(self, X):
        if self._n_nodes == 0:
            raise ValueError("this Tree has not been built or checked")
        if X.shape[1] < self._n_columns:
            raise ValueError(f"X has {X.shape[1]} columns; the tree tests column "
                             f"{self._n_columns - 1}")

    def apply(self, X):
        """The leaf each row of X lands in, and the number of nodes on its path.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_columns), float64, C-contiguous, or CSR matrix
            Encoded rows (NaN = missing, categorical columns as level codes).

        Returns
        -------
        leaves, lengths : ndarrays of int64, shape (n_samples,)
        """
        self._walkable(X)
        cdef Py_ssize_t i, n = X.shape[0]
        leaves = np.empty(n, dtype=np.int64)
        lengths = np.empty(n, dtype=np.int64)
        cdef index_t[::1] out = leaves, steps = lengths
        cdef index_t node, k
        cdef RowReader reader = RowReader(X)
        with nogil:
            for i in range(n):
                node = 0
                k = 1
                while self._nodes[node].kind != KIND_LEAF:
                    node = reader.next(self._nodes, self._children, node, i)
                    fastml_check_index(node, self._n_nodes)
                    k += 1
                out[i] = node
                steps[i] = k
        return leaves, lengths

    def decision_path(self, X):
        """CSR indicator matrix (n_samples, node_count) of the nodes each row of X visits
        (X dense, or CSR).

        Returns
        -------
        scipy.sparse.csr_matrix of int8
        """
        import scipy.sparse as sp
        _, lengths = self.apply(X)
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.empty(indptr[X.shape[0]], dtype=np.int64)
        cdef index_t[::1] ptr = indptr, idx = indices
        cdef Py_ssize_t i, n = X.shape[0]
        cdef index_t node, p
        cdef RowReader reader = RowReader(X)
        with nogil:
            for i in range(n):
                node = 0
                p = ptr[i]
                idx[p] = 0
                while self._nodes[node].kind != KIND_LEAF:
                    node = reader.next(self._nodes, self._children, node, i)
                    p += 1
                    fastml_check_index(p, ptr[i + 1])
                    idx[p] = node
        data = np.ones(len(indices), dtype=np.int8)
        return sp.csr_matrix((data, indices, indptr), shape=(X.shape[0], self._n_nodes))

    # ------------------------------------------------------------ pruning
    def collapsed(self, make_leaf):
        """A new tree in which the nodes where make_leaf is true are leaves, restricted to the
        nodes still reachable from the root and renumbered in creation order (so children
        still come after their parents), with the children table rebuilt to match.

        Parameters
        ----------
        make_leaf : boolean array of shape (node_count,)

        Returns
        -------
        Tree
        """
        kind = self.kind.copy()
        kind[np.asarray(make_leaf, dtype=bool)] = KIND_LEAF
        keep = np.zeros(self._n_nodes, dtype=bool)
        keep[0] = True
        frontier = np.zeros(1, dtype=np.int64)
        while len(frontier):  # one level of the tree per pass, vectorized
            frontier = frontier[kind[frontier] != KIND_LEAF]
            below = self.children[entries(self.child_start[frontier], self.n_child[frontier])]
            below = np.unique(below)
            frontier = below[~keep[below]]
            keep[frontier] = True
        new_id = np.cumsum(keep) - 1
        nodes = self.nodes[keep].copy()
        nodes["kind"] = kind[keep]
        leaf = nodes["kind"] == KIND_LEAF
        for name, empty in (("feature", -1), ("threshold", NAN), ("child_start", 0),
                            ("n_child", 0), ("missing_child", -1), ("gain", 0.0)):
            nodes[name][leaf] = empty
        old = np.flatnonzero(keep)[~leaf]  # the surviving inner nodes, old ids
        count = self.n_child[old]
        slots = entries(self.child_start[old], count)
        nodes["child_start"][~leaf] = np.cumsum(count) - count
        nodes["missing_child"][~leaf] = new_id[self.missing_child[old]]
        return_tree = Tree.__new__(Tree)
        return_tree._adopt(nodes, self.value[keep].copy(),
                           new_id[self.children[slots]].astype(np.int64),
                           self.seen[slots].copy())
        return return_tree


# ---------------------------------------------------------------- a forest's walk
#
# forest_sum walks a compact copy of each tree (PackedTree, made on first use and kept on the
# Tree, never saved): a 16-byte PackedNode instead of the 80-byte Node, the two children of a
# threshold node in adjacent slots (one index, no children-table read), a leaf stepping to
# itself (the walk in csrc/fastml_forest.h needs no test for it), and per slot the offset of a
# leaf's values in a table of them (already divided by their sum for class frequencies). A
# fully grown tree of 100,000 rows (~15k nodes) is then ~0.4 MB, inside a core's L2 cache,
# where the Node arrays (1.6 MB with values and children) were not. Memory: 20 bytes per node
# (the node, its leaf offset) + n_values doubles per distinct vector of leaf values (leaves
# with the same values share one: a fully grown classifier's leaves are pure, so one per
# class), plus an aux table for the rare general nodes (categorical splits, and a threshold
# node whose missing child is neither of its children, which a checked file may hold but the
# builder never makes): 3 + n_child int32 each.

cdef extern from "fastml_forest.h" nogil:
    ctypedef struct PackedNode "fastml_packed_node":  # 16 bytes, described in the header
        double threshold
        int32_t meta
        int32_t left
    enum:
        PACKED_GENERAL "FASTML_PACKED_GENERAL"
    ctypedef struct TreeView "fastml_tree_view":     # what the walk reads of one compact copy
        const PackedNode *nodes
        const int32_t *aux
        const double *leaf
        const int32_t *leaf_of
        Py_ssize_t n_nodes, n_leaf_values
    void fastml_forest_block(const TreeView *trees, Py_ssize_t n_trees, const double *X,
                             Py_ssize_t n_columns, Py_ssize_t first, Py_ssize_t last,
                             double *out, Py_ssize_t n_values, int32_t *leaf_at) noexcept
    void fastml_forest_block_sparse(const TreeView *trees, Py_ssize_t n_trees,
                                    const int64_t *indptr, const int32_t *indices,
                                    const double *data, Py_ssize_t first, Py_ssize_t last,
                                    double *out, Py_ssize_t n_values, int32_t *leaf_at) noexcept
    double fastml_sparse_value(const int32_t *ind, const double *val, Py_ssize_t nnz,
                               int32_t column) noexcept

cdef enum:
    PACKED_MAX = 2147483647     # int32_t's largest value: the packed indices are int32


cdef class PackedTree:
    """forest_sum's compact copy of a Tree (see the comment above); read-only once made."""
    cdef object _arrays     # the numpy arrays that own the memory below
    cdef const PackedNode *nodes
    cdef const int32_t *aux
    cdef const double *leaf
    cdef const int32_t *leaf_of
    cdef index_t n_nodes, n_aux, n_leaf_values

    @property
    def nbytes(self):
        """Bytes held by the copy (its arrays)."""
        return sum(a.nbytes for a in self._arrays)

    @property
    def node_count(self):
        return self.n_nodes


cdef inline void set_packed(PackedNode *p, double threshold, index_t meta, index_t left) \
        noexcept nogil:
    p.threshold = threshold
    p.meta = <int32_t> meta
    p.left = <int32_t> left


def line_aligned_copy(raw):
    """A copy of the uint8 array raw starting on a 64-byte boundary: the pairs of children
    that pack_tree puts at even slots then each lie in one cache line (numpy aligns large
    arrays to 16 bytes only)."""
    room = np.empty(raw.nbytes + 64, dtype=np.uint8)
    start = -room.ctypes.data % 64
    copy = room[start:start + raw.nbytes]
    copy[:] = raw
    return copy


cdef PackedTree pack_tree(Tree tree, bint normalize):
    """The compact copy of a walkable tree. Slots are filled breadth-first from the root: the
    first time a node is reached, its children get a block of adjacent new slots (a threshold
    node: [left, right], plus its missing child if that is neither; a categorical node: its
    distinct children in entry order, plus the missing child). A slot holds a copy of its
    node's PackedNode, which names only the node's children block, so a node reached twice
    (a child repeated in a categorical node's entries, or a missing child elsewhere in a
    loaded tree) costs one 16-byte copy, never a copy of its subtree; a tree as the builder
    makes it packs into exactly node_count slots. Every walk of the copy follows the same
    nodes as the Tree's own walk (next_node), so it ends as that one does."""
    cdef index_t n = tree._n_nodes, nv = tree._n_values, i, j, k, s, c, cs, nc, m
    cdef index_t cap = 1, cap_aux = 0, n_leaves = 0, used = 1, n_aux = 0, n_leaf = 0
    cdef index_t block, a, feature
    cdef const Node *node
    cdef const Node *N = tree._nodes
    cdef const index_t *C = tree._children
    cdef const double *V = tree._value
    cdef double total, threshold
    for i in range(n):
        if N[i].kind == KIND_LEAF:
            n_leaves += 1
        else:
            cap += N[i].n_child + 2     # its children, a missing child, a pad
            cap_aux += N[i].n_child + 3
    if cap > PACKED_MAX or cap_aux > PACKED_MAX or n_leaves * nv > PACKED_MAX or \
            tree._n_columns > PACKED_MAX // 2:
        raise ValueError("the tree is too large for forest_sum's 32-bit compact copy")
    packed = np.empty(cap * sizeof(PackedNode), dtype=np.uint8)
    aux = np.empty(max(cap_aux, 1), dtype=np.int32)
    leaf = np.empty(n_leaves * nv, dtype=np.float64)
    content = np.empty(n * sizeof(PackedNode), dtype=np.uint8)   # each node's PackedNode
    origin = np.empty(cap, dtype=np.int64)      # the node each slot holds a copy of
    slot_of = np.full(n, -1, dtype=np.int64)    # a slot of each child in the current block
    made = np.zeros(n, dtype=np.int8)           # 1 once the node's content is made
    leaf_of = np.zeros(cap, dtype=np.int32)     # a leaf slot's offset in the leaf table
    cdef uint8_t[::1] packed_raw = packed, content_raw = content
    cdef PackedNode *P = <PackedNode *> &packed_raw[0]
    cdef PackedNode *done = <PackedNode *> &content_raw[0]
    cdef int32_t[::1] A = aux, F = leaf_of
    cdef double[::1] L = leaf
    cdef index_t[::1] O = origin, slot = slot_of
    cdef int8_t[::1] is_made = made
    O[0] = 0
    s = 0
    while s < used:
        i = O[s]
        node = &N[i]
        if not is_made[i]:
            is_made[i] = 1
            if node.kind == KIND_LEAF:
                total = 0.0
                for c in range(nv):     # the sum in the order the old walk summed it
                    total += V[i * nv + c]
                for c in range(nv):
                    L[n_leaf * nv + c] = V[i * nv + c] / total if normalize else V[i * nv + c]
                set_packed(&done[i], NAN, 0, n_leaf * nv)     # left: set per slot below
                n_leaf += 1
            else:
                cs, nc, m, feature = node.child_start, node.n_child, node.missing_child, \
                    node.feature
                if node.kind == KIND_THRESHOLD and used % 2:
                    O[used] = 0     # an unreachable pad: a pair starting at an even slot
                    used += 1       # lies in one 64-byte line, fetched by one prefetch
                block = used
                if node.kind == KIND_THRESHOLD and (m == C[cs] or m == C[cs + 1]):
                    O[used] = C[cs]
                    O[used + 1] = C[cs + 1]
                    used += 2
                    # NaN thresholds (a loaded file's) send every number right, as -inf does
                    threshold = -INFINITY if isnan(node.threshold) else node.threshold
                    set_packed(&done[i], threshold, 2 * feature + (m != C[cs]), block)
                elif node.kind == KIND_THRESHOLD:      # a missing child of its own
                    O[used] = C[cs]
                    O[used + 1] = C[cs + 1]
                    O[used + 2] = m
                    used += 3
                    A[n_aux] = <int32_t> feature
                    A[n_aux + 1] = 0
                    A[n_aux + 2] = <int32_t> (block + 2)
                    A[n_aux + 3] = <int32_t> block
                    set_packed(&done[i], node.threshold, PACKED_GENERAL, n_aux)
                    n_aux += 4
                else:                                   # categorical: one entry per level
                    for k in range(nc + 1):
                        j = C[cs + k] if k < nc else m
                        if slot[j] < 0:
                            slot[j] = used
                            O[used] = j
                            used += 1
                    A[n_aux] = <int32_t> feature
                    A[n_aux + 1] = <int32_t> nc
                    A[n_aux + 2] = <int32_t> slot[m]
                    for k in range(nc):
                        A[n_aux + 3 + k] = <int32_t> slot[C[cs + k]]
                    for k in range(nc + 1):
                        slot[C[cs + k] if k < nc else m] = -1
                    set_packed(&done[i], 0.0, PACKED_GENERAL, n_aux)
                    n_aux += nc + 3
        P[s] = done[i]
        if node.kind == KIND_LEAF:  # a leaf steps to itself (NaN: no value goes right)
            F[s] = P[s].left
            P[s].left = <int32_t> s
        s += 1
    leaf, leaf_of = shared_leaf_values(leaf, leaf_of[:used], nv)
    cdef PackedTree result = PackedTree.__new__(PackedTree)
    result._arrays = (read_only(line_aligned_copy(packed[:used * sizeof(PackedNode)])),
                      read_only(aux[:max(n_aux, 1)].copy()), read_only(leaf),
                      read_only(leaf_of))
    cdef const uint8_t[::1] kept = result._arrays[0]
    cdef const int32_t[::1] kept_aux = result._arrays[1]
    cdef const double[::1] kept_leaf = result._arrays[2]
    cdef const int32_t[::1] kept_leaf_of = result._arrays[3]
    result.nodes = <const PackedNode *> &kept[0]
    result.aux = &kept_aux[0]
    result.leaf = &kept_leaf[0] if leaf.size > 0 else NULL
    result.leaf_of = &kept_leaf_of[0]
    result.n_nodes = used
    result.n_aux = n_aux
    result.n_leaf_values = leaf.size
    return result


def shared_leaf_values(leaf, leaf_of, n_values):
    """The leaf table with each distinct vector of values once, and the slots' offsets
    (leaf_of) pointing into it. Vectors are compared bit for bit, so every sum is unchanged.
    Why: the second pass of the walk reads one vector per row and tree at random; a fully
    grown classification tree's leaves are pure, so W3's 6,500 vectors per tree (150 KB, which
    competed with the node copy for L2) become 3 (72 bytes, in L1)."""
    if leaf.size == 0:
        return leaf, leaf_of
    bits = leaf.view(np.uint64).reshape(-1, n_values)
    # the distinct rows by a lexicographic sort of the integer columns (np.unique(axis=0)
    # sorts them as opaque records, 15 ms a fully grown tree: most of a first predict's cost)
    order = np.lexsort(bits.T[::-1])
    ranked = bits[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    index = np.empty(len(order), dtype=np.int64)
    index[order] = np.cumsum(first) - 1
    offsets = index[leaf_of // n_values] * n_values
    return np.ascontiguousarray(ranked[first]).view(np.float64).reshape(-1), \
        offsets.astype(np.int32)


cdef PackedTree packed_copy(Tree tree, bint normalize):
    """The tree's compact copy for this kind of sum, made on first use and kept (a list of two
    on the Tree: raw values, normalized values)."""
    if tree._packed is None:
        tree._packed = [None, None]
    cdef PackedTree p = tree._packed[normalize]
    if p is None:
        p = pack_tree(tree, normalize)
        tree._packed[normalize] = p
    return p


cdef enum:
    WALK_ROWS = 4096    # the fewest rows per thread's block: each tree walks all the rows of
                        # a block before the next tree, so its compact copy is fetched into
                        # cache once per block (measured on 100k rows x 100 fully grown trees:
                        # 1,024-row blocks 2.3 s, 16,384 1.1 s, one block 1.0 s)
    WALKS_PER_THREAD = 1 << 19  # the fewest row walks (rows x trees) worth a thread: ~10 ms
                        # of work; one tree over 100k rows took longer with a second thread
                        # (its start and the shared cache cost more than the half it took)


ctypedef struct Rows:         # the rows forest_sum walks: a dense block, or CSR arrays
    const double *X           # dense, row-major (NULL: sparse)
    Py_ssize_t n_columns
    const int64_t *indptr     # sparse
    const int32_t *indices
    const double *data


cdef int sum_block(const TreeView *trees, Py_ssize_t n_trees, const Rows *rows,
                   Py_ssize_t first, Py_ssize_t last, double *out,
                   Py_ssize_t n_values) noexcept nogil:
    """out[i] += the leaf values of rows first..last-1 summed over the trees in tree order
    (csrc/fastml_forest.h); -1 when memory for the block's leaf records runs out."""
    cdef int32_t *leaf_at = <int32_t *> malloc((last - first) * sizeof(int32_t))
    if leaf_at == NULL:
        return -1
    if rows.X != NULL:
        fastml_forest_block(trees, n_trees, rows.X, rows.n_columns, first, last, out,
                            n_values, leaf_at)
    else:
        fastml_forest_block_sparse(trees, n_trees, rows.indptr, rows.indices, rows.data,
                                   first, last, out, n_values, leaf_at)
    free(leaf_at)
    return 0


def csr_arrays(X):
    """A checked CSR X's (indptr as int64, indices as int32, data as float64), each with at
    least one entry (a kernel never takes the address of an empty buffer)."""
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    if data.size == 0:
        indices, data = np.zeros(1, np.int32), np.zeros(1)
    return indptr, indices, data


def forest_sum(list trees, X, double[:, ::1] out, bint normalize, int n_threads=1):
    """out += the sum over `trees` of each row's leaf values, in one compiled walk.

    X: a C-contiguous float64 array, or a canonical scipy CSR matrix (a step reads a column by
    a binary search in the row's entries). Every tree must be walkable on X (checked, as
    apply checks it) and hold out.shape[1] values per node. With `normalize`, a leaf's values
    (class counts) are divided by their sum first, so out receives the summed class
    frequencies. The sum runs in tree order for every row, so the result does not depend on
    `n_threads` (threads split row blocks). The walk reads each tree's compact copy
    (PackedTree), made on a tree's first walk."""
    cdef Py_ssize_t n_trees = len(trees), n = X.shape[0], d = X.shape[1]
    cdef Py_ssize_t n_values = out.shape[1], n_blocks, b, k, per_block
    cdef int failed
    cdef Tree tree
    cdef PackedTree packed
    cdef Rows rows
    cdef const double[:, ::1] dense
    cdef const int64_t[::1] indptr
    cdef const int32_t[::1] indices
    cdef const double[::1] data
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} rows; X has {n}")
    if n_trees == 0 or n == 0:
        return
    copies = []         # holds every copy alive during the walk, whatever other threads do
    cdef TreeView *views = <TreeView *> malloc(n_trees * sizeof(TreeView))
    if views == NULL:
        raise MemoryError()
    try:
        for k in range(n_trees):
            tree = <Tree?> trees[k]
            tree._walkable(X)
            if tree._n_values != n_values:
                raise ValueError(f"a tree holds {tree._n_values} values per node; expected "
                                 f"{n_values}")
            packed = packed_copy(tree, normalize)
            copies.append(packed)
            views[k].nodes = packed.nodes
            views[k].aux = packed.aux
            views[k].leaf = packed.leaf
            views[k].leaf_of = packed.leaf_of
            views[k].n_nodes = packed.n_nodes
            views[k].n_leaf_values = packed.n_leaf_values
        if hasattr(X, "tocsr"):
            indptr, indices, data = csr_arrays(X)
            rows.X = NULL
            rows.indptr, rows.indices, rows.data = &indptr[0], &indices[0], &data[0]
        else:
            if d == 0:      # only single-leaf trees walk such X, and a leaf reads column 0
                X = np.zeros((n, 1))
                d = 1
            dense = X
            rows.X, rows.n_columns = &dense[0, 0], d
        # one block per thread (rows in a block share each tree's fetch), threads only for
        # work enough to pay for them; a row's sum is in tree order whatever the blocks, so
        # the result does not depend on n_threads
        n_threads = max(1, min(n_threads, (n * n_trees) // WALKS_PER_THREAD))
        per_block = max(<Py_ssize_t> WALK_ROWS, (n + n_threads - 1) // n_threads)
        n_blocks = (n + per_block - 1) // per_block
        failed = 0
        with nogil:
            if n_blocks == 1:                       # no thread team for a small call
                failed = sum_block(views, n_trees, &rows, 0, n, &out[0, 0], n_values)
            else:
                for b in prange(n_blocks, num_threads=n_threads, schedule="static"):
                    failed |= sum_block(views, n_trees, &rows, b * per_block,
                                        min(n, (b + 1) * per_block), &out[0, 0], n_values)
        if failed:
            raise MemoryError("no memory for forest_sum's leaf records")
    finally:
        free(views)


def packed_tree(Tree tree, bint normalize=True):
    """The compact copy forest_sum walks for this tree (made now if not yet): its
    ``node_count`` and ``nbytes`` tell its size."""
    if tree._n_nodes == 0:
        raise ValueError("this Tree has not been built or checked")
    return packed_copy(tree, normalize)


def entries(start, count):
    """The children-table positions of nodes with these child_start and n_child, in order."""
    before = np.cumsum(count) - count
    return np.repeat(start - before, count) + np.arange(count.sum(), dtype=np.int64)


def check_structure(nodes, value, children, seen):
    """Raise ValueError unless the arrays are a tree that the walks can follow safely: known
    kinds, a tested feature >= 0 at every inner node, two children entries at a threshold node
    and at least one at a categorical node, every node's entries inside the children table,
    and every child id (and missing_child) after its parent and inside the tree -- which also
    bounds every walk by node_count steps."""
    n = len(nodes)
    if n == 0:
        raise ValueError("the tree has no nodes")
    if value.ndim != 2 or value.shape[0] != n or value.shape[1] < 1:
        raise ValueError(f"the tree's value has shape {value.shape}; expected ({n}, >= 1)")
    if children.ndim != 1 or seen.shape != children.shape:
        raise ValueError("the tree's seen and children tables differ in length")
    kind = nodes["kind"]
    if not np.isin(kind, (KIND_LEAF, KIND_THRESHOLD, KIND_CATEGORICAL)).all():
        raise ValueError("a tree node has an unknown kind")
    inner = np.flatnonzero(kind != KIND_LEAF)
    if (nodes["feature"][inner] < 0).any():
        raise ValueError("a tree node tests a negative feature")
    count = nodes["n_child"][inner]
    threshold = kind[inner] == KIND_THRESHOLD
    if (count[threshold] != 2).any() or (count[~threshold] < 1).any():
        raise ValueError("a tree node has the wrong number of children for its split")
    start = nodes["child_start"][inner]
    if ((start < 0) | (start > len(children) - count)).any():
        raise ValueError("a tree node's children lie outside the children table")
    parent = np.concatenate([np.repeat(inner, count), inner])
    child = np.concatenate([children[entries(start, count)], nodes["missing_child"][inner]])
    if ((child <= parent) | (child >= n)).any():
        raise ValueError("a tree node points to a child that is not after it in the "
                         "tree (out of range, or a cycle)")
