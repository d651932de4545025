"""Saving and loading fitted models in a safe, documented file format (no pickle).

    fastml.save(model, "model.fastml")
    model = fastml.load("model.fastml")

Loading a file from a stranger cannot run code: the file holds data only (JSON and raw
numeric arrays), and the only classes it can name are fastml's own. A truncated, corrupted or
newer-version file is refused with a `ModelFileError` (a ValueError) that says which. Pickle
keeps working too (every estimator pickles), but only unpickle files you trust.

File layout (all integers little-endian)
----------------------------------------
    offset      size  content
    0           8     magic b"\\x93FASTML\\n"
    8           2     format version, uint16 (this module writes and reads version 1)
    10          8     header length H, uint64
    18          H     header: UTF-8 JSON (below)
    18+H        P     payload: the arrays' raw bytes, back to back, each starting at a
                      multiple of 64 bytes from the payload's start
    18+H+P      32    SHA-256 of every byte before it

The header is a JSON object:
    {"format": "fastml-model", "fastml_version": "0.1.0",
     "arrays": [{"dtype": "<f8", "shape": [3, 4], "order": "C", "offset": 0, "nbytes": 96}, ...],
     "root": <value>}
Array dtypes are plain fixed-size numbers and strings only ("<f8", "<i8", "|b1", "<U5" ...,
never objects); an array's bytes are its elements in C (or Fortran, "order": "F") order.

A <value> is JSON null / true / false / a number / a string, or a tagged object:
    {"$": "float", "value": "nan" | "inf" | "-inf"}       non-finite Python float
    {"$": "list" | "tuple" | "set" | "frozenset", "items": [<value>, ...]}
    {"$": "dict", "items": [[<key value>, <value>], ...]}
    {"$": "array", "index": i}                             arrays[i]; 0-d with "scalar": true
                                                           is a numpy scalar (np.float64(..))
    {"$": "object_array", "shape": [...], "items": [...]}  numpy array of Python objects
                                                           (e.g. string labels), items flat
    {"$": "dtype", "value": "<f8"}  {"$": "type", "name": "float32"}  numpy dtypes and types
    {"$": "sparse", "format": "csr" | "csc", "shape": [...],
     "data": <value>, "indices": <value>, "indptr": <value>}        a scipy.sparse matrix
    {"$": "generator", "bit_generator": "PCG64", "state": <value>}   numpy random Generator
    {"$": "estimator", "class": "module:Name", "params": {...}, "state": {...}}
        a fastml estimator: built as Name(**params) (the constructor only stores its
        arguments), then its fitted attributes and private state are set from "state"
    {"$": "object", "class": "module:Name", "state": <value>}
        another fastml object (e.g. the SGD engine inside an estimator): created without
        calling __init__, then its __dict__ is set (or its own __setstate__ is called)
    {"$": "function", "name": "module:name"}               a public function defined in fastml,
                                                           only inside constructor parameters

The allowlist: a class or function is accepted only when its module is one of
ALLOWED_MODULES (the modules that define fastml's estimators, the objects inside them, and
the public functions a constructor parameter may name) AND the object found there reports
that same module and name (so a name such a module imported from elsewhere, e.g.
`fastml.linear_model._sgd:warnings`, is refused). No other module is ever imported by `load`
(not `fastml.__main__`, not `fastml.cli`). Anything else, an unknown tag, an object dtype, or
an array outside the payload is a `ModelFileError`.

Reading order: the fixed prefix (magic, version, header length) is checked first, then the
header is read and parsed, and every array it declares is checked against the file's actual
size, all before the payload is read; so a file that declares a huge payload is refused
without allocating it. Then the SHA-256 of the whole file is verified. Whatever is malformed
(deep nesting, huge numbers, wrong types, missing keys) raises `ModelFileError` and nothing
else; an unreadable path raises OSError as `open` does.
Models holding Python code (e.g. a lambda as a kernel) cannot be saved this way: save() raises
a TypeError naming the attribute.

Crafted files: the SHA-256 only detects accidental damage (whoever crafts a file recomputes
it), and the compiled kernels index the fitted arrays without bounds checks, so `load` also
checks what it restores before handing it out:
- a "function" entry is accepted only inside an estimator's "params" (a value the user passed
  to the constructor, e.g. a kernel); in fitted or private state, or in an "object"'s state,
  it is refused (a model's learned state is data, never something predict would call);
- a state key may not shadow a method or property of its class;
- every restored estimator or object whose class defines `_check_fitted_state(self)` has it
  called once its state is set (inner objects first, so an estimator can rely on its parts'
  own checks and verify that they agree with each other). The method lives next to the code
  that owns the arrays (e.g. Tree in fastml/tree/_tree_fast.pyx) and raises ValueError / TypeError
  when the arrays could not have come from fit (wrong shapes or dtypes, a node index out of
  range, a cycle in a tree); `load` reports that as a ModelFileError naming the class.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import os
import re
import struct
import threading
from typing import Any, TYPE_CHECKING

import numpy as np

from .exceptions import ModelFileError

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import PathLike

__all__ = ["save", "load", "ModelFileError", "FORMAT_VERSION", "ALLOWED_MODULES"]

MAGIC = b"\x93FASTML\n"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sHQ")  # magic, version, header length
_DIGEST_SIZE = 32
_ALIGN = 64
_SAFE_DTYPE = re.compile(r"^[<>|=]?[biufcUS]\d+$")
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")
_TAGS = ("float", "list", "tuple", "set", "frozenset", "dict", "array", "object_array", "dtype",
         "type", "sparse", "generator", "function", "estimator", "object")
_BUILTIN_TYPES = {t.__name__: t for t in (bool, int, float, complex, str)}
_NUMPY_TYPES = {np.dtype(c).type.__name__: np.dtype(c).type for c in "?bhilqBHILQefdgFDG"}
_MAX_HEADER = 2**30  # bytes; a model's header (structure and labels) is far smaller
_MAX_DEPTH = 100     # nesting of tagged values; a forest of trees is about 10 deep

# The only modules `load` may import: those defining fastml's estimators, the objects they
# hold (SGD engine, tree storage, encoders) and the public functions (losses) a constructor
# parameter may name. A module added to the package is not loadable until it is listed here;
# tests/test_io.py checks that every estimator's saved file stays within this list.
ALLOWED_MODULES = frozenset({
    "fastml._tabular",
    "fastml._tabular_io",
    "fastml.losses",
    "fastml.feature_extraction._hashing",
    "fastml.linear_model._kernel_perceptron",
    "fastml.linear_model._logistic",
    "fastml.linear_model._perceptron",
    "fastml.linear_model._polynomial",
    "fastml.linear_model._regression",
    "fastml.linear_model._sgd",
    "fastml.linear_model._svm",
    "fastml.linear_model._voted",
    "fastml.naive_bayes._classes",
    "fastml.tree._classes",
    "fastml.tree._forest",
    "fastml.tree._prune",
    "fastml.tree._tree_fast",
})


# ---------------------------------------------------------------------------- public API

def save(model: Any, path: PathLike) -> None:
    """Write `model` (any fastml estimator, fitted or not) to `path` (a path or a binary file
    object) in the format above.

    Parameters
    ----------
    model : fastml estimator
        Fitted or not.
    path : str, os.PathLike or binary file object
        Where to write. A path is written through a temporary file in the same folder that
        replaces `path` at the end, so a failed save leaves neither a half-written model nor
        the temporary file.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For anything that cannot be stored as data (e.g. a lambda as a kernel).
    OSError
        When the file cannot be written.

    Examples
    --------
    >>> import io, fastml
    >>> buffer = io.BytesIO()
    >>> fastml.save(fastml.GaussianNB().fit([[0.0], [1.0], [5.0], [6.0]], [0, 0, 1, 1]), buffer)
    >>> _ = buffer.seek(0)
    >>> fastml.load(buffer).predict([[0.5], [5.5]]).tolist()
    [0, 1]
    """
    arrays = []
    root = _Encoder(arrays).encode(model, "model")
    table, chunks, offset = [], [], 0
    for arr, order in arrays:
        raw = arr.tobytes(order=order)
        pad = (-offset) % _ALIGN
        chunks.append(b"\0" * pad)
        offset += pad
        table.append({"dtype": arr.dtype.str, "shape": list(arr.shape), "order": order,
                      "offset": offset, "nbytes": len(raw)})
        chunks.append(raw)
        offset += len(raw)
    from . import __version__
    header = json.dumps({"format": "fastml-model", "fastml_version": __version__,
                         "arrays": table, "root": root}, allow_nan=False).encode("utf-8")
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header)) + header + b"".join(chunks)
    data = body + hashlib.sha256(body).digest()
    if hasattr(path, "write"):
        path.write(data)
        return
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}-{threading.get_ident()}"
    try:
        try:
            f = open(tmp, "wb")
        except OSError as exc:  # report the path the user gave, not the temporary name
            raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
        with f:
            f.write(data)
        os.replace(tmp, path)  # never leave a half-written model under the real name
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load(path: PathLike) -> Any:
    """Read a model written by `save` (a path or a binary file object). Runs no code from the
    file and imports only the modules of the allowlist (ALLOWED_MODULES).

    Parameters
    ----------
    path : str, os.PathLike or binary file object
        The model file.

    Returns
    -------
    estimator
        The model as it was saved.

    Raises
    ------
    ModelFileError
        For anything that is not a valid, intact fastml model file (wrong magic, newer
        version, truncated, checksum mismatch, malformed or crafted header or state).
    OSError
        When the file cannot be opened.

    Examples
    --------
    >>> import io, fastml
    >>> fastml.load(io.BytesIO(b"not a model"))
    Traceback (most recent call last):
    ...
    fastml.exceptions.ModelFileError: not a fastml model file (wrong magic bytes)
    """
    if hasattr(path, "read"):
        return _load_stream(path)
    with open(path, "rb") as f:
        return _load_stream(f)


# ---------------------------------------------------------------------------- reading

def _load_stream(f):
    size = _remaining_bytes(f)
    prefix = _read(f, _PREFIX.size)
    header_len = _check_prefix(prefix, size)
    header_bytes = _read(f, header_len)
    if len(header_bytes) < header_len:
        raise ModelFileError("the model file is truncated")
    if size is not None:  # every declared array must fit the file, before reading it
        payload_len = size - _PREFIX.size - header_len - _DIGEST_SIZE
        try:
            header = _parse_header(header_bytes)
            specs = [_array_spec(spec, i, payload_len)
                     for i, spec in enumerate(_array_table(header))]
        except ModelFileError:
            _raise_if_damaged(prefix + header_bytes, _read(f, payload_len + _DIGEST_SIZE))
            raise
        rest = _read(f, payload_len + _DIGEST_SIZE)
    else:
        header = _parse_header(header_bytes)
        table = _array_table(header)
        rest = f.read()
        payload_len = len(rest) - _DIGEST_SIZE
        specs = [_array_spec(spec, i, payload_len) for i, spec in enumerate(table)]
    if len(rest) < _DIGEST_SIZE or (size is not None and len(rest) < payload_len + _DIGEST_SIZE):
        raise ModelFileError("the model file is truncated")
    payload, digest = memoryview(rest)[:-_DIGEST_SIZE], rest[-_DIGEST_SIZE:]
    check = hashlib.sha256(prefix)
    check.update(header_bytes)
    check.update(payload)
    if check.digest() != digest:
        raise ModelFileError("checksum mismatch: the model file is corrupted or truncated")
    if "root" not in header:
        raise ModelFileError("the file's header has no model ('root' missing)")
    try:
        arrays = [_read_array(payload, spec) for spec in specs]
        return _Decoder(arrays).decode(header["root"])
    except ModelFileError:
        raise
    except Exception as exc:  # anything else a crafted file can provoke (e.g. MemoryError)
        raise ModelFileError(f"malformed model file ({type(exc).__name__}: "
                             f"{str(exc)[:200]})") from None


def _raise_if_damaged(head, rest):
    """A header that does not parse is reported as what it most likely is: accidental damage
    (checksum mismatch) when the checksum fails, else the caller's error (a crafted file)."""
    if len(rest) < _DIGEST_SIZE or hashlib.sha256(head + rest[:-_DIGEST_SIZE]).digest() \
            != rest[-_DIGEST_SIZE:]:
        raise ModelFileError("checksum mismatch: the model file is corrupted or truncated")


