# Stable scalar math from csrc/fastml_math.h (see the header for why each form is stable).
cdef extern from "fastml_math.h" nogil:
    double fastml_logistic_loss_dloss(double m, double t, double *dloss) noexcept
