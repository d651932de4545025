"""Sample and class weights of the linear models, the perceptrons and naive Bayes (issue 31).

- class_weight: the one rule (fastml._validation.class_weight_factors) against scikit-learn's
  compute_class_weight; LogisticRegression(class_weight="balanced") against scikit-learn's
  LogisticRegression with alpha matched to C; every other classifier's class_weight against
  the equivalent sample_weight (naive Bayes: against the equivalent priors);
- weight equivalence, as scikit-learn's check_sample_weight_equivalence asks, for every one
  of these estimators: integer weights equal repeated rows (the perceptrons in the same row
  order, shuffle=False), zero weights equal dropped rows, and scaling every weight changes
  nothing except where the regularization says so (Ridge's alpha, the Laplace pseudo-count,
  ddof), checked as the equality it becomes;
- hypothesis properties: weights against repeated rows for the perceptrons, least squares and
  naive Bayes.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import fastml
from fastml._validation import class_weight_factors

PROPERTY = settings(max_examples=12, deadline=None, derandomize=True, database=None)


def classification(n=120, d=3, n_classes=2, seed=0, weights=(0.7, 0.3)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    cuts = np.quantile(score, np.cumsum(weights[:n_classes])[:-1] if n_classes == len(weights)
                       else np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(score, np.atleast_1d(cuts))


def outputs(est, X):
    out = {}
    for method in ("predict_proba", "decision_function", "predict"):
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X))
    return out


def assert_same_outputs(a, b, X, rtol=1e-9, atol=1e-12):
    got, want = outputs(a, X), outputs(b, X)
    for method in want:
        if want[method].dtype.kind == "f":
            np.testing.assert_allclose(got[method], want[method], rtol=rtol, atol=atol,
                                       err_msg=method)
        else:
            np.testing.assert_array_equal(got[method], want[method], err_msg=method)


# ------------------------------------------------------------------ the class weight rule

@pytest.mark.parametrize("class_weight", ["balanced", {0: 2.0, 2: 0.5}, {0: 1.0, 1: 3.0, 2: 0.0},
                                          None])
@pytest.mark.parametrize("weighted", [False, True])
def test_class_weight_factors_equal_scikit_learns(class_weight, weighted):
    from sklearn.utils.class_weight import compute_class_weight
    rng = np.random.default_rng(0)
    y = rng.choice(3, size=200, p=[0.6, 0.3, 0.1])
    sw = rng.uniform(0.2, 3.0, size=200) if weighted else None
    totals = np.bincount(y, weights=sw, minlength=3)
    want = compute_class_weight(class_weight, classes=np.arange(3), y=y, sample_weight=sw)
    np.testing.assert_allclose(class_weight_factors(class_weight, np.arange(3), totals), want,
                               rtol=1e-14)


def test_class_weight_rule_on_labels_of_any_type_and_its_errors():
    classes = np.array(["no", "yes"])
    np.testing.assert_array_equal(class_weight_factors({"yes": 4}, classes, [3.0, 1.0]),
                                  [1.0, 4.0])
    np.testing.assert_allclose(class_weight_factors("balanced", classes, [3.0, 1.0]),
                               [4 / 6, 2.0])
    # a class without weight has no rows to weigh: 0, and the others balance among themselves
    np.testing.assert_allclose(class_weight_factors("balanced", classes, [3.0, 0.0]), [1.0, 0])
    with pytest.raises(ValueError, match=r"\['Yes'\], which are not classes"):
        class_weight_factors({"Yes": 4}, classes, [3.0, 1.0])     # a misspelt label
    # every class named: an extra key is ignored, as scikit-learn does (a CV fold may lack it)
    np.testing.assert_array_equal(class_weight_factors({"no": 1, "yes": 2, "maybe": 3},
                                                       classes, [1.0, 1.0]), [1.0, 2.0])
    X, y = classification()
    for bad, match in [("balance", "must be None, 'balanced'"), ([1, 2], "must be None"),
                       ({0: -1.0}, "finite numbers >= 0"), ({0: np.nan}, "finite"),
                       ({0: 0.0, 1: 0.0}, "0 on every row")]:
        with pytest.raises(ValueError, match=match):
            fastml.LogisticRegression(class_weight=bad).fit(X, y)


ONLINE = [lambda **kw: fastml.LogisticRegression(solver="sgd", random_state=0, **kw),
          lambda **kw: fastml.Perceptron(random_state=0, **kw),
          lambda **kw: fastml.LinearSVM(random_state=0, **kw),
          lambda **kw: fastml.KernelPerceptron(random_state=0, **kw),
          lambda **kw: fastml.VotedPerceptron(random_state=0, **kw)]


@pytest.mark.parametrize("make", ONLINE)
def test_partial_fit_refuses_balanced_and_takes_a_dict(make):
    X, y = classification()
    with pytest.raises(ValueError, match="balanced.*partial_fit"):
        make(class_weight="balanced").partial_fit(X, y, classes=[0, 1])
    weighted = make(class_weight={1: 3.0}).partial_fit(X, y, classes=[0, 1])
    by_hand = make().partial_fit(X, y, classes=[0, 1], sample_weight=np.where(y == 1, 3.0, 1))
    assert_same_outputs(weighted, by_hand, X)


# ------------------------------------------------------------------ against scikit-learn

@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_balanced_logistic_regression_equals_scikit_learns(n_classes, weighted):
    """alpha = 1 / (C * the sum of the class-weighted sample weights), as the docstring says
    (scikit-learn scales its penalty by that sum)."""
    from sklearn.linear_model import LogisticRegression as SkLogistic
    X, y = classification(n=300, d=4, n_classes=n_classes, seed=n_classes,
                          weights=(0.6, 0.3, 0.1))
    sw = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if weighted else None
    C = 0.5
    totals = np.bincount(y, weights=sw, minlength=n_classes)
    products = (np.ones(len(y)) if sw is None else sw) * \
        class_weight_factors("balanced", np.arange(n_classes), totals)[y]
    ours = fastml.LogisticRegression(class_weight="balanced", alpha=1 / (C * products.sum()),
                                     tol=1e-10, max_iter=500).fit(X, y, sample_weight=sw)
    theirs = SkLogistic(C=C, class_weight="balanced", tol=1e-12, max_iter=10_000).fit(
        X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
    np.testing.assert_allclose(ours.coef_, theirs.coef_[-1:] if n_classes == 2 else
                               theirs.coef_, atol=1e-6)
    assert (ours.predict(X) == theirs.predict(X)).all()


# ------------------------------------------------------------------ class_weight = sample_weight

CLASS_WEIGHTED = {
    "LogisticRegression(lbfgs)": lambda **kw: fastml.LogisticRegression(**kw),
    "LogisticRegression(gd)": lambda **kw: fastml.LogisticRegression(solver="gd", **kw),
    "LogisticRegression(newton)": lambda **kw: fastml.LogisticRegression(solver="newton", **kw),
    "LogisticRegression(sgd)": lambda **kw: fastml.LogisticRegression(
        solver="sgd", max_iter=5, tol=None, random_state=0, **kw),
    "LogisticRegression(minibatch)": lambda **kw: fastml.LogisticRegression(
        solver="minibatch", batch_size=16, max_iter=5, tol=None, random_state=0, **kw),
    "Perceptron": lambda **kw: fastml.Perceptron(max_iter=5, random_state=0, **kw),
    "LinearSVM(sgd)": lambda **kw: fastml.LinearSVM(max_iter=5, tol=None, random_state=0, **kw),
    "LinearSVM(subgradient)": lambda **kw: fastml.LinearSVM(solver="subgradient", max_iter=20,
                                                            **kw),
    "KernelPerceptron": lambda **kw: fastml.KernelPerceptron(max_iter=3, random_state=0, **kw),
    "VotedPerceptron": lambda **kw: fastml.VotedPerceptron(max_iter=3, random_state=0, **kw),
    "VotedPerceptron(budget)": lambda **kw: fastml.VotedPerceptron(max_iter=3, budget=4,
                                                                   random_state=0, **kw),
}


@pytest.mark.parametrize("name", list(CLASS_WEIGHTED))
@pytest.mark.parametrize("class_weight", ["balanced", {0: 0.5, 2: 3.0}])
def test_class_weight_is_the_equivalent_sample_weight(name, class_weight):
    X, y = classification(n=150, n_classes=3, seed=4, weights=(0.6, 0.3, 0.1))
    sw = np.random.default_rng(2).uniform(0.5, 1.5, len(y))
    make = CLASS_WEIGHTED[name]
    factors = class_weight_factors(class_weight, np.arange(3), np.bincount(y, weights=sw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastml.ConvergenceWarning)
        weighted = make(class_weight=class_weight).fit(X, y, sample_weight=sw)
        by_hand = make().fit(X, y, sample_weight=sw * factors[y])
    assert_same_outputs(weighted, by_hand, X, rtol=0, atol=0)


@pytest.mark.parametrize("cls", [fastml.CategoricalNB, fastml.GaussianNB, fastml.NaiveBayes])
@pytest.mark.parametrize("class_weight", ["balanced", {0: 0.5, 2: 3.0}])
def test_naive_bayes_class_weight_reweights_the_prior_only(cls, class_weight):
    rng = np.random.default_rng(5)
    X, y = classification(n=200, n_classes=3, seed=5, weights=(0.6, 0.3, 0.1))
    X = np.round(X) if cls is fastml.CategoricalNB else X
    sw = rng.uniform(0.5, 1.5, len(y))
    model = cls(class_weight=class_weight).fit(X, y, sample_weight=sw)
    counts = np.bincount(y, weights=sw)
    prior = counts * class_weight_factors(class_weight, np.arange(3), counts)
    np.testing.assert_allclose(model.class_prior_, prior / prior.sum(), rtol=1e-14)
    if class_weight == "balanced":
        np.testing.assert_allclose(model.class_prior_, 1 / 3, rtol=1e-14)
    with_priors = cls(priors=prior / prior.sum()).fit(X, y, sample_weight=sw)
    assert_same_outputs(model, with_priors, X, rtol=1e-14)
    # partial_fit takes "balanced" too: the prior of all the chunks so far
    chunks = cls(class_weight=class_weight)
    for part in np.array_split(np.arange(len(y)), 3):
        chunks.partial_fit(X[part], y[part], classes=[0, 1, 2], sample_weight=sw[part])
    np.testing.assert_allclose(chunks.class_prior_, model.class_prior_, rtol=1e-12)
    with pytest.raises(ValueError, match="priors and class_weight"):
        cls(class_weight=class_weight, priors=[0.2, 0.3, 0.5]).fit(X, y)


# ------------------------------------------------------------------ weight equivalence

def weighted_and_repeated(n=90, d=3, n_classes=2, seed=0, high=4):
    """(X, y, integer weights with zeros, X repeated, y repeated): rows repeated in place, so
    a fit in the given order sees each row's copies where it sees the weighted row."""
    X, y = classification(n=n, d=d, n_classes=n_classes, seed=seed,
                          weights=(0.5, 0.3, 0.2) if n_classes == 3 else (0.6, 0.4))
    sw = np.random.default_rng(seed + 100).integers(0, high, n)
    sw[:2] = [0, 3]
    return X, y, sw, np.repeat(X, sw, axis=0), np.repeat(y, sw)


