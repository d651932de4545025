"""Newton-Raphson for logistic regression (001, "Newton-Raphson (segundo orden)"): each step
solves H d = -g for the Hessian H of the regularized mean log-loss, then a backtracking line
search keeps the objective decreasing.

    f(W, b) = (1/S) sum_n s_n loss_n + (alpha/2) ||W||^2,   S = sum_n s_n
    H[(k,i),(l,j)] = (1/S) sum_n s_n p_nk (delta_kl - p_nl) x_ni x_nj + alpha delta_kl delta_ij

with p_nk the probability of the kernel's output k (a sigmoid for two classes, a softmax
otherwise, with a zero margin for the reference class). For two classes this is IRLS: one
X^T diag(s p (1-p)) X. Each Hessian block is one weighted Gram pass over X, the blocked
`syrk` accumulation of the normal equations (_regression_fast.gram_accumulate) with the
weights s p_k p_l. When K d is large the Hessian is never formed: truncated conjugate
gradients use Hessian-vector products (two passes over X each) instead (Newton-CG).

For two classes on dense X a step reads X once: _newton_fast.irls_pass returns the loss,
gradient and Hessian of one pass (margins, stable loss, syrk and gemv on each cached block).
Otherwise the objective and gradient come from the batch kernel (one fused pass), as for
"gd"/"lbfgs", and the Hessian from one weighted Gram pass per block.
"""
import numpy as np
import scipy.linalg

FULL_HESSIAN_MAX = 600      # parameters up to which H is formed and factored (600^3/3 flops)
ARMIJO = 1e-4               # sufficient decrease of the line search
MAX_HALVINGS = 40           # the line search gives up below a step of 2^-40
CG_MAX_ITER = 200


class NewtonProblem:
    """The data one Newton solve needs besides the objective: X, the kernel's label codes,
    the weights, and how the K outputs map to classes (see _logistic._Layout)."""

    def __init__(self, X, codes, sw, n_outputs, label_offset, reference, alpha,
                 fit_intercept, n_threads=1):
        self.X, self.sw, self.alpha, self.n_threads = X, sw, alpha, n_threads
        self.K, self.d = n_outputs, X.shape[1]
        self.reference, self.fit_intercept = reference, fit_intercept
        self.S = float(sw.sum())
        labels = np.asarray(codes, dtype=np.int64) - label_offset
        self.T = (labels[:, None] == np.arange(self.K)[None, :]).astype(np.float64)
        self.size = self.K * self.d + (self.K if fit_intercept else 0)

    @property
    def one_pass(self):
        """Two classes on dense X: a step's loss, gradient and Hessian come from one pass."""
        import scipy.sparse as sp
        return self.K == 1 and self.reference and not sp.issparse(self.X)

    def evaluate(self, x):
        """(f, g, H) of the regularized mean objective at x from one irls_pass over X."""
        from ._newton_fast import irls_pass
        d, q = self.d, self.d + 1
        W, b = self.unpack(x)
        H, g = np.empty((q, q)), np.empty(q)
        loss = irls_pass(self.X, self._targets, self.sw, np.ascontiguousarray(W[0]),
                         float(b[0]), H, g, self.n_threads)
        H /= self.S
        g /= self.S
        H[np.arange(d), np.arange(d)] += self.alpha
        g[:d] += self.alpha * W[0]
        f = loss / self.S + 0.5 * self.alpha * float(W[0] @ W[0])
        if not self.fit_intercept:
            H, g = H[:d, :d], g[:d]
        return f, g, H

    @property
    def _targets(self):
        return np.ascontiguousarray(self.T[:, 0])

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

    def hessian(self, P):
        """The full (size, size) Hessian: one weighted Gram pass per block (k, l <= k)."""
        K, d, q = self.K, self.d, self.d + (1 if self.fit_intercept else 0)
        H = np.zeros((self.size, self.size))
        for k in range(K):
            for l in range(k + 1):
                weights = P[:, k] * (1.0 - P[:, k]) if k == l else P[:, k] * P[:, l]
                G = weighted_gram(self.X, self.sw * weights) / self.S
                if k != l:
                    G = -G                      # off-diagonal blocks: -p_k p_l <= 0
                self._place(H, G, k, l, q)
                if k != l:
                    self._place(H, G.T, l, k, q)
        H[np.arange(K * d), np.arange(K * d)] += self.alpha
        return H

    def _place(self, H, G, k, l, q):
        """Scatter a (d+1, d+1) Gram block [XtCX, XtC1; 1tCX, 1tC1] into H's layout
        [W.ravel() (K*d), b (K)]."""
        d, K = self.d, self.K
        H[k * d:(k + 1) * d, l * d:(l + 1) * d] = G[:d, :d]
        if q > d:
            H[k * d:(k + 1) * d, K * d + l] = G[:d, d]
            H[K * d + k, l * d:(l + 1) * d] = G[d, :d]
            H[K * d + k, K * d + l] = G[d, d]

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

    def symmetric(self, direction):
        """The direction with its component along the objective's flat directions removed.
        A softmax (no reference class) is unchanged by adding one number to every class's
        intercept (and, with alpha = 0, one vector to every class's weights), so H is singular
        there; a Cholesky that succeeds in floating point anyway returns an arbitrary
        component along it, which moved the intercepts by ~10 on iris (probabilities equal).
        Removing it keeps the iterates where lbfgs and gd stay (they start at 0 and their
        gradients sum to 0 over the classes) and where scikit-learn reports them: intercepts
        (and, with alpha = 0, weights) summing to 0 over the classes."""
        if self.reference or self.K < 2:
            return direction
        direction = direction.copy()
        W, b = self.unpack(direction)           # views into the copy
        if self.fit_intercept:
            b -= b.mean()
        if self.alpha == 0:
            W -= W.mean(axis=0)
        return direction

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
    """[X 1]^T diag(weights) [X 1] ((d+1, d+1)) for weights >= 0, dense or CSR X."""
    import scipy.sparse as sp
    n, d = X.shape
    if sp.issparse(X):
        Xw = X.multiply(weights[:, None]).tocsr()
        G = np.empty((d + 1, d + 1))
        G[:d, :d] = np.asarray((X.T @ Xw).todense())
        G[:d, d] = G[d, :d] = np.asarray(Xw.sum(axis=0)).ravel()
        G[d, d] = weights.sum()
        return G
    from ._regression_fast import gram_accumulate
    G = np.zeros((d + 1, d + 1))
    gram_accumulate(X, np.empty((n, 0)), np.ascontiguousarray(weights, dtype=np.float64),
                    np.zeros(d), np.zeros(0), G)
    return G


