"""Naive Bayes: lecture 004's worked examples with their numbers, the smoothing formulas on a
hand table, partial_fit == fit, agreement with scikit-learn, missing values, bad input."""
import warnings

import numpy as np
import pandas as pd
import pytest

from fastml import CategoricalNB, GaussianNB, NaiveBayes
from fastml.datasets import load_tax_table
from fastml.naive_bayes import ZeroProbabilityWarning


def sig(x, digits):
    """x rounded to `digits` significant figures (how the slides print their numbers)."""
    return float(f"{x:.{digits - 1}e}")


# ------------------------------------------------------------------ 004: the tax table
@pytest.fixture(params=["array", "frame"])
def tax(request):
    return load_tax_table(return_X_y=True, as_frame=request.param == "frame")


def lecture_row(X, refund, status, income):
    row = [[refund, status, income]]
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame(row, columns=X.columns).astype(X.dtypes.to_dict())
    return np.array(row, dtype=object)


def test_tax_table_estimates_004(tax):
    """004, "Estimate Probabilities from Data" and "Example of Naive Bayes Classifier"."""
    X, y = tax
    nb = NaiveBayes(smoothing="none").fit(X, y)
    assert nb.classes_.tolist() == ["No", "Yes"]
    assert nb.categorical_features_.tolist() == [True, True, False]
    np.testing.assert_allclose(nb.class_prior_, [7 / 10, 3 / 10], rtol=1e-15)
    refund, status = nb.categories_
    assert refund.tolist() == ["No", "Yes"]
    assert status.tolist() == ["Divorced", "Married", "Single"]
    P_refund, P_status = (np.exp(t) for t in nb.feature_log_prob_)
    np.testing.assert_allclose(P_refund, [[4 / 7, 3 / 7], [1, 0]], rtol=1e-14)
    np.testing.assert_allclose(P_status, [[1 / 7, 4 / 7, 2 / 7], [1 / 3, 0, 2 / 3]], rtol=1e-14)
    # income: sample mean and variance (n - 1 denominator): 110 / 2975 for No, 90 / 25 for Yes
    np.testing.assert_allclose(nb.theta_[:, 0], [110, 90], rtol=1e-14)
    np.testing.assert_allclose(nb.var_[:, 0], [2975, 25], rtol=1e-6)  # + epsilon_ floor


def test_tax_table_prediction_004(tax):
    X, y = tax
    nb = NaiveBayes(smoothing="none").fit(X, y)
    x = lecture_row(X, "No", "Divorced", 120.0)
    likelihood = np.exp(nb.predict_joint_log_proba(x)[0] - nb.class_log_prior_)
    assert sig(likelihood[0], 1) == 0.0006              # P(X | No) = 4/7 * 1/7 * 0.0072
    assert sig(likelihood[1], 1) == 4e-10               # P(X | Yes) = 1 * 1/3 * 1.2e-9
    # P(Income = 120 | No) = 0.0072 and P(Income = 120 | Yes) = 1.2e-9 on their own. (The
    # slide writes 1 / sqrt(2 pi (54.54)); 54.54 = sqrt(2975) is the standard deviation, so
    # it means 1 / (sqrt(2 pi) 54.54) = 0.007314, times exp(-100 / 5950) = 0.0072; taken
    # literally it would be 0.0531.)
    income = likelihood / np.array([4 / 7 * 1 / 7, 1 * 1 / 3])
    assert sig(income[0], 2) == 0.0072
    assert sig(income[1], 2) == 1.2e-9
    assert nb.predict(x).tolist() == ["No"]
    proba = nb.predict_proba(x)[0]
    expected = likelihood * [0.7, 0.3] / np.dot(likelihood, [0.7, 0.3])
    np.testing.assert_allclose(proba, expected, rtol=1e-12)


def test_married_only_row_004():
    """004, "Issues": X = (Married) -- the other attributes missing -- gives P(Yes | X) = 0."""
    X, y = load_tax_table(return_X_y=True)
    nb = NaiveBayes(smoothing="none").fit(X, y)
    x = np.array([[None, "Married", np.nan]], dtype=object)
    proba = nb.predict_proba(x)[0]
    assert proba.tolist() == [1.0, 0.0]
    joint = np.exp(nb.predict_joint_log_proba(x)[0])
    np.testing.assert_allclose(joint, [4 / 7 * 7 / 10, 0.0], rtol=1e-14)


