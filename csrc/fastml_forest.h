/* The forest walk of fastml/tree/_tree_fast.pyx (forest_sum): rows descend one tree's compact
 * copy (PackedTree, made by pack_tree there), eight rows in flight at once.
 *
 * Why C: a step is a handful of instructions (load the node, load x[column], compare, pick a
 * child), so the cost is the instructions around it and the branches the CPU mispredicts. A
 * Cython loop with the lanes in memory and a branch at every leaf exit (one misprediction per
 * row and tree) ran ~40 instructions a step on fully grown trees (bench/README.md, issue 13).
 * Here the lanes are local variables the compiler keeps in registers; a leaf steps to itself
 * (threshold NaN: no value goes right), so a lane takes FASTML_FOREST_STEPS steps without
 * looking whether it is done, and then a lane that stayed put records its leaf slot for its
 * row and takes the next row, without a branch (masks). The leaves' values are added to `out`
 * in a second pass per tree. When the block of X holds no NaN, the step drops the NaN test.
 *
 * Results are those of the one-row walk (next_node in _tree_fast.pyx), bit for bit: the same
 * comparisons route each row, and each row's sum runs in tree order.
 *
 * Sparse X (CSR) walks one row at a time: a step reads x[column] by a binary search in the
 * row's sorted column indices (0 when it does not store the column), never a dense row. */
#ifndef FASTML_FOREST_H
#define FASTML_FOREST_H

#include <stddef.h>
#include <stdint.h>

#include "fastml_debug.h"

#if defined(__GNUC__)
#ifndef FASTML_INLINE
#define FASTML_INLINE __attribute__((always_inline)) inline
#endif
#define FASTML_FOREST_RARE(c) __builtin_expect(!!(c), 0)
#else
#ifndef FASTML_INLINE
#define FASTML_INLINE inline
#endif
#define FASTML_FOREST_RARE(c) (c)
#endif

/* One node of the compact copy: 16 bytes, so a threshold node's two children (adjacent slots,
 * the pair aligned to an even slot) share one 64-byte line. */
typedef struct {
    double threshold;   /* x[meta >> 1] < threshold goes left; NaN at a leaf */
    int32_t meta;       /* >= 0: column meta >> 1, NaN to the right if meta & 1 (a leaf: 0);
                           FASTML_PACKED_GENERAL: a node for the aux table */
    int32_t left;       /* threshold node: its left child's slot (the right one is left + 1);
                           leaf: its own slot; general node: its aux offset */
} fastml_packed_node;

enum { FASTML_PACKED_GENERAL = -2 };

/* What the walk reads of one tree's compact copy. */
typedef struct {
    const fastml_packed_node *nodes;
    const int32_t *aux;     /* per general node: feature, n_child (0: a threshold test),
                               missing slot, then one slot per children entry */
    const double *leaf;     /* n_values per leaf */
    const int32_t *leaf_of; /* per slot: a leaf's offset in `leaf` (other slots: unused) */
    ptrdiff_t n_nodes, n_leaf_values;
} fastml_tree_view;

/* Steps a lane takes between two looks at whether it reached its leaf. Measured on W3's fully
 * grown trees (2M row walks, ~15 steps each; callgrind): 1 step 1.17G instructions, 2 steps
 * 0.85G, 3 steps 0.80G, 4 steps 0.75G, and CPU time 2 > 3 >= 4 within the noise of a loaded
 * machine; a longer round wastes more steps on rows already at their leaf, which costs most
 * on shallow trees, so 3. */
#define FASTML_FOREST_STEPS 3

/* The next slot from a general node for the value v of its column (aux[p->left]), by the
 * Tree's own rules (next_node in _tree_fast.pyx): NaN to the missing slot; a threshold test;
 * or a categorical node's entry for the level, an unseen level going to the missing slot.
 * Rare: categorical columns and loaded files only. */
static int32_t fastml_general_next(const fastml_packed_node *p, const int32_t *aux, double v) {
    const int32_t *a = aux + p->left;
    if (v != v) return a[2];
    if (a[1] == 0) return a[3] + (v < p->threshold ? 0 : 1);
    if (v < 0 || v >= a[1]) return a[2];    /* a category never seen at fit: the majority path */
    return a[3 + (ptrdiff_t)v];
}

static int32_t fastml_general_step(const fastml_packed_node *p, const int32_t *aux,
                                   const double *x) {
    return fastml_general_next(p, aux, x[aux[p->left]]);
}

