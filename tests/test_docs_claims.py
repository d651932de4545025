"""The user-facing docs' claims, measured: every row of docs/from_other_libraries.rst's table
(fastml's call next to scikit-learn's) has a check here that asserts on numbers, and the code of
docs/getting_started.rst runs and prints what it shows. A row added to the table without a
check fails test_every_mapping_row_has_a_check."""
import contextlib
import io
import os
import re

import numpy as np
import pytest

import fastml

sklearn = pytest.importorskip("sklearn")
from sklearn import linear_model as sk_linear  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def doc_text(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def mapping_tasks():
    """The first cell of each row of from_other_libraries.rst's list-table, header left out."""
    tasks = re.findall(r"^   \* - (.+)$", doc_text("from_other_libraries.rst"), flags=re.M)
    return [t.strip() for t in tasks[1:]]


def binary(n=300):
    return make_classification(n, 5, random_state=0)


def log_loss_objective(X, y, alpha, coef, intercept):
    """fastml's J: mean log-loss + alpha / 2 ||w||^2 (the user guide's formula)."""
    w = np.ravel(coef)
    z = X @ w + intercept
    return np.mean(np.logaddexp(0.0, z) - y * z) + alpha / 2 * np.dot(w, w)


def hinge_objective(X, y, alpha, coef, intercept):
    margin = np.where(y == 1, 1.0, -1.0) * (X @ np.ravel(coef) + intercept)
    return np.mean(np.maximum(0.0, 1.0 - margin)) + alpha / 2 * np.sum(np.square(coef))


# ---------------------------------------------------------------------------- the rows

def check_logistic_regression():
    X, y = binary()
    for alpha in (1e-1, 1e-3):
        ours = fastml.LogisticRegression(alpha=alpha, tol=1e-12, max_iter=5000).fit(X, y)
        ref = sk_linear.LogisticRegression(C=1 / (alpha * len(y)), tol=1e-12,
                                           max_iter=10000).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    # with weights, n_samples is their sum (a weight counts rows)
    weight = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    alpha = 1e-2
    ours = fastml.LogisticRegression(alpha=alpha, tol=1e-12, max_iter=5000).fit(
        X, y, sample_weight=weight)
    ref = sk_linear.LogisticRegression(C=1 / (alpha * weight.sum()), tol=1e-12,
                                       max_iter=10000).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)


def check_logistic_regression_by_sgd_streaming():
    # the same call on both sides; both minimize J with the same default alpha (1e-4)
    X, y = binary()
    ours = fastml.LogisticRegression(solver="sgd", random_state=0)
    ref = sk_linear.SGDClassifier(loss="log_loss", random_state=0)
    assert ours.alpha == ref.alpha
    for _ in range(30):
        ours.partial_fit(X, y, [0, 1])
        ref.partial_fit(X, y, [0, 1])
    best = fastml.LogisticRegression(alpha=ours.alpha, tol=1e-12, max_iter=5000).fit(X, y)
    optimum = log_loss_objective(X, y, ours.alpha, best.coef_, best.intercept_[0])
    assert ref.coef_.shape == ours.coef_.shape  # scikit-learn's steps ("optimal") are its own
    assert log_loss_objective(X, y, ours.alpha, ours.coef_, ours.intercept_[0]) < optimum * 1.02


def check_perceptron_averaged():
    # without averaging, fastml's perceptron is scikit-learn's, step for step
    from sklearn.linear_model import Perceptron
    X, y = make_classification(300, 5, n_classes=3, n_informative=3, random_state=0)
    ours = fastml.Perceptron(shuffle=False, max_iter=2, tol=None).fit(X, y)
    ref = Perceptron(shuffle=False, max_iter=2, tol=None).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, ref.coef_)
    np.testing.assert_array_equal(ours.intercept_, ref.intercept_)
    averaged = fastml.Perceptron(average=True, shuffle=False, max_iter=2, tol=None).fit(X, y)
    ref = sk_linear.SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1.0,
                                  penalty=None, average=True, shuffle=False, max_iter=2,
                                  tol=None).fit(X, y)
    np.testing.assert_allclose(averaged.coef_, ref.coef_, atol=1e-12)
    np.testing.assert_allclose(averaged.intercept_, ref.intercept_, atol=1e-12)
    assert not np.allclose(averaged.coef_, ours.coef_)


