"""FeatureHasher (003's click data; the hashing trick) against scikit-learn's FeatureHasher:
the same input must give the same matrix, entry for entry (indices, indptr and values)."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastml.feature_extraction import FeatureHasher
from fastml.feature_extraction import _hashing_fast

pytestmark = pytest.mark.kernel

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
