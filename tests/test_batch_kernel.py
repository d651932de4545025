"""The fused batch kernel (_batch_fast.loss_grad: margins, loss, R^T X per block of rows in
L1, csrc/fastml_simd.h and csrc/fastml_batch.h) against a numpy reference, and its fixed
summation order: the same bits for any thread count."""
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastml.linear_model import _batch_fast as _batch
from fastml.linear_model._sgd import LOSSES

from _reference import logistic_hessian_blocks, logistic_loss_grad
from _robust import run_python
from test_properties import BUDGET


def problem(n, d, n_classes, reference, dtype, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, d)) * scale).astype(dtype)
    K = n_classes - 1 if reference else n_classes
    W = rng.normal(size=(K, d)).astype(dtype)
    b = rng.normal(size=K).astype(dtype)
    codes = rng.integers(0, n_classes, size=n)
    sw = rng.uniform(0.5, 2.0, size=n)
    return X, codes, sw, W, b


def kernel(X, codes, sw, W, b, reference, threads=1, loss="log"):
    K, d = W.shape
    gW, gb = np.full((K, d), np.nan), np.full(K, np.nan)
    total = _batch.loss_grad(X, codes.astype(np.float64), sw, W, b, gW, gb, LOSSES[loss],
                             1 if reference else 0, reference, threads)
    return total, gW, gb


def reference_of(X, codes, sw, W, b, reference):
    """The numpy reference in float64 on the same (float32-rounded) values."""
    dense = X.toarray() if sp.issparse(X) else X
    return logistic_loss_grad(dense.astype(np.float64), codes, sw, W.astype(np.float64),
                              b.astype(np.float64), reference)


def assert_matches(got, expected, rtol=1e-12):
    loss, gW, gb = got
    loss_ref, gW_ref, gb_ref = expected
    scale = max(1.0, float(np.max(np.abs(np.concatenate([gW_ref.ravel(), gb_ref])))))
    np.testing.assert_allclose(loss, loss_ref, rtol=rtol)
    np.testing.assert_allclose(gW, gW_ref, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(gb, gb_ref, rtol=rtol, atol=rtol * scale)


# n = 4099: several chunks (2,048-row minimum), rows not a multiple of the block (8 rows of
# 100 float64 features) nor of 4 (the R^T X row groups); d = 100, 13 (the 8-lane dot's 4-wide
# and 1-wide tails) and 3 (no full lane group at all).
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False), (4, True)])
@pytest.mark.parametrize("n,d", [(4099, 100), (4099, 13), (1003, 3), (3, 13)])
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_kernel_matches_numpy(dtype, n_classes, reference, n, d, sparse):
    X, codes, sw, W, b = problem(n, d, n_classes, reference, dtype, seed=n + d)
    Xin = sp.csr_matrix(X) if sparse else X
    assert_matches(kernel(Xin, codes, sw, W, b, reference),
                   reference_of(X, codes, sw, W, b, reference))


@pytest.mark.parametrize("n_classes,reference", [(2, True), (5, False)])
def test_large_margins_stay_exact(n_classes, reference):
    """|m| up to ~1e3: the series log and the vectorized exp at the ends of their ranges."""
    X, codes, sw, W, b = problem(2000, 10, n_classes, reference, np.float64, scale=40.0)
    got = kernel(X, codes, sw, W, b, reference)
    assert np.isfinite(got[0])
    assert_matches(got, reference_of(X, codes, sw, W, b, reference), rtol=1e-11)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False)])
@pytest.mark.parametrize("sparse", [False, True])
def test_same_bits_for_any_thread_count(dtype, n_classes, reference, sparse):
    """The chunks (and so the order of every sum) depend on the shapes only."""
    X, codes, sw, W, b = problem(20011, 30, n_classes, reference, dtype, seed=5)
    Xin = sp.csr_matrix(X) if sparse else X
    loss1, gW1, gb1 = kernel(Xin, codes, sw, W, b, reference, threads=1)
    for threads in (2, 3, 8):
        loss, gW, gb = kernel(Xin, codes, sw, W, b, reference, threads=threads)
        assert loss == loss1
        np.testing.assert_array_equal(gW, gW1)
        np.testing.assert_array_equal(gb, gb1)


# The softmax over K > 1 outputs runs output-major, R^T X in tiles of 2 outputs and a last tile
# of 3 when K is odd (csrc/fastml_simd.h): K = 3 .. 7 covers tiles 3, 2+2, 2+3, 2+2+2, 2+2+3;
# n = 1003 leaves 3 rows after the last 4-row group, d = 13 the 4-wide and 1-wide tails.
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes,reference", [(3, False), (4, False), (5, False),
                                                 (6, False), (7, False), (8, True)])
