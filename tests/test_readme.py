"""The README's Python examples run as written (so the front page never lies)."""
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def python_blocks():
    if not os.path.exists(README):
        return []
    with open(README) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


@pytest.mark.parametrize("code", python_blocks())
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})


def test_the_sites_front_page_example_prints_what_the_page_shows(tmp_path, monkeypatch):
    import contextlib
    import io
    docs = os.path.join(os.path.dirname(README), "docs")
    if not os.path.isdir(docs):
        pytest.skip("no docs/ beside the tests")
    with open(os.path.join(docs, "snippets", "front_page.py")) as f:
        code = f.read()
    with open(os.path.join(docs, "index.rst")) as f:
        page = f.read()
    shown = re.search(r"\.\. code-block:: text\n\n(.*?)\n\n(?=\S)", page, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "front_page.py", "exec"), {})
    printed = [line.rstrip() for line in out.getvalue().splitlines()]
    assert printed == [line[3:].rstrip() for line in shown.splitlines()]
