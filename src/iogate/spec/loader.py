"""Reading suite YAML into plain containers that remember where each value came from.

The resolver is YAML 1.2 flavoured and local to this module (PyYAML is never patched):
only ``true``/``false`` are booleans, so ``on``/``off``/``yes``/``no`` stay strings; only
plain decimals are numbers, so ``1:30`` (sexagesimal) and ``0777`` (octal) stay strings and
the model can say what is wrong with them; dates stay strings. Duplicate keys are errors, the
merge key ``<<`` included (one ``<<: [*a, *b]`` merges several mappings).

Every mapping becomes a :class:`MarkedMap` and every sequence a :class:`MarkedList`; both
hold the 1-based (line, col) of themselves and of each key and value, so any problem found
later can be reported as ``file:line:col``.

A suite is untrusted input, so reading it is bounded and refuses what a suite never needs:

* only the plain YAML types: tags other than ``!!str``, ``!!int``, ``!!float``, ``!!bool``,
  ``!!null``, ``!!seq`` and ``!!map`` (``!!python/...``, ``!!binary``, ``!!set``,
  ``!!timestamp``, custom ``!tags``) are errors, and an explicit scalar tag must fit the
  value as this resolver reads it (``!!int 0x10`` is refused, not read as 16);
* anchors, aliases and ``<<`` merges are allowed (they share settings between workloads),
  but aliases may copy at most :data:`MAX_ALIAS_VALUES` values in all, and the document,
  every alias expanded, may hold at most :data:`MAX_VALUES` values and nest at most
  :data:`MAX_DEPTH` levels. Sizes are counted while the document is composed, before
  anything is copied, so an alias bomb costs no more than its text, and reading stops at
  the value too many, so a huge document costs no more than the limit; an anchor that
  contains its own alias is an error;
* control characters (NUL included) are refused in the text and, written as escapes, in
  keys (each value is left to the rule of its field); keys have at most
  :data:`MAX_KEY_CHARS` characters and numbers at most :data:`MAX_NUMBER_CHARS`; a file
  has at most :data:`MAX_FILE_BYTES` bytes and must be UTF-8.

Each refusal is a :class:`~iogate.errors.SuiteError` located at ``file:line:col``.
libyaml parses when PyYAML has it (the grammar is the same, and big suites load several
times faster); the pure-Python parser is the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from iogate.errors import Problem, SuiteError
from iogate.expr import shown
from iogate.interrupts import read_input

Mark = tuple[int, int]  # 1-based line, column
PathKey = str | int

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64  # nested lists and mappings; a suite needs about six
MAX_VALUES = 250_000  # scalars, lists and mappings, each alias counted as the copy it makes
MAX_ALIAS_VALUES = 50_000  # of those, copies made by aliases: 5000 merges of ten keys
MAX_NUMBER_CHARS = 100  # a 64-bit byte count has 20 digits
MAX_KEY_CHARS = 256  # keys are names (options, metrics, variables); they end up in messages
_NO_LIMITS: Mapping[str, int] = MappingProxyType({})


class MarkedMap(dict[Any, Any]):
    """A dict with the source position of itself (``mark``), its keys and its values."""

    def __init__(self, *args: Any, mark: Mark = (0, 0), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mark: Mark = mark
        self.marks: dict[Any, Mark] = {}  # key -> position of the key
        self.value_marks: dict[Any, Mark] = {}  # key -> position of the value


class MarkedList(list[Any]):
    """A list with the source position of itself and of each item."""

    def __init__(self, *args: Any, mark: Mark = (0, 0)) -> None:
        super().__init__(*args)
        self.mark: Mark = mark
        self.marks: list[Mark] = []


_YAML = "tag:yaml.org,2002:"
_MERGE_TAG = _YAML + "merge"
_SCALAR_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null"))
_ALLOWED_TAGS = _SCALAR_TAGS | {_YAML + "seq", _YAML + "map", _MERGE_TAG}


class _Refused(Exception):
    """The document is too big or too deep to read; raised while composing."""

    def __init__(self, mark: Any, message: str, path: str = "") -> None:
        # mark: a PyYAML or libyaml Mark; path: where in the document, when it is known
        super().__init__(message)
        self.mark: Mark = (mark.line + 1, mark.column + 1)
        self.message = message
        self.path = path


class _SuiteComposer(Composer, SafeConstructor, Resolver):
    """Composer with a YAML 1.2 core-style resolver (see the module docstring) that measures
    the document as it is composed, aliases expanded, and stops at the limits.

    An alias becomes its own node, placed where the alias is written and sharing the
    anchored node's ``value``, so every later message can point at the alias itself.
    """

    # our own table (first character -> [(tag, pattern)]); PyYAML's is untouched
    # (a class attribute, declared an instance one in PyYAML's stubs: hence no ClassVar)
    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012
    peek_event: Callable[[], Any]  # from the parser this is mixed with

    def __init__(self, max_items: Mapping[str, int] = _NO_LIMITS) -> None:
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.depth = 0
        # Composed so far, each alias counted as the copy it makes; and of those, the copies.
        self.values = 0
        self.copied = 0
        self.biggest: tuple[int, str] = (0, "")  # the alias that copies the most, its anchor
        self.max_items = max_items  # top-level key -> the most items its list may have
        self.items: tuple[str, int] | None = None  # the limited list being composed
        self.shapes: dict[int, tuple[int, int]] = {}  # id(collection .value) -> values, levels
        self.aliases: dict[int, str] = {}  # id(alias node) -> anchor name

    def compose_node(self, parent: yaml.Node | None, index: Any) -> Any:
        event = self.peek_event()
        if self.items is not None and isinstance(index, int) and index >= self.items[1]:
            key, most = self.items
            raise _Refused(event.start_mark, f"more than {most} {key}; a suite may have at "
                           f"most {most}: split it into several suites", key)
        if isinstance(event, yaml.AliasEvent):
            target: Any = super().compose_node(parent, index)
            alias = type(target)(target.tag, target.value, event.start_mark, event.end_mark)
            self.aliases[id(alias)] = str(event.anchor)
            self.count(self.shape(alias)[0], event, alias=str(event.anchor))
            return alias
        self.count(1, event)
        if not isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            return super().compose_node(parent, index)
        # The items of a top-level list named in max_items are counted as they come.
        limited = (isinstance(event, yaml.SequenceStartEvent) and self.depth == 1
                   and isinstance(index, yaml.ScalarNode) and index.value in self.max_items)
        outer, self.items = self.items, (
            (index.value, self.max_items[index.value]) if limited else None)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Refused(event.start_mark, f"lists and mappings are nested more than "
                               f"{MAX_DEPTH} levels deep")
            node: Any = super().compose_node(parent, index)
        finally:
            self.depth -= 1
            self.items = outer
        self.measure(node)
        return node

    def count(self, values: int, event: Any, *, alias: str | None = None) -> None:
        """Count the values of the document as they are composed, ``alias`` copying them:
        the limits stop reading at the value too many, before the rest is parsed or held."""
        self.values += values
        if alias is not None:
            self.copied += values
            self.biggest = max(self.biggest, (values, alias))
            if self.copied > MAX_ALIAS_VALUES:
                size, name = self.biggest
                raise _Refused(event.start_mark, f"aliases here copy more than "
                               f"{MAX_ALIAS_VALUES} values (*{name} alone copies {size}): an "
                               "alias copies everything its anchor holds, and a suite needs "
                               "far fewer")
        if self.values > MAX_VALUES:
            raise _Refused(event.start_mark, f"the document holds more than {MAX_VALUES} "
                           "values; a suite needs far fewer")

    def shape(self, node: yaml.Node) -> tuple[int, int]:
        """(values, nesting levels) of ``node`` as used here."""
        if isinstance(node, yaml.ScalarNode):
            return 1, 0
        # Not measured yet: an alias to an anchor still being composed (reported as
        # recursive when the tree is built).
        return self.shapes.get(id(node.value), (1, 1))

    def measure(self, node: yaml.Node) -> None:
        """Record the size and depth of a collection, aliases expanded, for its aliases."""
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            children = [child for pair in node.value for child in pair]
        size, levels = 1, 1
        for child in children:
            s, lv = self.shape(child)
            size, levels = size + s, max(levels, lv + 1)
        self.shapes[id(node.value)] = size, levels
        if levels > MAX_DEPTH:  # only aliases can get here: plain nesting stops above
            raise _Refused(node.start_mark, f"aliases nest lists and mappings more than "
                           f"{MAX_DEPTH} levels deep here")


class _PythonEvents(Reader, Scanner, Parser):
    """PyYAML's own parser, for when it was built without libyaml."""

    def __init__(self, text: str) -> None:
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)

    def fetch_flow_collection_start(self, token_class: Any) -> None:
        # Stop here, not only in the composer: this scanner looks ahead through every open
        # '[' or '{' for each token, which takes seconds once thousands are open.
        if self.flow_level >= MAX_DEPTH:
            raise _Refused(self.get_mark(), f"lists and mappings are nested more than "
                           f"{MAX_DEPTH} levels deep")
        super().fetch_flow_collection_start(token_class)


