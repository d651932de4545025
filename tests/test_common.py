"""The contract every public estimator keeps (found through fastml.all_estimators(), so a new
estimator is checked the moment it is exported): fit returns self, pickling keeps predictions,
the same seed gives the same model, inputs are not modified, probabilities sum to 1, the
scikit-learn parameter protocol works, and bad input gets a clear ValueError."""
import inspect
import pickle

import numpy as np
import pytest

import fastml
from fastml import clone
from fastml._base import NotFittedError

ESTIMATORS = fastml.all_estimators()
IDS = [name for name, _ in ESTIMATORS]


def make(cls):
    params = {}
    names = cls._get_param_names()
    if "random_state" in names:
        params["random_state"] = 0
    return cls(**params)


def data_for(est, n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    if est._estimator_type == "classifier":
        score = X[:, 0] + 0.5 * X[:, 1]
        y = np.where(score > 0.5, "high", np.where(score < -0.5, "low", "mid")).astype(object)
        return X, y
    if est._estimator_type == "regressor":
        return X, X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=n)
    return X, None


def outputs(est, X):
    """Everything an estimator says about X, to compare two models."""
    out = {}
    for method in ("predict", "predict_proba", "decision_function", "transform"):
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X))
    return out


def assert_same_outputs(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if a[key].dtype == object:
            assert (a[key] == b[key]).all(), key
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.fixture(params=ESTIMATORS, ids=IDS)
def cls(request):
    return request.param[1]


def test_fit_returns_self(cls):
    est = make(cls)
    X, y = data_for(est)
    assert est.fit(X, y) is est


def test_pickle_round_trip_keeps_predictions(cls):
    est = make(cls)
    X, y = data_for(est)
    est.fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert_same_outputs(outputs(est, X), outputs(again, X))


def test_same_seed_same_model(cls):
    X, y = data_for(make(cls))
    a, b = make(cls).fit(X, y), make(cls).fit(X, y)
    assert_same_outputs(outputs(a, X), outputs(b, X))


def test_inputs_not_modified(cls):
    est = make(cls)
    X, y = data_for(est)
    X0, y0 = X.copy(), None if y is None else y.copy()
    est.fit(X, y)
    outputs(est, X)
    np.testing.assert_array_equal(X, X0)
    if y is not None:
        assert (y == y0).all()


def test_probabilities_sum_to_one(cls):
    est = make(cls)
    if not hasattr(est, "predict_proba"):
        pytest.skip("no predict_proba")
    X, y = data_for(est)
    proba = est.fit(X, y).predict_proba(X)
    assert proba.shape == (X.shape[0], len(est.classes_))
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_float32_input_answers_as_float64_does(cls):
    """float32 X is kept as float32 (no float64 copy) and gives the float64 fit's answers up
    to float32 rounding; probabilities are float64, and scores / regression predictions are
    float32 only when the model's coef_ is (the linear models fitted on float32); a
    transform keeps X's dtype."""
    X, y = data_for(make(cls), n=200)
    X = X.astype(np.float32).astype(np.float64)      # the same numbers in both dtypes
    wide, narrow = make(cls).fit(X, y), make(cls).fit(X.astype(np.float32), y)
    a, b = outputs(wide, X), outputs(narrow, X.astype(np.float32))
    single = getattr(narrow, "coef_", np.zeros(0)).dtype == np.float32
    for method in a:
        if method == "predict_proba":
            assert b[method].dtype == np.float64
        elif b[method].dtype.kind == "f":
            narrow_out = single or method == "transform"
            assert b[method].dtype == (np.float32 if narrow_out else np.float64), method
        if a[method].dtype == object or a[method].dtype.kind in "iu":
            assert (a[method] != b[method]).mean() <= 0.02, method   # ties at a boundary
        else:
            scale = max(1.0, float(np.abs(a[method]).max()))
            np.testing.assert_allclose(b[method], a[method], rtol=0, atol=2e-4 * scale,
                                       err_msg=method)


def test_classifier_predicts_known_labels_and_learns(cls):
    est = make(cls)
    if est._estimator_type != "classifier":
        pytest.skip("not a classifier")
    X, y = data_for(est, n=300)
    est.fit(X, y)
    assert set(np.unique(est.predict(X))) <= set(est.classes_)
    assert est.score(X, y) > 0.6  # three classes: chance is about 1/3


def test_params_protocol(cls):
    est = make(cls)
    params = est.get_params()
    twin = clone(est)
    assert twin.get_params().keys() == params.keys()
    assert type(twin) is cls and twin is not est
    assert repr(est).startswith(cls.__name__ + "(")
    with pytest.raises(ValueError, match="invalid parameter"):
        est.set_params(no_such_parameter=1)


def test_not_fitted_raises(cls):
    est = make(cls)
    X, _ = data_for(est)
    method = "transform" if est._estimator_type == "transformer" else "predict"
    with pytest.raises(NotFittedError):
        getattr(est, method)(X)


def test_wrong_feature_count_at_predict(cls):
    est = make(cls)
    X, y = data_for(est)
    est.fit(X, y)
    method = "transform" if est._estimator_type == "transformer" else "predict"
    with pytest.raises(ValueError, match="features"):
        getattr(est, method)(X[:, :3])


@pytest.mark.parametrize("case", ["empty", "1-D", "inf", "length"])
def test_bad_input_raises_clear_error(cls, case):
    est = make(cls)
    X, y = data_for(est)
    if case == "empty":
        X, y = X[:0], (None if y is None else y[:0])
        pattern = "0 samples|empty|at least"
    elif case == "1-D":
        X = X[:, 0]
        pattern = "1-D|2-D|2D"
    elif case == "inf":
        X = X.copy()
        X[3, 1] = np.inf
        pattern = "inf"
    else:
        if y is None:
            pytest.skip("no y")
        y = y[:-1]
        pattern = "samples|length|inconsistent"
    with pytest.raises(ValueError, match=pattern):
        est.fit(X, y)


def test_a_failed_fit_keeps_what_is_not_a_fits(cls):
    """A fit that raises leaves the estimator unfitted, but attributes a fit does not own stay:
    a Pipeline puts its callback context on a step around the step's fit and deletes it
    afterwards, so dropping it turned the step's TypeError (a sample_weight it does not take)
    into an AttributeError; set_output's configuration and a user's attributes too."""
    est = make(cls).fit(*data_for(make(cls)))
    X, y = data_for(est)
    X = X.copy()
    X[3, 1] = np.inf
    est._parent_callback_ctx = context = object()
    est.note = "mine"
    with pytest.raises(ValueError, match="inf"):
        est.fit(X, y)
    assert est._parent_callback_ctx is context and est.note == "mine"
    with pytest.raises(NotFittedError):
        est.predict(X[:2]) if hasattr(est, "predict") else est.transform(X[:2])
    if "sample_weight" not in inspect.signature(cls.fit).parameters:
        pipeline = pytest.importorskip("sklearn.pipeline")
        step = pipeline.make_pipeline(make(cls))
        with pytest.raises(TypeError, match="sample_weight"):
            step.fit(*data_for(make(cls)), **{f"{cls.__name__.lower()}__sample_weight": None})


def test_fit_state_names_every_private_attribute_a_fit_leaves(cls):
    """What a fit owns is decided by fastml._base.is_fit_state (a failed fit drops exactly
    that, and keeps the rest): every attribute a fit leaves must be a parameter or fit state,
    or a failed refit would keep the earlier fit's."""
    from fastml._base import is_fit_state
    est = make(cls)
    X, y = data_for(est)
    est.fit(X, y)
    params = set(est.get_params(deep=False))
    assert [name for name in vars(est) if name not in params and not is_fit_state(name)] == []


def test_nan_is_rejected_or_handled(cls):
    est = make(cls)
    X, y = data_for(est)
    X = X.copy()
    X[5, 2] = np.nan
    if est._allows_nan:
        # A missing cell in column 2 (which carries no signal in data_for) must change
        # nothing that matters: the model still fits the other rows as well as without it.
        clean = make(cls).fit(np.delete(X, 5, axis=0), np.delete(y, 5, axis=0))
        est.fit(X, y)
        rows = np.delete(np.arange(len(X)), 5)
        assert abs(est.score(X[rows], y[rows]) - clean.score(X[rows], y[rows])) <= 0.1
        pred = est.predict(X[[5]])
        if est._estimator_type == "classifier":
            assert pred[0] in set(y)
        else:
            assert np.isfinite(pred).all()
    else:
        with pytest.raises(ValueError, match="NaN"):
            est.fit(X, y)


def test_single_class_is_rejected(cls):
    est = make(cls)
    if est._estimator_type != "classifier":
        pytest.skip("not a classifier")
    X, _ = data_for(est)
    with pytest.raises(ValueError, match="class"):
        est.fit(X, np.array(["only"] * X.shape[0], dtype=object))


def test_dataframe_feature_names_are_recorded_and_checked(cls):
    pd = pytest.importorskip("pandas")
    est = make(cls)
    X, y = data_for(est)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est.fit(frame, y)
    assert list(est.feature_names_in_) == ["a", "b", "c", "d"]
    method = "transform" if est._estimator_type == "transformer" else "predict"
    with pytest.raises(ValueError, match="feature names"):
        getattr(est, method)(frame[["b", "a", "c", "d"]])


def _thread_settings():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return sorted((lib["internal_api"], lib["filepath"], lib["num_threads"])
                  for lib in threadpoolctl.threadpool_info())


def test_eight_threads_predict_like_one_and_leave_thread_settings_alone(cls):
    """Predicting from 8 threads at once gives one thread's answers, and neither fit nor
    predict changes the process's BLAS / OpenMP thread settings (issue 12)."""
    from concurrent.futures import ThreadPoolExecutor
    before = _thread_settings()
    est = make(cls)
    X, y = data_for(est)
    est.fit(X, y)
    expected = outputs(est, X)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: outputs(est, X), range(16)))
    for got in results:
        assert_same_outputs(expected, got)
    assert _thread_settings() == before
