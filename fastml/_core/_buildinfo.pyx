# How the compiled kernels were built, read from the compiler itself (for fastml.show_config).
#
# It is compiled with exactly the flags and headers every kernel gets (setup.py builds every
# .pyx alike), so what it reports is what the kernels have: whether OpenMP was on, how many
# threads OpenMP would give a kernel, and which SIMD clones the csrc/ headers asked for.
from fastml._core._csrc cimport fastml_max_threads

cdef extern from *:
    """
    #include "fastml_simd.h"
    #include "fastml_kernel_rows.h"
    #define FASTML_STR_(x) #x
    #define FASTML_STR(x) FASTML_STR_(x)
    #ifdef _OPENMP
    static long fastml_openmp_version(void) { return (long)_OPENMP; }
    #else
    static long fastml_openmp_version(void) { return 0; }
    #endif
    /* The attribute text the headers expand to: empty where no clones are built. */
    static const char *fastml_simd_attr = FASTML_STR(FASTML_CLONES);
    static const char *fastml_avx512_attr = FASTML_STR(FASTML_AVX512);
    /* The clone the loader picks on this CPU (same order of preference as the clones). */
    static const char *fastml_cpu_simd(void) {
    #if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return "avx512f";
        if (__builtin_cpu_supports("avx2")) return "avx2";
    #endif
        return "default";
    }
    """
    long fastml_openmp_version() noexcept nogil
    const char *fastml_simd_attr
    const char *fastml_avx512_attr
    int fastml_cpu_has_avx512() noexcept nogil
    const char *fastml_cpu_simd() noexcept nogil


def openmp_version():
    """The `_OPENMP` date the kernels were compiled with (e.g. 201511), or 0 for a serial build."""
    return int(fastml_openmp_version())


def openmp_max_threads():
    """OpenMP's `omp_get_max_threads()` as the kernels see it (1 in a serial build)."""
    return int(fastml_max_threads())


def simd_clone_attributes():
    """{header macro: the attribute it expands to}; an empty string where no clones are built."""
    return {"FASTML_CLONES": fastml_simd_attr.decode(),
            "FASTML_AVX512": fastml_avx512_attr.decode()}


def cpu_simd():
    """The best of avx512f / avx2 / default this CPU supports (x86-64 GCC builds; else default)."""
    return fastml_cpu_simd().decode()


def avx512_copy_runs():
    """Whether the AVX-512 copies run here (csrc/fastml_avx512.h: built, this CPU has AVX-512F
    and FMA, and FASTML_DISABLE_AVX512 is not set)."""
    return bool(fastml_cpu_has_avx512())
