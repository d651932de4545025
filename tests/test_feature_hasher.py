"""FeatureHasher (003's click data; the hashing trick) against scikit-learn's FeatureHasher:
the same input must give the same matrix, entry for entry (indices, indptr and values)."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastml.feature_extraction import FeatureHasher
from fastml.feature_extraction import _hashing_fast

from test_properties import BUDGET

pytestmark = pytest.mark.kernel
# scikit-learn sums the entries of a column in the order scipy's std::sort leaves them in;
# fastml makes GCC's libstdc++ moves (scipy's Linux wheels). Elsewhere only that order of
# three or more colliding non-integer values in a row of more than 16 entries can differ.
LIBSTDCXX = sys.platform.startswith("linux")

sklearn_fe = pytest.importorskip("sklearn.feature_extraction")
SkHasher = sklearn_fe.FeatureHasher

WORDS = ["dog", "cat", "", "é", "日本語", "a" * 37, "click", "ad=42"] + [f"w{i}" for i in range(300)]


def assert_same_csr(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data)


def token_rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return [[WORDS[j] for j in rng.integers(0, len(WORDS), rng.integers(0, 45))]
            for _ in range(n)]


def dict_rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        keys = rng.integers(0, len(WORDS), rng.integers(0, 12))
        rows.append({WORDS[k]: (WORDS[k % 7] if k % 3 == 0 else float(rng.integers(-3, 4)))
                     for k in keys})
    return rows


def test_the_hash_is_murmurhash3_32_as_scikit_learn_computes_it():
    from sklearn.utils import murmurhash3_32
    rng = np.random.default_rng(1)
    for length in range(0, 23):          # every tail length, several block counts
        for _ in range(20):
            key = bytes(rng.integers(0, 256, length, dtype=np.uint8))
            seed = int(rng.integers(0, 2**32))
            assert _hashing_fast.murmurhash3_32(key, seed) == murmurhash3_32(key, seed)
    assert _hashing_fast.murmurhash3_32("日本語") == murmurhash3_32("日本語")


@pytest.mark.parametrize("n_features", [1, 7, 2**10, 2**20, 2**31 - 1])
@pytest.mark.parametrize("alternate_sign", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_strings_equal_scikit_learn(n_features, alternate_sign, dtype):
    X = token_rows()
    ours = FeatureHasher(n_features, input_type="string", alternate_sign=alternate_sign,
                         dtype=dtype).transform(X)
    theirs = SkHasher(n_features, input_type="string", alternate_sign=alternate_sign,
                      dtype=dtype).transform(X)
    assert_same_csr(ours, theirs)


@pytest.mark.parametrize("n_features", [3, 2**12])
def test_dicts_and_pairs_equal_scikit_learn(n_features):
    D = dict_rows()
    assert_same_csr(FeatureHasher(n_features).transform(D), SkHasher(n_features).transform(D))
    P = [list(d.items()) for d in D]
    assert_same_csr(FeatureHasher(n_features, input_type="pair").transform(P),
                    SkHasher(n_features, input_type="pair").transform(P))


def test_bytes_names_and_generators():
    X = [[w.encode() for w in row] for row in token_rows(50)]
    ours = FeatureHasher(64, input_type="string").transform(iter(X))
    assert_same_csr(ours, SkHasher(64, input_type="string").transform(X))


def test_a_dataframe_row_is_the_mapping_of_its_cells():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({
        "ad": rng.choice(["a1", "a2", "a3"], n),
        "user": rng.choice(WORDS, n),
        "price": rng.normal(size=n),
        "clicks": rng.integers(0, 3, n),
        "kind": pd.Categorical(rng.choice(["x", "y"], n)),
    })
    assert_same_csr(FeatureHasher(2**8).transform(frame),
                    SkHasher(2**8).transform(frame.to_dict("records")))
    # Missing cells are left out (scikit-learn would hash a NaN value).
    holes = frame.astype({"clicks": float}).copy()
    holes.loc[::4, "user"] = None
    holes.loc[::5, "price"] = np.nan
    records = [{k: v for k, v in r.items() if not (v is None or (isinstance(v, float) and
                                                                 np.isnan(v)))}
               for r in holes.to_dict("records")]
    assert_same_csr(FeatureHasher(2**8).transform(holes), SkHasher(2**8).transform(records))


def test_the_column_of_minus_two_to_the_31_is_scikit_learns():
    # |-2^31| does not fit int32: scikit-learn defines its column as 2^31 mod n_features.
    for n in (1, 3, 1000, 2**20, 2**31 - 1):
        assert _hashing_fast.column_for_hash(-2**31, n) == (2**31) % n
        assert _hashing_fast.column_for_hash(-5, n) == 5 % n


def test_entries_in_one_column_are_summed_in_input_order():
    X = FeatureHasher(1, input_type="pair", alternate_sign=False).transform(
        [[("a", 1.0), ("b", 2.5), ("c", -3.5)], [("a", 0.0)]])
    np.testing.assert_array_equal(X.toarray(), [[0.0], [0.0]])
    assert X.indptr.tolist() == [0, 1, 1]        # a summed-to-zero entry stays explicit


def test_input_is_not_modified():
    D = dict_rows(30)
    before = [dict(d) for d in D]
    FeatureHasher(16).transform(D)
    assert D == before


@pytest.mark.parametrize("params, raw, error, match", [
    (dict(n_features=0), [["a"]], ValueError, "n_features"),
    (dict(n_features=2**31), [["a"]], ValueError, "n_features"),
    (dict(n_features=8.5), [["a"]], ValueError, "n_features"),
    (dict(input_type="text"), [["a"]], ValueError, "input_type"),
    (dict(dtype=np.int64), [["a"]], ValueError, "float32 or float64"),
    (dict(input_type="string"), ["abc"], ValueError, "single string"),
    (dict(input_type="string"), [[1, 2]], TypeError, "feature names must be strings"),
    (dict(), [{1: 1.0}], TypeError, "feature names must be strings"),
    (dict(), [{"a": float("nan")}], ValueError, "non-finite"),
    (dict(), [{"a": float("inf")}], ValueError, "non-finite"),
    (dict(), [{"a": b"x"}], TypeError, "bytes value"),
    (dict(), [{"a": object()}], TypeError, "values must be numbers"),
    (dict(), [["a"]], TypeError, "one mapping per sample"),
    (dict(input_type="pair"), [[("a", 1.0, 2.0)]], TypeError, "pairs"),
    (dict(), [], ValueError, "no samples"),
    (dict(), "abc", TypeError, "iterable of samples"),
])
def test_bad_input_is_named(params, raw, error, match):
    with pytest.raises(error, match=match):
        FeatureHasher(**params).transform(raw)


def test_fit_checks_parameters_and_learns_nothing():
    h = FeatureHasher(2**4)
    assert h.fit([["a"]]) is h
    assert h.fit_transform([{"a": 1}]).shape == (1, 16)
    with pytest.raises(ValueError, match="n_features"):
        FeatureHasher(-1).fit()


def colliding_rows(n_rows, seed, n_features=7):
    """Rows of 0-60 (name, non-integer value) pairs into few columns: many rows longer than
    16 entries with three or more in one column, where the order of the sums shows."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_rows):
        names = rng.integers(0, 40, rng.integers(0, 61))
        rows.append([(f"f{k}", float(rng.normal() * 10.0 ** rng.integers(-3, 4)))
                     for k in names])
    return rows


