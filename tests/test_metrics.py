"""fastml.metrics against scikit-learn's definitions, and the one rule for unseen labels."""
import numpy as np
import pytest
from sklearn import metrics as skm

from fastml import metrics


@pytest.fixture
def classification():
    rng = np.random.default_rng(0)
    y = rng.choice(np.array(["a", "b", "c"]), size=200)
    proba = rng.dirichlet(np.ones(3), size=200)
    pred = np.array(["a", "b", "c"])[proba.argmax(axis=1)]
    w = rng.uniform(0.1, 3.0, size=200)
    return y, pred, proba, w


def test_classification_metrics_match_sklearn(classification):
    y, pred, proba, w = classification
    assert metrics.accuracy_score(y, pred) == pytest.approx(skm.accuracy_score(y, pred))
    assert metrics.accuracy_score(y, pred, sample_weight=w) == pytest.approx(
        skm.accuracy_score(y, pred, sample_weight=w))
    assert metrics.log_loss(y, proba, ["a", "b", "c"]) == pytest.approx(
        skm.log_loss(y, proba, labels=["a", "b", "c"]), rel=1e-12)
    assert metrics.log_loss(y, proba, labels=["a", "b", "c"], sample_weight=w) == \
        pytest.approx(skm.log_loss(y, proba, labels=["a", "b", "c"], sample_weight=w), rel=1e-12)
    np.testing.assert_array_equal(metrics.confusion_matrix(y, pred), skm.confusion_matrix(y, pred))
    np.testing.assert_allclose(metrics.confusion_matrix(y, pred, ["c", "a"], sample_weight=w),
                               skm.confusion_matrix(y, pred, labels=["c", "a"], sample_weight=w))


def test_binary_log_loss_from_one_column():
    y, p = [0, 1, 1], np.array([0.1, 0.7, 0.4])
    assert metrics.log_loss(y, p, [0, 1]) == pytest.approx(skm.log_loss(y, p), rel=1e-12)


def test_log_loss_refuses_a_label_unseen_at_fit_naming_it():
    # The rule (scikit-learn's): a true label outside `classes` is an error, not "p = 0".
    with pytest.raises(ValueError, match=r"not among the classes \[0, 1\]: \[7\]"):
        metrics.log_loss([0, 7, 1], [[0.5, 0.5]] * 3, [0, 1])
    with pytest.raises(ValueError, match="expected"):
        metrics.log_loss([0, 1], [[0.5, 0.5]] * 2, [0, 1, 2])


def test_log_loss_clips_at_eps():
    assert metrics.log_loss([0], [[0.0, 1.0]], [0, 1]) == pytest.approx(-np.log(1e-15))


def test_confusion_matrix_keeps_mixed_label_types_apart():
    # numpy would turn [1, "1"] into two equal strings; the metric must not.
    counts = metrics.confusion_matrix(np.array([1, "1"], dtype=object),
                                      np.array([1, 1], dtype=object), [1, "1"])
    np.testing.assert_array_equal(counts, [[1, 0], [1, 0]])


def test_regression_metrics_match_sklearn():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(50, 2))
    pred = y + rng.normal(scale=0.3, size=y.shape)
    w = rng.uniform(0.5, 2.0, size=50)
    assert metrics.r2_score(y, pred) == pytest.approx(skm.r2_score(y, pred), rel=1e-12)
    assert metrics.r2_score(y[:, 0], pred[:, 0], sample_weight=w) == pytest.approx(
        skm.r2_score(y[:, 0], pred[:, 0], sample_weight=w), rel=1e-12)
    assert metrics.mean_squared_error(y, pred) == pytest.approx(
        skm.mean_squared_error(y, pred), rel=1e-12)
    assert metrics.rmse(y[:, 0], pred[:, 0]) == pytest.approx(
        np.sqrt(skm.mean_squared_error(y[:, 0], pred[:, 0])), rel=1e-12)


def test_r2_of_a_constant_target_is_finite():
    assert metrics.r2_score([3.0, 3.0], [3.0, 3.0]) == 1.0
    assert metrics.r2_score([3.0, 3.0], [3.0, 4.0]) == 0.0
    assert skm.r2_score([3.0, 3.0], [3.0, 4.0]) == 0.0


