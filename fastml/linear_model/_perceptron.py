"""The perceptron family of lecture 003: the perceptron (plain and averaged), Freund & Schapire's
voted perceptron, and the kernelized perceptron.

The linear learners run the one SGD loop (fastml/linear_model/_sgd_fast.pyx): 003's "Perceptron & Stochastic
Gradient Descent" shows the perceptron update w <- w + 1[y (w.x) <= 0] y x is SGD on the hinge
at margin 0, max(0, -y w.x), with step size 1. That is the loop with loss="perceptron",
learning_rate="constant", eta0=1, alpha=0 (the intercept is the weight of 003's x_0 = 1).
Several classes are learned one-vs-rest: one perceptron per class, each with its own mistakes.
"""
import numpy as np

from .._base import BaseEstimator, ClassifierMixin
from .._validation import (check_array, check_n_jobs, check_param, check_random_state,
                           check_sample_weight, check_X_y, state_array, state_count)
from ._base import (LinearClassifierMixin, OutputLayout, check_float_array, check_sgd_engine,
                    iterate, start_partial_fit)
from ._sgd import SGDEngine, run_epochs


class _OnlineLinearClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """fit / partial_fit of a one-vs-rest linear classifier on the shared SGD loop.

    Subclasses give `_engine_options()` (loss, learning_rate, eta0, alpha) and may check their
    own parameters in `_check_params`; they need max_iter, tol, n_iter_no_change, shuffle,
    average, fit_intercept, random_state and verbose attributes.
    """

    _accepts_sparse = True
    _stop_without_updates = False   # the perceptron: a mistake-free epoch means converged

    def fit(self, X, y, sample_weight=None):
        """Learn from X (dense or CSR) and labels y of any type, starting from w = 0."""
        self._check_params()
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True)
        codes = self._encode_labels(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self._engine = None
        self._run(X, codes, sw, self.max_iter, resume=False)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over (X, y) continuing from the current weights (online learning).
        `classes` (every label that will ever appear) is required on the first call."""
        self._check_params()
        X, codes, sw, first = start_partial_fit(self, X, y, classes, sample_weight)
        self._run(X, codes, sw, 1, resume=not first)
        return self

    def _check_params(self):
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("tol", self.tol, low=0.0, allow_none=True)
        check_param("n_iter_no_change", self.n_iter_no_change, low=1, integer=True)
        if not isinstance(self.average, (bool, np.bool_)):
            check_param("average", self.average, low=1, integer=True)

    def _new_engine(self, X):
        layout = OutputLayout(len(self.classes_))
        return SGDEngine(layout.n_outputs, X.shape[1], X.dtype, fit_intercept=self.fit_intercept,
                         average=self.average, label_offset=layout.label_offset,
                         **self._engine_options())

    def _run(self, X, codes, sw, epochs, resume):
        if not resume:
            self._rng = check_random_state(self.random_state)
            self._engine = self._new_engine(X)
            self._epochs_done = 0
            self.loss_curve_ = []
        engine = self._engine
        n_iter, curve = run_epochs(
            engine, X, OutputLayout(len(self.classes_)).targets(codes), sw, max_iter=epochs,
            tol=self.tol if epochs > 1 else None, n_iter_no_change=self.n_iter_no_change,
            shuffle=self.shuffle, rng=self._rng, verbose=self.verbose,
            name=type(self).__name__, first_epoch=self._epochs_done,
            stop_without_updates=self._stop_without_updates and epochs > 1)
        self._epochs_done += n_iter
        self.coef_ = engine.coef()
        self.intercept_ = engine.intercept()
        self.n_iter_ = self._epochs_done
        self.t_ = engine.n_steps
        self.loss_curve_ = self.loss_curve_ + curve


class Perceptron(_OnlineLinearClassifier):
    """Rosenblatt's perceptron (003): on a mistake, y (w.x) <= 0, w <- w + y x; step 1.

    Parameters
    ----------
    max_iter : int, default 1000
        Epochs (passes over the data). Training stops earlier after an epoch without a
        mistake (converged: the data are separated) or when the mean perceptron loss has not
        improved by `tol` for `n_iter_no_change` epochs.
    tol : float or None, default 1e-3
        None or 0 disables the loss criterion.
    n_iter_no_change : int, default 5
    shuffle : bool, default True
        Visit the rows in a new random order each epoch (False: the given order).
    average : bool or int, default False
        Report the averaged weight vector (003: "report averaged weights"): the mean of w after
        every step (every example), kept lazily in O(nnz(x)) per mistake. An int starts the
        average after that many steps.
    fit_intercept : bool, default True
        Learn w_0 for 003's constant feature x_0 = 1.
    random_state : int, Generator or None
        Seeds the shuffling.
    verbose : int, default 0
        Print the loss, |w| and the mistakes of each epoch.

    Attributes: coef_ (n_vectors, n_features), intercept_ (n_vectors,), classes_, n_iter_
    (epochs), t_ (steps), n_mistakes_ (updates: rows that moved some w), loss_curve_ (mean
    perceptron loss per epoch), n_features_in_. Two classes use one vector, for classes_[1].
    """

    _stop_without_updates = True

    def __init__(self, max_iter=1000, tol=1e-3, n_iter_no_change=5, shuffle=True, average=False,
                 fit_intercept=True, random_state=None, verbose=0):
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.average = average
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def _engine_options(self):
        return dict(loss="perceptron", learning_rate="constant", eta0=1.0, alpha=0.0)

    def _run(self, X, codes, sw, epochs, resume):
        super()._run(X, codes, sw, epochs, resume)
        self.n_mistakes_ = self._engine.n_updates



class VotedPerceptron(ClassifierMixin, BaseEstimator):
    """Freund & Schapire's voted perceptron (003's reading, "Voting"): train the perceptron,
    keep every weight vector v_j it passes through with its survival count c_j (the steps it
    stayed unchanged, mistake included), and predict sign(sum_j c_j sign(v_j . x)).

    Training is the perceptron's: the shared SGD loop with loss="perceptron", eta = 1, asked to
    log which rows were mistakes; the vectors are then the running sums of y_i x_i over those
    mistakes (the loop's own w after each of them). Several classes: one-vs-rest, each class's
    perceptron voting on its own; predict takes the class with the largest vote.

    Parameters
    ----------
    max_iter : int, default 10
        Epochs (Freund & Schapire's T); stops earlier after an epoch without a mistake.
    shuffle : bool, default True
    fit_intercept : bool, default True
    random_state : int, Generator or None
    verbose : int, default 0

    Attributes: vectors_ (n_vectors, n_features) and vector_intercepts_ (n_vectors,): the
    weight vectors after each mistake; vector_counts_ (their survival counts), vector_outputs_
    (which class's perceptron each belongs to: 0 for two classes, the class index otherwise),
    n_mistakes_, n_iter_, t_ (steps), classes_, n_features_in_.
    """

    _accepts_sparse = True

    def __init__(self, max_iter=10, shuffle=True, fit_intercept=True, random_state=None,
                 verbose=0):
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Train from w = 0 on X (dense or CSR) and labels y of any type."""
        check_param("max_iter", self.max_iter, low=1, integer=True)
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True)
        codes = self._encode_labels(y)
        self._start(X)
        self._train(X, codes, self.max_iter)
        return self

    def partial_fit(self, X, y, classes=None):
        """One more epoch over (X, y); `classes` is required on the first call."""
        check_param("max_iter", self.max_iter, low=1, integer=True)
        X, codes, _, first = start_partial_fit(self, X, y, classes)
        if first:
            self._start(X)
        self._train(X.astype(self._engine.dtype, copy=False), codes, 1)
        return self

    def _start(self, X):
        layout = OutputLayout(len(self.classes_))
        self._engine = SGDEngine(layout.n_outputs, X.shape[1], X.dtype, loss="perceptron",
                                 learning_rate="constant", eta0=1.0, alpha=0.0,
                                 fit_intercept=self.fit_intercept,
                                 label_offset=layout.label_offset)
        self._rng = check_random_state(self.random_state)
        self._mistakes = []         # per epoch: (signed rows y x, output, step) of each mistake
        self.n_iter_ = 0

    def _train(self, X, codes, epochs):
        engine, layout = self._engine, OutputLayout(len(self.classes_))
        T, Y, sw = layout.signed(codes), layout.targets(codes), np.ones(X.shape[0])

        def step(epoch):
            order = (self._rng.permutation(X.shape[0]) if self.shuffle
                     else np.arange(X.shape[0])).astype(np.intp)
            log = np.zeros((len(order), T.shape[1]), dtype=np.int8)
            steps_before = engine.n_steps
            _, updates = engine.epoch(X, Y, sw, order, epoch, log)
            self.n_iter_ += 1
            position, output = np.nonzero(log)          # row-major: in the order they happened
            rows = order[position]
            sign = T[rows, output]
            signed = X[rows].multiply(sign[:, None]).tocsr() if hasattr(X, "tocsr") \
                else X[rows] * sign[:, None].astype(X.dtype)
            self._mistakes.append((signed, sign, output, steps_before + position + 1))
            return None, {"mistakes": updates}, updates == 0 and epochs > 1

        iterate(step, epochs, desc="VotedPerceptron", unit="epoch", verbose=self.verbose,
                first=self.n_iter_)
        self._publish()

    def _publish(self):
        """The vectors v_j = sum of y_i x_i over each output's mistakes so far (the loop's w
        after each mistake) and their survival counts c_j = (next mistake's step) - (step)."""
        engine = self._engine
        n_outputs, d = engine.W.shape
        signed = [m[0].toarray() if hasattr(m[0], "toarray") else m[0] for m in self._mistakes]
        signed = np.concatenate(signed) if signed else np.zeros((0, d))
        sign, output, step = (np.concatenate([m[i] for m in self._mistakes]) for i in (1, 2, 3))
        vectors, intercepts, counts, outputs = [], [], [], []
        for k in range(n_outputs):
            mine = output == k
            vectors.append(np.cumsum(signed[mine], axis=0, dtype=engine.dtype))
            intercepts.append(np.cumsum(sign[mine]) if self.fit_intercept
                              else np.zeros(mine.sum()))
            counts.append(np.diff(np.append(step[mine], engine.n_steps + 1)))
            outputs.append(np.full(mine.sum(), k))
        self.vectors_ = np.ascontiguousarray(np.concatenate(vectors), dtype=engine.dtype)
        self.vector_intercepts_ = np.concatenate(intercepts).astype(engine.dtype)
        self.vector_counts_ = np.concatenate(counts).astype(np.int64)
        self.vector_outputs_ = np.concatenate(outputs).astype(np.intp)
        self.n_mistakes_ = engine.n_updates
        self.t_ = engine.n_steps

    def _check_fitted_state(self):
        """Run by fastml.io.load: the vectors (n_vectors, n_features_in_) with one intercept,
        count and output (a valid column of the ballot) each, and the SGD state they came
        from."""
        if not hasattr(self, "vectors_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_outputs = OutputLayout(len(state_array(self, "classes_", None, 1,
                                                 contiguous=False))).n_outputs
        n_vectors = len(check_float_array(self, "vectors_", (None, n_features)))
        check_float_array(self, "vector_intercepts_", (n_vectors,))
        state_array(self, "vector_counts_", np.int64, (n_vectors,))
        outputs = state_array(self, "vector_outputs_", np.intp, (n_vectors,))
        if ((outputs < 0) | (outputs >= n_outputs)).any():
            raise ValueError("vector_outputs_ names an output that does not exist")
        check_sgd_engine(self._engine, n_outputs, n_features)

    def decision_function(self, X):
        """The votes sum_j c_j sign(v_j . x): (n,) for two classes (positive = classes_[1]),
        else (n, n_classes). Rows in chunks so the (rows x vectors) margins stay small."""
        self._check_is_fitted("vectors_")
        X = check_array(X, accept_sparse=True, dtype=self.vectors_.dtype, estimator=self,
                        reset=False)
        n_outputs = self._engine.W.shape[0]
        ballot = np.zeros((len(self.vectors_), n_outputs))     # c_j in its output's column
        ballot[np.arange(len(self.vectors_)), self.vector_outputs_] = self.vector_counts_
        votes = np.zeros((X.shape[0], n_outputs))
        chunk = int(np.clip((1 << 22) // max(len(self.vectors_), 1), 1, max(X.shape[0], 1)))
        for first in range(0, X.shape[0], chunk):
            margins = np.asarray(X[first:first + chunk] @ self.vectors_.T) + \
                self.vector_intercepts_
            votes[first:first + chunk] = np.sign(margins) @ ballot
        return votes.ravel() if n_outputs == 1 else votes

    def predict(self, X):
        votes = self.decision_function(X)
        codes = (votes > 0).astype(np.intp) if votes.ndim == 1 else np.argmax(votes, axis=1)
        return self.classes_[codes]


# ---------------------------------------------------------------- the kernelized perceptron

class _MistakeBuffer:
    """The kernel perceptron's stored mistakes, contiguous rows [head, tail) of growing arrays:
    the rows, their squared norms (rbf), the signed coefficient per output, the step at which
    each was made and a sample id (the same row seen in a later epoch has the same id)."""

    def __init__(self, n_features, n_outputs, dtype, capacity=256):
        self.head = self.tail = 0
        self.rows = np.zeros((capacity, n_features), dtype=dtype)
        self.sq = np.zeros(capacity)
        self.coef = np.zeros((n_outputs, capacity), dtype=dtype)
        self.step = np.zeros(capacity, dtype=np.int64)
        self.sample = np.zeros(capacity, dtype=np.int64)

    def reserve(self, extra):
        """Make room for `extra` more rows after tail: slide the live rows to the front when
        the budget freed enough, else double the capacity."""
        live = self.tail - self.head
        capacity = self.rows.shape[0]
        if self.tail + extra <= capacity:
            return
        if self.head > 0 and live + extra <= capacity:
            new_capacity = capacity
        else:
            new_capacity = max(2 * capacity, live + extra)
        for name in ("rows", "sq", "step", "sample"):
            old = getattr(self, name)
            new = np.zeros((new_capacity,) + old.shape[1:], dtype=old.dtype)
            new[:live] = old[self.head:self.tail]
            setattr(self, name, new)
        coef = np.zeros((self.coef.shape[0], new_capacity), dtype=self.coef.dtype)
        coef[:, :live] = self.coef[:, self.head:self.tail]
        self.coef = coef
        self.head, self.tail = 0, live

    def check(self, n_features, n_outputs):
        """Raise ValueError unless the buffer is what train_block (no bounds checks) can
        append to: rows (capacity, n_features) and coef (n_outputs, capacity) in one float
        dtype, float64 squared norms, int64 steps and sample ids, 0 <= head <= tail <=
        capacity."""
        rows = state_array(self, "rows", None, (None, n_features))
        if rows.dtype not in (np.float32, np.float64):
            raise ValueError("the mistake buffer's rows are not float32 or float64")
        capacity = len(rows)
        state_array(self, "coef", rows.dtype, (n_outputs, capacity))
        state_array(self, "sq", np.float64, (capacity,))
        state_array(self, "step", np.int64, (capacity,))
        state_array(self, "sample", np.int64, (capacity,))
        head, tail = state_count(self, "head"), state_count(self, "tail")
        if not head <= tail <= capacity:
            raise ValueError(f"the mistake buffer's live rows [{head}, {tail}) are not inside "
                             f"its {capacity} rows")

    def live(self, name):
        return getattr(self, name)[..., self.head:self.tail] if name == "coef" else \
            getattr(self, name)[self.head:self.tail]


class KernelPerceptron(ClassifierMixin, BaseEstimator):
    """The kernelized perceptron (003): remember each mistake (x_i, y_i); predict
    sign(sum_{i in M} y_i k(x_i, x)). Several classes: one-vs-rest.

    Parameters
    ----------
    kernel : "rbf" (default), "poly", "linear", "sigmoid" or a callable
        rbf exp(-gamma ||u - v||^2) (003's Gaussian kernel with gamma = 1 / (2 sigma^2));
        poly (gamma u.v + coef0)^degree: coef0=0 is 003's "polynomials of degree exactly d",
        coef0=1 with gamma=1 its "degree up to d" kernel (u.v + 1)^d; sigmoid
        tanh(gamma u.v + coef0); linear u.v. A callable k(A, B) must return the
        (len(A), len(B)) matrix of kernel values; it is called once per block of rows.
    degree : int, default 3
    gamma : float, "scale" or "auto", default "scale"
        "scale" = 1 / (n_features * X.var()), "auto" = 1 / n_features (scikit-learn's rules).
    coef0 : float, default 0.0
    max_iter : int, default 10
        Epochs; training stops earlier after an epoch without a mistake.
    budget : int or None, default None
        Keep at most this many mistakes, dropping the oldest (a budgeted perceptron).
    average : bool, default False
        Report the averaged perceptron: each stored mistake weighted by its survival time (the
        steps it has been part of w) over the steps seen, i.e. the mean of w after every step.
        With a budget, mistakes already dropped do not enter the average.
    shuffle : bool, default True
    random_state : int, Generator or None
    verbose : int, default 0
    n_jobs : int or None
        Threads for the kernel transform in prediction (None = 1, -1 = all cores).

    Attributes: support_vectors_ (the stored mistakes' rows, one per training row),
    dual_coef_ (n_vectors, n_support): decision_function(x) = dual_coef_ @ k(support_vectors_,
    x); support_ (row numbers in the last fit's X, -1 for rows of earlier partial_fit calls),
    n_mistakes_ (mistakes made in training), n_iter_, t_ (steps), classes_, n_features_in_.
    """

    _accepts_sparse = False

    def __init__(self, kernel="rbf", degree=3, gamma="scale", coef0=0.0, max_iter=10,
                 budget=None, average=False, shuffle=True, random_state=None, verbose=0,
                 n_jobs=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.max_iter = max_iter
        self.budget = budget
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ parameters

    def _check_params(self):
        if not callable(self.kernel):
            check_param("kernel", self.kernel, choices=tuple(_kp().KERNELS))
        check_param("degree", self.degree, low=1, integer=True)
        if not isinstance(self.gamma, str):
            check_param("gamma", self.gamma, low=0.0, low_inclusive=False)
        else:
            check_param("gamma", self.gamma, choices=("scale", "auto"))
        check_param("coef0", self.coef0)
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("budget", self.budget, low=1, integer=True, allow_none=True)

    def _check_fitted_state(self):
        """Run by fastml.io.load: kernel parameters the compiled kernels accept (a callable
        kind only with a callable kernel), support vectors and coefficients that agree, and
        a mistake buffer train_block can resume from."""
        if not hasattr(self, "support_vectors_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_outputs = OutputLayout(len(state_array(self, "classes_", None, 1,
                                                 contiguous=False))).n_outputs
        params = self._kparams
        kind = params["kind"] if isinstance(params, dict) else None
        if not (kind in _kp().KERNELS.values() or kind == -1) or isinstance(kind, bool):
            raise ValueError(f"unknown kernel kind {kind!r}")
        if (kind == -1) != callable(self.kernel):  # a function only where fit was given one
            raise ValueError("the kernel parameter does not match the fitted kernel")
        for name in ("gamma", "coef0"):
            if not isinstance(params[name], float) or not np.isfinite(params[name]):
                raise ValueError(f"kernel {name} {params[name]!r} is not a finite float")
        if not isinstance(params["degree"], int) or not 1 <= params["degree"] < 2**31:
            raise ValueError(f"kernel degree {params['degree']!r} is not a positive int")
        SV = state_array(self, "support_vectors_", None, (None, n_features))
        if SV.dtype not in (np.float32, np.float64):
            raise ValueError("support_vectors_ is not float32 or float64")
        state_array(self, "dual_coef_", SV.dtype, (n_outputs, len(SV)))
        state_array(self, "_sv_sq", np.float64, (len(SV),))
        if not isinstance(self._buffer, _MistakeBuffer):
            raise ValueError("the mistake buffer is missing")
        self._buffer.check(n_features, n_outputs)
        if self._buffer.rows.dtype != SV.dtype:
            raise ValueError("the mistake buffer and support_vectors_ differ in dtype")

    def _kernel_params(self, X):
        if self.gamma == "scale":
            var = float(X.var())
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif self.gamma == "auto":
            gamma = 1.0 / X.shape[1]
        else:
            gamma = float(self.gamma)
        kind = -1 if callable(self.kernel) else _kp().KERNELS[self.kernel]
        return dict(kind=kind, gamma=gamma, coef0=float(self.coef0), degree=int(self.degree))

    # ------------------------------------------------------------------ kernels

    def _kernel(self, A, B, sq_a=None, sq_b=None):
        """k(A_a, B_b) as an (len(A), len(B)) array in A's dtype."""
        out = np.empty((A.shape[0], B.shape[0]), dtype=A.dtype)
        if A.shape[0] == 0 or B.shape[0] == 0:
            return out
        if callable(self.kernel):
            return self._call_user_kernel(A, B)
        params = self._kparams
        empty = np.empty(0)
        rbf = params["kind"] == _kp().KERNELS["rbf"]
        _kp().kernel_block(A, B, _sq_norms(A) if rbf and sq_a is None else (sq_a if rbf else empty),
                           _sq_norms(B) if rbf and sq_b is None else (sq_b if rbf else empty),
                           out, params, check_n_jobs(self.n_jobs))
        return out

    def _call_user_kernel(self, A, B):
        K = np.asarray(self.kernel(A, B))
        want = (A.shape[0], B.shape[0])
        if K.shape != want:
            raise ValueError(f"the kernel callable returned an array of shape {K.shape} for "
                             f"inputs of {A.shape[0]} and {B.shape[0]} rows; it must return "
                             f"the {want} matrix k(A[i], B[j])")
        if K.dtype.kind not in "biuf" or not np.isfinite(K).all():
            raise ValueError("the kernel callable returned non-numeric, NaN or infinite values")
        return np.ascontiguousarray(K, dtype=A.dtype)

    # ------------------------------------------------------------------ fitting

    def fit(self, X, y):
        """Learn from X (dense) and labels y of any type, starting with no mistakes."""
        self._check_params()
        X, y = check_X_y(X, y, estimator=self, reset=True)
        codes = self._encode_labels(y)
        self._start(X)
        self._train(X, codes, self.max_iter)
        return self

    def partial_fit(self, X, y, classes=None):
        """One epoch over (X, y), continuing from the stored mistakes. `classes` is required
        on the first call."""
        self._check_params()
        X, codes, _, first = start_partial_fit(self, X, y, classes, state="_buffer",
                                               accept_sparse=False)
        if first:
            self._start(X)
        self._train(X.astype(self._buffer.rows.dtype, copy=False), codes, 1)
        return self

    def _start(self, X):
        n_outputs = OutputLayout(len(self.classes_)).n_outputs
        self._kparams = self._kernel_params(X)
        self._buffer = _MistakeBuffer(X.shape[1], n_outputs, X.dtype)
        self._rng = check_random_state(self.random_state)
        self._steps = self._samples_seen = 0
        self.n_mistakes_ = self.n_iter_ = 0

    def _train(self, X, codes, epochs):
        with _one_blas_thread():
            self._run_epochs(X, codes, epochs)

    def _run_epochs(self, X, codes, epochs):
        T = OutputLayout(len(self.classes_)).signed(codes)
        first_sample = self._samples_seen

        def step(epoch):
            order = self._rng.permutation(len(X)) if self.shuffle else np.arange(len(X))
            mistakes = self._epoch(X, T, order, first_sample)
            self.n_mistakes_ += mistakes
            self.n_iter_ += 1
            shown = {"mistakes": mistakes, "stored": self._buffer.tail - self._buffer.head}
            return None, shown, mistakes == 0 and epochs > 1

        iterate(step, epochs, desc="KernelPerceptron", unit="epoch", verbose=self.verbose,
                first=self.n_iter_)
        self._samples_seen += len(X)
        self.t_ = self._steps
        self._publish(first_sample, len(X))

    def _epoch(self, X, T, order, first_sample):
        """One pass in blocks of rows: the kernels between a block and the stored mistakes
        come from one call (BLAS, or the user's callable), then the Cython loop walks the
        block row by row."""
        buf, rbf = self._buffer, self._kparams["kind"] == _kp().KERNELS["rbf"]
        user_kernel = callable(self.kernel)
        params = self._kparams if not user_kernel else dict(self._kparams, kind=0)
        budget = int(self.budget or 0)
        mistakes, start = 0, 0
        block = 512
        margins = np.empty((block, T.shape[1]))
        scratch = np.empty((2, block), dtype=np.intp)
        G2 = np.zeros((block, block), dtype=X.dtype)
        empty = np.empty(0)
        while start < len(order):
            idx = order[start:start + block]
            Xb, Tb = X[idx], T[idx]
            buf.reserve(len(idx))
            sq_b = _sq_norms(Xb) if rbf else empty
            if user_kernel:
                G1, G2b = self._kernel(Xb, buf.live("rows")), self._kernel(Xb, Xb)
            else:                           # scratch: the Cython loop computes what it needs
                G1 = np.empty((len(idx), buf.tail - buf.head), dtype=X.dtype)
                G2b = G2[:len(idx), :len(idx)]
            buf.head, buf.tail, m = _kp().train_block(
                Xb, Tb, (idx + first_sample).astype(np.int64), G1,
                np.ascontiguousarray(G2b), user_kernel, sq_b, params, buf.rows, buf.sq,
                buf.coef, buf.step, buf.sample, buf.head, buf.tail, budget, self._steps,
                margins, scratch)
            mistakes += m
            self._steps += len(idx)
            start += len(idx)
        return mistakes

    def _publish(self, first_sample, n_last):
        """support_vectors_ / dual_coef_ from the buffer: averaged weights if asked, and one
        entry per training row (a row that erred in several epochs has its terms summed)."""
        buf = self._buffer
        coef = buf.live("coef").astype(np.float64)
        if self.average and self._steps > 0:
            coef = coef * ((self._steps + 1 - buf.live("step")) / self._steps)
        samples = buf.live("sample")
        unique, first, inverse = np.unique(samples, return_index=True, return_inverse=True)
        merged = np.zeros((coef.shape[0], len(unique)))
        np.add.at(merged.T, inverse.ravel(), coef.T)
        order = np.argsort(first, kind="stable")        # keep the order they were stored in
        dtype = buf.rows.dtype
        self.support_vectors_ = np.ascontiguousarray(buf.live("rows")[first[order]])
        self.dual_coef_ = np.ascontiguousarray(merged[:, order], dtype=dtype)
        self._sv_sq = np.ascontiguousarray(buf.live("sq")[first[order]])
        sample = unique[order]
        self.support_ = np.where(sample >= first_sample, sample - first_sample, -1)

    # ------------------------------------------------------------------ prediction

    def decision_function(self, X):
        """sum_i dual_coef_[:, i] k(support_vectors_[i], x): (n,) for two classes (positive =
        classes_[1]), else (n, n_classes). Computed in row chunks that bound the memory."""
        self._check_is_fitted("support_vectors_")
        X = check_array(X, dtype=self.support_vectors_.dtype, estimator=self, reset=False)
        SV, coef = self.support_vectors_, self.dual_coef_
        scores = np.zeros((X.shape[0], coef.shape[0]), dtype=np.float64)
        if len(SV):
            with _one_blas_thread():        # threads split the rows (n_jobs) instead
                self._decide(X, SV, coef, scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _decide(self, X, SV, coef, scores):
        """scores += k(X, SV) @ coef.T, a chunk of rows at a time (at most ~4M kernel values,
        32 MB in float64, live at once)."""
        chunk = int(np.clip((1 << 22) // len(SV), 1, max(len(X), 1)))
        rbf = self._kparams["kind"] == _kp().KERNELS["rbf"]
        for first in range(0, len(X), chunk):
            block = X[first:first + chunk]
            G = self._kernel(block, SV, _sq_norms(block) if rbf else None, self._sv_sq)
            scores[first:first + chunk] = G @ coef.T

    def predict(self, X):
        scores = self.decision_function(X)
        codes = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[codes]


def _one_blas_thread():
    """Training is sequential and its GEMM blocks are small: BLAS threads only add wake-up
    costs there (measured 10x slower on 2 cores), so BLAS runs on one thread (threadpoolctl,
    when installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:     # pragma: no cover - optional
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _sq_norms(A):
    """Squared row norms in float64 (rbf's cached ||x||^2)."""
    return np.einsum("ij,ij->i", A, A, dtype=np.float64)


def _kp():
    from . import _kernel_perceptron_fast as _kernel_perceptron
    return _kernel_perceptron
