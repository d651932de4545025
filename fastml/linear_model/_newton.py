"""Newton-Raphson for logistic regression (001, "Newton-Raphson (segundo orden)"): each step
solves H d = -g for the Hessian H of the regularized mean log-loss, then a backtracking line
search keeps the objective decreasing.

    f(W, b) = (1/S) sum_n s_n loss_n + (alpha/2) ||W||^2,   S = sum_n s_n
    H[(k,i),(l,j)] = (1/S) sum_n s_n p_nk (delta_kl - p_nl) x_ni x_nj + alpha delta_kl delta_ij

with p_nk the probability of the kernel's output k (a sigmoid for two classes, a softmax
otherwise, with a zero margin for the reference class). For two classes this is IRLS: one
X^T diag(s p (1-p)) X.

Passes over X. On dense X the batch kernel (_batch_fast.loss_grad) returns the loss, the
gradient and, when asked, every Hessian block in one pass (csrc/fastml_gram.h: the weighted
Gram at the core's multiply-add rate, threads over the rows, the same bits for any n_jobs).
The Hessian is asked for with a trial point only when it will be needed there: not in the
line search's shorter steps, and not where quadratic convergence predicts the point meets
tol (it is then computed in a pass of its own if the prediction was wrong). On CSR X the
Hessian blocks come from weighted Gram products after one probabilities pass; when K d is
large (FULL_HESSIAN_MAX) H is never formed: truncated conjugate gradients use Hessian-vector
products (two passes over X each) instead (Newton-CG).

Finishing in floating point. Near the optimum the decrease a Newton step makes (about half of
-g.d) falls below the rounding of the objective itself (~1e-16 of f), so "f decreased" stops
meaning anything while the gradient still shrinks quadratically. A step is accepted when f
decreases enough (Armijo), or when f moved by no more than its rounding and the gradient's
norm decreased (the remedy of second-order solvers; scikit-learn's newton-cholesky does the
same); when neither f nor the gradient can show progress the run stops there (converged if
the gradient meets tol, else with a warning that names the floor). The softmax without a
reference class is unchanged by adding one number to every class's intercept (and, with alpha
= 0, one vector to every class's weights): H is singular along those directions. They are
handled exactly: the gradient has no component there, H gets a positive multiple of the
projector onto them (so the factorization is well conditioned instead of succeeding or not
by rounding), and the step's component along them is removed, which keeps the intercepts
(and, with alpha = 0, the weights) summing to 0 over the classes, as L-BFGS and scikit-learn
report them.
"""
import numpy as np
import scipy.linalg

FULL_HESSIAN_MAX = 600      # parameters up to which H is formed and factored (600^3/3 flops)
ARMIJO = 1e-4               # sufficient decrease of the line search
MAX_HALVINGS = 40           # the line search gives up below a step of 2^-40
CG_MAX_ITER = 200
# The objective's rounding, relative to |f|: a mean of per-row losses summed in float64 (each
# within a few ulps, the sums in chunks): measured changes of f under rounding-level moves of
# the weights are ~1e-16 |f|; 64 ulps leaves room for long sums.
ROUNDING = 64 * np.finfo(np.float64).eps


