# The histogram split search of fastml's trees (splitter="hist"), beside the exact sorted sweep
# of _builder_fast.pyx. It grows the same trees (the Node arrays of _tree_fast.pxd) by the same
# rules -- IG* threshold splits (000), 001's "only cuts between different class mixes", ID3's
# multiway split on categorical codes, learned missing sides, the limits, info.GAIN_TIE ties --
# but it searches bins instead of sorted values. The code of those rules that does not depend
# on how a node's rows are stored is _grow.pxd's, shared with the exact builder.
#
# What it computes:
#   1. Binning, once per fit (a forest shares it; _binning_fast.pyx): each real column becomes
#      uint8 bin codes. A column of at most max_bins distinct values gets one bin per value; a
#      longer one gets equal-frequency (quantile) bins from a sorted sample. NaN is bin 255.
#      Categorical columns keep their level codes as bins (so they keep the multiway split).
#      Each bin has ends lo, hi: its value (a bin per value), or the edges around it.
#   2. Per node and feature, a histogram: per bin, the class counts (or, for regression, the
#      weight and the sum of the targets). Histogram building and split finding are separate
#      functions: a histogram is a sufficient statistic, so per-partition histograms of a
#      distributed fit can be summed and handed to the same search.
#   3. The search sweeps the node's non-empty bins left to right exactly as the exact splitter
#      sweeps runs of equal values; a cut between non-empty bins g < g' gets the threshold
#      000's x_i + (x_{i+1} - x_i)/2 with x_i = hi[g], x_{i+1} = lo[g'] (a real-valued edge:
#      predict walks raw X through the same Tree). When every value has its own bin these are
#      the exact splitter's candidates, counts and thresholds, so the trees are identical;
#      with quantile bins the threshold is the midpoint of the two bin edges around the gap.
#
# Where the speed comes from: the sample is copied once into node order -- each feature's bin
# codes (one byte per row, not the exact splitter's 12-byte sorted entries), the labels and
# weights -- and a split partitions those arrays stably, so a node's rows are one contiguous
# range of each and every pass over them is sequential (deep nodes of a few rows scattered
# over X would otherwise cost a cache miss per row and feature). A histogram costs one byte
# read and one add per row and feature, and the search costs O(bins) instead of O(rows). Large
# nodes keep the histograms of all
# features, and a split builds only its smaller children's; the largest child's is the
# parent's minus theirs (the subtraction trick). Small nodes, and nodes that search a few
# drawn features (forests), build the histogram of each drawn feature from their rows into a
# scratch whose non-empty bins a 256-bit bitmap lists in order, so a node of 5 rows costs
# O(5), not O(255).
#
# Sparse X: the codes are CSR rows holding only the entries off each column's zero bin (the bin
# of 0.0), and the sample in node order is a list of row ids instead of per-column copies. A
# node passes over its rows' entries once to learn which features take two bins there (a
# feature its rows do not list is constant: all zero), ranks just those for the draw
# (_grow.pxd's keyed draw gives the order the dense node gets), and once more to build the
# drawn features' histograms; each zero bin is then the node's total minus the feature's
# other bins (LightGBM's trick). A node costs O(its nonzeros + drawn features x bins used),
# and the whole tree never holds rows x columns of anything. A split finds each row's code of
# its feature by a binary search in the row's entries. With count builds the histograms are
# integers, so the trees are the dense trees bit for bit; with weights or for regression the
# zero bins are differences of float sums, equal to the dense sums up to round-off.
#
# Loop invariant of the threshold sweep: after adding the bins present[0..i] to the left,
# left[c] + right[c] = the node's non-missing weight of class c, and every cut before
# present[i + 1] that passed 001's filter has been compared with the best so far.
from libc.math cimport ceil, log2, isnan, NAN, INFINITY
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memcpy, memset, memmove
from libc.stdint cimport uint8_t, uint64_t, int32_t, int64_t
from libc.limits cimport INT_MAX

import numpy as np

from cython.parallel cimport prange, threadid

from .._core._csrc cimport fastml_check_index
from .._core._typedefs cimport count_t, index_t
from ._tree_fast cimport TreeBuffer, buffer_init, buffer_add_leaf, buffer_free
from ._grow cimport *  # the growing code both builders share (criteria, Split, Item, nodes)

from ..info import GAIN_TIE
from ._builder_fast import CRITERIA  # the criterion codes, by name (the doctest below)
from ._binning_fast import MAX_BINS, MISSING_BIN, Binned, bin_features, bin_sparse

cdef enum:
    SLOTS = 256          # histogram slots per feature: bins 0..254, then the missing bin
    MISSING = 255        # the bin code of NaN (and of a missing categorical level)
    MISSING_OFF = -1     # Split.cut_next of the missing-vs-present cut (threshold +inf)

if MISSING_BIN != MISSING:  # the binning writes the missing code the builder reads
    raise ImportError("_binning_fast's missing bin differs from the builder's MISSING")

cdef double TIE = GAIN_TIE
# A node with at least this many rows keeps the histograms of all its features for its
# children's subtraction (below it, building a child's histograms from its few rows costs
# less than zeroing and subtracting 256 slots per feature).
cdef Py_ssize_t HIST_MIN_ROWS = 1024
# Nodes with fewer rows build their histograms in one thread.
cdef Py_ssize_t PARALLEL_MIN_ROWS = 4096
# The memory the kept node histograms may take (best-first growth can keep many frontier
# nodes); past it a node searches from its rows, as a small node does.
cdef Py_ssize_t HIST_BUDGET = 256 << 20


# ---------------------------------------------------------------- the builder's state

# Split and Item (a node waiting to be split, with its histograms) are _grow.pxd's.
#
# Histograms come in the two kinds of _grow.pxd's weight_t: a count build (no sample weights)
# keeps per bin the K class counts in int32 (regression: the count and the sum of the targets,
# doubles); a weighted build keeps per bin the K class weights and then the bin's rows, in
# doubles (regression: the weight, the weighted sum of the targets, the rows). The rows bound
# min_samples_leaf, the weights everything else; in a count build the two are the same.

ctypedef struct HB:
    # data
    Py_ssize_t n_rows, d, m_rows  # rows of X, features, rows in the sample (weight > 0)
    count_t m                     # the sample's rows, bootstrap repeats included
    const uint8_t *bins           # dense X: (d, n_rows) codes
    int sparse                    # sparse X: the codes as CSR rows (Binned.indptr ...)
    const int64_t *row_ptr        # (n_rows + 1)
    const int32_t *row_feat       # the entries' columns, ascending within a row
    const uint8_t *row_code       # their codes (never their column's zero bin)
    const uint8_t *zero_bin       # (d) the bin of the rows a column does not list
    const double *lo              # the ends of feature f's bins at bin_start[f] + bin
    const double *hi
    const int64_t *bin_start
    const int *n_bins
    const unsigned char *is_cat
    const int *n_levels
    const int *yc                 # class codes (classification)
    const double *yr              # targets (regression)
    const double *sw              # sample weights (weighted builds), NULL in a count build
    int K, criterion, n_threads
    int S                         # histogram entries per bin (see above)
    double node_ss                # regression: the node's sum of squared deviations
    double node_sum               # regression: its weighted sum of the centred targets
    count_t node_n                # the node being searched: its rows
    double node_w                 # and their weight
    index_t max_depth, min_samples_split, min_samples_leaf, max_leaf_nodes, max_features
    int max_cand                  # the most candidates a node can have (max_features, or the
                                  # columns sparse X lists at all, if fewer)
    Py_ssize_t nnz                # sparse X: entries of the sampled rows
    int n_listed                  # sparse X: the columns any row lists (dense: d)
    double min_weight_leaf        # weighted builds (a count build folds it into min_samples_leaf)
    int node_hists                # keep all features' histograms on large nodes
    Py_ssize_t fstride            # bytes of one feature's histogram
    Py_ssize_t hbytes             # bytes of a node's histograms (d features)
    # the sample in node order (each node's rows are one range), partitioned down the tree
    uint8_t *pbins                # dense X: (d, m_rows) bin codes
    int *prow                     # sparse X: (m_rows) row ids
    int *lab                      # (m_rows) class codes
    int *wgt                      # (m_rows) bootstrap counts (1 each without a bootstrap)
    double *pw                    # (m_rows) weighted builds: count x sample weight
    double *yg                    # (m_rows) targets minus the sample mean (histograms sum them)
    double *yraw                  # (m_rows) targets (node values)
    uint8_t *side                 # (m_rows) child of each position at the split being applied
    uint8_t *tmp_bytes            # dense: (max(n_threads, d), m_rows) the partitions' scratch;
                                  # sparse: (m_rows) the split feature's codes
    char *tmp_wide                # (m_rows * 8) the partitions' scratch: position p owns bytes
                                  # 8p.. whatever the element's size (threads own ranges)
    double *nlogn                 # count builds: nlogn[k] = k log2 k, k = 0..m
    void *node_counts             # (K) weight_t: the node's class counts
    void *left
    void *right
    void *miss
    # one scratch histogram per drawn feature (zero between uses) and its bitmap of bins
    char *cand_hist
    uint64_t *cand_bits
    int *candidates
    Draw draw                     # the node's candidate features in draw order (_grow.pxd)
    Split *found
    int *child_of_level
    int *level_seen
    double *child_w               # (max_levels + 2) weight of each child (of each level first)
    count_t *child_n              # its rows (bootstrap repeats included)
    Py_ssize_t *child_rows        # its positions (rows of the sample)
    char **child_hist              # (max_levels + 2) the histograms each child of a split gets
    Py_ssize_t *offset
    int max_levels
    # the pool of node histograms
    char **all_hists
    char **free_hists
    int n_alloc, n_free, max_alloc
    uint64_t seed                 # the root's draw (its children's are hashes of it)
    # sparse X: a node's view of its features (d each, zero between nodes)
    int32_t *occ_rows             # positions whose row lists the feature
    uint8_t *occ_code             # the first code seen
    uint8_t *occ_mixed            # 1 if another code was seen
    int32_t *slot_of              # the drawn feature's candidate slot, -1 otherwise
    int *occ_list                 # the features listed (occ_rows > 0)
    int *varying                  # those taking two bins at the node
    int64_t *bucket_start         # (candidates + 1) each drawn feature's entries at the node,
    int64_t *bucket_fill          # in bucket_pos / bucket_code (positions and codes)
    int32_t *bucket_pos
    uint8_t *bucket_code