def newton_direction(problem, P, g):
    """Solve H d = -g: Cholesky of the full Hessian when it is small, truncated conjugate
    gradients on H v products otherwise."""
    if problem.size <= FULL_HESSIAN_MAX:
        return solve_spd(problem.hessian(P), g)
    return _truncated_cg(lambda v: problem.hessian_vector(P, v), g)


def solve_spd(H, g):
    """-H^-1 g by Cholesky, with a growing diagonal shift if H is not positive definite in
    floating point (p(1-p) underflowing on separable data, or the multinomial intercepts'
    flat direction)."""
    shift = 0.0
    scale = max(float(np.max(np.abs(np.diag(H)))), np.finfo(float).tiny)
    for _ in range(20):
        try:
            factor = scipy.linalg.cho_factor(H + shift * np.eye(len(H)), lower=True,
                                             check_finite=False)
            return scipy.linalg.cho_solve(factor, -g, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            shift = max(10.0 * shift, 1e-12 * scale)
    return -g / scale


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


def newton_minimize(fun, problem, x, *, max_iter, tol, on_iteration=None):
    """Newton's method with a backtracking (Armijo) line search, from x.

    fun(x) -> (f, g) is the objective; stops when max|g| <= tol. Returns (x, iterations,
    objective per iteration, converged, separated) - `separated` when alpha = 0 and every
    row is classified correctly (the maximum-likelihood weights are infinite)."""
    if problem.one_pass:                    # (f, g, H) in one read of X
        def evaluate(x):
            f, g, H = problem.evaluate(x)
            return f, g, lambda: solve_spd(H, g)
    else:                                   # (f, g) now; the Hessian passes only if used
        def evaluate(x):
            f, g = fun(x)
            return f, g, lambda: newton_direction(problem, problem.probabilities(x), g)
    f, g, direction_of = evaluate(x)
    curve, converged, it = [], False, 0
    for it in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= tol:
            converged, it = True, it - 1
            break
        direction = problem.symmetric(direction_of())
        slope = float(g @ direction)
        if slope >= 0:                         # numerically not a descent direction
            direction, slope = -g, -float(g @ g)
        step = 1.0
        for _ in range(MAX_HALVINGS):
            f_new, g_new, direction_new = evaluate(x + step * direction)
            if np.isfinite(f_new) and f_new <= f + ARMIJO * step * slope:
                break
            step *= 0.5
        else:                                  # no decrease is representable: at the optimum
            converged = np.max(np.abs(g)) <= max(tol, 1e-12)
            break
        x, f, g, direction_of = x + step * direction, f_new, g_new, direction_new
        curve.append(f)
        if on_iteration is not None:
            on_iteration(f, float(np.max(np.abs(g))))
    else:
        converged = np.max(np.abs(g)) <= tol
    separated = problem.alpha == 0 and problem.separated(x)
    return x, it, curve, converged, separated
