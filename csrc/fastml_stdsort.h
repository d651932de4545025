/* The sort of one CSR row by column that scipy's sum_duplicates runs (csr_sort_indices:
 * std::sort of (column, value) pairs compared by column only), step for step as GCC's
 * libstdc++ implements std::sort: introsort with a median-of-three pivot moved to the front,
 * an unguarded partition, recursion on the right part down to 16 entries, heapsort past
 * 2 floor(log2 n) levels, then one insertion sort over the whole range. std::sort is not
 * stable: rows of more than 16 entries leave entries of one column in an order that depends on
 * this exact sequence of moves, and sum_duplicates then adds them in that order. Doing the
 * same moves gives scikit-learn's FeatureHasher sums bit for bit wherever scipy is built
 * with libstdc++ (its Linux wheels); fastml/feature_extraction/_hashing_fast.pyx says when it
 * sorts at all.
 *
 * The arrays c (columns) and v (values) are the pairs; comp(i, j) is c[i] < c[j]. Each
 * function below names its libstdc++ counterpart (bits/stl_algo.h, bits/stl_heap.h). */
#ifndef FASTML_STDSORT_H
#define FASTML_STDSORT_H

#include <stddef.h>
#include <stdint.h>

#define FASTML_SORT_THRESHOLD 16    /* _S_threshold */

typedef struct {
    int32_t c;
    double v;
} fastml_pair;

static inline fastml_pair fastml_pair_at(const int32_t *c, const double *v, ptrdiff_t i) {
    fastml_pair p;
    p.c = c[i];
    p.v = v[i];
    return p;
}

static inline void fastml_pair_put(int32_t *c, double *v, ptrdiff_t i, fastml_pair p) {
    c[i] = p.c;
    v[i] = p.v;
}

static inline void fastml_pair_swap(int32_t *c, double *v, ptrdiff_t i, ptrdiff_t j) {
    fastml_pair t = fastml_pair_at(c, v, i);
    c[i] = c[j];
    v[i] = v[j];
    fastml_pair_put(c, v, j, t);
}

/* __push_heap */
static void fastml_push_heap(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t hole,
                             ptrdiff_t top, fastml_pair value) {
    ptrdiff_t parent = (hole - 1) / 2;
    while (hole > top && c[first + parent] < value.c) {
        fastml_pair_put(c, v, first + hole, fastml_pair_at(c, v, first + parent));
        hole = parent;
        parent = (hole - 1) / 2;
    }
    fastml_pair_put(c, v, first + hole, value);
}

/* __adjust_heap */
static void fastml_adjust_heap(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t hole,
                               ptrdiff_t len, fastml_pair value) {
    const ptrdiff_t top = hole;
    ptrdiff_t second = hole;
    while (second < (len - 1) / 2) {
        second = 2 * (second + 1);
        if (c[first + second] < c[first + second - 1]) second--;
        fastml_pair_put(c, v, first + hole, fastml_pair_at(c, v, first + second));
        hole = second;
    }
    if ((len & 1) == 0 && second == (len - 2) / 2) {
        second = 2 * (second + 1);
        fastml_pair_put(c, v, first + hole, fastml_pair_at(c, v, first + second - 1));
        hole = second - 1;
    }
    fastml_push_heap(c, v, first, hole, top, value);
}

/* __partial_sort(first, last, last) = __make_heap, then __sort_heap (__pop_heap each) */
static void fastml_heap_sort(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t last) {
    ptrdiff_t len = last - first, parent;
    if (len >= 2) {
        for (parent = (len - 2) / 2;; parent--) {
            fastml_adjust_heap(c, v, first, parent, len, fastml_pair_at(c, v, first + parent));
            if (parent == 0) break;
        }
    }
    while (last - first > 1) {
        fastml_pair value;
        --last;
        value = fastml_pair_at(c, v, last);
        fastml_pair_put(c, v, last, fastml_pair_at(c, v, first));
        fastml_adjust_heap(c, v, first, 0, last - first, value);
    }
}

/* __move_median_to_first */
static void fastml_median_to_first(int32_t *c, double *v, ptrdiff_t result, ptrdiff_t a,
                                   ptrdiff_t b, ptrdiff_t m) {
    if (c[a] < c[b]) {
        if (c[b] < c[m]) fastml_pair_swap(c, v, result, b);
        else if (c[a] < c[m]) fastml_pair_swap(c, v, result, m);
        else fastml_pair_swap(c, v, result, a);
    } else if (c[a] < c[m]) fastml_pair_swap(c, v, result, a);
    else if (c[b] < c[m]) fastml_pair_swap(c, v, result, m);
    else fastml_pair_swap(c, v, result, b);
}

/* __unguarded_partition_pivot: the pivot (the median of three) at first, the rest split */
static ptrdiff_t fastml_partition(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t last) {
    const ptrdiff_t pivot = first;
    fastml_median_to_first(c, v, first, first + 1, first + (last - first) / 2, last - 1);
    first++;
    for (;;) {
        while (c[first] < c[pivot]) first++;
        last--;
        while (c[pivot] < c[last]) last--;
        if (!(first < last)) return first;
        fastml_pair_swap(c, v, first, last);
        first++;
    }
}

/* __introsort_loop */
static void fastml_introsort_loop(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t last,
                                  int depth) {
    while (last - first > FASTML_SORT_THRESHOLD) {
        ptrdiff_t cut;
        if (depth == 0) {
            fastml_heap_sort(c, v, first, last);
            return;
        }
        depth--;
        cut = fastml_partition(c, v, first, last);
        fastml_introsort_loop(c, v, cut, last, depth);
        last = cut;
    }
}

/* __unguarded_linear_insert */
static inline void fastml_linear_insert(int32_t *c, double *v, ptrdiff_t last) {
    fastml_pair value = fastml_pair_at(c, v, last);
    ptrdiff_t next = last - 1;
    while (value.c < c[next]) {
        fastml_pair_put(c, v, last, fastml_pair_at(c, v, next));
        last = next;
        next--;
    }
    fastml_pair_put(c, v, last, value);
}

/* __insertion_sort (an entry below the first one goes straight to the front) */
static void fastml_insertion_sort(int32_t *c, double *v, ptrdiff_t first, ptrdiff_t last) {
    ptrdiff_t i, j;
    if (first == last) return;
    for (i = first + 1; i < last; i++) {
        if (c[i] < c[first]) {
            fastml_pair value = fastml_pair_at(c, v, i);
            for (j = i; j > first; j--) fastml_pair_put(c, v, j, fastml_pair_at(c, v, j - 1));
            fastml_pair_put(c, v, first, value);
        } else {
            fastml_linear_insert(c, v, i);
        }
    }
}

/* std::sort: __introsort_loop with depth 2 __lg(n), then __final_insertion_sort. Rows of at
 * most 16 entries only get the insertion sort, which is stable. */
static void fastml_std_sort(int32_t *c, double *v, ptrdiff_t n) {
    int lg = 0;
    ptrdiff_t i;
    if (n < 2) return;
    while (((ptrdiff_t)1 << (lg + 1)) <= n) lg++;
    fastml_introsort_loop(c, v, 0, n, 2 * lg);
    if (n > FASTML_SORT_THRESHOLD) {
        fastml_insertion_sort(c, v, 0, FASTML_SORT_THRESHOLD);
        for (i = FASTML_SORT_THRESHOLD; i < n; i++) fastml_linear_insert(c, v, i);
    } else {
        fastml_insertion_sort(c, v, 0, n);
    }
}

#endif