@pytest.mark.parametrize("n,d", [(1003, 13), (2053, 100), (5, 1)])
def test_multinomial_tiles_match_numpy_and_csr(dtype, n_classes, reference, n, d):
    X, codes, sw, W, b = problem(n, d, n_classes, reference, dtype, seed=n + n_classes)
    dense = kernel(X, codes, sw, W, b, reference)
    assert_matches(dense, reference_of(X, codes, sw, W, b, reference))
    assert_matches(dense, kernel(sp.csr_matrix(X), codes, sw, W, b, reference))
    again = kernel(X, codes, sw, W, b, reference, threads=2)
    assert again[0] == dense[0]
    np.testing.assert_array_equal(again[1], dense[1])
    np.testing.assert_array_equal(again[2], dense[2])


PORTABLE_PASS = """
import numpy as np
from test_batch_kernel import kernel, problem, _batch
from fastml._config import build_info
from fastml.linear_model import _kernel_perceptron_fast as kpf
assert not (_batch.AVX512_COPY or kpf.WIDE_DECIDE or build_info()["kernels"]["avx512_copy_runs"])
out = {{}}
for n_classes, reference, n, d in {cases!r}:
    X, codes, sw, W, b = problem(n, d, n_classes, reference, np.float64, seed=n + n_classes)
    total, gW, gb = kernel(X, codes, sw, W, b, reference)
    out[f"{{n_classes}}_{{n}}_{{d}}"] = np.concatenate([[total], gW.ravel(), gb])
np.savez({path!r}, **out)
"""


@pytest.mark.skipif(not _batch.AVX512_COPY, reason="no AVX-512 here: one copy of the pass")
def test_the_avx512_multinomial_pass_agrees_with_the_portable_one(tmp_path):
    """FASTML_DISABLE_AVX512=1 (read at import, so in a fresh process) runs the portable
    copies. The AVX-512 pass rounds once per multiply-add: its loss and gradient differ from
    the portable pass's in the last bits and agree to 1e-13."""
    cases = [(3, False, 1003, 13), (5, False, 4099, 100), (8, True, 2053, 37), (4, False, 5, 1)]
    path = str(tmp_path / "portable.npz")
    script = PORTABLE_PASS.format(cases=cases, path=path)
    done = run_python(["-c", script], timeout=300,
                      env=dict(os.environ, FASTML_DISABLE_AVX512="1"))
    assert done.returncode == 0, done.stderr
    portable = np.load(path)
    differ = 0
    for n_classes, reference, n, d in cases:
        X, codes, sw, W, b = problem(n, d, n_classes, reference, np.float64, seed=n + n_classes)
        total, gW, gb = kernel(X, codes, sw, W, b, reference)
        wide = np.concatenate([[total], gW.ravel(), gb])
        other = portable[f"{n_classes}_{n}_{d}"]
        np.testing.assert_allclose(wide, other, rtol=1e-13, atol=1e-13 * np.abs(other).max())
        differ += int(not np.array_equal(wide, other))
    assert differ > 0       # the switch did select another copy


def test_zero_sample_weight_rows_do_not_count():
    X, codes, sw, W, b = problem(1001, 9, 3, False, np.float64, seed=2)
    sw[::3] = 0.0
    keep = sw > 0
    got = kernel(X, codes, sw, W, b, False)
    assert_matches(got, reference_of(X[keep], codes[keep], sw[keep], W, b, False))


