"""Random forests: accuracy against scikit-learn's forest, out-of-bag estimates, threads give
the same forest as one thread, and the single trees are real, inspectable trees."""
import pickle

import numpy as np
import pytest

from fastml.tree import RandomForestClassifier, RandomForestRegressor, export_text

pytestmark = pytest.mark.kernel


def problem(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    score = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n)
    return X, (score > 0).astype(int) + (X[:, 3] > 1)


def test_accuracy_within_one_point_of_sklearn_forest():
    from sklearn.ensemble import RandomForestClassifier as SkForest
    X, y = problem(6000, 0)
    Xt, yt = problem(6000, 1)
    ours = RandomForestClassifier(n_estimators=60, n_jobs=2, random_state=0).fit(X, y)
    theirs = SkForest(n_estimators=60, criterion="entropy", n_jobs=2, random_state=0).fit(X, y)
    assert abs(ours.score(Xt, yt) - theirs.score(Xt, yt)) <= 0.01


def test_oob_score_estimates_test_accuracy():
    X, y = problem(4000, 2)
    Xt, yt = problem(4000, 3)
    forest = RandomForestClassifier(n_estimators=60, oob_score=True, random_state=0).fit(X, y)
    assert abs(forest.oob_score_ - forest.score(Xt, yt)) < 0.03
    assert forest.oob_decision_function_.shape == (4000, 3)
    with pytest.raises(ValueError, match="bootstrap"):
        RandomForestClassifier(oob_score=True, bootstrap=False).fit(X, y)


def test_threads_give_the_same_forest():
    X, y = problem(2000, 4)
    one = RandomForestClassifier(n_estimators=12, n_jobs=1, random_state=3).fit(X, y)
    two = RandomForestClassifier(n_estimators=12, n_jobs=2, random_state=3).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    again = pickle.loads(pickle.dumps(two))
    np.testing.assert_array_equal(again.predict_proba(X), two.predict_proba(X))


def test_trees_are_inspectable_and_importances_sum_to_one():
    X, y = problem(1000, 5)
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    assert len(forest.estimators_) == 5
    assert export_text(forest.estimators_[0]).count("predict") >= 2
    assert forest.feature_importances_.sum() == pytest.approx(1.0)
    assert forest.apply(X).shape == (1000, 5)


def test_importances_sum_to_one_when_some_trees_are_single_leaves():
    # one positive among 10 rows: about a third of the bootstrap samples miss it, and those
    # trees are single leaves; scikit-learn leaves them out of the mean (the sum was 0.74)
    X = np.column_stack([np.arange(10.0), np.arange(10.0)[::-1] % 3])
    y = np.zeros(10, dtype=int)
    y[4] = 1
    forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(X, y)
    stumps = [est.tree_.node_count == 1 for est in forest.estimators_]
    assert 0 < sum(stumps) < 50
    split = [est.feature_importances_ for est, s in zip(forest.estimators_, stumps) if not s]
    expected = np.mean(split, axis=0)
    np.testing.assert_allclose(forest.feature_importances_, expected / expected.sum())
    assert forest.feature_importances_.sum() == pytest.approx(1.0)
    constant = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, np.ones(10))
    np.testing.assert_array_equal(constant.feature_importances_, [0.0, 0.0])


def test_importances_of_trees_whose_splits_gain_nothing_are_zeros_not_nan():
    # XOR at max_depth=1: every tree splits (the lectures do not stop at zero gain) and gains
    # 0 bits, so no tree has importances to average
    import warnings
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    forest = RandomForestClassifier(n_estimators=3, max_depth=1, bootstrap=False,
                                    random_state=0).fit(X, [0, 1, 1, 0])
    assert all(est.tree_.node_count == 3 for est in forest.estimators_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(forest.feature_importances_, [0.0, 0.0])


def test_regressor_close_to_sklearn():
    from sklearn.ensemble import RandomForestRegressor as SkForest
    rng = np.random.default_rng(0)
    X, Xt = rng.normal(size=(4000, 5)), rng.normal(size=(4000, 5))
    f = lambda X: np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]  # noqa: E731
    y, yt = f(X) + 0.3 * rng.normal(size=4000), f(Xt) + 0.3 * rng.normal(size=4000)
    ours = RandomForestRegressor(n_estimators=40, oob_score=True, n_jobs=2,
                                 random_state=0).fit(X, y)
    theirs = SkForest(n_estimators=40, n_jobs=2, random_state=0).fit(X, y)
    rmse = lambda m: np.sqrt(np.mean((m.predict(Xt) - yt) ** 2))  # noqa: E731
    assert rmse(ours) == pytest.approx(rmse(theirs), rel=0.03)
    assert abs(ours.oob_score_ - ours.score(Xt, yt)) < 0.05


def test_categorical_and_missing_input():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    color = rng.choice(["red", "green", "blue", None], size=600)
    x = rng.normal(size=600)
    y = ((color == "red") | (x > 1)).astype(int)
    X = pd.DataFrame({"color": color, "x": np.where(rng.random(600) < 0.05, np.nan, x)})
    forest = RandomForestClassifier(n_estimators=20, max_features=None, random_state=0).fit(X, y)
    assert forest.score(X, y) > 0.95