EXACT_IN_ORDER = {   # integer weights = repeated rows in the same order, to rounding
    "KernelPerceptron": lambda: fastml.KernelPerceptron(gamma=0.5, max_iter=3, shuffle=False),
    "KernelPerceptron(average)": lambda: fastml.KernelPerceptron(
        kernel="poly", degree=2, coef0=1.0, gamma=0.5, max_iter=3, shuffle=False,
        average=True),
    "KernelPerceptron(linear, budget)": lambda: fastml.KernelPerceptron(
        kernel="linear", max_iter=2, shuffle=False),
    "VotedPerceptron": lambda: fastml.VotedPerceptron(max_iter=3, shuffle=False),
    "VotedPerceptron(budget)": lambda: fastml.VotedPerceptron(max_iter=3, shuffle=False,
                                                              budget=5),
    "VotedPerceptron(no intercept)": lambda: fastml.VotedPerceptron(
        max_iter=2, shuffle=False, fit_intercept=False),
}


@pytest.mark.kernel
@pytest.mark.parametrize("name, sparse", [(name, sparse) for name in EXACT_IN_ORDER
                                          for sparse in (False, True)
                                          if not (sparse and name.startswith("Kernel"))])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_perceptron_integer_weights_are_repeated_rows_in_order(name, n_classes, sparse):
    make = EXACT_IN_ORDER[name]     # (KernelPerceptron takes dense rows only)
    X, y, sw, X_rep, y_rep = weighted_and_repeated(n_classes=n_classes, seed=n_classes)
    to = sp.csr_matrix if sparse else np.asarray
    weighted = make().fit(to(X), y, sample_weight=sw)
    repeated = make().fit(to(X_rep), y_rep)
    assert weighted.n_mistakes_ == repeated.n_mistakes_
    assert_same_outputs(weighted, repeated, X, rtol=1e-12, atol=1e-12)
    if name.startswith("Voted"):            # the very vectors and votes
        np.testing.assert_array_equal(weighted.vectors_, repeated.vectors_)
        np.testing.assert_array_equal(weighted.vector_counts_, repeated.vector_counts_)
    # zero weights: the rows dropped
    kept = sw > 0
    dropped = make().fit(to(X[kept]), y[kept], sample_weight=sw[kept])
    assert_same_outputs(weighted, dropped, X, rtol=1e-12, atol=1e-12)