@pytest.mark.parametrize("call", [
    lambda: metrics.accuracy_score([], []),
    lambda: metrics.log_loss([], np.zeros((0, 2)), [0, 1]),
    lambda: metrics.r2_score([], []),
    lambda: metrics.accuracy_score([1, 2], [1, 2], sample_weight=[0, 0]),
    lambda: metrics.accuracy_score([1, 2], [1]),
], ids=["empty accuracy", "empty log-loss", "empty r2", "zero weights", "lengths"])
def test_degenerate_input_is_a_value_error_not_nan_or_zero_division(call):
    with pytest.raises(ValueError):
        call()


def test_train_test_split_checks_its_arguments():
    from fastml.model_selection import train_test_split
    X, y = np.arange(20).reshape(10, 2), np.arange(10)
    with pytest.raises(ValueError, match="different numbers of samples"):
        train_test_split(X, y[:5])
    for bad in (True, float("nan"), 1.5, -0.2, "0.3", None):
        with pytest.raises(ValueError, match="test_size"):
            train_test_split(X, y, test_size=bad)
    X_train, X_test, _, _ = train_test_split(X, y, test_size=np.float32(0.3), random_state=0)
    assert len(X_test) == 3 and len(X_train) == 7


# ------------------------------------------------------------ property-based, against scikit-learn
from hypothesis import assume, given, settings, strategies as st  # noqa: E402


@st.composite
def labelled(draw):
    n_classes = draw(st.integers(2, 4))
    classes = draw(st.sampled_from([list(range(n_classes)), [f"c{k}" for k in range(n_classes)]]))
    n = draw(st.integers(1, 30))
    codes = draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n))
    pred = draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n))
    raw = np.array(draw(st.lists(st.floats(0.001, 1.0), min_size=n * n_classes,
                                 max_size=n * n_classes))).reshape(n, n_classes)
    weights = np.array(draw(st.lists(st.floats(0.1, 10.0), min_size=n, max_size=n)))
    pick = np.array(classes, dtype=object if isinstance(classes[0], str) else None)
    return (pick[codes], pick[pred], raw / raw.sum(axis=1, keepdims=True), classes, weights)


@settings(max_examples=100, deadline=None)
@given(labelled())
def test_classification_metrics_agree_with_sklearn(case):
    y, pred, proba, classes, w = case
    assert metrics.log_loss(y, proba, classes, sample_weight=w) == pytest.approx(
        skm.log_loss(y, proba, labels=classes, sample_weight=w), rel=1e-9)
    np.testing.assert_array_equal(metrics.confusion_matrix(y, pred, classes),
                                  skm.confusion_matrix(y, pred, labels=classes))
    assert metrics.accuracy_score(y, pred, sample_weight=w) == pytest.approx(
        skm.accuracy_score(y, pred, sample_weight=w), rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), min_size=2, max_size=30))
def test_r2_agrees_with_sklearn(pairs):
    y, pred = np.array(pairs).T
    # where scikit-learn's squares underflow (a residual below ~1e-154) its R² is that of
    # zeros (1.0 for y = [0, 0], pred = [0, 1e-304]); fastml rescales first (tested below)
    for d in (y - pred, y - y.mean()):
        assume(np.all((d == 0) | (np.abs(d) > 1e-150)))
    assert metrics.r2_score(y, pred) == pytest.approx(skm.r2_score(y, pred), rel=1e-9, abs=1e-9)


def test_log_loss_refuses_nan_and_values_outside_0_1():
    """scikit-learn's rule: NaN probabilities made the loss NaN, values above 1 are scores."""
    with pytest.raises(ValueError, match="y_proba contains NaN"):
        metrics.log_loss([0, 1], [[0.5, 0.5], [np.nan, 0.5]], [0, 1])
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        metrics.log_loss([0, 1], [[1.5, -0.5], [0.2, 0.8]], [0, 1])
    with pytest.raises(ValueError, match="not among the classes"):
        metrics.log_loss([0, 2], [[0.5, 0.5], [0.5, 0.5]], [0, 1])


@pytest.mark.parametrize("scale", [1e150, 1e300, 1.7e308])
def test_r2_and_rmse_of_huge_values_are_those_of_the_scaled_values(scale):
    """Squares of values near 1e300 overflow: R² is scale-free and RMSE scales linearly, so both
    must equal the answers on the values divided by `scale` (to rounding)."""
    rng = np.random.default_rng(0)
    y, pred = rng.uniform(-1, 1, size=20), rng.uniform(-1, 1, size=20)
    assert metrics.r2_score(y * scale, pred * scale) == pytest.approx(
        skm.r2_score(y, pred), rel=1e-12)
    assert metrics.rmse(y * scale, pred * scale) == pytest.approx(
        np.sqrt(skm.mean_squared_error(y, pred)) * scale, rel=1e-12)
    assert np.isfinite(metrics.rmse(y * scale, pred * scale))


