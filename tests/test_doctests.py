"""Every docstring example (the numpydoc "Examples" sections, and any other >>> lines) in
every fastml module runs as a doctest, so an example that the docs show cannot go stale.

Each docstring with examples is one test, named after its object. The examples run in a
temporary directory (some save files), with matplotlib drawing off-screen.
"""
import doctest
import importlib
import os
import pkgutil

import pytest

import fastml

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules():
    names = ["fastml"]
    for info in pkgutil.walk_packages(fastml.__path__, prefix="fastml."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    modules = []
    for name in sorted(names):
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:  # an optional dependency (pandas, matplotlib) is missing
            missing = getattr(exc, "name", None)
            if missing and not missing.startswith("fastml"):
                continue
            raise
    return modules


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = {}
    for module in _modules():
        for test in finder.find(module, module.__name__):
            # a re-exported object is found from every module that imports it: keep one
            if test.examples and test.name.startswith(module.__name__):
                found.setdefault((test.filename, test.lineno, test.docstring), test)
    return sorted(found.values(), key=lambda t: t.name)


DOCTESTS = _doctests()


def test_the_collector_finds_examples():
    assert any(t.name == "fastml._config.show_config" for t in DOCTESTS), \
        [t.name for t in DOCTESTS]


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    test.globs = dict(test.globs)
    report = []
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
