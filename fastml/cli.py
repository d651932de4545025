"""The `fastml` command (also `python -m fastml`).

Subcommands:
  demo    every estimator family on the bundled data, one readable report
Each family adds its part of the demo in its own `<family>/_demo.py` (a `run(report)`
function), so the command grows without this file knowing the families' details.
"""
import argparse
import importlib
import sys
import time

FAMILIES = ["linear_model", "tree", "naive_bayes"]


class Report:
    """Prints the demo's sections: a title, the data, then one line per model with its
    metrics and fit time."""

    def __init__(self, out=None):
        self.out = out or sys.stdout

    def section(self, title, data_description):
        print(f"\n== {title} ==", file=self.out)
        print(f"data: {data_description}", file=self.out)

    def model(self, name, metrics, fit_seconds):
        cells = "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                          for k, v in metrics.items())
        print(f"  {name:<44} {cells}  fit {fit_seconds * 1e3:8.1f} ms", file=self.out)

    def text(self, line):
        print(f"  {line}", file=self.out)


def timed_fit(model, X, y):
    """Fit and return the seconds it took."""
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def run_demo(args):
    report = Report()
    print("fastml demo: the lectures' algorithms on the bundled Auto MPG data "
          "(Quinlan 1993, UCI; 392 cars)")
    start = time.perf_counter()
    for family in FAMILIES:
        try:
            demo = importlib.import_module(f"fastml.{family}._demo")
        except ModuleNotFoundError as exc:
            if exc.name == f"fastml.{family}._demo":
                continue
            raise
        demo.run(report)
    print(f"\ndone in {time.perf_counter() - start:.2f} s")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="fastml", description="Classic machine learning from the lecture decks.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="train every family on the bundled data and report",
                          description="Train every estimator family on the bundled Auto MPG "
                                      "data and print train/test metrics and fit times.",
                          epilog="example: fastml demo")
    demo.set_defaults(func=run_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)
