# Software prefetch from csrc/fastml_prefetch.h (see there for why shuffled row orders need it).
cdef extern from "fastml_prefetch.h" nogil:
    void fastml_prefetch_range(const void *start, size_t n_bytes) noexcept
