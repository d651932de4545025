"""The package's shape (issues 10, 29 and 34): no import cycle among fastml's modules, counting
the imports inside functions; each family folder holds its own kernels while ``_core`` holds
only what several families share; the executors of the plan protocol (fastml/stream.py,
fastml/_dask.py, fastml/_spark.py) know no estimator and take no other module's private
names; the base layer knows no backend (docs/developers/architecture.rst)."""
import ast
import pathlib

import fastml

PACKAGE = pathlib.Path(fastml.__file__).parent
FAMILIES = ("linear_model", "naive_bayes", "tree", "feature_extraction")


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node):
    test = node.test
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == \
        "TYPE_CHECKING"


def _import_time_imports(tree):
    """Import statements that run when the module is imported: module level, including
    try/if blocks, but not function bodies (lazy imports) nor ``if TYPE_CHECKING:``."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody +
                           [n for h in node.handlers for n in h.body])
        elif isinstance(node, ast.ClassDef):
            pending.extend(node.body)


def _targets(node, module, is_package, modules):
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    source = ".".join(p for p in (base if node.level else "", node.module or "") if p)
    found = set()
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        found.add(submodule if submodule in modules else source)
    return found & set(modules)


def _all_imports(tree):
    """Every import statement, those inside functions (run when the function is) included,
    but not those under ``if TYPE_CHECKING:`` (never run)."""
    hints = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and
             _is_type_checking(node) for n in ast.walk(node)}
    return [node for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in hints]


def import_graph(imports=_import_time_imports):
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        graph[module] = set()
        for node in imports(tree):
            graph[module] |= _targets(node, module, is_package, files)
        graph[module].discard(module)
    return graph


def _parents(module):
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def find_cycle(graph):
    """A list of modules forming a cycle, or None. Importing a submodule imports its parent
    packages first, so a package importing its own submodule is not a cycle (that edge is
    how every ``__init__`` re-exports its names) and is left out."""
    edges = {m: {t for t in ts if m not in _parents(t)} for m, ts in graph.items()}
    state, stack = {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(edges):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_among_fastml_modules():
    graph = import_graph()
    assert "fastml.linear_model._logistic" in graph   # the walk found the package
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_no_import_cycle_counting_imports_inside_functions():
    """A lazy import inside a function closes a cycle as surely as one at the top, once the
    function runs (the dask router once closed a 17-module cycle through _base.py, _dask.py,
    stream.py and info.py that way)."""
    graph = import_graph(_all_imports)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_import_walk_sees_imports_inside_functions():
    tree = ast.parse("import a\ndef f():\n    from . import b\nif TYPE_CHECKING:\n"
                     "    import c\n")
    assert [type(n).__name__ for n in _all_imports(tree)] == ["Import", "ImportFrom"]
    assert len(list(_import_time_imports(tree))) == 1


EXECUTORS = ("stream.py", "_dask.py", "_spark.py")
BACKENDS = ("fastml._dask", "fastml._spark")


def _estimator_names():
    import fastml
    names = {name for name, _ in fastml.all_estimators()} | {"FeatureHasher"}
    return names | {"ClassifierMixin", "RegressorMixin", "TransformerMixin", "BaseForest",
                    "BaseDecisionTree", "OnlineLinearClassifier", "LeastSquares"}


def _code_words(tree):
    """The identifiers and the string constants of a module, docstrings left out."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                id(node) not in docstrings:
            yield from node.value.replace("(", " ").replace(".", " ").split()


def test_executors_know_no_estimator():
    """fit_stream and the dask backend run any estimator's plan: no estimator class, family
    or solver is named in their code (a switch on the estimator's type or name would be)."""
    estimators = _estimator_names()
    for executor in EXECUTORS:
        tree = ast.parse((PACKAGE / executor).read_text(encoding="utf-8"))
        named = {word.strip("_") for word in _code_words(tree)} & estimators
        assert not named, (executor, sorted(named))
        imported = {node.module or "" for node in _all_imports(tree)
                    if isinstance(node, ast.ImportFrom)}
        assert not {m for m in imported if m.lstrip(".").split(".")[0] in
                    ("linear_model", "naive_bayes", "tree", "feature_extraction")}, executor


