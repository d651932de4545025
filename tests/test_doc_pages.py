"""The documentation pages' interactive examples (">>>" lines in docs/**/*.rst) run as
doctests and print what the pages show, so a guide's example cannot go stale."""
import doctest
import glob
import os

import pytest

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
GENERATED = ("_build", "api", "auto_examples")


def pages_with_examples():
    found = []
    for path in sorted(glob.glob(os.path.join(DOCS, "**", "*.rst"), recursive=True)):
        relative = os.path.relpath(path, DOCS)
        if relative.split(os.sep)[0] in GENERATED:
            continue
        with open(path, encoding="utf-8") as f:
            if ">>> " in f.read():
                found.append(relative)
    return found


PAGES = pages_with_examples()


def test_the_migration_page_is_among_them():
    if not os.path.isdir(DOCS):
        pytest.skip("no docs/ beside the tests")
    assert "migrating.rst" in PAGES


# pages whose examples need a fixture (tests/conftest.py): the Spark page starts a session,
# which the whole run shares (and which skips where pyspark or Java is missing)
FIXTURES = {os.path.join("user_guide", "spark.rst"): "spark"}


@pytest.mark.parametrize("page", PAGES)
def test_page_examples(page, tmp_path, monkeypatch, request):
    if page in FIXTURES:
        request.getfixturevalue(FIXTURES[page])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    result = doctest.testfile(os.path.join(DOCS, page), module_relative=False, verbose=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                              report=True)
    assert result.failed == 0, f"{page}: {result.failed} of {result.attempted} examples failed"
