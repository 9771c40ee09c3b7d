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

Expansion is a single pass: a substituted value is never expanded again, so a variable
holding ``${X}`` yields that text, not another lookup. It is bounded: defaults nest at most
:data:`MAX_NESTING` deep, one value expands to at most :data:`MAX_VALUE_CHARS` characters
and one tree to at most :data:`MAX_TREE_CHARS`, and a variable holding a NUL is an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from iogate.errors import Problem
from iogate.expr import shown
from iogate.spec.loader import Mark, MarkedList, MarkedMap, PathKey, format_path

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,99})\Z")  # no more digits than the loader reads

MAX_NESTING = 8  # ${A:-${B:-...}} levels
MAX_VALUE_CHARS = 1 << 20  # a path is at most 4 KiB; the longest list of them, 256 KiB
MAX_TREE_CHARS = 64 << 20


class _ExpansionError(Exception):
    pass


def _shown(text: str, limit: int = 40) -> str:
    """Text as quoted in a message, cut short."""
    return shown(text, limit)


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
        self.budget = MAX_TREE_CHARS  # characters this expander may still produce

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

    def expand(self, text: str, nesting: int = 0) -> tuple[str, bool]:
        """Return the expanded text and whether ``text`` was exactly one reference."""
        out: list[str] = []
        size = 0
        i, refs, whole = 0, 0, False
        while i < len(text):
            dollar = text.find("$", i)
            if dollar < 0:
                dollar = len(text)
            if dollar > i:  # plain text up to the next '$', in one slice
                piece, i = text[i:dollar], dollar
            elif i + 1 == len(text):
                piece, i = "$", i + 1
            elif text[i + 1] == "$":
                piece, i = "$", i + 2
            elif text[i + 1] == "{":
                end = _closing_brace(text, i + 2)
                piece = self._braced(text[i + 2:end], nesting)
                whole = i == 0 and end == len(text) - 1
                refs += 1
                i = end + 1
            elif m := _NAME.match(text, i + 1):
                piece = self._required(m.group())
                whole = i == 0 and m.end() == len(text)
                refs += 1
                i = m.end()
            else:
                piece, i = "$", i + 1
            size += len(piece)
            if size > MAX_VALUE_CHARS:
                raise _ExpansionError(f"'{_shown(text)}' expands to more than "
                                      f"{MAX_VALUE_CHARS} characters")
            if size > self.budget:
                raise _ExpansionError(f"the values of this suite expand to more than "
                                      f"{MAX_TREE_CHARS} characters in all")
            out.append(piece)
        if nesting == 0:
            self.budget -= size
        return "".join(out), whole and refs == 1

    def _braced(self, body: str, nesting: int) -> str:
        m = _NAME.match(body)
        if m is None:
            raise _ExpansionError(f"'${{{_shown(body)}}}' is not a variable reference: "
                                  "expected a name like ${SIZE}")
        name, rest = m.group(), body[m.end():]
        if rest == "":
            return self._required(name)
        if rest.startswith(":-"):
            value = self._value(name)
            if value:
                return value
            # The default may itself contain references (but is written in the file, so
            # it is expanded once, like the rest of the value).
            if nesting >= MAX_NESTING:
                raise _ExpansionError(f"defaults nest more than {MAX_NESTING} references "
                                      "deep")
            return self.expand(rest[2:], nesting + 1)[0]
        if rest.startswith(":?"):
            return self._nonempty(name, rest[2:])
        raise _ExpansionError(f"'${{{_shown(body)}}}': after the name, only ':-default' or "
                              "':?message' may follow")

    def _value(self, name: str) -> str | None:
        value = self.lookup(name)
        if value is not None and "\0" in value:
            raise _ExpansionError(f"variable '{_shown(name)}' holds a NUL character")
        return value

    def _nonempty(self, name: str, message: str) -> str:
        value = self._value(name)
        if value:
            return value
        if message:
            raise _ExpansionError(f"{_shown(name)}: {_shown(message, 200)}")
        if value == "":
            raise _ExpansionError(f"variable '{_shown(name)}' is empty; give it a value")
        return self._required(name)

    def _required(self, name: str) -> str:
        value = self._value(name)
        if value is None:
            raise _ExpansionError(f"variable '{_shown(name)}' is not set; set it or write "
                                  f"${{{_shown(name)}:-default}}")
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
    raise _ExpansionError(f"unterminated '${{' in '{_shown(text)}': add the closing '}}'")


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
                out[key] = visit(value, (*path, key), node.value_marks.get(key, node.mark))
            return out
        if isinstance(node, MarkedList):
            lst = MarkedList(mark=node.mark)
            lst.marks = list(node.marks)
            for i, value in enumerate(node):
                lst.append(visit(value, (*path, i),
                                 node.marks[i] if i < len(node.marks) else node.mark))
            return lst
        if isinstance(node, str) and "$" in node:
            try:
                return _typed(*expander.expand(node))
            except _ExpansionError as exc:
                problems.append(Problem(filename, mark[0], mark[1], format_path(path), str(exc)))
        return node

    return visit(tree, base, getattr(tree, "mark", (0, 0))), problems
