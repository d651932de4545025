"""fastml.io: every estimator round-trips through the safe model file with bit-identical
outputs; corrupted, truncated, wrong-version, pickle and crafted files are refused; loading
runs no code from the file."""
import hashlib
import io
import json
import os
import pickle
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
        header["root"]["class"] = "fastml.io:ModelFileError"
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