# ---------------------------------------------------------------- a histogram's entries

cdef inline weight_t hget(const char *h, Py_ssize_t i, weight_t tag) noexcept nogil:
    """Entry i of a class histogram: an int32 count, or a double weight."""
    if weight_t is double:
        return (<const double *> h)[i]
    else:
        return (<const int32_t *> h)[i]


cdef inline int bin_entries(int K, weight_t tag) noexcept nogil:
    """A class histogram's entries per bin: K counts, or K weights and the rows."""
    if weight_t is double:
        return K + 1
    else:
        return K


cdef inline count_t class_rows(const char *h, int bin, int K, weight_t tag) noexcept nogil:
    """The rows of a bin of a class histogram (a count build's rows are its weight)."""
    cdef int c
    cdef count_t n = 0
    if weight_t is double:
        return <count_t> (<const double *> h)[bin * (K + 1) + K]
    else:
        for c in range(K):
            n += (<const int32_t *> h)[bin * K + c]
        return n


cdef inline int reg_entries(const HB *b) noexcept nogil:
    """A regression histogram's entries per bin: weight and sum (+ rows, weighted)."""
    return b.S


cdef inline double reg_rows(const HB *b, const double *hr, int bin) noexcept nogil:
    """The rows of a bin of a regression histogram."""
    return hr[bin * b.S + (2 if b.sw != NULL else 0)]


# ---------------------------------------------------------------- a candidate split

cdef inline void consider(Split *best, double cost, int feature, int cut, int cut_next,
                          int missing_left, int n_children) noexcept nogil:
    """Record the candidate, cutting between bins cut and cut_next, if the tie rule takes it
    (_grow.takes: the exact splitter's rule)."""
    if takes(best, cost, feature, missing_left, n_children):
        best.cut = cut
        best.cut_next = cut_next


# ---------------------------------------------------------------- building histograms

cdef void hist_feature(HB *b, int f, Py_ssize_t start, Py_ssize_t end, char *h, uint64_t *bits,
                       weight_t tag) noexcept nogil:
    """Add the node's rows to feature f's histogram h; mark their bins in bits (NULL: no
    bitmap). The loops read only locals: the build has -fno-strict-aliasing, so a store to h
    would otherwise force a reload of every field of b."""
    cdef const uint8_t *col = b.pbins + f * b.m_rows
    cdef const int *lab = b.lab
    cdef const int *wgt = b.wgt
    cdef const double *pw = b.pw
    cdef const double *yg = b.yg
    cdef int32_t *hc = <int32_t *> h
    cdef double *hr = <double *> h
    cdef Py_ssize_t p
    cdef int K = b.K, bin, S = b.S
    if b.criterion == CRIT_SSE:
        if weight_t is double:
            for p in range(start, end):
                bin = col[p]
                hr[S * bin] += pw[p]
                hr[S * bin + 1] += pw[p] * yg[p]
                hr[S * bin + 2] += wgt[p]
        else:
            for p in range(start, end):
                bin = col[p]
                hr[2 * bin] += wgt[p]
                hr[2 * bin + 1] += wgt[p] * yg[p]
        mark_bins(col, start, end, bits)
        return
    if weight_t is double:
        for p in range(start, end):
            fastml_check_index(lab[p], K)
            hr[col[p] * (K + 1) + lab[p]] += pw[p]
            hr[col[p] * (K + 1) + K] += wgt[p]
        mark_bins(col, start, end, bits)
    elif bits == NULL:
        for p in range(start, end):
            fastml_check_index(lab[p], K)
            hc[col[p] * K + lab[p]] += wgt[p]
    else:
        # the bits in the histogram's loop: its read-modify-write chain and the bitmap's
        # overlap (a second loop, as for regression, cost 12% more of the whole W3 fit; one
        # loop with a branch on bits, or with the code in a local, 5-8% more: measured)
        for p in range(start, end):
            fastml_check_index(lab[p], K)
            hc[col[p] * K + lab[p]] += wgt[p]
            bits[col[p] >> 6] |= (<uint64_t> 1) << (col[p] & 63)


cdef inline void mark_bins(const uint8_t *col, Py_ssize_t start, Py_ssize_t end,
                           uint64_t *bits) noexcept nogil:
    """Set the bits of the bins col[start:end] hold (nothing if bits is NULL). An OR into
    memory per row: building the four words in registers with a branch-free select per row
    was 10-15% slower over the whole W3 fit (measured)."""
    cdef Py_ssize_t p
    if bits == NULL:
        return
    for p in range(start, end):
        bits[col[p] >> 6] |= (<uint64_t> 1) << (col[p] & 63)


cdef void hist_all(HB *b, Py_ssize_t start, Py_ssize_t end, char *h, weight_t tag) noexcept nogil:
    """Every feature's histogram of the node's rows into the zeroed node histogram h (features
    in parallel threads on large nodes: each writes its own slice)."""
    cdef int f
    if end - start >= PARALLEL_MIN_ROWS and b.n_threads > 1 and b.d > 1:
        for f in prange(b.d, num_threads=b.n_threads, schedule="static"):
            hist_feature(b, f, start, end, h + f * b.fstride, NULL, tag)
    else:
        for f in range(b.d):
            hist_feature(b, f, start, end, h + f * b.fstride, NULL, tag)


cdef void hist_subtract(HB *b, char *parent, const char *child) noexcept nogil:
    """parent -= child over every feature and slot: the subtraction trick (parent then holds
    the remaining child's histograms)."""
    cdef Py_ssize_t i, n
    cdef int32_t *pc = <int32_t *> parent
    cdef const int32_t *cc = <const int32_t *> child
    cdef double *pr = <double *> parent
    cdef const double *cr = <const double *> child
    if b.criterion == CRIT_SSE or b.sw != NULL:
        n = b.hbytes // sizeof(double)
        for i in range(n):
            pr[i] -= cr[i]
    else:
        n = b.hbytes // sizeof(int32_t)
        for i in range(n):
            pc[i] -= cc[i]


cdef int present_from_hist(HB *b, int f, const char *h, uint8_t *present,
                           weight_t tag) noexcept nogil:
    """The non-empty, non-missing bins of feature f's histogram, ascending; their number."""
    cdef int nb = b.n_bins[f], v, k = 0
    cdef const double *hr = <const double *> h
    if b.criterion == CRIT_SSE:
        for v in range(nb):
            present[k] = <uint8_t> v
            k += reg_rows(b, hr, v) > 0
        return k
    if weight_t is double:
        for v in range(nb):
            present[k] = <uint8_t> v
            k += hr[v * (b.K + 1) + b.K] > 0
        return k
    else:
        if b.K == 2:
            return present_class_k(<const int32_t *> h, nb, present, 2)
        if b.K == 3:
            return present_class_k(<const int32_t *> h, nb, present, 3)
        return present_class_k(<const int32_t *> h, nb, present, b.K)


cdef inline int present_class_k(const int32_t *hc, int nb, uint8_t *present,
                                const int K) noexcept nogil:
    """present_from_hist of a class histogram; K constant in the common copies, and no
    branch per bin (which bins are empty is data)."""
    cdef int v, c, k = 0
    cdef int32_t tot
    for v in range(nb):
        tot = 0
        for c in range(K):
            tot += hc[v * K + c]
        present[k] = <uint8_t> v
        k += tot > 0
    return k


