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
    assert "Generative vs discriminative (002)" in out.stdout
    assert "Ng & Jordan (2002)" in out.stdout


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


def test_learning_curve_section_shows_lecture_002s_point():
    # 002 / Ng & Jordan (2002): GNB gets near its asymptotic error with fewer cars, logistic
    # regression ends lower. The section prints both facts; check them against its table.
    import io
    from fastml._report import Report
    from fastml.naive_bayes._demo import NEAR, generative_vs_discriminative
    buffer = io.StringIO()
    generative_vs_discriminative(Report(buffer))
    text = buffer.getvalue()
    rows = [line.split() for line in text.splitlines() if re.match(r"\s+\d+\s+0\.", line)]
    sizes = [int(r[0]) for r in rows]
    gnb = [float(r[1]) for r in rows]       # "mean ± std" per model: columns 1 and 4
    lr = [float(r[4]) for r in rows]
    assert sizes == [4, 8, 16, 32, 64, 128, 294]
    assert lr[-1] < gnb[-1] - 0.05          # the lower asymptote is LR's
    assert gnb[1] < lr[1]                   # with 8 cars GNB is ahead
    reached = re.search(r"GaussianNB from (\d+) cars on, LogisticRegression from (\d+) cars",
                        text)
    gnb_at, lr_at = int(reached.group(1)), int(reached.group(2))
    assert gnb_at < lr_at
    assert all(abs(e - gnb[-1]) <= NEAR for s, e in zip(sizes, gnb) if s >= gnb_at)
    assert abs(lr[sizes.index(lr_at) - 1] - lr[-1]) > NEAR
    assert "Ng & Jordan (2002)" in text and "NIPS 14" in text
