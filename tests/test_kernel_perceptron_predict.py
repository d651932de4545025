"""Issue 13's predict paths: the vector exp and tanh (csrc/fastml_vexp.h), the kernel perceptron's fused
predict (kernel_decide) and the voted perceptron's compiled votes (voted_votes), each against
a numpy or libm reference."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastml.linear_model import _kernel_perceptron_fast as kpf
from fastml.linear_model._kernel_perceptron import KernelPerceptron
from fastml.linear_model._voted import VotedPerceptron


def ulps(got, want):
    """|got - want| in units of the last place of want (subnormal spacing below 2^-1022)."""
    return np.abs(got - want) / np.spacing(np.abs(want))


def libm_exp(x):
    return np.array([math.exp(v) if v < 709.782712893384 else math.inf for v in x.tolist()])


def vector_exp(x):
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    kpf.vector_exp(x, out)
    return out


# ---------------------------------------------------------------- the vector exp

def test_vector_exp_is_within_two_ulp_of_libm_over_the_whole_range():
    x = np.linspace(-745.2, 709.78, 1_000_003)      # every binade of the result, subnormals too
    x = np.concatenate([x, np.random.default_rng(0).uniform(-1, 1, 100_000),
                        np.linspace(-708.5, -707.5, 10_001), np.linspace(708.5, 709.78, 10_001)])
    got, want = vector_exp(x), libm_exp(x)
    normal = want >= 2.0 ** -1022
    assert ulps(got[normal], want[normal]).max() <= 2
    # subnormal results: one rounding of the scaled value, at most one subnormal step off
    assert np.abs(got[~normal] - want[~normal]).max() <= 5e-324
    assert (got >= 0).all()


def test_vector_exp_limits_denormal_inputs_and_nan():
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310, 2.2e-308, 1e-20, -1e-20,
                  709.782712893383, 709.782712893384, 710.0, 1e300, np.inf,
                  -745.1332191019411, -745.14, -746.0, -1e300, -np.inf, np.nan])
    got = vector_exp(np.tile(x, 3))[:len(x)]       # lanes of all four positions
    want = np.array([math.exp(v) if v < 709.79 else math.inf for v in x[:-1]] + [np.nan])
    want[11:14] = np.inf
    np.testing.assert_array_equal(got[:9], np.ones(9))
    np.testing.assert_array_equal(got[9], want[9])
    assert got[10] == want[10] or ulps(got[10:11], want[10:11])[0] <= 1
    assert np.isinf(got[11:14]).all() and (got[11:14] > 0).all()
    assert got[14] == 5e-324 and (got[15:19] == 0).all()
    assert np.isnan(got[19])
    # the same value in every lane position and for every length (the scalar tail agrees)
    for n in range(1, 9):
        np.testing.assert_array_equal(vector_exp(x[:n]), got[:n], strict=False)


def vector_tanh(x, a=1.0, b=-0.0):     # x * 1 + -0 is x, -0 included
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    kpf.vector_tanh(x, out, a, b)
    return out


def test_vector_tanh_is_within_two_ulp_of_numpy_on_a_dense_grid():
    rng = np.random.default_rng(1)
    x = np.concatenate([
        np.linspace(-25, 25, 2_000_001),                       # both forms, the clamp at 20
        rng.uniform(-0.7, 0.7, 300_000),                        # the rational form
        np.linspace(0.62, 0.63, 20_001), np.linspace(-0.63, -0.62, 20_001),  # the switch
        np.geomspace(1e-320, 1.0, 20_000), -np.geomspace(1e-320, 1.0, 20_000),  # tiny, subnormal
        np.geomspace(19.0, 1e300, 2_000), -np.geomspace(19.0, 1e300, 2_000)])   # huge
    got, want = vector_tanh(x), np.tanh(x)
    # measured: max 2.0 ulp, on both sides of the switch at |x| = 0.625; mean 0.17
    assert ulps(got, want).max() <= 2
    tiny = np.abs(x) < 1e-9
    np.testing.assert_array_equal(got[tiny], x[tiny])          # tanh(x) = x to the last bit
    np.testing.assert_array_equal(vector_tanh(-x), -got)        # odd, bit for bit


def test_vector_tanh_limits_nan_and_every_lane():
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, 0.625, -0.625, 19.0625, 20.0, 1e300,
                  np.inf, -np.inf, -1e300, np.nan])
    got = vector_tanh(np.tile(x, 3))[:len(x)]
    np.testing.assert_array_equal(got[:5], x[:5])
    assert np.signbit(got[1]) and np.signbit(got[3])
    assert ulps(got[5:7], np.tanh(x[5:7])).max() <= 1
    np.testing.assert_array_equal(got[7:13], [1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    assert np.isnan(got[13])
    for n in range(1, 9):       # the scalar tail gives the vector lanes' bits
        np.testing.assert_array_equal(vector_tanh(x[:n]), got[:n])
    # tanh(a x + b): the sigmoid kernel's gamma and coef0, with a * x rounded first
    z = np.random.default_rng(2).normal(size=1001) * 3
    np.testing.assert_array_equal(vector_tanh(z, 0.37, -0.5), vector_tanh(z * 0.37 + -0.5))
    with pytest.raises(ValueError, match="differ in length"):
        kpf.vector_tanh(np.zeros(3), np.zeros(4))


def test_sigmoid_training_and_predict_use_the_same_tanh():
    """The training transform (kernel_block) and predict (kernel_decide) give the same kernel
    values: a model's decision values equal its kernel rows summed by numpy to 1e-13."""
    X, y = noisy(n=300, seed=9)
    for dtype in (np.float64, np.float32):
        model = KernelPerceptron(kernel="sigmoid", gamma=0.05, coef0=-0.3, max_iter=1,
                                 random_state=0).fit(X.astype(dtype), y)
        A, SV = X[:40].astype(dtype), model.support_vectors_
        K = model._kernel(A, SV)
        dots = A.astype(float) @ SV.T.astype(float)
        want = vector_tanh(dots.ravel(), 0.05, -0.3).reshape(dots.shape)
        if dtype == np.float64:     # BLAS's dot order may differ from numpy's: a few ulps
            assert np.abs(K - np.tanh(A @ SV.T * 0.05 - 0.3)).max() <= 1e-15
        # float32: the dot products themselves are float32 sums (sgemm), ~1e-7 of |dots|
        np.testing.assert_allclose(K, want.astype(dtype), rtol=0 if dtype == np.float32 else 1e-14,
                                   atol=2e-6 if dtype == np.float32 else 1e-15)