@pytest.mark.parametrize("loss", ["hinge", "perceptron"])
def test_generic_losses_go_through_the_fused_blocks(loss):
    """Hinge and perceptron use the shared per-row definitions on the fused margins."""
    X, codes, sw, W, b = problem(1003, 11, 3, False, np.float64, seed=4)
    total, gW, gb = kernel(X, codes, sw, W, b, False, loss=loss)
    T = np.where(codes[:, None] == np.arange(3), 1.0, -1.0)
    Z = T * (X @ W.T + b)
    active = Z < 1.0 if loss == "hinge" else Z <= 0.0
    per = np.where(active, (1.0 if loss == "hinge" else 0.0) - Z, 0.0)
    R = np.where(active, -T, 0.0) * sw[:, None]
    np.testing.assert_allclose(total, np.sum(sw[:, None] * per), rtol=1e-12)
    np.testing.assert_allclose(gW, R.T @ X, rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(gb, R.sum(axis=0), rtol=1e-12, atol=1e-11)


def test_nan_weights_give_nan():
    X, codes, sw, W, b = problem(100, 8, 2, True, np.float64)
    W[0, 3] = np.nan
    total, gW, gb = kernel(X, codes, sw, W, b, True)
    assert np.isnan(total) and np.isnan(gW).all() and np.isnan(gb).all()


@settings(BUDGET, max_examples=40)
@given(n=st.integers(1, 300), d=st.integers(0, 40), n_classes=st.integers(2, 5),
       reference=st.booleans(), float32=st.booleans(), sparse=st.booleans(),
       seed=st.integers(0, 2**16))
def test_property_kernel_matches_numpy_and_threads_agree(n, d, n_classes, reference, float32,
                                                         sparse, seed):
    reference = reference or n_classes == 2
    X, codes, sw, W, b = problem(n, d, n_classes, reference,
                                 np.float32 if float32 else np.float64, seed=seed)
    Xin = sp.csr_matrix(X) if sparse else X
    got = kernel(Xin, codes, sw, W, b, reference)
    assert_matches(got, reference_of(X, codes, sw, W, b, reference), rtol=1e-11)
    again = kernel(Xin, codes, sw, W, b, reference, threads=2)
    assert got[0] == again[0]
    np.testing.assert_array_equal(got[1], again[1])
    np.testing.assert_array_equal(got[2], again[2])


# ---- Newton's Hessian in the same pass (the `hessian` option, csrc/fastml_gram.h)

def kernel_with_hessian(X, codes, sw, W, b, reference, threads=1):
    K, d = W.shape
    H = np.full((K * (K + 1) // 2, d + 1, d + 1), np.nan)
    gW, gb = np.full((K, d), np.nan), np.full(K, np.nan)
    total = _batch.loss_grad(X, codes.astype(np.float64), sw, W, b, gW, gb, LOSSES["log"],
                             1 if reference else 0, reference, threads, hessian=H)
    return total, gW, gb, H


def assert_hessian_matches(H, expected, rtol=1e-12):
    scale = np.abs(expected).max()
    np.testing.assert_allclose(H, expected, rtol=rtol, atol=rtol * scale)
    np.testing.assert_array_equal(H, np.swapaxes(H, 1, 2))


# n = 4099: several chunks and Hessian buffers with a partial one at each chunk's end; d = 100
# (stride 104: the 24-column tiles, a 16- and an 8-column one), 13 (stride 16) and 3 (8).
@pytest.mark.kernel
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False), (4, True), (5, False)])
@pytest.mark.parametrize("n,d", [(4099, 100), (4099, 13), (1003, 3), (3, 13)])
def test_hessian_matches_numpy_and_leaves_the_gradient_alone(dtype, n_classes, reference, n, d):
    X, codes, sw, W, b = problem(n, d, n_classes, reference, dtype, seed=n + d)
    W, b = W * 0.3, b * 0.3
    total, gW, gb, H = kernel_with_hessian(X, codes, sw, W, b, reference)
    plain = kernel(X, codes, sw, W, b, reference)
    assert total == plain[0]                   # the same bits as without the Hessian
    np.testing.assert_array_equal(gW, plain[1])
    np.testing.assert_array_equal(gb, plain[2])
    assert_hessian_matches(H, logistic_hessian_blocks(X.astype(np.float64), codes, sw,
                                                      W.astype(np.float64),
                                                      b.astype(np.float64), reference))


@pytest.mark.kernel
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False)])
def test_hessian_has_the_same_bits_for_any_thread_count(n_classes, reference):
    X, codes, sw, W, b = problem(20011, 30, n_classes, reference, np.float64, seed=5)
    H1 = kernel_with_hessian(X, codes, sw, W, b, reference, threads=1)[3]
    for threads in (2, 3, 8):
        np.testing.assert_array_equal(kernel_with_hessian(X, codes, sw, W, b, reference,
                                                          threads=threads)[3], H1)


@pytest.mark.kernel
def test_hessian_of_saturated_rows_keeps_its_digits():
    """Margins of +-40: p (1 - p) ~ 4e-18 from e / (1 + e)^2 (binary) and from the other
    classes' sum (softmax), not 1 - p, which would be 0."""
    for n_classes, reference in [(2, True), (3, False)]:
        X, codes, sw, W, b = problem(500, 4, n_classes, reference, np.float64, seed=3)
        b = b / np.abs(b).max() * 40.0
        W = W * 1e-3
        H = kernel_with_hessian(X, codes, sw, W, b, reference)[3]
        assert_hessian_matches(H, logistic_hessian_blocks(X, codes, sw, W, b, reference),
                               rtol=1e-11)
        assert np.all(np.diagonal(H[0]) > 0)


