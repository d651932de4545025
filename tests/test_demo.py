"""`fastml demo` (also `python -m fastml demo`) trains every family and reports real numbers."""
import re
import subprocess
import sys


def test_demo_runs_and_reports_sane_metrics(tmp_path):
    # Run outside the source tree, so the installed (compiled) package is the one imported.
    out = subprocess.run([sys.executable, "-m", "fastml", "demo"], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    accuracies = [float(v) for v in re.findall(r"test acc (\d\.\d+)", out.stdout)]
    assert accuracies, out.stdout
    assert all(0.7 <= a <= 1.0 for a in accuracies), out.stdout
    assert "LogisticRegression(solver='gd')" in out.stdout


def test_demo_needs_no_optional_dependency(tmp_path):
    # README's first command installs only numpy and scipy: the demo must run without pandas,
    # pyarrow, tqdm or matplotlib (None in sys.modules makes their import fail).
    code = ("import sys\n"
            "for name in ('pandas', 'pyarrow', 'tqdm', 'matplotlib'):\n"
            "    sys.modules[name] = None\n"
            "from fastml.cli import main\n"
            "sys.exit(main(['demo']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Naive Bayes" in out.stdout and "Decision trees" in out.stdout


def test_demos_do_not_import_the_cli():
    # The report writer lives in fastml._report; the demos and the CLI both use it.
    import ast
    import pathlib
    import fastml
    root = pathlib.Path(fastml.__file__).parent
    for path in root.glob("*/_demo.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "cli" not in (node.module or "").split("."), f"{path} imports the CLI"
    from fastml._report import Report, timed_fit  # noqa: F401
