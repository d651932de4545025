"""The naive Bayes kernels (fastml/naive_bayes/_nb_fast.pyx) against obviously-right numpy
versions, on random inputs with missing cells, several thread counts and both float types; the
tabular encoder they are fed by; and Chan's merge (fastml/_core/_moments.pxd)."""
import numpy as np
import pytest

from fastml.naive_bayes import _nb_fast as _nb
from fastml._tabular import MISSING, UNSEEN, CategoryEncoder, categorical_mask, check_table

pytestmark = pytest.mark.kernel


def random_codes(rng, n, levels, missing=0.1):
    codes = np.column_stack([rng.integers(0, v, size=n) for v in levels]).astype(np.int32)
    codes[rng.random(codes.shape) < missing] = MISSING
    return np.ascontiguousarray(codes)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_count_categories_matches_numpy(threads):
    rng = np.random.default_rng(0)
    levels = [3, 1, 5, 2]
    n, K = 9000, 3
    codes = random_codes(rng, n, levels)
    y = rng.integers(0, K, size=n).astype(np.int64)
    sw = rng.uniform(0.5, 2.0, size=n)
    offsets = np.concatenate([[0], np.cumsum(levels)]).astype(np.int64)
    counts = np.ones((K, offsets[-1]))                     # it adds to what is there
    _nb.count_categories(codes, y, sw, offsets, counts, threads)
    expected = np.ones((K, offsets[-1]))
    for j, v in enumerate(levels):
        for k in range(K):
            for c in range(v):
                expected[k, offsets[j] + c] += sw[(y == k) & (codes[:, j] == c)].sum()
    np.testing.assert_allclose(counts, expected, rtol=1e-13)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gaussian_moments_match_numpy(threads, dtype):
    rng = np.random.default_rng(1)
    n, d, K = 10000, 7, 4
    X = (rng.normal(size=(n, d)) * [1, 10, 0.1, 1, 1, 1, 1] + [0, 5, -3, 1e5, 0, 0, 0])
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 6] = np.nan                                      # a column never observed
    X = X.astype(dtype)
    y = rng.integers(0, K, size=n).astype(np.int64)
    y[y == 3] = 2                                         # a class never seen
    sw = rng.uniform(0.5, 2.0, size=n)
    out = [np.empty((K, d)) for _ in range(4)]
    _nb.gaussian_moments(X, y, sw, *out, threads)
    count, shift, mean, m2 = out
    Xd = X.astype(np.float64)
    for k in range(K):
        for j in range(d):
            keep = (y == k) & ~np.isnan(Xd[:, j])
            w, x = sw[keep], Xd[keep, j]
            np.testing.assert_allclose(count[k, j], w.sum(), rtol=1e-13)
            if not keep.any():
                assert m2[k, j] == 0
                continue
            mu = np.average(x, weights=w)
            np.testing.assert_allclose(shift[k, j] + mean[k, j], mu, rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(m2[k, j], np.sum(w * (x - mu) ** 2), rtol=1e-11)


def test_gaussian_jll_matches_numpy():
    rng = np.random.default_rng(2)
    n, d, K = 3000, 9, 3
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.1] = np.nan
    mean, var = rng.normal(size=(K, d)), rng.uniform(0.5, 2, size=(K, d))
    a, b = -0.5 * np.log(2 * np.pi * var), 0.5 / var
    for threads in (1, 2):
        out = np.full((n, K), 0.25)
        _nb.gaussian_jll(X, mean, a, b, out, threads)
        terms = a[None] - b[None] * (X[:, None, :] - mean[None]) ** 2
        expected = 0.25 + np.nansum(terms, axis=2)
        np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_categorical_jll_matches_numpy():
    rng = np.random.default_rng(3)
    levels, n, K = [4, 2, 3], 2500, 5
    codes = random_codes(rng, n, levels)
    codes[rng.random(codes.shape) < 0.05] = UNSEEN
    offsets = np.concatenate([[0], np.cumsum(np.array(levels) + 1)]).astype(np.int64)
    table = rng.normal(size=(offsets[-1], K))
    out = np.zeros((n, K))
    _nb.categorical_jll(codes, table, offsets, out, 2)
    expected = np.zeros((n, K))
    for j in range(len(levels)):
        for i in range(n):
            c = codes[i, j]
            if c == UNSEEN:
                expected[i] += table[offsets[j + 1] - 1]
            elif c >= 0:
                expected[i] += table[offsets[j] + c]
    np.testing.assert_allclose(out, expected, rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint16, bool])
def test_integer_encoding_matches_searchsorted(dtype):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 40, size=(500, 3)) * [1, 3, 1] - [0, 7, 0]
    X[:, 2] = 9                                           # a constant column
    X = X.astype(dtype) if dtype is not bool else (X % 2).astype(bool)
    enc = CategoryEncoder(range(3)).fit(X)
    for j in range(3):
        np.testing.assert_array_equal(enc.categories_[j], np.unique(X[:, j]))
    Z = rng.integers(-10, 60, size=(300, 3)).astype(np.int64)
    codes = enc.transform(Z)
    for j in range(3):
        levels = enc.categories_[j].astype(np.int64)
        pos = np.searchsorted(levels, Z[:, j])
        found = (pos < len(levels)) & (levels[np.minimum(pos, len(levels) - 1)] == Z[:, j])
        np.testing.assert_array_equal(codes[:, j], np.where(found, pos, UNSEEN))


