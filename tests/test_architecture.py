"""The package's shape (issue 10): no import cycle among fastml's modules, and each family
folder holds its own kernels while ``_core`` holds only what several families share."""
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


def import_graph():
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        graph[module] = set()
        for node in _import_time_imports(tree):
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