cdef int present_from_bits(const uint64_t *bits, uint8_t *present) noexcept nogil:
    """The set bits below MISSING, ascending (4 words, one count-trailing-zeros per bin)."""
    cdef int w, k = 0
    cdef uint64_t x
    for w in range(4):
        x = bits[w]
        if w == 3:
            x &= ~((<uint64_t> 1) << 63)  # bit 255: the missing bin
        while x:
            present[k] = <uint8_t> (64 * w + __builtin_ctzll(x))
            k += 1
            x &= x - 1
    return k


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef void clear_scratch(HB *b, char *h, uint64_t *bits) noexcept nogil:
    """Zero the slots a scratch histogram used (the bitmap lists them) and the bitmap."""
    cdef int w, bin
    cdef uint64_t x
    for w in range(4):
        x = bits[w]
        while x:
            bin = 64 * w + __builtin_ctzll(x)
            memset(h + bin * (b.fstride // SLOTS), 0, b.fstride // SLOTS)
            x &= x - 1
        bits[w] = 0


# ---------------------------------------------------------------- split finding on histograms

cdef inline int bin_class(const char *h, int bin, int K, weight_t *weight,
                          count_t *rows) noexcept nogil:
    """The class of a bin whose rows are all of one class, -1 if they are mixed; its weight
    and rows. Without branches: which classes a bin holds is data, and mispredicts cost more
    here than the arithmetic."""
    cdef int c, cls = 0, n_nonzero = 0, nz
    cdef weight_t w = 0, x
    cdef int S = bin_entries(K, weight[0])
    for c in range(K):
        x = hget(h, bin * S + c, weight[0])
        nz = x > 0
        n_nonzero += nz
        cls += nz * c
        w += x
    weight[0] = w
    if weight_t is double:
        rows[0] = <count_t> hget(h, bin * S + K, weight[0])
    else:
        rows[0] = w
    return cls if n_nonzero == 1 else -1


cdef inline int has_missing(HB *b, const char *h) noexcept nogil:
    """Whether a feature's histogram h holds missing rows."""
    cdef const int32_t *hc = <const int32_t *> h
    cdef const double *hr = <const double *> h
    cdef int c
    if b.criterion == CRIT_SSE:
        return reg_rows(b, hr, MISSING) > 0
    if b.sw != NULL:
        return hr[MISSING * (b.K + 1) + b.K] > 0
    for c in range(b.K):
        if hc[MISSING * b.K + c] > 0:
            return 1
    return 0


cdef int scan_class(HB *b, int f, const char *h, const uint8_t *present, int n_present,
                    Split *best, weight_t tag) noexcept nogil:
    """Best threshold of real feature f from its class histogram (the exact sweep_class over
    bins instead of runs of equal values), the missing-vs-present cut included. Returns 0 if
    f has nothing to cut here. Two and three classes get copies with K a constant, where the
    compiler unrolls the class loops and keeps the running counts in registers."""
    if b.K == 2:
        return scan_class_k(b, f, h, present, n_present, best, 2, tag)
    if b.K == 3:
        return scan_class_k(b, f, h, present, n_present, best, 3, tag)
    return scan_class_k(b, f, h, present, n_present, best, b.K, tag)


cdef inline int scan_class_k(HB *b, int f, const char *h, const uint8_t *present,
                             int n_present, Split *best, const int K,
                             weight_t tag) noexcept nogil:
    cdef int crit = b.criterion, c, i, g, nxt, g_class, nxt_class
    cdef int S = bin_entries(K, tag)
    cdef weight_t g_w, nxt_w, w_miss = 0, w_all = 0, w_left = 0, w_right
    cdef count_t g_n, nxt_n, n_miss, n_all, n_left = 0, n_right, leaf = b.min_samples_leaf
    cdef double wleaf = b.min_weight_leaf
    cdef const double *nlogn = b.nlogn
    cdef double cost
    cdef weight_t left_k[3]
    cdef weight_t right_k[3]
    cdef weight_t miss_k[3]
    cdef weight_t *left = &left_k[0] if K <= 3 else <weight_t *> b.left
    cdef weight_t *right = &right_k[0] if K <= 3 else <weight_t *> b.right
    cdef weight_t *miss = &miss_k[0] if K <= 3 else <weight_t *> b.miss
    cdef const weight_t *node_counts = <const weight_t *> b.node_counts
    if n_present < 1:
        return 0
    for c in range(K):
        miss[c] = hget(h, MISSING * S + c, tag)
        w_miss += miss[c]
        left[c] = 0
        right[c] = node_counts[c] - miss[c]
        w_all += right[c]
    if weight_t is double:
        n_miss = <count_t> hget(h, MISSING * S + K, tag)
        n_all = b.node_n - n_miss
    else:
        n_miss = w_miss
        n_all = w_all
    if n_present < 2 and n_miss == 0:
        return 0
    g = present[0]
    g_class = bin_class(h, g, K, &g_w, &g_n)
    for i in range(n_present):
        for c in range(K):
            left[c] += hget(h, g * S + c, tag)
            right[c] -= hget(h, g * S + c, tag)
        n_left += g_n
        w_left += g_w
        if i == n_present - 1:      # missing vs present (the exact cut_missing_off_class)
            if n_miss > 0 and allowed(n_all, w_all, leaf, wleaf) and \
                    allowed(n_miss, w_miss, leaf, wleaf):
                cost = counts_term(crit, K, nlogn, left, w_all) + \
                    counts_term(crit, K, nlogn, miss, w_miss)
                consider(best, cost, f, g, MISSING_OFF, 0, 2)
            break
        nxt = present[i + 1]
        nxt_class = bin_class(h, nxt, K, &nxt_w, &nxt_n)
        n_right = n_all - n_left
        w_right = w_all - w_left
        # 001: only cuts between different class mixes matter (the exact sweep's filter,
        # with its guard for the cuts min_samples_leaf forbids)
        if (g_class < 0 or g_class != nxt_class or
                not allowed(n_left - g_n, w_left - g_w, leaf + n_miss, wleaf + w_miss) or
                not allowed(n_right - nxt_n, w_right - nxt_w, leaf + n_miss, wleaf + w_miss)):
            if n_miss == 0:
                if allowed(n_left, w_left, leaf, wleaf) and allowed(n_right, w_right, leaf,
                                                                    wleaf):
                    cost = counts_term(crit, K, nlogn, left, w_left) + \
                        counts_term(crit, K, nlogn, right, w_right)
                    consider(best, cost, f, g, nxt, 0, 2)
            else:
                if allowed(n_left, w_left, leaf, wleaf) and \
                        allowed(n_right + n_miss, w_right + w_miss, leaf, wleaf):
                    cost = counts_term(crit, K, nlogn, left, w_left) + \
                        counts_term2(crit, K, nlogn, right, miss, w_right + w_miss)
                    consider(best, cost, f, g, nxt, 0, 2)
                if allowed(n_left + n_miss, w_left + w_miss, leaf, wleaf) and \
                        allowed(n_right, w_right, leaf, wleaf):
                    cost = counts_term2(crit, K, nlogn, left, miss, w_left + w_miss) + \
                        counts_term(crit, K, nlogn, right, w_right)
                    consider(best, cost, f, g, nxt, 1, 2)
        g = nxt
        g_class = nxt_class
        g_w = nxt_w
        g_n = nxt_n
    return 1


cdef int scan_sse(HB *b, int f, const char *h, const uint8_t *present, int n_present,
                  double mean, Split *best, weight_t tag) noexcept nogil:
    """Best threshold of real feature f for regression (the exact sweep_sse over bins). The
    histograms sum targets centred on the sample mean; sums here are re-centred on the node
    mean, as the exact sweep's are. w_* are weights, n_* rows (the same in a count build)."""
    cdef const double *hr = <const double *> h
    cdef int i, g, nxt, S = b.S
    cdef double w_miss = hr[S * MISSING], s_miss = hr[S * MISSING + 1] - w_miss * mean
    cdef double w_all = 0.0, s_all = 0.0, w_left = 0.0, s_left = 0.0, w_right, s_right
    cdef double n_miss = reg_rows(b, hr, MISSING), n_all = 0.0, n_left = 0.0, n_right
    cdef double cost, leaf = b.min_samples_leaf, wleaf = b.min_weight_leaf
    if n_present < 1 or (n_present < 2 and n_miss == 0):
        return 0
    for i in range(n_present):
        w_all += hr[S * present[i]]
        s_all += hr[S * present[i] + 1]
        if weight_t is double:
            n_all += hr[S * present[i] + 2]
    if weight_t is not double:
        n_all = w_all
    s_all -= w_all * mean
    for i in range(n_present - 1):
        g = present[i]
        nxt = present[i + 1]
        w_left += hr[S * g]
        s_left += hr[S * g + 1]
        if weight_t is double:
            n_left += hr[S * g + 2]
        else:
            n_left = w_left
        w_right = w_all - w_left
        n_right = n_all - n_left
        s_right = s_all - (s_left - w_left * mean)
        if allowed(<count_t> n_left, w_left, <count_t> leaf, wleaf) and \
                allowed(<count_t> (n_right + n_miss), w_right + w_miss, <count_t> leaf, wleaf):
            cost = sse_term(s_left - w_left * mean, w_left) + \
                sse_term(s_right + s_miss, w_right + w_miss)
            consider(best, cost, f, g, nxt, 0, 2)
        if n_miss > 0 and allowed(<count_t> (n_left + n_miss), w_left + w_miss, <count_t> leaf,
                                  wleaf) and \
                allowed(<count_t> n_right, w_right, <count_t> leaf, wleaf):
            cost = sse_term(s_left - w_left * mean + s_miss, w_left + w_miss) + \
                sse_term(s_right, w_right)
            consider(best, cost, f, g, nxt, 1, 2)
    if n_miss > 0 and allowed(<count_t> n_all, w_all, <count_t> leaf, wleaf) and \
            allowed(<count_t> n_miss, w_miss, <count_t> leaf, wleaf):   # missing vs present
        consider(best, sse_term(s_all, w_all) + sse_term(s_miss, w_miss), f,
                 present[n_present - 1], MISSING_OFF, 0, 2)
    return 1


cdef int scan_categorical(HB *b, int f, const char *h, const uint8_t *present, int n_present,
                          double mean, Split *best, weight_t tag) noexcept nogil:
    """The multiway split of categorical feature f (the exact sweep_categorical on the level
    histogram): one child per level present; the missing rows join the first largest one (by
    weight)."""
    cdef const double *hr = <const double *> h
    cdef int K = b.K, c, i, v, big = -1, S
    cdef double most = 0.0, w, n_miss = 0.0, w_miss = 0.0, s_miss = 0.0, cost = 0.0
    cdef double n_child, w_child
    cdef weight_t *left = <weight_t *> b.left
    cdef weight_t *miss = <weight_t *> b.miss
    cdef weight_t w_class
    if n_present < 2:
        return 0
    S = b.S if b.criterion == CRIT_SSE else bin_entries(K, tag)
    for i in range(n_present):
        v = present[i]
        if b.criterion == CRIT_SSE:
            w = hr[S * v]
        else:
            w = 0.0
            for c in range(K):
                w += hget(h, v * S + c, tag)
        if w > most:
            most = w
            big = v
    if b.criterion == CRIT_SSE:
        w_miss = hr[S * MISSING]
        n_miss = reg_rows(b, hr, MISSING)
        s_miss = hr[S * MISSING + 1] - w_miss * mean
    else:
        w_class = 0
        for c in range(K):
            miss[c] = hget(h, MISSING * S + c, tag)
            w_class += miss[c]
        w_miss = w_class
        n_miss = class_rows(h, MISSING, K, tag)
    for i in range(n_present):
        v = present[i]
        if b.criterion == CRIT_SSE:
            n_child = reg_rows(b, hr, v) + (n_miss if v == big else 0.0)
            w_child = hr[S * v] + (w_miss if v == big else 0.0)
            if not allowed(<count_t> n_child, w_child, b.min_samples_leaf, b.min_weight_leaf):
                return 1
            cost += sse_term(hr[S * v + 1] - hr[S * v] * mean + (s_miss if v == big else 0.0),
                             w_child)
        else:
            w_class = 0
            for c in range(K):
                left[c] = hget(h, v * S + c, tag)
                w_class += left[c]
            n_child = class_rows(h, v, K, tag)
            if v == big:
                n_child += n_miss
                w_class += <weight_t> w_miss
            if not allowed(<count_t> n_child, w_class, b.min_samples_leaf, b.min_weight_leaf):
                return 1
            if v == big:
                cost += counts_term2(b.criterion, K, b.nlogn, left, miss, w_class)
            else:
                cost += counts_term(b.criterion, K, b.nlogn, left, w_class)
    consider(best, cost, f, -1, -1, 0, n_present)
    return 1


cdef inline int scan(HB *b, int f, const char *h, const uint8_t *present, int n_present,
                     double mean, Split *best, weight_t tag) noexcept nogil:
    if b.is_cat[f]:
        return scan_categorical(b, f, h, present, n_present, mean, best, tag)
    if b.criterion == CRIT_SSE:
        return scan_sse(b, f, h, present, n_present, mean, best, tag)
    return scan_class(b, f, h, present, n_present, best, tag)


cdef void find_split(HB *b, Item *item, double mean, weight_t tag) noexcept nogil:
    """The best split over (a random draw of max_features of) the features, by the exact
    splitter's rule and with the same draws: candidates are the first max_features features
    (draw order) that take two values here; each one's smallest cost, then the first feature
    within the tie tolerance of the least is searched again for its first such candidate.
    From the node's histograms if it has them, else from scratch histograms of its rows."""
    cdef int i, f, n_cand, pick, k
    cdef double limit
    cdef uint8_t present[SLOTS]
    cdef char *h
    if b.sparse:
        n_cand = sparse_candidates(b, item, mean, tag)
    else:
        n_cand = dense_candidates(b, item, mean, tag)
    pick = first_within(b.found, n_cand, cost_tie(b.criterion, TIE, item.w, b.node_ss), &limit)
    clear_split(&item.split, limit, 1)
    if pick >= 0:
        f = b.candidates[pick]
        if b.sparse:    # its histogram again, from its entries
            h = sparse_histogram(b, item, pick, present, &k, tag)
        elif item.hist != NULL:
            h = item.hist + f * b.fstride
            k = present_from_hist(b, f, h, present, tag)
        else:
            h = b.cand_hist + pick * b.fstride
            k = present_from_bits(b.cand_bits + 4 * pick, present)
        scan(b, f, h, present, k, mean, &item.split, tag)
        if b.sparse:
            clear_scratch(b, h, b.cand_bits)
        # the threshold once, for the chosen cut: 000's midpoint between the two bins' ends
        if b.is_cat[f]:
            item.split.threshold = NAN
        elif item.split.cut_next == MISSING_OFF:      # missing vs present
            item.split.threshold = INFINITY
        else:
            item.split.threshold = split_point(b.hi[b.bin_start[f] + item.split.cut],
                                               b.lo[b.bin_start[f] + item.split.cut_next])
    for i in range(n_cand):
        if b.sparse:
            b.slot_of[b.candidates[i]] = -1
        elif item.hist == NULL:
            clear_scratch(b, b.cand_hist + i * b.fstride, b.cand_bits + 4 * i)


cdef int dense_candidates(HB *b, Item *item, double mean, weight_t tag) noexcept nogil:
    """find_split's candidates on dense codes: features in draw order, each one's histogram
    (the node's, or a scratch one built from its rows) telling whether it varies here; the
    first max_features that do are scanned into found. Returns their number."""
    cdef int f, n_cand = 0, k, cuttable
    cdef uint8_t present[SLOTS]
    cdef char *h
    cdef uint64_t *bits = NULL
    draw_begin(&b.draw, NULL, b.d, b.d, b.max_features, item.seed)
    while n_cand < b.max_features:
        f = draw_next(&b.draw, NULL)
        if f < 0:
            break
        if item.hist != NULL:
            h = item.hist + f * b.fstride
            k = present_from_hist(b, f, h, present, tag)
        else:
            h = b.cand_hist + n_cand * b.fstride
            bits = b.cand_bits + 4 * n_cand
            hist_feature(b, f, item.start, item.end, h, bits, tag)
            k = present_from_bits(bits, present)
        cuttable = k >= 2 or (k == 1 and not b.is_cat[f] and has_missing(b, h))
        if not cuttable and item.hist == NULL:
            clear_scratch(b, h, bits)
        if cuttable:  # constant features (without missing rows) do not count
            b.candidates[n_cand] = f
            clear_split(&b.found[n_cand], INFINITY, 0)
            scan(b, f, node_hist(b, item, n_cand, f), present, k, mean, &b.found[n_cand], tag)
            n_cand += 1
    return n_cand


cdef int sparse_candidates(HB *b, Item *item, double mean, weight_t tag) noexcept nogil:
    """find_split's candidates on sparse codes: one pass over the node's entries finds the
    features that take two bins here (a listed code differs from another, or from the zero
    bin of the rows not listing it), the keyed draw orders just those, and the entries of the
    first max_features are sorted into a bucket per candidate (a counting sort, two passes);
    then each candidate's histogram is built in the one scratch histogram, zero bin included
    (sparse_histogram), scanned into found and cleared. The same candidates, in the same
    order, as dense_candidates on the dense codes. Returns their number."""
    cdef Py_ssize_t p, n_pos = item.end - item.start
    cdef int64_t e, at
    cdef int i, f, r, slot, n_occ = 0, n_var = 0, n_cand = 0, k
    cdef uint8_t present[SLOTS]
    cdef char *h
    for p in range(item.start, item.end):
        r = b.prow[p]
        for e in range(b.row_ptr[r], b.row_ptr[r + 1]):
            f = b.row_feat[e]
            if b.occ_rows[f] == 0:
                b.occ_list[n_occ] = f
                n_occ += 1
                b.occ_code[f] = b.row_code[e]
            elif b.row_code[e] != b.occ_code[f]:
                b.occ_mixed[f] = 1
            b.occ_rows[f] += 1
    for i in range(n_occ):
        f = b.occ_list[i]
        if b.occ_mixed[f] or b.occ_rows[f] < n_pos:
            b.varying[n_var] = f
            n_var += 1
    if b.max_features >= b.d:     # every feature, in index order (the dense node's order)
        qsort(b.varying, n_var, sizeof(int), by_index)
    draw_begin(&b.draw, b.varying, n_var, b.d, b.max_features, item.seed)
    while n_cand < b.max_features:
        f = draw_next(&b.draw, b.varying)
        if f < 0:
            break
        b.candidates[n_cand] = f
        b.slot_of[f] = n_cand
        b.bucket_start[n_cand + 1] = b.occ_rows[f]     # its entries at the node
        n_cand += 1
    b.bucket_start[0] = 0
    for i in range(n_cand):
        b.bucket_start[i + 1] += b.bucket_start[i]
        b.bucket_fill[i] = b.bucket_start[i]
    for p in range(item.start, item.end):
        r = b.prow[p]
        for e in range(b.row_ptr[r], b.row_ptr[r + 1]):
            slot = b.slot_of[b.row_feat[e]]
            if slot >= 0:
                at = b.bucket_fill[slot]
                b.bucket_pos[at] = <int32_t> p
                b.bucket_code[at] = b.row_code[e]
                b.bucket_fill[slot] = at + 1
    for i in range(n_cand):
        h = sparse_histogram(b, item, i, present, &k, tag)
        clear_split(&b.found[i], INFINITY, 0)
        scan(b, b.candidates[i], h, present, k, mean, &b.found[i], tag)
        clear_scratch(b, h, b.cand_bits)
    for i in range(n_occ):
        f = b.occ_list[i]
        b.occ_rows[f] = 0
        b.occ_mixed[f] = 0
    return n_cand


cdef char *sparse_histogram(HB *b, Item *item, int i, uint8_t *present, int *k,
                            weight_t tag) noexcept nogil:
    """Candidate i's histogram at the node in the scratch histogram (clear it after use):
    its bucket's entries, then its zero bin (the rows not listing it) as the node's totals
    minus the other bins. present, k: its non-empty bins."""
    cdef char *h = b.cand_hist
    cdef int f = b.candidates[i]
    cdef int64_t e
    cdef int code
    for e in range(b.bucket_start[i], b.bucket_start[i + 1]):
        code = b.bucket_code[e]
        hist_add(b, h, code, b.bucket_pos[e], tag)
        b.cand_bits[code >> 6] |= (<uint64_t> 1) << (code & 63)
    if b.bucket_start[i + 1] - b.bucket_start[i] < item.end - item.start:
        fill_zero_bin(b, h, b.cand_bits, b.zero_bin[f], tag)
    k[0] = present_from_bits(b.cand_bits, present)
    return h


cdef int by_index(const void *a, const void *b) noexcept nogil:
    return (<const int *> a)[0] - (<const int *> b)[0]


cdef inline void hist_add(HB *b, char *h, int bin, Py_ssize_t p, weight_t tag) noexcept nogil:
    """Add sample position p to bin `bin` of a histogram (hist_feature's step, one row)."""
    cdef int32_t *hc = <int32_t *> h
    cdef double *hr = <double *> h
    cdef int K = b.K, S = b.S
    if b.criterion == CRIT_SSE:
        if weight_t is double:
            hr[S * bin] += b.pw[p]
            hr[S * bin + 1] += b.pw[p] * b.yg[p]
            hr[S * bin + 2] += b.wgt[p]
        else:
            hr[2 * bin] += b.wgt[p]
            hr[2 * bin + 1] += b.wgt[p] * b.yg[p]
    elif weight_t is double:
        hr[bin * (K + 1) + b.lab[p]] += b.pw[p]
        hr[bin * (K + 1) + K] += b.wgt[p]
    else:
        hc[bin * K + b.lab[p]] += b.wgt[p]


cdef void fill_zero_bin(HB *b, char *h, uint64_t *bits, int zero, weight_t tag) noexcept nogil:
    """Sparse X: bin `zero` of a feature's histogram (the rows not listing the feature) as the
    node's totals minus the feature's other bins (those bits lists), then its bit."""
    cdef int c, w, bin, K = b.K, S = b.S
    cdef uint64_t x
    cdef double *hr = <double *> h
    cdef int32_t *hc = <int32_t *> h
    cdef const weight_t *counts = <const weight_t *> b.node_counts
    if b.criterion == CRIT_SSE:
        hr[S * zero] = b.node_w
        hr[S * zero + 1] = b.node_sum
        if weight_t is double:
            hr[S * zero + 2] = b.node_n
    elif weight_t is double:
        for c in range(K):
            hr[zero * (K + 1) + c] = counts[c]
        hr[zero * (K + 1) + K] = b.node_n
    else:
        for c in range(K):
            hc[zero * K + c] = <int32_t> counts[c]
    for w in range(4):
        x = bits[w]
        while x:
            bin = 64 * w + __builtin_ctzll(x)
            x &= x - 1
            if b.criterion == CRIT_SSE:
                for c in range(S):
                    hr[S * zero + c] -= hr[S * bin + c]
            elif weight_t is double:
                for c in range(K + 1):
                    hr[zero * (K + 1) + c] -= hr[bin * (K + 1) + c]
            else:
                for c in range(K):
                    hc[zero * K + c] -= hc[bin * K + c]
    bits[zero >> 6] |= (<uint64_t> 1) << (zero & 63)


cdef inline char *node_hist(HB *b, Item *item, int slot, int f) noexcept nogil:
    """Feature f's histogram at the node: its own, or candidate slot's scratch."""
    if item.hist != NULL:
        return item.hist + f * b.fstride
    return b.cand_hist + slot * b.fstride


# ---------------------------------------------------------------- the histogram pool

cdef char *hist_acquire(HB *b) noexcept nogil:
    """A zeroed node histogram, or NULL when the budget (or memory) is spent."""
    cdef char *h
    if b.n_free > 0:
        b.n_free -= 1
        h = b.free_hists[b.n_free]
    elif b.n_alloc < b.max_alloc:
        h = <char *> malloc(b.hbytes)
        if h == NULL:
            return NULL
        b.all_hists[b.n_alloc] = h
        b.n_alloc += 1
    else:
        return NULL
    memset(h, 0, b.hbytes)
    return h


cdef inline void hist_release(HB *b, char *h) noexcept nogil:
    if h != NULL:
        b.free_hists[b.n_free] = h
        b.n_free += 1


# ---------------------------------------------------------------- nodes

cdef int node_stats(HB *b, TreeBuffer *t, index_t node, Py_ssize_t start, Py_ssize_t end,
                    double *parent_term, double *mean, weight_t tag) noexcept nogil:
    """Fill the node's value and impurity from its rows (as the exact builder does, weights
    for repeats) and set b.node_w; mean = the node mean of the centred targets. Returns 1 for
    a pure node."""
    cdef Py_ssize_t p
    cdef int c, pure = 1
    cdef double s = 0.0, sc = 0.0, ss = 0.0, dv, first, w, w_node = 0.0
    cdef double *value = t.value + <Py_ssize_t> node * t.n_values
    cdef weight_t *counts = <weight_t *> b.node_counts
    cdef weight_t w_class = 0
    if b.criterion == CRIT_SSE:
        first = b.yraw[start]
        for p in range(start, end):
            w = b.pw[p] if weight_t is double else b.wgt[p]
            s += w * b.yraw[p]
            sc += w * b.yg[p]
            w_node += w
            if b.yraw[p] != first:
                pure = 0
        value[0] = s / w_node
        for p in range(start, end):
            dv = b.yraw[p] - value[0]
            ss += (b.pw[p] if weight_t is double else b.wgt[p]) * dv * dv
        t.nodes[node].impurity = ss / w_node
        b.node_ss = ss
        b.node_w = w_node
        b.node_sum = sc
        mean[0] = sc / w_node
        parent_term[0] = 0.0
        return pure
    for c in range(b.K):
        counts[c] = 0
    for p in range(start, end):
        fastml_check_index(b.lab[p], b.K)
        if weight_t is double:
            counts[b.lab[p]] += b.pw[p]
        else:
            counts[b.lab[p]] += b.wgt[p]
    for c in range(b.K):
        w_class += counts[c]
    b.node_w = w_class
    mean[0] = 0.0
    return class_value(t, node, b.criterion, b.K, b.nlogn, counts, w_class, parent_term)


cdef int make_node(HB *b, TreeBuffer *t, Item *item, Py_ssize_t start, Py_ssize_t end,
                   count_t n, index_t depth, char *hist, weight_t tag) noexcept nogil:
    """Create the node for rows [start, end) (n rows, bootstrap repeats included); return 1
    if it should be split (item filled, item.hist = hist), 0 if it is a leaf, -1 when memory
    runs out."""
    cdef double parent_term, mean
    cdef int pure
    item.hist = hist
    if open_node(t, item, start, end, n, n, depth) < 0:
        return -1
    pure = node_stats(b, t, item.node, start, end, &parent_term, &mean, tag)
    set_weight(t, item, b.node_w)
    b.node_n = n
    if base_case(pure, depth, n, b.node_w, b.max_depth, b.min_samples_split,
                 b.min_samples_leaf, b.min_weight_leaf):
        return 0
    find_split(b, item, mean, tag)
    return set_gain(item, parent_term)


cdef inline double position_weight(HB *b, Py_ssize_t p, weight_t tag) noexcept nogil:
    """The weight of sample position p: its count, or count x sample weight."""
    if weight_t is double:
        return b.pw[p]
    else:
        return b.wgt[p]


cdef const uint8_t *split_column(HB *b, Item *item) noexcept nogil:
    """The codes of the split's feature at the node's positions (index them by position):
    dense, its node-ordered column; sparse, looked up in each row's entries into tmp_bytes."""
    cdef int f = item.split.feature, r
    cdef Py_ssize_t p
    cdef int64_t lo, hi, mid
    if not b.sparse:
        return b.pbins + f * b.m_rows
    for p in range(item.start, item.end):
        r = b.prow[p]
        lo = b.row_ptr[r]
        hi = b.row_ptr[r + 1]
        while lo < hi:      # the row's entries are in column order
            mid = (lo + hi) >> 1
            if b.row_feat[mid] < f:
                lo = mid + 1
            else:
                hi = mid
        b.tmp_bytes[p] = b.row_code[lo] if lo < b.row_ptr[r + 1] and b.row_feat[lo] == f \
            else b.zero_bin[f]
    return b.tmp_bytes


cdef int assign_sides(HB *b, Item *item, weight_t tag) noexcept nogil:
    """side[p] = the child of each of the node's positions, child_rows / child_n / child_w =
    each child's positions, rows and weight, and the level -> child map, as the exact
    builder's assign_sides decides them. Returns the number of children k."""
    cdef int f = item.split.feature, L, v, k = 0, big = 0, miss_side
    cdef const uint8_t *col = split_column(b, item)
    cdef Py_ssize_t p, n_miss_rows = 0
    cdef count_t n_miss = 0
    cdef double w_miss = 0.0
    cdef double *lw = b.child_w         # first per level (weight), then per child
    cdef count_t *ln = b.child_n
    cdef uint8_t cut = <uint8_t> item.split.cut
    if not b.is_cat[f]:
        b.child_w[0] = b.child_w[1] = 0.0
        b.child_n[0] = b.child_n[1] = 0
        b.child_rows[0] = b.child_rows[1] = 0
        for p in range(item.start, item.end):
            v = col[p]
            if v == MISSING:
                w_miss += position_weight(b, p, tag)
                n_miss += b.wgt[p]
                n_miss_rows += 1
            else:
                b.side[p] = v > cut
                b.child_w[v > cut] += position_weight(b, p, tag)
                b.child_n[v > cut] += b.wgt[p]
                b.child_rows[v > cut] += 1
        miss_side = missing_side(n_miss_rows > 0, item.split.missing_left, b.child_w[0],
                                 b.child_w[1])
        b.child_w[miss_side] += w_miss
        b.child_n[miss_side] += n_miss
        b.child_rows[miss_side] += n_miss_rows
        b.child_of_level[0] = miss_side
        if n_miss_rows > 0:
            for p in range(item.start, item.end):
                if col[p] == MISSING:
                    b.side[p] = <uint8_t> miss_side
        return 2
    L = b.n_levels[f]
    for v in range(L + 1):
        lw[v] = 0.0
        ln[v] = 0
        b.child_rows[v] = 0
    for p in range(item.start, item.end):  # per level weight, rows and positions (missing: L)
        v = col[p]
        if v == MISSING:
            v = L
        lw[v] += position_weight(b, p, tag)
        ln[v] += b.wgt[p]
        b.child_rows[v] += 1
    for v in range(L):  # the first largest level: the majority path
        if lw[v] > lw[big]:
            big = v
    for v in range(L):
        b.level_seen[v] = b.child_rows[v] > 0
        b.child_of_level[v] = -1
        if b.child_rows[v] > 0:
            b.child_of_level[v] = k
            lw[k] = lw[v]           # k <= v: compacting in place is safe
            ln[k] = ln[v]
            b.child_rows[k] = b.child_rows[v]
            k += 1
    miss_side = b.child_of_level[big]
    # lw[L], ln[L] and child_rows[L] (the missing rows) survive the compaction: k <= L
    lw[miss_side] += lw[L]
    ln[miss_side] += ln[L]
    b.child_rows[miss_side] += b.child_rows[L]
    for v in range(L):  # unseen at this node -> the majority path
        if b.child_of_level[v] < 0:
            b.child_of_level[v] = miss_side
    b.child_of_level[L] = miss_side
    b.child_of_level[MISSING] = miss_side
    for p in range(item.start, item.end):
        fastml_check_index(b.child_of_level[col[p]], k)
        b.side[p] = <uint8_t> b.child_of_level[col[p]]
    return k


cdef void scatter(const uint8_t *side, Py_ssize_t n, int k, const Py_ssize_t *child_rows,
                  char *a, char *tmp, Py_ssize_t size) noexcept nogil:
    """Stable counting scatter of a[0:n] (elements of `size` bytes) by side: the children's
    elements end up in child order, each in its original order."""
    cdef Py_ssize_t offset[SLOTS + 1]
    cdef Py_ssize_t p, o
    cdef int c
    if k == 2:
        scatter2(side, n, child_rows[0], a, tmp, size)
        return
    offset[0] = 0
    for c in range(1, k):
        offset[c] = offset[c - 1] + child_rows[c - 1]
    if size == 1:
        for p in range(n):
            o = offset[side[p]]
            fastml_check_index(o, n)
            tmp[o] = a[p]
            offset[side[p]] = o + 1
    elif size == 4:
        for p in range(n):
            o = offset[side[p]]
            fastml_check_index(o, n)
            (<int32_t *> tmp)[o] = (<int32_t *> a)[p]
            offset[side[p]] = o + 1
    else:
        for p in range(n):
            o = offset[side[p]]
            fastml_check_index(o, n)
            (<double *> tmp)[o] = (<double *> a)[p]
            offset[side[p]] = o + 1
    memcpy(a, tmp, n * size)


cdef void scatter2(const uint8_t *side, Py_ssize_t n, Py_ssize_t n_left, char *a, char *tmp,
                   Py_ssize_t size) noexcept nogil:
    """scatter's two-child case with both write positions in registers (an offsets array in
    memory chains every element through a store and a load)."""
    cdef Py_ssize_t p, l = 0, r = n_left, o
    if size == 1:
        for p in range(n):
            o = r if side[p] else l
            tmp[o] = a[p]
            r += side[p]
            l += 1 - side[p]
    elif size == 4:
        for p in range(n):
            o = r if side[p] else l
            (<int32_t *> tmp)[o] = (<int32_t *> a)[p]
            r += side[p]
            l += 1 - side[p]
    else:
        for p in range(n):
            o = r if side[p] else l
            (<double *> tmp)[o] = (<double *> a)[p]
            r += side[p]
            l += 1 - side[p]
    memcpy(a, tmp, n * size)


cdef void scatter2_columns(const uint8_t *side, Py_ssize_t n, Py_ssize_t n_left, uint8_t *a,
                           Py_ssize_t stride, int d, uint8_t *tmp) noexcept nogil:
    """scatter2 of the d byte columns a + f * stride (each with its scratch tmp + f * stride)
    in one pass: a row's destination is computed once for all its columns, where a pass per
    column computes it d times."""
    cdef Py_ssize_t p, l = 0, r = n_left, o
    cdef int f
    cdef uint8_t right
    for p in range(n):
        right = side[p]
        o = r if right else l
        for f in range(d):
            tmp[f * stride + o] = a[f * stride + p]
        r += right
        l += 1 - right
    for f in range(d):
        memcpy(a + f * stride, tmp + f * stride, n)


cdef void partition(HB *b, Item *item, int k) noexcept nogil:
    """Every node-ordered array partitioned by side (the features' columns in parallel
    threads on large nodes, each with its own scratch row of tmp_bytes)."""
    cdef Py_ssize_t s = item.start, n = item.end - item.start
    cdef int f
    cdef const uint8_t *side = b.side + s
    if b.sparse:
        scatter(side, n, k, b.child_rows, <char *> (b.prow + s), b.tmp_wide + 8 * s, 4)
    elif n >= PARALLEL_MIN_ROWS and b.n_threads > 1 and b.d > 1:
        for f in prange(b.d, num_threads=b.n_threads, schedule="static"):
            scatter(side, n, k, b.child_rows, <char *> (b.pbins + f * b.m_rows + s),
                    <char *> (b.tmp_bytes + threadid() * b.m_rows + s), 1)
    elif k == 2:
        scatter2_columns(side, n, b.child_rows[0], b.pbins + s, b.m_rows, b.d,
                         b.tmp_bytes + s)
    else:
        for f in range(b.d):
            scatter(side, n, k, b.child_rows, <char *> (b.pbins + f * b.m_rows + s),
                    <char *> (b.tmp_bytes + s), 1)
    scatter(side, n, k, b.child_rows, <char *> (b.wgt + s), b.tmp_wide + 8 * s, 4)
    if b.sw != NULL:
        scatter(side, n, k, b.child_rows, <char *> (b.pw + s), b.tmp_wide + 8 * s, 8)
    if b.criterion == CRIT_SSE:
        scatter(side, n, k, b.child_rows, <char *> (b.yg + s), b.tmp_wide + 8 * s, 8)
        scatter(side, n, k, b.child_rows, <char *> (b.yraw + s), b.tmp_wide + 8 * s, 8)
    else:
        scatter(side, n, k, b.child_rows, <char *> (b.lab + s), b.tmp_wide + 8 * s, 4)


cdef int child_hists(HB *b, Item *item, int k, char **hists, weight_t tag) noexcept nogil:
    """The children's histograms when the node has its own: each child but the one of most
    rows is built from its rows, and that one is the parent's minus theirs (the parent's
    buffer becomes its). Without node histograms (or memory for them), every child gets NULL
    and searches from its rows. Returns 0."""
    cdef int c, big = 0, ok = 1
    cdef Py_ssize_t lo = item.start
    for c in range(k):
        hists[c] = NULL
        if b.child_rows[c] > b.child_rows[big]:
            big = c
    if item.hist == NULL:
        return 0
    for c in range(k):
        if c != big and ok:
            hists[c] = hist_acquire(b)
            if hists[c] == NULL:
                ok = 0
            else:
                hist_all(b, lo, lo + b.child_rows[c], hists[c], tag)
        lo += b.child_rows[c]
    if not ok:  # out of budget: nobody keeps a histogram
        for c in range(k):
            hist_release(b, hists[c])
            hists[c] = NULL
        hist_release(b, item.hist)
        item.hist = NULL
        return 0
    for c in range(k):
        if c != big:
            hist_subtract(b, item.hist, hists[c])
    hists[big] = item.hist
    item.hist = NULL
    return 0


cdef int make_child(void *builder, TreeBuffer *t, const Item *parent, int c, Py_ssize_t *lo,
                    Item *child, weight_t tag) noexcept nogil:
    """Child c of the split being applied, its rows starting at lo (_grow.add_children's
    child_fn), with the histograms child_hists gave it if it will be split and is large
    enough to hand them down; a leaf or a small child gives them back."""
    cdef HB *b = <HB *> builder
    cdef Py_ssize_t start = lo[0]
    cdef int r
    lo[0] += b.child_rows[c]
    r = make_node(b, t, child, start, lo[0], b.child_n[c], parent.depth + 1, b.child_hist[c],
                  tag)
    b.child_hist[c] = NULL
    if r != 1 or not b.node_hists or b.child_rows[c] < HIST_MIN_ROWS:
        hist_release(b, child.hist)
        child.hist = NULL
    return r


cdef int split_node(void *builder, TreeBuffer *t, Item *item, Frontier *fr,
                    weight_t tag) noexcept nogil:
    """Turn item's node into an internal node: partition its rows by child, give the
    children their histograms, then create them (_grow.grow_frontier's split_fn). Returns
    the number of children, or -1 when memory runs out."""
    cdef HB *b = <HB *> builder
    cdef int f = item.split.feature
    cdef int k = assign_sides(b, item, tag)
    partition(b, item, k)
    child_hists(b, item, k, b.child_hist, tag)
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


cdef void drop_hist(void *builder, Item *item) noexcept nogil:
    """A node left a leaf by the leaf budget gives its histograms back to the pool."""
    hist_release(<HB *> builder, item.hist)


cdef int grow(HB *b, TreeBuffer *t, weight_t tag) noexcept nogil:
    """Depth-first growth (best-first by gain with max_leaf_nodes): _grow.grow_frontier from
    the root, the exact builder's order, so nodes get the same ids and the feature draws come
    in the same sequence. A large root builds the histograms of all its features first."""
    cdef char *root_hist = NULL
    cdef Item root
    cdef int status
    if b.node_hists and b.m_rows >= HIST_MIN_ROWS:
        root_hist = hist_acquire(b)
        if root_hist != NULL:
            hist_all(b, 0, b.m_rows, root_hist, tag)
    root.split.feature = -1
    root.seed = b.seed
    status = make_node(b, t, &root, 0, b.m_rows, b.m, 0, root_hist, tag)
    if b.n_threads > 1 and b.max_leaf_nodes == 0 and status == 1 and \
            b.m_rows >= 2 * task_rows(b) and \
            (not b.node_hists or 4 * 8 * b.n_threads * b.hbytes <= HIST_BUDGET):
        return grow_in_threads(b, t, &root, tag)
    return grow_frontier(b, t, &root, status, b.max_leaf_nodes,
                         cost_tie(b.criterion, TIE, 1.0, b.node_ss),
                         split_node_weighted if weight_t is double else split_node_counted,
                         drop_hist)


# ---------------------------------------------------------------- growth in threads
#
# With n_threads > 1 (depth-first growth), the nodes of more than task_rows rows are split
# first, one at a time, each with its histograms and partition shared out over the threads;
# the nodes below them are the roots of subtrees, which the threads then grow at the same
# time (largest first), each into a buffer of its own with scratch of its own. The node seeds
# depend on the path only (_grow.child_seed), and a subtree's root gets the histograms its
# parent's split made (a copy), as in the one-thread growth, so a subtree is the one that
# growth makes -- bit for bit, the sums of weights and targets included -- and
# _grow.merge_subtrees numbers the nodes as it does: the tree is the same for any n_threads.
# (Only where the kept histograms fit in HIST_BUDGET whatever the order: a budget that ran
# out would make some histograms from rows instead of by subtraction, and float sums differ
# in their last bits.) The subtrees share the sample's node-ordered arrays: each owns its
# rows' range.

cdef inline Py_ssize_t task_rows(HB *b) noexcept nogil:
    """The most rows of a subtree grown in one thread: about eight subtrees per thread, so
    the largest first keeps the threads busy to the end."""
    return max(PARALLEL_MIN_ROWS, b.m_rows // (8 * b.n_threads))


cdef int by_rows(const void *a, const void *b) noexcept nogil:
    """qsort order of items: the most rows first."""
    cdef Py_ssize_t x = (<const Item *> a).end - (<const Item *> a).start
    cdef Py_ssize_t y = (<const Item *> b).end - (<const Item *> b).start
    return -1 if x > y else (1 if x < y else 0)


cdef int grow_in_threads(HB *b, TreeBuffer *t, Item *root, weight_t tag) noexcept nogil:
    """Split the large nodes from the root (any order: the numbering comes at the end), then
    grow the subtrees below them in the threads, then merge (see above). Returns 0, or -1
    when memory runs out."""
    cdef Frontier top, tasks
    cdef Item item
    cdef Py_ssize_t limit = task_rows(b)
    cdef int i, k, n_team, status = 0
    cdef HB *team = NULL
    cdef TreeBuffer *grown = NULL
    cdef TreeBuffer merged
    cdef index_t *task_node = NULL
    cdef int *task_status = NULL
    top.n, top.cap, tasks.n, tasks.cap = 0, FIRST_FRONTIER, 0, FIRST_FRONTIER
    top.items = <Item *> malloc(top.cap * sizeof(Item))
    tasks.items = <Item *> malloc(tasks.cap * sizeof(Item))
    if top.items == NULL or tasks.items == NULL or frontier_push(&top, root) < 0:
        status = -1
    while status == 0 and top.n > 0:
        top.n -= 1
        item = top.items[top.n]
        if item.end - item.start <= limit:      # a subtree for a thread, with the root's
            status = frontier_push(&tasks, &item)   # histograms (if any) from its parent
        elif split_node(b, t, &item, &top, tag) < 0:
            status = -1
    n_team = min(b.n_threads, tasks.n)
    if status == 0 and tasks.n > 0:
        qsort(tasks.items, tasks.n, sizeof(Item), by_rows)
        team = <HB *> calloc(n_team, sizeof(HB))
        grown = <TreeBuffer *> calloc(tasks.n, sizeof(TreeBuffer))
        task_node = <index_t *> malloc(tasks.n * sizeof(index_t))
        task_status = <int *> calloc(tasks.n, sizeof(int))
        if team == NULL or grown == NULL or task_node == NULL or task_status == NULL:
            status = -1
        for k in range(n_team if team != NULL else 0):
            if thread_builder(&team[k], b) < 0:
                status = -1
    if status == 0 and tasks.n > 0:
        for i in prange(tasks.n, num_threads=n_team, schedule="dynamic", chunksize=1):
            task_node[i] = tasks.items[i].node
            task_status[i] = grow_subtree(&team[threadid()], t, &tasks.items[i], &grown[i],
                                          tag)
        for i in range(tasks.n):
            if task_status[i] < 0:
                status = -1
        if status == 0:
            if buffer_init(&merged, t.n_values) < 0 or \
                    merge_subtrees(t, task_node, grown, tasks.n, &merged) < 0:
                status = -1
                buffer_free(&merged)
            else:
                buffer_free(t)
                t[0] = merged
    if team != NULL:
        for k in range(n_team):
            scratch_free(&team[k])
    if grown != NULL:
        for i in range(tasks.n):
            buffer_free(&grown[i])
    free(team); free(grown); free(task_node); free(task_status)
    free(top.items); free(tasks.items)
    return status


cdef int thread_builder(HB *mine, const HB *b) noexcept nogil:
    """A thread's builder: b's shared arrays, scratch of its own, one thread (no team within
    a team). -1 when memory runs out (scratch_free frees any part)."""
    mine[0] = b[0]
    mine.n_threads = 1
    mine.occ_rows = NULL; mine.occ_code = NULL; mine.occ_mixed = NULL; mine.slot_of = NULL
    mine.occ_list = NULL; mine.varying = NULL; mine.bucket_start = NULL
    mine.bucket_fill = NULL; mine.bucket_pos = NULL; mine.bucket_code = NULL
    mine.node_counts = NULL; mine.left = NULL; mine.right = NULL; mine.miss = NULL
    mine.cand_hist = NULL; mine.cand_bits = NULL; mine.candidates = NULL
    mine.draw.heap = NULL; mine.found = NULL; mine.child_of_level = NULL
    mine.level_seen = NULL; mine.child_w = NULL; mine.child_n = NULL
    mine.child_rows = NULL; mine.child_hist = NULL; mine.all_hists = NULL
    mine.free_hists = NULL
    return scratch_init(mine)


cdef int grow_subtree(HB *b, TreeBuffer *main, Item *task, TreeBuffer *buf,
                      weight_t tag) noexcept nogil:
    """Grow the subtree of task's node (split already found) into buf, whose node 0 is a
    copy of that node: depth-first, with the thread's own builder b. Returns 0, or -1."""
    cdef Item item = task[0]
    if buffer_init(buf, main.n_values) < 0 or \
            buffer_add_leaf(buf, item.depth, item.n, item.w) < 0:
        return -1
    buf.nodes[0] = main.nodes[item.node]
    memcpy(buf.value, main.value + item.node * main.n_values, main.n_values * sizeof(double))
    item.node = 0
    if task.hist != NULL:       # the parent's split made them: a copy in the thread's pool
        item.hist = hist_acquire(b)
        if item.hist == NULL:
            return -1
        memcpy(item.hist, task.hist, b.hbytes)
    return grow_frontier(b, buf, &item, 1, 0, 0.0,
                         split_node_weighted if weight_t is double else split_node_counted,
                         drop_hist)


# ---------------------------------------------------------------- memory and entry point

cdef int builder_init(HB *b) noexcept nogil:
    """The builder's arrays (sizes set in b): the sample in node order, which every thread
    shares, and the first thread's scratch (scratch_init); -1 when memory runs out
    (builder_free frees any part)."""
    if b.sparse:    # a row id per position, a code scratch
        b.prow = <int *> malloc(b.m_rows * sizeof(int))
        b.tmp_bytes = <uint8_t *> malloc(b.m_rows)
        if b.prow == NULL:
            return -1
    else:           # the codes in node order and the partitions' scratch
        b.pbins = <uint8_t *> malloc(b.d * b.m_rows)
        b.tmp_bytes = <uint8_t *> malloc(max(b.n_threads, b.d) * b.m_rows)
        if b.pbins == NULL:
            return -1
    b.lab = <int *> malloc(b.m_rows * sizeof(int))
    b.wgt = <int *> malloc(b.m_rows * sizeof(int))
    b.pw = <double *> malloc((b.m_rows if b.sw != NULL else 1) * sizeof(double))
    b.yg = <double *> malloc(b.m_rows * sizeof(double))
    b.yraw = <double *> malloc(b.m_rows * sizeof(double))
    b.side = <uint8_t *> malloc(b.m_rows)
    b.tmp_wide = <char *> malloc(b.m_rows * sizeof(double))
    # the n log2 n table serves the count copy; the weighted one computes its logs
    b.nlogn = <double *> malloc((1 if b.sw != NULL else b.m + 1) * sizeof(double))
    if (b.lab == NULL or b.wgt == NULL or b.pw == NULL or b.yg == NULL or
            b.yraw == NULL or b.side == NULL or b.tmp_bytes == NULL or b.tmp_wide == NULL or
            b.nlogn == NULL):
        return -1
    return scratch_init(b)


cdef int scratch_init(HB *b) noexcept nogil:
    """What one thread growing nodes writes: the node's class counts, the candidates' scratch
    histograms and splits, a split's children, the pool of node histograms and (sparse X) a
    node's view of the features. Class-count arrays get K + 1 entries: regression has K = 0,
    and malloc(0) may return NULL, which would read as out of memory. -1 when memory runs
    out (scratch_free frees any part)."""
    cdef Py_ssize_t n_map = b.max_levels + 2 if b.max_levels + 2 > SLOTS else SLOTS
    if b.sparse:
        b.occ_rows = <int32_t *> calloc(b.d, sizeof(int32_t))
        b.occ_code = <uint8_t *> malloc(b.d)
        b.occ_mixed = <uint8_t *> calloc(b.d, 1)
        b.slot_of = <int32_t *> malloc(b.d * sizeof(int32_t))
        b.occ_list = <int *> malloc(b.n_listed * sizeof(int))
        b.varying = <int *> malloc(b.n_listed * sizeof(int))
        b.bucket_start = <int64_t *> malloc((b.max_cand + 1) * sizeof(int64_t))
        b.bucket_fill = <int64_t *> malloc((b.max_cand + 1) * sizeof(int64_t))
        b.bucket_pos = <int32_t *> malloc((b.nnz + 1) * sizeof(int32_t))
        b.bucket_code = <uint8_t *> malloc(b.nnz + 1)
        if (b.occ_rows == NULL or b.occ_code == NULL or b.occ_mixed == NULL or
                b.slot_of == NULL or b.occ_list == NULL or b.varying == NULL or
                b.bucket_start == NULL or b.bucket_fill == NULL or b.bucket_pos == NULL or
                b.bucket_code == NULL):
            return -1
        memset(b.slot_of, 0xff, b.d * sizeof(int32_t))     # -1: not drawn
    b.node_counts = malloc((b.K + 1) * sizeof(double))   # count_t or double: 8 bytes each
    b.left = malloc((b.K + 1) * sizeof(double))
    b.right = malloc((b.K + 1) * sizeof(double))
    b.miss = malloc((b.K + 1) * sizeof(double))
    # scratch histograms: one per candidate (dense), or the one a sparse node reuses
    b.cand_hist = <char *> calloc(1 if b.sparse else b.max_cand, b.fstride)
    b.cand_bits = <uint64_t *> calloc(4 * (1 if b.sparse else b.max_cand), sizeof(uint64_t))
    b.candidates = <int *> malloc(b.max_cand * sizeof(int))
    b.draw.heap = <KeyedFeature *> malloc(b.n_listed * sizeof(KeyedFeature))
    b.found = <Split *> malloc(b.max_cand * sizeof(Split))
    b.child_of_level = <int *> malloc(n_map * sizeof(int))
    b.level_seen = <int *> malloc(n_map * sizeof(int))
    b.child_w = <double *> malloc(n_map * sizeof(double))
    b.child_n = <count_t *> malloc(n_map * sizeof(count_t))
    b.child_rows = <Py_ssize_t *> malloc(n_map * sizeof(Py_ssize_t))
    b.child_hist = <char **> calloc(n_map, sizeof(char *))
    b.all_hists = <char **> malloc(b.max_alloc * sizeof(char *))
    b.free_hists = <char **> malloc(b.max_alloc * sizeof(char *))
    b.n_alloc = b.n_free = 0
    if (b.node_counts == NULL or b.left == NULL or b.right == NULL or b.miss == NULL or
            b.cand_hist == NULL or b.cand_bits == NULL or b.candidates == NULL or
            b.draw.heap == NULL or b.found == NULL or b.child_of_level == NULL or
            b.level_seen == NULL or b.child_w == NULL or b.child_n == NULL or
            b.child_rows == NULL or b.child_hist == NULL or b.all_hists == NULL or
            b.free_hists == NULL):
        return -1
    return 0


cdef void scratch_free(HB *b) noexcept nogil:
    cdef int i
    if b.all_hists != NULL:
        for i in range(b.n_alloc):
            free(b.all_hists[i])
    free(b.occ_rows); free(b.occ_code); free(b.occ_mixed); free(b.slot_of)
    free(b.occ_list); free(b.varying); free(b.bucket_start); free(b.bucket_fill)
    free(b.bucket_pos); free(b.bucket_code)
    free(b.node_counts); free(b.left); free(b.right); free(b.miss); free(b.cand_hist)
    free(b.cand_bits); free(b.candidates); free(b.draw.heap); free(b.found)
    free(b.child_of_level); free(b.level_seen); free(b.child_w); free(b.child_n)
    free(b.child_rows); free(b.child_hist); free(b.all_hists); free(b.free_hists)


cdef void builder_free(HB *b) noexcept nogil:
    scratch_free(b)
    free(b.pbins); free(b.prow)
    free(b.lab); free(b.wgt); free(b.pw); free(b.yg); free(b.yraw); free(b.side)
    free(b.tmp_bytes); free(b.tmp_wide); free(b.nlogn)


cdef inline int sample_count(const int[::1] counts, const double[::1] weights,
                             Py_ssize_t i) noexcept nogil:
    """Row i's bootstrap count (1 without one), or 0 when its sample weight is 0 (such a row
    is left out, as if it were not in X)."""
    if weights.shape[0] > 0 and weights[i] == 0.0:
        return 0
    return counts[i] if counts.shape[0] > 0 else 1


cdef void fill_sample(HB *b, const int[::1] counts, const double[::1] weights) noexcept nogil:
    """The sample in node order (the rows of positive count, in row order: the root's range),
    the n log2 n table (count builds), and the targets centred on their weighted mean."""
    cdef Py_ssize_t i, p = 0, f
    cdef int w
    cdef double mean = 0.0, total = 0.0, pw
    cdef const uint8_t *col
    cdef uint8_t *out
    cdef int *rows = b.prow if b.sparse else <int *> b.tmp_wide  # the sampled rows
    for i in range(b.n_rows):
        w = sample_count(counts, weights, i)
        if w > 0:
            rows[p] = <int> i
            b.wgt[p] = w
            pw = w
            if b.sw != NULL:
                pw = w * b.sw[i]
                b.pw[p] = pw
            if b.criterion == CRIT_SSE:
                b.yraw[p] = b.yr[i]
                mean += pw * b.yr[i]
                total += pw
            else:
                b.lab[p] = b.yc[i]
            p += 1
    for f in range(0 if b.sparse else b.d):
        col = b.bins + f * b.n_rows
        out = b.pbins + f * b.m_rows
        if b.m_rows == b.n_rows:
            memcpy(out, col, b.n_rows)
        else:  # a gather by the row list: no branch per row and feature
            for p in range(b.m_rows):
                out[p] = col[rows[p]]
    b.nlogn[0] = 0.0
    if b.sw == NULL:
        for i in range(1, b.m + 1):
            b.nlogn[i] = i * log2(<double> i)
    if b.criterion == CRIT_SSE:
        mean /= total
        for p in range(b.m_rows):
            b.yg[p] = b.yraw[p] - mean


def build_hist_tree(binned, const int[::1] counts, const double[::1] weights,
                    const int[::1] y_class, const double[::1] y_reg,
                    const unsigned char[::1] is_categorical, const int[::1] n_levels,
                    int n_classes, int criterion, index_t max_depth,
                    index_t min_samples_split, index_t min_samples_leaf,
                    double min_weight_leaf, index_t max_leaf_nodes, index_t max_features,
                    uint64_t seed, int n_threads=1):
    """Grow one tree by histograms and return it as a Tree (fastml/tree/_tree_fast.pyx).

    The arguments are build_tree's (fastml/tree/_builder_fast.pyx) with the binned columns in
    place of the columns and their presort: counts (each row's bootstrap count, or empty for
    once each), weights (sample weights, or empty: the count copy), y_class or y_reg, the
    column kinds, the limits, the seed of the feature draws and n_threads (threads that build
    the histograms of large nodes; the tree is the same for any number). Runs without the
    GIL, so a forest grows its trees from threads. binned: dense or sparse codes
    (_binning_fast.Binned)."""
    cdef HB b
    cdef TreeBuffer t
    cdef const uint8_t[:, ::1] bins
    cdef const int64_t[::1] row_ptr, bin_start = binned.bin_start
    cdef const int32_t[::1] row_feat
    cdef const uint8_t[::1] row_code, zero_bin
    cdef const double[::1] lo = binned.lo, hi = binned.hi
    cdef const int[::1] n_bins = binned.n_bins
    cdef Py_ssize_t d = n_bins.shape[0], n, i, f, m = 0, m_rows = 0, nnz = 0
    cdef int status = 0, listed = d
    cdef int classification = criterion != CRIT_SSE
    if binned.sparse:
        row_ptr, row_feat, row_code = binned.indptr, binned.indices, binned.codes
        zero_bin = binned.zero_bin
        n = row_ptr.shape[0] - 1
        listed = np.count_nonzero(np.bincount(binned.indices, minlength=d)) \
            if binned.indices.size else 0
    else:
        bins = binned.bins
        n = bins.shape[1]
    if bin_start.shape[0] != d + 1 or lo.shape[0] != hi.shape[0] or \
            lo.shape[0] < bin_start[d] or is_categorical.shape[0] != d or \
            n_levels.shape[0] != d or \
            counts.shape[0] not in (0, n) or weights.shape[0] not in (0, n) or \
            (y_class.shape[0] if classification else y_reg.shape[0]) != n or \
            criterion not in (CRIT_ENTROPY, CRIT_GINI, CRIT_SSE) or \
            (classification and n_classes < 1) or d < 1 or max_features < 1:
        raise ValueError("build_hist_tree: the arrays' shapes do not match")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1; got {n_threads}")
    for i in range(n):
        m += sample_count(counts, weights, i)
        m_rows += sample_count(counts, weights, i) > 0
    if m < 1:
        raise ValueError("the sample to grow a tree from is empty")
    if m > INT_MAX:  # histograms count in int32
        raise ValueError(f"a tree can be grown from at most {INT_MAX} rows; got {m}")
    if binned.sparse:
        for i in range(n):
            if sample_count(counts, weights, i) > 0:
                nnz += row_ptr[i + 1] - row_ptr[i]
        if is_categorical.shape[0] and np.asarray(is_categorical).any():
            raise ValueError("sparse X has no categorical columns")
    if weights.shape[0] == 0 and min_weight_leaf > min_samples_leaf:
        # a count build's weights are its rows: the least weight is a least number of rows
        min_samples_leaf = <index_t> ceil(min_weight_leaf)
    memset(&b, 0, sizeof(HB))
    b.n_rows, b.d, b.m_rows, b.m = n, d, m_rows, m
    b.sparse = binned.sparse
    if b.sparse:
        b.row_ptr, b.zero_bin = &row_ptr[0], &zero_bin[0]
        b.row_feat = &row_feat[0] if row_feat.shape[0] else NULL
        b.row_code = &row_code[0] if row_code.shape[0] else NULL
        b.nnz = nnz
    else:
        b.bins = &bins[0, 0]
    b.n_listed = max(listed, 1)
    b.lo, b.hi, b.n_bins, b.bin_start = &lo[0], &hi[0], &n_bins[0], &bin_start[0]
    b.is_cat, b.n_levels = &is_categorical[0], &n_levels[0]
    b.yc = &y_class[0] if classification else NULL
    b.yr = &y_reg[0] if not classification else NULL
    b.sw = &weights[0] if weights.shape[0] > 0 else NULL
    b.min_weight_leaf = min_weight_leaf
    b.K, b.criterion, b.n_threads = (n_classes if classification else 0), criterion, n_threads
    b.max_depth, b.min_samples_split = max_depth, min_samples_split
    b.min_samples_leaf, b.max_leaf_nodes = min_samples_leaf, max_leaf_nodes
    b.max_features = max_features if max_features < d else d
    b.max_cand = min(b.max_features, b.n_listed) if b.sparse else b.max_features
    # all features' histograms pay off when most of them are searched at every node; with a
    # few drawn features (forests), building just those from the node's rows costs less
    # (sparse X: always, a node's features are those its rows list)
    b.node_hists = 2 * b.max_features > d and not b.sparse
    if not classification:
        b.S = 3 if b.sw != NULL else 2
        b.fstride = SLOTS * b.S * sizeof(double)
    elif b.sw != NULL:
        b.S = b.K + 1
        b.fstride = SLOTS * b.S * sizeof(double)
    else:
        b.S = b.K
        b.fstride = SLOTS * b.K * sizeof(int32_t)
    b.hbytes = d * b.fstride
    b.max_alloc = max(8, HIST_BUDGET // b.hbytes)
    b.max_levels = 2
    for f in range(d):
        if is_categorical[f] and n_levels[f] > b.max_levels:
            b.max_levels = n_levels[f]
        if is_categorical[f] and n_levels[f] > MISSING:
            raise ValueError(f"column {f} has more than {MISSING} levels")
    b.seed = mix64(seed)
    with nogil:
        if builder_init(&b) < 0 or buffer_init(&t, b.K if classification else 1) < 0:
            status = -1
        else:
            fill_sample(&b, counts, weights)
            if b.sw != NULL:
                status = grow(&b, &t, <double> 0)
            else:
                status = grow(&b, &t, <count_t> 0)
        builder_free(&b)
    return finish_tree(&t, status)


def grow_hist_tree(binned, counts, y, is_categorical, n_levels, *, n_classes, criterion,
                   max_depth, min_samples_split, min_samples_leaf, max_leaf_nodes,
                   max_features, seed, n_threads=1, weights=None, min_weight_leaf=0.0):
    """One call of the histogram builder, with grow_tree's arguments (fastml/tree/_classes.py)
    and the binned columns in place of Xf and its presort.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> no_cat, no_levels = np.zeros(1, np.uint8), np.zeros(1, np.int32)
    >>> tree = grow_hist_tree(bin_features(X, no_cat, no_levels), None,
    ...                       np.array([0, 0, 1, 1], np.int32), no_cat, no_levels,
    ...                       n_classes=2, criterion=CRITERIA["entropy"], max_depth=5,
    ...                       min_samples_split=2, min_samples_leaf=1, max_leaf_nodes=0,
    ...                       max_features=1, seed=0)
    >>> tree.node_count, float(tree.threshold[0])
    (3, 1.5)
    """
    empty_i, empty_d = np.zeros(0, np.int32), np.zeros(0, np.float64)
    classification = criterion != CRIT_SSE
    return build_hist_tree(
        binned, empty_i if counts is None else counts, empty_d if weights is None else weights,
        y if classification else empty_i, empty_d if classification else y,
        is_categorical, n_levels, n_classes, criterion, max_depth, min_samples_split,
        min_samples_leaf, min_weight_leaf, max_leaf_nodes, max_features, seed, n_threads)
