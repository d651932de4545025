"""The shared modules' public API is documented numpydoc-style, and the examples run."""
import doctest
import importlib
import inspect

import pytest

MODULES = ["fastml", "fastml._base", "fastml.exceptions", "fastml.metrics",
           "fastml.model_selection", "fastml.io", "fastml.plot", "fastml.lectures",
           "fastml._report", "fastml.datasets._auto_mpg", "fastml.datasets._tables",
           "fastml.datasets._lecture_mpg"]
PUBLIC = {  # module: public functions and classes that need the full numpydoc sections
    "fastml.metrics": ["accuracy_score", "log_loss", "confusion_matrix", "unique_labels",
                       "mean_squared_error", "r2_score"],
    "fastml.model_selection": ["train_test_split"],
    "fastml.io": ["save", "load"],
    "fastml.plot": ["plot_loss_curve", "plot_learning_curve", "plot_decision_regions",
                    "plot_confusion_matrix",
                    "plot_tree", "plot_report", "learning_curves"],
    "fastml._base": ["clone"],
    "fastml.datasets": ["load_auto_mpg", "load_tax_table", "load_x1x2y_table", "load_xor",
                        "load_lecture_mpg"],
}


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    pytest.importorskip("matplotlib") if name == "fastml.plot" else None
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no example"


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_numpydoc_sections(module_name):
    module = importlib.import_module(module_name)
    for name in PUBLIC[module_name]:
        doc = inspect.getdoc(getattr(module, name))
        for section in ("Parameters", "Returns", "Examples"):
            assert f"\n{section}\n---" in doc, f"{module_name}.{name} lacks {section}"


def test_lecture_index_covers_every_deck():
    from fastml.lectures import LECTURES
    assert sorted(LECTURES) == ["000", "001", "002", "003", "004"]
    assert LECTURES["004"].source.startswith("004_")
    import fastml
    assert "fastml.lectures" in fastml.__doc__
