"""Hyper-parameters that size memory or time are checked against the data before anything is
allocated (issue 12). Each case runs in a child process with its address space limited
(RLIMIT_AS, LIMIT_BYTES) and a timeout, so a regression fails this test instead of taking the
machine down. A case passes when the call gives a normal result or a ValueError naming the
problem; MemoryError, OverflowError, a crash or the timeout fail it. (The timeout is a hang
guard with a wide margin over the normal run time, not a speed assertion.)"""
import pytest

from _robust import run_isolated

LIMIT_BYTES = 2 << 30
TIMEOUT = 60

PRELUDE = """
import numpy as np, fastml, warnings
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int); yr = X @ [1.0, 2.0, 3.0]
"""

# name -> (statement whose value is checked, expected pattern in a ValueError or None)
CASES = {
    "logistic minibatch batch_size=2**40 on 40 rows":
        'fastml.LogisticRegression(solver="minibatch", batch_size=2**40).fit(X, y).predict(X)',
    "logistic minibatch batch_size=2**63":
        'fastml.LogisticRegression(solver="minibatch", batch_size=2**63).fit(X, y).predict(X)',
    "linear regression sgd batch_size=2**40":
        'fastml.LinearRegression(solver="sgd", batch_size=2**40, max_iter=2).fit(X, yr)',
    "PolynomialFeatures degree=2**31":
        "fastml.PolynomialFeatures(degree=2**31).fit(X).transform(X)",
    "PolynomialFeatures degree=60 on 30 columns":
        "fastml.PolynomialFeatures(degree=60).fit(np.ones((2, 30))).transform(np.ones((2, 30)))",
    "PolynomialRegression degree=2**31":
        "fastml.PolynomialRegression(degree=2**31).fit(X, yr).predict(X)",
    "PolynomialRegression degree=10**6 interaction_only":
        "fastml.PolynomialRegression(degree=10**6, interaction_only=True).fit(X, yr).predict(X)",
    "tree max_depth=2**62":
        "fastml.DecisionTreeClassifier(max_depth=2**62).fit(X, y).predict(X)",
    "tree max_depth=2**63-1 regressor":
        "fastml.DecisionTreeRegressor(max_depth=2**63 - 1).fit(X, yr).predict(X)",
    "tree max_leaf_nodes=2**62":
        "fastml.DecisionTreeClassifier(max_leaf_nodes=2**62).fit(X, y).predict(X)",
    "forest max_leaf_nodes=2**40":
        "fastml.RandomForestClassifier(n_estimators=3, max_leaf_nodes=2**40, random_state=0)"
        ".fit(X, y).predict(X)",
    "forest n_jobs=10**6 (threads are capped)":
        "fastml.RandomForestClassifier(n_estimators=3, n_jobs=10**6, random_state=0)"
        ".fit(X, y).predict(X)",
    "kernel perceptron budget=2**40":
        "fastml.KernelPerceptron(budget=2**40, max_iter=2).fit(X, y).predict(X)",
    "kernel perceptron 30000 rows (no n x n buffer)":
        "(lambda Z: fastml.KernelPerceptron(max_iter=1, random_state=0).fit(Z, Z[:, 0] > 0)"
        ".predict(Z))(rng.normal(size=(30000, 5)))",
    "naive Bayes n_jobs=2**31":
        "fastml.GaussianNB(n_jobs=2**31).fit(X, y).predict(X)",
    "categorical NB 10**6 levels":
        "(lambda Z: fastml.CategoricalNB().fit(Z, np.arange(10**6) % 2).predict(Z[:5]))"
        "(np.arange(10**6).reshape(-1, 1))",
    "ID-like categorical column, min_samples_leaf (O(levels + rows) per node)":
        "(lambda Z: fastml.DecisionTreeClassifier(min_samples_leaf=5, max_depth=3)"
        ".fit(Z, np.arange(len(Z)) % 2).predict(Z[:5]))"
        "(np.array([f'id{i}' for i in range(300000)], dtype=object).reshape(-1, 1))",
}


@pytest.mark.parametrize("case", list(CASES))
def test_sizing_parameter_is_checked_before_allocating(case):
    code = PRELUDE + f"""
try:
    out = {CASES[case]}
    print("RESULT ok", np.asarray(out).shape)
except ValueError as exc:
    print("RESULT ValueError", exc)
except BaseException as exc:
    print("RESULT WRONG", type(exc).__name__, str(exc)[:300])
"""
    rc, out, err = run_isolated(code, timeout=TIMEOUT, limit_as=LIMIT_BYTES)
    assert rc is not None, f"{case}: no answer within {TIMEOUT} s (a hang)"
    assert rc == 0, f"{case}: the child died (return code {rc}):\n{err[-2000:]}"
    result = next((line for line in out.splitlines() if line.startswith("RESULT")), "")
    assert result.startswith(("RESULT ok", "RESULT ValueError")), f"{case}: {result or err}"
    if result.startswith("RESULT ValueError"):
        assert len(result) > len("RESULT ValueError ") + 10, f"{case}: unclear message {result}"
