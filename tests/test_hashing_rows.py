"""FeatureHasher's one-pass kernel (each row sorted and summed in place as it is hashed): the
paths it takes by input shape (lists, tuples, generators, non-ASCII str, long rows through the
qsort path, float32 sums) give scikit-learn's matrix entry for entry, and the in-order sum of
duplicates equals a numpy replica."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastml.feature_extraction import FeatureHasher
from fastml.feature_extraction import _hashing_fast
from test_properties import BUDGET

pytestmark = pytest.mark.kernel

SkHasher = pytest.importorskip("sklearn.feature_extraction").FeatureHasher


def assert_same_csr(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data)


def rows_of(n, length, vocab, seed):
    rng = np.random.default_rng(seed)
    return [[vocab[j] for j in rng.integers(0, len(vocab), length)] for _ in range(n)]


@pytest.mark.parametrize("length", [0, 1, 16, 17, 32, 33, 200])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_of_every_length_equal_scikit_learn(length, dtype):
    # 32 is the last insertion-sorted length, 33 the first through qsort; a vocabulary of 20
    # names and 8 columns makes most entries duplicates
    vocab = [f"tok{i}" for i in range(20)] + ["é", "日本語", "x" * 50]
    X = rows_of(60, length, vocab, length)
    for n_features in (8, 2**20):
        assert_same_csr(FeatureHasher(n_features, input_type="string", dtype=dtype).transform(X),
                        SkHasher(n_features, input_type="string", dtype=dtype).transform(X))


def test_tuples_generators_and_str_subclasses_take_the_slow_paths_to_the_same_matrix():
    class Name(str):
        pass
    vocab = ["a", "b", "ü", "c"]
    X = rows_of(40, 9, vocab, 1)
    expected = SkHasher(16, input_type="string").transform(X)
    h = FeatureHasher(16, input_type="string")
    assert_same_csr(h.transform(tuple(tuple(r) for r in X)), expected)
    assert_same_csr(h.transform(iter(X)), expected)
    assert_same_csr(h.transform([(t for t in r) for r in X]), expected)
    assert_same_csr(h.transform([[Name(t) for t in r] for r in X]), expected)


def in_order_sums(pairs, n_features, dtype):
    """numpy replica: each (column, signed value) in input order, summed per column left to
    right in the output dtype."""
    from sklearn.utils import murmurhash3_32
    out = {}
    for name, value in pairs:
        h = murmurhash3_32(name, positive=False)
        column = abs(h) % n_features
        v = dtype(value) * (1 if h >= 0 else -1)
        out[column] = out[column] + v if column in out else v
    return out


@pytest.mark.parametrize("length", [5, 16])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_duplicates_of_short_rows_are_summed_in_input_order(length, dtype):
    """Up to 16 entries std::sort is an insertion sort (stable): input order. Longer rows
    follow std::sort's moves (test_feature_hasher.py checks them against scikit-learn)."""
    rng = np.random.default_rng(7)
    pairs = [(f"k{int(i)}", float(v)) for i, v in zip(rng.integers(0, 6, length),
                                                      rng.normal(size=length) * 1e3)]
    X = FeatureHasher(2, input_type="pair", dtype=dtype).transform([pairs])
    expected = in_order_sums(pairs, 2, dtype)
    assert X.indices.tolist() == sorted(expected)
    np.testing.assert_array_equal(X.data, [expected[c] for c in sorted(expected)])
    assert X.data.dtype == dtype


def test_dict_values_of_every_number_type_and_the_frame_path():
    pd = pytest.importorskip("pandas")
    D = [{"a": 1, "b": 2.5, "c": np.float32(0.1), "d": True, "e": np.int64(-3), "f": "x"},
         {"a": 0, "b": -0.0, "g": "y"}]
    assert_same_csr(FeatureHasher(32).transform(D), SkHasher(32).transform(D))
    frame = pd.DataFrame({"ad": ["a1", "a2", "a1"], "n": [1.5, 0.0, 2.0]})
    assert_same_csr(FeatureHasher(4).transform(frame),
                    SkHasher(4).transform(frame.to_dict("records")))


def test_finish_rows_sorts_and_sums_rows_in_place():
    indptr = np.array([0, 3, 3, 7], dtype=np.int64)
    columns = np.array([5, 1, 5, 2, 2, 0, 2], dtype=np.int32)
    values = np.array([1.0, 2.0, 3.0, 0.5, 0.25, 4.0, 0.125])
    out, nnz = _hashing_fast.finish_rows(indptr, columns, values)
    assert out.tolist() == [0, 2, 2, 4] and nnz == 4
    assert columns[:nnz].tolist() == [1, 5, 0, 2]
    assert values[:nnz].tolist() == [2.0, 4.0, 4.0, 0.875]


@settings(BUDGET, max_examples=40)
@given(rows=st.lists(st.lists(st.text(max_size=6), max_size=40), min_size=1, max_size=12),
       n_features=st.sampled_from([1, 3, 16, 2**20]), alternate_sign=st.booleans(),
       single=st.booleans())
def test_property_any_strings_give_scikit_learns_matrix(rows, n_features, alternate_sign,
                                                       single):
    dtype = np.float32 if single else np.float64
    kw = dict(input_type="string", alternate_sign=alternate_sign, dtype=dtype)
    assert_same_csr(FeatureHasher(n_features, **kw).transform(rows),
                    SkHasher(n_features, **kw).transform(rows))