/* The next slot from slot `node` for the row x (a leaf's is itself). The threshold test is
 * branch-free: (v >= t) is false for NaN, so without `nan_aware` every NaN would go left;
 * with it, (v != v) sends a NaN to the side meta's last bit names. */
static FASTML_INLINE int32_t fastml_node_step(const fastml_packed_node *nodes,
                                              const int32_t *aux, int32_t node,
                                              const double *x, int nan_aware) {
    const fastml_packed_node *p = nodes + node;
    int32_t meta = p->meta;
    double v;
    if (FASTML_FOREST_RARE(meta < 0)) return fastml_general_step(p, aux, x);
    v = x[meta >> 1];
    if (nan_aware) return p->left + ((v >= p->threshold) | ((v != v) & (meta & 1)));
    return p->left + (v >= p->threshold);
}

/* The leaf slot that row x reaches from slot `node`: one row alone. */
static int32_t fastml_walk_from(const fastml_tree_view *t, int32_t node, const double *x) {
    int32_t next;
    while ((next = fastml_node_step(t->nodes, t->aux, node, x, 1)) != node) {
        fastml_check_index(next, t->n_nodes);
        node = next;
    }
    return node;
}

/* The eight lanes: lane g holds slot n##g of row r##g, whose data x##g is. */
#define FASTML_LANES(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define FASTML_LANE_START(g) \
    int32_t n##g = 0, p##g; ptrdiff_t r##g = first + g; const double *x##g = X + r##g * n_columns;
