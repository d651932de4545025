"""What two or more families share at the compiled level, and nothing else.

- ``_csrc.pxd``: the Cython declarations of every C helper in ``csrc/`` (stable logistic loss,
  the seeded RNG, prefetch, SIMD clones, OpenMP's thread count).
- ``_blas.pxd``: float32/float64 BLAS through scipy's ``cython_blas``.
- ``_typedefs.pxd``: the one integer type for counts and indices (int64 on every platform).
- ``_encode.pyx`` / ``_encode.pxd``: integer categorical columns to codes, for ``_tabular.py``,
  and the MISSING / UNSEEN codes that every categorical kernel reads.
- ``_moments.pyx`` / ``_moments.pxd``: Chan's merge of weighted (n, mean, M2), the one copy used
  by the naive Bayes kernel, naive Bayes' ``partial_fit`` and ``LinearStats.merge``.
- ``_posterior.pyx``: class scores to (log) posteriors in one call (the log-softmax of naive
  Bayes and the multiclass linear classifiers, the binary logistic's stable sigmoid), and the
  NaN check of the linear classifiers' margins: a one-row predict costs its numpy calls.

Each family keeps its own kernels beside its driver: ``linear_model/*_fast.pyx``,
``tree/_builder_fast.pyx`` + ``tree/_tree_fast.pyx``, ``naive_bayes/_nb_fast.pyx``.

The kernels' contract with their callers (every kernel follows it):
- A ``def`` kernel checks at entry the shapes its loops rely on (O(1) checks that raise
  ValueError), so a driver bug can never make it read or write outside an array.
- It trusts the values that validation guarantees (finite floats, CSR indices inside
  [0, n_features), category codes inside their table): ``fastml/_validation.py`` and
  ``fastml/_tabular.py`` check those once per call, in Python, before any kernel runs.
- The debug build (``FASTML_DEBUG=1``) checks those values too: Cython's bounds checks on
  memoryviews, and ``fastml_check_index`` (csrc/fastml_debug.h) in raw-pointer loops.
"""