def test_deleted_row_zero_probabilities_004():
    """004: with Tid 7 deleted, P(X | No) = P(X | Yes) = 0 for (Refund=Yes, Divorced, 120K):
    without smoothing the model cannot classify X and says so; with Laplace it predicts."""
    X, y = load_tax_table(return_X_y=True, drop_tid=7)
    x = np.array([["Yes", "Divorced", 120.0]], dtype=object)
    raw = NaiveBayes(smoothing="none").fit(X, y)
    P_refund, P_status = (np.exp(t) for t in raw.feature_log_prob_)
    np.testing.assert_allclose(P_refund, [[4 / 6, 2 / 6], [1, 0]], rtol=1e-14)
    np.testing.assert_allclose(P_status, [[0, 4 / 6, 2 / 6], [1 / 3, 0, 2 / 3]], rtol=1e-14)
    # (the slide prints mean 91 / variance 685 for No; the six rows give 91.67 / 746.67)
    np.testing.assert_allclose(raw.theta_[:, 0], [550 / 6, 90], rtol=1e-14)
    np.testing.assert_allclose(raw.var_[:, 0], [4480 / 6, 25], rtol=1e-6)  # n - 1: 3733.3 / 5
    # P(Income = 120 | No): the slide's 0.0083 is N(120; 91, 685) = 0.00825, from its own
    # rounded mean and a variance no convention gives (sum (x - 91.67)^2 = 3733.3; / 5 =
    # 746.67, / 6 = 622.2; even sum (x - 91)^2 / 5 = 747.2). The six rows give
    # N(120; 91.67, 746.67) = 0.00853, which prints as 0.0085: a slip in the deck.
    income_only = np.array([[None, None, 120.0]], dtype=object)   # the others missing
    income = np.exp(raw.predict_joint_log_proba(income_only)[0] - raw.class_log_prior_)
    assert sig(income[0], 2) == 0.0085
    assert income[0] == pytest.approx(0.0085287, rel=1e-4)
    assert sig(income[1], 2) == 1.2e-9                   # Yes unchanged: N(120; 90, 25)
    joint = raw.predict_joint_log_proba(x)
    assert np.isneginf(joint).all()                      # both P(X | y) P(y) are 0
    with pytest.warns(ZeroProbabilityWarning, match="probability 0 under every class"):
        proba = raw.predict_proba(x)
    np.testing.assert_allclose(proba[0], raw.class_prior_)  # the defined fallback: priors
    with pytest.warns(ZeroProbabilityWarning):
        assert raw.predict(x).tolist() == ["No"]        # the a-priori class
    smooth = NaiveBayes(smoothing="laplace").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = smooth.predict_proba(x)
    assert np.isfinite(smooth.predict_joint_log_proba(x)).all()
    # Laplace: P(Refund=Yes|Yes) = 1/5, P(Divorced|No) = 1/9 -- both now positive
    np.testing.assert_allclose(np.exp(smooth.feature_log_prob_[0][1, 1]), 1 / 5, rtol=1e-14)
    np.testing.assert_allclose(np.exp(smooth.feature_log_prob_[1][0, 0]), 1 / 9, rtol=1e-14)
    assert smooth.predict(x).tolist() == ["No"]
    assert 0.5 < proba[0, 0] < 1


# ------------------------------------------------------------------ smoothing formulas
HAND_X = np.array([["a", "x"], ["a", "y"], ["b", "x"], ["a", "x"], ["c", "y"],
                   ["b", "y"], ["b", "x"]], dtype=object)
HAND_Y = np.array([0, 0, 0, 0, 1, 1, 1])
# counts for class 0 (n = 4): f0 a=3 b=1 c=0, f1 x=3 y=1; class 1 (n = 3): f0 a=0 b=2 c=1,
# f1 x=1 y=2; v = 3 and 2.
COUNTS = [np.array([[3, 1, 0], [0, 2, 1]]), np.array([[3, 1], [1, 2]])]
N = np.array([[4], [3]])


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_laplace_formula(alpha):
    nb = CategoricalNB(smoothing="laplace", alpha=alpha).fit(HAND_X, HAND_Y)
    for count, log_prob, unseen in zip(COUNTS, nb.feature_log_prob_, nb.unseen_log_prob_.T):
        v = count.shape[1]
        np.testing.assert_allclose(np.exp(log_prob), (count + alpha) / (N + alpha * v),
                                   rtol=1e-14)
        np.testing.assert_allclose(np.exp(unseen), alpha / (N[:, 0] + alpha * v), rtol=1e-14)
    np.testing.assert_array_equal(nb.category_count_[0], COUNTS[0])


@pytest.mark.parametrize("m, p", [(1.0, None), (4.0, None), (2.0, 0.3)])
def test_m_estimate_formula(m, p):
    nb = CategoricalNB(smoothing="m-estimate", m=m, p=p).fit(HAND_X, HAND_Y)
    for count, log_prob, unseen in zip(COUNTS, nb.feature_log_prob_, nb.unseen_log_prob_.T):
        prior = 1 / count.shape[1] if p is None else p
        np.testing.assert_allclose(np.exp(log_prob), (count + m * prior) / (N + m), rtol=1e-14)
        np.testing.assert_allclose(np.exp(unseen), m * prior / (N[:, 0] + m), rtol=1e-14)


def test_m_estimate_with_m_v_and_uniform_p_is_laplace():
    one = NaiveBayes(smoothing="m-estimate", m=3.0).fit(HAND_X[:, :1], HAND_Y)
    lap = NaiveBayes(smoothing="laplace").fit(HAND_X[:, :1], HAND_Y)
    np.testing.assert_allclose(one.feature_log_prob_[0], lap.feature_log_prob_[0], rtol=1e-14)