class NewtonProblem:
    """What one Newton solve needs besides the loop: the objective (an _Objective of
    _logistic.py: f and g, and on dense X the Hessian blocks in the same pass), X for the
    CSR Hessian and Newton-CG's products, and how the K outputs map to classes."""

    def __init__(self, objective, X, codes, sw, n_outputs, label_offset, reference, alpha,
                 fit_intercept):
        import scipy.sparse as sp
        self.objective, self.X, self.sw, self.alpha = objective, X, sw, alpha
        self.K, self.d = n_outputs, X.shape[1]
        self.reference, self.fit_intercept = reference, fit_intercept
        self.S = float(sw.sum())
        labels = np.asarray(codes, dtype=np.int64) - label_offset
        self.T = (labels[:, None] == np.arange(self.K)[None, :]).astype(np.float64)
        self.size = self.K * self.d + (self.K if fit_intercept else 0)
        self.forms_hessian = self.size <= FULL_HESSIAN_MAX
        self.fused = self.forms_hessian and not sp.issparse(X)   # H in the kernel's pass
        self.null = self._null_space()

    # ---- evaluations

    def evaluate(self, x, with_hessian=False):
        """(f, g, H) at x in one pass over X; H is None unless asked for and formed there."""
        if with_hessian and self.fused:
            f, g, blocks = self.objective.with_hessian_blocks(x)
            return f, g, self._assemble(blocks / self.S)
        f, g = self.objective(x)
        return f, g, None

    def hessian(self, x):
        """H at x (None when it is not formed: Newton-CG)."""
        if not self.forms_hessian:
            return None
        if self.fused:
            return self.evaluate(x, with_hessian=True)[2]
        P = self.probabilities(x)
        K, q = self.K, self.d + 1
        blocks = np.empty((K * (K + 1) // 2, q, q))
        for k in range(K):
            for l in range(k + 1):
                weights = P[:, k] * (1.0 - P[:, k]) if k == l else -P[:, k] * P[:, l]
                blocks[k * (k + 1) // 2 + l] = weighted_gram(self.X, self.sw * weights)
        return self._assemble(blocks / self.S)

    def _assemble(self, blocks):
        """The (size, size) Hessian of the mean objective from the blocks of pairs (k, l <=
        k) ([X 1]^T C_kl [X 1] / S), in the layout [W.ravel() (K*d), b (K)], plus alpha."""
        K, d = self.K, self.d
        H = np.zeros((self.size, self.size))
        for k in range(K):
            for l in range(k + 1):
                G = blocks[k * (k + 1) // 2 + l]
                self._place(H, G, k, l)
                if k != l:
                    self._place(H, G.T, l, k)
        H[np.arange(K * d), np.arange(K * d)] += self.alpha
        return H

    def _place(self, H, G, k, l):
        """Scatter a (d+1, d+1) Gram block [XtCX, XtC1; 1tCX, 1tC1] into H's layout."""
        d, K = self.d, self.K
        H[k * d:(k + 1) * d, l * d:(l + 1) * d] = G[:d, :d]
        if self.fit_intercept:
            H[k * d:(k + 1) * d, K * d + l] = G[:d, d]
            H[K * d + k, l * d:(l + 1) * d] = G[d, :d]
            H[K * d + k, K * d + l] = G[d, d]

    def unpack(self, x):
        W = x[:self.K * self.d].reshape(self.K, self.d)
        b = x[self.K * self.d:] if self.fit_intercept else np.zeros(self.K)
        return W, b

    def probabilities(self, x):
        """(n, K) probabilities of the outputs at parameters x (one pass over X)."""
        W, b = self.unpack(x)
        M = np.asarray(self.X @ W.T, dtype=np.float64) + b
        top = M.max(axis=1, keepdims=True)
        if self.reference:                       # the reference class has margin 0
            top = np.maximum(top, 0.0)
        E = np.exp(M - top)
        Z = E.sum(axis=1, keepdims=True) + (np.exp(-top) if self.reference else 0.0)
        return E / Z

    def hessian_vector(self, P, v):
        """H v without forming H (two passes over X)."""
        V, vb = self.unpack(v)
        U = np.asarray(self.X @ V.T, dtype=np.float64) + (vb if self.fit_intercept else 0.0)
        R = P * U
        R -= P * R.sum(axis=1, keepdims=True)
        R *= (self.sw / self.S)[:, None]
        out = np.empty(self.size)
        out[:self.K * self.d] = (np.asarray(self.X.T @ R, dtype=np.float64).T
                                 + self.alpha * V).ravel()
        if self.fit_intercept:
            out[self.K * self.d:] = R.sum(axis=0)
        return out

    # ---- the Newton direction

    def _null_space(self):
        """An orthonormal basis (size, m) of the directions the objective is flat along, or
        None: a softmax without a reference class is unchanged by one number added to every
        class's intercept and, with alpha = 0, by one vector added to every class's weights."""
        if self.reference or self.K < 2:
            return None
        K, d = self.K, self.d
        columns = []
        if self.fit_intercept:
            v = np.zeros(self.size)
            v[K * d:] = 1.0
            columns.append(v)
        if self.alpha == 0:
            for j in range(d):
                v = np.zeros(self.size)
                v[j:K * d:d] = 1.0
                columns.append(v)
        return np.column_stack(columns) / np.sqrt(K) if columns else None

    def flat(self, v):
        """v without its component along the flat directions."""
        return v if self.null is None else v - self.null @ (self.null.T @ v)

    def direction(self, x, g, H=None):
        """The Newton direction at x: -H^-1 g in the space the objective is not flat in (H
        at x when given, else computed or, for Newton-CG, applied through products)."""
        g = self.flat(g)                 # zero along the flat directions, but for rounding
        if H is None:
            H = self.hessian(x)
        if H is None:
            P = self.probabilities(x)
            return self.flat(_truncated_cg(lambda v: self.flat(self.hessian_vector(P, v)), g))
        if self.null is not None:        # H + c N N^T: the flat directions get curvature c
            c = max(float(np.trace(H)) / len(H), np.finfo(float).tiny)
            H = H + c * (self.null @ self.null.T)
        return self.flat(solve_spd(H, g))

    def separated(self, x):
        """True when every row's own class has the largest probability: with alpha = 0 the
        likelihood then has no maximum (the weights grow without bound)."""
        P = self.probabilities(x)
        if self.reference:
            P = np.concatenate([1.0 - P.sum(axis=1, keepdims=True), P], axis=1)
            T = np.concatenate([1.0 - self.T.sum(axis=1, keepdims=True), self.T], axis=1)
        else:
            T = self.T
        own = (P * T).sum(axis=1)
        rival = np.where(T > 0, -np.inf, P).max(axis=1)
        return bool(np.all(own > rival))


def weighted_gram(X, weights):
    """[X 1]^T diag(weights) [X 1] ((d+1, d+1)) for CSR X and weights of any sign."""
    n, d = X.shape
    Xw = X.multiply(weights[:, None]).tocsr()
    G = np.empty((d + 1, d + 1))
    G[:d, :d] = np.asarray((X.T @ Xw).todense())
    G[:d, d] = G[d, :d] = np.asarray(Xw.sum(axis=0)).ravel()
    G[d, d] = weights.sum()
    return G


def solve_spd(H, g):
    """-H^-1 g by Cholesky of H scaled to a unit diagonal (the scaling costs nothing and keeps
    the shift below relative to each parameter's own curvature, on columns of any scale), with
    a growing diagonal shift if H is not positive definite in floating point (p(1-p)
    underflowing on separable data)."""
    diag = np.diag(H).copy()
    scale = 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0))
    Hs = H * scale[:, None] * scale[None, :]
    rhs = -g * scale
    shift = 0.0
    for _ in range(20):
        try:
            factor = scipy.linalg.cho_factor(Hs + shift * np.eye(len(Hs)), lower=True,
                                              check_finite=False)
            return scale * scipy.linalg.cho_solve(factor, rhs, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            shift = max(10.0 * shift, 1e-12)
    return scale * rhs


def _truncated_cg(hessp, g):
    """Truncated conjugate gradients for H d = -g, stopped at a residual of
    min(0.5, sqrt(|g|)) |g| (Nocedal & Wright's forcing term: superlinear convergence)."""
    d = np.zeros_like(g)
    r = -g.copy()
    p = r.copy()
    rr = float(r @ r)
    stop = min(0.5, np.sqrt(np.sqrt(rr))) * np.sqrt(rr)
    for _ in range(CG_MAX_ITER):
        if np.sqrt(rr) <= stop:
            break
        Hp = hessp(p)
        curvature = float(p @ Hp)
        if curvature <= 0:                     # not positive definite along p: stop here
            return d if d.any() else -g
        a = rr / curvature
        d += a * p
        r -= a * Hp
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return d


def _meets_tol_next(history, tol):
    """Whether quadratic convergence predicts the next full step's point meets tol, from
    max|g| at the current point and before the full step that led to it (g_k ~ M g_{k-1}^2,
    so g_{k+1} ~ g_k^3 / g_{k-1}^2), with a 10x margin: its Hessian is then not computed
    with it."""
    if len(history) < 2 or not history[-1] < history[-2]:
        return False
    previous, last = history[-2], history[-1]
    return last ** 3 / previous ** 2 <= 0.1 * tol


def newton_minimize(problem, x, *, max_iter, tol, on_iteration=None):
    """Newton's method with a backtracking line search that knows the objective's rounding
    (see the module's docstring), from x; stops when max|g| <= tol.

    `problem` is a NewtonProblem or any object with its protocol (a summed objective over
    chunks or partitions can provide one): evaluate(x, with_hessian) -> (f, g, H or None),
    direction(x, g, H) -> the step, `alpha` and separated(x).

    Returns (x, iterations, objective per iteration, status, separated): status is
    "converged", "max_iter" or "floor" (floating point stopped the run with max|g| > tol);
    `separated` when alpha = 0 and every row is classified correctly (the
    maximum-likelihood weights are infinite)."""
    f, g, H = problem.evaluate(x, with_hessian=True)
    curve, full_steps, it, status = [], [], 0, "max_iter"
    while True:
        gmax = float(np.max(np.abs(g))) if len(g) else 0.0
        if gmax <= tol:
            status = "converged"
            break
        if it == max_iter:
            break
        direction = problem.direction(x, g, H)
        slope = float(g @ direction)
        if not slope < 0:                      # numerically not a descent direction
            direction, slope = -g, -float(g @ g)
        with_hessian = not _meets_tol_next(full_steps + [gmax], tol)
        accepted = _line_search(problem, x, f, g, direction, slope, with_hessian)
        if accepted is None:
            status = "floor"
            break
        step, x, f, g, H = accepted
        it += 1
        curve.append(f)
        full_steps = full_steps + [gmax] if step == 1.0 else []
        if on_iteration is not None:
            on_iteration(f, float(np.max(np.abs(g))) if len(g) else 0.0)
    separated = problem.alpha == 0 and problem.separated(x)
    return x, it, curve, status, separated


def _line_search(problem, x, f, g, direction, slope, with_hessian):
    """Backtrack from the full step: (step, x, f, g, H) of the accepted point (H only when
    asked for and the full step was taken), or None when no step can show progress in
    floating point.

    f resolves a step's change only above its rounding (noise): where the predicted change
    -step g.d or the observed one is below it, the gradient decides (its norm must fall, and
    f may not rise past a few times the noise, which rounding alone does not reach); where
    the predicted change is below it and the gradient did not fall, shorter steps cannot do
    better: the floor."""
    norm = float(np.abs(g).sum())
    step = 1.0
    for _ in range(MAX_HALVINGS):
        x_new = x + step * direction
        f_new, g_new, H_new = problem.evaluate(x_new, with_hessian and step == 1.0)
        if np.isfinite(f_new):
            if f_new <= f + ARMIJO * step * slope:
                return step, x_new, f_new, g_new, H_new
            noise = ROUNDING * max(abs(f), abs(f_new))
            unresolved = -step * slope <= noise
            if unresolved or abs(f_new - f) <= noise:
                if f_new <= f + 16 * noise and float(np.abs(g_new).sum()) < norm:
                    return step, x_new, f_new, g_new, H_new
                if unresolved:
                    return None
        step *= 0.5
    return None
