"""Shared pieces of the robustness suites (test_properties*, test_model_file_fuzz, test_threads,
test_resources): how to build and fit every public estimator on small data, how to snapshot
an estimator's whole state to compare it before/after a call, and how to run a case that might
crash the interpreter in a child process so a crash fails one test instead of the suite."""
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np

import fastml

ESTIMATORS = fastml.all_estimators()
IDS = [name for name, _ in ESTIMATORS]
CLASSES = dict(ESTIMATORS)

# What a refused call may raise (NotFittedError and ModelFileError are ValueErrors).
ALLOWED = (ValueError, TypeError)
METHODS = ("predict", "predict_proba", "decision_function", "transform")
TESTS = os.path.dirname(os.path.abspath(__file__))
# Where the imported fastml lives: site-packages in CI, the checkout after an in-place build.
FASTML_HOME = os.path.dirname(os.path.dirname(os.path.abspath(fastml.__file__)))


def make(cls, online=False, **params):
    """The estimator with a fixed seed and a small budget (fast enough to fit hundreds)."""
    names = cls._get_param_names()
    if "random_state" in names:
        params.setdefault("random_state", 0)
    if "n_estimators" in names:
        params.setdefault("n_estimators", 5)
    if "max_iter" in names and cls.__name__ != "LogisticRegression":
        params.setdefault("max_iter", 5)
    if "tol" in names and "max_iter" in names and cls.__name__ != "LogisticRegression":
        params.setdefault("tol", None)
    if online and cls.__name__ == "LogisticRegression":
        params.setdefault("solver", "sgd")  # partial_fit needs an online solver
    return cls(**params)


def takes(cls, method, arg):
    fn = getattr(cls, method, None)
    return fn is not None and arg in inspect.signature(fn).parameters


def kind(est):
    return est._estimator_type


def good_data(est, n=40, d=3, seed=0, n_classes=2):
    """Small, well-conditioned data of the kind the estimator learns from."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind(est) == "classifier":
        score = X[:, 0] + 0.5 * X[:, min(1, d - 1)]
        cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
        return X, np.searchsorted(cuts, score)
    if kind(est) == "regressor":
        return X, X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)
    return X, None


def fitted(cls, **params):
    est = make(cls, **params)
    X, y = good_data(est)
    return est.fit(X, y), X, y


def outputs(est, X):
    """Everything an estimator says about X."""
    return {m: np.asarray(getattr(est, m)(X)) for m in METHODS if hasattr(est, m)}


# ---------------------------------------------------------------------------- state snapshots

def snapshot(obj, _depth=0):
    """A deep, comparable copy of everything an object holds (params, fitted attributes,
    private state, nested objects), with arrays copied."""
    if _depth > 50:
        raise RecursionError("state nested deeper than 50")
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.copy())
    if isinstance(obj, np.generic):
        return ("scalar", obj.dtype.str, obj.copy())
    if isinstance(obj, np.dtype):           # a value: a restored copy is the same dtype
        return ("dtype", obj.str)
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, type)):
        return obj
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [snapshot(x, _depth + 1) for x in obj])
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, sorted(map(repr, obj)))
    if isinstance(obj, dict):
        return ("dict", [(repr(k), snapshot(v, _depth + 1)) for k, v in obj.items()])
    if isinstance(obj, np.random.Generator):
        return ("generator", repr(obj.bit_generator.state))
    if isinstance(obj, np.random.RandomState):
        return ("randomstate", repr(obj.get_state()))
    if hasattr(obj, "tocsr") and hasattr(obj, "nnz"):
        m = obj.tocsr()
        return ("sparse", m.shape, m.data.copy(), m.indices.copy(), m.indptr.copy())
    if hasattr(obj, "__dict__"):
        return (type(obj).__qualname__,
                [(k, snapshot(v, _depth + 1)) for k, v in sorted(vars(obj).items())])
    return ("opaque", type(obj).__qualname__, id(obj))


def same(a, b, path="model"):
    """Assert two snapshots are identical (NaN equals NaN; dtypes and shapes must agree)."""
    if isinstance(a, tuple) and a and a[0] == "ndarray":
        assert isinstance(b, tuple) and b[0] == "ndarray", path
        assert a[1] == b[1] and a[2] == b[2], f"{path}: dtype/shape {a[1:3]} -> {b[1:3]}"
        if a[3].dtype.kind in "fc":
            np.testing.assert_array_equal(a[3], b[3], err_msg=path)
        else:
            assert np.array_equal(a[3], b[3]), f"{path} changed"
        return
    if isinstance(a, tuple) and a and a[0] == "scalar":
        assert isinstance(b, tuple) and a[1] == b[1], path
        assert a[2] == b[2] or (a[2] != a[2] and b[2] != b[2]), f"{path}: {a[2]} -> {b[2]}"
        return
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {str(a)[:200]} -> {str(b)[:200]}"
        for i, (x, y) in enumerate(zip(a, b)):
            label = x[0] if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) else i
            same(x, y, f"{path}.{label}")
        return
    if isinstance(a, float) and a != a:
        assert isinstance(b, float) and b != b, f"{path}: nan -> {b}"
        return
    assert type(a) is type(b) and a == b, f"{path}: {a!r} -> {b!r}"


def state(est):
    return snapshot(est)


def is_fitted(est):
    return any(k.endswith("_") and not k.startswith("_") for k in vars(est))


# ---------------------------------------------------------------------------- isolation

def run_python(args, timeout, env=None):
    """Run `python *args` in a child interpreter that imports the same fastml as this process
    (the installed package in CI, the in-place build in a checkout). The child starts in the
    tests folder, never in the checkout's root: `python -c` puts its working directory first on
    sys.path, where an unbuilt source tree would shadow the installed package."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([FASTML_HOME, TESTS, os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=TESTS)


def run_isolated(code, timeout=120, limit_as=None):
    """Run `code` in a fresh interpreter (see run_python); returns (returncode, stdout,
    stderr). A negative return code is a signal (a crash)."""
    prelude = "import sys\n"
    if limit_as:
        prelude += ("import resource; resource.setrlimit(resource.RLIMIT_AS, (%d, %d))\n"
                    % (limit_as, limit_as))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    try:
        proc = run_python(["-c", prelude + textwrap.dedent(code)], timeout, env)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"
    return proc.returncode, proc.stdout, proc.stderr