@pytest.mark.skipif(not LIBSTDCXX, reason="scipy's std::sort here is not libstdc++'s")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alternate_sign", [True, False])
def test_colliding_non_integer_values_equal_scikit_learn_bit_for_bit(dtype, alternate_sign):
    """Issue 32: rows longer than 16 entries whose columns collide three or more times, with
    non-integer values: scipy sorts them with std::sort (not stable) before summing, and the
    sums equal scikit-learn's bit for bit (this differed in 58 of 264 configurations)."""
    for seed in range(4):
        rows = colliding_rows(300, seed)
        for n_features in (3, 7, 64):
            kw = dict(n_features=n_features, alternate_sign=alternate_sign, dtype=dtype)
            assert_same_csr(FeatureHasher(input_type="pair", **kw).transform(rows),
                            SkHasher(input_type="pair", **kw).transform(rows))
            dicts = [dict(r) for r in rows]
            assert_same_csr(FeatureHasher(**kw).transform(dicts), SkHasher(**kw).transform(dicts))


@pytest.mark.skipif(not LIBSTDCXX, reason="scipy's std::sort here is not libstdc++'s")
def test_rows_in_order_are_summed_as_scipy_decides_for_the_whole_call():
    """scipy sorts every row of a call, or none when all are in order already: a row in
    order with 17+ entries and three in a column sums in input order in the second case and
    in std::sort's order in the first (fastml keeps such a row unsummed until the call's end)."""
    rng = np.random.default_rng(5)
    in_order = [(f"n{i}", float(rng.normal())) for i in range(20)]
    hasher, theirs = FeatureHasher(1, input_type="pair"), SkHasher(1, input_type="pair")
    out_of_order = [("a", 0.1), ("b", 0.7), ("c", 1.3)]
    for rows in ([in_order, in_order], [in_order, out_of_order, in_order],
                 [out_of_order, in_order] * 3):
        assert_same_csr(hasher.transform(rows), theirs.transform(rows))
    # with 4 columns the same rows are a mix: some rows in order, some not
    for seed in range(20):
        rows = colliding_rows(30, seed)
        rows += [sorted(r, key=lambda p: p[0]) for r in rows[:10]]
        assert_same_csr(FeatureHasher(4, input_type="pair").transform(rows),
                        SkHasher(4, input_type="pair").transform(rows))


