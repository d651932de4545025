"""The compiled core: typed Cython kernels (one .pyx per algorithm family) and the .pxd
declarations they share (C helpers from csrc/, BLAS wrappers, fused float types)."""