def _remaining_bytes(f):
    """Bytes left in the file from the current position, or None when it cannot be known
    (a pipe)."""
    try:
        return os.fstat(f.fileno()).st_size - f.tell()
    except (AttributeError, OSError, ValueError):
        pass
    try:
        here = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(here)
        return end - here
    except (AttributeError, OSError, ValueError):
        return None


def _read(f, n):
    data = f.read(n)
    if not isinstance(data, (bytes, bytearray)):
        raise ModelFileError("fastml.load needs a path or a binary file object")
    return bytes(data)


def _check_prefix(prefix, size):
    if prefix[:len(MAGIC)] != MAGIC[:len(prefix)] or len(prefix) == 0:
        if prefix[:1] == b"\x80" or prefix[:1] == b"(":
            raise ModelFileError("this is a pickle file, not a fastml model file; fastml.load "
                                 "never unpickles (use pickle.load only on files you trust)")
        raise ModelFileError("not a fastml model file (wrong magic bytes)")
    if len(prefix) < _PREFIX.size:
        raise ModelFileError("the model file is truncated")
    _, version, header_len = _PREFIX.unpack(prefix)
    if version != FORMAT_VERSION:
        raise ModelFileError(
            f"model file format version {version} is not supported (this fastml reads version "
            f"{FORMAT_VERSION}){'; upgrade fastml' if version > FORMAT_VERSION else ''}")
    if header_len > _MAX_HEADER:
        raise ModelFileError(f"the header length {header_len} is not plausible (the file is "
                             f"damaged or crafted)")
    if size is not None and _PREFIX.size + header_len + _DIGEST_SIZE > size:
        raise ModelFileError("the header length points past the end of the file (the file is "
                             "truncated or damaged)")
    return header_len


