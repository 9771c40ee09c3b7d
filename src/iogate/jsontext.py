"""JSON text indented as ``json.dumps(obj, indent=2)`` writes it, made faster.

The standard library encodes indented JSON in pure Python, one generator per container and
a chunk per token; a results document of thousands of cases spends most of its writing time
there. :func:`iterencode` gives the same text, character for character (``ensure_ascii``,
``NaN``/``Infinity``, keys that are numbers, booleans or None, the same errors for what JSON
cannot hold), but builds each container's text with joins, and streams the outer levels so
that a large list (the cases read back from a journal) is never held as text all at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from json.encoder import encode_basestring_ascii as _string
from typing import Any

INDENT = "  "
# The levels whose containers are yielded piece by piece; deeper ones are joined whole.
STREAMED_LEVELS = 2

_float_repr = float.__repr__
_int_repr = int.__repr__
_SPECIAL = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _float(o: float) -> str:
    text = _float_repr(o)
    return _SPECIAL.get(text, text) if text[-1] > "9" else text


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return _int_repr(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _scalar(o: Any) -> str | None:
    """The text of a JSON scalar, None for a container; TypeError for anything else."""
    if isinstance(o, str):
        return _string(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return _int_repr(o)
    if isinstance(o, float):
        return _float(o)
    if isinstance(o, (list, tuple, dict)):
        return None
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _value(o: Any, level: int, markers: set[int]) -> str:
    t = type(o)
    if t is str:
        return _string(o)
    if t is float:
        return _float(o)
    if t is int:
        return _int_repr(o)
    if t is dict:
        return _dict(o, level, markers)
    if t is list:
        return _list(o, level, markers)
    text = _scalar(o)
    if text is not None:
        return text
    return _dict(o, level, markers) if isinstance(o, dict) else _list(o, level, markers)


def _enter(o: Any, markers: set[int]) -> int:
    ident = id(o)
    if ident in markers:
        raise ValueError("Circular reference detected")
    markers.add(ident)
    return ident


def _list(o: Any, level: int, markers: set[int]) -> str:
    if not o:
        return "[]"
    ident = _enter(o, markers)
    sep = "\n" + INDENT * (level + 1)
    parts = []
    for v in o:
        t = type(v)
        if t is str:
            parts.append(_string(v))
        elif t is float:
            parts.append(_float(v))
        elif t is int:
            parts.append(_int_repr(v))
        else:
            parts.append(_value(v, level + 1, markers))
    markers.discard(ident)
    return "[" + sep + ("," + sep).join(parts) + "\n" + INDENT * level + "]"


def _dict(o: Any, level: int, markers: set[int]) -> str:
    if not o:
        return "{}"
    ident = _enter(o, markers)
    sep = "\n" + INDENT * (level + 1)
    parts = []
    for k, v in o.items():
        key = _string(k if type(k) is str else _key(k)) + ": "
        t = type(v)
        if t is str:
            parts.append(key + _string(v))
        elif t is float:
            parts.append(key + _float(v))
        elif t is int:
            parts.append(key + _int_repr(v))
        else:
            parts.append(key + _value(v, level + 1, markers))
    markers.discard(ident)
    return "{" + sep + ("," + sep).join(parts) + "\n" + INDENT * level + "}"


def _stream(o: Any, level: int, markers: set[int]) -> Iterator[str]:
    text = _scalar(o)
    if text is not None:
        yield text
        return
    if level >= STREAMED_LEVELS:
        yield _value(o, level, markers)
        return
    is_dict = isinstance(o, dict)
    items = o.items() if is_dict else o
    if not o:
        yield "{}" if is_dict else "[]"
        return
    ident = _enter(o, markers)
    sep = "\n" + INDENT * (level + 1)
    first = True
    for item in items:
        head = ("{" if is_dict else "[") if first else ","
        first = False
        if is_dict:
            k, v = item
            yield head + sep + _string(_key(k)) + ": "
        else:
            v = item
            yield head + sep
        yield from _stream(v, level + 1, markers)
    markers.discard(ident)
    yield "\n" + INDENT * level + ("}" if is_dict else "]")


def iterencode(obj: Any) -> Iterator[str]:
    """The pieces of ``json.dumps(obj, indent=2)``, in order."""
    return _stream(obj, 0, set())


def dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=2)``."""
    return "".join(iterencode(obj))