@pytest.mark.kernel
def test_perceptron_weight_checks_as_scikit_learns_but_in_one_order():
    """scikit-learn's check_sample_weight_equivalence (its data and weights), with the weighted
    rows in the order of their copies: what the conformance xfail of the two perceptrons says
    (they differ there only because the check fits the two in different orders)."""
    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15)
    sw = rng.randint(0, 5, size=15)
    for est in (fastml.KernelPerceptron(shuffle=False), fastml.VotedPerceptron(shuffle=False)):
        weighted = fastml.clone(est).fit(X, y, sample_weight=sw)
        repeated = fastml.clone(est).fit(X.repeat(sw, axis=0), y.repeat(sw))
        assert_same_outputs(weighted, repeated, X, rtol=1e-7, atol=1e-9)


def test_perceptron_weights_up_to_one_change_the_scale_only():
    """A weight <= 1 is one visit: a mistake adds the weight times y (x): scaling weights
    that stay <= 1 scales the coefficients and keeps every prediction."""
    X, y = classification(n=150, n_classes=3, seed=7, weights=(0.5, 0.3, 0.2))
    sw = np.random.default_rng(3).uniform(0.05, 0.5, len(y))
    for make in (lambda: fastml.KernelPerceptron(max_iter=3, random_state=0),
                 lambda: fastml.VotedPerceptron(max_iter=3, random_state=0)):
        a, b = make().fit(X, y, sample_weight=sw), make().fit(X, y, sample_weight=2 * sw)
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        np.testing.assert_allclose(2 * a.decision_function(X), b.decision_function(X),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.kernel
def test_a_weighted_mistake_adds_its_weight_or_the_visits_it_needs():
    """The docstring's rule on one feature with the linear kernel (k(x, x) = x^2 = 1): a
    mistake on a row of weight s adds y min(s, floor(-y f(x) / k(x, x)) + 1), what s copies
    of the row in a row would add."""
    def coefficients(weights, y):
        model = fastml.KernelPerceptron(kernel="linear", max_iter=1, shuffle=False)
        return model.fit(np.ones((len(y), 1)), y, sample_weight=weights).dual_coef_[0].tolist()

    # the first row errs at margin 0: one visit makes it right, so a weight above 1 adds 1
    for s, added in ((0.5, 0.5), (1.0, 1.0), (3.0, 1.0)):
        assert coefficients([s, 0.0], [1, 0]) == [added]      # (the row of weight 0: none)
    # the second row (class 0, y = -1) meets f(x) = 1: margin -1, fixed after 2 visits
    for s, added in ((0.5, -0.5), (1.5, -1.5), (2.0, -2.0), (5.0, -2.0)):
        assert coefficients([1.0, s], [1, 0]) == [1.0, added]


LEAST_SQUARES = {
    "LinearRegression": lambda **kw: fastml.LinearRegression(**kw),
    "LinearRegression(lstsq)": lambda **kw: fastml.LinearRegression(solver="lstsq", **kw),
    "LinearRegression(lsqr)": lambda **kw: fastml.LinearRegression(solver="lsqr", **kw),
    "Ridge": lambda **kw: fastml.Ridge(alpha=2.0, **kw),
    "Ridge(lsqr)": lambda **kw: fastml.Ridge(alpha=2.0, solver="lsqr", **kw),
}


@pytest.mark.parametrize("name", list(LEAST_SQUARES))
@pytest.mark.parametrize("sparse", [False, True])
def test_least_squares_weight_equivalence(name, sparse):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(80, 4))
    X[rng.random(X.shape) < 0.4] = 0.0
    y = X @ [1.0, -2.0, 0.5, 0.0] + 0.3 * rng.normal(size=80)
    sw = rng.integers(0, 4, 80)
    make = LEAST_SQUARES[name]
    to = sp.csr_matrix if sparse else np.asarray
    tol = 1e-8 if "lsqr" in name else 1e-10
    weighted = make().fit(to(X), y, sample_weight=sw)
    np.testing.assert_allclose(weighted.predict(X), make().fit(
        to(np.repeat(X, sw, axis=0)), np.repeat(y, sw)).predict(X), rtol=tol, atol=tol)
    kept = sw > 0
    np.testing.assert_allclose(weighted.predict(X), make().fit(
        to(X[kept]), y[kept], sample_weight=sw[kept]).predict(X), rtol=tol, atol=tol)
    # scaling: least squares changes nothing; ridge's alpha is on a sum, so c * weights with
    # alpha is the weights with alpha / c
    scaled = make().fit(to(X), y, sample_weight=4.0 * sw)
    if name.startswith("Ridge"):
        scaled_alpha = make().set_params(alpha=0.5).fit(to(X), y, sample_weight=sw)
        np.testing.assert_allclose(scaled.coef_, scaled_alpha.coef_, rtol=tol, atol=tol)
    else:
        np.testing.assert_allclose(scaled.coef_, weighted.coef_, rtol=tol, atol=tol)