# ---------------------------------------------------------------- the kernel perceptron

KERNELS = {
    "rbf": lambda dots, sa, sb, g, c0, deg: np.exp(-g * np.maximum(sa[:, None] + sb[None] - 2 * dots, 0)),
    "poly": lambda dots, sa, sb, g, c0, deg: (g * dots + c0) ** deg,
    "sigmoid": lambda dots, sa, sb, g, c0, deg: np.tanh(g * dots + c0),
    "linear": lambda dots, sa, sb, g, c0, deg: dots,
}


def reference_scores(model, X):
    """The old predict: BLAS dot products, numpy's kernel, then K @ dual_coef_.T; also the
    scale that a relative tolerance on a cancelling sum must use: sum |c| |k| (1 + the
    rounding of the norms trick, a few ulps of ||x||^2 + ||sv||^2 times gamma for rbf: two
    summation orders of the same dot products differ by that much)."""
    p = model._kparams
    SV, coef = model.support_vectors_.astype(float), model.dual_coef_.astype(float)
    X = X.astype(float)
    name = {v: k for k, v in kpf.KERNELS.items()}[p["kind"]]
    dots, sa = X @ SV.T, (X * X).sum(1)
    K = KERNELS[name](dots, sa, model._sv_sq, p["gamma"], p["coef0"], p["degree"])
    slack = 1.0
    if name == "rbf":
        slack += 1e-4 * p["gamma"] * (sa[:, None] + model._sv_sq[None] + 2 * np.abs(dots))
    return K @ coef.T, (np.abs(K) * slack) @ np.abs(coef.T)