def test_regression_metrics_refuse_nan():
    """R² of a y with NaN was 1.0 without a word."""
    for fn in (metrics.r2_score, metrics.rmse, metrics.mean_squared_error):
        with pytest.raises(ValueError, match="y_true contains NaN"):
            fn([np.nan, 1.0], [1.0, 2.0])
        with pytest.raises(ValueError, match="y_pred contains NaN"):
            fn([0.0, 1.0], [np.inf, 2.0])


# ------------------------------------------------------------ shapes, tiny values, NaN labels
@pytest.mark.parametrize("fn", [metrics.mean_squared_error, metrics.rmse, metrics.r2_score])
def test_regression_metrics_refuse_a_prediction_of_another_shape_of_the_same_size(fn):
    """A (2, 3) y_pred against a (3, 2) y_true (samples and outputs swapped) was reshaped and
    scored (MSE 75.7); scikit-learn refuses it. Only (n,) against (n, 1) is read as one."""
    y = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    with pytest.raises(ValueError, match=r"\(3, 2\) and \(2, 3\)"):
        fn(y, y.T)
    with pytest.raises(ValueError):
        skm.mean_squared_error(y, y.T)
    with pytest.raises(ValueError, match=r"\(4,\) and \(2, 2\)"):
        fn([1.0, 2.0, 3.0, 4.0], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=r"\(2,\) and \(3, 1\)"):
        fn([1.0, 2.0], [[1.0], [2.0], [3.0]])
    a, b = np.array([1.0, 2.0, 4.0]), np.array([1.5, 2.0, 3.0])
    for t, p in ((a, b[:, None]), (a[:, None], b), (a[:, None], b[:, None])):
        assert fn(t, p) == pytest.approx(fn(a, b), rel=1e-15)
    assert metrics.r2_score(a[:, None], b) == pytest.approx(skm.r2_score(a[:, None], b),
                                                            rel=1e-12)


@pytest.mark.parametrize("scale", [1e-150, 1e-200, 1e-300, 2.0 ** -1020])
def test_r2_and_rmse_of_tiny_values_are_those_of_the_scaled_values(scale):
    """Squares of values near 1e-200 underflow to 0: rmse([0, 0], [3e-200, 4e-200]) was 0.0
    and R² 1.0 (SS_res and SS_tot both 0)."""
    assert metrics.rmse([0.0, 0.0], [3 * scale, 4 * scale]) == pytest.approx(
        np.sqrt(12.5) * scale, rel=1e-12)
    assert metrics.r2_score([1 * scale, 2 * scale, 3 * scale],
                            [1 * scale, 2 * scale, 4 * scale]) == pytest.approx(0.5, rel=1e-12)
    rng = np.random.default_rng(0)
    y, pred = rng.uniform(1, 2, size=20), rng.uniform(1, 2, size=20)  # no subnormal inputs
    assert metrics.r2_score(y * scale, pred * scale) == pytest.approx(
        skm.r2_score(y, pred), rel=1e-12)
    assert metrics.rmse(y * scale, pred * scale) == pytest.approx(
        np.sqrt(skm.mean_squared_error(y, pred)) * scale, rel=1e-12)


def test_rescaling_leaves_ordinary_values_bit_identical():
    rng = np.random.default_rng(1)
    y, pred, w = rng.normal(size=30), rng.normal(size=30), rng.uniform(0.5, 2, size=30)
    assert metrics.mean_squared_error(y, pred, sample_weight=w) == \
        np.average((y - pred) ** 2, weights=w)
    assert metrics.rmse(y, pred) == np.sqrt(np.mean((y - pred) ** 2))


def _nan_object():
    values = np.array([1.0, np.float32("nan"), 1.0], dtype=object)
    assert values[1] is not np.nan  # a numpy float32 NaN among objects, not float("nan")
    return values


@pytest.mark.parametrize("labels", [
    np.array([np.nan, 1.0, np.nan]), [np.nan, 1.0, 1.0], _nan_object(),
    np.array(["a", None, "a"], dtype=object)], ids=["float", "list", "float32 object", "None"])