BATCH = {
    "LogisticRegression(lbfgs)": lambda: fastml.LogisticRegression(alpha=0.01, tol=1e-10,
                                                                   max_iter=1000),
    "LogisticRegression(newton)": lambda: fastml.LogisticRegression(
        solver="newton", alpha=0.01, tol=1e-10, max_iter=50),
    "LogisticRegression(gd)": lambda: fastml.LogisticRegression(solver="gd", alpha=0.05,
                                                                tol=1e-9, max_iter=5000),
    "LinearSVM(subgradient)": lambda: fastml.LinearSVM(solver="subgradient", alpha=0.01,
                                                       max_iter=30, tol=None),
}


@pytest.mark.parametrize("name", list(BATCH))
def test_batch_classifiers_weight_equivalence(name):
    """The batch objectives weigh rows by their weight over the total: repetition and removal
    give the same objective, hence (to the solver's tolerance) the same model; scaling changes
    nothing."""
    X, y, sw, X_rep, y_rep = weighted_and_repeated(n=120, n_classes=3, seed=9)
    make = BATCH[name]
    atol = 1e-6 if "gd" in name else 1e-7     # solvers stopped at max|gradient| ~1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastml.ConvergenceWarning)
        weighted = make().fit(X, y, sample_weight=sw)
        for other in (make().fit(X_rep, y_rep),
                      make().fit(X[sw > 0], y[sw > 0], sample_weight=sw[sw > 0]),
                      make().fit(X, y, sample_weight=0.25 * sw)):
            assert_same_outputs(weighted, other, X, rtol=0, atol=atol)


