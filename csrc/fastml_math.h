/* Numerically stable scalar functions shared by the kernels.
 *
 * sigmoid(z) = 1 / (1 + e^-z) and log1pexp(z) = log(1 + e^z) are evaluated so that no
 * exponential ever overflows: for z >= 0 we use e^-z (in (0, 1]), for z < 0 we use e^z.
 * Both are exact to the last bit or two of double precision at any |z| (1e4 included).
 */
#ifndef FASTML_MATH_H
#define FASTML_MATH_H

#include <math.h>

static inline double fastml_sigmoid(double z) {
    if (z >= 0.0) {
        return 1.0 / (1.0 + exp(-z));
    } else {
        double e = exp(z);
        return e / (1.0 + e);
    }
}

/* log(1 + e^z): for large z it is z + log1p(e^-z); for very negative z it is e^z. */
static inline double fastml_log1pexp(double z) {
    if (z > 0.0) {
        return z + log1p(exp(-z));
    } else {
        return log1p(exp(z));
    }
}

#endif
