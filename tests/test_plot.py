"""fastml.plot writes non-empty PNGs of the requested size (Agg), with titles, axis labels and
legends, for every estimator the library has."""
import struct

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import fastml  # noqa: E402
from fastml import plot  # noqa: E402
from test_common import ESTIMATORS, IDS, make  # noqa: E402


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert len(data) > 2000, "suspiciously small PNG"
    return struct.unpack(">II", data[16:24])


def two_feature_data(kind, n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if kind == "regressor":
        return X, 2 * X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n)
    return X, np.array(["ant", "bee", "cow"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]


@pytest.fixture(scope="module")
def sgd_model():
    X, y = two_feature_data("classifier")
    return fastml.LogisticRegression(solver="sgd", max_iter=15, tol=None,
                                     random_state=0).fit(X, y), X, y


def test_loss_curve_png_has_the_requested_size_and_labels(sgd_model, tmp_path):
    model = sgd_model[0]
    path = tmp_path / "curve.png"
    ax = plot.plot_loss_curve(model, path=path, figsize=(6, 4), dpi=80)
    assert png_size(path) == (480, 320)
    assert ax.get_xlabel() == "epoch" and "loss" in ax.get_ylabel()
    assert ax.get_title() == "LogisticRegression: loss curve"
    assert ax.get_legend() is not None
    np.testing.assert_allclose(ax.lines[0].get_ydata(), model.loss_curve_)


def test_loss_curve_needs_a_curve():
    with pytest.raises(ValueError, match="no loss_curve_"):
        plot.plot_loss_curve(fastml.LogisticRegression())


def test_plot_learning_curve_is_a_deprecated_alias_of_plot_loss_curve(sgd_model):
    model = sgd_model[0]
    with pytest.warns(FutureWarning, match="renamed plot_loss_curve"):
        ax = plot.plot_learning_curve(model, title="old name")
    assert ax.get_title() == "old name"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), model.loss_curve_)


def test_confusion_matrix_shows_the_counts(tmp_path):
    y_true = np.array(["a", "a", "b", "b", "b", "c"])
    y_pred = np.array(["a", "b", "b", "b", "c", "c"])
    path = tmp_path / "cm.png"
    ax = plot.plot_confusion_matrix(y_true, y_pred, path=path, figsize=(5, 4), dpi=100)
    assert png_size(path) == (500, 400)
    cells = [int(t.get_text()) for t in ax.texts]
    assert cells == [1, 1, 0, 0, 2, 1, 0, 0, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert ax.get_xlabel() == "predicted class" and ax.get_ylabel() == "true class"
    assert "accuracy 0.667" in ax.get_title()
    normalized = plot.plot_confusion_matrix(y_true, y_pred, normalize=True)
    assert [t.get_text() for t in normalized.texts][:3] == ["0.50", "0.50", "0.00"]


CLASSIFIERS = [(n, c) for n, c in ESTIMATORS if c._estimator_type == "classifier"]


@pytest.mark.parametrize("name_cls", CLASSIFIERS, ids=[n for n, _ in CLASSIFIERS])
def test_decision_regions_for_every_classifier(name_cls, tmp_path):
    X, y = two_feature_data("classifier")
    model = make(name_cls[1]).fit(X, y)
    path = tmp_path / "regions.png"
    ax = plot.plot_decision_regions(model, X, y, feature_names=["x1", "x2"], resolution=80,
                                    path=path, figsize=(5, 4), dpi=60)
    assert png_size(path) == (300, 240)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ant", "bee", "cow"]
    assert ax.get_xlabel() == "x1" and ax.get_ylabel() == "x2"
    # the shaded regions are the model's predictions on the grid
    shaded = np.asarray(ax.collections[0].get_array()).ravel()
    assert set(np.unique(shaded)) <= {0.0, 1.0, 2.0}


def test_decision_regions_for_a_scikit_learn_classifier(tmp_path):
    from sklearn.neighbors import KNeighborsClassifier
    X, y = two_feature_data("classifier")
    path = tmp_path / "knn.png"
    plot.plot_decision_regions(KNeighborsClassifier().fit(X, y), X, y, path=path,
                               figsize=(4, 4), dpi=50, resolution=50)
    assert png_size(path) == (200, 200)


def test_decision_regions_need_two_features(sgd_model):
    model, X, y = sgd_model
    with pytest.raises(ValueError, match="exactly 2 features"):
        plot.plot_decision_regions(model, np.hstack([X, X]), y)


@pytest.mark.parametrize("name_cls", ESTIMATORS, ids=IDS)
def test_report_for_every_estimator(name_cls, tmp_path):
    est = make(name_cls[1])
    kind = est._estimator_type
    if kind not in ("classifier", "regressor"):
        pytest.skip("plot_report is for predictors")
    X, y = two_feature_data(kind)
    est.fit(X, y)
    path = tmp_path / "report.png"
    fig = plot.plot_report(est, X, y, title="train", feature_names=["x1", "x2"], path=path)
    width, height = png_size(path)
    n_panels = len([ax for ax in fig.axes if ax.get_label() != "<colorbar>"])
    assert height == 450 and width >= 550 * n_panels
    assert n_panels >= (2 if kind == "classifier" else 1)
    assert all(ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>")


def test_tree_drawing(tmp_path):
    if not hasattr(fastml, "DecisionTreeClassifier"):
        pytest.skip("decision trees not in this build yet")
    X, y = two_feature_data("classifier")
    tree = fastml.DecisionTreeClassifier(max_depth=2).fit(X, y)
    try:
        fastml.tree.export_text(tree)
    except NotImplementedError:
        pytest.skip("tree export not in this build yet")
    path = tmp_path / "tree.png"
    plot.plot_tree(tree, feature_names=["x1", "x2"], path=path, figsize=(8, 5), dpi=50)
    assert png_size(path) == (400, 250)
