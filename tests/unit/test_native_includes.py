"""The include graph of native/src: the verify code (verify.c, the state file's writer vstate.c,
its check vstate_check.c and their shared format vstate_format.h) is in no include circle.

A module is a file name without its suffix (verify.c and verify.h are one module); module A
depends on B when a file of A includes B's header.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "native" / "src"
VERIFY_CODE = {"verify", "vstate", "vstate_check", "vstate_format"}


def include_graph(src: Path) -> dict[str, set[str]]:
    files: dict[str, list[Path]] = {}
    for path in src.iterdir():
        if path.suffix in (".c", ".h"):
            files.setdefault(path.stem, []).append(path)
    graph: dict[str, set[str]] = {}
    for module, paths in files.items():
        deps = set()
        for path in paths:
            for name in re.findall(r'^#include "([^"]+)\.h"', path.read_text(), re.M):
                stem = Path(name).name
                if stem in files and stem != module:
                    deps.add(stem)
        graph[module] = deps
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph.get(m, ()))
    return seen


def test_the_reader_finds_a_circle(tmp_path):
    (tmp_path / "a.c").write_text('#include "b.h"\n')
    (tmp_path / "b.h").write_text('#include "a.h"\n')
    (tmp_path / "a.h").write_text("")
    graph = include_graph(tmp_path)
    assert "a" in reachable(graph, "a")


def test_the_verify_code_is_in_no_include_circle():
    graph = include_graph(SRC)
    assert set(graph) >= VERIFY_CODE
    circles = sorted(m for m in VERIFY_CODE if m in reachable(graph, m))
    assert not circles, f"reach themselves through their includes: {circles}"


def test_the_writer_and_the_check_are_apart():
    graph = include_graph(SRC)
    assert "verify" not in reachable(graph, "vstate")  # the writer knows no verify code
    assert "vstate" not in graph["vstate_check"]  # the check reads the format, not the writer
    assert "vstate_format" in graph["vstate_check"]