def noisy(n=600, d=10, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] * X[:, 1] > 0).astype(int) + (rng.random(n) < 0.2)) % 2
    if classes > 2:
        y = y + (X[:, 2] > 0.5) * 2
    return X, y


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("classes", [2, 4])
@pytest.mark.parametrize("gamma", ["scale", 1e-6, 30.0, 3000.0])
def test_kernel_decide_matches_the_numpy_reference(kernel, classes, gamma):
    if kernel != "rbf" and gamma == 3000.0:
        pytest.skip("huge gamma overflows the polynomial kernel in numpy too")
    X, y = noisy(classes=classes, seed=1)
    model = KernelPerceptron(kernel=kernel, gamma=gamma, coef0=0.5, degree=3, max_iter=2,
                             random_state=0).fit(X, y)
    Xt = np.vstack([np.random.default_rng(2).normal(size=(203, 10)) * 2,
                    model.support_vectors_[:5].astype(float)])     # distance 0: kernel 1
    want, scale = reference_scores(model, Xt)
    got = model.decision_function(Xt).reshape(want.shape)
    assert np.all(np.abs(got - want) <= 1e-12 * scale + 1e-300)
    np.testing.assert_array_equal(model.predict(Xt), model.classes_[np.argmax(want, axis=1)]
                                  if classes > 2 else model.classes_[(want[:, 0] > 0) * 1])
    # one row at a time, several threads: the same bits
    for i in (0, 7, 207):
        np.testing.assert_array_equal(model.decision_function(Xt[i:i + 1]),
                                      model.decision_function(Xt)[i:i + 1])
    model.set_params(n_jobs=2)
    np.testing.assert_array_equal(model.decision_function(Xt).reshape(got.shape), got)


def test_rbf_underflow_gives_numpys_subnormals_and_zeros():
    # gamma so large that most kernel values are 0, some subnormal: the exact sums, not a
    # flush to 0 below exp(-708)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = KernelPerceptron(gamma=1.0, max_iter=1, shuffle=False).fit(X, y)
    model._kparams = dict(model._kparams, gamma=720.0 / 4.0)   # d2 = 4 -> exp(-720)
    Xt = np.vstack([model.support_vectors_[:3] + [2.0, 0, 0], rng.normal(size=(40, 3))])
    want, scale = reference_scores(model, Xt)
    got = model.decision_function(Xt)
    assert np.abs(got[:3]).min() > 0 and np.abs(got[:3]).min() < 1e-300   # subnormal sums
    assert np.all(np.abs(got - want[:, 0]) <= 1e-12 * scale[:, 0] + 5e-324 * len(
        model.support_vectors_))


def test_float32_model_is_scored_in_float64():
    X, y = noisy(seed=4)
    model = KernelPerceptron(max_iter=2, random_state=0).fit(X.astype(np.float32), y)
    Xt = np.random.default_rng(5).normal(size=(50, 10))
    want, scale = reference_scores(model, Xt.astype(np.float32))
    got = model.decision_function(Xt)
    assert got.dtype == np.float64
    assert np.all(np.abs(got - want[:, 0]) <= 1e-6 * scale[:, 0])


def test_pack_is_rebuilt_on_load_and_unpickled_models_without_it_predict(tmp_path):
    import pickle
    import fastml
    X, y = noisy(seed=6)
    model = KernelPerceptron(max_iter=1, random_state=0).fit(X, y)
    want = model.decision_function(X)
    path = tmp_path / "kp.fastml"
    fastml.save(model, path)
    loaded = fastml.load(path)
    np.testing.assert_array_equal(loaded.decision_function(X), want)
    old = pickle.loads(pickle.dumps(model))
    del old._pack                                   # as pickled before the pack existed
    np.testing.assert_array_equal(old.decision_function(X), want)


