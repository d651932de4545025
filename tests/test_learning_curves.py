"""fastml.plot.learning_curves: held-out error against training-set size, checked against a
direct loop that follows the documented procedure; it computes without matplotlib and draws
with it."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml import metrics
from fastml.plot import LearningCurves, learning_curves
from test_properties import BUDGET


def blobs(n=120, seed=0, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = X[:, 0] + 0.7 * X[:, 1] + 0.8 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, np.array(["ant", "bee", "cow", "dog"])[y]


def direct_loop(models, X, y, sizes, n_repeats, n_test, seed, score):
    """The docstring's procedure written out: one Generator, a permutation per repeat, the
    first n_test rows held out, the pool's first row of each class moved to the front, nested
    prefixes of the pool as training sets."""
    rng = np.random.default_rng(seed)
    out = {name: np.empty((n_repeats, len(sizes))) for name in models}
    for r in range(n_repeats):
        order = rng.permutation(len(y))
        test, pool = order[:n_test], order[n_test:]
        firsts = sorted(int(np.flatnonzero(y[pool] == c)[0]) for c in np.unique(y))
        pool = np.concatenate([pool[firsts], np.delete(pool, firsts)])
        for k, size in enumerate(sizes):
            train = pool[:size]
            assert len(np.unique(y[train])) == len(np.unique(y))
            for name, make in models.items():
                model = make().fit(X[train], y[train])
                out[name][r, k] = score(model, X[test], y[test])
    return out


def error(model, X, y):
    return float(np.mean(model.predict(X) != y))


def test_errors_equal_a_direct_loop():
    X, y = blobs(k=3)
    models = {"GaussianNB()": fastml.GaussianNB,
              "LogisticRegression(alpha=0.01)": lambda: fastml.LogisticRegression(alpha=0.01)}
    curves = learning_curves([m() for m in models.values()], X, y, sizes=[3, 10, 0.5, 1.0],
                             n_repeats=4, test_size=0.25, random_state=7, draw=False)
    assert curves.names == list(models)
    assert curves.sizes.tolist() == [3, 10, 45, 90]      # 0.5 and 1.0 of the 90 pool rows
    assert curves.n_test == 30 and curves.n_repeats == 4 and curves.scoring == "error"
    expected = direct_loop(models, X, y, [3, 10, 45, 90], 4, 30, 7, error)
    for name in models:
        np.testing.assert_allclose(curves.scores[name], expected[name], rtol=0, atol=1e-15)
        np.testing.assert_allclose(curves.mean(name), expected[name].mean(axis=0), rtol=1e-15)
        np.testing.assert_allclose(curves.std(name), expected[name].std(axis=0, ddof=1),
                                   rtol=1e-14)
    assert curves.ax is None
    # more data helps: the mean error of the largest size is below the smallest size's
    assert curves.mean("GaussianNB()")[-1] < curves.mean("GaussianNB()")[0]


def test_log_loss_and_a_callable_scoring_equal_the_direct_loop():
    X, y = blobs(n=80, seed=3)
    models = {"nb": fastml.GaussianNB}

    def ll(model, X_test, y_test):
        return metrics.log_loss(y_test, model.predict_proba(X_test), model.classes_)

    got = learning_curves({"nb": fastml.GaussianNB()}, X, y, sizes=[5, 30], n_repeats=3,
                          test_size=20, scoring="log_loss", random_state=1, draw=False)
    want = direct_loop(models, X, y, [5, 30], 3, 20, 1, ll)
    np.testing.assert_allclose(got.scores["nb"], want["nb"], rtol=1e-13)

    def zero_one(model, X_test, y_test):
        return error(model, X_test, y_test)
    custom = learning_curves({"nb": fastml.GaussianNB()}, X, y, sizes=[5, 30], n_repeats=3,
                             test_size=20, scoring=zero_one, random_state=1, draw=False)
    assert custom.scoring == "zero_one"
    np.testing.assert_allclose(custom.scores["nb"],
                               direct_loop(models, X, y, [5, 30], 3, 20, 1, error)["nb"],
                               rtol=0, atol=1e-15)


def test_regressors_are_scored_by_rmse():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ [1.0, -2.0] + 0.1 * rng.normal(size=60)
    curves = learning_curves(fastml.LinearRegression(), X, y, sizes=[5, 40], n_repeats=2,
                             test_size=0.25, random_state=0, draw=False)
    # no class reordering for regressors: training rows are a plain prefix of the pool
    order_rng = np.random.default_rng(0)
    for r in range(2):
        order = order_rng.permutation(60)
        test, pool = order[:15], order[15:]
        for k, size in enumerate([5, 40]):
            model = fastml.LinearRegression().fit(X[pool[:size]], y[pool[:size]])
            want = metrics.rmse(y[test], model.predict(X[test]))
            assert curves.scores["LinearRegression()"][r, k] == pytest.approx(want, rel=1e-12)
    assert curves.scoring == "rmse"


def test_inputs_and_estimators_are_left_alone():
    X, y = blobs(n=60)
    X.flags.writeable = False
    y_before = y.copy()
    nb = fastml.GaussianNB()
    learning_curves([nb, nb], X, y, sizes=[4], n_repeats=1, random_state=0, draw=False)
    assert not hasattr(nb, "classes_")           # clones are fitted, not the object given
    np.testing.assert_array_equal(y, y_before)


def test_same_estimator_twice_keeps_both_curves():
    X, y = blobs(n=60)
    curves = learning_curves([fastml.GaussianNB(), fastml.GaussianNB()], X, y, sizes=[4],
                             n_repeats=2, random_state=0, draw=False)
    assert curves.names == ["GaussianNB()", "GaussianNB() #2"]
    np.testing.assert_array_equal(curves.scores["GaussianNB()"],
                                  curves.scores["GaussianNB() #2"])


@pytest.mark.parametrize("kwargs, match", [
    ({"sizes": [1]}, "at least the 2 classes"),
    ({"sizes": [46]}, "at most the 45 rows"),
    ({"sizes": [1.5]}, "fraction in \\(0, 1\\]"),
    ({"sizes": []}, "sizes is empty"),
    ({"sizes": "all"}, "sequence"),
    ({"n_repeats": 0}, "n_repeats"),
    ({"test_size": 1.0}, "test_size"),
    ({"test_size": 60}, "leaves no rows"),
    ({"scoring": "accuracy"}, "scoring must be one of"),
    ({"draw": "yes"}, "draw must be"),
])
def test_bad_arguments_name_the_problem(kwargs, match):
    X, y = blobs(n=60)
    with pytest.raises(ValueError, match=match):
        learning_curves(fastml.GaussianNB(), X, y, **{"n_repeats": 1, "draw": False, **kwargs})


def test_bad_estimators_and_data():
    X, y = blobs(n=60)
    with pytest.raises(TypeError, match="not an estimator"):
        learning_curves(["GaussianNB"], X, y, draw=False)
    with pytest.raises(ValueError, match="empty"):
        learning_curves([], X, y, draw=False)
    with pytest.raises(ValueError, match="mix kinds"):
        learning_curves([fastml.GaussianNB(), fastml.LinearRegression()], X, y, draw=False)
    with pytest.raises(ValueError, match="one value per row"):
        learning_curves(fastml.GaussianNB(), X, y[:-1], draw=False)
    rare = y.astype(object)
    rare[0] = "rare"      # a class of one row: held out in about half of the splits
    outcomes = []
    for seed in range(8):
        try:
            learning_curves(fastml.GaussianNB(), X, rare, test_size=30, sizes=[3],
                            n_repeats=1, random_state=seed, draw=False)
            outcomes.append("ok")
        except ValueError as exc:
            assert "no training row has class 'rare'" in str(exc)
            outcomes.append("error")
    assert set(outcomes) == {"ok", "error"}


def test_computes_without_matplotlib():
    code = ("import sys\n"
            "sys.modules['matplotlib'] = None\n"
            "import numpy as np, fastml\n"
            "from fastml.plot import learning_curves\n"
            "X = np.arange(40.0).reshape(20, 2); y = np.arange(20) % 2\n"
            "c = learning_curves(fastml.GaussianNB(), X, y, sizes=[2, 10], n_repeats=2,\n"
            "                    random_state=0)\n"
            "print(c.ax is None, c.scores['GaussianNB()'].shape)\n")
    from _robust import run_python
    out = run_python(["-c", code], timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True (2, 2)"


def test_draws_mean_and_band(tmp_path):
    pytest.importorskip("matplotlib")
    X, y = blobs()
    path = tmp_path / "curves.png"
    curves = learning_curves([fastml.GaussianNB(), fastml.LogisticRegression()], X, y,
                             sizes=[4, 20, 90], n_repeats=3, random_state=0, path=path,
                             figsize=(5, 4), dpi=50)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    ax = curves.ax
    assert [t.get_text() for t in ax.get_legend().get_texts()] == curves.names
    for line, name in zip(ax.lines, curves.names):
        np.testing.assert_array_equal(line.get_xdata(), [4, 20, 90])
        np.testing.assert_allclose(line.get_ydata(), curves.mean(name))
    assert len(ax.collections) == 2                 # one ±std band per estimator
    assert ax.get_xscale() == "log" and "error" in ax.get_ylabel()
    assert "3 random subsamples" in ax.get_title()
    # "auto" draws when matplotlib is there; False never does
    assert learning_curves(fastml.GaussianNB(), X, y, sizes=[4], n_repeats=1).ax is not None


def test_result_as_dict_and_table():
    curves = LearningCurves([5, 10], {"a": np.array([[0.5, 0.25], [0.3, 0.25]])}, "error", 9)
    d = curves.as_dict()
    assert d["sizes"].tolist() == [5, 10] and d["n_test"] == 9
    np.testing.assert_allclose(d["mean"]["a"], [0.4, 0.25])
    lines = curves.table().splitlines()
    assert lines[1].split() == ["5", "0.4000", "±", "0.1414"]
    assert "n_repeats=2" in repr(curves)


@st.composite
def curve_problems(draw):
    n = draw(st.integers(6, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(2, 3))
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    X = rng.normal(size=(n, 2)) + y[:, None]
    n_test = draw(st.integers(1, n - k - 1))
    sizes = sorted(set(draw(st.lists(st.integers(k, n - n_test), min_size=1, max_size=4))))
    return X, y, n_test, sizes, draw(st.integers(1, 3)), draw(st.integers(0, 1000))


@settings(BUDGET, max_examples=15)
@given(problem=curve_problems())
def test_property_scores_are_errors_of_nested_training_sets(problem):
    # Whatever the data: either a clear ValueError (a class missing from the training rows)
    # or one error in [0, 1] per repeat and size, each a multiple of 1 / n_test, equal to the
    # direct loop.
    X, y, n_test, sizes, repeats, seed = problem
    try:
        curves = learning_curves(fastml.GaussianNB(var_smoothing=1e-6), X, y, sizes=sizes,
                                 n_repeats=repeats, test_size=n_test, random_state=seed,
                                 draw=False)
    except ValueError as exc:
        assert "no training row has class" in str(exc)
        return
    s = curves.scores[curves.names[0]]
    assert s.shape == (repeats, len(sizes))
    assert ((s >= 0) & (s <= 1)).all()
    np.testing.assert_allclose(s * n_test, np.round(s * n_test), atol=1e-9)
    want = direct_loop({"nb": lambda: fastml.GaussianNB(var_smoothing=1e-6)}, X, y, sizes,
                       repeats, n_test, seed, error)["nb"]
    np.testing.assert_allclose(s, want, rtol=0, atol=1e-15)


def test_dataframe_and_sparse_input_give_the_array_numbers():
    pd = pytest.importorskip("pandas")
    import scipy.sparse as sp
    X, y = blobs(n=80)
    kwargs = dict(sizes=[4, 30], n_repeats=3, random_state=5, draw=False)
    base = learning_curves(fastml.GaussianNB(), X, y, **kwargs).scores["GaussianNB()"]
    frame = learning_curves(fastml.GaussianNB(), pd.DataFrame(X, columns=["a", "b", "c"]),
                            pd.Series(y), **kwargs).scores["GaussianNB()"]
    np.testing.assert_array_equal(frame, base)
    lr = fastml.LogisticRegression(alpha=0.01)
    dense = learning_curves(lr, X, y, **kwargs).scores[repr(lr)]
    sparse = learning_curves(lr, sp.csr_matrix(X), y, **kwargs).scores[repr(lr)]
    np.testing.assert_allclose(sparse, dense, atol=1e-12)
