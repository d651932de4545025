/* Bin codes for splitter="hist": the number of a feature's sorted edges <= x, by 8
 * branch-free halvings over its 255 edges (padded with +inf, so no bound checks).
 *
 * A halving is a chain of 8 loads, each waiting for the one before, so one row's search is
 * latency-bound. Sixteen rows are searched side by side, one halving step for all of them at
 * a time: sixteen independent chains keep the loads overlapped (2x faster than one row after
 * another on W3's 400k x 20, measured when this was written). Comparisons are exact, so the
 * codes do not depend on the grouping or on the copy (baseline or AVX2) that runs. */
#ifndef FASTML_BIN_H
#define FASTML_BIN_H

#include <stddef.h>
#include <stdint.h>
#include "fastml_simd.h"

#define FASTML_BIN_MISSING 255 /* the code of NaN */
#define FASTML_BIN_GROUP 16    /* rows searched side by side */

/* The code of v given its halving result a: NaN is missing; +inf (every edge, the padding
 * too, is <= it) is capped at the missing code, as the single search always did. */
static FASTML_INLINE uint8_t fastml_bin_code(double v, int a)
{
    return (uint8_t) (v != v ? FASTML_BIN_MISSING : (a < FASTML_BIN_MISSING ? a : FASTML_BIN_MISSING));
}

/* codes[i] = #{edges e[0..254] <= X[i * stride]} for i < n. */
static FASTML_CLONES void fastml_bin_column(const double *X, ptrdiff_t stride, ptrdiff_t n,
                                            const double *e, uint8_t *codes)
{
    double v[FASTML_BIN_GROUP];
    int a[FASTML_BIN_GROUP];
    ptrdiff_t i = 0;
    int j, step;
    for (; i + FASTML_BIN_GROUP <= n; i += FASTML_BIN_GROUP) {
        for (j = 0; j < FASTML_BIN_GROUP; j++) {
            v[j] = X[(i + j) * stride];
            a[j] = 0;
        }
        for (step = 128; step > 0; step >>= 1)
            for (j = 0; j < FASTML_BIN_GROUP; j++)
                a[j] += step * (e[a[j] + step - 1] <= v[j]);
        for (j = 0; j < FASTML_BIN_GROUP; j++)
            codes[i + j] = fastml_bin_code(v[j], a[j]);
    }
    for (; i < n; i++) {  /* the last rows of the block, one at a time */
        double x = X[i * stride];
        int k = 0;
        for (step = 128; step > 0; step >>= 1)
            k += step * (e[k + step - 1] <= x);
        codes[i] = fastml_bin_code(x, k);
    }
}

#endif