def test_no_smoothing_is_the_raw_fraction():
    nb = CategoricalNB(smoothing="none").fit(HAND_X, HAND_Y)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(nb.feature_log_prob_[0], np.log(COUNTS[0] / N))
    assert np.isneginf(nb.unseen_log_prob_).all()


def test_unseen_category_gets_zero_count_probability():
    nb = CategoricalNB().fit(HAND_X, HAND_Y)
    x = np.array([["zzz", "x"]], dtype=object)
    expected = (nb.class_log_prior_ + np.log(1 / (N[:, 0] + 3))
                + nb.feature_log_prob_[1][:, 0])
    np.testing.assert_allclose(nb.predict_joint_log_proba(x)[0], expected, rtol=1e-14)
    raw = CategoricalNB(smoothing="none").fit(HAND_X, HAND_Y)
    with pytest.warns(ZeroProbabilityWarning):
        assert np.isfinite(raw.predict_proba(x)).all()


# ------------------------------------------------------------------ partial_fit == fit
def mixed_data(n=700, seed=0, nan_rate=0.05):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    colors = np.array(["red", "green", "blue", "grey"], dtype=object)
    X = np.empty((n, 4), dtype=object)
    X[:, 0] = colors[(y + rng.integers(0, 2, size=n)) % 4]
    X[:, 1] = rng.normal(loc=y * 2.0, scale=1.0 + y, size=n) + 1e6  # far from 0: stability
    X[:, 2] = rng.integers(0, 5, size=n) + y
    X[:, 3] = rng.exponential(size=n) * (y + 1)
    X[:, 2] = X[:, 2].astype(str)
    for j in range(4):
        X[rng.random(n) < nan_rate, j] = None if j in (0, 2) else np.nan
    return X, np.array(["a", "b", "c"], dtype=object)[y]


def assert_same_model(a, b, rtol=1e-12):
    np.testing.assert_allclose(a.class_count_, b.class_count_, rtol=rtol)
    for name in ("theta_", "var_"):
        if hasattr(a, name):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=rtol)
    for la, lb in zip(getattr(a, "feature_log_prob_", []), getattr(b, "feature_log_prob_", [])):
        np.testing.assert_allclose(la, lb, rtol=rtol)
    for ca, cb in zip(getattr(a, "categories_", []), getattr(b, "categories_", [])):
        assert ca.tolist() == cb.tolist()


def chunks(n, parts, seed):
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, n), parts - 1, replace=False))
    return np.split(np.arange(n), cuts)


def test_partial_fit_over_7_chunks_equals_fit_mixed():
    X, y = mixed_data()
    whole = NaiveBayes().fit(X, y)
    streamed = NaiveBayes()
    for idx in chunks(len(y), 7, seed=1):
        streamed.partial_fit(X[idx], y[idx], classes=["a", "b", "c"])
    assert_same_model(whole, streamed)
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X), atol=1e-12)


def test_partial_fit_gaussian_variances_stable():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 6)) * [1, 1e-3, 1e3, 1, 1, 1] + [0, 1e8, -5, 0, 0, 0]
    y = rng.integers(0, 4, size=5000)
    whole = GaussianNB().fit(X, y)
    streamed = GaussianNB()
    for idx in chunks(len(y), 7, seed=2):
        streamed.partial_fit(X[idx], y[idx], classes=np.arange(4))
    assert_same_model(whole, streamed)
    reference = np.array([[np.var(X[y == k, j], ddof=1) for j in range(6)] for k in range(4)])
    np.testing.assert_allclose(whole.var_ - whole.epsilon_, reference, rtol=1e-9)


def test_partial_fit_grows_vocabularies():
    """Levels first seen in a later chunk join the vocabulary; counts follow their levels."""
    X, y = HAND_X, HAND_Y
    whole = CategoricalNB().fit(X, y)
    streamed = CategoricalNB()
    for idx in ([0, 1], [2, 3, 4], [5, 6]):           # "c" and "y" arrive late
        streamed.partial_fit(X[idx], y[idx], classes=[0, 1])
    assert_same_model(whole, streamed)
    np.testing.assert_array_equal(streamed.category_count_[0], COUNTS[0])


def test_partial_fit_rejects_unknown_label():
    nb = GaussianNB().partial_fit(np.ones((2, 1)), [0, 1])
    with pytest.raises(ValueError, match="not in classes_"):
        nb.partial_fit(np.ones((1, 1)), [7])


