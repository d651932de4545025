"""Issue 13's naive Bayes paths against the ones they replace: the compiled posterior steps
against numpy's old formulas, the compiled float / cached integer category lookups against
the per-column Python encoding, a column-major X against the row-major one (same bits, no
copy), and integer labels encoded by bincount against np.unique."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml import CategoricalNB, GaussianNB, NaiveBayes
from fastml._tabular import CategoryEncoder, column_codes
from fastml.naive_bayes import _classes, _nb_fast

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def old_log_proba(model, X):
    """predict_log_proba as fastml computed it before the compiled steps."""
    jll = model.predict_joint_log_proba(X)
    top = jll.max(axis=1)
    undefined = top == -np.inf
    jll[undefined] = model.class_log_prior_
    top[undefined] = model.class_log_prior_.max()
    jll -= top[:, None]
    jll -= np.log(np.exp(jll).sum(axis=1, keepdims=True))
    return jll


def old_predict(model, X):
    jll = model.predict_joint_log_proba(X)
    best = np.argmax(jll, axis=1)
    undefined = np.take_along_axis(jll, best[:, None], axis=1)[:, 0] == -np.inf
    best[undefined] = np.argmax(model.class_log_prior_)
    return model.classes_[best]


def assert_same_log_posterior(ours, ref):
    """The compiled steps call libm's exp and log; numpy has its own SIMD exp and log on
    AVX-512 machines, which can differ from libm's in the last bit. So the two agree to a
    few ulps, not bit for bit (a CI machine with AVX-512 showed 1-ulp differences)."""
    np.testing.assert_allclose(ours, ref, rtol=1e-14, atol=1e-15)


def assert_same_probabilities(ours, ref_log):
    np.testing.assert_allclose(ours, np.exp(ref_log), rtol=1e-14, atol=1e-300)


def assert_same_predictions(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _classes.ZeroProbabilityWarning)
        ref = old_log_proba(model, X)
        assert_same_log_posterior(model.predict_log_proba(X), ref)
        assert_same_probabilities(model.predict_proba(X), ref)
        np.testing.assert_array_equal(model.predict(X), old_predict(model, X))
        for i in range(min(len(X), 5)):              # one row at a time, as a service calls
            assert_same_probabilities(model.predict_proba(X[i:i + 1]), ref[i:i + 1])


def old_codes(encoder, X):
    return np.column_stack([column_codes(X[:, j], levels)
                            for j, levels in zip(encoder.columns_, encoder.categories_)])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(2, 11), d=st.integers(1, 12),
       rows=st.integers(1, 40), dtype=st.sampled_from([np.float64, np.float32]))
def test_gaussian_posterior_equals_the_numpy_steps(seed, K, d, rows, dtype):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(200, d)) * rng.uniform(0.01, 100, d)).astype(dtype)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, K, size=200)
    y[:K] = np.arange(K)
    model = GaussianNB().fit(X, y)
    Z = (rng.normal(size=(rows, d)) * rng.choice([1, 1e3, 1e200], size=(rows, 1))).astype(
        np.float64)
    Z[rng.random(Z.shape) < 0.1] = np.nan
    assert_same_predictions(model, Z)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), smoothing=st.sampled_from(["laplace", "none"]),
       as_int=st.booleans(), rows=st.integers(1, 30))
def test_categorical_fast_codes_and_posterior(seed, smoothing, as_int, rows):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 5, size=(150, 6)).astype(np.float64)
    y = rng.integers(0, 3, size=150)
    Z = rng.integers(-5, 8, size=(rows, 6)).astype(np.float64)   # unseen levels too
    if as_int:
        X, Z = X.astype(np.int64), Z.astype(np.int64)
    else:
        X[rng.random(X.shape) < 0.1] = np.nan
        Z[rng.random(Z.shape) < 0.1] = np.nan
        Z[rng.random(Z.shape) < 0.1] += 0.5                         # not a level
    model = CategoricalNB(smoothing=smoothing).fit(X, y)
    encoder = model._parts[0].encoder
    np.testing.assert_array_equal(encoder.transform(Z), old_codes(encoder, Z))
    assert_same_predictions(model, Z)


def test_float_codes_of_float32_cells_and_infinity():
    X = np.array([[0.5, 1.0], [2.0, np.nan], [-1.0, 3.0]])
    enc = CategoryEncoder(range(2)).fit(X)
    Z = np.array([[0.5, 3.0], [np.nan, 1.5], [2.0, -0.0]], dtype=np.float32)
    np.testing.assert_array_equal(enc.transform(Z), old_codes(enc, Z))
    with pytest.raises(ValueError, match="infinity"):
        enc.transform(np.array([[0.5, np.inf]]))


def test_mixed_model_posterior():
    rng = np.random.default_rng(3)
    X = np.empty((300, 4), dtype=object)
    X[:, 0] = rng.choice(["a", "b", "c"], 300)
    X[:, 1] = rng.normal(size=300)
    X[:, 2] = rng.choice([1, 2, None], 300)
    X[:, 3] = rng.normal(size=300)
    y = rng.integers(0, 3, size=300)
    model = NaiveBayes(categorical_features=[0, 2]).fit(X, y)
    Z = X[:20].copy()
    Z[0, 0] = "unseen"
    assert_same_predictions(model, Z)
    real = NaiveBayes().fit(rng.normal(size=(200, 5)), rng.integers(0, 2, size=200))
    assert_same_predictions(real, rng.normal(size=(9, 5)))


def test_zero_probability_rows_keep_the_prior_rule():
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    model = CategoricalNB(smoothing="none").fit(X, [0, 0, 1, 1])
    Z = np.array([[7.0], [0.0]])
    assert_same_predictions(model, Z)
    with pytest.warns(_classes.ZeroProbabilityWarning):
        model.predict_proba(Z)


def test_integer_vocabulary_table_is_cached_and_not_saved(tmp_path):
    X = np.random.default_rng(0).integers(0, 9, size=(100, 3))
    model = CategoricalNB().fit(X, np.arange(100) % 2)
    model.predict(X[:1])
    encoder = model._parts[0].encoder
    table = encoder._derived_tables()["int"]
    model.predict(X[:2])
    assert encoder._derived_tables()["int"] is table          # built once
    path = tmp_path / "m.fml"
    fastml.save(model, path)
    loaded = fastml.load(path)
    assert "_derived" not in loaded._parts[0].encoder.__dict__
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    model.partial_fit(X + 5, np.arange(100) % 2)             # a new vocabulary, new tables
    np.testing.assert_array_equal(model._parts[0].encoder.transform(X + 5),
                                  old_codes(model._parts[0].encoder, X + 5))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_column_major_fit_is_the_row_major_model_without_a_copy(dtype, n_jobs, monkeypatch):
    rng = np.random.default_rng(1)
    X = (rng.normal(size=(9000, 70)) * 5 + 1e4).astype(dtype)
    X[rng.random(X.shape) < 0.03] = np.nan
    y = rng.integers(0, 4, size=9000)
    w = rng.uniform(0.5, 2, size=9000)
    c_model = GaussianNB(n_jobs=n_jobs).fit(X, y, sample_weight=w)
    XF = np.asfortranarray(X)
    seen = []
    kernel = _nb_fast.gaussian_moments

    def spy(data, *args):
        seen.append(data)
        return kernel(data, *args)
    monkeypatch.setattr(_classes._nb, "gaussian_moments", spy)
    f_model = GaussianNB(n_jobs=n_jobs).fit(XF, y, sample_weight=w)
    assert seen[0] is XF                                     # the caller's array, no copy
    for name in ("theta_", "var_", "feature_count_", "class_count_", "epsilon_"):
        np.testing.assert_array_equal(getattr(f_model, name), getattr(c_model, name))
    chunked = GaussianNB().partial_fit(XF[:4000], y[:4000], classes=np.arange(4))
    chunked.partial_fit(np.asfortranarray(X[4000:]), y[4000:])
    reference = GaussianNB().partial_fit(X[:4000], y[:4000], classes=np.arange(4))
    reference.partial_fit(X[4000:], y[4000:])
    np.testing.assert_array_equal(chunked.var_, reference.var_)


@pytest.mark.parametrize("where", [(0, 0), (123, 5), (8999, 69)])
def test_infinity_found_without_a_separate_read(where):
    X = np.random.default_rng(2).normal(size=(9000, 70))
    X[where] = -np.inf
    model = GaussianNB()
    for data in (X, np.asfortranarray(X)):
        with pytest.raises(ValueError, match="infinity"):
            model.fit(data, np.arange(9000) % 3)
        assert not hasattr(model, "theta_")
    w = np.ones(9000)
    w[where[0]] = 0.0                                         # a row the moments never see
    with pytest.raises(ValueError, match="infinity"):
        model.fit(X, np.arange(9000) % 3, sample_weight=w)


@pytest.mark.parametrize("y", [
    np.array([5, 3, 5, 9, 3], dtype=np.int8), np.array([2**40, -7, 2**40]),
    np.array([0, 2**62, 1]), np.array([7, 7, 8], dtype=np.uint64),
    np.array([2**63 + 5, 3], dtype=np.uint64), np.array([1.0, 0.0, 1.0]),
    np.array([0, 2, 1, 1, 0]), np.array([4, 6, 5, 5], dtype=np.int32),
    np.array([0, 1], dtype=np.uint8), np.array([[0, 9], [2, 9], [1, 9]])[:, 0]])
def test_label_codes_equal_np_unique(y):
    model = GaussianNB()
    given = y.copy()
    codes = model._encode_labels(y)
    np.testing.assert_array_equal(y, given)
    classes, inverse = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(model.classes_, classes)
    assert model.classes_.dtype == classes.dtype
    np.testing.assert_array_equal(codes, inverse)
    assert codes.dtype == np.int64


@pytest.mark.parametrize("model", [CategoricalNB(), GaussianNB(), NaiveBayes()])
def test_fit_with_a_strided_label_column(model):
    rng = np.random.default_rng(8)
    X = rng.integers(0, 4, size=(300, 3))
    Y = rng.integers(0, 3, size=(300, 2))
    y = Y[::-1, 1]                                             # a strided view of int64
    fitted = model.fit(X if not isinstance(model, GaussianNB) else X.astype(float), y)
    np.testing.assert_array_equal(fitted.class_count_, np.bincount(y))
    np.testing.assert_array_equal(Y[::-1, 1], y)              # untouched


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("threads", [1, 2])
def test_counting_through_the_lookup_equals_counting_codes(dtype, threads):
    rng = np.random.default_rng(4)
    X = (rng.integers(0, 7, size=(12000, 5)) * [1, 3, 1, 1, 100] - [0, 5, 0, 2, 0]).astype(dtype)
    y = rng.integers(0, 3, size=12000).astype(np.int64)
    sw = rng.uniform(0.5, 2.0, size=12000)
    enc = CategoryEncoder(range(5)).fit(X[:8000])           # the last rows hold unseen values
    Z = X.copy()
    Z[-50:] = 10**6
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in enc.categories_])]).astype(
        np.int64)
    fused = np.ones((3, offsets[-1]))
    _nb_fast.count_int_categories(*enc.int_lookup(Z), y, sw, offsets, fused, threads)
    plain = np.ones((3, offsets[-1]))
    _nb_fast.count_categories(enc.transform(Z), y, sw, offsets, plain, threads)
    np.testing.assert_array_equal(fused, plain)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("threads", [1, 2])
def test_likelihood_through_the_lookup_equals_the_codes_path(dtype, threads):
    rng = np.random.default_rng(7)
    X = (rng.integers(0, 7, size=(3000, 5)) * [1, 3, 1, 1, 100] - [0, 5, 0, 2, 0]).astype(dtype)
    y = rng.integers(0, 3, size=3000)
    model = CategoricalNB(smoothing="m-estimate").fit(X[:2000], y[:2000])
    part = model._parts[0]
    Z = X.copy()
    Z[-50:] = np.iinfo(dtype).min                            # never seen: the unseen rows
    Z[-20:, 1] = 10**6 if dtype == np.int64 else 2**31 - 1
    fused = np.ones((len(Z), 3))
    _nb_fast.categorical_jll_int(*part.encoder.int_lookup(Z), part.table, part.table_offsets,
                                 fused, threads)
    plain = np.ones((len(Z), 3))
    _nb_fast.categorical_jll(part.encoder.transform(Z), part.table, part.table_offsets, plain,
                             threads)
    np.testing.assert_array_equal(fused, plain)
    assert_same_probabilities(model.predict_proba(Z), old_log_proba(model, Z))
    with pytest.raises(ValueError, match="out"):
        _nb_fast.categorical_jll_int(*part.encoder.int_lookup(Z), part.table,
                                     part.table_offsets, np.ones((len(Z), 2)), threads)


# --- CategoricalNB's fit on an integer matrix: one counting read of X (count_int_range)
def fit_both_ways(make_model, chunks, monkeypatch, counted=True):
    """The model fitted chunk by chunk through count_int_range, and through the encoder's
    path (what fit did before: levels found by a scan, then counted through the lookup);
    counted: whether every chunk is an integer matrix that takes count_int_range's path."""
    fast = make_model()
    for X, y, sw in chunks:
        fast.partial_fit(X, y, classes=[0, 1, 2], sample_weight=sw)
    calls = []
    with monkeypatch.context() as patch:
        patch.setattr(_classes, "_count_int_matrix", lambda *args: calls.append(1))
        old = make_model()
        for X, y, sw in chunks:
            old.partial_fit(X, y, classes=[0, 1, 2], sample_weight=sw)
    assert len(calls) == (len(chunks) if counted else 0)
    return fast, old


