"""Freund & Schapire's voted perceptron (lecture 003's reading, "Voting"): the driver of
_voted_fast.pyx, which trains the perceptron and keeps the vectors it passes through, and of
the vote in csrc/fastml_kernel_rows.h (fastml_voted_votes). Several classes: one-vs-rest.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .._base import BaseEstimator, ClassifierMixin
from .._validation import (check_array, check_class_weight, check_param, check_random_state,
                           check_sample_weight, check_X_y, class_sample_weight, state_array,
                           state_count)
from ._base import (C_INDEX_MAX, OutputLayout, all_or_nothing, check_float_array, fresh_fit,
                    labels_from_scores, start_partial_fit)
from ._iterate import iterate
from ._kernel_perceptron_fast import PACK_ALIGN, voted_votes
from ._sgd import sgd_plan
from ._voted_fast import voted_pass

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray,
                           RandomStateLike, VectorLike)


class _VoteStore:
    """The voted perceptron's training state: the live perceptrons W (K, d) and b (K,) with
    the weight they have survived so far (`live`), and the finished vectors V (cap, d) with
    their intercepts Vb, counts Vc and outputs `out`, n_used of them: output k's vectors, in
    the order the pass made them, are the rows of `out` == k in store order. The store grows
    as the pass needs rows; with a budget to at most K (budget + 1) + 1 rows (`_most_rows`),
    reused as vectors merge.
    """

    def __init__(self, n_outputs, n_features, dtype, budget):
        self.budget = budget
        cap = min(256, self._most_rows(n_outputs))
        self.W = np.zeros((n_outputs, n_features), dtype=dtype)
        self.b = np.zeros(n_outputs, dtype=dtype)
        self.live = np.zeros(n_outputs)
        self.V = np.zeros((cap, n_features), dtype=dtype)
        self.Vb = np.zeros(cap, dtype=dtype)
        self.Vc = np.zeros(cap)
        self.out = np.zeros(cap, dtype=np.intp)
        self.n_used = 0

    def run(self, X, T, sw, order, fit_intercept):
        """One pass over the rows in `order` (voted_pass); returns the mistake visits."""
        sparse = hasattr(X, "indptr")
        dtype = self.W.dtype
        dense = np.zeros((1, 1), dtype=dtype) if sparse else X
        data = X.data if sparse else np.zeros(0, dtype=dtype)
        indices = X.indices if sparse else np.zeros(0, dtype=np.int32)
        indptr = X.indptr if sparse else np.zeros(1, dtype=np.int32)
        scratch = self._scratch(T.shape[1])
        first = mistakes = 0
        while True:
            first, self.n_used, made, short = voted_pass(
                dense, data, indices, indptr, sparse, T, sw, order, first, self.W, self.b,
                self.live, fit_intercept, self.V, self.Vb, self.Vc, self.out, self.n_used,
                self.budget or 0, np.empty(T.shape[1]), *scratch)
            mistakes += made
            if self.budget:             # gather the lists' slots, in order, to the front
                placed = scratch[0][0, :self.n_used]
                for name in ("V", "Vb", "Vc", "out"):
                    array = getattr(self, name)
                    array[:self.n_used] = array[placed]
            if not short:
                return mistakes
            self._grow(short, T.shape[1])
            scratch = self._scratch(T.shape[1])

    def _most_rows(self, n_outputs):
        """The rows the store may need: K (budget + 1) + 1 with a budget (at most `budget`
        vectors per output, one more arriving before its merge), unbounded without."""
        return n_outputs * (self.budget + 1) + 1 if self.budget else np.iinfo(np.intp).max

    def _scratch(self, n_outputs):
        """voted_pass's arrays for the lists and heaps of a budget (empty without one)."""
        if not self.budget:
            return (np.zeros((3, 0), dtype=np.intp), np.zeros((2, 0), dtype=np.int64),
                    np.zeros((4, 0), dtype=np.intp), np.zeros(0),
                    np.zeros((3, 0), dtype=np.int64), np.zeros((2, 0), dtype=np.intp))
        cap = len(self.V)
        heap = n_outputs * 2 * (min(self.budget, cap) + 2)   # lists are at most cap long
        return (np.empty((3, cap), dtype=np.intp), np.empty((2, cap), dtype=np.int64),
                np.empty((4, n_outputs), dtype=np.intp), np.empty(heap),
                np.empty((3, heap), dtype=np.int64), np.empty((2, heap), dtype=np.intp))

    def _grow(self, rows, n_outputs):
        cap = min(max(2 * len(self.V), rows), self._most_rows(n_outputs))
        for name in ("V", "Vb", "Vc", "out"):
            old = getattr(self, name)
            new = np.zeros((cap,) + old.shape[1:], dtype=old.dtype)
            new[:self.n_used] = old[:self.n_used]
            setattr(self, name, new)

    def ballot(self, k):
        """Output k's vectors, intercepts and counts in order, the live one last (when it has
        survived any weight), merged down to the budget by the pass's rule."""
        mine = np.flatnonzero(self.out[:self.n_used] == k)
        V, b, c = self.V[mine], self.Vb[mine], self.Vc[mine]
        if self.live[k] > 0:
            V = np.vstack([V, self.W[k]])
            b, c = np.append(b, self.b[k]), np.append(c, self.live[k])
        if self.budget and len(c) > self.budget:
            V, b, c = _merge_smallest_pair(V, b, c)
        return V, b, c

    def check(self, n_outputs, n_features):
        """Raise ValueError unless voted_pass can resume from this state (for fastml.io.load:
        the pass indexes these arrays without bounds checks)."""
        W = state_array(self, "W", None, (n_outputs, n_features))
        if W.dtype not in (np.float32, np.float64):
            raise ValueError("the voted perceptron's weights are not float32 or float64")
        state_array(self, "b", W.dtype, (n_outputs,))
        state_array(self, "live", np.float64, (n_outputs,))
        V = state_array(self, "V", W.dtype, (None, n_features))
        cap = len(V)
        state_array(self, "Vb", W.dtype, (cap,))
        state_array(self, "Vc", np.float64, (cap,))
        out = state_array(self, "out", np.intp, (cap,))
        n_used = state_count(self, "n_used")
        budget = self.budget
        if budget is not None:
            budget = state_count(self, "budget", low=1)
        if n_used > cap:
            raise ValueError("the voted perceptron's store is smaller than its contents")
        if ((out[:n_used] < 0) | (out[:n_used] >= n_outputs)).any():
            raise ValueError("a stored vector names an output that does not exist")
        if budget and (np.bincount(out[:n_used], minlength=n_outputs) > budget).any():
            raise ValueError("the voted perceptron's store holds more vectors than its budget")