def test_online_linear_models_take_zero_weights_as_dropped_rows_in_order():
    """Perceptron: a zero weight steps by 0 (scikit-learn's SGD models xfail the repetition
    check, as ours do: a weighted row is one step, its copies several)."""
    X, y, sw, _, _ = weighted_and_repeated(n=100, seed=11)
    kept = sw > 0
    a = fastml.Perceptron(max_iter=5, tol=None, shuffle=False).fit(X, y, sample_weight=sw)
    b = fastml.Perceptron(max_iter=5, tol=None, shuffle=False).fit(X[kept], y[kept],
                                                                   sample_weight=sw[kept])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # the SGD solvers step with the weights over their mean: scaling them changes nothing
    for make in (lambda: fastml.LogisticRegression(solver="sgd", random_state=0, max_iter=3),
                 lambda: fastml.LinearSVM(random_state=0, max_iter=3, tol=None)):
        one, scaled = make().fit(X, y, sample_weight=sw), make().fit(X, y, sample_weight=8 * sw)
        np.testing.assert_allclose(one.coef_, scaled.coef_, rtol=1e-12, atol=1e-12)


NAIVE_BAYES = {
    "CategoricalNB": (lambda **kw: fastml.CategoricalNB(**kw), "alpha"),
    "CategoricalNB(m-estimate)": (lambda **kw: fastml.CategoricalNB(smoothing="m-estimate",
                                                                     **kw), "m"),
    "GaussianNB": (lambda **kw: fastml.GaussianNB(**kw), "ddof"),
    "GaussianNB(shared)": (lambda **kw: fastml.GaussianNB(variance="shared", **kw), "ddof"),
    "NaiveBayes": (lambda **kw: fastml.NaiveBayes(categorical_features=[0, 1], **kw), None),
}


