"""What two or more families share at the compiled level, and nothing else.

- ``_csrc.pxd``: the Cython declarations of every C helper in ``csrc/`` (stable logistic loss,
  the seeded RNG, prefetch, SIMD clones, OpenMP's thread count).
- ``_blas.pxd``: float32/float64 BLAS through scipy's ``cython_blas``.
- ``_typedefs.pxd``: the one integer type for counts and indices (int64 on every platform).
- ``_encode.pyx`` / ``_encode.pxd``: integer categorical columns to codes, for ``_tabular.py``,
  and the MISSING / UNSEEN codes that every categorical kernel reads.

Each family keeps its own kernels beside its driver: ``linear_model/*_fast.pyx``,
``tree/_builder_fast.pyx``, ``naive_bayes/_nb_fast.pyx``.

Kernels trust their caller: the Python driver validates shapes, dtypes, finiteness and index
ranges once (``fastml/_validation.py``, ``fastml/_tabular.py``) and a kernel never re-checks
them, so its loops stay free of Python. The debug build (``FASTML_DEBUG=1``) turns on Cython's
bounds checks for memoryviews and the kernels' own debug-only asserts on raw-pointer indices.
"""