def int_chunks(seed, kind, dtype, n_chunks, rows=12000):
    rng = np.random.default_rng(seed)
    chunks = []
    for c in range(n_chunks):
        X = rng.integers(0, 6 + 2 * c, size=(rows, 4))       # later chunks bring new levels
        if kind == "offset":                                  # outside 0..255: two reads
            X = X * [1, 7, 1, 1] + [-3, 1000, 0, -(2**40)]
        elif kind == "wide":                                  # hashed ids: the encoder path
            X = X * [1, 1, 2**33, 1]
        X = X.astype(dtype)
        y = rng.integers(0, 3, size=rows)
        sw = rng.uniform(0.1, 3.0, size=rows)
        sw[:500] = 0.0                                        # their levels must not count
        if kind != "wide":
            X[:20] = X[:20] + (17 if dtype != np.bool_ else 0)
        chunks.append((X, y, sw))
    return chunks


@pytest.mark.parametrize("kind, dtype", [("codes", np.int64), ("codes", np.int32),
                                         ("codes", np.uint8), ("codes", np.bool_),
                                         ("offset", np.int64), ("wide", np.int64)])
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_int_matrix_fit_counts_equal_the_encoder_path(kind, dtype, n_jobs, monkeypatch):
    chunks = int_chunks(5, kind, dtype, n_chunks=3)
    fast, old = fit_both_ways(lambda: CategoricalNB(n_jobs=n_jobs), chunks, monkeypatch)
    for a, b in zip(fast.categories_, old.categories_):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    for a, b in zip(fast.category_count_, old.category_count_):
        np.testing.assert_array_equal(a, b)                   # bit for bit
    for a, b in zip(fast.feature_log_prob_, old.feature_log_prob_):
        np.testing.assert_array_equal(a, b)
    X = chunks[0][0]
    np.testing.assert_array_equal(fast.predict_proba(X[:300]), old.predict_proba(X[:300]))
    if kind == "codes" and dtype != np.bool_:     # levels only in rows of weight 0: absent
        assert all(levels.max() < 17 for levels in fast.categories_)


