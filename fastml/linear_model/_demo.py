"""The linear models' part of `fastml demo`: each on the bundled Auto MPG data."""
import numpy as np

from ..datasets import load_auto_mpg
from ..metrics import accuracy, log_loss, r2, rmse
from ..model_selection import train_test_split
from ..datasets import load_xor
from ._logistic import LogisticRegression
from ._kernel_perceptron import KernelPerceptron
from ._perceptron import Perceptron
from ._voted import VotedPerceptron
from ._regression import LinearRegression, PolynomialRegression, Ridge
from ._svm import LinearSVM

GOOD_MPG = 23.0  # "good" mpg, for the classifiers: about the median of the 392 cars


def standardized_split(target, stratify):
    """The six numeric features standardized on the training part, split 75/25."""
    X, _ = load_auto_mpg(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, target, test_size=0.25,
                                                        random_state=0, stratify=stratify)
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    return (X_train - mean) / std, (X_test - mean) / std, y_train, y_test


def mpg_classification():
    """Good/bad mpg labels (stratified split)."""
    _, mpg = load_auto_mpg(return_X_y=True)
    return standardized_split(np.where(mpg >= GOOD_MPG, "good", "bad"), stratify=True)


def classifier_metrics(model, X_train, X_test, y_train, y_test):
    metrics = {"train acc": accuracy(y_train, model.predict(X_train)),
               "test acc": accuracy(y_test, model.predict(X_test))}
    if hasattr(model, "predict_proba"):
        metrics["test log-loss"] = log_loss(y_test, model.predict_proba(X_test), model.classes_)
    return metrics


def regressor_metrics(model, X_train, X_test, y_train, y_test):
    return {"train RMSE": rmse(y_train, model.predict(X_train)),
            "test RMSE": rmse(y_test, model.predict(X_test)),
            "test R2": r2(y_test, model.predict(X_test))}


def run(report):
    run_classifiers(report)
    run_regressors(report)


def run_regressors(report):
    from .._report import timed_fit
    _, mpg = load_auto_mpg(return_X_y=True)
    X_train, X_test, y_train, y_test = standardized_split(mpg, stratify=False)
    report.section("Regression (001, 004): predict a car's mpg",
                   f"Auto MPG, {len(y_train)} train / {len(y_test)} test cars, 6 numeric "
                   f"features standardized")
    models = [
        ("LinearRegression(solver='normal')", LinearRegression()),
        ("LinearRegression(solver='lstsq')", LinearRegression(solver="lstsq")),
        ("LinearRegression(solver='sgd')",
         LinearRegression(solver="sgd", max_iter=50, tol=None, random_state=0)),
        # alpha is scikit-learn's (the penalty on the sum of squares); the polynomial's 0.3 on
        # these 294 training cars is the lectures' lambda = alpha / n = 1e-3
        ("Ridge(alpha=1.0)", Ridge(alpha=1.0)),
        ("PolynomialRegression(degree=2, alpha=0.3)",
         PolynomialRegression(degree=2, alpha=0.3)),
    ]
    for name, model in models:
        seconds = timed_fit(model, X_train, y_train)
        report.model(name, regressor_metrics(model, X_train, X_test, y_train, y_test), seconds)


def run_classifiers(report):
    import scipy.optimize  # noqa: F401  (imported here so its import time is not a fit time)
    from .._report import timed_fit
    X_train, X_test, y_train, y_test = mpg_classification()
    report.section(f"Linear classifiers: is a car's mpg good (>= {GOOD_MPG:g})?",
                   f"Auto MPG, {len(y_train)} train / {len(y_test)} test cars, 6 numeric "
                   f"features standardized")
    models = [
        ("LogisticRegression(solver='lbfgs')", LogisticRegression(alpha=1e-3)),
        ("LogisticRegression(solver='gd')", LogisticRegression(solver="gd", alpha=1e-3,
                                                               max_iter=5000, tol=1e-6)),
        ("LogisticRegression(solver='sgd')",
         LogisticRegression(solver="sgd", alpha=1e-3, max_iter=20, tol=None, random_state=0)),
        ("LogisticRegression(solver='minibatch')",
         LogisticRegression(solver="minibatch", alpha=1e-3, batch_size=32, max_iter=50,
                            tol=None, random_state=0)),
        ("Perceptron()", Perceptron(random_state=0)),
        ("Perceptron(average=True)", Perceptron(average=True, random_state=0)),
        ("VotedPerceptron()", VotedPerceptron(max_iter=10, random_state=0)),
        ("KernelPerceptron(kernel='rbf', average=True)",
         KernelPerceptron(gamma=0.5, max_iter=10, average=True, random_state=0)),
        ("LinearSVM(solver='sgd')", LinearSVM(alpha=1e-3, random_state=0)),
        ("LinearSVM(solver='subgradient')",
         LinearSVM(alpha=1e-3, solver="subgradient", max_iter=500)),
    ]
    for name, model in models:
        seconds = timed_fit(model, X_train, y_train)
        report.model(name, classifier_metrics(model, X_train, X_test, y_train, y_test), seconds)
    X, y = load_xor()   # 003: XOR needs a degree-2 kernel; a linear perceptron cannot fit it
    kernel = KernelPerceptron(kernel="poly", degree=2, gamma=1.0, coef0=1.0, max_iter=100,
                              shuffle=False).fit(X, y)
    linear = Perceptron(max_iter=100, tol=None, shuffle=False).fit(X, y)
    report.text(f"XOR: KernelPerceptron(poly, degree 2) accuracy {kernel.score(X, y):.2f} "
                f"({kernel.n_mistakes_} mistakes); linear Perceptron {linear.score(X, y):.2f}")