def check_voted_kernel_perceptron():
    """Weka's VotedPerceptron -E 2 scores with (x.y + 1)^2 (its innerProduct adds 1, then
    raises to the exponent): KernelPerceptron(degree=2, gamma=1, coef0=1)'s kernel."""
    X, y = fastml.datasets.load_xor()
    kernel = fastml.KernelPerceptron(kernel="poly", degree=2, gamma=1, coef0=1).fit(X, y)
    assert kernel.score(X, y) == 1.0
    Xq = np.random.default_rng(0).normal(size=(7, X.shape[1]))
    weka = kernel.dual_coef_ @ (kernel.support_vectors_ @ Xq.T + 1.0) ** 2
    np.testing.assert_allclose(kernel.decision_function(Xq), weka.ravel(), rtol=1e-12,
                               atol=1e-12)
    voted = fastml.VotedPerceptron().fit(*binary())
    assert voted.score(*binary()) > 0.9


def check_linear_svm_hinge():
    # both minimize the mean hinge loss + alpha / 2 ||w||^2: their SGD fits reach its optimum
    X, y = binary()
    alpha = 1e-2
    ours = fastml.LinearSVM(alpha=alpha, random_state=0, max_iter=200, tol=None).fit(X, y)
    ref = sk_linear.SGDClassifier(loss="hinge", alpha=alpha, random_state=0, max_iter=200,
                                  tol=None).fit(X, y)
    best = fastml.LinearSVM(alpha=alpha, solver="subgradient", max_iter=20000,
                            tol=None).fit(X, y)
    optimum = hinge_objective(X, y, alpha, best.coef_, best.intercept_[0])
    for model in (ours, ref):
        assert hinge_objective(X, y, alpha, model.coef_, model.intercept_[0]) < optimum * 1.001
    # in the same row order the two take the same steps (Bottou's schedule, same t0)
    ours = fastml.LinearSVM(alpha=alpha, shuffle=False, max_iter=3, tol=None).fit(X, y)
    ref = sk_linear.SGDClassifier(loss="hinge", alpha=alpha, shuffle=False, max_iter=3,
                                  tol=None).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-12)


def check_decision_tree():
    # on real columns, the unpruned tree is scikit-learn's entropy tree
    from sklearn.tree import DecisionTreeClassifier
    X, y = binary()
    ours = fastml.DecisionTreeClassifier().fit(X, y)
    ref = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    assert ours.get_n_leaves() == ref.get_n_leaves()
    assert fastml.export_text(ours, max_depth=0).startswith(
        f"x{ref.tree_.feature[0]} < {ref.tree_.threshold[0]:.6g}")
    X, y = make_classification(300, 5, flip_y=0.2, random_state=0)
    full = fastml.DecisionTreeClassifier().fit(X, y)
    pruned = fastml.DecisionTreeClassifier(max_pchance=0.05).fit(X, y)
    assert pruned.get_n_leaves() < full.get_n_leaves()


def check_random_forest():
    X, y = binary()
    forest = fastml.RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    assert len(forest.estimators_) == 100 and forest.max_features == "sqrt"
    assert forest.score(X, y) > 0.99


def check_naive_bayes_on_a_mixed_table():
    # ddof=0: scikit-learn's CategoricalNB on the text columns times its GaussianNB on the
    # numbers (each carries the prior once; divide one out)
    rng = np.random.default_rng(0)
    n = 300
    text, numbers = rng.choice(["a", "b", "c"], size=(n, 2)), rng.normal(size=(n, 2))
    y = rng.integers(0, 2, n)
    numbers[y == 1] += 0.7
    X = np.empty((n, 4), dtype=object)
    X[:, :2], X[:, 2:] = text, numbers
    ours = fastml.NaiveBayes(ddof=0).fit(X, y)
    codes = np.column_stack([np.unique(column, return_inverse=True)[1] for column in text.T])
    cat, gauss = sk_nb.CategoricalNB().fit(codes, y), sk_nb.GaussianNB().fit(numbers, y)
    joint = (cat.predict_joint_log_proba(codes) + gauss.predict_joint_log_proba(numbers)
             - cat.class_log_prior_)
    ref = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(ours.predict_proba(X), ref, atol=1e-12)


def check_gaussian_naive_bayes():
    X, y = make_classification(300, 5, n_classes=3, n_informative=3, random_state=2)
    ours = fastml.GaussianNB(ddof=0).fit(X, y)
    theirs = sk_nb.GaussianNB().fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-13)


