# The storage of a fitted decision tree: one array of Node structs, the flat children table,
# and the per-node values. The layout is declared here once; the builder (_builder_fast.pyx)
# grows a TreeBuffer of it, and the Tree class (_tree_fast.pyx) owns the finished arrays.
from libc.stdint cimport int32_t

from .._core._typedefs cimport count_t, index_t

cpdef enum NodeKind:
    KIND_LEAF = 0           # no test: predict the node's value
    KIND_THRESHOLD = 1      # x[feature] < threshold: children [left, right]
    KIND_CATEGORICAL = 2    # multiway: one children entry per level code of the column


ctypedef struct Node:
    index_t feature         # the column tested (-1 at a leaf)
    double threshold        # KIND_THRESHOLD's t (NaN otherwise)
    index_t child_start     # the node's first entry in the children table
    index_t n_child         # its number of entries: 2, or the column's number of levels
    index_t missing_child   # where a missing (or, categorical, unseen) value goes; -1 at a leaf
    count_t n_node_samples  # training rows (bootstrap repeats included) that reached the node
    double weighted_n_node_samples  # their total sample weight (n_node_samples without one)
    index_t depth           # the root has depth 0
    double impurity         # entropy in bits, Gini, or the variance of the node's targets
    double gain             # the split's information gain (variance reduction) per row
    int kind                # a NodeKind


ctypedef struct TreeBuffer:  # a tree under construction: growable C arrays of the layout above
    index_t n_nodes, cap_nodes, n_children, cap_children, n_values
    Node *nodes
    double *value           # n_values per node: class counts, or the mean target
    index_t *children       # node ids; the entries of node i are children[child_start[i] + k]
    int *seen               # per children entry: 1 if that level had training rows at the node


cdef int grow_array(void **p, Py_ssize_t n, Py_ssize_t size) noexcept nogil
cdef int buffer_init(TreeBuffer *t, index_t n_values) noexcept nogil
cdef int buffer_reserve(TreeBuffer *t, index_t nodes, index_t children) noexcept nogil
cdef index_t buffer_add_leaf(TreeBuffer *t, index_t depth, count_t n,
                             double w) noexcept nogil
cdef void buffer_free(TreeBuffer *t) noexcept nogil


cdef class Tree:
    cdef readonly object nodes      # numpy structured array (NODE_DTYPE) over Node
    cdef readonly object value      # (node_count, n_values) float64
    cdef readonly object children   # index_t
    cdef readonly object seen       # int32, one per children entry
    cdef const Node *_nodes         # the data of the arrays above, for the compiled walks
    cdef const index_t *_children
    cdef const double *_value       # value's data, n_values per node (forest_sum reads it)
    cdef index_t _n_nodes, _n_columns, _n_values
    cdef object _pending            # state set by __setstate__, adopted by _check_fitted_state
    cdef object _packed             # [raw, normalized] PackedTree or None: forest_sum's compact
                                    # copies, made on first use, dropped by _adopt, never saved


cdef Tree tree_from_buffer(TreeBuffer *t)
