# The decision-tree builder of fastml: ID3 / IG* trees of lectures 000, 001 and 002.
#
# What it computes: a tree grown greedily from the root. At each node, for every candidate
# attribute, the best split by information gain (criterion ENTROPY; GINI and, for regression,
# variance reduction SSE are the same loop with another impurity):
#   - real attribute: binary test x < t, t = x_i + (x_{i+1} - x_i)/2 between consecutive distinct
#     sorted values (000 "Choosing threshold split"), IG*(Y|X) = max_t IG(Y|X:t); per 001, a cut
#     between two runs of equal values that are both pure in the same class is skipped (it can
#     never be the best one: Fayyad & Irani 1992);
#   - categorical attribute: the multiway split, one child per value seen at the node (ID3);
#     or, with categorical_split="binary", the best two-way partition of the levels present
#     at the node (sweep_binary: sort the levels, scan the prefixes; Breiman et al. 1984),
#     which keeps the data together and lets the attribute be tested again deeper; in that
#     mode the ATTRIBUTE is chosen by the adjusted significance of its best split rather
#     than by the largest gain (least_adjusted_p, below: CHAID's rule);
# Base cases (000/002): a node whose outputs all agree is a leaf; a node where no attribute
# takes two values is a leaf (predict the majority); a zero information gain does NOT stop the
# recursion (XOR needs two zero-gain levels). Limits: max_depth, min_samples_split,
# min_samples_leaf (001), max_leaf_nodes (best-first growth), max_features (random forests).
#
# Missing values (NaN): at a real split both "missing go left" and "missing go right" are scored
# and the better one is kept (missing-right on ties); at a categorical split, and at a real split
# whose node saw no missing value, they follow the child with the most training rows (the
# "majority path", which is also where an unseen category goes at predict time).
#
# Where the speed comes from: each feature is sorted once, before the root;
# the node's rows live in the range [start, end) of one sorted (index, value) list per feature,
# and a split partitions every list stably (a counting scatter by child), so children stay
# sorted and no node sorts again. The sweep moves rows from right to left class counts
# incrementally; entropy terms come from integer counts through a table of n*log2(n), so a
# candidate costs O(n_classes) table lookups and no log.
#
# Loop invariant of the threshold sweep: after moving the run of rows [start, p) to the left,
# left[c] + right[c] = count of class c among the node's non-missing rows, and every cut
# before p that passed the filters has been compared with the best so far.
# Ties: the split is the first candidate whose cost is within TIE (info.GAIN_TIE, 1e-10) bits
# per row of the smallest cost, candidates ordered by feature (index order; draw order with
# max_features), then by threshold ascending (missing-right before missing-left). That rule
# does not depend on the order the features are searched in, so large nodes search them in
# parallel OpenMP threads (n_threads) and partition their sorted lists in parallel too, and
# grow the same tree for any n_threads.
#
# Bootstrap counts and sample weights. Without sample weights (the count_t copy of each
# function, _grow.pxd's weight_t), a row is in the sorted lists once, with its bootstrap
# count as its weight, and a count is rows in every rule (class counts, min_samples_leaf,
# n_node_samples): the trees of the repeated rows, in a third less memory and work for a
# bootstrap sample (a third of the rows are not drawn). With sample weights (the double
# copy) a row is repeated as often as the bootstrap drew it, each repeat weighing its sample
# weight: class statistics sum weights, while min_samples_leaf and n_node_samples count the
# repeats (positions in the lists); min_weight_leaf bounds a child's weight. Rows of weight 0
# are left out of the sorted lists, exactly as if they were not in X.
#
# What does not depend on the sorted lists -- the impurity terms, the split record and its tie
# rule, a node's creation and base cases, the children table, the growth loop -- is shared
# with the histogram builder (_hist_fast.pyx) in _grow.pxd; this file is the sorted sweep.
from libc.math cimport ceil, log, log1p, log2, exp2, isnan, NAN, INFINITY
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memcpy, memset
from libc.stdint cimport uint8_t, uint64_t
from libc.limits cimport INT_MAX

import numpy as np

from cython.parallel cimport prange, threadid

from .._core._csrc cimport fastml_check_index, fastml_chi2_logsf
from .._core._typedefs cimport count_t, index_t
from ._tree_fast cimport TreeBuffer, buffer_init
from ._grow cimport *  # the growing code both builders share (criteria, Split, Item, nodes)

from ..info import GAIN_TIE

# The criterion codes build_tree takes, by the estimators' names for them.
CRITERIA = {"entropy": CRIT_ENTROPY, "gini": CRIT_GINI, "squared_error": CRIT_SSE}
# The categorical split codes build_tree takes (the estimators' categorical_split).
CATEGORICAL_SPLITS = {"multiway": 0, "binary": 1}

# Gains closer than this (in bits, or squared target units, per row) are ties: the one rule,
# defined in fastml/info.py, that info.best_threshold applies too.
cdef double TIE = GAIN_TIE
# Nodes with fewer rows are searched and partitioned by one thread: below this, waking the
# threads costs more than the work they share.
cdef Py_ssize_t PARALLEL_MIN_ROWS = 2048


# Split (a candidate split and the tie rule's state) and Item (a node waiting to be split)
# are _grow.pxd's, shared with the histogram builder.


ctypedef struct LevelKey:      # a level present at the node, as sweep_binary orders them
    double mean               # regression: the level's mean target
    count_t num, den          # classification: its rows of the ordering's class, all its rows
    double wnum, wden         # the same with sample weights: the weights of those rows
    int slot                  # its row in the per-level statistics (gcounts, gsum)
    int level                 # its code


ctypedef struct Scratch:       # what one thread writes while it searches / partitions
    void *left                # (K) class counts (weight_t) left of the cut
    void *right               # (K) right of it
    void *miss                # (K) of the rows with the value missing
    void *gcounts             # (max_levels + 1, K) per-level class counts
    double *gsum              # (max_levels + 1, GSUM) per-level rows, weight and centred sum
    int *tmp_idx              # (m) a partition's output before it is copied back
    double *tmp_val
    count_t *offset           # (max_levels + 2) write positions of the children
    LevelKey *keys            # (max_levels + 1) the levels present, sorted (binary splits)


ctypedef struct Builder:
    # data
    Py_ssize_t m, d           # entries of each sorted list (see above), features
    Py_ssize_t total          # rows, bootstrap repeats included (count builds: the table)
    int n_lists               # d, and for regression one more: the rows in row order
    int *sidx                 # (n_lists, m) sorted row indices, partitioned down the tree
                              # (int32 halves the memory traffic of the partitions; build_tree
                              # refuses more than INT_MAX rows)
    double *sval              # (n_lists, m) the matching values
    const int *yc             # class codes (classification)
    const double *yr          # targets (regression)
    const double *wr          # sample weights (weighted builds; NULL: every row weighs 1)
    const int *cnt            # count builds: each row's bootstrap count (NULL: 1 each)
    const unsigned char *is_cat
    const int *n_levels
    int K, criterion
    int cat_binary            # categorical_split="binary": two-way partitions of the levels
    int adjusted              # and the data has a categorical column: the attribute is chosen
                              # by least_adjusted_p (with none, binary mode changes nothing)
    # limits (build_tree clamps them to the sample size)
    index_t max_depth, min_samples_split, min_samples_leaf, max_leaf_nodes, max_features
    double min_weight_leaf    # weighted builds (a count build folds it into min_samples_leaf)
    # scratch
    double *nlogn             # nlogn[k] = k log2 k, k = 0..m
    uint8_t *side8            # (n rows of X) child of each row at the split being applied
    int *side                 # the same for a multiway split of more than 254 levels (wide)
    int wide                  # the split being applied uses side, not side8
    void *node_counts         # (K) the node's class counts (weight_t)
    double node_w             # the node's weight (its rows without sample weights)
    Scratch *scratch          # one per thread
    int n_threads
    int *candidates           # the features a node searches, in draw order
    Split *found              # the best split of each of them
    void *found_left          # (d, K + 1) binary mode: the class counts of their first child
    double node_ss            # regression: the node's sum of squared deviations
    int *child_of_level
    int *level_seen
    count_t *child_size       # (max_levels + 2) rows of each child of the split being applied
    Draw draw                 # the node's candidate features in draw order (_grow.pxd)
    int max_levels
    uint64_t seed             # the root's draw (its children's are hashes of it)
    int failed


# Per-level statistics in Scratch.gsum: rows, weight, centred target sum.
cdef enum:
    GSUM = 3
# Bytes of a class count or weight (count_t and double alike): scratch arrays serve both copies.
cdef Py_ssize_t WEIGHT_BYTES = sizeof(double)
assert sizeof(count_t) == sizeof(double)


