"""The report `fastml demo` writes: sections with one line per model (metrics and fit time).

Each family's `<family>/_demo.py` has a `run(report)` that fills a `Report`; the command line
creates the report and calls the demos. Both import from here, so no demo depends on the CLI.
"""
import sys
import time

__all__ = ["Report", "timed_fit"]


class Report:
    """Writes the demo's sections to a text stream: a title, the data, then one line per model
    with its metrics and fit time.

    Parameters
    ----------
    out : text stream, optional
        Where to write (default: sys.stdout at the time of writing).

    Examples
    --------
    >>> import io
    >>> buffer = io.StringIO()
    >>> report = Report(buffer)
    >>> report.model("Tree", {"accuracy": 0.5, "leaves": 3}, 0.002)
    >>> buffer.getvalue().split()
    ['Tree', 'accuracy', '0.5000', 'leaves', '3', 'fit', '2.0', 'ms']
    """

    def __init__(self, out=None):
        self.out = out

    def _line(self, text):
        (self.out or sys.stdout).write(text + "\n")

    def section(self, title, data_description):
        """Start a section: a blank line, "== title ==", then "data: ..."."""
        self._line(f"\n== {title} ==")
        self._line(f"data: {data_description}")

    def model(self, name, metrics, fit_seconds):
        """One model's line: its name, each metric (floats to 4 decimals), the fit time."""
        cells = "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                          for k, v in metrics.items())
        self._line(f"  {name:<44} {cells}  fit {fit_seconds * 1e3:8.1f} ms")

    def text(self, line):
        """A free line of text inside the current section."""
        self._line(f"  {line}")


def timed_fit(model, X, y):
    """Fit `model` on (X, y) and return the wall-clock seconds it took.

    Examples
    --------
    >>> from fastml import GaussianNB
    >>> timed_fit(GaussianNB(), [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]) >= 0
    True
    """
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start
