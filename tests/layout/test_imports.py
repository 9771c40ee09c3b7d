"""The import graph of src/ and plugins/ has no cycle, and every module says what it owns.

Imports are read from the source at any depth: a function's import is a dependency too, and
so is one under ``if TYPE_CHECKING:`` (an annotation names what a module depends on). So no
module reaches up to one that depends on it, however it imports it. Importing the metrics
table and the results (what reports and plugins read) loads neither the plugins, nor the
backends, nor the engine's bindings.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "src", ROOT / "plugins"]


def _modules() -> dict[str, Path]:
    out = {}
    for tree in TREES:
        for path in tree.rglob("*.py"):
            parts = list(path.relative_to(tree).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The modules of the tree that ``name`` (at ``path``) imports."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (m := resolve(alias.name)) is not None:
                    found.add(m)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                m = full if full in known else resolve(base)
                if m is not None:
                    found.add(m)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(path, name, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_reader_sees_lazy_and_annotation_only_imports(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\n"
                   "else:\n    import w\n"
                   "def f():\n    from y import z\n")
    known = {"m": mod, "w": mod, "x": mod, "y": mod, "y.z": mod}
    assert _imports(mod, "m", known) == {"w", "x", "y.z"}


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


# What reading metrics and results must not load: the plugin layer, the backends that run
# jobs, and the engine's bindings (ctypes, and through them the library).
HEAVY = ("iogate.hooks", "iogate.backends", "iogate.fio.backend", "iogate.engine.native",
         "iogate.engine.session", "iogate.engine.isolated", "ctypes")

_PROBE = """
import sys
import iogate.metrics, iogate.results
print(*sorted(sys.modules))
try:
    iogate.metrics.parse_metric("read.iosp")
except ValueError as exc:
    print(exc, file=sys.stderr)
print(*sorted(sys.modules))
"""


def test_metrics_and_results_load_no_plugin_backend_or_bindings():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(t) for t in TREES)}
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, check=True)
    imported, after_error = (set(line.split()) for line in done.stdout.splitlines())
    assert "unknown metric 'read.iosp'" in done.stderr  # the mistyped metric was refused
    assert {"iogate.metrics", "iogate.results", "iogate.histogram"} <= imported
    assert not imported & set(HEAVY), "importing metrics and results loads " + \
        ", ".join(sorted(imported & set(HEAVY)))
    assert not after_error & set(HEAVY), "a mistyped metric loads " + \
        ", ".join(sorted(after_error & set(HEAVY)))


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_module_says_what_it_owns(name):
    path = _modules()[name]
    doc = ast.get_docstring(ast.parse(path.read_text()))
    if path.name == "__init__.py" and not path.read_text().strip():
        pytest.skip("an empty package marker")
    assert doc, f"{path}: no docstring saying what it owns"
    assert len(doc.split()) >= 4, f"{path}: no docstring saying what it owns"
