"""House rules that the code itself can check: import direction and a light ``import boundlab``."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN = {"boundlab": ("toys", "verify"), "toys": ("verify",)}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_imports_point_verify_toys_boundlab():
    bad = []
    for pkg, forbidden in FORBIDDEN.items():
        for path in (ROOT / pkg).rglob("*.py"):
            bad += [f"{path.relative_to(ROOT)} imports {m}" for m in _imports(path)
                    if m in forbidden]
    assert not bad, bad


def test_import_boundlab_is_light():
    """``import boundlab`` must not pull sympy, numpy-heavy modules or the catalogue."""
    code = "import sys, boundlab; print(sorted(m for m in ('sympy', 'toys', 'verify', 'torch') " \
           "if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------ import cycles
PACKAGES = ("boundlab", "toys", "verify")
# Import edges that may close a cycle, each with why it is still there. Every import counts,
# the lazy ones inside functions too: a cycle through a function-level import still means
# two modules that cannot be understood (or moved) one without the other.
ALLOWED_CYCLE_EDGES: set = set()  # none: a new cycle fails this test (the checks' registry
# lives in verify/checks/_registry.py, below both the suite and the check modules)


def _modules() -> dict:
    """``{dotted module name: path}`` of every module of the three packages."""
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _owner(name: str, modules) -> str | None:
    """The module that ``import name`` runs: itself, or its nearest package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_only(tree) -> set:
    """The import nodes under ``if TYPE_CHECKING:`` (never run)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _edges(module: str, path, modules) -> set:
    """The modules of the three packages that ``module`` imports (anywhere in its body):
    ``from pkg import name`` counts as ``pkg.name`` when that is a module, else ``pkg``."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_only(tree)
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(_owner(a.name, modules) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".")
            if node.level:
                base = base[:len(base) - node.level + (path.name == "__init__.py")]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                full = f"{base}.{a.name}"
                out.add(full if full in modules else _owner(base, modules))
    out.discard(None)
    out.discard(module)
    return out


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _graph() -> dict:
    modules = _modules()
    return {m: _edges(m, p, modules) & set(modules) for m, p in modules.items()}


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": {"e"}, "f": set()}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["e", "e2"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_edges_include_lazy_and_relative_imports():
    graph = _graph()
    assert "verify.sweep.executor" in graph["verify.sweep.api"]  # inside sweep(): a lazy import
    assert "verify.sweep.api" not in graph["verify.sweep.executor"]  # the run function is passed in
    # a function-level relative import: toys.problems.logistic -> toys.problems.bucketed
    assert "toys.problems.bucketed" in graph["toys.problems.logistic"]
    # ``from . import measures``: a module named through its package
    assert "verify.worst.measures" in graph["verify.worst.api"]
    # ``import toys`` inside a function: the package
    assert "toys" in graph["verify.sweep.api"]


def test_no_import_cycles():
    graph = _graph()
    for a, b in ALLOWED_CYCLE_EDGES:
        assert b in graph.get(a, ()), f"allowed edge {a} -> {b} is gone: remove it from the list"
        graph[a] = graph[a] - {b}
    cycles = _cycles(graph)
    assert not cycles, "import cycles (every import counts, lazy ones too): " + "; ".join(
        " <-> ".join(c) + " [" + ", ".join(f"{x}->{y}" for x in c for y in sorted(graph[x])
                                           if y in c) + "]" for c in cycles)