def test_object_encoding_and_missing():
    X = check_table(np.array([["b", 1.5, None], ["a", np.nan, "x"], [None, 2.5, "x"]],
                             dtype=object))
    assert categorical_mask(X, "auto").tolist() == [True, False, True]
    enc = CategoryEncoder([0, 2]).fit(X)
    assert [c.tolist() for c in enc.categories_] == [["a", "b"], ["x"]]
    codes = enc.transform(np.array([["a", 0, "y"], [None, 0, "x"]], dtype=object))
    assert codes.tolist() == [[0, UNSEEN], [MISSING, 0]]
    moved = enc.partial_fit(np.array([["0", 0, "w"]], dtype=object))
    assert [c.tolist() for c in enc.categories_] == [["0", "a", "b"], ["w", "x"]]
    assert [m.tolist() for m in moved] == [[1, 2], [1]]


def test_chan_merge_is_one_formula_for_every_caller():
    """merge_moments (naive Bayes' chunks and classes) and merge_factors (LinearStats.merge)
    share _core/_moments.pxd's formula; both give numpy's moments of the union, for data far
    from 0 too (the shift keeps the deltas small)."""
    from fastml._core._moments import merge_factors, merge_moments
    from fastml.linear_model._regression import LinearStats
    rng = np.random.default_rng(5)
    xa, xb = 1e6 + rng.normal(size=300), 1e6 + 0.5 + rng.normal(size=200)
    wa, wb = rng.uniform(0.5, 2, 300), rng.uniform(0.5, 2, 200)

    def moments(x, w, shift):  # x - 1e6 is exact, so the reference has no cancellation
        mu = np.average(x - 1e6, weights=w)
        return tuple(np.array([v]) for v in (w.sum(), shift, mu - (shift - 1e6),
                                             np.sum(w * (x - 1e6 - mu) ** 2)))

    n, shift, mean, m2 = merge_moments(moments(xa, wa, 1e6), moments(xb, wb, 1e6 + 0.5))
    x, w = np.concatenate([xa, xb]), np.concatenate([wa, wb])
    mu = np.average(x - 1e6, weights=w)
    np.testing.assert_allclose(n, w.sum(), rtol=1e-15)
    np.testing.assert_allclose(shift + mean, 1e6 + mu, rtol=1e-15)
    np.testing.assert_allclose(m2, np.sum(w * (x - 1e6 - mu) ** 2), rtol=1e-13)
    # an empty side leaves the other exactly as it was
    empty = tuple(np.zeros(1) for _ in range(4))
    assert merge_moments(empty, moments(xb, wb, 7.0))[1:3] == (np.array([7.0]),
                                                               moments(xb, wb, 7.0)[2])
    assert merge_factors(2.0, 6.0) == (8.0, 0.75, 1.5)
    assert merge_factors(0.0, 6.0) == (6.0, 1.0, 0.0)
    # LinearStats.merge applies the same factors with outer products
    X = np.column_stack([x, rng.normal(size=500)])
    a = LinearStats.from_data(np.ascontiguousarray(X[:300]), x[:300] * 0 + 1, wa)
    b = LinearStats.from_data(np.ascontiguousarray(X[300:]), x[300:] * 0 + 1, wb)
    merged = a.merge(b)
    Xc = X - np.average(X, axis=0, weights=w)
    np.testing.assert_allclose(merged.Sxx, (Xc * w[:, None]).T @ Xc, rtol=1e-9)


def test_kernels_check_shapes_at_entry():
    """_core's contract: a def kernel refuses arrays whose shapes its loops would overrun."""
    codes = np.zeros((4, 2), dtype=np.int32)
    y, sw = np.zeros(4, dtype=np.int64), np.ones(4)
    offsets = np.array([0, 2, 5], dtype=np.int64)
    with pytest.raises(ValueError, match="y has 3 rows"):
        _nb.count_categories(codes, y[:3], sw, offsets, np.zeros((2, 5)))
    with pytest.raises(ValueError, match="counts has 4 columns"):
        _nb.count_categories(codes, y, sw, offsets, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="offsets"):
        _nb.categorical_jll(codes, np.zeros((5, 2)), offsets[:2], np.zeros((4, 2)))
    with pytest.raises(ValueError, match="out must be"):
        _nb.categorical_jll(codes, np.zeros((5, 2)), offsets, np.zeros((3, 2)))
    X = np.zeros((4, 3))
    with pytest.raises(ValueError, match="m2 must be"):
        _nb.gaussian_moments(X, y, sw, *[np.zeros((2, 3))] * 3, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="b must be"):
        _nb.gaussian_jll(X, np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((1, 3)),
                         np.zeros((4, 2)))


def test_tabular_codes_are_the_kernels():
    from fastml import _tabular
    from fastml._core import _encode
    assert (_tabular.MISSING, _tabular.UNSEEN) == (_encode.MISSING, _encode.UNSEEN) == (-1, -2)
