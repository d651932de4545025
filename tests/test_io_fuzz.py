"""A bounded fuzzer for model files (issue 12): saved files of every estimator, mutated by bit
flips, truncation and header edits that keep a valid checksum, make `load` either return a
model or raise ModelFileError; never another exception, and never import a module outside
fastml.io.ALLOWED_MODULES. Budgets are fixed (hypothesis max_examples) so CI stays fast."""
import hashlib
import io
import json
import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastml
from fastml.io import ALLOWED_MODULES, ModelFileError, load, save
from test_common import ESTIMATORS, IDS, data_for, make

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

_SAVED = {}


def saved(cls):
    if cls not in _SAVED:
        est = make(cls)
        buffer = io.BytesIO()
        save(est.fit(*data_for(est, n=30)), buffer)
        _SAVED[cls] = buffer.getvalue()
    return _SAVED[cls]


def load_only_model_file_error(data):
    before = set(sys.modules)
    try:
        load(io.BytesIO(data))
    except ModelFileError:
        pass
    imported = {m for m in set(sys.modules) - before if m.startswith("fastml")}
    assert imported <= ALLOWED_MODULES, imported


def with_header(data, header):
    header_len = struct.unpack_from("<8sHQ", data)[2]
    text = json.dumps(header).encode()
    body = data[:10] + struct.pack("<Q", len(text)) + text + data[18 + header_len:-32]
    return body + hashlib.sha256(body).digest()


def nodes(value, path=()):
    """Every (path, node) of a JSON value."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nodes(v, path + (i,))


def replaced(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


NASTY = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
              st.sampled_from(["fastml.__main__:main", "fastml.cli:main", "os:system",
                               "fastml.io:save", "<O8", "<U999999999999", "list", "array",
                               "estimator", "object", "function", "sparse", "generator"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["$", "items", "index", "class",
                                                             "name", "state", "params",
                                                             "shape", "value"]), inner,
                                            max_size=3)),
    max_leaves=6)


@pytest.mark.parametrize("cls", [c for _, c in ESTIMATORS], ids=IDS)
@SETTINGS
@given(data=st.data())
def test_mutated_model_files_raise_only_model_file_error(cls, data):
    good = saved(cls)
    kind = data.draw(st.sampled_from(["flip", "truncate", "edit"]))
    if kind == "flip":
        pos = data.draw(st.integers(0, len(good) - 1))
        bit = data.draw(st.integers(0, 7))
        bad = bytearray(good)
        bad[pos] ^= 1 << bit
        load_only_model_file_error(bytes(bad))
    elif kind == "truncate":
        load_only_model_file_error(good[:data.draw(st.integers(0, len(good) - 1))])
    else:
        header_len = struct.unpack_from("<8sHQ", good)[2]
        header = json.loads(good[18:18 + header_len])
        paths = [p for p, _ in nodes(header)]
        path = paths[data.draw(st.integers(0, len(paths) - 1))]
        load_only_model_file_error(with_header(good, replaced(header, path, data.draw(NASTY))))