def test_executors_take_no_private_names_of_other_modules():
    for executor in EXECUTORS:
        tree = ast.parse((PACKAGE / executor).read_text(encoding="utf-8"))
        private = [f"{node.module}.{alias.name}" for node in _all_imports(tree)
                   if isinstance(node, ast.ImportFrom)
                   for alias in node.names if alias.name.startswith("_")]
        assert not private, (executor, private)


def test_the_executors_stay_small():
    """The plans do the estimators' work; the executors only move data (issue 29's bounds;
    the Spark backend also holds its parts in a barrier stage, serves them over a socket and
    reads Parquet row groups in its tasks)."""
    lines = {name: len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
             for name in EXECUTORS}
    assert lines["stream.py"] <= 950 and lines["_dask.py"] <= 400, lines
    assert lines["_spark.py"] <= 950, lines


def test_the_backends_run_the_plans_through_one_runner():
    """A backend moves data; the maths of running each plan over parts is written once
    (_plans.run_on_parts): no backend calls a plan's fields itself, except a Columns plan's
    finish (no data) and the per-part functions it ships."""
    for executor in ("_dask.py", "_spark.py"):
        tree = ast.parse((PACKAGE / executor).read_text(encoding="utf-8"))
        called = {node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Attribute)
                  and getattr(node.func.value, "id", None) == "plan"}
        assert called <= {"finish", "start"}, (executor, called)
        assert "run_on_parts" in {word for word in _code_words(tree)}, executor


def test_the_base_layer_knows_no_backend():
    """_base.py reaches a backend only through the router, a leaf that imports no fastml
    module (the backend module is imported when one of its collections arrives); only the
    public pyspark.ml stages (fastml/spark.py) import the Spark backend by name."""
    graph = import_graph(_all_imports)
    assert graph["fastml._router"] == set()
    for backend in BACKENDS:
        assert backend not in graph["fastml._base"]
        importers = [m for m, targets in graph.items() if backend in targets]
        assert importers == (["fastml.spark"] if backend == "fastml._spark" else []), \
            (backend, importers)
    import fastml._router as router
    assert [module for _, module in router.BACKENDS] == list(BACKENDS)


def test_importing_fastml_imports_no_backend():
    """import fastml loads neither dask nor pyspark, nor their backends (a fresh process)."""
    import subprocess
    import sys
    code = ("import sys, fastml; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'pyspark', 'distributed') or m in ('fastml._dask', 'fastml._spark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(PACKAGE.parent))
    assert out.stdout.strip() == "[]", out.stdout


def test_cycle_finder_finds_a_cycle():
    graph = {"fastml.a": {"fastml.b"}, "fastml.b": {"fastml.c"}, "fastml.c": {"fastml.a"},
             "fastml": {"fastml.a"}}
    assert find_cycle(graph) == ["fastml.a", "fastml.b", "fastml.c", "fastml.a"]
    assert find_cycle({"fastml": {"fastml.a"}, "fastml.a": set()}) is None


def test_each_family_holds_its_kernels():
    for family in FAMILIES:
        kernels = list((PACKAGE / family).glob("*.pyx"))
        assert kernels, f"{family}/ has no kernel of its own"
        for kernel in kernels:   # a kernel and its driver never share a stem
            assert kernel.stem.endswith("_fast"), kernel
            assert not (PACKAGE / family / (kernel.stem[:-5] + ".pyx")).exists()


def test_core_holds_only_shared_kernels():
    """Every kernel module in _core is imported by at least two families (or by the
    family-neutral modules: tabular encoding, streaming, build information)."""
    users = {}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PACKAGE).parts
        owner = rel[0] if len(rel) > 1 else "shared"
        for kernel in (PACKAGE / "_core").glob("*.pyx"):
            if f"_core.{kernel.stem}" in text or f"_core import {kernel.stem}" in text:
                users.setdefault(kernel.stem, set()).add(owner)
    for kernel in (PACKAGE / "_core").glob("*.pyx"):
        owners = users.get(kernel.stem, set())
        assert len(owners) >= 2 or "shared" in owners, (kernel.name, owners)