def test_hessian_input_errors():
    X, codes, sw, W, b = problem(50, 4, 2, True, np.float64)
    with pytest.raises(ValueError, match="shape"):
        _batch.loss_grad(X, codes.astype(float), sw, W, b, np.empty((1, 4)), np.empty(1),
                         LOSSES["log"], 1, True, 1, hessian=np.empty((1, 4, 4)))
    with pytest.raises(ValueError, match="logistic loss on dense X"):
        _batch.loss_grad(sp.csr_matrix(X), codes.astype(float), sw, W, b, np.empty((1, 4)),
                         np.empty(1), LOSSES["log"], 1, True, 1, hessian=np.empty((1, 5, 5)))
    with pytest.raises(ValueError, match="logistic loss on dense X"):
        _batch.loss_grad(X, codes.astype(float), sw, W, b, np.empty((1, 4)), np.empty(1),
                         LOSSES["hinge"], 1, False, 1, hessian=np.empty((1, 5, 5)))


@settings(BUDGET, max_examples=30)
@given(rows=st.integers(0, 70), columns=st.integers(1, 5), sign=st.sampled_from([1.0, -1.0]),
       seed=st.integers(0, 2**16))
def test_property_gram_copies_match_numpy(rows, columns, sign, seed):
    """csrc/fastml_gram.h: this CPU's copy (AVX-512 or AVX2 + FMA) and the plain loop give the
    upper triangle of sign T^T T (8 to 40 columns: tiles of 8, 16 and 24 columns)."""
    T = np.random.default_rng(seed).normal(size=(rows, 8 * columns))
    fast, plain = _batch.gram_copy_agrees(T, sign)
    expected = np.triu(sign * (T.T @ T))
    np.testing.assert_allclose(fast, expected, rtol=1e-12, atol=1e-12 * max(1, rows))
    np.testing.assert_allclose(plain, expected, rtol=1e-12, atol=1e-12 * max(1, rows))


HESSIAN_COPY = """
import numpy as np
from test_batch_kernel import kernel_with_hessian, problem, _batch
assert _batch.GRAM_COPY == {copy!r}, _batch.GRAM_COPY
out = {{}}
for n_classes, reference, n, d in {cases!r}:
    X, codes, sw, W, b = problem(n, d, n_classes, reference, np.float64, seed=n + n_classes)
    out[f"{{n_classes}}_{{n}}_{{d}}"] = kernel_with_hessian(X, codes, sw, W, b, reference)[3]
np.savez({path!r}, **out)
"""


@pytest.mark.skipif(_batch.GRAM_COPY != "avx512", reason="no AVX-512 here: the copy in use "
                    "is the one the other tests check")
def test_the_avx2_hessian_copy_matches_numpy(tmp_path):
    """FASTML_DISABLE_AVX512=1 (read at import, so in a fresh process) runs the AVX2 + FMA
    copy of the Hessian's loops, the one AVX2 machines run: it matches numpy too."""
    cases = [(2, True, 4099, 100), (3, False, 1003, 13), (4, True, 2053, 37)]
    path = str(tmp_path / "avx2.npz")
    script = HESSIAN_COPY.format(copy="avx2+fma", cases=cases, path=path)
    done = run_python(["-c", script], timeout=300,
                      env=dict(os.environ, FASTML_DISABLE_AVX512="1"))
    assert done.returncode == 0, done.stderr
    other = np.load(path)
    for n_classes, reference, n, d in cases:
        X, codes, sw, W, b = problem(n, d, n_classes, reference, np.float64, seed=n + n_classes)
        assert_hessian_matches(other[f"{n_classes}_{n}_{d}"],
                               logistic_hessian_blocks(X, codes, sw, W, b, reference))


@pytest.mark.kernel
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False), (5, False), (4, True)])
@pytest.mark.parametrize("n,d", [(4099, 100), (1003, 13), (5, 3)])
@pytest.mark.parametrize("loss", ["log", "hinge"])
def test_float32_data_give_the_bits_of_float64_data(n_classes, reference, n, d, loss):
    """A float32 block is widened to float64 once and takes the float64 loops (the same
    blocks, products and order): float32 X gives exactly what float64 X holding the same
    values gives, Hessian included."""
    if loss == "hinge":
        reference = False
    X, codes, sw, W, b = problem(n, d, n_classes, reference, np.float32, seed=n + d)
    wide = X.astype(np.float64)
    if loss == "log":
        single = kernel_with_hessian(X, codes, sw, W, b, reference, threads=2)
        double = kernel_with_hessian(wide, codes, sw, W, b, reference, threads=2)
    else:
        single = kernel(X, codes, sw, W, b, reference, loss=loss)
        double = kernel(wide, codes, sw, W, b, reference, loss=loss)
    assert single[0] == double[0]
    for a, c in zip(single[1:], double[1:]):
        np.testing.assert_array_equal(a, c)