# ------------------------------------------------------------------ scikit-learn agreement
def test_gaussian_agrees_with_sklearn_ddof0():
    from sklearn.naive_bayes import GaussianNB as SkGaussianNB
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 30)) * rng.uniform(0.1, 10, size=30) + rng.normal(size=30)
    y = rng.integers(0, 4, size=2000)
    X[y == 2] += 0.3
    ours = GaussianNB(ddof=0, var_smoothing=1e-9).fit(X, y)
    sk = SkGaussianNB(var_smoothing=1e-9).fit(X, y)
    np.testing.assert_allclose(ours.theta_, sk.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, sk.var_, rtol=1e-12)
    np.testing.assert_allclose(ours.epsilon_, sk.epsilon_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_joint_log_proba(X), sk.predict_joint_log_proba(X),
                               rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def test_gaussian_priors_agree_with_sklearn():
    from sklearn.naive_bayes import GaussianNB as SkGaussianNB
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(300, 3)), rng.integers(0, 3, size=300)
    ours = GaussianNB(ddof=0, priors=[0.2, 0.5, 0.3]).fit(X, y)
    sk = SkGaussianNB(priors=[0.2, 0.5, 0.3]).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)


def test_categorical_agrees_with_sklearn_alpha1():
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    rng = np.random.default_rng(0)
    n, d = 3000, 8
    y = rng.integers(0, 3, size=n)
    X = (rng.integers(0, 6, size=(n, d)) + y[:, None] * np.arange(d) // 4) % 6
    ours = CategoricalNB(alpha=1.0).fit(X, y)
    sk = SkCategoricalNB(alpha=1.0).fit(X, y)
    assert all(c.tolist() == list(range(6)) for c in ours.categories_)
    for a, b in zip(ours.feature_log_prob_, sk.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), sk.predict_log_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    # the same through strings: encoding does not change the model
    strings = CategoricalNB().fit(X.astype(str), y)
    np.testing.assert_allclose(strings.predict_proba(X.astype(str)), sk.predict_proba(X),
                               atol=1e-12)


def test_mixed_model_is_the_sum_of_its_parts():
    X, y = mixed_data(nan_rate=0.0)
    mixed = NaiveBayes().fit(X, y)
    cat = CategoricalNB().fit(X[:, [0, 2]], y)
    gauss = GaussianNB().fit(X[:, [1, 3]].astype(float), y)
    expected = (cat.predict_joint_log_proba(X[:, [0, 2]])
                + gauss.predict_joint_log_proba(X[:, [1, 3]].astype(float))
                - mixed.class_log_prior_)
    np.testing.assert_allclose(mixed.predict_joint_log_proba(X), expected, rtol=1e-12)


# ------------------------------------------------------------------ missing values
@pytest.mark.parametrize("column", [0, 1, 2, 3])
def test_missing_cell_equals_model_without_that_attribute(column):
    """A NaN / None at predict time: the posterior of the model that never saw the attribute
    (004: "ignoring the instance")."""
    X, y = mixed_data(nan_rate=0.0)
    full = NaiveBayes(var_smoothing=0.0).fit(X, y)
    keep = [j for j in range(4) if j != column]
    without = NaiveBayes(var_smoothing=0.0).fit(X[:, keep], y)
    rows = X[:20].copy()
    rows[:, column] = None
    np.testing.assert_allclose(full.predict_proba(rows), without.predict_proba(X[:20, keep]),
                               rtol=1e-12, atol=1e-15)


def test_missing_cells_ignored_in_fit():
    X, y = mixed_data(nan_rate=0.2)
    nb = NaiveBayes(smoothing="none").fit(X, y)
    for k, label in enumerate(nb.classes_):
        income = X[(y == label), 1].astype(float)
        income = income[~np.isnan(income)]
        np.testing.assert_allclose(nb.theta_[k, 0], income.mean(), rtol=1e-14)
        np.testing.assert_allclose(nb.var_[k, 0] - nb.epsilon_, income.var(ddof=1), rtol=1e-9)
        colors = X[(y == label), 0]
        colors = colors[colors != None]  # noqa: E711
        for c, level in enumerate(nb.categories_[0]):
            np.testing.assert_allclose(np.exp(nb.feature_log_prob_[0][k, c]),
                                       np.mean(colors == level), rtol=1e-14)


def test_gaussian_handles_nan_but_rejects_inf():
    X = np.array([[1.0, np.nan], [2.0, 1.0], [3.0, 2.0], [np.nan, 4.0]])
    nb = GaussianNB().fit(X, [0, 0, 1, 1])
    np.testing.assert_allclose(nb.theta_, [[1.5, 1.0], [3.0, 3.0]])
    with pytest.raises(ValueError, match="inf"):
        GaussianNB().fit(np.array([[1.0], [np.inf]]), [0, 1])
    with pytest.raises(ValueError, match="inf"):
        NaiveBayes().fit(np.array([["a", 1.0], ["b", np.inf]], dtype=object), [0, 1])
    with pytest.raises(ValueError, match="inf"):
        nb.predict(np.array([[np.inf, 1.0]]))


# ------------------------------------------------------------------ inputs of every kind
def test_categories_of_many_kinds():
    y = [0, 1, 0, 1, 1, 0]
    frame = pd.DataFrame({
        "flag": [True, False, True, False, False, None],
        "level": pd.Categorical(["lo", "hi", "lo", "hi", "mid", "lo"],
                                categories=["lo", "mid", "hi", "max"]),
        "name": pd.array(["x", "y", pd.NA, "y", "y", "x"], dtype="string"),
        "count": pd.array([1, 2, None, 4, 5, 6], dtype="Int64"),
        "value": [0.5, 1.5, 0.25, 2.5, 3.5, 0.75],
    })
    nb = NaiveBayes().fit(frame, y)
    assert nb.categorical_features_.tolist() == [True, True, True, False, False]
    assert nb.categories_[1].tolist() == ["hi", "lo", "max", "mid"]  # declared ones count
    assert nb.feature_count_[:, 0].tolist() == [2, 3]  # the pd.NA is missing
    assert nb.predict(frame).tolist() == y
    ints = CategoricalNB().fit(np.array([[10, -3], [10, 7], [12, -3]]), [0, 1, 1])
    assert [c.tolist() for c in ints.categories_] == [[10, 12], [-3, 7]]
    unseen = ints.predict_joint_log_proba(np.array([[11, 100]]))
    np.testing.assert_allclose(unseen[0], ints.class_log_prior_ + ints.unseen_log_prob_.sum(1))


def test_explicit_categorical_features():
    X = np.array([[1, 0.5], [2, 0.7], [1, 0.1], [3, 0.9]])
    by_index = NaiveBayes(categorical_features=[0]).fit(X, [0, 1, 0, 1])
    by_mask = NaiveBayes(categorical_features=[True, False]).fit(X, [0, 1, 0, 1])
    assert by_index.categories_[0].tolist() == [1.0, 2.0, 3.0]
    np.testing.assert_allclose(by_index.predict_proba(X), by_mask.predict_proba(X))
    frame = pd.DataFrame(X, columns=["a", "b"])
    by_name = NaiveBayes(categorical_features=["a"]).fit(frame, [0, 1, 0, 1])
    np.testing.assert_allclose(by_name.predict_proba(frame), by_index.predict_proba(X))
    with pytest.raises(ValueError, match="'zz'"):
        NaiveBayes(categorical_features=["zz"]).fit(frame, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="column index"):
        NaiveBayes(categorical_features=[5]).fit(X, [0, 1, 0, 1])


def test_many_attributes_do_not_underflow():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=400)
    X = rng.normal(size=(400, 2000)) + y[:, None] * 0.05
    nb = GaussianNB().fit(X, y)
    joint = nb.predict_joint_log_proba(X)
    assert np.isfinite(joint).all() and joint.max() < -2000  # the product itself underflows
    proba = nb.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert nb.score(X, y) > 0.9