# ---------------------------------------------------------------- impurity from counts

cdef inline double class_term(Builder *b, const weight_t *counts, weight_t n) noexcept nogil:
    """n * impurity of a child with these class counts (_grow.counts_term)."""
    return counts_term(b.criterion, b.K, b.nlogn, counts, n)


cdef inline double class_term2(Builder *b, const weight_t *a, const weight_t *extra,
                               weight_t n) noexcept nogil:
    """class_term of the counts a + extra (a child that also receives the missing rows)."""
    return counts_term2(b.criterion, b.K, b.nlogn, a, extra, n)


cdef inline weight_t row_weight(Builder *b, int row, weight_t tag) noexcept nogil:
    """The weight of one entry of the sorted lists: its row's bootstrap count (1 without a
    bootstrap) in a count build, or its row's sample weight."""
    if weight_t is double:
        return b.wr[row]
    else:
        return b.cnt[row] if b.cnt != NULL else 1


cdef inline weight_t rows_weight(Builder *b, const int *idx, Py_ssize_t p, Py_ssize_t q,
                                 weight_t tag) noexcept nogil:
    """The weight of the list's entries [p, q): their counts, or their sample weights."""
    cdef weight_t w = 0
    if weight_t is not double and b.cnt == NULL:
        return q - p
    while p < q:
        w += row_weight(b, idx[p], tag)
        p += 1
    return w


cdef inline count_t rows_of(Py_ssize_t entries, weight_t w) noexcept nogil:
    """The rows (bootstrap repeats included) of entries of the lists of weight w: as many as
    the entries in a weighted build (repeats are entries), their counts -- the weight -- in a
    count build."""
    if weight_t is double:
        return entries
    else:
        return w


# ---------------------------------------------------------------- split search

cdef inline int consider(Split *best, double cost, int feature, double threshold,
                         int missing_left, int n_children) noexcept nogil:
    """Record the candidate, cutting at threshold, if the tie rule takes it (_grow.takes); 1 if
    it was recorded."""
    if not takes(best, cost, feature, missing_left, n_children):
        return 0
    best.threshold = threshold
    return 1


cdef inline void keep_left_counts(Split *best, const weight_t *left, const weight_t *miss,
                                  int with_missing, int K) noexcept nogil:
    """Binary mode: copy the class counts of the recorded split's first child (left, plus the
    missing rows' miss when they go left) to where best.left_counts points, if anywhere: the
    attribute selection tests that 2 x K table."""
    cdef int c
    cdef weight_t *kept = <weight_t *> best.left_counts
    if kept == NULL:
        return
    for c in range(K):
        kept[c] = left[c] + (miss[c] if with_missing else 0)


