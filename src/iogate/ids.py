"""Case ids: a case's id outside its suite (:func:`case_id`), how a sweep point is written
in one, how ``-k`` selects by them, and the ids of earlier versions read as today's.

A case id is the workload's name, with its sweep point in brackets: ``qd[bs:4k-iodepth:32]``
(each variable and its value joined by ``:``, the variables by ``-``, in the order the sweep
writes them). Every character is one pytest's ``-k`` grammar takes in a name, so
``pytest -k "iodepth:32"`` selects by it. Ids written before this form joined a variable to
its value with ``=`` (``qd[bs=4k-iodepth=32]``); baselines, results documents and history
stores holding such ids are read through :func:`current`, so they go on pairing with the
cases that made them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Protocol


class Identified(Protocol):
    """What a case's id is made of: the suite file it comes from and its id in it (an
    :class:`iogate.spec.Case` has both)."""

    @property
    def path(self) -> PurePath: ...

    @property
    def id(self) -> str: ...

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# An id of the earlier form: its point starts with a variable joined to its value by '='.
_EARLIER = re.compile(r"(?P<head>.*\[)(?P<point>" + _NAME + r"=.*)\]\Z", re.S)
_EARLIER_JOIN = re.compile(r"(^|-)(" + _NAME + r")=")
# A sweep point in an id: the bracketed tail.
_POINT = re.compile(r"\[([^\[\]]*)\]\Z")


def case_id(case: Identified) -> str:
    """The id of a case everywhere outside its suite: ``FILE::ID``, the suite file's name and
    the case's id in it (its test id under pytest)."""
    return f"{case.path.name}::{case.id}"


def point_label(variables: Mapping[str, str]) -> str:
    """``bs:4k-iodepth:32``: the part of a case id in brackets."""
    return "-".join(f"{name}:{value}" for name, value in variables.items())


def current(case_id: str) -> str:
    """``case_id`` as this version writes it (an id of the earlier ``=`` form converted)."""
    m = _EARLIER.match(case_id)
    if m is None:
        return case_id
    return m["head"] + _EARLIER_JOIN.sub(r"\1\2:", m["point"]) + "]"


def selects(case_id: str, pattern: str) -> bool:
    """Whether ``-k PATTERN`` selects ``case_id``: the id contains the pattern, and where the
    match ends inside the sweep point, it ends at the end of a name or value
    (``iodepth:1`` selects ``iodepth:1``, not ``iodepth:16``). A pattern of the earlier
    ``=`` form reads as its ``:`` form."""
    if not pattern:
        return True
    pattern = _EARLIER_JOIN.sub(r"\1\2:", pattern) if "=" in pattern else pattern
    point = _POINT.search(case_id)
    inside = range(point.start(1), point.end(1)) if point else range(0)
    start = case_id.find(pattern)
    while start >= 0:
        end = start + len(pattern)
        if end not in inside or not pattern[-1].isalnum() or \
                not (case_id[end].isalnum() or case_id[end] in "._"):
            return True
        start = case_id.find(pattern, start + 1)
    return False