def test_float32_gaussian_matches_float64():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 5)).astype(np.float32), rng.integers(0, 2, size=500)
    a, b = GaussianNB().fit(X, y), GaussianNB().fit(X.astype(np.float64), y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-10)


def test_sample_weight_equals_repeated_rows():
    X, y = mixed_data(n=200, nan_rate=0.05)
    w = np.random.default_rng(0).integers(0, 4, size=200)
    weighted = NaiveBayes().fit(X, y, sample_weight=w)
    repeated = NaiveBayes().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_same_model(weighted, repeated, rtol=1e-10)


def test_threads_give_the_same_predictions():
    X, y = mixed_data(n=20000, nan_rate=0.05)
    one = NaiveBayes(n_jobs=1).fit(X, y)
    two = NaiveBayes(n_jobs=2).fit(X, y)
    assert_same_model(one, two, rtol=1e-12)
    np.testing.assert_allclose(one.predict_proba(X), two.predict_proba(X), atol=1e-12)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("params, match", [
    (dict(smoothing="add-one"), "smoothing"),
    (dict(alpha=-1.0), "alpha"),
    (dict(m=-2.0), "m must"),
    (dict(p=0.0), "p must"),
    (dict(p=1.5), "p must"),
    (dict(priors=[0.5, 0.6]), "sum to 1"),
    (dict(priors=[1.0]), "priors has 1"),
    (dict(ddof=-1), "ddof"),
    (dict(var_smoothing=-1e-9), "var_smoothing"),
])
def test_bad_parameters(params, match):
    X, y = load_tax_table(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        NaiveBayes(**params).fit(X, y)


def test_bad_inputs():
    X, y = load_tax_table(return_X_y=True)
    with pytest.raises(ValueError, match="1-D"):
        NaiveBayes().fit(X[:, 0], y)
    with pytest.raises(ValueError, match="0 samples"):
        CategoricalNB().fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="samples"):
        NaiveBayes().fit(X, y[:-1])
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="infinity"):       # sparse X is taken, checked
        CategoricalNB().fit(sp.csr_matrix(np.eye(3) * np.inf), [0, 1, 1])
    with pytest.raises(TypeError, match="strings|numeric"):
        GaussianNB().fit(X, y)
    with pytest.raises(TypeError, match="non-numbers"):
        NaiveBayes(categorical_features=None).fit(X, y)
    nb = NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        nb.predict(X[:, :2])
    with pytest.raises(ValueError, match="class"):
        NaiveBayes().fit(X, ["No"] * 10)


