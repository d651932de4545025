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
