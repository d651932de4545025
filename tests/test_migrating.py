"""docs/migrating.rst: each "tested" row's one-line equivalent gives the other library's model
on the same data, and a foreign parameter name is answered with what to write instead."""
import numpy as np
import pytest

import fastml

sklearn = pytest.importorskip("sklearn")
from sklearn import linear_model as sk_linear  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402
from sklearn import tree as sk_tree  # noqa: E402
from sklearn.datasets import load_wine, make_classification  # noqa: E402


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return X, (X - X.mean(axis=0)) / X.std(axis=0), y


def test_logistic_alpha_one_over_n_is_scikit_learns_default_c(wine):
    _, Z, y = wine
    ref = sk_linear.LogisticRegression(tol=1e-10, max_iter=10_000).fit(Z, y)   # C=1.0
    ours = fastml.LogisticRegression(alpha=1.0 / len(y), tol=1e-9, max_iter=10_000).fit(Z, y)
    np.testing.assert_allclose(ours.predict_proba(Z), ref.predict_proba(Z), atol=1e-6)


def test_gaussian_nb_ddof_0_is_scikit_learns_and_the_default_is_not(wine):
    X, _, y = wine
    ref = sk_nb.GaussianNB().fit(X, y).predict_proba(X)
    default = fastml.GaussianNB().fit(X, y).predict_proba(X)
    assert 0.02 < np.abs(default - ref).max() < 0.03          # the page says "up to 0.023"
    np.testing.assert_allclose(fastml.GaussianNB(ddof=0).fit(X, y).predict_proba(X), ref,
                               rtol=0, atol=1e-12)


def test_gini_tree_chooses_scikit_learns_root_split():
    X, y = make_classification(600, 6, n_informative=4, random_state=3)
    ref = sk_tree.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
    ours = fastml.DecisionTreeClassifier(criterion="gini", max_depth=1).fit(X, y)
    text = fastml.export_text(ours, [f"x{j}" for j in range(6)]).splitlines()[0]
    feature, threshold = text.split(":")[0].split(" < ")
    assert feature == f"x{ref.feature[0]}"
    assert float(threshold) == pytest.approx(ref.threshold[0], rel=1e-5)


def test_perceptron_without_shuffling_is_scikit_learns_sgd_perceptron():
    X, y = make_classification(400, 5, random_state=1)
    ours = fastml.Perceptron(shuffle=False).fit(X, y)
    ref = sk_linear.SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1.0,
                                  penalty=None, shuffle=False).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-12)


def test_linear_svm_with_scikit_learns_tolerance_takes_its_steps():
    X, y = make_classification(400, 5, random_state=2)
    ours = fastml.LinearSVM(tol=1e-3, shuffle=False).fit(X, y)
    ref = sk_linear.SGDClassifier(loss="hinge", shuffle=False).fit(X, y)
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10)


def test_river_logistic_regression_is_constant_step_sgd():
    linear_model = pytest.importorskip("river.linear_model")
    X, y = make_classification(300, 4, random_state=4)
    model = linear_model.LogisticRegression()
    for row, label in zip(X, y):
        model.learn_one(dict(enumerate(row)), bool(label))
    ours = fastml.LogisticRegression(solver="sgd", learning_rate="constant", eta0=0.01,
                                     alpha=0.0, shuffle=False, max_iter=1, tol=None)
    ours.partial_fit(X, y, classes=[0, 1])
    np.testing.assert_allclose(ours.coef_.ravel(), [model.weights[j] for j in range(4)],
                               rtol=1e-9)
    assert ours.intercept_[0] == pytest.approx(model.intercept, rel=1e-9)


@pytest.mark.parametrize("cls, name, advice", [
    (fastml.LogisticRegression, "C", "alpha = 1 / (C * n_samples)"),
    (fastml.LogisticRegression, "penalty", "alpha=0 for penalty=None"),
    (fastml.LogisticRegression, "l1_ratio", "not offered"),
    (fastml.LinearSVM, "C", "alpha = 1 / (C * n_samples)"),
    (fastml.LinearSVM, "penalty", "always L2"),
    (fastml.Perceptron, "penalty", "LinearSVM(alpha=...)"),
    (fastml.Perceptron, "eta0", "the step is 1"),
])
def test_a_foreign_parameter_says_what_to_write_instead(cls, name, advice):
    with pytest.raises(TypeError, match=f"has no parameter '{name}'") as caught:
        cls(**{name: 1.0})
    assert advice in str(caught.value)
    with pytest.raises(ValueError, match=f"invalid parameter '{name}'") as caught:
        cls().set_params(**{name: 1.0})
    assert advice in str(caught.value)


def test_an_unknown_parameter_is_still_pythons_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        fastml.LogisticRegression(colour=1)
