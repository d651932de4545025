"""fastml.losses: 001's loss table values, gradients against finite differences, stability."""
import numpy as np
import pytest

from fastml import losses


def test_table_values_at_known_points():
    y_pred = np.array([2.0, 0.5, -1.0, 0.0])
    y = np.array([1.0, 1.0, 1.0, -1.0])
    np.testing.assert_array_equal(losses.quadratic_loss(y_pred, y), [1.0, 0.25, 4.0, 1.0])
    np.testing.assert_array_equal(losses.hinge_loss(y_pred, y), [0.0, 0.5, 2.0, 1.0])
    np.testing.assert_array_equal(losses.perceptron_loss(y_pred, y), [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(losses.logistic_loss(y_pred, y),
                               np.log1p(np.exp(-y * y_pred)), rtol=1e-15)
    np.testing.assert_array_equal(losses.zero_one_loss(np.sign(y_pred), y), [0, 0, 1, 1])
    np.testing.assert_array_equal(losses.zero_one_loss(["a", "b"], ["a", "c"]), [0.0, 1.0])


@pytest.mark.parametrize("name", ["quadratic", "hinge", "perceptron", "logistic"])
def test_gradient_matches_finite_differences_away_from_kinks(name):
    loss, grad = losses.LOSSES[name]
    rng = np.random.default_rng(0)
    y = rng.choice([-1.0, 1.0], size=200)
    y_pred = rng.normal(scale=3.0, size=200)
    z = y * y_pred
    keep = (np.abs(z - 1.0) > 1e-3) & (np.abs(z) > 1e-3)    # away from the kinks at 1 and 0
    h = 1e-6
    numeric = (loss(y_pred + h, y) - loss(y_pred - h, y)) / (2 * h)
    np.testing.assert_allclose(grad(y_pred, y)[keep], numeric[keep], rtol=1e-6, atol=1e-8)


def test_subgradients_at_the_kinks_follow_003():
    # 003 "Subgradient of Hinge": at y (w.x) = 0 the perceptron takes -y x.
    np.testing.assert_array_equal(losses.perceptron_gradient([0.0, 0.0], [1.0, -1.0]),
                                  [-1.0, 1.0])
    # any value in [-y, 0] is a subgradient at the hinge's kink; the loop's choice is 0
    assert losses.hinge_gradient(1.0, 1.0) == 0.0
    assert losses.hinge_gradient(0.999, 1.0) == -1.0


def test_subgradient_inequality_holds():
    # f(b) >= f(a) + g(a) (b - a) for the convex losses, at random pairs including kinks
    rng = np.random.default_rng(1)
    y = rng.choice([-1.0, 1.0], size=500)
    a = np.concatenate([rng.normal(size=497) * 2, [1.0, 0.0, -1.0]]) * y
    b = rng.normal(size=500) * 2
    for name in ("quadratic", "hinge", "perceptron", "logistic"):
        loss, grad = losses.LOSSES[name]
        assert (loss(b, y) >= loss(a, y) + grad(a, y) * (b - a) - 1e-12).all(), name


def test_zero_one_gradient_is_zero():
    assert not losses.zero_one_gradient(np.ones(3), np.zeros(3)).any()


def test_logistic_is_stable_at_huge_margins():
    y_pred = np.array([1e4, -1e4, 800.0])
    y = np.ones(3)
    np.testing.assert_allclose(losses.logistic_loss(y_pred, y), [0.0, 1e4, 0.0], atol=1e-300)
    np.testing.assert_allclose(losses.logistic_gradient(y_pred, y), [-0.0, -1.0, -0.0])
    assert np.isfinite(losses.logistic_gradient(-y_pred, y)).all()


def test_broadcasting_and_float64_output():
    out = losses.hinge_loss(np.zeros((3, 2)), np.array([1, -1]))
    assert out.shape == (3, 2) and out.dtype == np.float64


@pytest.mark.parametrize("fn", [losses.hinge_loss, losses.logistic_gradient,
                                losses.perceptron_loss])
def test_labels_must_be_signed(fn):
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        fn(np.zeros(3), np.array([0, 1, 1]))


def test_non_finite_rejected():
    with pytest.raises(ValueError, match="finite"):
        losses.quadratic_loss([np.nan], [1.0])
