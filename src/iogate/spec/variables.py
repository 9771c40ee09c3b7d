"""Variable expansion in suite values: ``${VAR}``, ``${VAR:-default}``, ``${VAR:?msg}``, ``$name``.

Expansion runs on the loaded tree before validation, in every string value (keys are never
expanded). ``$$`` is a literal ``$``; a ``$`` not followed by a name or ``{`` is kept as is.

Names are looked up in a workload's sweep variables first (the point being expanded), then
in the given environment (``os.environ`` by default), then in the
built-ins ``ncpus`` (usable CPUs), ``mb_memory`` (MemTotal in MiB) and ``pagesize``, so a
run can still override a built-in by exporting it. ``:-`` and ``:?`` treat an empty value
like an unset one, as the shell does.

A value that is exactly one reference and expands to a plain decimal integer becomes an int
(``numjobs: ${ncpus}``); one that expands to ``true``/``false`` becomes a bool.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from iogate.errors import Problem
from iogate.spec.loader import Mark, MarkedList, MarkedMap, PathKey, format_path

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")


class _ExpansionError(Exception):
    pass


def _meminfo_mib() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024  # the file says kB, meaning KiB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _ncpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # respects cpusets and taskset
    except (AttributeError, OSError):
        return os.cpu_count() or 1


BUILTINS: dict[str, Callable[[], int | None]] = {
    "ncpus": _ncpus,
    "mb_memory": _meminfo_mib,
    "pagesize": lambda: os.sysconf("SC_PAGE_SIZE"),
}


class Expander:
    """Expands references in strings against an environment plus the built-ins."""

    def __init__(self, env: Mapping[str, str] | None = None,
                 variables: Mapping[str, str] | None = None) -> None:
        self.env = os.environ if env is None else env
        self.variables = variables or {}
        self._builtin_cache: dict[str, str | None] = {}

    def lookup(self, name: str) -> str | None:
        if name in self.variables:
            return self.variables[name]
        if name in self.env:
            return str(self.env[name])
        if name in BUILTINS:
            if name not in self._builtin_cache:
                value = BUILTINS[name]()
                self._builtin_cache[name] = None if value is None else str(value)
            return self._builtin_cache[name]
        return None

    def expand(self, text: str) -> tuple[str, bool]:
        """Return the expanded text and whether ``text`` was exactly one reference."""
        out: list[str] = []
        i, refs, whole = 0, 0, False
        while i < len(text):
            c = text[i]
            if c != "$" or i + 1 >= len(text):
                out.append(c)
                i += 1
                continue
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
            elif nxt == "{":
                end = _closing_brace(text, i + 2)
                out.append(self._braced(text[i + 2:end]))
                whole = i == 0 and end == len(text) - 1
                refs += 1
                i = end + 1
            elif m := _NAME.match(text, i + 1):
                out.append(self._required(m.group(), None))
                whole = i == 0 and m.end() == len(text)
                refs += 1
                i = m.end()
            else:
                out.append(c)
                i += 1
        return "".join(out), whole and refs == 1

    def _braced(self, body: str) -> str:
        m = _NAME.match(body)
        if m is None:
            raise _ExpansionError(f"'${{{body}}}' is not a variable reference: expected a "
                                  "name like ${SIZE}")
        name, rest = m.group(), body[m.end():]
        if rest == "":
            return self._required(name, None)
        if rest.startswith(":-"):
            value = self.lookup(name)
            # The default may itself contain references.
            return value if value else self.expand(rest[2:])[0]
        if rest.startswith(":?"):
            return self._required(name, rest[2:] or None)
        raise _ExpansionError(f"'${{{body}}}': after the name, only ':-default' or ':?message' "
                              "may follow")

    def _required(self, name: str, message: str | None) -> str:
        value = self.lookup(name)
        if message is not None:
            if not value:
                raise _ExpansionError(f"{name}: {message}")
            return value
        if value is None:
            raise _ExpansionError(f"variable '{name}' is not set; set it or write "
                                  f"${{{name}:-default}}")
        return value


def _closing_brace(text: str, start: int) -> int:
    depth = 1
    for j in range(start, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise _ExpansionError(f"unterminated '${{' in '{text}': add the closing '}}'")


def _typed(expanded: str, whole: bool) -> Any:
    if whole:
        if _INT.match(expanded):
            return int(expanded)
        if expanded in ("true", "false"):
            return expanded == "true"
    return expanded


_REFERENCE = re.compile(r"\$\$|\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def references(node: Any) -> set[str]:
    """The names referenced anywhere in the string values of ``node`` (defaults included)."""
    if isinstance(node, Mapping):
        return set().union(*(references(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(references(v) for v in node)) if node else set()
    if isinstance(node, str):
        return {m.group(1) for m in _REFERENCE.finditer(node) if m.group(1)}
    return set()


def expand_tree(tree: Any, filename: str, env: Mapping[str, str] | None = None, *,
                variables: Mapping[str, str] | None = None, base: tuple[PathKey, ...] = (),
                skip: frozenset[tuple[PathKey, ...]] = frozenset()
                ) -> tuple[Any, list[Problem]]:
    """Expand every string value in ``tree``; return the new tree and all problems found.

    ``variables`` win over the environment and the built-ins (a sweep point); ``base`` is
    where ``tree`` sits in its document, for messages; subtrees at the paths in ``skip``
    are left as they are. Marks are carried over to the new containers. A value that fails
    to expand is kept as written so that validation can go on and report other problems.
    """
    expander = Expander(env, variables)
    problems: list[Problem] = []

    def visit(node: Any, path: tuple[PathKey, ...], mark: Mark) -> Any:
        if path in skip:
            return node
        if isinstance(node, MarkedMap):
            out = MarkedMap(mark=node.mark)
            out.marks, out.value_marks = dict(node.marks), dict(node.value_marks)
            for key, value in node.items():
                out[key] = visit(value, path + (key,), node.value_marks.get(key, node.mark))
            return out
        if isinstance(node, MarkedList):
            lst = MarkedList(mark=node.mark)
            lst.marks = list(node.marks)
            for i, value in enumerate(node):
                lst.append(visit(value, path + (i,),
                                 node.marks[i] if i < len(node.marks) else node.mark))
            return lst
        if isinstance(node, str) and "$" in node:
            try:
                return _typed(*expander.expand(node))
            except _ExpansionError as exc:
                problems.append(Problem(filename, mark[0], mark[1], format_path(path), str(exc)))
        return node

    return visit(tree, base, getattr(tree, "mark", (0, 0))), problems
