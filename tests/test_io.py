"""fastml.io: every estimator round-trips through the safe model file with bit-identical
outputs; corrupted, truncated, wrong-version, pickle and crafted files are refused; loading
runs no code from the file."""
import hashlib
import io
import json
import os
import pickle
import re
import struct

import numpy as np
import pytest

import fastml
from fastml._base import NotFittedError
from fastml.io import FORMAT_VERSION, MAGIC, ModelFileError, load, save
from test_common import ESTIMATORS, IDS, assert_same_outputs, data_for, make, outputs


def to_bytes(model):
    buf = io.BytesIO()
    save(model, buf)
    return buf.getvalue()


def from_bytes(data):
    return load(io.BytesIO(data))


def fitted_attributes(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def assert_same_value(a, b, where="value"):
    assert type(a) is type(b), where
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == object:
            assert all(x == y and type(x) is type(y) for x, y in zip(a.ravel(), b.ravel())), where
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_value(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    elif not hasattr(a, "__dict__"):
        assert a == b, where


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("name_cls", ESTIMATORS, ids=IDS)
def test_every_estimator_round_trips_with_identical_outputs(name_cls, tmp_path):
    est = make(name_cls[1])
    X, y = data_for(est)
    est.fit(X, y)
    path = tmp_path / "model.fastml"
    save(est, path)
    again = load(path)
    assert type(again) is type(est)
    assert again.get_params() == est.get_params()
    for key, value in fitted_attributes(est).items():
        assert_same_value(value, getattr(again, key), key)
    assert_same_outputs(outputs(est, X), outputs(again, X))
    assert_same_outputs(outputs(est, X[::-1].copy()), outputs(again, X[::-1].copy()))


@pytest.mark.parametrize("name_cls", ESTIMATORS, ids=IDS)
def test_unfitted_estimator_round_trips_unfitted(name_cls):
    est = make(name_cls[1])
    again = from_bytes(to_bytes(est))
    assert repr(again) == repr(est)
    X, y = data_for(est)
    method = "transform" if est._estimator_type == "transformer" else "predict"
    with pytest.raises(NotFittedError):
        getattr(again, method)(X)


@pytest.mark.parametrize("params", [
    dict(solver="sgd", average=True), dict(solver="minibatch", batch_size=16),
    dict(solver="gd", multi_class="reference"), dict(solver="lbfgs", alpha=0.0),
])
def test_logistic_variants_round_trip_and_keep_learning_identically(params):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 5)).astype(np.float32)
    y = np.array(["cat", "dog", "emu"])[np.argmax(X[:, :3], axis=1)]
    est = fastml.LogisticRegression(random_state=3, max_iter=20, tol=None, **params).fit(X, y)
    again = from_bytes(to_bytes(est))
    assert_same_outputs(outputs(est, X), outputs(again, X))
    assert again.coef_.dtype == np.float32
    if params["solver"] in ("sgd", "minibatch"):  # the SGD state and the RNG travel too
        est.partial_fit(X, y)
        again.partial_fit(X, y)
        np.testing.assert_array_equal(est.coef_, again.coef_)


def test_random_state_generator_and_special_values_round_trip():
    est = fastml.LogisticRegression(random_state=np.random.default_rng(7), tol=float("nan"))
    again = from_bytes(to_bytes(est))
    a, b = est.random_state, again.random_state
    assert a.integers(0, 2**62) == b.integers(0, 2**62)
    assert np.isnan(again.tol)


def test_header_is_as_documented():
    est = fastml.LogisticRegression().fit(*data_for(fastml.LogisticRegression()))
    data = to_bytes(est)
    magic, version, header_len = struct.unpack_from("<8sHQ", data)
    assert magic == MAGIC == b"\x93FASTML\n" and version == FORMAT_VERSION == 1
    header = json.loads(data[18:18 + header_len])
    assert header["format"] == "fastml-model"
    assert header["root"]["class"] == "fastml.linear_model._logistic:LogisticRegression"
    assert header["root"]["params"]["$"] == "dict"
    coef_ref = dict((k, v) for k, v in header["root"]["state"]["items"])["coef_"]
    spec = header["arrays"][coef_ref["index"]]
    start = 18 + header_len + spec["offset"]
    raw = np.frombuffer(data[start:start + spec["nbytes"]], dtype=spec["dtype"])
    np.testing.assert_array_equal(raw.reshape(spec["shape"]), est.coef_)
    assert hashlib.sha256(data[:-32]).digest() == data[-32:]