@pytest.mark.parametrize("values", [[2**63 - 1, 2**63 - 2, 0], [-2**63, 5, 2**63 - 1],
                                    [-2**63, -2**63 + 1, 3]])
def test_int_matrix_fit_with_int64_extremes(values, monkeypatch):
    """Ranges spanning most of int64 next to small codes: the widths overflow int64, so the
    count falls back to the encoder's path (same model)."""
    rng = np.random.default_rng(9)
    levels = np.array(values, dtype=np.int64)
    X = np.column_stack([levels[rng.integers(3, size=500)], rng.integers(0, 4, size=500)])
    chunks = [(X, rng.integers(0, 3, size=500), None)]
    fast, old = fit_both_ways(CategoricalNB, chunks, monkeypatch)
    for a, b in zip(fast.categories_, old.categories_):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fast.category_count_, old.category_count_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast.categories_[0], np.sort(levels))


def test_int_matrix_fit_after_float_codes_and_into_a_mixed_model(monkeypatch):
    rng = np.random.default_rng(6)
    X = rng.integers(0, 5, size=(3000, 3))
    y = rng.integers(0, 3, size=3000)
    floats = [(X.astype(float), y, None), (X[::-1] + 1, y, None)]   # float vocab, then ints
    fast, old = fit_both_ways(CategoricalNB, floats, monkeypatch, counted=False)
    for a, b in zip(fast.category_count_, old.category_count_):
        np.testing.assert_array_equal(a, b)
    mixed = NaiveBayes(categorical_features=[0, 2]).fit(X, y)
    ref = CategoricalNB().fit(X[:, [0, 2]], y)
    for a, b in zip(mixed.category_count_, ref.category_count_):
        np.testing.assert_array_equal(a, b)