@pytest.mark.kernel
@pytest.mark.parametrize("name", list(NAIVE_BAYES))
@pytest.mark.parametrize("sparse", [False, True])
def test_naive_bayes_weight_equivalence(name, sparse):
    """Weights count rows: repetition and removal are exact; scaling by c is dividing the
    pseudo-counts (alpha, m) or ddof by c, the regularizers that are not counts of rows."""
    make, regularizer = NAIVE_BAYES[name]
    X, y, sw, X_rep, y_rep = weighted_and_repeated(n=150, d=3, n_classes=3, seed=12, high=4)
    X = np.round(X * 1.5)
    X_rep = np.round(X_rep * 1.5)
    to = sp.csr_matrix if sparse else np.asarray
    weighted = make().fit(to(X), y, sample_weight=sw)
    assert_same_outputs(weighted, make().fit(to(X_rep), y_rep), X, rtol=1e-12, atol=1e-12)
    assert_same_outputs(weighted, make().fit(to(X[sw > 0]), y[sw > 0],
                                             sample_weight=sw[sw > 0]), X, rtol=1e-12,
                        atol=1e-12)
    if regularizer is not None:
        base = getattr(make(), regularizer)
        scaled = make().fit(to(X), y, sample_weight=4.0 * sw)
        assert_same_outputs(scaled, make(**{regularizer: base / 4.0}).fit(to(X), y,
                                                                          sample_weight=sw),
                            X, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ properties

@st.composite
def weighted_problem(draw, max_rows=30, max_d=3):
    n = draw(st.integers(4, max_rows))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float)
    y = rng.integers(0, draw(st.sampled_from([2, 3])), n)
    y[:2] = [0, 1]
    sw = rng.integers(0, 4, n)
    sw[:2] = 1
    return X, y, sw


@PROPERTY
@given(problem=weighted_problem(), kind=st.sampled_from(["kernel", "voted", "voted-budget"]))
def test_property_perceptron_weights_are_repeated_rows(problem, kind):
    X, y, sw = problem
    make = {"kernel": lambda: fastml.KernelPerceptron(kernel="linear", max_iter=2,
                                                      shuffle=False),
            "voted": lambda: fastml.VotedPerceptron(max_iter=2, shuffle=False),
            "voted-budget": lambda: fastml.VotedPerceptron(max_iter=2, shuffle=False,
                                                           budget=3)}[kind]
    weighted = make().fit(X, y, sample_weight=sw)
    repeated = make().fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    # integer data: every margin and coefficient is exact, so the models are equal
    np.testing.assert_array_equal(weighted.decision_function(X), repeated.decision_function(X))
    assert weighted.n_mistakes_ == repeated.n_mistakes_


@PROPERTY
@given(problem=weighted_problem(max_rows=40, max_d=4),
       kind=st.sampled_from(["ols", "ridge", "categorical", "gaussian"]),
       sparse=st.booleans())
def test_property_weights_are_repeated_rows(problem, kind, sparse):
    X, y, sw = problem
    make = {"ols": lambda: fastml.LinearRegression(), "ridge": lambda: fastml.Ridge(alpha=1.5),
            "categorical": lambda: fastml.CategoricalNB(),
            "gaussian": lambda: fastml.GaussianNB(var_smoothing=1e-3)}[kind]
    target = y.astype(float) + X.sum(axis=1) if kind in ("ols", "ridge") else y
    to = sp.csr_matrix if sparse else np.asarray
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # rank deficient X, floored variances
        weighted = make().fit(to(X), target, sample_weight=sw)
        repeated = make().fit(to(np.repeat(X, sw, axis=0)), np.repeat(target, sw))
        for method in ("predict_log_proba", "predict"):
            if hasattr(weighted, method) and not (method == "predict" and kind in
                                                  ("categorical", "gaussian")):
                np.testing.assert_allclose(getattr(weighted, method)(X),
                                           getattr(repeated, method)(X), rtol=1e-9,
                                           atol=1e-9)