def test_save_refuses_code_and_names_the_attribute():
    est = fastml.LogisticRegression().fit(*data_for(fastml.LogisticRegression()))
    est.link_ = lambda z: z
    with pytest.raises(TypeError, match=r"link_.*not a function defined by fastml"):
        to_bytes(est)
    est.link_ = pickle  # a module
    with pytest.raises(TypeError, match="link_"):
        to_bytes(est)


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    est = fastml.LogisticRegression()
    save(est, tmp_path / "m.fastml")
    save(est, str(tmp_path / "m.fastml"))  # overwrite
    assert os.listdir(tmp_path) == ["m.fastml"]


# ---------------------------------------------------------------- damaged files

@pytest.fixture(scope="module")
def good_bytes():
    est = fastml.LogisticRegression(random_state=0)
    return to_bytes(est.fit(*data_for(est)))


def test_every_flipped_byte_is_rejected(good_bytes):
    positions = sorted(set(np.linspace(0, len(good_bytes) - 1, 60).astype(int)) | {8, 9, 12})
    for pos in positions:
        bad = bytearray(good_bytes)
        bad[pos] ^= 0x20
        with pytest.raises(ModelFileError):
            from_bytes(bytes(bad))


def test_truncated_files_are_rejected(good_bytes):
    for size in (0, 5, 17, 40, len(good_bytes) // 2, len(good_bytes) - 33, len(good_bytes) - 1):
        with pytest.raises(ModelFileError, match="truncated|not a fastml"):
            from_bytes(good_bytes[:size])


def test_flipped_payload_byte_reports_checksum(good_bytes):
    bad = bytearray(good_bytes)
    bad[len(bad) - 40] ^= 1
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        from_bytes(bytes(bad))


def test_newer_format_version_is_refused_with_a_clear_message(good_bytes):
    bad = bytearray(good_bytes)
    struct.pack_into("<H", bad, 8, FORMAT_VERSION + 1)
    with pytest.raises(ModelFileError, match="version 2 is not supported.*upgrade fastml"):
        from_bytes(bytes(bad))


class _Boom:
    """A pickle payload that would create a marker file when unpickled."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_pickle_file_is_rejected_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Boom(str(marker)))
    with pytest.raises(ModelFileError, match="pickle"):
        from_bytes(evil)
    assert not marker.exists()
    model_pickle = pickle.dumps(fastml.LogisticRegression())
    with pytest.raises(ModelFileError, match="never unpickles"):
        from_bytes(model_pickle)


def rewrite_header(data, edit):
    """A well-formed file (valid checksum) whose header was changed by `edit(header)`."""
    _, version, header_len = struct.unpack_from("<8sHQ", data)
    header = json.loads(data[18:18 + header_len])
    edit(header)
    new = json.dumps(header).encode()
    body = struct.pack("<8sHQ", MAGIC, version, len(new)) + new + data[18 + header_len:-32]
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize("evil_class", [
    "os:system", "subprocess:Popen", "builtins:eval", "numpy:ndarray", "fastml.cli:sys",
    "fastml.io:np", "fastml._base:copy", "fastml.linear_model._sgd:warnings", "fastml:../os",
])
def test_classes_outside_fastml_are_refused(good_bytes, evil_class):
    def edit(header):
        header["root"]["class"] = evil_class
    with pytest.raises(ModelFileError, match="fastml|refusing|bad"):
        from_bytes(rewrite_header(good_bytes, edit))

    def edit_nested(header):
        header["root"] = {"$": "object", "class": evil_class, "state": {"$": "dict", "items": []}}
    with pytest.raises(ModelFileError):
        from_bytes(rewrite_header(good_bytes, edit_nested))


def test_a_fastml_class_that_is_not_an_estimator_cannot_be_the_estimator(good_bytes):
    def edit(header):
        header["root"]["class"] = "fastml.tree._tree_fast:Tree"  # allowed, but not an estimator
    with pytest.raises(ModelFileError, match="not a fastml estimator"):
        from_bytes(rewrite_header(good_bytes, edit))


@pytest.mark.parametrize("dtype", ["|O8", "|O", "|V8", "<M8[ns]", "[('a', 'O')]"])
def test_object_and_structured_dtypes_are_refused(good_bytes, dtype):
    def edit(header):
        header["arrays"][0]["dtype"] = dtype
    with pytest.raises(ModelFileError, match="not allowed"):
        from_bytes(rewrite_header(good_bytes, edit))


@pytest.mark.parametrize("edit_spec", [
    {"offset": 10**9}, {"nbytes": 10**9}, {"shape": [10**6]}, {"shape": [-1]},
    {"order": "K"}, {"offset": -8},
])
def test_arrays_outside_the_payload_are_refused(good_bytes, edit_spec):
    def edit(header):
        header["arrays"][0].update(edit_spec)
    with pytest.raises(ModelFileError, match="array 0"):
        from_bytes(rewrite_header(good_bytes, edit))


@pytest.mark.parametrize("value", [
    {"$": "pickle", "data": "gASVAAAAAAAAAACMAm9zlIwGc3lzdGVtlJOULg=="}, {"$": "items"},
    {"$": "function", "name": "os:system"}, {"$": "type", "name": "object"},
    {"$": "generator", "bit_generator": "os", "state": None}, [1, 2], {"x": 1},
    {"$": "float", "value": "1e308*10"}, {"$": "array", "index": 999},
])
def test_unknown_or_unsafe_values_are_refused(good_bytes, value):
    def edit(header):
        header["root"]["params"]["items"][0][1] = value
    with pytest.raises(ModelFileError):
        from_bytes(rewrite_header(good_bytes, edit))


def test_not_a_model_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ModelFileError, match="not a fastml model file"):
        load(path)


def test_numpy_and_builtin_types_as_parameters_round_trip():
    est = fastml.LogisticRegression()
    for value in (np.float32, np.int64, float, np.dtype("<f4"), (1, [2.5, "a"], {3: None})):
        est.alpha = value  # any parameter slot will do for the format
        assert from_bytes(to_bytes(est)).alpha == value


CATEGORICAL = [(n, c) for n, c in ESTIMATORS if "categorical_features" in c._get_param_names()]


@pytest.mark.parametrize("name_cls", CATEGORICAL, ids=[n for n, _ in CATEGORICAL])
def test_estimators_on_text_columns_round_trip(name_cls):
    """Vocabularies (object arrays of strings), missing cells and string labels travel too."""
    X, y = fastml.datasets.load_tax_table(return_X_y=True)
    X = X.copy()
    X[3, 1] = None  # a missing category
    est = make(name_cls[1])
    if est._estimator_type == "regressor":
        y = np.arange(len(y), dtype=np.float64) ** 1.5
    est.fit(X, y)
    again = from_bytes(to_bytes(est))
    X_new = np.array([["No", "Divorced", 120.0], ["Yes", "Widowed", 80.0],
                      [None, "Single", 95.0]], dtype=object)  # unseen value, missing value
    assert_same_outputs(outputs(est, X), outputs(again, X))
    assert_same_outputs(outputs(est, X_new), outputs(again, X_new))


def test_the_cli_model_wrapper_round_trips():
    from fastml._tabular_io import TabularModel
    columns = {"size": np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
               "kind": np.array(["a", "b", "a", "b", "c", None], dtype=object)}
    y = np.array(["no", "no", "yes", "yes", "yes", "no"], dtype=object)
    model = TabularModel(fastml.LogisticRegression(), target="label")
    model.fit({k: v[:5] for k, v in columns.items()}, y[:5])
    again = from_bytes(to_bytes(model))
    assert again.categories_ == {"kind": ["a", "b", "c"]}
    np.testing.assert_array_equal(model.predict_proba(columns), again.predict_proba(columns))


def test_sparse_matrices_and_fortran_arrays_in_the_state_round_trip():
    import scipy.sparse as sp
    est = fastml.LogisticRegression()
    est.support_ = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    est.columns_ = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    again = from_bytes(to_bytes(est))
    assert again.support_.format == "csr"
    np.testing.assert_array_equal(again.support_.toarray(), est.support_.toarray())
    assert again.columns_.flags.f_contiguous
    np.testing.assert_array_equal(again.columns_, est.columns_)


def test_reference_cycles_are_refused():
    est = fastml.LogisticRegression()
    loop = []
    loop.append(loop)
    est.loop_ = loop
    with pytest.raises(TypeError, match="loop_.*reference cycle"):
        to_bytes(est)


# ---------------------------------------------------------------- crafted fitted state
# The checksum only catches accidental damage: whoever crafts a file recomputes it. These
# files are written by fastml's own writer after tampering with a fitted model in memory, so
# everything but the tampered arrays is valid; the compiled kernels index those arrays without
# bounds checks (a crash or an endless loop at predict), so load must refuse them.

def crafted(est, tamper):
    tamper(est)
    return to_bytes(est)


def refused(data, match="invalid|refusing"):
    with pytest.raises(ModelFileError, match=match):
        from_bytes(data)


def fitted(cls, X=None, y=None, **params):
    est = make(cls)
    est.set_params(**params)
    if X is None:
        X, y = data_for(est)
    return est.fit(X, y)


def set_items(name, index, value):
    def tamper(tree):
        getattr(tree, name)[index] = value
    return tamper


def replace(name, make_value):
    def tamper(owner):
        setattr(owner, name, make_value(getattr(owner, name)))
    return tamper


class ForgedTree:
    """Written by fastml's writer as a Tree (fastml/tree/_tree_fast.pyx) whose saved arrays
    were edited: a Tree's own arrays are read-only, so a crafted file is made this way."""
    __module__, __qualname__ = "fastml.tree._tree_fast", "Tree"

    def __init__(self, tree):
        self.__dict__.update({k: v.copy() for k, v in tree.__getstate__()["arrays"].items()})

    def __getstate__(self):
        return {"arrays": dict(self.__dict__)}


def forged(est):
    """Replace est's tree by an editable ForgedTree of it, and return that."""
    est.tree_ = ForgedTree(est.tree_)
    return est.tree_


TREE_TAMPERING = {
    "children far outside the tree": set_items("children", slice(None), 10**8),
    "feature far outside X": set_items("feature", 0, 10**7),
    "children pointing back to the root": set_items("children", slice(None), 0),
    "negative child": set_items("children", 0, -3),
    "child before its parent": lambda t: t.children.__setitem__(
        slice(t.child_start[1], t.child_start[1] + 2), 1),
    "missing_child outside the tree": set_items("missing_child", 0, 10**6),
    "child_start past the children table": set_items("child_start", 0, 10**6),
    "negative feature": set_items("feature", 0, -1),
    "unknown kind": set_items("kind", 0, 7),
    "a threshold node with three children": set_items("n_child", 0, 3),
    "int32 children": replace("children", lambda a: a.astype(np.int32)),
    "value of the wrong width": replace("value", lambda a: a[:, :1].copy()),
    "threshold array too short": replace("threshold", lambda a: a[:1].copy()),
    "a list instead of an array": replace("feature", list),
}


@pytest.mark.parametrize("tamper", TREE_TAMPERING.values(), ids=TREE_TAMPERING.keys())
def test_crafted_tree_arrays_are_refused(tamper):
    est = fitted(fastml.DecisionTreeClassifier)
    assert est.tree_.node_count > 3 and est.tree_.kind[0] == 1 and est.tree_.kind[1] == 1
    refused(crafted(est, lambda e: tamper(forged(e))), match="Tree")


def test_the_reviewers_tree_reproducers_are_refused():
    """fit, save, load, then children[:] = 10**8 (segfault), feature[0] = 10**7 (segfault),
    children[:] = 0 (endless loop): as files, all three are refused at load."""
    for tamper in (set_items("children", slice(None), 10**8),
                   set_items("feature", 0, 10**7), set_items("children", slice(None), 0)):
        model = from_bytes(to_bytes(fitted(fastml.DecisionTreeClassifier)))
        tamper(forged(model))
        refused(to_bytes(model))


def test_crafted_categorical_trees_are_refused():
    X, y = fastml.datasets.load_tax_table(return_X_y=True)
    est = fastml.DecisionTreeClassifier().fit(X, y)
    categorical = np.flatnonzero(est.tree_.kind == 2)
    assert len(categorical) and from_bytes(to_bytes(est)).predict(X).tolist() == \
        est.predict(X).tolist()
    node = categorical[0]
    refused(crafted(fastml.clone(est).fit(X, y),
                    lambda e: forged(e).n_child.__setitem__(node, 50)), match="children")
    refused(crafted(fastml.clone(est).fit(X, y),
                    lambda e: forged(e).kind.__setitem__(node, 1)), match="split")
    refused(crafted(fastml.clone(est).fit(X, y),
                    lambda e: e.categories_[int(e.tree_.feature[node])].resize(0, refcheck=False)))
    refused(crafted(fastml.clone(est).fit(X, y),
                    lambda e: setattr(e._encoder, "n_features_", 9)), match="TabularEncoder")
    refused(crafted(fastml.clone(est).fit(X, y),
                    lambda e: e._encoder._codes.categories_.pop()), match="CategoryEncoder")


@pytest.mark.parametrize("cls", [fastml.RandomForestClassifier, fastml.RandomForestRegressor])
def test_crafted_forests_are_refused(cls):
    forest = fitted(cls, n_estimators=3)
    refused(crafted(forest, lambda f: set_items("children", slice(None), 0)(
        forged(f.estimators_[2]))), match="invalid Tree")
    # a tree that is valid on its own (6 features) but not on the forest's 4 columns
    X6 = np.random.default_rng(0).normal(size=(90, 6))
    X4, y = data_for(forest)
    wide = forest._tree_class(random_state=0).fit(X6 * 0 + X6[:, [5, 5, 5, 5, 5, 5]], y)
    tree = forged(wide)
    tree.feature[tree.kind != 0] = 5
    forest = fitted(cls, n_estimators=3)
    forest.estimators_[0] = wide
    refused(to_bytes(forest), match=cls.__name__ + ".*feature outside")
    forest.estimators_ = []
    refused(to_bytes(forest), match="estimators_")


NB_TAMPERING = {
    "CategoricalNB table offsets past the table": (
        fastml.CategoricalNB, lambda e: e._parts[0].table_offsets.__setitem__(-1, 10**9)),
    "CategoricalNB table too short": (
        fastml.CategoricalNB, lambda e: replace("table", lambda t: t[:2].copy())(e._parts[0])),
    "CategoricalNB table of the wrong width": (
        fastml.CategoricalNB, lambda e: replace("table", lambda t: np.ascontiguousarray(
            t[:, :1]))(e._parts[0])),
    "CategoricalNB one vocabulary fewer": (
        fastml.CategoricalNB, lambda e: e._parts[0].encoder.categories_.pop()),
    "CategoricalNB counts for more classes": (
        fastml.CategoricalNB, lambda e: setattr(e._parts[0], "n_classes", 9)),
    "GaussianNB narrower tables": (
        fastml.GaussianNB, lambda e: replace("a", lambda a: a[:, :2].copy())(e._parts[0])),
    "GaussianNB moments of the wrong shape": (
        fastml.GaussianNB, lambda e: setattr(e._parts[0], "moments",
                                             tuple(m[:1] for m in e._parts[0].moments))),
    "GaussianNB float32 means": (
        fastml.GaussianNB, lambda e: replace("kernel_mean", lambda a: a.astype(np.float32))(
            e._parts[0])),
    "NaiveBayes parts swapped": (
        fastml.NaiveBayes, lambda e: e._parts.reverse()),
    "NaiveBayes no parts": (fastml.NaiveBayes, lambda e: e._parts.clear()),
    "class_log_prior_ too short": (
        fastml.GaussianNB, replace("class_log_prior_", lambda a: a[:1].copy())),
}


@pytest.mark.parametrize("cls_tamper", NB_TAMPERING.values(), ids=NB_TAMPERING.keys())
def test_crafted_naive_bayes_tables_are_refused(cls_tamper):
    cls, tamper = cls_tamper
    if cls is fastml.NaiveBayes:
        X, y = fastml.datasets.load_tax_table(return_X_y=True)
        est = fastml.NaiveBayes().fit(X, y)
        assert len(est._parts) == 2
    elif cls is fastml.CategoricalNB:
        X, y = fastml.datasets.load_tax_table(return_X_y=True)
        est = fastml.CategoricalNB().fit(X[:, :2], y)
    else:
        est = fitted(cls)
    refused(crafted(est, tamper), match=cls.__name__ + "|CategoryEncoder")


KP_TAMPERING = {
    "buffer head before the rows": lambda e: setattr(e._buffer, "head", -5),
    "buffer tail past the rows": lambda e: setattr(e._buffer, "tail", 10**6),
    "buffer head after tail": lambda e: setattr(e._buffer, "head", e._buffer.tail + 1),
    "buffer norms too short": lambda e: replace("sq", lambda a: a[:1].copy())(e._buffer),
    "buffer starts too short": lambda e: replace("start", lambda a: a[:1].copy())(e._buffer),
    "buffer coefficients too narrow": lambda e: replace(
        "coef", lambda a: np.ascontiguousarray(a[:, :1]))(e._buffer),
    "buffer rows of another width": lambda e: replace(
        "rows", lambda a: np.zeros((len(a), 9)))(e._buffer),
    "unknown kernel kind": lambda e: e._kparams.__setitem__("kind", 9),
    "a callable kind without a callable kernel": lambda e: e._kparams.__setitem__("kind", -1),
    "infinite gamma": lambda e: e._kparams.__setitem__("gamma", float("inf")),
    "dual_coef_ of the wrong shape": replace("dual_coef_", lambda a: a[:, :1].copy()),
    "cached norms too short": replace("_sv_sq", lambda a: a[:1].copy()),
    "support vectors of another width": replace("support_vectors_",
                                                lambda a: np.zeros((len(a), 2))),
}


@pytest.mark.parametrize("tamper", KP_TAMPERING.values(), ids=KP_TAMPERING.keys())
def test_crafted_kernel_perceptron_state_is_refused(tamper):
    est = fitted(fastml.KernelPerceptron)
    assert 0 < est._buffer.tail - est._buffer.head < len(est._buffer.rows)
    refused(crafted(est, tamper), match="KernelPerceptron|mistake buffer|_MistakeBuffer")


def header_of(data):
    _, _, header_len = struct.unpack_from("<8sHQ", data)
    return json.loads(data[18:18 + header_len])


def state_entry(header, key):
    return next(v for k, v in header["root"]["state"]["items"] if k == key)


def test_a_function_in_fitted_state_is_refused():
    """The reviewer's case: a "function" entry placed as the kernel (or anywhere in the
    state) of a fitted model is refused before predict could call it."""
    est = fitted(fastml.KernelPerceptron)

    def as_kernel(header):
        header["root"]["params"]["items"] = [
            [k, {"$": "function", "name": "fastml.losses:hinge_loss"} if k == "kernel" else v]
            for k, v in header["root"]["params"]["items"]]
    # as a parameter the name is allowed, but the model was fit with the rbf kernel
    refused(rewrite_header(to_bytes(est), as_kernel), match="kernel parameter does not match")

    def outside_allowlist(header):
        as_kernel(header)
        for item in header["root"]["params"]["items"]:
            if item[0] == "kernel":
                item[1]["name"] = "fastml.io:save"
    refused(rewrite_header(to_bytes(est), outside_allowlist), match="ALLOWED_MODULES")

    def in_state(header):
        header["root"]["state"]["items"].append(
            ["kernel_", {"$": "function", "name": "fastml.io:save"}])
    refused(rewrite_header(to_bytes(est), in_state), match="outside a constructor parameter")

    def in_nested_object(header):
        buffer = state_entry(header, "_buffer")
        buffer["state"]["items"].append(["rows", {"$": "function", "name": "fastml.io:load"}])
    refused(rewrite_header(to_bytes(est), in_nested_object),
            match="outside a constructor parameter")


def test_private_functions_are_neither_saved_nor_loaded(good_bytes):
    from fastml.linear_model import _kernel_perceptron
    est = fastml.KernelPerceptron(kernel=_kernel_perceptron._sq_norms)
    with pytest.raises(TypeError, match="kernel"):
        to_bytes(est)

    def edit(header):
        header["root"]["params"]["items"][0][1] = {"$": "function",
                                                   "name": "fastml.losses:_sigmoid"}
    refused(rewrite_header(good_bytes, edit), match="not a public fastml function")


def test_state_cannot_replace_methods(good_bytes):
    def edit(header):
        header["root"]["state"]["items"].append(["predict", None])
    refused(rewrite_header(good_bytes, edit), match="replaces its method")

    def edit_check(header):  # nor switch the check off
        header["root"]["state"]["items"].append(["_check_fitted_state", None])
    refused(rewrite_header(good_bytes, edit_check), match="replaces its method")


LINEAR_TAMPERING = {
    "LogisticRegression coef_ too narrow": (
        fastml.LogisticRegression, {}, replace("coef_", lambda a: a[:, :2].copy())),
    "LogisticRegression intercept_ too long": (
        fastml.LogisticRegression, {}, replace("intercept_", lambda a: np.zeros(7))),
    "LogisticRegression integer coef_": (
        fastml.LogisticRegression, {}, replace("coef_", lambda a: a.astype(np.int64))),
    "LogisticRegression SGD weights of another width": (
        fastml.LogisticRegression, {"solver": "sgd", "max_iter": 3, "tol": None},
        lambda e: setattr(e._engine, "W", np.zeros((e._engine.W.shape[0], 9)))),
    "Perceptron averaging without an average": (
        fastml.Perceptron, {"average": True},
        lambda e: setattr(e._engine, "A", np.zeros((0, 0)))),
    "Perceptron adagrad sums missing": (
        fastml.Perceptron, {}, lambda e: e._engine.config.__setitem__("schedule", 4)),
    "Perceptron short SGD state": (
        fastml.Perceptron, {}, lambda e: setattr(e._engine, "state", np.zeros(1))),
    "VotedPerceptron vector output out of range": (
        fastml.VotedPerceptron, {}, lambda e: e.vector_outputs_.__setitem__(0, 99)),
    "VotedPerceptron vectors of another width": (
        fastml.VotedPerceptron, {}, replace("vectors_", lambda a: np.zeros((len(a), 9)))),
    "VotedPerceptron stored vector of no output": (
        fastml.VotedPerceptron, {}, lambda e: e._mistakes.out.__setitem__(0, 99)),
    "VotedPerceptron store fuller than its arrays": (
        fastml.VotedPerceptron, {}, lambda e: setattr(e._mistakes, "n_used", 10**6)),
    "VotedPerceptron live weights of another width": (
        fastml.VotedPerceptron, {}, lambda e: setattr(e._mistakes, "W", np.zeros((1, 9)))),
    "VotedPerceptron negative counts": (
        fastml.VotedPerceptron, {}, replace("vector_counts_", lambda a: -a)),
    "LinearRegression coef_ too long": (
        fastml.LinearRegression, {}, replace("coef_", lambda a: np.zeros(9))),
    "PolynomialFeatures one parent fewer": (
        fastml.PolynomialFeatures, {}, replace("_parent", lambda a: a[:-1].copy())),
}


@pytest.mark.parametrize("case", LINEAR_TAMPERING.values(), ids=LINEAR_TAMPERING.keys())
def test_crafted_linear_models_are_refused(case):
    cls, params, tamper = case
    refused(crafted(fitted(cls, **params), tamper), match=cls.__name__ + "|SGD")


@pytest.mark.parametrize("name_cls", ESTIMATORS, ids=IDS)
def test_fitted_models_pass_their_own_state_check(name_cls):
    """The checks accept everything fit produces (also run by every round trip above), and
    every model whose arrays reach a compiled kernel has one."""
    est = make(name_cls[1])
    X, y = data_for(est)
    check = getattr(type(est), "_check_fitted_state", None)
    if name_cls[0] != "PolynomialRegression":  # its parts are estimators with their own
        assert check is not None
        check(est)  # unfitted: nothing to check
        check(est.fit(X, y))


# ---------------------------------------------------------------- issue 12: model-file hardening

def test_load_never_imports_fastml_main_and_importing_it_runs_nothing(good_bytes):
    from _robust import run_python
    for edit in (lambda h: h["root"].update({"class": "fastml.__main__:main"}),
                 lambda h: h["root"].update({"class": "fastml.__main__:BaseEstimator"}),
                 lambda h: h["root"]["params"]["items"][0].__setitem__(
                     1, {"$": "function", "name": "fastml.__main__:main"})):
        refused(rewrite_header(good_bytes, edit), match="ALLOWED_MODULES")
    code = ("import sys; sys.argv = ['host', 'demo']\n"
            "import fastml.__main__\n"
            "print('still here')\n")
    out = run_python(["-c", code], timeout=60)
    assert out.returncode == 0 and out.stdout == "still here\n", out.stdout + out.stderr


def test_every_saved_estimator_stays_within_the_allowlist():
    from fastml.io import ALLOWED_MODULES
    for name, cls in fastml.all_estimators():
        est = cls()
        data = to_bytes(est.fit(*data_for(est)))
        header_len = struct.unpack_from("<8sHQ", data)[2]
        names = re.findall(r'"(?:class|name)": "([\w.]+):', data[18:18 + header_len].decode())
        assert names and set(names) <= ALLOWED_MODULES, (name, set(names) - ALLOWED_MODULES)


def _nested(depth):
    value = {"$": "list", "items": []}
    for _ in range(depth):
        value = {"$": "list", "items": [value]}
    return value


@pytest.mark.parametrize("edit", [
    pytest.param(lambda h: h["root"]["params"]["items"][0].__setitem__(1, _nested(150)),
                 id="nesting above the limit"),
    pytest.param(lambda h: h["arrays"][0].update({"shape": [2**62, 2**62]}), id="huge shape"),
    pytest.param(lambda h: h["arrays"][0].update({"dtype": "<U99999999999999999999"}),
                 id="huge dtype"),
    pytest.param(lambda h: h["arrays"][0].update({"shape": [True]}), id="bool shape"),
    pytest.param(lambda h: h["root"].update({"params": {"$": "dict", "items": [[1]]}}),
                 id="short pair"),
    pytest.param(lambda h: h["root"].update({"state": {"$": "dict", "items": [[{"$": "list",
                 "items": []}, 1]]}}), id="unhashable key"),
    pytest.param(lambda h: h["root"].update({"params": {"$": "object_array", "shape": [10**30],
                                                        "items": []}}), id="object shape"),
    pytest.param(lambda h: h["root"].update({"state": {"$": "dict", "items": [
        ["_rng", {"$": "generator", "bit_generator": "PCG64", "state": 5}]]}}),
        id="bad generator state"),
])
def test_malformed_headers_raise_only_model_file_error(good_bytes, edit):
    with pytest.raises(ModelFileError):
        from_bytes(rewrite_header(good_bytes, edit))


def test_deep_nesting_raises_model_file_error_not_recursion_error(good_bytes):
    def edit(header):
        header["root"]["params"]["items"][0][1] = "DEEP"
    data = rewrite_header(good_bytes, edit)
    header_len = struct.unpack_from("<8sHQ", data)[2]
    deep = '{"$": "list", "items": [' * 100000 + "1" + "]}" * 100000
    header = data[18:18 + header_len].replace(b'"DEEP"', deep.encode())
    body = struct.pack("<8sHQ", MAGIC, FORMAT_VERSION, len(header)) + header \
        + data[18 + header_len:-32]
    with pytest.raises(ModelFileError, match="nested"):
        from_bytes(body + hashlib.sha256(body).digest())


def test_a_huge_declared_payload_is_refused_before_reading_it(good_bytes):
    class Reader(io.BytesIO):
        largest = 0

        def read(self, n=-1):
            out = super().read(n)
            Reader.largest = max(Reader.largest, len(out))
            return out

    def edit(header):
        header["arrays"][0].update({"shape": [2**40], "nbytes": 8 * 2**40, "dtype": "<f8"})
    data = rewrite_header(good_bytes, edit)
    with pytest.raises(ModelFileError, match="array 0"):
        load(Reader(data))
    assert Reader.largest < len(data)  # nothing near the declared 8 TB was allocated

    prefix = bytearray(good_bytes[:18])
    struct.pack_into("<Q", prefix, 10, 2**62)
    with pytest.raises(ModelFileError, match="header length"):
        load(io.BytesIO(bytes(prefix) + good_bytes[18:]))


def test_a_failed_save_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "model.fastml"
    target.mkdir()  # os.replace onto a directory fails after the data was written
    with pytest.raises(OSError):
        save(fastml.GaussianNB(), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.fastml"]
    assert list(target.iterdir()) == []


def test_a_save_into_a_missing_folder_names_the_path_given(tmp_path):
    target = tmp_path / "no" / "model.fastml"
    with pytest.raises(FileNotFoundError) as info:
        save(fastml.GaussianNB(), target)
    assert info.value.filename == str(target)
