# The seeded xoshiro256** generator from csrc/fastml_rng.h; each kernel/thread owns a state.
from libc.stdint cimport uint64_t

cdef extern from "fastml_rng.h" nogil:
    ctypedef struct fastml_rng:
        uint64_t s[4]
    void fastml_rng_seed(fastml_rng *r, uint64_t seed) noexcept
    uint64_t fastml_rng_next(fastml_rng *r) noexcept
    uint64_t fastml_rng_below(fastml_rng *r, uint64_t n) noexcept
    double fastml_rng_uniform(fastml_rng *r) noexcept