def test_classification_metrics_refuse_nan_labels(labels):
    """NaN != NaN: each NaN was a label of its own (confusion_matrix([nan, 1, nan],
    [nan, 1, 1]) was 4 x 4 and counted 1 row of 3, accuracy 1/3); scikit-learn raises."""
    other = np.array([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="y_true contains NaN"):
        metrics.confusion_matrix(labels, other)
    with pytest.raises(ValueError, match="y_pred contains NaN"):
        metrics.confusion_matrix(other, labels)
    with pytest.raises(ValueError, match="y_true contains NaN"):
        metrics.accuracy_score(labels, other)
    with pytest.raises(ValueError, match="y_pred contains NaN"):
        metrics.accuracy_score(other, labels)
    with pytest.raises(ValueError, match="contains NaN"):
        metrics.unique_labels(other, labels)
    with pytest.raises(ValueError, match="y_true contains NaN"):
        metrics.log_loss(labels, [[0.5, 0.5]] * 3, [1.0, 2.0])
    if not isinstance(labels, np.ndarray) or labels.dtype != object:
        with pytest.raises(ValueError, match="contains NaN"):
            skm.accuracy_score(labels, other)


def test_classification_metrics_refuse_pandas_missing_labels():
    pd = pytest.importorskip("pandas")
    y = pd.Series(["a", None, "b"], dtype="string")  # pd.NA
    with pytest.raises(ValueError, match="y_true contains NaN"):
        metrics.accuracy_score(y, ["a", "a", "b"])
    with pytest.raises(ValueError, match="y_pred contains NaN"):
        metrics.confusion_matrix(["a", "a", "b"], y)


def test_accuracy_of_multilabel_input_is_subset_accuracy_as_in_sklearn():
    """2-D indicator input was flattened (0.75 for one wrong entry in two rows)."""
    assert metrics.accuracy_score([[0, 1], [1, 1]], [[0, 1], [1, 0]]) == 0.5
    rng = np.random.default_rng(2)
    for _ in range(20):
        t = rng.integers(0, 2, size=(15, 3))
        p = np.where(rng.random((15, 3)) < 0.2, 1 - t, t)
        w = rng.uniform(0.1, 3, size=15)
        assert metrics.accuracy_score(t, p) == pytest.approx(skm.accuracy_score(t, p),
                                                             rel=1e-15)
        assert metrics.accuracy_score(t, p.astype(bool), sample_weight=w) == pytest.approx(
            skm.accuracy_score(t, p.astype(bool), sample_weight=w), rel=1e-12)
    # an (n, 1) column is n labels, not a 1-label matrix; scikit-learn agrees
    assert metrics.accuracy_score(np.array([[1], [2], [3]]), [1, 2, 4]) == pytest.approx(
        skm.accuracy_score(np.array([[1], [2], [3]]), [1, 2, 4]))


@pytest.mark.parametrize("y_true, y_pred, match", [
    ([0, 1], [[0, 1], [1, 0]], "mix"),
    ([[0, 1], [1, 0]], [[0, 1, 0], [1, 0, 0]], "different shapes"),
    ([[1, 2], [3, 4]], [[1, 2], [3, 5]], "multiclass-multioutput"),
])
def test_accuracy_refuses_what_sklearn_refuses_on_2d_input(y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        metrics.accuracy_score(y_true, y_pred)
    with pytest.raises(ValueError):
        skm.accuracy_score(y_true, y_pred)
    with pytest.raises(ValueError, match="1-D"):
        metrics.confusion_matrix(np.array([[0, 1], [1, 0]]), np.array([[0, 1], [1, 0]]))


@pytest.mark.parametrize("eps", [1, 0.5, -1e-3, float("nan"), True, "1e-15", None])
def test_log_loss_refuses_an_eps_outside_0_to_one_half(eps):
    """eps=1 clipped every probability to 1 and scored anything 0."""
    with pytest.raises(ValueError, match=r"eps must be a number in \[0, 0.5\)"):
        metrics.log_loss([0, 1], [[0.9, 0.1], [0.9, 0.1]], [0, 1], eps=eps)


def test_log_loss_eps_zero_turns_the_clip_off():
    assert metrics.log_loss([0, 1], [[0.0, 1.0], [0.0, 1.0]], [0, 1], eps=0) == np.inf
    assert metrics.log_loss([0], [[0.2, 0.8]], [0, 1], eps=0.4) == pytest.approx(-np.log(0.4))
    assert metrics.log_loss([0], [[0.2, 0.8]], [0, 1], eps=np.float32(0.0)) == pytest.approx(
        -np.log(0.2))