def _parse_header(raw):
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"the header is not valid JSON: {exc}") from None
    except RecursionError:
        raise ModelFileError("the header is nested too deeply to be a model") from None
    if not isinstance(header, dict) or header.get("format") != "fastml-model":
        raise ModelFileError("the header does not describe a fastml model")
    return header


def _array_table(header):
    table = header.get("arrays", [])
    if not isinstance(table, list):
        raise ModelFileError("the header's array table is not a list")
    return table


def _array_spec(spec, i, payload_len):
    """(dtype, shape, order, offset, nbytes) of array i, checked to lie inside the payload."""
    try:
        dtype_str, shape, order = spec["dtype"], spec["shape"], spec["order"]
        offset, nbytes = spec["offset"], spec["nbytes"]
    except (KeyError, TypeError):
        raise ModelFileError(f"array {i}: incomplete description {str(spec)[:80]}") from None
    if not (isinstance(dtype_str, str) and _SAFE_DTYPE.match(dtype_str)):
        raise ModelFileError(f"array {i}: dtype {dtype_str!r} is not allowed (only numbers and "
                             f"fixed-size strings; never Python objects)")
    try:
        dtype = np.dtype(dtype_str)
    except (TypeError, ValueError, OverflowError):
        raise ModelFileError(f"array {i}: dtype {dtype_str!r} is not allowed") from None
    if (not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape)
            or order not in ("C", "F") or not _is_int(offset) or not _is_int(nbytes)):
        raise ModelFileError(f"array {i}: bad shape, order, offset or size in {str(spec)[:80]}")
    if nbytes != dtype.itemsize * math.prod(shape) or offset < 0 \
            or offset + nbytes > payload_len:
        raise ModelFileError(f"array {i}: its bytes lie outside the file or do not match its "
                             f"shape (the file is truncated, damaged or crafted)")
    return dtype, shape, order, offset, nbytes


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _read_array(payload, spec):
    dtype, shape, order, offset, nbytes = spec
    flat = np.frombuffer(payload[offset:offset + nbytes], dtype=dtype)
    return flat.reshape(shape, order=order).copy(order=order)  # writable, owns its memory