# ------------------------------------------------------------------ scikit-learn's own checks
SKLEARN_EXPECTED_FAILURES = {}      # every check passes


@pytest.mark.parametrize("cls", [GaussianNB, CategoricalNB, NaiveBayes])
def test_sklearn_check_estimator(cls):
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(cls(), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed == set(SKLEARN_EXPECTED_FAILURES), failed ^ set(SKLEARN_EXPECTED_FAILURES)


def test_unhashable_category_is_a_clear_error():
    with pytest.raises(TypeError, match="holds a dict"):
        CategoricalNB().fit(np.array([[{}], ["a"]], dtype=object), [0, 1])


@pytest.mark.parametrize("module", ["fastml.naive_bayes._classes", "fastml._core._moments"])
def test_docstring_examples_run(module):
    """The Examples sections are doctests: each prints what the code returns."""
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_public_api_has_numpydoc_sections():
    import inspect
    from fastml.naive_bayes import _classes
    for cls in (CategoricalNB, GaussianNB, NaiveBayes):
        doc = inspect.getdoc(cls)
        for section in ("Parameters", "Attributes", "Examples"):
            assert f"{section}\n---" in doc, (cls.__name__, section)
        for name in ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                     "predict_joint_log_proba"):
            doc = inspect.getdoc(getattr(cls, name))
            assert "Parameters\n---" in doc and "Returns\n---" in doc, (cls.__name__, name)
    assert "Examples\n---" in inspect.getdoc(_classes.ZeroProbabilityWarning)


# ------------------------------------------------------------- refused calls change nothing
def fitted_state(model):
    """Everything fit learned, as plain values (arrays copied)."""
    import copy
    return {k: copy.deepcopy(v) for k, v in vars(model).items()
            if k.endswith("_") and k not in ("_parts",)}


def assert_states_equal(a, b):
    assert a.keys() == b.keys()
    for k in a:
        va, vb = a[k], b[k]
        if isinstance(va, list):
            assert len(va) == len(vb) and all(np.array_equal(x, y) for x, y in zip(va, vb)), k
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=k)
        else:
            assert va == vb or (va != va and vb != vb), k


def bad_chunks(X, y):
    """Chunks partial_fit must refuse (each after validation has begun)."""
    inf_real = X[:5].copy()
    inf_real[0, 1] = np.inf                                   # a real column with infinity
    words_real = X[:5].copy()
    words_real[1, 3] = "many"                                 # a real column with a string
    new_level_then_overflow = X[:5].copy()                    # refused by the Gaussian part,
    new_level_then_overflow[2, 0] = "purple"                  # after the categorical part
    new_level_then_overflow[:2, 1] = [1e300, -1e300]          # grew its vocabulary
    return [(inf_real, y[:5], None), (words_real, y[:5], None),
            (new_level_then_overflow, y[:5], None),
            (X[:5], np.array(["a", "b", "zzz", "a", "a"], dtype=object), None),
            (X[:3], y[:3], [1e308, 1e308, 1e308])]


def test_refused_partial_fit_chunk_leaves_the_model_as_it_was():
    """Issue 12: a refused chunk used to add its class counts. Now each refusal leaves every
    fitted attribute unchanged, and streaming on gives exactly fit's model."""
    X, y = mixed_data()
    model = NaiveBayes(categorical_features=[0, 2]).partial_fit(X[:300], y[:300],
                                                                classes=["a", "b", "c"])
    before, proba = fitted_state(model), model.predict_proba(X)
    for Xb, yb, wb in bad_chunks(X, y):
        with pytest.raises((ValueError, TypeError)):
            model.partial_fit(Xb, yb, sample_weight=wb)
        assert_states_equal(fitted_state(model), before)
        np.testing.assert_array_equal(model.predict_proba(X), proba)
    model.partial_fit(X[300:], y[300:])
    assert_same_model(model, NaiveBayes(categorical_features=[0, 2]).fit(X, y))


def test_failed_fit_leaves_the_estimator_unfitted():
    from fastml.exceptions import NotFittedError
    X, y = mixed_data()
    model = NaiveBayes(categorical_features=[0, 2]).fit(X, y)
    Xb = X.copy()
    Xb[-1, 1] = np.inf                                        # found after the labels
    with pytest.raises(ValueError, match="infinity"):
        model.fit(Xb, y)
    assert not [k for k in vars(model) if k.endswith("_")]
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_column_without_values_and_zero_weights_are_clear_errors():
    """Not ZeroDivisionError: say what is missing."""
    empty_column = np.array([[None, "a"], [None, "b"], [np.nan, "a"]], dtype=object)
    with pytest.raises(ValueError, match="categorical column 0 has no values"):
        CategoricalNB().fit(empty_column, [0, 1, 1])
    with pytest.raises(ValueError, match="column 1 has no values"):  # its value has weight 0
        CategoricalNB().fit(np.array([["a", None], ["b", "c"]], dtype=object), [0, 1],
                            sample_weight=[1.0, 0.0])
    for weight in (0.0, [0.0, 0.0]):
        with pytest.raises(ValueError, match="zero|sums to 0"):
            CategoricalNB().fit(np.array([["a"], ["b"]]), [0, 1], sample_weight=weight)
    # a later chunk where the column is empty is fine: its levels are known
    model = CategoricalNB().partial_fit(np.array([["a"], ["b"]], dtype=object), [0, 1])
    model.partial_fit(np.array([[None]], dtype=object), [1])
    assert model.class_count_.tolist() == [1, 2]