@pytest.mark.skipif(not LIBSTDCXX, reason="scipy's std::sort here is not libstdc++'s")
def test_a_dataframe_of_colliding_columns_equals_scikit_learn():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"c{j}": rng.normal(size=200) * 10 ** (j % 5 - 2) for j in range(30)})
    for n_features in (2, 5):
        assert_same_csr(FeatureHasher(n_features).transform(frame),
                        SkHasher(n_features).transform(frame.to_dict("records")))


# McIlroy's "killer adversary" run against libstdc++'s std::sort: 64 keys that send introsort
# down to its heapsort fallback (2 floor(log2 64) = 12 levels of partitions).
ADVERSARY_64 = [46, 1, 53, 3, 61, 5, 51, 7, 57, 9, 49, 11, 63, 13, 47, 15, 55, 17, 45, 19, 59,
                21, 24, 23, 62, 60, 58, 56, 54, 52, 50, 48, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                20, 22, 44, 41, 42, 39, 40, 37, 38, 35, 36, 33, 34, 31, 32, 29, 30, 27, 28, 25,
                26, 43]


def scipy_sort_permutation(columns):
    n = len(columns)
    m = sp.csr_matrix((np.arange(n, dtype=float), np.array(columns, dtype=np.int32),
                       np.array([0, n])), shape=(1, int(max(columns, default=0)) + 1))
    m.has_sorted_indices = False
    m.sort_indices()
    return m.indices, m.data.astype(np.intp)


@pytest.mark.skipif(not LIBSTDCXX, reason="scipy's std::sort here is not libstdc++'s")
@settings(BUDGET, max_examples=60)
@given(columns=st.lists(st.integers(0, 12), max_size=300) | st.lists(st.integers(0, 2**20),
                                                                      max_size=300))
def test_property_the_sort_makes_std_sorts_moves(columns):
    """csrc/fastml_stdsort.h leaves every position where scipy's csr_sort_indices does, for
    any row (many equal columns, or few), and for the adversary that forces the heapsort."""
    for keys in (columns, ADVERSARY_64, ADVERSARY_64 * 3):
        ours = _hashing_fast.std_sort_permutation(np.array(keys, dtype=np.int32))
        theirs = scipy_sort_permutation(keys)
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])


def test_the_sums_stay_within_the_stated_bound_of_the_exact_sum():
    """The guarantee on any platform: an entry that sums m values is within (m - 1) eps
    sum |v| of their exact sum (here: math.fsum), eps of the output dtype."""
    import math
    from collections import defaultdict
    for dtype in (np.float64, np.float32):
        rows = colliding_rows(200, 9)
        X = FeatureHasher(5, input_type="pair", dtype=dtype, alternate_sign=False
                          ).transform(rows)
        eps = np.finfo(dtype).eps
        for i, row in enumerate(rows):
            parts = defaultdict(list)
            for name, value in row:
                column = _hashing_fast.column_for_hash(_hashing_fast.murmurhash3_32(name), 5)
                parts[column].append(float(dtype(value)))
            got = dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]],
                           X.data[X.indptr[i]:X.indptr[i + 1]]))
            for column, values in parts.items():
                bound = (len(values) - 1) * eps * sum(abs(v) for v in values)
                assert abs(got[column] - math.fsum(values)) <= bound + eps * abs(
                    math.fsum(values))