def test_kernel_decide_refuses_inconsistent_shapes():
    pack = np.zeros((10 + 1 + 1, 16))
    params = dict(kind=kpf.KERNELS["rbf"], gamma=1.0, coef0=0.0, degree=1)
    with pytest.raises(ValueError, match="do not agree"):
        kpf.kernel_decide(np.zeros((3, 9)), pack, params, 0.0, np.empty((3, 1)))
    with pytest.raises(ValueError, match="do not agree"):
        kpf.kernel_decide(np.zeros((3, 10)), np.zeros((12, 15)), params, 0.0, np.empty((3, 1)))
    with pytest.raises(ValueError, match="do not agree"):
        kpf.kernel_decide(np.zeros((3, 10)), pack, dict(params, kind=7), 0.0, np.empty((3, 1)))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 70), d=st.integers(1, 40),
       kind=st.sampled_from(sorted(kpf.KERNELS)), log_gamma=st.floats(-4, 3),
       outputs=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_kernel_decide_property(n, m, d, kind, log_gamma, outputs, seed):
    """Any row count (tiles of 4, tails), stored-row count (padding), width (column blocks of
    32), output count (one output: rbf sums its values without storing them): kernel_decide
    equals numpy's kernel sums to 1e-12 of the absolute sum."""
    rng = np.random.default_rng(seed)
    X, SV = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    coef = rng.normal(size=(outputs, m))
    g = 10.0 ** log_gamma / d
    sq = (SV * SV).sum(1)
    align = kpf.PACK_ALIGN
    pack = np.zeros((d + 1 + outputs, -(-m // align) * align))
    pack[:d, :m], pack[d, :m], pack[d + 1:, :m] = SV.T, sq, coef
    params = dict(kind=kpf.KERNELS[kind], gamma=g, coef0=0.3, degree=2)
    K = KERNELS[kind](X @ SV.T, (X * X).sum(1), sq, g, 0.3, 2)
    for wide in (True, False):      # the AVX-512 copy (where the CPU has it), the portable one
        scores = np.empty((n, outputs))
        kpf.kernel_decide(X, pack, params, float(sq.max()), scores, 1, wide)
        assert np.all(np.abs(scores - K @ coef.T)
                      <= 1e-12 * (np.abs(K) @ np.abs(coef.T)) + 1e-300), wide


# ---------------------------------------------------------------- the AVX-512 copy

def single_pair_scores(kind, x0, wide, gamma=1.0):
    """kernel_decide's score of the rows [x0, 0] against one stored row with coefficient 1:
    rbf against the origin gives exp(-gamma fl(x0^2)), sigmoid against [1, 0] gives
    tanh(gamma x0), each computed exactly as the kernel value (the padding columns add 0)."""
    X = np.zeros((len(x0), 2))
    X[:, 0] = x0
    sv = np.zeros(2) if kind == "rbf" else np.array([1.0, 0.0])
    pack = np.zeros((4, kpf.PACK_ALIGN))
    pack[:2, 0], pack[2, 0], pack[3, 0] = sv, sv @ sv, 1.0
    scores = np.empty((len(x0), 1))
    params = dict(kind=kpf.KERNELS[kind], gamma=gamma, coef0=0.0, degree=1)
    kpf.kernel_decide(X, pack, params, float(sv @ sv), scores, 1, wide)
    return scores[:, 0]


@pytest.mark.parametrize("wide", [True, False])
def test_kernel_decide_rbf_values_are_within_two_ulp_of_libm(wide):
    """Each copy's exp inside the rbf kernel, over every binade of the result down to the
    subnormals and 0 (the AVX-512 copy scales by vscalefpd, with no slow path)."""
    t = np.concatenate([np.linspace(0.0, 760.0, 400_003), np.linspace(707.5, 708.5, 10_001),
                        np.linspace(744.5, 745.5, 10_001)])
    x0 = np.sqrt(t)
    got = single_pair_scores("rbf", x0, wide)
    want = libm_exp(-(x0 * x0))
    normal = want >= 2.0 ** -1022
    assert ulps(got[normal], want[normal]).max() <= 2
    assert np.abs(got[~normal] - want[~normal]).max() <= 5e-324
    assert (got >= 0).all() and (got[t > 745.2] == 0).all()
    # a distance that overflows to inf gives 0, an inf - inf distance (NaN) counts as 0
    np.testing.assert_array_equal(single_pair_scores("rbf", np.array([1e200, np.inf]), wide),
                                  [0.0, 1.0])


@pytest.mark.parametrize("wide", [True, False])
def test_kernel_decide_sigmoid_values_are_within_two_ulp_of_numpy(wide):
    rng = np.random.default_rng(3)
    x0 = np.concatenate([np.linspace(-25, 25, 200_001), np.linspace(0.62, 0.63, 10_001),
                         -np.linspace(0.62, 0.63, 10_001), rng.uniform(-0.7, 0.7, 50_000),
                         np.geomspace(1e-300, 1.0, 5_000), -np.geomspace(1e-300, 1.0, 5_000),
                         [0.0, -0.0, 1e300, -1e300]])
    got = single_pair_scores("sigmoid", x0, wide)
    assert ulps(got, np.tanh(x0)).max() <= 2
    tiny = np.abs(x0) < 1e-9
    np.testing.assert_array_equal(got[tiny], x0[tiny])


@pytest.mark.skipif(not kpf.WIDE_DECIDE, reason="no AVX-512 here: one copy of kernel_decide")
@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("classes", [2, 4])
def test_the_avx512_copy_agrees_with_the_portable_one(kernel, classes):
    """Fused multiply-adds round differently: the two copies' scores agree to 1e-13 of the sum
    of |coef k|, and predict the same classes on these rows."""
    X, y = noisy(classes=classes, seed=4)
    model = KernelPerceptron(kernel=kernel, gamma=0.08, coef0=0.5, degree=3, max_iter=2,
                             random_state=0).fit(X, y)
    Xt = np.random.default_rng(5).normal(size=(1001, 10))
    _, scale = reference_scores(model, Xt)
    got = {}
    for wide in (True, False):
        got[wide] = np.empty(scale.shape)
        kpf.kernel_decide(Xt, model._pack, model._kparams, model._sq_max, got[wide], 1, wide)
    assert np.all(np.abs(got[True] - got[False]) <= 1e-13 * scale + 1e-300)
    pick = (lambda s: s.argmax(1)) if classes > 2 else (lambda s: s[:, 0] > 0)
    assert (pick(got[True]) == pick(got[False])).mean() == 1.0


# ---------------------------------------------------------------- the voted perceptron

def voted_reference(model, X):
    """The old decision_function: margins by BLAS, np.sign, the ballot."""
    margins = X @ model.vectors_.T.astype(float) + model.vector_intercepts_
    ballot = np.zeros((len(model.vectors_), model._mistakes.W.shape[0]))
    ballot[np.arange(len(model.vectors_)), model.vector_outputs_] = model.vector_counts_
    votes = np.sign(margins) @ ballot
    return votes.ravel() if votes.shape[1] == 1 else votes


@pytest.mark.parametrize("classes", [2, 3, 5])
@pytest.mark.parametrize("integer", [True, False])
def test_voted_votes_equal_the_old_ballot(classes, integer):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 6))
    if integer:
        X = np.round(X * 2)         # exact margins, zeros included: np.sign(0) = 0 votes
    y = np.argmax(X[:, :classes] + rng.normal(size=(500, classes)), axis=1)
    model = VotedPerceptron(max_iter=3, random_state=0).fit(X, y)
    Xt = np.vstack([X[:50], np.round(rng.normal(size=(77, 6)) * 2) if integer
                    else rng.normal(size=(77, 6))])
    want = voted_reference(model, Xt)
    np.testing.assert_array_equal(model.decision_function(Xt), want)
    np.testing.assert_array_equal(model.decision_function(sp.csr_matrix(Xt)), want)
    for i in (0, 3, 126):
        np.testing.assert_array_equal(model.decision_function(Xt[i:i + 1]), want[i:i + 1])
    np.testing.assert_array_equal(model.predict(Xt), model.predict(sp.csr_matrix(Xt)))


def test_voted_pack_survives_save_load_and_old_pickles(tmp_path):
    import pickle
    import fastml
    X, y = noisy(n=300, d=4, classes=4, seed=8)
    model = VotedPerceptron(max_iter=2, random_state=0).fit(X.astype(np.float32), y)
    want = voted_reference(model, X.astype(np.float32).astype(float))
    np.testing.assert_array_equal(model.decision_function(X.astype(np.float32)), want)
    fastml.save(model, tmp_path / "v.fastml")
    np.testing.assert_array_equal(
        fastml.load(tmp_path / "v.fastml").decision_function(X.astype(np.float32)), want)
    old = pickle.loads(pickle.dumps(model))
    del old._vote_pack, old._vote_starts
    np.testing.assert_array_equal(old.decision_function(X.astype(np.float32)), want)


def test_voted_votes_refuses_bad_segments():
    pack = np.zeros((4 + 2, 32))
    with pytest.raises(ValueError, match="segments"):
        kpf.voted_votes(np.zeros((2, 4)), pack, np.array([0, 8, 32]), np.empty((2, 2)))
    with pytest.raises(ValueError, match="segments"):
        kpf.voted_votes(np.zeros((2, 4)), pack, np.array([0, 48]), np.empty((2, 1)))
    with pytest.raises(ValueError, match="do not agree"):
        kpf.voted_votes(np.zeros((2, 5)), pack, np.array([0, 32]), np.empty((2, 1)))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), sizes=st.lists(st.integers(0, 60), min_size=1, max_size=4),
       d=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_voted_votes_property(n, sizes, d, seed):
    """Any rows, widths and per-output vector counts (empty outputs included): the votes are
    sum_j c_j sign(v_j . x + b_j) per output, exactly (integer-valued data: exact margins)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float)
    align = kpf.PACK_ALIGN
    starts = np.concatenate([[0], np.cumsum([-(-s // align) * align for s in sizes])])
    pack = np.zeros((d + 2, int(starts[-1])))
    want = np.zeros((n, len(sizes)))
    for k, s in enumerate(sizes):
        V = rng.integers(-3, 4, size=(s, d)).astype(float)
        b = rng.integers(-2, 3, size=s).astype(float)
        c = rng.integers(1, 1000, size=s).astype(float)
        at = slice(int(starts[k]), int(starts[k]) + s)
        pack[:d, at], pack[d, at], pack[d + 1, at] = V.T, b, c
        want[:, k] = np.sign(X @ V.T + b) @ c
    votes = np.empty((n, len(sizes)))
    kpf.voted_votes(X, pack, starts.astype(np.int64), votes)
    np.testing.assert_array_equal(votes, want)


def test_values_that_overflow_the_kernel_are_refused():
    """X ~ 1e300 made the rbf kernel inf - inf = NaN: the fit learned from NaN comparisons and
    predict turned NaN scores into a label (an outside audit). Fit refuses such rows; a NaN
    score at predict is an error naming the row, not a label."""
    import fastml
    with pytest.raises(ValueError, match="squared norms of its rows overflow"):
        fastml.KernelPerceptron(random_state=0).fit(np.array([[0.0], [1e300], [1.0], [2.0]]),
                                                    [0, 1, 0, 1])
    X = np.random.default_rng(0).normal(size=(50, 2))
    y = np.arange(50) % 2
    poly = fastml.KernelPerceptron(kernel="poly", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="kernel score of row 0 of X is NaN"):
        poly.predict(np.array([[1e300, 0.0], [1.0, 1.0]]))
    rbf = fastml.KernelPerceptron(random_state=0).fit(X, y)      # far away: every k = 0
    assert rbf.decision_function(np.array([[1e300, 0.0]]))[0] == 0.0
