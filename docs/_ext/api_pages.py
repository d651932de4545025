"""Write docs/api/index.rst: one autosummary table per public module, over every public name.

Public names are a module's ``__all__`` (or, for a module without one, its functions and
classes whose names do not start with "_" and that it defines itself). The page is written
before Sphinx reads the sources, so autosummary makes a page for each name, and a name added to
fastml shows up in the reference without anyone editing the docs.
"""
import importlib
import inspect
import os

# (module, title, what the section is); the top-level package first
SECTIONS = [
    ("fastml", "Estimators and top-level functions",
     "Everything ``import fastml`` gives: the estimators of every family, saving and loading, "
     "the build report."),
    ("fastml.info", "fastml.info: the lectures' information quantities",
     "Entropy, conditional entropy, information gain (IG and IG*), the chi-square test of "
     "000's pruning, and the information-gain table."),
    ("fastml.metrics", "fastml.metrics", "Accuracy, log-loss, confusion matrix, RMSE and R²."),
    ("fastml.losses", "fastml.losses: the losses of lecture 001",
     "Each loss and its (sub)gradient, as 001 writes them."),
    ("fastml.datasets", "fastml.datasets", "The bundled data and the lectures' small tables."),
    ("fastml.plot", "fastml.plot", "Learning curves, decision regions, confusion matrices, trees "
     "(needs matplotlib)."),
    ("fastml.io", "fastml.io: model files", "The safe model format behind fastml.save / load."),
    ("fastml.model_selection", "fastml.model_selection", "Splitting data."),
    ("fastml.feature_extraction", "fastml.feature_extraction",
     "Raw records (dicts, token lists) to feature matrices: the hashing trick."),
    ("fastml.lectures", "fastml.lectures: the lecture decks",
     "The decks docstrings cite as \"<number> slide <n>\", by number."),
]
# modules that fastml.__all__ names: each gets its own section (above), not an entry under fastml
SUBMODULES = {"datasets", "exceptions", "feature_extraction", "info", "lectures", "losses",
              "metrics", "model_selection"}


def public_names(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items()
                 if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                 and getattr(obj, "__module__", None) == module_name]
    return sorted(n for n in names if n not in SUBMODULES and not n.isupper())


def write_api_index(out_dir):
    import shutil
    shutil.rmtree(os.path.join(out_dir, "generated"), ignore_errors=True)  # no stale pages
    os.makedirs(out_dir, exist_ok=True)
    lines = ["API reference", "=============", "",
             "Generated from the docstrings (numpydoc). Every estimator follows scikit-learn's "
             "conventions: ``fit`` returns the estimator, learned attributes end in ``_``, "
             "``get_params`` / ``set_params`` work, so they drop into scikit-learn's tools.", ""]
    documented = set()  # an object re-exported by fastml is documented once, under fastml
    for module_name, title, text in SECTIONS:
        module = importlib.import_module(module_name)
        names = [n for n in public_names(module_name) if id(getattr(module, n)) not in documented]
        documented.update(id(getattr(module, n)) for n in names)
        lines += [title, "-" * len(title), "", text, ""]
        if not names:  # everything it holds is re-exported by fastml, so documented there
            alias = ", ".join(f":obj:`fastml.{n}`" for n in public_names(module_name))
            lines += [f"Its names are documented above, as ``fastml`` re-exports them: {alias}.",
                      ""]
            continue
        lines += [f".. currentmodule:: {module_name}", "",
                  ".. autosummary::", "   :toctree: generated",
                  "   :template: autosummary/fastml_item.rst", ""]
        lines += [f"   {name}" for name in names]
        lines.append("")
    path = os.path.join(out_dir, "index.rst")
    text = "\n".join(lines)
    if not os.path.exists(path) or open(path).read() != text:  # unchanged: no rebuild
        with open(path, "w") as f:
            f.write(text)
