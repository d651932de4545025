"""A bounded, seeded fuzzer of fastml's model files (format: fastml/io.py's docstring).

A small fitted model of every estimator is saved, then its bytes are mutated: bit flips,
truncation at every section boundary and at random points, header edits (format version,
header length, array dtypes / shapes / offsets / sizes, class and function names such as
"fastml.__main__:main" or "os:system", nesting 10000 deep, huge declared sizes), replacements
of values in the model's JSON tree by known-bad values, random nested values (tag-like keys,
huge ints, odd text) anywhere in the header, and crafted arrays, all with a VALID checksum
recomputed (whoever crafts a file recomputes it). For every mutation:
- `fastml.load` raises ModelFileError, or returns a model whose every answering method works
  (a crafted but valid model, e.g. other coefficients) - no other exception, no SystemExit;
- no module outside the allowlist is imported (sys.modules compared before / after; a new
  fastml module must be in fastml.io.ALLOWED_MODULES);
- the process does not crash: each category runs in a child process, which prints each
  mutation before trying it, so a crash names the mutation that caused it.
Budget: one fixed, seeded budget, MUTATIONS_PER_MODEL per estimator and category (a category
that enumerates, such as truncation at every boundary, adds its fixed list), so runs are
reproducible and CI time is bounded.
"""
import copy
import hashlib
import io
import json
import os
import struct
import sys

import numpy as np
import pytest

MUTATIONS_PER_MODEL = 12
CATEGORIES = ["bitflip", "truncate", "header", "names", "tree", "values", "arrays"]
_PREFIX = struct.Struct("<8sHQ")
MAGIC = b"\x93FASTML\n"

# What loading a model file may import: the modules defining estimators and the public
# functions a model may name, and what they import (numpy / scipy / threadpoolctl).
ALLOWED_MODULES = ("fastml.linear_model", "fastml.tree", "fastml.naive_bayes", "fastml._core",
                   "fastml.info", "fastml.losses", "fastml.metrics", "fastml._tabular",
                   "fastml._validation", "fastml._base", "fastml._threads", "fastml._progress",
                   "fastml.exceptions", "fastml.io", "fastml.model_selection",
                   "fastml.datasets", "numpy", "scipy", "threadpoolctl")

# ---------------------------------------------------------------------------- file surgery

def split(data):
    _, version, hlen = _PREFIX.unpack_from(data)
    header = json.loads(data[_PREFIX.size:_PREFIX.size + hlen])
    return version, header, data[_PREFIX.size + hlen:-32]


def build(header, payload, version=1, header_len=None, raw_header=None):
    """A file with a valid checksum around the given header (a dict, or raw bytes)."""
    hb = raw_header if raw_header is not None else json.dumps(header).encode()
    body = _PREFIX.pack(MAGIC, version, len(hb) if header_len is None else header_len) \
        + hb + payload
    return body + hashlib.sha256(body).digest()