def test_verbose_shows_progress_over_the_trees(capsys):
    X, y = np.random.default_rng(0).normal(size=(60, 3)), np.arange(60) % 2
    RandomForestClassifier(n_estimators=4, verbose=2, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "[RandomForestClassifier] 4/4 tree" in err
    RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_a_failed_fit_keeps_no_copy_of_the_data(forest):
    X, y = np.random.default_rng(0).normal(size=(30, 3)), np.arange(30) % 2
    for params in ({"n_estimators": 0}, {"oob_score": True, "bootstrap": False}):
        model = forest(**params)
        with pytest.raises(ValueError):
            model.fit(X, y)
        assert not hasattr(model, "_Xe") and not hasattr(model, "_y")
        assert not hasattr(model, "_oob_codes")
    with pytest.raises(ValueError, match="samples"):
        forest().fit(X, y[:-1])  # mismatched lengths fail before any tree


def test_oob_scores_are_the_metrics_of_the_oob_predictions():
    """oob_score_ is fastml.metrics' accuracy / R^2 of the out-of-bag predictions (one copy of
    each metric, in metrics.py), over the rows some tree left out."""
    from fastml import metrics
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = RandomForestClassifier(n_estimators=15, oob_score=True, random_state=0).fit(X, y)
    seen = ~np.isnan(clf.oob_decision_function_).any(axis=1)
    assert clf.oob_score_ == metrics.accuracy(
        y[seen], np.argmax(clf.oob_decision_function_[seen], axis=1))
    target = X[:, 0] * 3 + rng.normal(size=300)
    reg = RandomForestRegressor(n_estimators=15, oob_score=True, random_state=0).fit(X, target)
    seen = ~np.isnan(reg.oob_prediction_)
    expected = 1 - ((target[seen] - reg.oob_prediction_[seen]) ** 2).sum() / \
        ((target[seen] - target[seen].mean()) ** 2).sum()
    assert reg.oob_score_ == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------ the compiled walk over all trees (issue 13)
def per_tree_reference(forest, X):
    """What the forest's one compiled walk replaces: each tree's apply, its leaf values (class
    counts -> frequencies for a classifier), summed over the trees in order, / n_trees."""
    Xe = forest._encode(X)
    total = 0.0
    for est in forest.estimators_:
        leaf = est.tree_.value[est.tree_.apply(Xe)[0]]
        total = total + (leaf / leaf.sum(axis=1, keepdims=True)
                         if forest._estimator_type == "classifier" else leaf[:, 0])
    return total / len(forest.estimators_)


def mixed_frame(n, seed):
    import pandas as pd
    rng = np.random.default_rng(seed)
    X, y = problem(n, seed)
    X[rng.random(X.shape) < 0.05] = np.nan
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    frame["c"] = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    return frame, np.where(frame["c"] == "a", y, 2 - y)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_compiled_walk_equals_the_per_tree_sum(n_jobs):
    """Bit for bit, with threshold, categorical and missing-value splits, for any n_jobs
    (threads split rows; each row sums the trees in order)."""
    X, y = mixed_frame(1500, 0)
    Xt, _ = mixed_frame(700, 1)
    Xt.loc[3, "c"] = np.nan
    clf = RandomForestClassifier(n_estimators=25, max_depth=6, n_jobs=n_jobs,
                                 random_state=0).fit(X, y)
    ref = per_tree_reference(clf, Xt)
    np.testing.assert_array_equal(clf.predict_proba(Xt), ref)
    np.testing.assert_array_equal(clf.predict(Xt), clf.classes_[np.argmax(ref, axis=1)])
    reg = RandomForestRegressor(n_estimators=25, max_depth=6, n_jobs=n_jobs,
                                random_state=0).fit(X, y * 1.5)
    np.testing.assert_array_equal(reg.predict(Xt), per_tree_reference(reg, Xt))


def test_compiled_walk_one_row_and_a_nan_row():
    """One row gives the batch's row; a NaN goes down the learned missing branch (trees
    accept NaN), an infinite value is refused as before."""
    X, y = problem(2000, 3)
    clf = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=0).fit(X, y)
    Xt, _ = problem(50, 4)
    Xt[7, 2] = np.nan
    batch = clf.predict_proba(Xt)
    for i in (0, 7, 49):
        np.testing.assert_array_equal(clf.predict_proba(Xt[i:i + 1]), batch[i:i + 1])
    bad = Xt[:1].copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.predict_proba(bad)


def test_forest_sum_refuses_trees_it_cannot_walk():
    from fastml.tree._tree_fast import forest_sum
    X, y = problem(300, 5)
    clf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    trees = [est.tree_ for est in clf.estimators_]
    out = np.zeros((5, clf.n_classes_))
    with pytest.raises(ValueError, match="columns"):
        forest_sum(trees, np.zeros((5, 2)), out, True)          # too few columns
    with pytest.raises(ValueError, match="values per node"):
        forest_sum(trees, X[:5], np.zeros((5, 7)), True)       # wrong number of classes
    with pytest.raises(TypeError):
        forest_sum(trees + ["not a tree"], X[:5], out, True)
