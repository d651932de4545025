"""make_clicks (003's click-probability case study) and learning it through FeatureHasher:
the generator's true model is what it says, and hashed logistic SGD approaches its log-loss."""
import numpy as np
import pytest

from fastml import LogisticRegression
from fastml.datasets import make_clicks
from fastml.feature_extraction import FeatureHasher


def mean_log_loss(p, y):
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def test_the_log_is_repeatable_and_shaped_as_documented():
    a, b = make_clicks(5000, random_state=3), make_clicks(5000, random_state=3)
    assert a.data.shape == (5000, 6) and a.data.dtype == object
    assert (a.data == b.data).all() and (a.target == b.target).all()
    assert a.feature_names == ["ad", "advertiser", "site", "user", "hour", "device"]
    assert all(str(v).startswith(f) for f, v in zip(a.feature_names, a.data[0]))
    assert set(np.unique(a.target)) == {0, 1}


def test_clicks_follow_the_true_probabilities():
    log = make_clicks(200_000, random_state=0, base_rate=0.05)
    # The clicks are Bernoulli(proba): their mean matches the probabilities' mean.
    assert abs(log.target.mean() - log.proba.mean()) < 4 * np.sqrt(0.05 / 200_000) * 3
    entropy = -(log.proba * np.log(log.proba) + (1 - log.proba) * np.log1p(-log.proba))
    assert log.true_log_loss == pytest.approx(entropy.mean(), rel=1e-12)
    # The median impression clicks at the base rate.
    assert np.median(log.proba) == pytest.approx(0.05, rel=1e-9)


def test_drift_changes_the_model_in_the_second_half_only():
    still = make_clicks(20_000, random_state=1)
    moving = make_clicks(20_000, random_state=1, drift=True)
    assert (still.data == moving.data).all()
    half = 10_000
    # The bias is re-centred over the whole log, so compare the margins' differences.
    logit = lambda p: np.log(p / (1 - p))          # noqa: E731
    shift = logit(moving.proba) - logit(still.proba)
    assert np.ptp(shift[:half]) < 1e-9            # first half: the same model up to the bias
    assert np.std(shift[half:]) > 0.3             # second half: the ad effects were redrawn


def test_hashed_logistic_sgd_approaches_the_true_log_loss():
    log = make_clicks(120_000, random_state=0)
    rows, y = log.data.tolist(), log.target
    hasher = FeatureHasher(2**18, input_type="string")
    model = LogisticRegression(solver="sgd", alpha=1e-6, max_iter=3, tol=None, random_state=0)
    model.fit(hasher.transform(rows[:100_000]), y[:100_000])
    test = slice(100_000, None)
    learned = mean_log_loss(model.predict_proba(hasher.transform(rows[test]))[:, 1], y[test])
    truth = mean_log_loss(log.proba[test], y[test])
    rate = y[:100_000].mean()
    constant = mean_log_loss(np.full(20_000, rate), y[test])
    # More than half of the way from the constant predictor to the true model (with 100k
    # rows for ~100k long-tailed levels; 400k rows close three quarters of the gap).
    assert learned < truth + 0.5 * (constant - truth)


@pytest.mark.parametrize("params, match", [
    (dict(n_rows=0), "n_rows"), (dict(n_ads=5), "n_ads"), (dict(base_rate=1.0), "base_rate"),
    (dict(base_rate=0.0), "base_rate"), (dict(n_users=2**40), "n_users"),
])
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        make_clicks(**{"n_rows": 100, **params})
