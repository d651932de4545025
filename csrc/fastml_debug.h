/* Debug-only index checks for raw-pointer loops. Cython's boundscheck (on in the debug build)
 * reaches memoryview indexing only; a kernel that walks a pointer calls fastml_check_index(i, n)
 * where it relies on 0 <= i < n. The debug build (FASTML_DEBUG=1 in setup.py) defines
 * FASTML_DEBUG and the check aborts with the file and line; the release build compiles it away. */
#ifndef FASTML_DEBUG_H
#define FASTML_DEBUG_H

#ifdef FASTML_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define fastml_check_index(i, n)                                                              \
    do {                                                                                      \
        long long fastml_i_ = (long long)(i), fastml_n_ = (long long)(n);                      \
        if (fastml_i_ < 0 || fastml_i_ >= fastml_n_) {                                         \
            fprintf(stderr, "fastml debug build: index %lld outside [0, %lld) at %s:%d\n",     \
                    fastml_i_, fastml_n_, __FILE__, __LINE__);                                 \
            abort();                                                                          \
        }                                                                                     \
    } while (0)
#else
#define fastml_check_index(i, n) ((void)0)
#endif

#endif
