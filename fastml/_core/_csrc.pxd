# Cython declarations of the C helpers in csrc/ (one file for all of them; see each header for
# why its code is in C and why each form is numerically stable or fast).
from libc.stdint cimport int64_t, uint64_t

# Stable scalar math (csrc/fastml_math.h).
cdef extern from "fastml_math.h" nogil:
    double fastml_logistic_loss_dloss(double m, double t, double *dloss) noexcept
    double fastml_logistic_loss_but_log1p(double m, double t, double *dloss,
                                          double *e) noexcept

# log of the chi-square survival function (csrc/fastml_chi2.h): the binary-split tree builder's
# attribute selection.
cdef extern from "fastml_chi2.h" nogil:
    double fastml_chi2_logsf(double x, double df) noexcept

# Software prefetch (csrc/fastml_prefetch.h): shuffled row orders defeat the hardware prefetcher.
cdef extern from "fastml_prefetch.h" nogil:
    void fastml_prefetch_range(const void *start, size_t n_bytes) noexcept

# The seeded xoshiro256** generator (csrc/fastml_rng.h); each kernel/thread owns a state.
cdef extern from "fastml_rng.h" nogil:
    ctypedef struct fastml_rng:
        uint64_t s[4]
    void fastml_rng_seed(fastml_rng *r, uint64_t seed) noexcept
    uint64_t fastml_rng_next(fastml_rng *r) noexcept
    uint64_t fastml_rng_below(fastml_rng *r, uint64_t n) noexcept
    double fastml_rng_uniform(fastml_rng *r) noexcept

# AVX2 and baseline clones (csrc/fastml_simd.h): the batch kernel's block loops (G += R^T X,
# M = X W^T + b) and the SGD step's dot and axpy; csrc/fastml_batch.h: the logistic loss
# vectorized across rows.
cdef extern from "fastml_simd.h" nogil:
    ctypedef struct fastml_prefetch_cursor:
        const char *next
        const char *end
        const char *limit
    void fastml_xt_r_f64(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const double *X,
                         const double *R, double *G, fastml_prefetch_cursor *c) noexcept
    void fastml_xt_r_f32(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const float *X,
                         const double *R, double *G, fastml_prefetch_cursor *c) noexcept
    void fastml_margins_f64(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const double *X,
                            const double *W, const double *b, double *M,
                            fastml_prefetch_cursor *c) noexcept
    void fastml_margins_f32(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const float *X,
                            const double *W, const double *b, double *M,
                            fastml_prefetch_cursor *c) noexcept
    # the multinomial kernel's loops: M and R output-major (K, n_rows), the same sums
    void fastml_margins_cols_f32(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const float *X,
                                 const double *W, const double *b, double *M,
                                 fastml_prefetch_cursor *c) noexcept
    void fastml_xt_r_cols_f32(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const float *X,
                              const double *R, double *G, fastml_prefetch_cursor *c) noexcept
    void fastml_widen_f32(Py_ssize_t n, const float *X, double *out,
                          fastml_prefetch_cursor *c) noexcept
    double fastml_row_dot_f64(const double *x, const double *w, Py_ssize_t n) noexcept
    double fastml_row_dot_f32(const float *x, const float *w, Py_ssize_t n) noexcept
    double fastml_row_dot_f32_f64(const float *x, const double *a, Py_ssize_t n) noexcept
    void fastml_axpy_f64(double c, const double *x, double *w, Py_ssize_t n) noexcept
    void fastml_axpy_f32(double c, const float *x, float *w, Py_ssize_t n) noexcept
    void fastml_axpy_acc_f64(double c, const double *x, double *a, Py_ssize_t n) noexcept
    void fastml_axpy_acc_f32(double c, const float *x, double *a, Py_ssize_t n) noexcept

# The multinomial kernel's float64 loops: an AVX-512 copy where the CPU has it, else the
# portable one (csrc/fastml_batch_avx512.h, csrc/fastml_avx512.h).
cdef extern from "fastml_batch_avx512.h" nogil:
    void fastml_margins_cols_f64(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K,
                                 const double *X, const double *W, const double *b, double *M,
                                 fastml_prefetch_cursor *c) noexcept
    void fastml_xt_r_cols_f64(Py_ssize_t n_rows, Py_ssize_t d, Py_ssize_t K, const double *X,
                              const double *R, double *G, fastml_prefetch_cursor *c) noexcept

# Newton's Hessian blocks U += sign T^T T without BLAS: AVX-512, AVX2 + FMA or plain loops
# (csrc/fastml_gram.h).
cdef extern from "fastml_gram.h" nogil:
    Py_ssize_t fastml_gram_stride(Py_ssize_t q) noexcept
    int fastml_gram_copy() noexcept
    void fastml_gram_upper(const double *T, Py_ssize_t rows, Py_ssize_t s, double sign,
                           double *U, int copy) noexcept