cdef Py_ssize_t missing_start(const double *val, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """NaN values sort last: the first position of the node's missing rows."""
    cdef Py_ssize_t e = end
    while e > start and isnan(val[e - 1]):
        e -= 1
    return e


cdef inline int has_cuts(const double *val, Py_ssize_t start, Py_ssize_t e,
                         Py_ssize_t end) noexcept nogil:
    """Whether a real feature's sorted rows [start, end) (missing from e on) can be cut: two
    distinct values, or values and missing rows (the missing-vs-present cut)."""
    return e > start and (val[start] != val[e - 1] or e < end)


cdef inline void cut_missing_off_class(Builder *b, int f, const weight_t *present,
                                       const weight_t *miss, count_t n_present,
                                       weight_t w_present, count_t n_miss, weight_t w_miss,
                                       Split *best) noexcept nogil:
    """The missing-vs-present cut: the rows with a value (class counts present, n_present rows
    of weight w_present) left, the missing ones right, threshold +inf. A column whose values
    only say "known" (1.0 / NaN) can then split, as scikit-learn's trees can. It comes after
    every threshold of f, so the tie rule prefers a threshold of equal cost."""
    cdef double cost
    if n_miss == 0 or not allowed(n_present, w_present, b.min_samples_leaf,
                                  b.min_weight_leaf) or \
            not allowed(n_miss, w_miss, b.min_samples_leaf, b.min_weight_leaf):
        return
    cost = counts_term(b.criterion, b.K, b.nlogn, present, w_present) + \
        counts_term(b.criterion, b.K, b.nlogn, miss, w_miss)
    if consider(best, cost, f, INFINITY, 0, 2):
        keep_left_counts(best, present, miss, 0, b.K)


cdef int sweep_class(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t end,
                     Split *best, weight_t tag) noexcept nogil:
    """Best threshold of real feature f at the node (classification), the missing-vs-present
    cut included (cuts_missing_off). Returns 0 when f has nothing to cut, 1 otherwise. Rows
    (n_*) bound min_samples_leaf, weights (w_*; the rows in a count build) the rest."""
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef const int *y = b.yc
    cdef Py_ssize_t e = missing_start(val, start, end), p, q, g_end, nxt_end
    cdef count_t n_miss, n_left, n_right, n_present, leaf = b.min_samples_leaf
    cdef int c, K = b.K, crit = b.criterion, g_class, nxt_class
    cdef const double *nlogn = b.nlogn  # locals: a store to the counts cannot reload them
    cdef weight_t *left = <weight_t *> s.left
    cdef weight_t *right = <weight_t *> s.right
    cdef weight_t *miss = <weight_t *> s.miss
    cdef const weight_t *node_counts = <const weight_t *> b.node_counts
    cdef weight_t w, w_miss = 0, w_present = 0, w_left = 0, w_right, g_w, nxt_w
    cdef double wleaf = b.min_weight_leaf
    cdef double t, cost
    if not has_cuts(val, start, e, end):
        return 0
    for c in range(K):
        left[c] = 0
        miss[c] = 0
    for p in range(e, end):
        w = row_weight(b, idx[p], tag)
        miss[y[idx[p]]] += w
        w_miss += w
    for c in range(K):
        right[c] = node_counts[c] - miss[c]
        w_present += right[c]
    n_miss = rows_of(end - e, w_miss)
    n_present = rows_of(e - start, w_present)
    if val[start] == val[e - 1]:            # one value: only the missing-vs-present cut
        for c in range(K):
            left[c], right[c] = right[c], 0
        cut_missing_off_class(b, f, left, miss, n_present, w_present, n_miss, w_miss, best)
        return 1
    p = start
    g_end = scan_run(b, idx, val, p, e, &g_class, &g_w)
    while True:
        for q in range(p, g_end):
            c = y[idx[q]]
            w = row_weight(b, idx[q], tag)
            left[c] += w
            right[c] -= w
        w_left += g_w
        if g_end == e:
            cut_missing_off_class(b, f, left, miss, n_present, w_present, n_miss, w_miss, best)
            break
        nxt_end = scan_run(b, idx, val, g_end, e, &nxt_class, &nxt_w)
        w_right = w_present - w_left
        n_left = rows_of(g_end - start, w_left)
        n_right = rows_of(e - g_end, w_right)
        # 001: only cuts between different classes matter. Inside a run of same-class rows the
        # cost is concave in the cut, so its minimum over the allowed cuts is at the first or
        # last allowed one: skip a cut only when its neighbour cuts are allowed too.
        if (g_class < 0 or g_class != nxt_class or
                not allowed(n_left - rows_of(g_end - p, g_w), w_left - g_w, leaf + n_miss,
                            wleaf + w_miss) or
                not allowed(n_right - rows_of(nxt_end - g_end, nxt_w), w_right - nxt_w,
                            leaf + n_miss, wleaf + w_miss)):
            t = split_point(val[g_end - 1], val[g_end])
            if n_miss == 0:
                if allowed(n_left, w_left, leaf, wleaf) and allowed(n_right, w_right, leaf,
                                                                    wleaf):
                    cost = counts_term(crit, K, nlogn, left, w_left) + \
                        counts_term(crit, K, nlogn, right, w_right)
                    if consider(best, cost, f, t, 0, 2):
                        keep_left_counts(best, left, miss, 0, K)
            else:
                if allowed(n_left, w_left, leaf, wleaf) and \
                        allowed(n_right + n_miss, w_right + w_miss, leaf, wleaf):
                    cost = counts_term(crit, K, nlogn, left, w_left) + \
                        counts_term2(crit, K, nlogn, right, miss, w_right + w_miss)
                    if consider(best, cost, f, t, 0, 2):
                        keep_left_counts(best, left, miss, 0, K)
                if allowed(n_left + n_miss, w_left + w_miss, leaf, wleaf) and \
                        allowed(n_right, w_right, leaf, wleaf):
                    cost = counts_term2(crit, K, nlogn, left, miss, w_left + w_miss) + \
                        counts_term(crit, K, nlogn, right, w_right)
                    if consider(best, cost, f, t, 1, 2):
                        keep_left_counts(best, left, miss, 1, K)
        p = g_end
        g_end = nxt_end
        g_class = nxt_class
        g_w = nxt_w
    return 1


cdef inline Py_ssize_t scan_run(Builder *b, const int *idx, const double *val, Py_ssize_t p,
                                Py_ssize_t e, int *run_class, weight_t *run_w) noexcept nogil:
    """End of the run of equal values starting at p; its class, or -1 if the run is mixed;
    its weight (its rows in a count build)."""
    cdef double v = val[p]
    cdef int c = b.yc[idx[p]]
    cdef Py_ssize_t q = p + 1
    while q < e and val[q] == v:
        if b.yc[idx[q]] != c:
            c = -1
        q += 1
    run_class[0] = c
    run_w[0] = rows_weight(b, idx, p, q, <weight_t> 0)
    return q


cdef int sweep_sse(Builder *b, int f, Py_ssize_t start, Py_ssize_t end, Split *best,
                   double mean, weight_t tag) noexcept nogil:
    """Best threshold of real feature f for regression (variance reduction). Targets are
    centred on the node mean so the sums stay accurate; a row adds its weight times its
    target (and its weight to the child's)."""
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t e = missing_start(val, start, end), p
    cdef count_t n_miss, n_left, n_right, leaf = b.min_samples_leaf
    cdef weight_t w, w_miss = 0, w_all = 0, w_left = 0, w_right
    cdef double s_left = 0.0, s_miss = 0.0, s_all = 0.0, s_right, t, cost
    cdef double wleaf = b.min_weight_leaf
    if not has_cuts(val, start, e, end):
        return 0
    for p in range(e, end):
        w = row_weight(b, idx[p], tag)
        s_miss += w * (b.yr[idx[p]] - mean)
        w_miss += w
    for p in range(start, e):
        w = row_weight(b, idx[p], tag)
        s_all += w * (b.yr[idx[p]] - mean)
        w_all += w
    n_miss = rows_of(end - e, w_miss)
    for p in range(start, e - 1):
        w = row_weight(b, idx[p], tag)
        s_left += w * (b.yr[idx[p]] - mean)
        w_left += w
        if val[p + 1] == val[p]:
            continue
        w_right = w_all - w_left
        n_left = rows_of(p + 1 - start, w_left)
        n_right = rows_of(e - p - 1, w_right)
        s_right = s_all - s_left
        t = split_point(val[p], val[p + 1])
        if allowed(n_left, w_left, leaf, wleaf) and \
                allowed(n_right + n_miss, w_right + w_miss, leaf, wleaf):
            cost = sse_term(s_left, w_left) + sse_term(s_right + s_miss, w_right + w_miss)
            consider(best, cost, f, t, 0, 2)
        if n_miss > 0 and allowed(n_left + n_miss, w_left + w_miss, leaf, wleaf) and \
                allowed(n_right, w_right, leaf, wleaf):
            cost = sse_term(s_left + s_miss, w_left + w_miss) + sse_term(s_right, w_right)
            consider(best, cost, f, t, 1, 2)
    if n_miss > 0 and allowed(rows_of(e - start, w_all), w_all, leaf, wleaf) and \
            allowed(n_miss, w_miss, leaf, wleaf):                   # missing vs present
        consider(best, sse_term(s_all, w_all) + sse_term(s_miss, w_miss), f, INFINITY, 0, 2)
    return 1


cdef int largest_level(const double *gsum, int L) noexcept nogil:
    """The level of most weight at the node (first on ties): the majority path. gsum holds
    GSUM statistics per level, the weight second."""
    cdef int v, arg = -1
    cdef double most = -1.0
    for v in range(L):
        if gsum[GSUM * v + 1] > most:
            most = gsum[GSUM * v + 1]
            arg = v
    return arg


cdef inline Py_ssize_t run_end(const double *val, Py_ssize_t p, Py_ssize_t e) noexcept nogil:
    """End of the run of equal values starting at p (a level's rows, in a categorical list)."""
    cdef double v = val[p]
    p += 1
    while p < e and val[p] == v:
        p += 1
    return p


cdef int sweep_categorical(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t end,
                           Split *best, double mean, weight_t tag) noexcept nogil:
    """The multiway split of categorical feature f: one child per level present at the node;
    missing rows join the largest child (the first of most weight, in level order). Returns 0
    when fewer than two levels are present.

    The node's rows of f are sorted by level code, so each present level is one run of the
    list: two passes over the runs (the largest, then the cost, in level order) cost
    O(rows + K x levels present) per node. Nothing here is sized by the column's number of
    levels, which would make an ID-like column cost O(levels) at every node it cannot split."""
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t e = missing_start(val, start, end), p, q, r, big_start = -1
    cdef count_t n_miss, n_child
    cdef weight_t w, w_miss = 0, w_child, most = 0
    cdef weight_t *left = <weight_t *> s.left
    cdef weight_t *miss = <weight_t *> s.miss
    cdef int K = b.K, c, n_present = 0
    cdef double cost = 0.0, s_miss = 0.0, s_run
    p = start
    while p < e:  # the largest level (first on ties), which also takes the missing rows
        q = run_end(val, p, e)
        n_present += 1
        w = rows_weight(b, idx, p, q, tag)
        if w > most:
            most = w
            big_start = p
        p = q
    if n_present < 2:
        return 0
    if b.criterion != CRIT_SSE:
        for c in range(K):
            miss[c] = 0
        for p in range(e, end):
            w = row_weight(b, idx[p], tag)
            miss[b.yc[idx[p]]] += w
            w_miss += w
    else:
        for p in range(e, end):
            w = row_weight(b, idx[p], tag)
            s_miss += w * (b.yr[idx[p]] - mean)
            w_miss += w
    n_miss = rows_of(end - e, w_miss)
    p = start
    while p < e:
        q = run_end(val, p, e)
        w_child = rows_weight(b, idx, p, q, tag)
        n_child = rows_of(q - p, w_child) + (n_miss if p == big_start else 0)
        w_child += w_miss if p == big_start else 0
        if not allowed(n_child, w_child, b.min_samples_leaf, b.min_weight_leaf):
            return 1
        if b.criterion == CRIT_SSE:
            s_run = 0.0
            for r in range(p, q):
                s_run += row_weight(b, idx[r], tag) * (b.yr[idx[r]] - mean)
            cost += sse_term(s_run + (s_miss if p == big_start else 0.0), w_child)
        else:
            for c in range(K):
                left[c] = 0
            for r in range(p, q):
                fastml_check_index(b.yc[idx[r]], K)
                left[b.yc[idx[r]]] += row_weight(b, idx[r], tag)
            if p == big_start:
                cost += class_term2(b, left, miss, w_child)
            else:
                cost += class_term(b, left, w_child)
        p = q
    consider(best, cost, f, NAN, 0, n_present)
    return 1


# ---------------------------------------------------------------- binary categorical splits
#
# categorical_split="binary": the levels present at the node are split into two groups. There
# are 2^(P-1) - 1 such partitions of P levels; sweep_binary scores only P - 1 of them per
# level ordering, the prefixes of the levels sorted by a key, which costs O(P log P) per
# ordering on top of the O(rows) pass that gathers the per-level statistics:
#   - two classes: the key is the level's proportion of class 0. For any concave impurity
#     (entropy, Gini) the best partition is one of these prefixes (Breiman, Friedman, Olshen &
#     Stone 1984, Theorem 4.5), so the search is exact;
#   - regression: the key is the level's mean target, exact for the squared error (Fisher
#     1958; Breiman et al. 1984, 9.4);
#   - K > 2 classes (no exact ordering exists; the problem is NP-hard in general): K orderings,
#     one per class c by the level's proportion of class c ("one-vs-rest"). The prefixes of
#     ordering c contain the exact best partition for the two-class problem "c against the
#     rest" (the theorem above), each prefix is scored with the full K-class impurity, and the
#     best over the K scans is kept: O(K P log P + K^2 P) per node, a few microseconds for
#     K = 3 and P = 8. LightGBM's gradient ordering is the same idea for one class at a time.
# Missing rows join the larger group (by non-missing rows; left on ties), as they join the
# largest child of a multiway split; levels absent from the node (or never seen at fit) go
# there too at predict time. The split is stored like a multiway one (one children entry per
# level code, pointing to one of two children), so prediction, pruning, export and save/load
# treat both kinds alike.

cdef int by_proportion(const void *a, const void *b) noexcept nogil:
    """qsort order of two levels by num/den, compared exactly by cross-multiplying (counts
    are below 2^31, so the products fit in 64 bits); equal keys by code, so the order (and the
    tree) does not depend on the order the levels arrive in."""
    cdef const LevelKey *x = <const LevelKey *> a
    cdef const LevelKey *y = <const LevelKey *> b
    cdef count_t l = x.num * y.den, r = y.num * x.den
    if l != r:
        return -1 if l < r else 1
    return x.level - y.level


cdef int by_wproportion(const void *a, const void *b) noexcept nogil:
    """by_proportion with sample weights: wnum/wden, cross-multiplied in double (exact for
    integer weights below 2^26 a level, where it agrees with by_proportion); equal keys by
    code."""
    cdef const LevelKey *x = <const LevelKey *> a
    cdef const LevelKey *y = <const LevelKey *> b
    cdef double l = x.wnum * y.wden, r = y.wnum * x.wden
    if l != r:
        return -1 if l < r else 1
    return x.level - y.level


cdef int by_mean(const void *a, const void *b) noexcept nogil:
    """qsort order of two levels by mean target, equal means by code."""
    cdef const LevelKey *x = <const LevelKey *> a
    cdef const LevelKey *y = <const LevelKey *> b
    if x.mean != y.mean:
        return -1 if x.mean < y.mean else 1
    return x.level - y.level


cdef int level_stats(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t e,
                     double mean, weight_t tag) noexcept nogil:
    """One pass over the runs of feature f's non-missing rows [start, e): for the i-th level
    present, s.keys[i] (its code, slot i, its mean target), s.gsum[GSUM i:] its rows, weight
    and sum of centred targets (regression) or s.gcounts[iK:(i+1)K] its class counts.
    Returns the number of levels present, P. O(rows + P K)."""
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t p = start, q, r
    cdef int i = 0, c, K = b.K
    cdef weight_t *counts
    cdef weight_t w, w_level
    cdef double raw, centred
    while p < e:
        q = run_end(val, p, e)
        fastml_check_index(i, b.max_levels + 1)
        s.keys[i].level = <int> val[p]
        s.keys[i].slot = i
        w_level = rows_weight(b, idx, p, q, tag)
        s.gsum[GSUM * i] = q - p
        s.gsum[GSUM * i + 1] = w_level
        if b.criterion == CRIT_SSE:
            raw = 0.0
            centred = 0.0
            for r in range(p, q):
                w = row_weight(b, idx[r], tag)
                raw += w * b.yr[idx[r]]
                centred += w * (b.yr[idx[r]] - mean)
            s.keys[i].mean = raw / w_level  # raw, not centred: the same key wherever computed
            s.gsum[GSUM * i + 2] = centred
        else:
            counts = <weight_t *> s.gcounts + i * K
            for c in range(K):
                counts[c] = 0
            for r in range(p, q):
                fastml_check_index(b.yc[idx[r]], K)
                counts[b.yc[idx[r]]] += row_weight(b, idx[r], tag)
        i += 1
        p = q
    return i


cdef inline int n_orderings(Builder *b) noexcept nogil:
    """One ordering for regression and two classes (exact), one per class for more."""
    return 1 if b.criterion == CRIT_SSE or b.K <= 2 else b.K


cdef void order_levels(Builder *b, Scratch *s, int P, int ordering,
                       weight_t tag) noexcept nogil:
    """Sort s.keys[:P] by the ordering's key (see the section note above)."""
    cdef int i
    cdef const weight_t *gcounts = <const weight_t *> s.gcounts
    if b.criterion == CRIT_SSE:
        qsort(s.keys, P, sizeof(LevelKey), by_mean)
        return
    for i in range(P):
        if weight_t is double:
            s.keys[i].wnum = gcounts[s.keys[i].slot * b.K + ordering]
            s.keys[i].wden = s.gsum[GSUM * s.keys[i].slot + 1]
        else:
            s.keys[i].num = gcounts[s.keys[i].slot * b.K + ordering]
            s.keys[i].den = <count_t> s.gsum[GSUM * s.keys[i].slot + 1]
    if weight_t is double:
        qsort(s.keys, P, sizeof(LevelKey), by_wproportion)
    else:
        qsort(s.keys, P, sizeof(LevelKey), by_proportion)


cdef int sweep_binary(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t end,
                      Split *best, double mean, weight_t tag) noexcept nogil:
    """The best two-way partition of categorical feature f's levels at the node: for each
    ordering, the cut after each of the first P - 1 sorted levels (threshold = how many levels
    go left, ordering = which order). Returns 0 when fewer than two levels are present.

    Loop invariant of the prefix scan: after step i, left holds the class counts (s_left the
    centred target sum, n_left the rows, w_left their weight) of the first i + 1 sorted
    levels, and every prefix up to it that leaves min_samples_leaf rows on both sides has
    been compared with the best."""
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t e = missing_start(val, start, end), p
    cdef count_t n_miss, n_all, n_left, n_right, nl, nr
    cdef count_t leaf = b.min_samples_leaf
    cdef double wleaf = b.min_weight_leaf
    cdef int P, o, i, c, slot, K = b.K, miss_left
    cdef double s_miss = 0.0, s_all = 0.0, s_left, cost
    cdef weight_t w, w_miss = 0, w_all = 0, w_left, w_right, wl, wr
    cdef weight_t *left = <weight_t *> s.left
    cdef weight_t *right = <weight_t *> s.right
    cdef weight_t *miss = <weight_t *> s.miss
    cdef const weight_t *node_counts = <const weight_t *> b.node_counts
    cdef const weight_t *counts
    P = level_stats(b, s, f, start, e, mean, tag)
    if P < 2:
        return 0
    for i in range(P):
        w_all += <weight_t> s.gsum[GSUM * i + 1]
    n_all = rows_of(e - start, w_all)
    if b.criterion == CRIT_SSE:
        for p in range(e, end):
            w = row_weight(b, idx[p], tag)
            s_miss += w * (b.yr[idx[p]] - mean)
            w_miss += w
        for i in range(P):
            s_all += s.gsum[GSUM * i + 2]
    else:
        for c in range(K):
            miss[c] = 0
        for p in range(e, end):
            w = row_weight(b, idx[p], tag)
            miss[b.yc[idx[p]]] += w
            w_miss += w
    n_miss = rows_of(end - e, w_miss)
    for o in range(n_orderings(b)):
        order_levels(b, s, P, o, tag)
        n_left = 0
        w_left = 0
        s_left = 0.0
        for c in range(K):
            left[c] = 0
        for i in range(P - 1):
            slot = s.keys[i].slot
            n_left += rows_of(<count_t> s.gsum[GSUM * slot], <weight_t> s.gsum[GSUM * slot + 1])
            w_left += <weight_t> s.gsum[GSUM * slot + 1]
            n_right = n_all - n_left
            w_right = w_all - w_left
            miss_left = w_left >= w_right  # the missing rows join the larger group
            nl = n_left + (n_miss if miss_left else 0)
            nr = n_right + (0 if miss_left else n_miss)
            wl = w_left + (w_miss if miss_left else 0)
            wr = w_right + (0 if miss_left else w_miss)
            if b.criterion == CRIT_SSE:
                s_left += s.gsum[GSUM * slot + 2]
                if not allowed(nl, wl, leaf, wleaf) or not allowed(nr, wr, leaf, wleaf):
                    continue
                if miss_left:
                    cost = sse_term(s_left + s_miss, wl) + sse_term(s_all - s_left, wr)
                else:
                    cost = sse_term(s_left, wl) + sse_term(s_all - s_left + s_miss, wr)
            else:
                counts = <const weight_t *> s.gcounts + slot * K
                for c in range(K):
                    left[c] += counts[c]
                    right[c] = node_counts[c] - miss[c] - left[c]
                if not allowed(nl, wl, leaf, wleaf) or not allowed(nr, wr, leaf, wleaf):
                    continue
                if miss_left:
                    cost = class_term2(b, left, miss, wl) + class_term(b, right, wr)
                else:
                    cost = class_term(b, left, wl) + class_term2(b, right, miss, wr)
            if consider(best, cost, f, i + 1, miss_left, 2):
                best.ordering = o
                if b.criterion != CRIT_SSE:
                    keep_left_counts(best, left, miss, miss_left, K)
    return 1


cdef int assign_binary(Builder *b, Item *item, count_t *child_size,
                       weight_t tag) noexcept nogil:
    """assign_sides of a binary categorical split: the node's levels are ordered again as
    sweep_binary ordered them (the same statistics, the same deterministic sort), the first
    item.split.threshold go to child 0 and the others to child 1; missing rows, and levels not
    present at the node, to the larger child (item.split.missing_left). Returns 2."""
    cdef int f = item.split.feature, L = b.n_levels[f], P, i, v, miss_side
    cdef int n_first = <int> item.split.threshold
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t p, e = missing_start(val, item.start, item.end)
    cdef Scratch *s = b.scratch
    P = level_stats(b, s, f, item.start, e, 0.0, tag)
    order_levels(b, s, P, item.split.ordering, tag)
    miss_side = 0 if item.split.missing_left else 1
    for v in range(L):
        b.child_of_level[v] = miss_side
        b.level_seen[v] = 0
    child_size[0] = 0
    child_size[1] = 0
    for i in range(P):
        v = s.keys[i].level
        fastml_check_index(v, L)
        b.child_of_level[v] = 0 if i < n_first else 1
        b.level_seen[v] = 1
        child_size[b.child_of_level[v]] += <count_t> s.gsum[GSUM * s.keys[i].slot]
    for p in range(item.start, e):
        set_side(b, idx[p], b.child_of_level[<int> val[p]])
    for p in range(e, item.end):
        set_side(b, idx[p], miss_side)
    child_size[miss_side] += item.end - e
    b.child_of_level[L] = miss_side
    return 2


cdef inline int sweep(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t end,
                      Split *best, double mean, weight_t tag) noexcept nogil:
    if b.is_cat[f]:
        if b.cat_binary:
            return sweep_binary(b, s, f, start, end, best, mean, tag)
        return sweep_categorical(b, s, f, start, end, best, mean, tag)
    if b.criterion == CRIT_SSE:
        return sweep_sse(b, f, start, end, best, mean, tag)
    return sweep_class(b, s, f, start, end, best, tag)


cdef inline int has_any_cut(Builder *b, int f, Py_ssize_t start,
                                 Py_ssize_t end) noexcept nogil:
    """Whether feature f's sweep has anything to cut at the node (its rows are sorted, missing
    last): two distinct values, or (a real column) values and missing rows."""
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t e = missing_start(val, start, end)
    if b.is_cat[f]:
        return e > start and val[start] != val[e - 1]
    return has_cuts(val, start, e, end)


# ---------------------------------------------------------------- binary mode: attribute selection
#
# The largest gain is a biased attribute selector: the best of many candidate splits is larger
# by chance, so where no attribute carries signal any more a categorical column's best of its
# 2^(P-1) - 1 level partitions beats the real thresholds and the single levels (bench/README.md,
# "hashcat"). In binary mode, when the data has a categorical column, the ATTRIBUTE is the one
# whose best split is the most significant
# after a Bonferroni adjustment for the partitions it was chosen from, and its split stays the
# one the gain chose (CHAID's rule, Kass 1980; unbiased selection as in Loh & Shih 1997, QUEST):
#   adjusted log p = log chi2.sf(statistic, df) + log m.
# statistic: Pearson's X^2 of the split's 2 x K table (CHAID's, and 000's chi-square pruning's,
# test), df = K - 1 for the K classes present; regression: the Gaussian likelihood ratio
# n log(SSE_node / SSE_children), df = 1. m = 2^(P-1) - 1 for a categorical column with P
# levels present at the node; m = 1 for a real column. Measured on the issue's data and the
# README table's generators (bench/README.md, "Binary splits: unbiased attribute selection"),
# that beat both CHAID's ordinal Bonferroni m = c - 1 for c distinct values (adjacent cuts are
# nearly the same test, so it over-penalizes real columns: -1.4 points on issue14) and a Miller
# & Siegmund style effective number of cuts; the likelihood ratio G = 2 n IG in place of X^2
# under entropy lost 0.8-1 point (it overstates tables with a rare class isolated in a small
# child, the same bias the gain has). The smallest adjusted log p wins; ties go to the larger
# gain, then to the first feature (in draw order), as before.

cdef double LN2 = 0.69314718055994530942


cdef double log_partitions(Builder *b, int f, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """log m: log(2^(P-1) - 1) for categorical feature f with P levels present at the node (the
    partitions its best split was chosen from), 0 for a real feature."""
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t e = missing_start(val, start, end), p = start
    cdef double levels = 0.0
    if not b.is_cat[f]:
        return 0.0
    while p < e:
        p = run_end(val, p, e)
        levels += 1.0
    return (levels - 1.0) * LN2 + log1p(-exp2(1.0 - levels))  # any P, no overflow


cdef double split_statistic(Builder *b, const Split *split, double n,
                            weight_t tag) noexcept nogil:
    """The chi-square statistic of a two-child split of the node's n rows (their weight, with
    sample weights: the table of weighted counts; see above)."""
    cdef int c
    cdef double n_first = 0.0, x = 0.0, share, deviation, expected, sse
    cdef const weight_t *left = <const weight_t *> split.left_counts
    cdef const weight_t *node_counts = <const weight_t *> b.node_counts
    if b.criterion == CRIT_SSE:
        sse = b.node_ss + split.cost  # cost = -(the between-children sum of squares)
        return n * log(b.node_ss / sse) if sse > 0.0 else INFINITY
    for c in range(b.K):
        n_first += left[c]
    share = n_first / n
    for c in range(b.K):
        if node_counts[c] <= 0:
            continue
        expected = share * node_counts[c]
        deviation = left[c] - expected  # the second child's is minus it
        x += deviation * deviation * (1.0 / expected + 1.0 / (node_counts[c] - expected))
    return x


cdef int least_adjusted_p(Builder *b, int n_cand, Py_ssize_t start, Py_ssize_t end,
                          weight_t tag) noexcept nogil:
    """Of the candidates' best splits (found), the index of the one of smallest adjusted log
    p-value (ties: the larger gain, then the first); -1 if none is valid."""
    cdef int i, c, pick = -1
    cdef double df = 1.0, log_p, least = INFINITY
    cdef double tie = cost_tie(b.criterion, TIE, b.node_w, b.node_ss)
    cdef const Split *split
    cdef const weight_t *node_counts = <const weight_t *> b.node_counts
    if b.criterion != CRIT_SSE:
        df = -1.0
        for c in range(b.K):
            df += node_counts[c] > 0
    for i in range(n_cand):
        split = &b.found[i]
        if split.feature < 0:
            continue
        log_p = fastml_chi2_logsf(split_statistic(b, split, b.node_w, tag), df) + \
            log_partitions(b, split.feature, start, end)
        if pick < 0 or log_p < least or \
                (log_p == least and split.cost < b.found[pick].cost - tie):
            pick = i
            least = log_p
    return pick


cdef inline void search_feature(Builder *b, Scratch *s, int i, Py_ssize_t start, Py_ssize_t end,
                                double mean, weight_t tag) noexcept nogil:
    """found[i] = the best split of the i-th candidate feature (by gain), with the class counts
    of its first child in found_left when binary mode's selection needs them."""
    clear_split(&b.found[i], INFINITY, 0)
    if b.adjusted and b.criterion != CRIT_SSE:
        b.found[i].left_counts = <weight_t *> b.found_left + i * (b.K + 1)
    sweep(b, s, b.candidates[i], start, end, &b.found[i], mean, tag)


cdef void find_split(Builder *b, Py_ssize_t start, Py_ssize_t end, Split *best,
                     double mean, uint64_t seed, weight_t tag) noexcept nogil:
    """The best split over (a random subset of max_features of) the features: the first
    candidate (features in draw order, then thresholds ascending) whose cost is within the tie
    tolerance of the smallest cost. Two passes make that independent of the thread count: each
    feature's smallest cost (in parallel on large nodes), then the first feature that comes
    within the tolerance of the overall smallest is swept again for its first such candidate.
    seed: the node's draw (_grow.draw_begin)."""
    cdef int i, f, n_cand = 0, pick, nt = b.n_threads
    cdef double limit, tie = cost_tie(b.criterion, TIE, b.node_w, b.node_ss)
    draw_begin(&b.draw, NULL, b.d, b.d, b.max_features, seed)
    while n_cand < b.max_features:  # the candidates: the first max_features that vary here
        f = draw_next(&b.draw, NULL)
        if f < 0:
            break
        if has_any_cut(b, f, start, end):  # constant ones (and no missing rows) do not count
            b.candidates[n_cand] = f
            n_cand += 1
    if end - start < PARALLEL_MIN_ROWS or n_cand < 2:
        nt = 1
    if nt > 1:
        for i in prange(n_cand, num_threads=nt, schedule="dynamic"):
            search_feature(b, &b.scratch[threadid()], i, start, end, mean, tag)
    else:
        for i in range(n_cand):
            search_feature(b, b.scratch, i, start, end, mean, tag)
    if b.adjusted:
        pick = least_adjusted_p(b, n_cand, start, end, tag)
        limit = b.found[pick].cost + tie if pick >= 0 else INFINITY
    else:
        pick = first_within(b.found, n_cand, tie, &limit)
    clear_split(best, limit, 1)
    if pick >= 0:
        sweep(b, b.scratch, b.candidates[pick], start, end, best, mean, tag)


# ---------------------------------------------------------------- node statistics

cdef int node_stats_sse(Builder *b, TreeBuffer *t, index_t node, Py_ssize_t start,
                        Py_ssize_t end, double *parent_term, double *mean,
                        weight_t tag) noexcept nogil:
    """A regression node's mean, impurity and sum of squared deviations (b.node_ss), summed
    over its rows in row order, a repeated row once with its count (times its sample weight)
    as weight: the histogram builder's arithmetic, so both give the same bits for the same
    tree. Sets b.node_w. Returns 1 if the targets all agree (a pure node)."""
    cdef const int *rows = b.sidx + b.d * b.m   # the node's rows in row order
    cdef Py_ssize_t p = start, q
    cdef int pure = 1
    cdef double s = 0.0, ss = 0.0, w_node = 0.0, w, d, y, first = b.yr[rows[start]]
    while p < end:
        q = repeats_end(rows, p, end)
        y = b.yr[rows[p]]
        w = (q - p) * <double> row_weight(b, rows[p], tag)
        s += w * y
        w_node += w
        if y != first:
            pure = 0
        p = q
    mean[0] = s / w_node
    p = start
    while p < end:
        q = repeats_end(rows, p, end)
        d = b.yr[rows[p]] - mean[0]
        ss += (q - p) * <double> row_weight(b, rows[p], tag) * d * d
        p = q
    t.value[<Py_ssize_t> node * t.n_values] = mean[0]
    t.nodes[node].impurity = ss / w_node
    b.node_ss = ss
    b.node_w = w_node
    parent_term[0] = 0.0  # sse_term of the centred node sum, which is 0
    return pure


cdef inline Py_ssize_t repeats_end(const int *rows, Py_ssize_t p,
                                    Py_ssize_t end) noexcept nogil:
    """The end of the run of repeats of rows[p] (a bootstrap repeats a row counts[row] times,
    adjacent in the row-ordered list)."""
    cdef Py_ssize_t q = p + 1
    while q < end and rows[q] == rows[p]:
        q += 1
    return q


cdef int node_stats(Builder *b, TreeBuffer *t, index_t node, Py_ssize_t start, Py_ssize_t end,
                    double *parent_term, double *mean, weight_t tag) noexcept nogil:
    """Fill the node's value and impurity and set b.node_w; return 1 if its outputs all agree
    (a pure node)."""
    cdef const int *idx = b.sidx
    cdef Py_ssize_t p
    cdef int c
    cdef weight_t *counts = <weight_t *> b.node_counts
    cdef weight_t w_node = 0
    if b.criterion == CRIT_SSE:
        return node_stats_sse(b, t, node, start, end, parent_term, mean, tag)
    for c in range(b.K):
        counts[c] = 0
    for p in range(start, end):
        fastml_check_index(b.yc[idx[p]], b.K)
        counts[b.yc[idx[p]]] += row_weight(b, idx[p], tag)
    for c in range(b.K):
        w_node += counts[c]
    b.node_w = w_node
    mean[0] = 0.0
    return class_value(t, node, b.criterion, b.K, b.nlogn, counts, w_node, parent_term)


cdef int make_node(Builder *b, TreeBuffer *t, Item *item, Py_ssize_t start, Py_ssize_t end,
                   index_t depth, weight_t tag) noexcept nogil:
    """Create the node for rows [start, end); return 1 if it should be split (item filled),
    0 if it is a leaf, -1 when memory runs out."""
    cdef double parent_term, mean
    cdef int pure
    cdef count_t n
    if open_node(t, item, start, end, end - start, end - start, depth) < 0:
        return -1
    pure = node_stats(b, t, item.node, start, end, &parent_term, &mean, tag)
    set_weight(t, item, b.node_w)
    n = rows_of(end - start, <weight_t> b.node_w)
    item.n = t.nodes[item.node].n_node_samples = n
    if base_case(pure, depth, n, b.node_w, b.max_depth, b.min_samples_split,
                 b.min_samples_leaf, b.min_weight_leaf):
        return 0
    find_split(b, start, end, &item.split, mean, item.seed, tag)
    return set_gain(item, parent_term)


# ---------------------------------------------------------------- applying a split

cdef inline void set_side(Builder *b, int row, int child) noexcept nogil:
    """The child of a row at the split being applied."""
    if b.wide:
        b.side[row] = child
    else:
        b.side8[row] = <uint8_t> child


cdef int assign_sides(Builder *b, TreeBuffer *t, Item *item, count_t *child_size,
                      weight_t tag) noexcept nogil:
    """side[row] = child of each row at the split; fills the node's children count (rows) and
    the level → child map. Returns the number of children k."""
    cdef int f = item.split.feature, L, v, k = 0, big, miss_side
    cdef const int *idx = b.sidx + f * b.m
    cdef const double *val = b.sval + f * b.m
    cdef Py_ssize_t p, e = missing_start(val, item.start, item.end)
    cdef double thr = item.split.threshold
    cdef weight_t child_w[2]
    cdef double *gsum = b.scratch.gsum
    b.wide = b.is_cat[f] and not b.cat_binary and b.n_levels[f] > 254
    if not b.is_cat[f]:
        k = 2
        child_size[0] = 0
        child_size[1] = 0
        child_w[0] = 0
        child_w[1] = 0
        for p in range(item.start, e):
            v = 0 if val[p] < thr else 1
            set_side(b, idx[p], v)
            child_size[v] += 1
            child_w[v] += row_weight(b, idx[p], tag)
        miss_side = missing_side(e < item.end, item.split.missing_left, child_w[0],
                                 child_w[1])
        for p in range(e, item.end):
            set_side(b, idx[p], miss_side)
            child_size[miss_side] += 1
        b.child_of_level[0] = miss_side  # remembered for the missing_child
        return k
    if b.cat_binary:
        return assign_binary(b, item, child_size, tag)
    L = b.n_levels[f]
    memset(gsum, 0, GSUM * L * sizeof(double))
    for p in range(item.start, e):
        v = <int> val[p]
        gsum[GSUM * v] += 1
        gsum[GSUM * v + 1] += row_weight(b, idx[p], tag)
    big = largest_level(gsum, L)
    for v in range(L):
        b.child_of_level[v] = -1
        b.level_seen[v] = gsum[GSUM * v] > 0
        if gsum[GSUM * v] > 0:
            b.child_of_level[v] = k
            child_size[k] = <count_t> gsum[GSUM * v]
            k += 1
    for p in range(item.start, e):
        set_side(b, idx[p], b.child_of_level[<int> val[p]])
    miss_side = b.child_of_level[big]
    for p in range(e, item.end):
        set_side(b, idx[p], miss_side)
    child_size[miss_side] += item.end - e
    for v in range(L):  # unseen at this node → the majority path
        if b.child_of_level[v] < 0:
            b.child_of_level[v] = miss_side
    b.child_of_level[L] = miss_side
    return k


cdef void partition_feature(Builder *b, Scratch *s, int f, Py_ssize_t start, Py_ssize_t end,
                            const count_t *child_size, int k) noexcept nogil:
    """Stable counting scatter of feature f's [start, end) by each row's side: the children
    stay sorted, in child order. Two children (every threshold split) keep both write
    positions in registers; an offsets array in memory chains every entry through a store
    and a load."""
    cdef int c, side
    cdef Py_ssize_t p, n = end - start, o, left = 0, right = child_size[0]
    cdef int *idx = b.sidx + f * b.m + start
    cdef double *val = b.sval + f * b.m + start
    cdef const uint8_t *side8 = b.side8
    if k == 2 and not b.wide:
        for p in range(n):
            side = side8[idx[p]]
            o = right if side else left
            fastml_check_index(o, n)
            s.tmp_idx[o] = idx[p]
            s.tmp_val[o] = val[p]
            right += side
            left += 1 - side
    else:
        s.offset[0] = 0
        for c in range(1, k):
            s.offset[c] = s.offset[c - 1] + child_size[c - 1]
        for p in range(n):
            side = b.side[idx[p]] if b.wide else side8[idx[p]]
            fastml_check_index(side, k)
            o = s.offset[side]
            fastml_check_index(o, n)
            s.tmp_idx[o] = idx[p]
            s.tmp_val[o] = val[p]
            s.offset[side] = o + 1
    memcpy(idx, s.tmp_idx, n * sizeof(int))
    memcpy(val, s.tmp_val, n * sizeof(double))


cdef void partition(Builder *b, Py_ssize_t start, Py_ssize_t end, const count_t *child_size,
                    int k) noexcept nogil:
    """Every list (each feature's, and regression's rows in row order) partitioned by child
    (the lists are independent, so large nodes do them in parallel threads)."""
    cdef int f
    if end - start >= PARALLEL_MIN_ROWS and b.n_threads > 1 and b.n_lists > 1:
        for f in prange(b.n_lists, num_threads=b.n_threads, schedule="dynamic"):
            partition_feature(b, &b.scratch[threadid()], f, start, end, child_size, k)
    else:
        for f in range(b.n_lists):
            partition_feature(b, b.scratch, f, start, end, child_size, k)


cdef int make_child(void *builder, TreeBuffer *t, const Item *parent, int c, Py_ssize_t *lo,
                    Item *child, weight_t tag) noexcept nogil:
    """Child c of the split being applied: its rows start at lo (_grow.add_children's child_fn)."""
    cdef Builder *b = <Builder *> builder
    cdef Py_ssize_t start = lo[0]
    lo[0] += b.child_size[c]
    return make_node(b, t, child, start, lo[0], parent.depth + 1, tag)


cdef int split_node(void *builder, TreeBuffer *t, Item *item, Frontier *fr,
                    weight_t tag) noexcept nogil:
    """Turn item's node into an internal node: partition its rows by child, then create the
    children (_grow.grow_frontier's split_fn). Returns the number of children, or -1 when
    memory runs out."""
    cdef Builder *b = <Builder *> builder
    cdef int f = item.split.feature
    cdef int k = assign_sides(b, t, item, b.child_size, tag)
    partition(b, item.start, item.end, b.child_size, k)
    if weight_t is double:
        return add_children(b, t, item, fr, k, b.is_cat[f], b.n_levels[f], b.child_of_level,
                            b.level_seen, make_child_weighted)
    else:
        return add_children(b, t, item, fr, k, b.is_cat[f], b.n_levels[f], b.child_of_level,
                            b.level_seen, make_child_counted)


# The growth loop (_grow.grow_frontier) takes plain function pointers: one per copy.
cdef int make_child_counted(void *builder, TreeBuffer *t, const Item *parent, int c,
                            Py_ssize_t *lo, Item *child) noexcept nogil:
    return make_child(builder, t, parent, c, lo, child, <count_t> 0)


cdef int make_child_weighted(void *builder, TreeBuffer *t, const Item *parent, int c,
                             Py_ssize_t *lo, Item *child) noexcept nogil:
    return make_child(builder, t, parent, c, lo, child, <double> 0)


cdef int split_node_counted(void *builder, TreeBuffer *t, Item *item,
                            Frontier *fr) noexcept nogil:
    return split_node(builder, t, item, fr, <count_t> 0)


cdef int split_node_weighted(void *builder, TreeBuffer *t, Item *item,
                             Frontier *fr) noexcept nogil:
    return split_node(builder, t, item, fr, <double> 0)


cdef void keep_nothing(void *builder, Item *item) noexcept nogil:
    """A node left a leaf by the leaf budget holds nothing of the exact builder's."""
    pass


cdef int grow_tree(Builder *b, TreeBuffer *t) noexcept nogil:
    """Depth-first growth (best-first by gain when max_leaf_nodes is set): _grow.grow_frontier
    from the root, with the weighted copy of the builder when the fit has sample weights."""
    cdef Item root
    cdef int status
    root.split.feature = -1
    root.seed = b.seed
    if b.wr != NULL:
        status = make_node(b, t, &root, 0, b.m, 0, <double> 0)
        return grow_frontier(b, t, &root, status, b.max_leaf_nodes,
                             cost_tie(b.criterion, TIE, 1.0, b.node_ss), split_node_weighted,
                             keep_nothing)
    status = make_node(b, t, &root, 0, b.m, 0, <count_t> 0)
    return grow_frontier(b, t, &root, status, b.max_leaf_nodes,
                         cost_tie(b.criterion, TIE, 1.0, b.node_ss), split_node_counted,
                         keep_nothing)


# ---------------------------------------------------------------- scratch memory and entry point

cdef int scratch_init(Scratch *s, int n_threads, Py_ssize_t m, int K,
                      int max_levels) noexcept nogil:
    """Each thread's scratch arrays; -1 when memory runs out (scratch_free frees any part).
    The class-count arrays get K + 1 entries: regression has K = 0, and malloc(0) may return
    NULL, which would read as out of memory."""
    cdef int i
    for i in range(n_threads):
        s[i].left = malloc((K + 1) * WEIGHT_BYTES)
        s[i].right = malloc((K + 1) * WEIGHT_BYTES)
        s[i].miss = malloc((K + 1) * WEIGHT_BYTES)
        s[i].gcounts = malloc((max_levels + 1) * (K + 1) * WEIGHT_BYTES)
        s[i].gsum = <double *> malloc(GSUM * (max_levels + 1) * sizeof(double))
        s[i].tmp_idx = <int *> malloc(m * sizeof(int))
        s[i].tmp_val = <double *> malloc(m * sizeof(double))
        s[i].offset = <count_t *> malloc((max_levels + 2) * sizeof(count_t))
        s[i].keys = <LevelKey *> malloc((max_levels + 1) * sizeof(LevelKey))
        if (s[i].left == NULL or s[i].right == NULL or s[i].miss == NULL or
                s[i].gcounts == NULL or s[i].gsum == NULL or s[i].tmp_idx == NULL or
                s[i].tmp_val == NULL or s[i].offset == NULL or s[i].keys == NULL):
            return -1
    return 0


cdef void scratch_free(Scratch *s, int n_threads) noexcept nogil:
    cdef int i
    for i in range(n_threads):
        free(s[i].left); free(s[i].right); free(s[i].miss); free(s[i].gcounts)
        free(s[i].gsum); free(s[i].tmp_idx); free(s[i].tmp_val); free(s[i].offset)
        free(s[i].keys)


cdef int builder_init(Builder *b, Py_ssize_t n) noexcept nogil:
    """The builder's arrays for n distinct rows (b.m, b.d, b.K, b.n_threads and b.max_levels
    set); -1 when memory runs out (builder_free frees any part)."""
    # one spare entry past the last list: fill_sorted_lists' branch-free writes
    b.sidx = <int *> malloc((b.n_lists * b.m + 1) * sizeof(int))
    b.sval = <double *> malloc((b.n_lists * b.m + 1) * sizeof(double))
    # the n log2 n table serves the count copy; the weighted one computes its logs
    b.nlogn = <double *> malloc((1 if b.wr != NULL else b.total + 1) * sizeof(double))
    b.side8 = <uint8_t *> malloc(n)
    b.side = <int *> malloc((n if b.max_levels > 254 else 1) * sizeof(int))
    b.node_counts = malloc((b.K + 1) * WEIGHT_BYTES)
    b.candidates = <int *> malloc(b.d * sizeof(int))
    b.found = <Split *> malloc(b.d * sizeof(Split))
    b.found_left = malloc(b.d * (b.K + 1) * WEIGHT_BYTES)
    b.child_of_level = <int *> malloc((b.max_levels + 2) * sizeof(int))
    b.level_seen = <int *> malloc((b.max_levels + 2) * sizeof(int))
    b.child_size = <count_t *> malloc((b.max_levels + 2) * sizeof(count_t))
    b.draw.heap = <KeyedFeature *> malloc(b.d * sizeof(KeyedFeature))
    b.scratch = <Scratch *> calloc(b.n_threads, sizeof(Scratch))
    if b.scratch == NULL or scratch_init(b.scratch, b.n_threads, b.m, b.K, b.max_levels) < 0:
        return -1
    if (b.sidx == NULL or b.sval == NULL or b.nlogn == NULL or b.side == NULL or
            b.side8 == NULL or
            b.node_counts == NULL or b.candidates == NULL or b.found == NULL or
            b.found_left == NULL or
            b.child_of_level == NULL or b.level_seen == NULL or b.child_size == NULL or
            b.draw.heap == NULL):
        return -1
    return 0


cdef void builder_free(Builder *b) noexcept nogil:
    free(b.sidx); free(b.sval); free(b.nlogn); free(b.side); free(b.side8)
    free(b.node_counts)
    free(b.candidates); free(b.found); free(b.found_left); free(b.child_of_level)
    free(b.level_seen)
    free(b.child_size); free(b.draw.heap)
    if b.scratch != NULL:
        scratch_free(b.scratch, b.n_threads)
    free(b.scratch)


cdef inline Py_ssize_t repeats(const int[::1] counts, const double[::1] weights,
                              Py_ssize_t r) noexcept nogil:
    """How many times row r is in the sample: its bootstrap count (1 without one), or 0 when
    its sample weight is 0 (such a row is left out, as if it were not in X)."""
    if weights.shape[0] > 0 and weights[r] == 0.0:
        return 0
    return counts[r] if counts.shape[0] > 0 else 1


cdef inline Py_ssize_t entries(const int[::1] counts, const double[::1] weights,
                              Py_ssize_t r) noexcept nogil:
    """Row r's entries in each sorted list: its repeats in a weighted build, one in a count
    build if the bootstrap drew it (its count is its weight)."""
    if weights.shape[0] > 0:
        return repeats(counts, weights, r)
    return 1 if repeats(counts, weights, r) > 0 else 0


cdef int fill_sorted_lists(Builder *b, const double[:, ::1] Xs, const int[:, ::1] order,
                           const int[::1] counts, const double[::1] weights) noexcept nogil:
    """nlogn (count builds), and each feature's sorted sample, a row entered `entries` times;
    for regression also the sample in row order (list d). Rows' entries are looked up in a
    byte per row (a row's count would be a read at random from an array four times larger,
    most of the fill's time). A count build enters a row 0 or 1 times: every row is written
    where the next entry goes and the position moves by its entries, with no branch (a
    bootstrap leaves out a third of the rows at random, a branch the CPU cannot predict; the
    write past a list's end lands in the next list's first entry, filled after it, or in the
    spare entry past the last list); -1 when memory runs out."""
    cdef Py_ssize_t f, i, j, p, n = Xs.shape[1], repeat
    cdef int r
    cdef uint8_t *times = <uint8_t *> malloc(n)
    if times == NULL:
        return -1
    for i in range(n):      # 255: look the count up (a row drawn 255 times or more)
        repeat = entries(counts, weights, i)
        times[i] = <uint8_t> (repeat if repeat < 255 else 255)
    b.nlogn[0] = 0.0
    if b.wr == NULL:
        for i in range(1, b.total + 1):
            b.nlogn[i] = i * log2(<double> i)
    for f in range(b.n_lists):
        p = f * b.m
        if b.wr == NULL:
            for i in range(n):
                r = order[f, i] if f < b.d else <int> i
                fastml_check_index(p, b.n_lists * b.m + 1)
                b.sidx[p] = r
                b.sval[p] = Xs[f, i] if f < b.d else 0.0
                p += times[r]
            continue
        for i in range(n):
            r = order[f, i] if f < b.d else <int> i
            repeat = times[r]
            if repeat == 255:
                repeat = entries(counts, weights, r)
            for j in range(repeat):
                fastml_check_index(p, (f + 1) * b.m)
                b.sidx[p] = r
                b.sval[p] = Xs[f, i] if f < b.d else 0.0
                p += 1
    free(times)
    return 0


def build_tree(const double[:, ::1] Xs, const int[:, ::1] order, const int[::1] counts,
               const double[::1] weights, const int[::1] y_class, const double[::1] y_reg,
               const unsigned char[::1] is_categorical, const int[::1] n_levels,
               int n_classes, int criterion, index_t max_depth, index_t min_samples_split,
               index_t min_samples_leaf, double min_weight_leaf, index_t max_leaf_nodes,
               index_t max_features, uint64_t seed, int n_threads=1, int categorical_split=0):
    """Grow one tree and return it as a Tree (fastml/tree/_tree_fast.pyx). Runs without the GIL.

    Xs, order: (d, n) each feature's rows sorted by value, NaN last (order), and their
    values in that order (Xs[f, i] = X[order[f, i], f]; NaN = missing, categorical columns as
    codes 0..L-1), so filling a tree's lists reads both in sequence; counts: how many times each
    row is in the sample (bootstrap), or empty for once each; weights: each row's sample
    weight (finite, >= 0; a row of weight 0 is left out), or empty for 1 each (the count
    copy of the builder); y_class (classification, codes 0..n_classes-1) or y_reg
    (regression, criterion CRITERIA["squared_error"]) the targets; the limits as the
    estimators document them (max_depth >= n, max_leaf_nodes = 0: none; min_weight_leaf:
    the least weight of a child, used with weights); n_threads: OpenMP threads for the split
    search and partition of large nodes (the tree is the same for any number);
    categorical_split: CATEGORICAL_SPLITS["multiway"] (one child per level) or ["binary"]
    (two-way partitions of the levels). Shapes are checked here; values (codes, finite y and
    weights) are trusted from the caller's validation (fastml/_core/__init__.py states the
    contract)."""
    cdef Builder b
    cdef TreeBuffer t
    cdef Py_ssize_t d = Xs.shape[0], n = Xs.shape[1], i, f, m = 0, total = 0
    cdef int status = 0
    cdef int classification = criterion != CRIT_SSE
    if order.shape[0] != d or order.shape[1] != n or is_categorical.shape[0] != d or \
            n_levels.shape[0] != d or counts.shape[0] not in (0, n) or \
            weights.shape[0] not in (0, n) or \
            (y_class.shape[0] if classification else y_reg.shape[0]) != n or \
            criterion not in (CRIT_ENTROPY, CRIT_GINI, CRIT_SSE) or \
            (classification and n_classes < 1) or categorical_split not in (0, 1):
        raise ValueError("build_tree: the arrays' shapes do not match")
    if n > INT_MAX:
        raise ValueError(f"a tree can be grown from at most {INT_MAX} rows; got {n}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1; got {n_threads}")
    for i in range(n):
        m += entries(counts, weights, i)
        total += repeats(counts, weights, i)
    if m < 1:
        raise ValueError("the sample to grow a tree from is empty")
    if total > INT_MAX:
        raise ValueError(f"a tree can be grown from at most {INT_MAX} rows; got {total}")
    if weights.shape[0] == 0 and min_weight_leaf > min_samples_leaf:
        # a count build's weights are its rows: the least weight is a least number of rows
        min_samples_leaf = <index_t> ceil(min_weight_leaf)
    memset(&b, 0, sizeof(Builder))
    b.wr = &weights[0] if weights.shape[0] > 0 else NULL
    b.cnt = &counts[0] if counts.shape[0] > 0 and weights.shape[0] == 0 else NULL
    b.total = total
    b.min_weight_leaf = min_weight_leaf
    b.n_threads = n_threads
    b.m, b.d = m, d
    b.n_lists = d + (not classification)
    b.yc = &y_class[0] if classification else NULL
    b.yr = &y_reg[0] if not classification else NULL
    b.is_cat = &is_categorical[0]
    b.n_levels = &n_levels[0]
    b.K, b.criterion = (n_classes if classification else 0), criterion
    b.cat_binary = categorical_split
    b.max_depth, b.min_samples_split = max_depth, min_samples_split
    b.min_samples_leaf, b.max_leaf_nodes = min_samples_leaf, max_leaf_nodes
    b.max_features = max_features
    b.max_levels = 2
    for f in range(d):
        if is_categorical[f] and n_levels[f] > b.max_levels:
            b.max_levels = n_levels[f]
        if is_categorical[f] and categorical_split:
            b.adjusted = 1
    b.seed = mix64(seed)
    with nogil:
        if builder_init(&b, n) < 0 or buffer_init(&t, b.K if classification else 1) < 0:
            status = -1
        else:
            status = fill_sorted_lists(&b, Xs, order, counts, weights)
            if status == 0:
                status = grow_tree(&b, &t)
        builder_free(&b)
    return finish_tree(&t, status)


def chi2_logsf(x, df):
    """log P(X > x) for X ~ chi2(df), elementwise (numpy broadcasting; float64): the C function
    (csrc/fastml_chi2.h) the binary mode's attribute selection uses, stable where the p-value
    itself underflows (x of 1e5 and more). 0 for x <= 0, NaN for df <= 0.

    Examples
    --------
    >>> float(chi2_logsf(2000.0, 3))  # scipy.stats.chi2.logsf gives -inf
    -996.42...
    """
    xs, dfs = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64))
    out = np.empty(xs.shape)
    cdef double[::1] o = out.reshape(-1)
    cdef const double[::1] xv = np.ascontiguousarray(xs).reshape(-1)
    cdef const double[::1] dv = np.ascontiguousarray(dfs).reshape(-1)
    cdef Py_ssize_t i
    with nogil:
        for i in range(o.shape[0]):
            o[i] = fastml_chi2_logsf(xv[i], dv[i])
    return out