def nodes(value, path=()):
    """Every (path, value) in the JSON tree."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nodes(v, path + (i,))


def replaced(tree, path, new):
    tree = copy.deepcopy(tree)
    if not path:
        return new
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return tree


EVIL_NAMES = ["fastml.__main__:main", "os:system", "fastml.cli:sys", "fastml.cli:main",
              "builtins:eval", "subprocess:Popen", "fastml.io:_resolve", "fastml:load",
              "fastml.plot:plot_tree", "fastml.__main__:x", "fastml..x:y", "fastml.tests:A",
              "fastml.linear_model._sgd:SGDEngine", "fastml:BaseEstimator", "fastml::",
              "fastml.io:os", "numpy:load", "fastml.datasets:load_auto_mpg"]
EVIL_VALUES = [None, True, -1, 2**63, 2**200, -2**70, 1e308, "x", "", [], {}, [1, [2]],
               {"$": "nope"}, {"$": "float", "value": "1"}, {"$": "array", "index": 10**9},
               {"$": "array", "index": -1}, {"$": "dict", "items": [[[1], 2]]},
               {"$": "list"}, {"$": "set", "items": [{"$": "list", "items": []}]},
               {"$": "type", "name": "object"}, {"$": "dtype", "value": "|O"},
               {"$": "object_array", "shape": [2**40], "items": []},
               {"$": "sparse", "format": "csr", "shape": [2**62, 2**62],
                "data": None, "indices": None, "indptr": None},
               {"$": "generator", "bit_generator": "PCG64", "state": {"x": 1}},
               {"$": "estimator", "class": "fastml:Ridge", "params": {"alpha": {"$": "nope"}},
                "state": {}},
               {"$": "object", "class": "fastml.linear_model._sgd:SGDEngine", "state": 5},
               {"$": "function", "name": "fastml.info:entropy"}]


# Random nested values for the "values" category: leaves of every JSON kind (ints beyond
# int64, floats from 1e-308 to 1e308, short text of any characters, names of tags, dtypes,
# functions), lists and dicts whose keys are those the format gives meaning to.
NASTY_TEXT = ["fastml.__main__:main", "fastml.cli:main", "os:system", "fastml.io:save", "<O8",
              "<U999999999999", "list", "array", "estimator", "object", "function", "sparse",
              "generator", "", "$"]
NASTY_KEYS = ["$", "items", "index", "class", "name", "state", "params", "shape", "value"]


def nasty_value(rng, depth=0):
    kind = int(rng.integers(9 if depth < 3 else 6))
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(2))
    if kind == 2:
        return int(rng.integers(-2**62, 2**62)) * int(rng.choice([1, 2**8, 1]))
    if kind == 3:
        return float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-308, 308))
    if kind == 4:
        return "".join(chr(int(c)) for c in rng.integers(1, 0x2FFF, size=int(rng.integers(9))))
    if kind == 5:
        return NASTY_TEXT[int(rng.integers(len(NASTY_TEXT)))]
    if kind == 6:
        return int(rng.choice([2**63, -2**63 - 1, 2**64, 2**70, -2**70]))
    if kind == 7:
        return [nasty_value(rng, depth + 1) for _ in range(int(rng.integers(4)))]
    return {NASTY_KEYS[int(k)]: nasty_value(rng, depth + 1)
            for k in rng.integers(len(NASTY_KEYS), size=int(rng.integers(4)))}


def mutations(data, category, rng, n):
    """(description, bytes) pairs: `n` mutations of the saved file `data` in `category`."""
    version, header, payload = split(data)
    hlen = len(data) - len(payload) - 32 - _PREFIX.size
    if category == "bitflip":
        for _ in range(n):
            pos = int(rng.integers(len(data)))
            bit = int(rng.integers(8))
            out = bytearray(data)
            out[pos] ^= 1 << bit
            yield f"flip bit {bit} of byte {pos}", bytes(out)
    elif category == "truncate":
        bounds = {0, 1, 8, 10, _PREFIX.size, _PREFIX.size + hlen // 2, _PREFIX.size + hlen,
                  len(data) - 32, len(data) - 1}
        for spec in header["arrays"]:
            bounds.add(_PREFIX.size + hlen + spec["offset"])
            bounds.add(_PREFIX.size + hlen + spec["offset"] + spec["nbytes"] // 2)
        bounds |= {int(x) for x in rng.integers(len(data), size=n)}
        for cut in sorted(b for b in bounds if 0 <= b < len(data)):
            yield f"truncate at {cut}", data[:cut]
            body = data[:cut]
            if cut > _PREFIX.size:  # truncated, then the checksum recomputed
                yield f"truncate at {cut} + valid checksum", body + hashlib.sha256(body).digest()
    elif category == "header":
        yield from _header_edits(header, payload, hlen, rng, n)
    elif category == "names":
        paths = [p for p, v in nodes(header["root"]) if isinstance(v, dict)
                 and v.get("$") in ("estimator", "object")]
        for name in EVIL_NAMES:
            path = paths[int(rng.integers(len(paths)))] if paths else ()
            yield (f"class {name} at {path}",
                   build(dict(header, root=replaced(header["root"], path + ("class",), name)),
                         payload))
            params = header["root"].get("params", {})
            items = params.get("items") if isinstance(params, dict) else None
            if isinstance(items, list) and items:
                k = int(rng.integers(len(items)))
                root = copy.deepcopy(header["root"])
                root["params"]["items"][k][1] = {"$": "function", "name": name}
                yield f"function {name} as param {k}", build(dict(header, root=root), payload)
        yield "function in fitted state", build(dict(header, root=replaced(
            header["root"], ("state",), {"$": "dict", "items": [
                ["coef_", {"$": "function", "name": "fastml.info:entropy"}]]})), payload)
        yield "state shadows a method", build(dict(header, root=replaced(
            header["root"], ("state",), {"$": "dict", "items": [["predict", 1]]})), payload)
    elif category == "tree":
        all_nodes = list(nodes(header["root"]))
        for _ in range(n * 3):
            path, _ = all_nodes[int(rng.integers(len(all_nodes)))]
            new = EVIL_VALUES[int(rng.integers(len(EVIL_VALUES)))]
            yield (f"root{list(path)} = {json.dumps(new)[:60]}",
                   build(dict(header, root=replaced(header["root"], path, new)), payload))
    elif category == "values":  # anywhere in the header: the root, "arrays", "format", ...
        all_nodes = list(nodes(header))
        for _ in range(n * 3):
            path, _ = all_nodes[int(rng.integers(len(all_nodes)))]
            new = nasty_value(rng)
            yield (f"header{list(path)} = {json.dumps(new)[:60]}",
                   build(replaced(header, path, new), payload))
    elif category == "arrays":
        yield from _crafted_arrays(header, payload, rng, n)


def _header_edits(header, payload, hlen, rng, n):
    yield "format version 0", build(header, payload, version=0)
    yield "format version 2", build(header, payload, version=2)
    yield "format version 65535", build(header, payload, version=65535)
    yield "header length + 1", build(header, payload, header_len=hlen + 1)
    yield "header length - 1", build(header, payload, header_len=hlen - 1)
    yield "header length 2**64 - 1", build(header, payload, header_len=2**64 - 1)
    yield "header length 0", build(header, payload, header_len=0)
    yield "header not UTF-8", build(header, payload, raw_header=b"\xff\xfe{}")
    yield "header a list", build(header, payload, raw_header=b"[1, 2]")
    yield "header NaN", build(header, payload, raw_header=b'{"format": NaN}')
    yield "header huge int", build(header, payload,
                                   raw_header=b'{"format": "fastml-model", "arrays": [], '
                                              b'"root": ' + b"9" * 5000 + b"}")
    yield "no root", build({k: v for k, v in header.items() if k != "root"}, payload)
    yield "arrays not a list", build(dict(header, arrays={"a": 1}), payload)
    yield "arrays entry not a dict", build(dict(header, arrays=[1] + header["arrays"]), payload)
    for depth in (100, 1000, 10000):
        tagged = json.dumps(dict(header, root="@@")).encode().replace(
            b'"@@"', b'{"$": "list", "items": [' * depth + b"0" + b"]}" * depth)
        yield f"root nested {depth} deep (tags)", build(header, payload, raw_header=tagged)
        raw = (b'{"format": "fastml-model", "arrays": [], "root": ' + b"[" * depth
               + b"]" * depth + b"}")
        yield f"root nested {depth} deep (raw JSON)", build(header, payload, raw_header=raw)
    yield "format other", build(dict(header, format="pickle"), payload)
    table = header["arrays"]
    edits = [("dtype", "|O"), ("dtype", "<V8"), ("dtype", "<M8[s]"), ("dtype", "<U0"),
             ("dtype", "<f16"), ("dtype", 8), ("dtype", "<f8,<f8"),
             ("shape", [2**62]), ("shape", [2**40, 2**40]), ("shape", [-1]), ("shape", [1.5]),
             ("shape", [2**64]), ("shape", "3"), ("shape", [0] * 64),
             ("offset", -64), ("offset", 2**63), ("offset", 2**70), ("offset", 1.5),
             ("nbytes", 2**63), ("nbytes", -8), ("nbytes", 0), ("order", "K"), ("order", None)]
    for _ in range(n):
        if not table:
            break
        i = int(rng.integers(len(table)))
        key, value = edits[int(rng.integers(len(edits)))]
        spec = dict(table[i], **{key: value})
        if key == "shape" and isinstance(value, list) and all(isinstance(s, int) for s in value):
            # a huge declared size with a consistent nbytes (so only the size check stops it)
            count = 1
            for s in value:
                count *= s
            spec["nbytes"] = count * np.dtype(table[i]["dtype"]).itemsize
        new_table = [*table[:i], spec, *table[i + 1:]]
        yield f"array {i} {key} = {value!r}", build(dict(header, arrays=new_table), payload)


def _crafted_arrays(header, payload, rng, n):
    """Arrays rewritten with other values of the same dtype and shape (valid checksum): huge,
    negative, NaN, out-of-range indices - what a kernel would index with."""
    table = header["arrays"]
    if not table:
        return
    for _ in range(n * 3):
        i = int(rng.integers(len(table)))
        spec = table[i]
        dtype = np.dtype(spec["dtype"])
        count = spec["nbytes"] // max(dtype.itemsize, 1)
        if count == 0 or dtype.kind not in "iufb":
            continue
        arr = np.frombuffer(payload, dtype=dtype, count=count, offset=spec["offset"]).copy()
        choice = int(rng.integers(6))
        k = int(rng.integers(count))
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            value = [info.max, info.min, -1, count, 2**31 - 1, 0][choice]
            value = max(min(value, info.max), info.min)
        elif dtype.kind == "f":
            value = [np.nan, np.inf, -np.inf, 1e308, -0.0, 1e-320][choice]
        else:
            value = not arr[k]
        what = "every element" if choice % 2 else f"element {k}"
        if choice % 2:
            arr[:] = value
        else:
            arr[k] = value
        new = bytearray(payload)
        new[spec["offset"]:spec["offset"] + spec["nbytes"]] = arr.tobytes()
        yield f"array {i} ({dtype}) {what} = {value}", build(header, bytes(new))


# ---------------------------------------------------------------------------- the child run

def fuzz(category, budget, seed=0):
    """Runs in the child: every estimator's file through `category`'s mutations; prints one
    line per finding, and 'TRY <mutation>' before each attempt (so a crash names it)."""
    import warnings
    warnings.simplefilter("ignore")
    sys.argv = ["fuzzer", "--this-must-not-run"]
    import fastml
    from fastml.io import ALLOWED_MODULES as LOADABLE
    from _robust import ESTIMATORS, METHODS, fitted
    findings, count = [], 0
    for name, cls in ESTIMATORS:
        est, X, _ = fitted(cls)
        buf = io.BytesIO()
        fastml.save(est, buf)
        data = buf.getvalue()
        fastml.load(io.BytesIO(data))  # imports what a normal load imports
        rng = np.random.default_rng([seed, CATEGORIES.index(category), len(name)])
        for what, blob in mutations(data, category, rng, budget):
            count += 1
            label = f"{name}: {what}"
            print("TRY", label, flush=True)
            before = set(sys.modules)
            try:
                model = fastml.load(io.BytesIO(blob))
            except fastml.ModelFileError as exc:
                if not str(exc):
                    findings.append(f"{label}: ModelFileError without a message")
                model = None
            except BaseException as exc:  # noqa: B902 - SystemExit / RecursionError too
                findings.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
                model = None
            new = set(sys.modules) - before
            bad = sorted(m for m in new if not m.startswith(ALLOWED_MODULES)
                         or m.startswith("fastml") and m not in LOADABLE)
            if "fastml.__main__" in sys.modules or "fastml.cli" in sys.modules or bad:
                findings.append(f"{label}: imported {bad or ['fastml.__main__/cli']}")
                for m in bad + ["fastml.__main__", "fastml.cli"]:
                    sys.modules.pop(m, None)  # so the next mutation is judged on its own
            if model is not None:
                for method in METHODS:
                    if hasattr(model, method):
                        try:
                            getattr(model, method)(X)
                        except (ValueError, TypeError):
                            pass  # a crafted model may refuse clearly
                        except BaseException as exc:  # noqa: B902
                            findings.append(f"{label}: loaded, then {method} raised "
                                            f"{type(exc).__name__}: {str(exc)[:100]}")
    print(f"MUTATIONS {count}")
    for line in findings:
        print("FINDING", line)
    print("DONE", flush=True)


@pytest.mark.parametrize("category", CATEGORIES)
def test_model_file_fuzz(category):
    from _robust import run_isolated
    tests = os.path.dirname(os.path.abspath(__file__))
    code = f"""
    sys.path.insert(0, {tests!r})
    import test_model_file_fuzz as f
    f.fuzz({category!r}, {MUTATIONS_PER_MODEL})
    """
    rc, out, err = run_isolated(code, timeout=600)
    tried = [line for line in out.splitlines() if line.startswith("TRY ")]
    assert rc == 0 and "DONE" in out, \
        f"the child died (return code {rc}) on {tried[-1:] or '?'}:\n{err[-3000:]}"
    findings = [line[8:] for line in out.splitlines() if line.startswith("FINDING ")]
    count = next(line for line in out.splitlines() if line.startswith("MUTATIONS"))
    print(f"{category}: {count}")
    assert not findings, f"{len(findings)} of {count}:\n" + "\n".join(findings[:40])


def test_an_array_referenced_twice_is_refused():
    """fastml writes an array per reference, so a file whose two attributes share one array
    (classes_ pointing at intercept_'s) was crafted: it loaded and failed at predict with an
    IndexError (an outside audit); now load refuses it."""
    import fastml
    model = fastml.LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    buf = io.BytesIO()
    fastml.save(model, buf)
    version, header, payload = split(buf.getvalue())
    refs = [(path, v) for path, v in nodes(header)
            if isinstance(v, dict) and v.get("$") == "array"]
    (first_path, first), (second_path, _) = refs[0], refs[1]
    crafted = build(replaced(header, second_path, dict(first)), payload, version)
    with pytest.raises(fastml.ModelFileError, match="referenced twice"):
        fastml.load(io.BytesIO(crafted))
    assert fastml.load(io.BytesIO(buf.getvalue())).predict([[3.0]]).tolist() == [1]
