"""Sphinx configuration of fastml's documentation site.

Build (from the repository root):

    pip install '.[docs]'
    sphinx-build -W --keep-going -n -b html docs docs/_build/html

Warnings are errors (-W) and every cross-reference must resolve (-n, nitpicky). The API
reference (api/index.rst) is written here from the modules' public names before the build, so
a new public function or estimator appears without editing the docs.
"""
import os
import sys
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

import fastml  # noqa: E402  (the installed package: its docstrings are the API reference)
import api_pages  # noqa: E402
import offline_inventories  # noqa: E402

api_pages.write_api_index(os.path.join(HERE, "api"))

project = "fastml"
author = "the fastml developers"
copyright = f"{date.today().year}, {author}"
version = release = fastml.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "cli_reference",
    "docstring_text",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "**.md5"]
templates_path = ["_templates"]
smartquotes = False  # keep "--param" and quotes as typed (command lines are copied from here)

# --- autodoc / autosummary / numpydoc
autosummary_generate = True
autosummary_imported_members = True
# no "members" here: a non-string default overrides the template's :members: (Sphinx >= 8)
autodoc_default_options = {}
autodoc_typehints = "none"          # hints live in the signatures' source and in py.typed
numpydoc_show_class_members = False  # each class page lists its own methods (template)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# Links to numpy, scipy, scikit-learn, pandas and Dask through inventories written here (the
# build has no network: docs/_ext/offline_inventories.py); names they do not list stay plain.
intersphinx_mapping = offline_inventories.write_inventories(
    os.path.join(HERE, "_build", "inventories"))

# Names from outside fastml that docstrings mention and no inventory lists.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|pandas|pd|sklearn|matplotlib|joblib|dask|distributed|"
               r"pyarrow|pyspark)(\..*)?"),
    (r"py:.*", r"(array-like|array_like|ndarray|optional|default.*|callable|None|int|float|"
               r"str|bool|dict|list|tuple|object|sequence|iterable|file-like|path-like)"),
    (r"py:.*", r"(typing|collections\.abc|os|io|pathlib)\..*"),
    (r"py:.*", r"(TextIO|Path|PathLike|Any|Optional|Union|Sequence|Iterable)"),
]

# --- the gallery: examples/*.py run during the build, their figures and output kept
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "reset_modules": ("matplotlib",),
    "min_reported_time": 1e9,
}

# --- the pydata theme (the stack of numpy, scipy and scikit-learn)
html_theme = "pydata_sphinx_theme"
html_title = f"fastml {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["fastml.css"]
myst_heading_anchors = 3
