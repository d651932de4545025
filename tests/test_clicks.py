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
    # Well on the way from the constant predictor to the true model with 100k rows for ~100k
    # long-tailed levels: the part of the gap closed depends on the draw of the field effects
    # (31%, 60% and 44% for random_state 0, 1 and 2), so the bound is a quarter.
    assert learned < truth + 0.75 * (constant - truth)


@pytest.mark.parametrize("params, match", [
    (dict(n_rows=0), "n_rows"), (dict(n_ads=5), "n_ads"), (dict(base_rate=1.0), "base_rate"),
    (dict(base_rate=0.0), "base_rate"), (dict(n_users=2**40), "n_users"),
])
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        make_clicks(**{"n_rows": 100, **params})


@pytest.mark.parametrize("exponent, n_levels", [(1.1, 50), (1.0, 20), (0.9, 1000), (0.5, 3),
                                                (2.5, 10), (1.0, 1)])
def test_field_ids_follow_the_zipf_law_exactly(exponent, n_levels):
    # rejection-inversion draws exact Zipf variates: every level's frequency is within 5
    # standard errors of its probability
    from fastml.datasets._clicks import _zipf_ids
    n = 200_000
    ids = _zipf_ids(np.random.default_rng(7), n, n_levels, exponent)
    weights = 1.0 / np.arange(1, n_levels + 1) ** exponent
    p = weights / weights.sum()
    freq = np.bincount(ids, minlength=n_levels) / n
    assert ids.min() >= 0 and ids.max() < n_levels
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_level_counts_cost_nothing_until_rows_use_them():
    # 2**31 - 1 users and ads: only the levels the 10 rows use get an effect and a string
    log = make_clicks(10, n_users=2**31 - 1, n_ads=2**31 - 1, random_state=3)
    assert log.data.shape == (10, 6)
    users = [int(u[len("user"):]) for u in log.data[:, 3]]
    assert all(0 <= u < 2**31 - 1 for u in users) and max(users) > 10**6
    assert np.all((log.proba > 0) & (log.proba < 1))


def test_a_level_effect_does_not_depend_on_the_other_levels_used():
    from fastml.datasets._clicks import _level_normals
    alone = _level_normals(12345, np.array([7]))
    among = _level_normals(12345, np.array([1, 7, 2**31 - 2]))
    assert alone[0] == among[1]
    many = _level_normals(99, np.arange(200_000))
    assert abs(many.mean()) < 0.01 and abs(many.std() - 1) < 0.01


def test_a_log_larger_than_memory_is_refused_before_allocating():
    with pytest.raises(MemoryError, match=r"make_clicks\(n_rows=2147483647\) needs about"):
        make_clicks(2**31 - 1)