# Whether this module's AVX-512 copies run (the CPU, FASTML_DISABLE_AVX512; csrc/fastml_avx512.h).
cdef extern from "fastml_avx512.h" nogil:
    int fastml_cpu_has_avx512() noexcept

cdef extern from "fastml_batch.h" nogil:
    double fastml_logistic_block(Py_ssize_t n_rows, const double *M, const double *y,
                                 const double *sw, double positive, double *R,
                                 double *L) noexcept
    double fastml_softmax_block(Py_ssize_t n_rows, Py_ssize_t K, const double *M,
                                const double *y, const double *sw, int offset, int reference,
                                double *R, double *L, double *E, double *S) noexcept
    double fastml_softmax_block_cols(Py_ssize_t n_rows, Py_ssize_t K, const double *M,
                                     const double *y, const double *sw, int offset,
                                     int reference, double *R, double *L, double *E,
                                     double *S, double *code) noexcept
    double fastml_weighted_log1p_sum(Py_ssize_t n, double *e, const double *w) noexcept
    void fastml_logistic_curvature(Py_ssize_t n_rows, Py_ssize_t K, const double *M,
                                   const double *sw, int reference, double *C,
                                   double *E) noexcept

# AdaGrad's per-coordinate step (csrc/fastml_adagrad.h).
cdef extern from "fastml_adagrad.h" nogil:
    double fastml_adagrad_rate(double G, float eps) noexcept
    void fastml_adagrad_f64(const double *x, double dl, double *w, double *G, double *A,
                            Py_ssize_t n, double alpha, double eta0, double eps,
                            double B) noexcept
    void fastml_adagrad_f32(const float *x, double dl, float *w, double *G, double *A,
                            Py_ssize_t n, double alpha, double eta0, double eps,
                            double B) noexcept
    double fastml_adagrad_dot_f64(const double *x, double dl, double *w, double *G,
                                  Py_ssize_t n, double alpha, double eta0, double eps,
                                  const double *x_next) noexcept
    double fastml_adagrad_dot_f32(const float *x, double dl, float *w, double *G,
                                  Py_ssize_t n, double alpha, double eta0, double eps,
                                  const float *x_next) noexcept
    void fastml_adagrad_grad_f64(double *grad, const char *touched, double *w, double *G,
                                 double *A, Py_ssize_t n, double alpha, double eta0,
                                 double eps, double B) noexcept
    void fastml_adagrad_grad_f32(double *grad, const char *touched, float *w, double *G,
                                 double *A, Py_ssize_t n, double alpha, double eta0,
                                 double eps, double B) noexcept

# exp over the whole double range, four lanes at a time; tanh(a x + b) on top of it
# (csrc/fastml_vexp.h).
cdef extern from "fastml_vexp.h" nogil:
    void fastml_exp_array(const double *x, double *out, Py_ssize_t n) noexcept
    void fastml_tanh_rows_f64(const double *x, double *out, Py_ssize_t n, double a,
                              double b) noexcept
    void fastml_tanh_rows_f32(const float *x, float *out, Py_ssize_t n, double a,
                              double b) noexcept

# The kernel perceptron's kernel values and fused predict, the voted perceptron's votes
# (csrc/fastml_kernel_rows.h).
cdef extern from "fastml_kernel_rows.h" nogil:
    ctypedef struct fastml_kernel_spec:
        int kind, degree
        double gamma, coef0, sq_max
    void fastml_kernel_decide(const double *X, Py_ssize_t n, Py_ssize_t d, const double *pack,
                              Py_ssize_t m_pad, Py_ssize_t K, const fastml_kernel_spec *k,
                              int wide, double *scores) noexcept
    void fastml_voted_votes(const double *X, Py_ssize_t n, Py_ssize_t d, const double *pack,
                            Py_ssize_t m_pad, const int64_t *starts, Py_ssize_t K,
                            double *votes) noexcept
    void fastml_rbf_rows_f64(double *out, Py_ssize_t n_a, Py_ssize_t n_b, const double *sq_a,
                             const double *sq_b, double gamma) noexcept
    void fastml_rbf_rows_f32(float *out, Py_ssize_t n_a, Py_ssize_t n_b, const double *sq_a,
                             const double *sq_b, double gamma) noexcept

# Debug-only index check for raw-pointer loops (csrc/fastml_debug.h): aborts in the
# FASTML_DEBUG=1 build when i is outside [0, n), compiles to nothing in the release build.
cdef extern from "fastml_debug.h" nogil:
    void fastml_check_index(Py_ssize_t i, Py_ssize_t n) noexcept

# OpenMP's thread count, 1 in a build without OpenMP.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int fastml_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int fastml_max_threads(void) { return 1; }
    #endif
    """
    int fastml_max_threads() noexcept nogil

# shuffle="block"'s epoch order, seeded once per epoch (csrc/fastml_shuffle.h).
cdef extern from "fastml_shuffle.h" nogil:
    void fastml_block_order(uint64_t seed, Py_ssize_t n, Py_ssize_t block, Py_ssize_t *order,
                            Py_ssize_t *blocks) noexcept
