from libc.stdint cimport int32_t, int64_t, uint64_t

# The two special category codes every categorical kernel shares (fastml/_tabular.py assigns
# them; _encode.pyx exports them to Python as MISSING and UNSEEN).
cdef enum:
    MISSING_CODE = -1   # a missing cell: skipped (004: "ignore the instance")
    UNSEEN_CODE = -2    # a level never seen at fit


ctypedef fused int_t:     # the integer matrices _tabular.py passes (it converts the others)
    int32_t
    int64_t


cdef inline uint64_t distance(int64_t x, int64_t lo) noexcept nogil:
    """x - lo for x >= lo, exact over the whole int64 range (as uint64: the signed difference
    overflows when x and lo are far apart, which C leaves undefined)."""
    return <uint64_t> x - <uint64_t> lo