def _merge_smallest_pair(V, b, c):
    """Merge the adjacent pair with the smallest summed count (the first such pair) into
    their count-weighted mean with the summed count: the pass's rule (voted_pass's
    merge_smallest, in float64 then rounded to V's dtype)."""
    j = int(np.argmin(c[:-1] + c[1:]))
    total = c[j] + c[j + 1]
    mean = (c[j] * V[j].astype(np.float64) + c[j + 1] * V[j + 1].astype(np.float64)) / total
    V = np.vstack([V[:j], mean.astype(V.dtype), V[j + 2:]])
    b = np.concatenate([b[:j], [(c[j] * float(b[j]) + c[j + 1] * float(b[j + 1])) / total],
                        b[j + 2:]]).astype(b.dtype)
    c = np.concatenate([c[:j], [total], c[j + 2:]])
    return V, b, c


class VotedPerceptron(ClassifierMixin, BaseEstimator):
    """Freund & Schapire's voted perceptron (003's reading, "Voting"): train the perceptron,
    keep every weight vector v_j it passes through with its survival count c_j (the steps it
    stayed unchanged, mistake included), and predict sign(sum_j c_j sign(v_j . x)).

    Training is the perceptron's (w <- w + y x on a mistake, y (w.x) <= 0, step 1; the
    intercept is the weight of 003's x_0 = 1), one compiled pass per epoch that keeps each
    vector with its count as the pass leaves it. Several classes: one-vs-rest, each class's
    perceptron voting on its own; predict takes the class with the largest vote.

    Sample weights count copies: a row of weight s is visited as s copies of it in a row
    (floor(s) visits of weight 1, then one of the fraction left). A visit with y (w.x) <= 0
    is a mistake of that visit's weight u: the update w <- w + y x becomes w <- w + u y x,
    and the new vector starts with count u; a correct visit adds u to the count of the vector
    that survived it. So the votes are weighted, an integer weight is exactly that many
    copies of the row in a row (shuffle=False: the same vectors and votes as the repeated
    data), a weight 0 drops the row, and for weights <= 1 a mistake adds the weight times
    y x. (Scaling the weights past 1 is more copies, another fit: the perceptron has no loss
    scale for them to cancel in.)

    A vector budget (Weka's maxK bounds the same thing, by stopping the training when it is
    reached) keeps at most `budget` vectors per class's perceptron, without stopping: when a
    new vector would exceed it, the two adjacent vectors (consecutive in the pass) with the
    smallest summed count merge into their count-weighted mean with the summed count, the
    oldest pair on a tie. A merged vector is the averaged perceptron of its stretch of the
    pass, and votes for it with the stretch's length; over a long pass the stretches grow
    toward equal counts. budget=1 is the averaged perceptron (one vector, the mean of w
    after every step); no budget is Freund & Schapire's exact vote. Prediction costs
    O(budget d) per row and class.

    Parameters
    ----------
    max_iter : int, default 10
        Epochs: Freund & Schapire's T, all of them run (a mistake-free epoch still adds to
        the survival counts, hence to the votes) unless `early_stopping`.
    early_stopping : bool, default False
        Stop after the first epoch without a mistake (the data are separated); this changes
        the votes from Freund & Schapire's T epochs.
    budget : int or None, default None
        At most this many vectors per class's perceptron (one perceptron for two classes),
        merged as above; None keeps every vector.
    shuffle : bool, default True
    fit_intercept : bool, default True
    class_weight : None (default), "balanced" or dict {label: weight}
        Multiplies each row's sample weight by its class's weight (scikit-learn's rule:
        "balanced" is n / (n_classes * n_c) with n_c the summed sample weight of class c; a
        dict weighs the classes it names, the others 1). `partial_fit` takes a dict and
        refuses "balanced" (one chunk does not hold the class counts of all the data).
    random_state : int, Generator or None
    verbose : int, default 0

    Attributes
    ----------
    vectors_ : ndarray of shape (n_vectors, n_features)
        The weight vectors after each mistake (with a budget, merged ones among them).
    vector_intercepts_ : ndarray of shape (n_vectors,)
    vector_counts_ : ndarray of shape (n_vectors,)
        Their survival counts c_j (float64: whole numbers without sample weights).
    vector_outputs_ : ndarray of shape (n_vectors,)
        Which class's perceptron each belongs to: 0 for two classes, the class index otherwise.
    n_mistakes_ : int
        Mistakes (visits, with sample weights).
    n_iter_ : int
        Epochs run.
    t_ : int
        Steps (rows visited; a row of weight 0 is not).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.linear_model import VotedPerceptron
    >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
    >>> model = VotedPerceptron(max_iter=5, random_state=0).fit(X, [0, 0, 1, 1])
    >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
    [0, 1]
    >>> int(model.vector_counts_.sum()) == model.t_ == 5 * len(X)
    True
    """

    _accepts_sparse = True

    def __init__(self, max_iter: int = 10, early_stopping: bool = False,
                 budget: Optional[int] = None, shuffle: bool = True, fit_intercept: bool = True,
                 class_weight: ClassWeightLike = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.budget = budget
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("budget", self.budget, low=1, high=C_INDEX_MAX, integer=True,
                    allow_none=True)
        check_class_weight(self.class_weight)

    def _scaled_fit(self):
        """Passes of partial_fit over a stream's chunks (fastml/_plans.py); its model cannot
        be mixed from parts fitted side by side."""
        self._check_params()
        return sgd_plan(self, classifier=True, needs_totals=False, why_not_mixed=(
            "its model is the sequence of weight vectors it passed through, each with its "
            "survival count, which parameter mixing cannot average; fit it in memory on "
            "X.compute() (or a sample), or use Perceptron(average=True), the averaged form "
            "of its vote (003), which mixes"))

    @fresh_fit
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Train from w = 0 for max_iter epochs on X and labels y.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense or CSR rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the rows (default: 1 each), counting copies (see the
            class docstring).

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import VotedPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = VotedPerceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        self._check_params()
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True)
        codes = self._encode_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        self._start(X)
        self._train(X, codes, sw, self.max_iter)
        return self

    @all_or_nothing(fitting=False)
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """One more epoch over (X, y), continuing the vectors and their counts.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense or CSR rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        classes : array-like, optional
            Every label that will ever appear: required on the first call; a later call
            may repeat it (the same set) or omit it.
        sample_weight : array-like of shape (n_samples,), optional
            As in `fit`.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import VotedPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = VotedPerceptron(random_state=0)
        >>> model = model.partial_fit(X[:2], [0, 0], classes=[0, 1])
        >>> model.partial_fit(X[2:], [1, 1]).classes_.tolist()
        [0, 1]
        """
        self._check_params()
        X, codes, sw, first = start_partial_fit(self, X, y, classes, sample_weight,
                                                state="_mistakes")
        if first:
            self._start(X)
        elif self._mistakes.budget != self.budget:
            raise ValueError(f"budget={self.budget!r} differs from the budget of the vectors "
                             f"kept so far ({self._mistakes.budget!r}): set it back, or fit "
                             f"again")
        self._train(X.astype(self._mistakes.W.dtype, copy=False), codes, sw, 1)
        return self

    def _start(self, X):
        n_outputs = OutputLayout(len(self.classes_)).n_outputs
        # the vectors so far (fastml.fit_stream finds a voted perceptron by this name)
        self._mistakes = _VoteStore(n_outputs, X.shape[1], X.dtype, self.budget)
        self._rng = check_random_state(self.random_state)
        self.n_iter_ = self.n_mistakes_ = self.t_ = 0

    def _train(self, X, codes, sw, epochs):
        T = OutputLayout(len(self.classes_)).signed(codes)
        visited = int(np.count_nonzero(sw))

        def step(epoch):
            order = (self._rng.permutation(X.shape[0]) if self.shuffle
                     else np.arange(X.shape[0])).astype(np.intp)
            mistakes = self._mistakes.run(X, T, sw, order, self.fit_intercept)
            self.n_iter_ += 1
            self.n_mistakes_ += mistakes
            self.t_ += visited
            return None, {"mistakes": mistakes}, self.early_stopping and mistakes == 0

        iterate(step, epochs, desc="VotedPerceptron", unit="epoch", verbose=self.verbose,
                first=self.n_iter_)
        self._publish()

    def _publish(self):
        """vectors_ and their intercepts, counts and outputs, output after output (each in
        the order the pass made them, the live vector last)."""
        store = self._mistakes
        ballots = [store.ballot(k) for k in range(len(store.W))]
        self.vectors_ = np.ascontiguousarray(np.concatenate([v for v, _, _ in ballots]))
        self.vector_intercepts_ = np.concatenate([b for _, b, _ in ballots])
        self.vector_counts_ = np.concatenate([c for _, _, c in ballots])
        self.vector_outputs_ = np.concatenate(
            [np.full(len(c), k, dtype=np.intp) for k, (_, _, c) in enumerate(ballots)])
        self._pack_votes()

    def _pack_votes(self):
        """The form decision_function reads (voted_votes): per output, its vectors transposed
        with their intercepts and counts below them, in float64 (whole-number counts are
        below 2^53: exact), each output's columns zero-padded to a multiple of PACK_ALIGN
        (count 0: no vote). Derived from the fitted attributes, rebuilt after a load, never
        trusted from a file."""
        V, outputs = self.vectors_, self.vector_outputs_
        n_outputs, d = OutputLayout(len(self.classes_)).n_outputs, V.shape[1]
        columns = [np.flatnonzero(outputs == k) for k in range(n_outputs)]
        starts = np.zeros(n_outputs + 1, dtype=np.int64)
        starts[1:] = np.cumsum([-(-len(c) // PACK_ALIGN) * PACK_ALIGN for c in columns])
        pack = np.zeros((d + 2, int(starts[-1])))
        for k, c in enumerate(columns):
            at = slice(int(starts[k]), int(starts[k]) + len(c))
            pack[:d, at] = V[c].T
            pack[d, at] = self.vector_intercepts_[c]
            pack[d + 1, at] = self.vector_counts_[c]
        self._vote_pack, self._vote_starts = pack, starts

    def _check_fitted_state(self):
        """Run by fastml.io.load: the vectors (n_vectors, n_features_in_) with one intercept,
        finite non-negative count and output (a valid column of the ballot) each, and the
        training state they came from."""
        if not hasattr(self, "vectors_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_outputs = OutputLayout(len(state_array(self, "classes_", None, 1,
                                                 contiguous=False))).n_outputs
        n_vectors = len(check_float_array(self, "vectors_", (None, n_features)))
        check_float_array(self, "vector_intercepts_", (n_vectors,))
        counts = state_array(self, "vector_counts_", np.float64, (n_vectors,))
        if not (np.isfinite(counts).all() and (counts >= 0).all()):
            raise ValueError("vector_counts_ holds negative or non-finite counts")
        outputs = state_array(self, "vector_outputs_", np.intp, (n_vectors,))
        if ((outputs < 0) | (outputs >= n_outputs)).any():
            raise ValueError("vector_outputs_ names an output that does not exist")
        if not isinstance(self._mistakes, _VoteStore):
            raise ValueError("the voted perceptron's training state is missing")
        self._mistakes.check(n_outputs, n_features)
        self._pack_votes()

    def decision_function(self, X: MatrixLike) -> NDArray[np.float64]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        votes : ndarray of shape (n_samples,) or (n_samples, n_classes)
            sum_j c_j sign(v_j . x): (n,) for two classes (positive = classes_[1]), else one
            column per class. Dense rows: one compiled pass (margins, signs and the weighted
            sum per tile of rows, in float64); CSR rows: in row chunks so the (rows x vectors)
            margins stay small.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import VotedPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = VotedPerceptron(max_iter=2, random_state=0).fit(X, [0, 0, 1, 1])
        >>> bool(abs(model.decision_function(X[:1])[0]) <= model.t_)
        True
        """
        self._check_is_fitted("vectors_")
        X = check_array(X, accept_sparse=True, dtype=self.vectors_.dtype, estimator=self,
                        reset=False)
        n_outputs = OutputLayout(len(self.classes_)).n_outputs
        if not hasattr(X, "tocsr"):     # dense: one compiled pass, no (rows x vectors) margins
            if "_vote_pack" not in self.__dict__:   # a model pickled before the pack existed
                self._pack_votes()
            votes = np.empty((X.shape[0], n_outputs))
            voted_votes(X if X.dtype == np.float64 else X.astype(np.float64), self._vote_pack,
                        self._vote_starts, votes)
            return votes.ravel() if n_outputs == 1 else votes
        if n_outputs == 1:      # every vector votes for the one output: the counts are the
            ballot = self.vector_counts_.astype(np.float64)[:, None]  # ballot (no scatter)
        else:
            ballot = np.zeros((len(self.vectors_), n_outputs))  # c_j in its output's column
            ballot[np.arange(len(self.vectors_)), self.vector_outputs_] = self.vector_counts_
        votes = np.zeros((X.shape[0], n_outputs))
        chunk = max(1, min((1 << 22) // max(len(self.vectors_), 1), X.shape[0]))
        for first in range(0, X.shape[0], chunk):
            margins = np.asarray(X[first:first + chunk] @ self.vectors_.T) + \
                self.vector_intercepts_
            votes[first:first + chunk] = np.sign(margins) @ ballot
        return votes.ravel() if n_outputs == 1 else votes

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The class with the largest vote.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import VotedPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = VotedPerceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        votes = self.decision_function(X)
        return labels_from_scores(self.classes_, votes)
