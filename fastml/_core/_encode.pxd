# The two special category codes every categorical kernel shares (fastml/_tabular.py assigns
# them; _encode.pyx exports them to Python as MISSING and UNSEEN).
cdef enum:
    MISSING_CODE = -1   # a missing cell: skipped (004: "ignore the instance")
    UNSEEN_CODE = -2    # a level never seen at fit