@pytest.mark.parametrize("make", [lambda: GaussianNB(), lambda: CategoricalNB(),
                                  lambda: NaiveBayes()])
def test_huge_weights_are_refused_not_turned_into_inf(make):
    """Weights of 1e308 each sum past float64: refused with a clear message (the counts would
    be inf and the probabilities NaN), whether in one call or across partial_fit chunks."""
    X = np.array([[1.0], [2.0], [3.0]]) if isinstance(make(), GaussianNB) else \
        np.array([["a"], ["b"], ["a"]], dtype=object)
    with pytest.raises(ValueError, match="largest float64"):
        make().fit(X, [0, 1, 1], sample_weight=[1e308] * 3)
    model = make().partial_fit(X[:1], [0], classes=[0, 1], sample_weight=[1e308])
    with pytest.raises(ValueError, match="overflowed float64"):
        model.partial_fit(X[1:2], [1], sample_weight=[1e308])
    assert model.class_count_.tolist() == [1e308, 0.0]


def test_values_whose_variance_overflows_are_refused():
    X = np.array([[1e155], [-1e155], [3e155], [0.0]])
    with pytest.raises(ValueError, match="variances overflowed"):
        GaussianNB().fit(X, [0, 1, 1, 0])


# ----------------------------------------------- shared variances and the logistic form (002)
def gaussian_blobs(n=600, K=3, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    X = rng.normal(size=(n, d)) * [1.0, 2.0, 0.5, 3.0][:d] + y[:, None] * [1.0, -0.5, 0.3, 0.0][:d]
    return X, y


@pytest.mark.parametrize("ddof", [1, 0])
def test_shared_variance_is_the_pooled_within_class_variance(ddof):
    X, y = gaussian_blobs()
    X[::7, 1] = np.nan                                     # missing cells are not counted
    model = GaussianNB(variance="shared", ddof=ddof, var_smoothing=0).fit(X, y)
    for j in range(X.shape[1]):
        keep = ~np.isnan(X[:, j])
        ss = sum(((X[keep & (y == k), j] - X[keep & (y == k), j].mean()) ** 2).sum()
                 for k in range(3))
        pooled = ss / (keep.sum() - ddof * 3)              # n - K for ddof=1: unbiased
        np.testing.assert_allclose(model.var_[:, j], pooled, rtol=1e-12)
    streamed = GaussianNB(variance="shared", ddof=ddof, var_smoothing=0)
    for idx in chunks(len(y), 5, seed=3):
        streamed.partial_fit(X[idx], y[idx], classes=[0, 1, 2])
    assert_same_model(model, streamed)


def test_to_logistic_binary_is_002s_formula():
    """002: P(Y=1|x) = 1 / (1 + exp(w0 + sum_i w_i x_i)) with w_i = (mu_i0 - mu_i1) / s_i^2 and
    w0 = ln((1 - theta) / theta) + sum_i (mu_i1^2 - mu_i0^2) / (2 s_i^2)."""
    X, y = gaussian_blobs(K=2)
    gnb = GaussianNB(variance="shared").fit(X, y)
    lr = gnb.to_logistic()
    mu, s2, theta = gnb.theta_, gnb.var_[0], gnb.class_prior_[1]
    w = (mu[0] - mu[1]) / s2
    w0 = np.log((1 - theta) / theta) + np.sum((mu[1] ** 2 - mu[0] ** 2) / (2 * s2))
    np.testing.assert_allclose(lr.coef_, [-w], rtol=1e-12)
    np.testing.assert_allclose(lr.intercept_, [-w0], rtol=1e-12)
    np.testing.assert_allclose(lr.predict_proba(X)[:, 1], 1 / (1 + np.exp(w0 + X @ w)),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(lr.predict_proba(X), gnb.predict_proba(X), rtol=0, atol=1e-10)
    assert (lr.predict(X) == gnb.predict(X)).all()


def test_parameter_counts_are_002s():
    """002 "Naive Bayes vs Logistic Regression": Y boolean, n continuous X_i: NB has 4n + 1
    parameters (a mean and a variance per attribute and class, and P(Y = 1)), LR n + 1.
    With variances shared by the classes (002's equivalence case) NB has 3n + 1."""
    X, y = gaussian_blobs(K=2)
    n = X.shape[1]
    gnb = GaussianNB().fit(X, y)
    free_prior = gnb.class_prior_.size - 1                   # the priors sum to 1
    assert gnb.theta_.size + gnb.var_.size + free_prior == 4 * n + 1
    shared = GaussianNB(variance="shared").fit(X, y)
    assert np.unique(shared.var_, axis=0).shape == (1, n)    # one variance per attribute
    assert shared.theta_.size + n + free_prior == 3 * n + 1
    lr = shared.to_logistic()
    assert lr.coef_.size + lr.intercept_.size == n + 1


def test_to_logistic_multiclass_softmax_equals_the_model():
    X, y = gaussian_blobs(K=4, seed=1)
    labels = np.array(["w", "x", "y", "z"])[y]
    gnb = GaussianNB(variance="shared", priors=[0.1, 0.2, 0.3, 0.4]).fit(X, labels)
    lr = gnb.to_logistic()
    assert lr.coef_.shape == (4, 4) and lr.classes_.tolist() == ["w", "x", "y", "z"]
    Z = np.random.default_rng(9).normal(size=(300, 4)) * 4
    np.testing.assert_allclose(lr.predict_proba(Z), gnb.predict_proba(Z), rtol=0, atol=1e-10)
    np.testing.assert_allclose(lr.predict_log_proba(Z), gnb.predict_log_proba(Z),
                               rtol=1e-10, atol=1e-10)
    assert (lr.predict(Z) == gnb.predict(Z)).all()


def test_to_logistic_refuses_quadratic_boundaries():
    X, y = gaussian_blobs(K=2)
    with pytest.raises(ValueError, match="variance='shared'"):
        GaussianNB().fit(X, y).to_logistic()
    with pytest.raises(ValueError, match="variance"):
        GaussianNB(variance="pooled").fit(X, y)


def test_to_logistic_with_a_class_that_never_saw_an_attribute():
    # the class is scored on it with all classes' mean and the shared variance: still linear
    X, y = gaussian_blobs(K=3, seed=4)
    X[y == 0, 2] = np.nan
    gnb = GaussianNB(variance="shared").fit(X, y)
    Z = np.random.default_rng(2).normal(size=(200, X.shape[1])) * 3
    np.testing.assert_allclose(gnb.to_logistic().predict_proba(Z), gnb.predict_proba(Z),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("variance", ["per_class", "shared"])
def test_a_class_without_values_of_an_attribute_is_scored_with_all_values(variance):
    """Rescaling a column (km -> m) must not change the posterior, also when a class has no
    value of it: that class gets the density of all classes' values, as the others get
    theirs. (It used to add nothing for that class alone: the posterior then moved with the
    units, 0.59 -> 0.0014 for the same point.)"""
    X = np.array([[0.0, 1.0], [1.0, 1.2], [0.5, 0.8], [0.2, np.nan], [0.9, np.nan],
                  [0.4, np.nan]])
    y = list("aaabbb")
    x = np.array([[0.5, 1.0]])
    # (var_smoothing=0: the floor is relative to the widest attribute, so it moves with units)
    probas = [GaussianNB(variance=variance, var_smoothing=0.0).fit(X * [1, s], y)
              .predict_proba(x * [1, s]) for s in (1.0, 1000.0, 1e-3)]
    np.testing.assert_allclose(probas[1], probas[0], rtol=1e-9)
    np.testing.assert_allclose(probas[2], probas[0], rtol=1e-9)
    # class b's density for column 1 is the normal of all values (mean 1.0, variance 0.04)
    model = GaussianNB(variance=variance).fit(X, y)
    jll = model.predict_joint_log_proba(np.array([[np.nan, 1.3]]))
    var_all = (np.var([1.0, 1.2, 0.8], ddof=1) + model.epsilon_ if variance == "per_class"
               else model.var_[0, 1])                       # shared: epsilon_ included
    expected_b = np.log(0.5) - 0.5 * np.log(2 * np.pi * var_all) - 0.3 ** 2 / (2 * var_all)
    np.testing.assert_allclose(jll[0, 1], expected_b, rtol=1e-12)
    assert np.isnan(model.theta_[1, 1]) and np.isnan(model.var_[1, 1])


def test_weights_summing_below_ddof_warn_instead_of_collapsing_silently():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    y = np.repeat([0, 1], 50)
    with pytest.warns(UserWarning, match="use ddof=0"):
        GaussianNB().fit(X, y, sample_weight=np.full(100, 0.01))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GaussianNB(ddof=0).fit(X, y, sample_weight=np.full(100, 0.01))
        GaussianNB().fit(X, y, sample_weight=np.full(100, 0.1))      # 5 rows' worth each
        GaussianNB().fit(X[:3], [0, 1, 1])                           # one row: no spread


def test_nat_in_a_datetime_column_is_missing_for_naive_bayes():
    # missing_mask asked np.isnan of floats only: NaT was a level of its own
    X = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", None, "2021-01-01", "2021-01-01"])})
    X["d"] = X["d"].astype("datetime64[ns]")
    from fastml._tabular import missing_mask
    assert missing_mask(X["d"].to_numpy()).tolist() == [False, True, False, False]
