# The integer types of the kernels: one type for counts and indices everywhere (int64 on every
# platform; C's `long` is 32 bits on Windows), numpy's np.int64 on the Python side.
from libc.stdint cimport int64_t

ctypedef int64_t count_t    # counts of rows / samples, class counts
ctypedef int64_t index_t    # row and node indices, offsets into tables