def test_int_matrix_fit_equals_scikit_learn():
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    rng = np.random.default_rng(1)                 # bench_naive_bayes.py's data, 50,000 rows
    y = rng.integers(0, 3, size=50000)
    X = rng.integers(0, 10, size=(50000, 20))
    tilt = rng.random((50000, 20)) < 0.15
    X[tilt] = (y[:, None] * 3 + np.arange(20))[tilt] % 10
    ours, theirs = CategoricalNB(alpha=1.0).fit(X, y), SkCategoricalNB(alpha=1.0).fit(X, y)
    for a, b in zip(ours.category_count_, theirs.category_count_):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X[:2000]), theirs.predict_proba(X[:2000]),
                               rtol=0, atol=1e-12)


def test_count_int_range_counts_inside_and_reports_outside():
    X = np.array([[0, 5], [2, -1], [3, 9], [1, 5], [-7, 4]], dtype=np.int64)
    y = np.array([0, 1, 1, 0, 0], dtype=np.int64)
    sw = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    tables, outside, low, high = _nb_fast.count_int_range(
        X, y, sw, np.array([0, 4], dtype=np.int64), np.array([3, 2], dtype=np.int64), 2)
    assert outside == 4                            # 3 and -7 in column 0; -1 and 9 in column 1
    np.testing.assert_array_equal(low, [-7, -1])
    np.testing.assert_array_equal(high, [3, 9])
    # columns: x0 = 0, 1, 2 then x1 = 4, 5
    np.testing.assert_array_equal(tables, [[[1, 8, 0, 16, 9], [0, 0, 2, 0, 0]]])
    _, outside, low, high = _nb_fast.count_int_range(
        X.astype(np.int32), y, sw, np.array([-7, -1], dtype=np.int64),
        np.array([11, 11], dtype=np.int64), 2)
    assert outside == 0
    assert low.tolist() == [np.iinfo(np.int64).max] * 2    # no cell outside
    with pytest.raises(ValueError, match="width"):
        _nb_fast.count_int_range(X, y, sw, np.zeros(2, dtype=np.int64),
                                 np.array([3, -1], dtype=np.int64), 2)
    with pytest.raises(ValueError, match="sw"):
        _nb_fast.count_int_range(X, y, sw[:3], np.zeros(2, dtype=np.int64),
                                 np.ones(2, dtype=np.int64), 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mixed_naive_bayes_on_real_columns_reads_x_in_place(dtype, monkeypatch):
    """NaiveBayes without categorical columns hands the caller's row-major X to the Gaussian
    kernels, float32 as float64 (a float32 X was copied to float64: 3x X's memory at fit and
    at predict), and answers as GaussianNB does."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 12)).astype(dtype)
    X[rng.random(X.shape) < 0.02] = np.nan
    y = rng.integers(0, 3, size=3000)
    seen = []
    for name in ("gaussian_moments", "gaussian_jll"):
        def spy(data, *args, kernel=getattr(_nb_fast, name)):
            seen.append(data)
            return kernel(data, *args)
        monkeypatch.setattr(_classes._nb, name, spy)
    P = NaiveBayes().fit(X, y).predict_proba(X)
    assert len(seen) == 2 and all(data is X for data in seen)       # no copy, fit and predict
    np.testing.assert_array_equal(P, GaussianNB().fit(X, y).predict_proba(X))


@pytest.mark.parametrize("make", ["GaussianNB", "LogisticRegression", "DecisionTreeClassifier"])
def test_label_codes_never_alias_the_users_y(make):
    """int64 labels 0..K-1 are their own codes; the codes handed to an estimator are a copy,
    so no kernel can write into the caller's y."""
    import fastml
    y = np.array([0, 1, 2, 1, 0, 2], dtype=np.int64)
    model = getattr(fastml, make)()
    codes = model._encode_labels(y)
    np.testing.assert_array_equal(codes, y)
    assert not np.shares_memory(codes, y)