def _resolve(qualified, what):
    """The fastml class or function named 'module:name', or ModelFileError (the allowlist)."""
    if not isinstance(qualified, str) or qualified.count(":") != 1:
        raise ModelFileError(f"bad {what} reference {qualified!r}")
    module_name, name = qualified.split(":")
    if module_name not in ALLOWED_MODULES or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ModelFileError(f"{what} {qualified!r} is not a fastml {what} a model file may "
                             f"name (its module is not in fastml.io.ALLOWED_MODULES); refusing "
                             f"to load it")
    try:
        module = importlib.import_module(module_name)
        obj = getattr(module, name)
    except (ImportError, AttributeError):
        raise ModelFileError(f"{what} {qualified!r} does not exist in this fastml version; the "
                             f"model was saved by a different version") from None
    if getattr(obj, "__module__", None) != module_name or getattr(obj, "__name__", None) != name:
        raise ModelFileError(f"{qualified!r} is not defined by fastml; refusing to load it")
    if what == "class" and not isinstance(obj, type):
        raise ModelFileError(f"{qualified!r} is not a class")
    if what == "function" and (isinstance(obj, type) or name.startswith("_")):
        raise ModelFileError(f"{qualified!r} is not a public fastml function")
    return obj


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays
        self.taken = set()   # the writer stores an array per reference: indices are unique
        self.functions_allowed = False  # True only while decoding an estimator's params
        self.depth = 0

    def decode(self, v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if self.depth >= _MAX_DEPTH:
            raise ModelFileError(f"the model is nested more than {_MAX_DEPTH} levels deep "
                                 f"(the file is damaged or crafted)")
        self.depth += 1
        try:
            return self._decode_tagged(v)
        finally:
            self.depth -= 1

    def _decode_tagged(self, v):
        if not isinstance(v, dict) or "$" not in v:
            raise ModelFileError(f"unexpected value in the header: {str(v)[:80]}")
        method = getattr(self, "_" + v["$"], None) if v["$"] in _TAGS else None
        if method is None:
            raise ModelFileError(f"unknown value type {v['$']!r} in the header")
        try:
            return method(v)
        except ModelFileError:
            raise
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise ModelFileError(f"malformed {v['$']!r} value in the header: {exc}") from None

    def _items(self, v):
        return [self.decode(x) for x in v["items"]]

    def _float(self, v):
        if v["value"] not in ("nan", "inf", "-inf"):
            raise ValueError(f"bad special float {v['value']!r}")
        return float(v["value"])

    def _list(self, v):
        return self._items(v)

    def _tuple(self, v):
        return tuple(self._items(v))

    def _set(self, v):
        return set(self._items(v))

    def _frozenset(self, v):
        return frozenset(self._items(v))

    def _dict(self, v):
        return {self.decode(k): self.decode(x) for k, x in v["items"]}

    def _array(self, v):
        index = v["index"]
        if not isinstance(index, int) or not 0 <= index < len(self.arrays):
            raise ValueError(f"array index {index!r} out of range")
        if index in self.taken:   # two attributes sharing one buffer (classes_ = intercept_):
            raise ValueError(f"array {index} is referenced twice, which fastml never writes")
        self.taken.add(index)
        arr = self.arrays[index]
        return arr[()] if v.get("scalar") else arr

    def _object_array(self, v):
        items = self._items(v)
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(v["shape"])

    def _dtype(self, v):
        if not _SAFE_DTYPE.match(v["value"]):
            raise ValueError(f"dtype {v['value']!r} is not allowed")
        return np.dtype(v["value"])

    def _type(self, v):
        name = v["name"]
        if name in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[name]
        if name not in _NUMPY_TYPES:
            raise ValueError(f"type {name!r} is not allowed")
        return _NUMPY_TYPES[name]

    def _sparse(self, v):
        import scipy.sparse as sp
        make = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}[v["format"]]
        parts = [self.decode(v[k]) for k in ("data", "indices", "indptr")]
        if not all(isinstance(p, np.ndarray) for p in parts):
            raise ValueError("sparse parts must be arrays")
        return make(tuple(parts), shape=tuple(v["shape"]))

    def _generator(self, v):
        name = v["bit_generator"]
        if name not in _BIT_GENERATORS:
            raise ValueError(f"bit generator {name!r} is not allowed")
        bit_generator = getattr(np.random, name)()
        bit_generator.state = self.decode(v["state"])
        return np.random.Generator(bit_generator)

    def _function(self, v):
        if not self.functions_allowed:
            raise ModelFileError(
                f"the file names the function {v.get('name')!r} outside a constructor "
                f"parameter; fitted state holds data only, so refusing to load it")
        return _resolve(v["name"], "function")

    def _decode_with_functions(self, v, allowed):
        before, self.functions_allowed = self.functions_allowed, allowed
        try:
            return self.decode(v)
        finally:
            self.functions_allowed = before

    def _estimator(self, v):
        from ._base import BaseEstimator
        cls = _resolve(v["class"], "class")
        if not issubclass(cls, BaseEstimator):
            raise ModelFileError(f"{v['class']!r} is not a fastml estimator")
        params = self._decode_with_functions(v["params"], True)
        state = self._decode_with_functions(v["state"], False)
        if not isinstance(params, dict) or not isinstance(state, dict) \
                or not all(isinstance(k, str) for k in (*params, *state)):
            raise ValueError("params and state must be dicts with string keys")
        try:
            est = cls(**params)
        except TypeError as exc:
            raise ModelFileError(f"cannot rebuild {cls.__name__}: {exc} (saved by another "
                                 f"fastml version?)") from None
        _set_state(est, {**params, **state} if _custom_setstate(cls) else state)
        return _checked(est)

    def _object(self, v):
        cls = _resolve(v["class"], "class")
        obj = cls.__new__(cls)
        _set_state(obj, self._decode_with_functions(v["state"], False))
        return _checked(obj)


