# Chan's merge of weighted moments (Chan, Golub & LeVeque 1979), the one copy of the formula.
# Two samples with weights na, nb, means ma, mb and scatter M2a, M2b (sums of w (x - mean)^2, or
# the matrices sum w (x - mean)(x - mean)^T) have, together,
#     n = na + nb,  delta = mb - ma,  mean = ma + delta * (nb / n),
#     M2 = M2a + M2b + (na nb / n) delta delta^T.
# chan_factors gives (n, nb / n, na nb / n); chan_merge applies them elementwise. Python reaches
# both through _moments.pyx: naive Bayes merges its (n, mean, M2) tables with merge_moments,
# LinearStats.merge takes merge_factors and applies them with np.outer.

cdef inline void chan_factors(double na, double nb, double *n, double *frac_b,
                              double *cross) noexcept nogil:
    """n = na + nb, frac_b = nb / n (b's share of the merged mean), cross = na nb / n (the
    weight of delta delta^T). An empty side (weight <= 0) leaves the other unchanged."""
    if nb <= 0:
        n[0], frac_b[0], cross[0] = na, 0.0, 0.0
    elif na <= 0:
        n[0], frac_b[0], cross[0] = nb, 1.0, 0.0
    else:
        n[0] = na + nb
        frac_b[0] = nb / n[0]
        cross[0] = na * frac_b[0]


cdef inline void chan_merge(double *n, double *shift, double *mean, double *m2, double nb,
                            double shift_b, double mean_b, double m2b) noexcept nogil:
    """(n, shift, mean, m2) <- the moments of the union with (nb, shift_b, mean_b, m2b).

    Means are relative to their shift (the true mean is shift + mean), so deltas between
    means of data far from 0 are differences of small numbers, computed without cancellation
    (shift_b - shift is exact when the shifts are within a factor 2 of each other). An empty
    a takes b as it is (shift included), so no rounding enters."""
    cdef double tot, frac_b, cross, delta
    if nb <= 0:
        return
    if n[0] <= 0:
        n[0], shift[0], mean[0], m2[0] = nb, shift_b, mean_b, m2b
        return
    chan_factors(n[0], nb, &tot, &frac_b, &cross)
    delta = (shift_b - shift[0]) + (mean_b - mean[0])
    mean[0] += delta * frac_b
    m2[0] += m2b + delta * delta * cross
    n[0] = tot