#define FASTML_LANE_STEP(g) n##g = fastml_node_step(nodes, aux, n##g, x##g, nan_aware);
#define FASTML_LANE_MARK(g) p##g = n##g;
/* a lane whose last step stayed put is at its leaf: record it, take row `next` from the root */
#define FASTML_LANE_REFILL(g) {                                                               \
        int32_t at_leaf = -(int32_t)(n##g == p##g);                                          \
        fastml_check_index(n##g, t->n_nodes);                                                 \
        leaf_at[r##g - first] = n##g;                                                         \
        n##g &= ~at_leaf;                                                                     \
        r##g += (next - r##g) & (ptrdiff_t)at_leaf;                                           \
        next -= at_leaf;                                                                      \
        x##g = X + r##g * n_columns; }
#define FASTML_LANE_FINISH(g) leaf_at[r##g - first] = fastml_walk_from(t, n##g, x##g);

/* leaf_at[r - first] = the leaf slot of row r, for rows first..last-1 of the row-major X
 * (n_columns a row). The lanes' steps are independent, so the CPU overlaps them; rounds run
 * while every lane can take a new row, then the rows in flight and the last few rows of the
 * block finish one at a time. */
static FASTML_INLINE void fastml_walk_lanes(const fastml_tree_view *t, const double *X,
                                            ptrdiff_t n_columns, ptrdiff_t first,
                                            ptrdiff_t last, int32_t *leaf_at, int nan_aware) {
    const fastml_packed_node *nodes = t->nodes;
    const int32_t *aux = t->aux;
    ptrdiff_t next = first;
    int s;
    if (last - first >= 16) {
        FASTML_LANES(FASTML_LANE_START)
        next = first + 8;
        while (next <= last - 8) {
            for (s = 1; s < FASTML_FOREST_STEPS; s++) {
                FASTML_LANES(FASTML_LANE_STEP)
            }
            FASTML_LANES(FASTML_LANE_MARK)
            FASTML_LANES(FASTML_LANE_STEP)
            FASTML_LANES(FASTML_LANE_REFILL)
        }
        FASTML_LANES(FASTML_LANE_FINISH)
    }
    for (; next < last; next++)
        leaf_at[next - first] = fastml_walk_from(t, 0, X + next * n_columns);
}

/* The two builds of the lane loop: rows without NaN skip the NaN side of each test. */
static void fastml_walk_finite(const fastml_tree_view *t, const double *X, ptrdiff_t n_columns,
                               ptrdiff_t first, ptrdiff_t last, int32_t *leaf_at) {
    fastml_walk_lanes(t, X, n_columns, first, last, leaf_at, 0);
}

static void fastml_walk_any(const fastml_tree_view *t, const double *X, ptrdiff_t n_columns,
                            ptrdiff_t first, ptrdiff_t last, int32_t *leaf_at) {
    fastml_walk_lanes(t, X, n_columns, first, last, leaf_at, 1);
}

/* 1 if one of the n values is NaN. Eight values a step, their comparisons ORed in a local the
 * compiler keeps in a register (one accumulator over the whole loop was kept in memory, a
 * store-to-load chain per value: 30% of a one-tree predict_proba). */
static int fastml_has_nan(const double *v, ptrdiff_t n) {
    ptrdiff_t i = 0;
    int j, found;
    for (; i + 8 <= n; i += 8) {
        found = 0;
        for (j = 0; j < 8; j++) found |= v[i + j] != v[i + j];
        if (found) return 1;
    }
    for (; i < n; i++)
        if (v[i] != v[i]) return 1;
    return 0;
}

/* out[r] += the values of row r's leaf (leaf_at: slots), r in first..last-1. */
static void fastml_add_leaves(const fastml_tree_view *t, const int32_t *leaf_at,
                              ptrdiff_t first, ptrdiff_t last, double *out, ptrdiff_t n_values) {
    ptrdiff_t r, c;
    for (r = first; r < last; r++) {
        int32_t offset = t->leaf_of[leaf_at[r - first]];
        const double *v = t->leaf + offset;
        double *o = out + r * n_values;
        fastml_check_index(offset + n_values - 1, t->n_leaf_values);
        for (c = 0; c < n_values; c++) o[c] += v[c];
    }
}

/* out[r] += the sum over the trees, in tree order, of row r's leaf values, r in first..last-1
 * (X row-major, at least one column: a leaf reads column 0); leaf_at: scratch of last - first
 * entries. Each tree walks every row of the block before the next tree, so its compact copy
 * is fetched into cache once per block. */
static void fastml_forest_block(const fastml_tree_view *trees, ptrdiff_t n_trees,
                                const double *X, ptrdiff_t n_columns, ptrdiff_t first,
                                ptrdiff_t last, double *out, ptrdiff_t n_values,
                                int32_t *leaf_at) {
    int finite = !fastml_has_nan(X + first * n_columns, (last - first) * n_columns);
    ptrdiff_t k;
    for (k = 0; k < n_trees; k++) {
        if (finite)
            fastml_walk_finite(&trees[k], X, n_columns, first, last, leaf_at);
        else
            fastml_walk_any(&trees[k], X, n_columns, first, last, leaf_at);
        fastml_add_leaves(&trees[k], leaf_at, first, last, out, n_values);
    }
}

/* x[column] of a sparse row (its sorted column indices and values; 0 if not stored). */
static FASTML_INLINE double fastml_sparse_value(const int32_t *ind, const double *val,
                                                ptrdiff_t nnz, int32_t column) {
    ptrdiff_t lo = 0, hi = nnz, mid;
    while (lo < hi) {
        mid = (lo + hi) >> 1;
        if (ind[mid] < column) lo = mid + 1;
        else hi = mid;
    }
    return lo < nnz && ind[lo] == column ? val[lo] : 0.0;
}

/* The leaf slot a sparse row reaches: the steps of fastml_node_step (NaN aware), the value of
 * each test looked up in the row. */
static int32_t fastml_walk_sparse(const fastml_tree_view *t, const int32_t *ind,
                                  const double *val, ptrdiff_t nnz) {
    int32_t node = 0, next;
    for (;;) {
        const fastml_packed_node *p = t->nodes + node;
        int32_t meta = p->meta;
        if (FASTML_FOREST_RARE(meta < 0)) {
            next = fastml_general_next(p, t->aux,
                                       fastml_sparse_value(ind, val, nnz, t->aux[p->left]));
        } else {
            double v = fastml_sparse_value(ind, val, nnz, meta >> 1);
            next = p->left + ((v >= p->threshold) | ((v != v) & (meta & 1)));
        }
        if (next == node) return node;
        fastml_check_index(next, t->n_nodes);
        node = next;
    }
}

/* fastml_forest_block for rows first..last-1 of a CSR X (indptr, indices, data). */
static void fastml_forest_block_sparse(const fastml_tree_view *trees, ptrdiff_t n_trees,
                                       const int64_t *indptr, const int32_t *indices,
                                       const double *data, ptrdiff_t first, ptrdiff_t last,
                                       double *out, ptrdiff_t n_values, int32_t *leaf_at) {
    ptrdiff_t k, r;
    for (k = 0; k < n_trees; k++) {
        for (r = first; r < last; r++)
            leaf_at[r - first] = fastml_walk_sparse(&trees[k], indices + indptr[r],
                                                    data + indptr[r], indptr[r + 1] - indptr[r]);
        fastml_add_leaves(&trees[k], leaf_at, first, last, out, n_values);
    }
}

#endif
