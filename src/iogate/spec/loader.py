"""Reading suite YAML into plain containers that remember where each value came from.

The resolver is YAML 1.2 flavoured and local to this module (PyYAML is never patched):
only ``true``/``false`` are booleans, so ``on``/``off``/``yes``/``no`` stay strings; only
plain decimals are numbers, so ``1:30`` (sexagesimal) and ``0777`` (octal) stay strings and
the model can say what is wrong with them; dates stay strings. Duplicate keys are errors.

Every mapping becomes a :class:`MarkedMap` and every sequence a :class:`MarkedList`; both
hold the 1-based (line, col) of themselves and of each key and value, so any problem found
later can be reported as ``file:line:col``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from iogate.errors import Problem, SuiteError

Mark = tuple[int, int]  # 1-based line, column
PathKey = str | int


class MarkedMap(dict):
    """A dict with the source position of itself (``mark``), its keys and its values."""

    def __init__(self, *args: Any, mark: Mark = (0, 0), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mark: Mark = mark
        self.marks: dict[Any, Mark] = {}  # key -> position of the key
        self.value_marks: dict[Any, Mark] = {}  # key -> position of the value


class MarkedList(list):
    """A list with the source position of itself and of each item."""

    def __init__(self, *args: Any, mark: Mark = (0, 0)) -> None:
        super().__init__(*args)
        self.mark: Mark = mark
        self.marks: list[Mark] = []


class SuiteLoader(yaml.SafeLoader):
    """SafeLoader with a YAML 1.2 core-style resolver; see the module docstring."""

    yaml_implicit_resolvers: dict = {}  # our own table; the base class's is untouched


SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"))
# The bare word null stays a string: fio users write `ioengine: null` for the null engine, and no
# suite key needs YAML's "nothing" spelled as a word (`~` or an empty value still is).
SuiteLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|)$"), ["~", ""])
# No leading zeros: '0777' is not silently octal, and '007' is not silently 7.
SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))
SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
    list("-+.0123456789"))
SuiteLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^<<$"), ["<"])

_MERGE_TAG = "tag:yaml.org,2002:merge"


def _mark(node: yaml.Node) -> Mark:
    return node.start_mark.line + 1, node.start_mark.column + 1


def format_path(path: Sequence[PathKey]) -> str:
    """``('workloads', 1, 'iodepth')`` -> ``workloads[1].iodepth``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Builder:
    """Turns a composed node tree into Marked containers, collecting problems."""

    def __init__(self, loader: SuiteLoader, filename: str) -> None:
        self.loader = loader
        self.filename = filename
        self.problems: list[Problem] = []
        self._active: set[int] = set()  # nodes being built, to stop recursive aliases

    def problem(self, mark: Mark, path: Sequence[PathKey], message: str) -> None:
        self.problems.append(Problem(self.filename, mark[0], mark[1], format_path(path), message))

    def build(self, node: yaml.Node, path: tuple[PathKey, ...]) -> Any:
        if id(node) in self._active:
            self.problem(_mark(node), path, "recursive alias")
            return None
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                out = MarkedList(mark=_mark(node))
                for i, item in enumerate(node.value):
                    out.append(self.build(item, path + (i,)))
                    out.marks.append(_mark(item))
                return out
            assert isinstance(node, yaml.MappingNode)
            return self.mapping(node, path)
        finally:
            self._active.discard(id(node))

    def scalar(self, node: yaml.ScalarNode, path: tuple[PathKey, ...]) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            self.problem(_mark(node), path, _yaml_message(exc))
            return None

    def mapping(self, node: yaml.MappingNode, path: tuple[PathKey, ...]) -> MarkedMap:
        out = MarkedMap(mark=_mark(node))
        merged: list[MarkedMap] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged += self.merge_sources(value_node, path)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problem(_mark(key_node), path, "a key must be a plain value, not a "
                             "list or mapping")
                continue
            key = self.scalar(key_node, path)
            if key in out:
                self.problem(_mark(key_node), path + (key,),
                             f"duplicate key '{key}' (first defined on line {out.marks[key][0]})")
                continue
            out[key] = self.build(value_node, path + (key,))
            out.marks[key] = _mark(key_node)
            out.value_marks[key] = _mark(value_node)
        # '<<: *anchor' fills in keys the mapping does not set itself; earlier sources win.
        for source in merged:
            for key, value in source.items():
                if key not in out:
                    out[key] = value
                    out.marks[key] = source.marks[key]
                    out.value_marks[key] = source.value_marks[key]
        return out

    def merge_sources(self, node: yaml.Node, path: tuple[PathKey, ...]) -> list[MarkedMap]:
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in items:
            value = self.build(item, path) if isinstance(item, yaml.MappingNode) else None
            if value is None:
                self.problem(_mark(item), path, "'<<' merges only mappings")
            else:
                sources.append(value)
        return sources


def _yaml_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return ": ".join(parts) or "invalid YAML"
    return str(exc)


def load_yaml_text(text: str, filename: str = "<string>") -> MarkedMap:
    """Parse a suite document; raise SuiteError with positions for syntax errors."""
    root, problems = load_yaml_lenient(text, filename)
    if problems:
        raise SuiteError(problems)
    return root


def load_yaml_lenient(text: str, filename: str = "<string>") -> tuple[MarkedMap, list[Problem]]:
    """Parse a suite document, returning the tree and any problems that did not stop it.

    Syntax errors still raise SuiteError. Duplicate keys are problems: the first value is
    kept so that the rest of the document can still be checked.
    """
    loader = SuiteLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
            raise SuiteError.single(filename, f"invalid YAML: {_yaml_message(exc)}",
                                    line, col) from None
        except yaml.YAMLError as exc:
            raise SuiteError.single(filename, f"invalid YAML: {exc}") from None
        if node is None:
            raise SuiteError.single(filename, "the file is empty: a suite needs 'suite' and "
                                    "'workloads'")
        if not isinstance(node, yaml.MappingNode):
            line, col = _mark(node)
            raise SuiteError.single(filename, "a suite must be a mapping with 'suite' and "
                                    "'workloads'", line, col)
        builder = _Builder(loader, filename)
        root = builder.build(node, ())
    finally:
        loader.dispose()
    return root, builder.problems


def load_yaml(path: Path | str) -> MarkedMap:
    """Read and parse a suite file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError.single(str(path), f"cannot read: {exc}") from None
    return load_yaml_text(text, str(path))


def mark_of(root: Any, path: Sequence[PathKey], *, value: bool = False) -> Mark:
    """Source position of ``path`` in a loaded tree, or of its nearest marked parent.

    For a mapping entry this is the key's position (the value's with ``value=True``).
    """
    best: Mark = getattr(root, "mark", (0, 0))
    node = root
    for part in path:
        if isinstance(node, MarkedMap):
            if part not in node:
                break
            best = (node.value_marks if value else node.marks).get(part, best)
            node = node[part]
        elif isinstance(node, MarkedList) and isinstance(part, int) and 0 <= part < len(node):
            best = node.marks[part] if part < len(node.marks) else best
            node = node[part]
        else:
            break
    return best
