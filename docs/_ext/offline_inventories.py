"""Intersphinx inventories for numpy, scipy, scikit-learn, pandas and Dask, written locally.

The documentation builds without network access (CI has none), so intersphinx cannot download
each project's objects.inv. This extension writes small inventories of the names fastml's
pages and docstrings refer to, with the addresses those projects publish them at, before
intersphinx loads them: ``:class:`sklearn.linear_model.SGDClassifier``` becomes a link to
scikit-learn's page, as it would with the downloaded inventory. A name missing here is not an
error (conf.py's nitpick_ignore_regex lets it stay plain text); add it to PROJECTS to link it.
"""
import os
import zlib

# project -> (base URL, {name: (role, page relative to the base)}); each "$" in a page is the
# name (written out here: Sphinx itself expands only a "$" at the very end)
_SKLEARN = "modules/generated/$.html#$"
_NUMPY = "reference/generated/$.html#$"
_SCIPY = "reference/generated/$.html#$"
_DASK = "generated/$.html#$"
_PANDAS = "reference/api/$.html#$"
PROJECTS = {
    "sklearn": ("https://scikit-learn.org/stable/", {
        "sklearn.linear_model.LogisticRegression": ("class", _SKLEARN),
        "sklearn.linear_model.SGDClassifier": ("class", _SKLEARN),
        "sklearn.linear_model.Perceptron": ("class", _SKLEARN),
        "sklearn.linear_model.LinearRegression": ("class", _SKLEARN),
        "sklearn.linear_model.Ridge": ("class", _SKLEARN),
        "sklearn.svm.LinearSVC": ("class", _SKLEARN),
        "sklearn.svm.SVC": ("class", _SKLEARN),
        "sklearn.tree.DecisionTreeClassifier": ("class", _SKLEARN),
        "sklearn.tree.DecisionTreeRegressor": ("class", _SKLEARN),
        "sklearn.ensemble.RandomForestClassifier": ("class", _SKLEARN),
        "sklearn.ensemble.RandomForestRegressor": ("class", _SKLEARN),
        "sklearn.naive_bayes.GaussianNB": ("class", _SKLEARN),
        "sklearn.naive_bayes.CategoricalNB": ("class", _SKLEARN),
        "sklearn.preprocessing.PolynomialFeatures": ("class", _SKLEARN),
        "sklearn.feature_extraction.FeatureHasher": ("class", _SKLEARN),
        "sklearn.pipeline.Pipeline": ("class", _SKLEARN),
        "sklearn.model_selection.GridSearchCV": ("class", _SKLEARN),
        "sklearn.model_selection.cross_val_score": ("function", _SKLEARN),
        "sklearn.feature_selection.mutual_info_classif": ("function", _SKLEARN),
        "sklearn.utils.estimator_checks.check_estimator": ("function", _SKLEARN),
    }),
    "numpy": ("https://numpy.org/doc/stable/", {
        "numpy.ndarray": ("class", _NUMPY),
        "numpy.dtype": ("class", _NUMPY),
        "numpy.float32": ("class", "reference/arrays.scalars.html#$"),
        "numpy.float64": ("class", "reference/arrays.scalars.html#$"),
        "numpy.random.Generator": ("class", "reference/random/generator.html#$"),
        "numpy.random.default_rng": ("function", "reference/random/generator.html#$"),
        "numpy.memmap": ("class", _NUMPY),
        "numpy.linalg.lstsq": ("function", _NUMPY),
    }),
    "scipy": ("https://docs.scipy.org/doc/scipy/", {
        "scipy.sparse.csr_matrix": ("class", _SCIPY),
        "scipy.sparse.csc_matrix": ("class", _SCIPY),
        "scipy.sparse.csr_array": ("class", _SCIPY),
        "scipy.sparse.csc_array": ("class", _SCIPY),
        "scipy.optimize.minimize": ("function", _SCIPY),
    }),
    "pandas": ("https://pandas.pydata.org/docs/", {
        "pandas.DataFrame": ("class", _PANDAS),
        "pandas.Series": ("class", _PANDAS),
        "pandas.read_parquet": ("function", _PANDAS),
    }),
    "dask": ("https://docs.dask.org/en/stable/", {
        "dask.array.Array": ("class", _DASK),
        "dask.dataframe.DataFrame": ("class", _DASK),
        "dask.dataframe.Series": ("class", _DASK),
        "dask.array.from_array": ("function", _DASK),
        "dask.dataframe.read_parquet": ("function", _DASK),
    }),
}


def inventory_bytes(project, names):
    """An objects.inv (Sphinx's inventory format 2) of `names`: {name: (role, page)}."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: \n"
              f"# The remainder of this file is compressed using zlib.\n").encode()
    lines = "".join(f"{name} py:{role} 1 {page.replace('$', name)} -\n"
                    for name, (role, page) in names.items())
    return header + zlib.compress(lines.encode())


def write_inventories(directory):
    """Write one <project>.inv per project; return intersphinx_mapping for them."""
    os.makedirs(directory, exist_ok=True)
    mapping = {}
    for project, (base, names) in PROJECTS.items():
        path = os.path.join(directory, f"{project}.inv")
        with open(path, "wb") as f:
            f.write(inventory_bytes(project, names))
        mapping[project] = (base, path)
    return mapping