_Events: Any
try:
    from yaml.cyaml import CParser as _Events  # type: ignore[attr-defined]
except ImportError:
    _Events = _PythonEvents


class SuiteLoader(_SuiteComposer, _Events):  # type: ignore[misc]
    """Reads one suite document: libyaml (or PyYAML's) events, our composer and resolver."""

    def __init__(self, text: str, max_items: Mapping[str, int] = _NO_LIMITS) -> None:
        _Events.__init__(self, text)
        _SuiteComposer.__init__(self, max_items)


_SuiteComposer.add_implicit_resolver(
    _YAML + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# The bare word null stays a string: fio users write `ioengine: null` for the null engine, and no
# suite key needs YAML's "nothing" spelled as a word (`~` or an empty value still is).
_SuiteComposer.add_implicit_resolver(_YAML + "null", re.compile(r"^(?:~|)$"), ["~", ""])
# No leading zeros: '0777' is not silently octal, and '007' is not silently 7.
_SuiteComposer.add_implicit_resolver(
    _YAML + "int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))
_SuiteComposer.add_implicit_resolver(
    _YAML + "float",
    re.compile(r"^[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
    list("-+.0123456789"))
_SuiteComposer.add_implicit_resolver(_MERGE_TAG, re.compile(r"^<<$"), ["<"])

# What YAML itself cannot hold: C0 controls but tab and newlines, DEL, C1 controls but NEL,
# surrogates, U+FFFE/U+FFFF.
_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _mark(node: yaml.Node) -> Mark:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _position(text: str, index: int) -> Mark:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def _tag_text(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


def _shown(text: str, limit: int = 40) -> str:
    """A value as quoted in a message, cut short: messages stay readable whatever the input."""
    return shown(text, limit)


def _character_name(c: str) -> str:
    return "a NUL character" if c == "\0" else f"the control character U+{ord(c):04X}"


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
    """Turns a composed node tree into Marked containers, collecting problems.

    Problems with the document's meaning (duplicate keys, a bad merge) let the rest be
    built and checked; problems that make a value unreadable (a tag, a NUL, a number too
    long) are ``fatal``: nothing is validated, so no follow-up message blames a value that
    was never read.
    """

    def __init__(self, loader: SuiteLoader, filename: str) -> None:
        self.loader = loader
        self.filename = filename
        self.problems: list[Problem] = []
        self.fatal = False
        self._active: set[int] = set()  # collections being built, to stop recursive aliases

    def problem(self, mark: Mark, path: Sequence[PathKey], message: str, *,
                fatal: bool = False) -> None:
        self.problems.append(Problem(self.filename, mark[0], mark[1], format_path(path), message))
        self.fatal = self.fatal or fatal

    def build(self, node: yaml.Node, path: tuple[PathKey, ...], *, key: bool = False) -> Any:
        if node.tag not in _ALLOWED_TAGS:
            self.problem(_mark(node), path, f"the YAML tag '{_shown(_tag_text(node.tag))}' is "
                         "not allowed: a suite holds only strings, numbers, booleans, lists "
                         "and mappings", fatal=True)
            return None
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path, key=key)
        if id(node.value) in self._active:
            self.problem(_mark(node), path, "recursive alias: the anchor contains this alias "
                         "of itself", fatal=True)
            return None
        self._active.add(id(node.value))
        try:
            if isinstance(node, yaml.SequenceNode):
                out = MarkedList(mark=_mark(node))
                for i, item in enumerate(node.value):
                    out.append(self.build(item, (*path, i)))
                    out.marks.append(_mark(item))
                return out
            assert isinstance(node, yaml.MappingNode)
            return self.mapping(node, path)
        finally:
            self._active.discard(id(node.value))

    def scalar(self, node: yaml.ScalarNode, path: tuple[PathKey, ...], *, key: bool) -> Any:
        text, tag = node.value, node.tag
        if tag == _MERGE_TAG:  # '<<' anywhere but as a key is just the text
            return text
        if tag in (_YAML + "int", _YAML + "float") and len(text) > MAX_NUMBER_CHARS:
            self.problem(_mark(node), path, f"a number of {len(text)} characters is too long "
                         f"(at most {MAX_NUMBER_CHARS})", fatal=True)
            return None
        # An explicit tag must say what this resolver would read anyway: '!!int 0x10' or
        # '!!bool yes' would bring back the YAML 1.1 readings the resolver avoids.
        if tag != _YAML + "str" and self.loader.resolve(yaml.ScalarNode, text,
                                                        (True, False)) != tag:
            self.problem(_mark(node), path, f"'{_shown(text)}' is not a valid "
                         f"{_tag_text(tag)}", fatal=True)
            return None
        try:
            value = self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            self.problem(_mark(node), path, f"cannot read '{_shown(text)}': {exc}", fatal=True)
            return None
        # Keys end up in messages and nothing else checks them; each value is checked by
        # the rule of its field (a NUL in a path is refused there).
        if key and isinstance(value, str):
            if bad := _UNPRINTABLE.search(value):
                self.problem(_mark(node), path, f"{_character_name(bad.group())} is not "
                             "allowed in a key", fatal=True)
                return None
            if len(value) > MAX_KEY_CHARS:
                self.problem(_mark(node), path, f"a key of {len(value)} characters is too "
                             f"long (at most {MAX_KEY_CHARS}): '{_shown(value)}'", fatal=True)
                return None
        return value

    def mapping(self, node: yaml.MappingNode, path: tuple[PathKey, ...]) -> MarkedMap:
        out = MarkedMap(mark=_mark(node))
        merged: list[MarkedMap] = []
        merge: tuple[yaml.Node, yaml.Node] | None = None  # the first '<<' key and its value
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                if merge is not None:  # a duplicate key like any other; the first is kept
                    self.problem(_mark(key_node), path, f"duplicate key '<<' (first defined on "
                                 f"line {_mark(merge[0])[0]}): merge several mappings with "
                                 f"one key, {self.merge_hint(merge[1], value_node)}")
                    continue
                merge = key_node, value_node
                merged += self.merge_sources(value_node, path)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problem(_mark(key_node), path, "a key must be a plain value, not a "
                             "list or mapping")
                continue
            key = self.build(key_node, path, key=True)
            if key is None and self.fatal:
                continue
            if key in out:
                self.problem(_mark(key_node), (*path, key),
                             f"duplicate key '{_shown(str(key))}' (first defined on line "
                             f"{out.marks[key][0]})")
                continue
            out[key] = self.build(value_node, (*path, key))
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

    def merge_hint(self, *values: yaml.Node) -> str:
        """``'<<: [*a, *b]'``: the sources of several '<<' keys as one list of aliases."""
        items = [item for value in values
                 for item in (value.value if isinstance(value, yaml.SequenceNode) else [value])]
        names = [f"*{_shown(self.loader.aliases[id(item)])}" if id(item) in self.loader.aliases
                 else "..." for item in items]
        return f"'<<: [{', '.join(names)}]'"

    def merge_sources(self, node: yaml.Node, path: tuple[PathKey, ...]) -> list[MarkedMap]:
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in items:
            if not isinstance(item, yaml.MappingNode):
                self.problem(_mark(item), path, "'<<' merges only mappings")
                continue
            value = self.build(item, path)
            if isinstance(value, MarkedMap):
                sources.append(value)
        return sources


def _yaml_message(exc: yaml.YAMLError) -> str:
    """What the parser refused, as said to the user."""
    if "maximum nesting depth" in str(exc):
        # The parser's own limit (PyYAML 6.0.4 and later), met before ours when it scans ahead
        # through the opening brackets: the same refusal as ours, in the same words.
        return f"lists and mappings are nested more than {MAX_DEPTH} levels deep"
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return "invalid YAML: " + (": ".join(parts) or "the parser gave no reason")
    return f"invalid YAML: {exc}"


def _check_text(text: str, filename: str) -> None:
    """Refuse, with a position, what no parser should be given."""
    if len(text) > MAX_FILE_BYTES:
        raise SuiteError.single(filename, f"the file has {len(text)} characters; a suite may "
                                f"have at most {MAX_FILE_BYTES}")
    if bad := _UNPRINTABLE.search(text):
        line, col = _position(text, bad.start())
        raise SuiteError.single(filename, f"{_character_name(bad.group())} is not allowed in "
                                "a suite file", line, col)


def load_yaml_text(text: str, filename: str = "<string>") -> MarkedMap:
    """Parse a suite document; raise SuiteError with positions for syntax errors."""
    root, problems = load_yaml_lenient(text, filename)
    if problems:
        raise SuiteError(problems)
    return root


def load_yaml_lenient(text: str, filename: str = "<string>", *,
                      max_items: Mapping[str, int] = _NO_LIMITS
                      ) -> tuple[MarkedMap, list[Problem]]:
    """Parse a suite document, returning the tree and any problems that did not stop it.

    Syntax errors and the refusals of the module docstring raise SuiteError, and so does a
    top-level list with more items than ``max_items`` allows its key (``{'workloads':
    10000}``), as soon as the first item too many is read. Duplicate keys are problems: the
    first value is kept so that the rest of the document can still be checked.
    """
    _check_text(text, filename)
    loader = SuiteLoader(text, max_items)
    try:
        try:
            node = loader.get_single_node()
        except _Refused as exc:
            raise SuiteError.single(filename, exc.message, *exc.mark, exc.path) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
            raise SuiteError.single(filename, _yaml_message(exc), line, col) from None
        except yaml.YAMLError as exc:
            raise SuiteError.single(filename, _yaml_message(exc)) from None
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
    if builder.fatal or root is None:
        raise SuiteError(builder.problems)
    return root, builder.problems


def read_suite_text(path: Path | str, limit: int = MAX_FILE_BYTES,
                    what: str = "a suite") -> str:
    """The text of a suite file (or another input file, ``what``): UTF-8 (a BOM is allowed),
    at most ``limit`` bytes.

    An undecodable byte is reported at its line and column.
    """
    filename = str(path)
    try:
        data = read_input(path, limit + 1)  # a FIFO that blocks never holds an interrupt
    except OSError as exc:
        raise SuiteError.single(filename, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SuiteError.single(filename, f"the file is larger than {limit} bytes, "
                                f"the most {what} may have")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[line_start:exc.start].decode("utf-8", "replace")) + 1
        raise SuiteError.single(filename, f"the file is not UTF-8: byte 0x{data[exc.start]:02x} "
                                "cannot be decoded", line, col) from None


def load_yaml(path: Path | str) -> MarkedMap:
    """Read and parse a suite file."""
    return load_yaml_text(read_suite_text(path), str(path))


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
