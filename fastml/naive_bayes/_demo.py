"""Naive Bayes' part of `fastml demo`: lecture 004's tax table, the Auto MPG cars with
categorical, real and missing attributes together, and 002's comparison of Gaussian naive
Bayes with logistic regression as learning curves."""
import warnings

import numpy as np

from ..datasets import load_auto_mpg, load_tax_table
from ..metrics import accuracy, log_loss
from ..model_selection import train_test_split
from ._classes import CategoricalNB, GaussianNB, NaiveBayes, ZeroProbabilityWarning

GOOD_MPG = 23.0  # the linear models' demo uses the same split of the cars


def tax_table(report):
    """Lecture 004's tax table: the slide's estimates, its prediction for X = (No, Divorced,
    120K), and the zero-probability row once record 7 is deleted.

    Parameters
    ----------
    report : the demo's report writer (fastml demo passes it); this adds its section(s).
    """
    report.section("Naive Bayes on lecture 004's tax table",
                   "10 rows: Refund, Marital Status (categorical), Taxable Income (real)")
    X, y = load_tax_table(return_X_y=True)
    model = NaiveBayes(smoothing="none").fit(X, y)
    x = np.array([["No", "Divorced", 120.0]], dtype=object)
    likelihood = np.exp(model.predict_joint_log_proba(x)[0] - model.class_log_prior_)
    report.text(f"income | No: mean {model.theta_[0, 0]:g}, variance {model.var_[0, 0]:.0f}")
    report.text(f"X = (Refund=No, Divorced, 120K): P(X|No) = {likelihood[0]:.1g}, "
                f"P(X|Yes) = {likelihood[1]:.1g} -> {model.predict(x)[0]}")
    X7, y7 = load_tax_table(return_X_y=True, drop_tid=7)
    x7 = np.array([["Yes", "Divorced", 120.0]], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroProbabilityWarning)
        raw = NaiveBayes(smoothing="none").fit(X7, y7)
        joint = np.exp(raw.predict_joint_log_proba(x7)[0])
    laplace = NaiveBayes(smoothing="laplace").fit(X7, y7)
    report.text(f"Tid 7 deleted, X = (Refund=Yes, Divorced, 120K): without smoothing "
                f"P(X, No) = {joint[0]:g}, P(X, Yes) = {joint[1]:g} (cannot classify); "
                f"Laplace: P(No|X) = {laplace.predict_proba(x7)[0, 0]:.4f} -> "
                f"{laplace.predict(x7)[0]}")


def auto_mpg(report):
    from .._report import timed_fit
    data = load_auto_mpg(dropna=False)      # plain arrays: the demo needs no pandas
    known = ~np.isnan(data.target)
    names = [c for c in data.feature_names if c != "name"]
    table = np.empty((int(known.sum()), len(names)), dtype=object)   # numbers and strings
    for j, c in enumerate(names):
        table[:, j] = data.data[c][known]
    labels = np.where(data.target[known] >= GOOD_MPG, "good", "bad")
    X_train, X_test, y_train, y_test = train_test_split(table, labels, test_size=0.25,
                                                        random_state=0, stratify=True)
    numeric = [j for j, c in enumerate(names) if c != "origin"]
    n_missing = int(np.isnan(table[:, numeric].astype(float)).sum())
    report.section(f"Naive Bayes: is a car's mpg good (>= {GOOD_MPG:g})?",
                   f"Auto MPG, {len(y_train)} train / {len(y_test)} test cars; origin "
                   f"categorical, 6 numeric columns, {n_missing} missing horsepower cells kept")
    as_levels = [names.index(c) for c in ("cylinders", "origin", "model_year")]
    models = [
        ("GaussianNB (numeric columns)", GaussianNB(),
         lambda t: t[:, numeric].astype(float)),
        ("CategoricalNB (cylinders, origin, year)", CategoricalNB(), lambda t: t[:, as_levels]),
        ("NaiveBayes (mixed, categorical='auto')", NaiveBayes(), lambda t: t),
    ]
    for name, model, columns in models:
        seconds = timed_fit(model, columns(X_train), y_train)
        proba = model.predict_proba(columns(X_test))
        report.model(name, {
            "train acc": accuracy(y_train, model.predict(columns(X_train))),
            "test acc": accuracy(y_test, model.predict(columns(X_test))),
            "test log-loss": log_loss(y_test, proba, model.classes_)}, seconds)


NG_JORDAN = ("Ng & Jordan (2002), \"On discriminative vs. generative classifiers: a "
             "comparison of logistic regression and naive Bayes\", NIPS 14")
CURVE_SIZES = [4, 8, 16, 32, 64, 128, 294]   # 294 = every row left after the 98 test rows
NEAR = 0.02   # "reached its asymptote": mean error stays within this of the error on all rows


def generative_vs_discriminative(report):
    """002's closing comparison on real data: held-out error against training-set size for
    GaussianNB(variance="shared") and logistic regression, which share one hypothesis class
    (002: GNB with class-independent variances has logistic regression's form). GNB gets
    near its asymptotic error with a handful of cars; logistic regression needs more and ends
    lower (Ng & Jordan 2002).

    Parameters
    ----------
    report : the demo's report writer (fastml demo passes it); this adds its section(s).
    """
    from ..linear_model import LogisticRegression
    from ..plot import learning_curves
    data = load_auto_mpg()
    X = np.column_stack([data.data[c] for c in data.feature_names[:6]])
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.where(data.data["origin"] == "america", "america", "other")
    gnb = GaussianNB(variance="shared")
    lr = LogisticRegression(solver="newton", alpha=1e-4)
    repeats = 10
    curves = learning_curves([gnb, lr], Z, y, sizes=CURVE_SIZES, n_repeats=repeats,
                             test_size=0.25, random_state=0, draw=False)
    report.section("Generative vs discriminative (002): learning curves",
                   f"Auto MPG, is a car American? 6 numeric features standardized; held-out "
                   f"error of {repeats} random splits ({curves.n_test} test cars) per "
                   f"training-set size")
    for line in curves.table().splitlines():
        report.text(line)
    reached, final = {}, {}
    for name in curves.names:
        mean = curves.mean(name)
        final[name] = mean[-1]
        far = np.flatnonzero(np.abs(mean - mean[-1]) > NEAR)   # the last size still far off
        reached[name] = int(curves.sizes[far[-1] + 1 if len(far) else 0])
    (g, l) = curves.names
    report.text(f"stays within {NEAR} of its error on all {curves.sizes[-1]} cars: GaussianNB from "
                f"{reached[g]} cars on, LogisticRegression from {reached[l]} cars on")
    report.text(f"error on all {curves.sizes[-1]} cars: GaussianNB {final[g]:.4f}, "
                f"LogisticRegression {final[l]:.4f} (the lower asymptote is the "
                f"discriminative model's)")
    report.text(f"GNB needs less data, LR gets to a better solution in the limit: "
                f"{NG_JORDAN}")


def run(report):
    """Naive Bayes' part of `fastml demo`: the three sections.

    Parameters
    ----------
    report : the demo's report writer (fastml demo passes it); this adds its section(s).
    """
    tax_table(report)
    auto_mpg(report)
    generative_vs_discriminative(report)