def check_linear_ridge_regression():
    X, _ = binary()
    y = X @ np.arange(1.0, 6.0) + np.random.default_rng(0).normal(size=len(X))
    np.testing.assert_allclose(fastml.LinearRegression().fit(X, y).coef_,
                               sk_linear.LinearRegression().fit(X, y).coef_, atol=1e-10)
    for alpha in (0.1, 10.0):
        ours, ref = fastml.Ridge(alpha=alpha).fit(X, y), sk_linear.Ridge(alpha=alpha).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-10)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-10)


def check_polynomial_features():
    from sklearn.preprocessing import PolynomialFeatures
    X, _ = binary()
    np.testing.assert_allclose(fastml.PolynomialFeatures(degree=3).fit_transform(X),
                               PolynomialFeatures(3).fit_transform(X), rtol=1e-12)


def check_information_gain_of_each_attribute():
    # the gain in bits is scikit-learn's mutual information in nats over ln 2 (discrete X)
    from sklearn.feature_selection import mutual_info_classif
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(500, 3))
    y = (X[:, 0] + rng.integers(0, 2, 500)) % 3
    gains = [fastml.info.information_gain(y, X[:, j]) for j in range(3)]
    np.testing.assert_allclose(np.array(gains) * np.log(2),
                               mutual_info_classif(X, y, discrete_features=True), rtol=1e-12)
    table = fastml.info.information_gain_table(X.astype(str), y)  # text: one row per value
    assert f"{gains[0]:.6g}" in str(table)


def check_command_line(tmp_path):
    from fastml import cli
    model, out = str(tmp_path / "m.fastml"), str(tmp_path / "p.csv")
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["fit", "auto-mpg", "--target", "origin", "--model", "logreg",
                         "--drop", "name", "--out", model, "--quiet"]) == 0
        assert cli.main(["predict", model, "auto-mpg", "--out", out]) == 0
    with open(out) as f:
        assert len(f.read().splitlines()) == 1 + 406


def check_save_a_model(tmp_path):
    import joblib
    X, y = binary()
    model = fastml.LogisticRegression().fit(X, y)
    fastml.save(model, str(tmp_path / "m.fastml"))
    joblib.dump(model, str(tmp_path / "m.joblib"))
    for copy in (fastml.load(str(tmp_path / "m.fastml")), joblib.load(str(tmp_path / "m.joblib"))):
        np.testing.assert_array_equal(copy.predict_proba(X), model.predict_proba(X))


def check_cross_validation_grid_search():
    from sklearn.model_selection import GridSearchCV, cross_val_score
    X, y = binary()
    assert cross_val_score(fastml.LogisticRegression(), X, y, cv=3).mean() > 0.9
    search = GridSearchCV(fastml.DecisionTreeClassifier(),
                          {"max_pchance": [0.01, 0.1, None]}, cv=3).fit(X, y)
    assert search.best_params_["max_pchance"] in (0.01, 0.1, None)


CHECKS = {
    "logistic regression": check_logistic_regression,
    "logistic regression by SGD, streaming": check_logistic_regression_by_sgd_streaming,
    "perceptron, averaged": check_perceptron_averaged,
    "voted / kernel perceptron": check_voted_kernel_perceptron,
    "linear SVM (hinge)": check_linear_svm_hinge,
    "decision tree": check_decision_tree,
    "random forest": check_random_forest,
    "naive Bayes on a mixed table": check_naive_bayes_on_a_mixed_table,
    "Gaussian naive Bayes": check_gaussian_naive_bayes,
    "linear / ridge regression": check_linear_ridge_regression,
    "polynomial features": check_polynomial_features,
    "information gain of each attribute": check_information_gain_of_each_attribute,
    "train and save from the command line": check_command_line,
    "predict from the command line": check_command_line,
    "save a model": check_save_a_model,
    "cross-validation, grid search": check_cross_validation_grid_search,
}


def test_every_mapping_row_has_a_check():
    assert mapping_tasks() and set(mapping_tasks()) == set(CHECKS)


@pytest.mark.parametrize("task", sorted(CHECKS))
def test_mapping_row(task, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check = CHECKS[task]
    check(tmp_path) if check.__code__.co_argcount else check()


# ---------------------------------------------------------------------------- getting started

def test_getting_started_code_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"\.\. code-block:: python\n\n(.*?)(?=\n\S)",
                        doc_text("getting_started.rst"), flags=re.S)
    assert len(blocks) == 2
    code = "\n".join(re.sub(r"^   ", "", block, flags=re.M) for block in blocks)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "getting_started.rst", "exec"), {})
    printed = out.getvalue().splitlines()
    assert 0.5 < float(printed[0]) <= 1.0          # held-out accuracy
    assert printed[-1] == "['No']"                 # the comment in the page