def _custom_setstate(cls):
    return getattr(cls, "__setstate__", None) is not getattr(object, "__setstate__", None) \
        and hasattr(cls, "__setstate__")


def _set_state(obj, state):
    cls = type(obj)
    if isinstance(state, dict):
        shadowing = [k for k in state if isinstance(k, str) and _is_behaviour(cls, k)]
        if shadowing:
            raise ModelFileError(f"the saved state of {cls.__name__} replaces its method or "
                                 f"property {shadowing[0]!r}; refusing to load it")
    if _custom_setstate(cls):
        obj.__setstate__(state)
    elif isinstance(state, dict) and all(isinstance(k, str) for k in state):
        obj.__dict__.update(state)
    else:
        raise ModelFileError(f"bad saved state for {cls.__name__}")


def _is_behaviour(cls, name):
    """A method, property or other descriptor of the class (an instance attribute of that
    name would change what the object does, not what it knows)."""
    attr = next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), None)
    return callable(attr) or hasattr(attr, "__get__")


def _checked(obj):
    """Run the class's `_check_fitted_state` (looked up on the class, so the file cannot
    replace it) and report a failure as a ModelFileError."""
    check = getattr(type(obj), "_check_fitted_state", None)
    if check is not None:
        try:
            check(obj)
        except ModelFileError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                OverflowError) as exc:
            raise ModelFileError(f"invalid {type(obj).__name__} in the model file: {exc} "
                                 f"(the file is damaged or was crafted; refusing to load "
                                 f"it)") from None
    return obj


