"""The trees' part of `fastml demo`: 000's MPG example (categorical table, 40 training rows,
chi-square pruning), then trees and a forest on the numeric Auto MPG data."""
import numpy as np

from ..datasets import load_auto_mpg, load_lecture_mpg
from ..datasets._lecture_mpg import MPG_GOOD_FROM
from ..info import information_gain_table
from ..model_selection import train_test_split
from ._classes import DecisionTreeClassifier, DecisionTreeRegressor
from ._export import export_text
from ._forest import RandomForestClassifier

GOOD_MPG = MPG_GOOD_FROM  # the lecture table's good/bad split, for both sections


def run(report):
    import scipy.stats  # noqa: F401  (imported here so its import time is not a fit time)
    from .._report import timed_fit
    lecture = load_lecture_mpg()            # plain arrays: the demo needs no pandas
    names = lecture.feature_names
    X = np.column_stack([lecture.data[c] for c in names])
    y = lecture.target
    train = np.random.default_rng(0).permutation(len(y))[:40]
    test = np.setdiff1d(np.arange(len(y)), train)
    report.section("Decision trees (000): the discretised MPG table, 40 training cars",
                   f"{len(train)} train / {len(test)} test cars, 7 categorical attributes, "
                   f"mpg good (>= {GOOD_MPG:g}) / bad")
    table = information_gain_table(X[train], y[train], feature_names=names)
    report.text(f"best first split: {table.best()}")
    for name, model in [("DecisionTreeClassifier()", DecisionTreeClassifier()),
                        ("DecisionTreeClassifier(max_pchance=0.1)",
                         DecisionTreeClassifier(max_pchance=0.1))]:
        seconds = timed_fit(model, X[train], y[train])
        report.model(name, {"leaves": model.get_n_leaves(),
                            "train err": 1 - model.score(X[train], y[train]),
                            "test err": 1 - model.score(X[test], y[test])}, seconds)
    for line in export_text(model, names).splitlines():
        report.text(line)

    Xn, mpg = load_auto_mpg(return_X_y=True)
    labels = np.where(mpg >= GOOD_MPG, "good", "bad")
    tr, te = train_test_split(np.arange(len(mpg)).reshape(-1, 1), mpg, test_size=0.25,
                              random_state=0)[:2]
    tr, te = tr.ravel(), te.ravel()
    X_tr, X_te, y_tr, y_te, m_tr, m_te = Xn[tr], Xn[te], labels[tr], labels[te], mpg[tr], mpg[te]
    report.section("Trees and forests on the real-valued attributes (IG* thresholds)",
                   f"Auto MPG, {len(y_tr)} train / {len(y_te)} test cars, 6 numeric features")
    for name, model in [("DecisionTreeClassifier(min_samples_leaf=5)",
                         DecisionTreeClassifier(min_samples_leaf=5)),
                        ("RandomForestClassifier(100 trees, n_jobs=2)",
                         RandomForestClassifier(n_jobs=2, oob_score=True, random_state=0))]:
        seconds = timed_fit(model, X_tr, y_tr)
        metrics = {"train acc": model.score(X_tr, y_tr), "test acc": model.score(X_te, y_te)}
        if hasattr(model, "oob_score_"):
            metrics["oob acc"] = model.oob_score_
        report.model(name, metrics, seconds)
    model = DecisionTreeRegressor(min_samples_leaf=5)
    seconds = timed_fit(model, X_tr, m_tr)
    rmse = float(np.sqrt(np.mean((model.predict(X_te) - m_te) ** 2)))
    report.model("DecisionTreeRegressor(min_samples_leaf=5) on mpg",
                 {"test R2": model.score(X_te, m_te), "test RMSE": rmse}, seconds)
