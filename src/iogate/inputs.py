"""Input files: every file iogate reads for its user besides suites and job files (results
documents and baseline files, host lists, files included by a job file, power-loss state
files) is checked and read by this one module, so that no input can make iogate wait
forever, exhaust its memory or stack, or fail with anything but an :class:`InputError`
naming the file, what is wrong and what to do.

The rules, the same for every such input:

- Its size is bounded by what it is (:data:`DOCUMENT_BYTES` for a results document or a
  baseline file, :data:`HOSTS_BYTES` for a host list). A FIFO or a character device (process
  substitution, ``/dev/stdin``) is read as its data comes, in steps that an interrupt ends
  (:func:`iogate.interrupts.read_input`), and refused once it passes the bound.
- A file named from within another file, or handed to the library to read (an ``include``,
  a ``verify_state``), is a regular file (:func:`check_regular`): a FIFO there would wait for
  a writer that no one starts, a device would never end.
- JSON is nested at most :data:`MAX_JSON_DEPTH` deep, counted before it is parsed, and its
  numbers are at most :data:`MAX_NUMBER_CHARS` characters long (:func:`read_json`).
- Text is UTF-8; a byte that is not is named at its line and column.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from typing import Any

from iogate.errors import IogateError
from iogate.files import _KINDS
from iogate.interrupts import read_input
from iogate.units import format_size_exact

DOCUMENT_BYTES = 256 << 20  # a results document or baseline file; iogate's own are far smaller
HOSTS_BYTES = 1 << 20  # a host list: a host a line
# Nesting of JSON documents: iogate's own are a few levels deep; far below the depth at which
# Python's parser runs out of stack.
MAX_JSON_DEPTH = 64
MAX_NUMBER_CHARS = 100  # a number in JSON: a float's repr is at most 24 characters

# Quotes and brackets kept, every other byte deleted; braces counted as brackets.
_OTHERS = bytes(range(256)).translate(None, b'"[]{}')
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_STEP = [0] * 256  # how a byte changes the depth of nesting
_STEP[ord("[")], _STEP[ord("]")] = 1, -1
_CHUNK = 1 << 20  # brackets counted at a time, so that a document too deep ends the count soon


class InputError(IogateError):
    """An input file that cannot be used; the message names it, says why and what to do."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def _kind(mode: int) -> str | None:
    """What a file that is neither regular nor a directory is; None for those two."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def check_regular(path: str | os.PathLike[str], what: str) -> None:
    """Refuse ``path`` when it exists and is a FIFO, a device or a socket: ``what`` is read
    only from a regular file. A missing file or a directory is left to the reader to name."""
    try:
        kind = _kind(os.stat(path).st_mode)
    except OSError:
        return
    if kind is not None:
        raise InputError(path, f"not a regular file ({kind}): {what} must be a regular file, "
                               "which ends (a FIFO or a device may wait or go on forever)")


def read_bytes(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of ``path``, at most ``limit``; an InputError naming the file when it cannot
    be read or holds more (``what`` it is, in the message)."""
    try:
        data = read_input(path, limit + 1)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, f"is a directory, not {what}") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(path, f"larger than {format_size_exact(limit)}, the most {what} may "
                               "have: is it the file you meant?")
    return data


def read_text(path: str | os.PathLike[str], limit: int, what: str) -> str:
    """The text of ``path`` (UTF-8, a BOM allowed), at most ``limit`` bytes (:func:`read_bytes`)."""
    return _decoded(read_bytes(path, limit, what), path)


def _decoded(data: bytes, path: str | os.PathLike[str]) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise InputError(path, f"not UTF-8: byte 0x{data[exc.start]:02x} at line {line} "
                               f"(byte {column} of the line) cannot be decoded") from None


def too_deep(data: bytes) -> bool:
    """Whether a parser of the JSON text ``data`` would nest arrays and objects more than
    MAX_JSON_DEPTH deep, by the brackets outside strings. A text that is not JSON may be
    said too deep where a parser would have stopped sooner at its mistake."""
    # Escaped backslashes and quotes go first, so that every quote left opens or closes a
    # string; then every byte but quotes and brackets; then "" (two quotes with no bracket
    # between them: every bracket stays inside or outside strings); then what strings hold.
    kept = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_AS_BRACKETS, _OTHERS)
    kept = kept.replace(b'""', b"")
    if b'"' in kept:
        kept = b"".join(kept.split(b'"')[::2])
    # Each pass takes away the innermost pairs: brackets are gone after as many passes as
    # they nest deep, and what stays after the last pass that took some is "]"*a + "["*b.
    rest, passes = kept, 0
    while rest and passes <= MAX_JSON_DEPTH:
        fewer = rest.replace(b"[]", b"")
        if len(fewer) == len(rest):
            break
        rest, passes = fewer, passes + 1
    if passes > MAX_JSON_DEPTH:
        return True
    unclosed = len(rest) - len(rest.rstrip(b"["))
    if unclosed < len(rest) or unclosed + passes <= MAX_JSON_DEPTH:
        # A parser stops at the first "]" that closes nothing, after brackets nested at
        # most as deep as the passes; or nothing in the text nests deeper than what stays
        # open plus the passes.
        return False
    if unclosed > MAX_JSON_DEPTH:
        return True
    depth = 0  # counted bracket by bracket: as deep as the limit, or just above
    for start in range(0, len(kept), _CHUNK):
        depths = list(itertools.accumulate(map(_STEP.__getitem__, kept[start:start + _CHUNK]),
                                           initial=depth))
        if max(depths) > MAX_JSON_DEPTH:
            return True
        depth = depths[-1]
    return False


class _LongNumber(ValueError):
    """A number in JSON longer than MAX_NUMBER_CHARS characters."""


def _number(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        if len(text) > MAX_NUMBER_CHARS:
            raise _LongNumber(f"a number of {len(text)} characters ({text[:20]}...); iogate "
                              f"reads numbers of at most {MAX_NUMBER_CHARS}")
        return kind(text)
    return parse


_INT, _FLOAT = _number(int), _number(float)


def read_json(path: str | os.PathLike[str], what: str, limit: int = DOCUMENT_BYTES) -> Any:
    """The JSON document in ``path`` (``what`` it is, for messages), by the rules above; an
    InputError naming the file and what is wrong with it."""
    data = read_bytes(path, limit, what)
    if too_deep(data):
        raise InputError(path, f"nested more than {MAX_JSON_DEPTH} levels deep; {what} is "
                               "not: is it the file you meant?")
    text = _decoded(data, path)
    try:
        return json.loads(text, parse_int=_INT, parse_float=_FLOAT)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc.msg} at line {exc.lineno} column "
                               f"{exc.colno}") from None
    except _LongNumber as exc:
        raise InputError(path, f"not {what}: {exc}") from None