# ---------------------------------------------------------------------------- writing

class _Encoder:
    """Turns a model into the JSON <value> tree; arrays are appended to `arrays`."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.active = set()  # ids on the current path, to refuse reference cycles

    def encode(self, v, where):
        if v is None or isinstance(v, (bool, str)) and not isinstance(v, np.generic):
            return v
        if isinstance(v, np.generic):
            return self._array(np.asarray(v), scalar=True, where=where)
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return float(v) if np.isfinite(v) else {"$": "float", "value": repr(float(v))}
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "O":
                return {"$": "object_array", "shape": list(v.shape),
                        "items": [self.encode(x, f"{where}[...]") for x in v.ravel()]}
            return self._array(v, scalar=False, where=where)
        if isinstance(v, np.dtype):
            return {"$": "dtype", "value": self._check_dtype(v, where).str}
        if isinstance(v, type):
            return self._type(v, where)
        if id(v) in self.active:
            raise TypeError(f"cannot save {where}: it contains itself (a reference cycle)")
        self.active.add(id(v))
        try:
            return self._container(v, where)
        finally:
            self.active.discard(id(v))

    def _container(self, v, where):
        if isinstance(v, (list, tuple, set, frozenset)):
            items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
            return {"$": type(v).__name__ if type(v) in (list, tuple, set, frozenset) else "list",
                    "items": [self.encode(x, f"{where}[{i}]") for i, x in enumerate(items)]}
        if isinstance(v, dict):
            return {"$": "dict", "items": [[self.encode(k, f"{where} key"),
                                            self.encode(x, f"{where}[{k!r}]")]
                                           for k, x in v.items()]}
        if isinstance(v, np.random.Generator):
            bit_generator = type(v.bit_generator).__name__
            if bit_generator not in _BIT_GENERATORS:
                raise TypeError(f"cannot save {where}: unknown bit generator {bit_generator}")
            return {"$": "generator", "bit_generator": bit_generator,
                    "state": self.encode(v.bit_generator.state, where)}
        if _is_sparse(v):
            fmt = v.format if v.format in ("csr", "csc") else "csr"
            m = v.asformat(fmt)
            return {"$": "sparse", "format": fmt, "shape": list(m.shape),
                    **{k: self.encode(getattr(m, k), where) for k in ("data", "indices", "indptr")}}
        if callable(v) and not hasattr(v, "__dict__") or _is_function(v):
            return {"$": "function", "name": self._reference(v, where, "function")}
        return self._object(v, where)

    def _object(self, v, where):
        from ._base import BaseEstimator
        cls = type(v)
        name = self._reference(cls, where, "class")
        state = v.__getstate__() if _custom_getstate(cls) else getattr(v, "__dict__", None)
        if not isinstance(state, dict):
            raise TypeError(f"cannot save {where}: {cls.__name__} has no plain state")
        if isinstance(v, BaseEstimator):
            params = v.get_params(deep=False)
            rest = {k: x for k, x in state.items() if k not in params}
            return {"$": "estimator", "class": name,
                    "params": self.encode(params, f"{where}.params"),
                    "state": self.encode(rest, where)}
        return {"$": "object", "class": name, "state": self.encode(state, where)}

    def _reference(self, obj, where, what):
        module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if not (isinstance(module, str) and (module == "fastml" or module.startswith("fastml."))
                and isinstance(name, str) and "." not in name and "<" not in name
                and not (what == "function" and name.startswith("_"))):
            raise TypeError(
                f"cannot save {where}: {obj!r} is not a {what} defined by fastml (a model file "
                f"stores data, never code; use a built-in option instead of a custom {what}, "
                f"or pickle the model)")
        return f"{module}:{name}"

    def _array(self, arr, scalar, where):
        self._check_dtype(arr.dtype, where)
        order = "F" if arr.ndim > 1 and arr.flags.f_contiguous and not arr.flags.c_contiguous \
            else "C"
        self.arrays.append((arr, order))
        out = {"$": "array", "index": len(self.arrays) - 1}
        if scalar:
            out["scalar"] = True
        return out

    def _check_dtype(self, dtype, where):
        if not _SAFE_DTYPE.match(dtype.str):
            raise TypeError(f"cannot save {where}: arrays of dtype {dtype} are not supported")
        return dtype

    def _type(self, t, where):
        if t in _BUILTIN_TYPES.values():
            return {"$": "type", "name": t.__name__}
        if _NUMPY_TYPES.get(t.__name__) is t:
            return {"$": "type", "name": t.__name__}
        raise TypeError(f"cannot save {where}: the type {t!r} is not a numpy or number type")


def _custom_getstate(cls):
    return getattr(cls, "__getstate__", None) is not getattr(object, "__getstate__", None)


def _is_function(v):
    import types
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType)) \
        or type(v).__name__ in ("cython_function_or_method", "fused_cython_function")


def _is_sparse(v):
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(v)
