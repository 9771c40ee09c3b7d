"""The imported suite as YAML: workloads in the order of their jobs, keys shared by every
job as ``defaults``, and comments saying where each value came from and what fio would
have done differently; every line remembers the job file line it came from.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from iogate.fio.jobfile import JobFile
from iogate.fio.translate import NAME_BAD, Entry, Workload, suite_name
from iogate.spec.models import JobFields

__all__ = ["Imported", "Origin", "render"]


@dataclass(frozen=True)
class Origin:
    """Where a line of the suite came from in the job file."""

    line: int
    what: str  # '[job] bs', or '[job]'
    file: str = ""  # the included file the line is in; "" for the job file


@dataclass
class Imported:
    """The suite's text, and for each of its lines where it came from."""

    text: str
    origins: list[Origin]  # one per line of text
    path: str


_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./+-]*")
_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_KEY_ORDER = list(JobFields.model_fields)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "~"  # the bare word null is a string in a suite (ioengine: null)
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, int) or not value.is_integer() else str(int(value))
    text = str(value)
    # Plain only when any YAML reader takes it for this very string (YAML 1.1 reads more
    # words as numbers, booleans and dates than 1.2 does: the stricter test).
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text and not _NUMBER.fullmatch(text):
        return text
    return json.dumps(text)  # JSON's double-quoted strings are YAML's too


def _value_text(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


class _Lines:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.origins: list[Origin] = []

    def add(self, line: str, origin: Origin) -> None:
        self.text.append(line)
        self.origins.append(origin)

    def comment(self, indent: str, text: str, origin: Origin) -> None:
        for part in textwrap.wrap(text, 98 - len(indent), break_on_hyphens=False,
                                  break_long_words=False) or [""]:
            self.add(f"{indent}# {part}".rstrip(), origin)


def _keys(lines: _Lines, indent: str, keys: dict[str, Entry], fallback: Origin) -> None:
    for key in sorted(keys, key=lambda k: _KEY_ORDER.index(k) if k in _KEY_ORDER else 99):
        entry = keys[key]
        origin = fallback if entry.src is None else Origin(
            entry.src.line, f"[{entry.src.section}] {entry.src.key}", entry.src.file)
        for note in entry.src.notes if entry.src is not None else ():
            lines.comment(indent, f"fio: {note}", origin)
        if entry.comment:
            lines.comment(indent, entry.comment, origin)
        lines.add(f"{indent}{key}: {_value_text(entry.value)}", origin)


def _from_global(entry: Entry) -> bool:
    return entry.src is None or entry.src.section == "global"


def render(path: str, jobfile: JobFile, workloads: list[Workload],
            description: str | None, header: list[str]) -> Imported:
    """The suite of ``workloads``: ``description`` its own, ``header`` notes said first."""
    # A key goes to the defaults when every job has it, the same, from a global section,
    # and a default can be one (expectations and steady state belong to each workload).
    shared: dict[str, Entry] = {}
    if len(workloads) > 0:
        for key, entry in workloads[0].keys.items():
            same = key in JobFields.model_fields and all(
                       key in w.keys and w.keys[key].value == entry.value
                       and w.keys[key].comment == entry.comment
                       and _from_global(w.keys[key])
                       and (entry.src is None) == (w.keys[key].src is None)
                       for w in workloads)
            if same and (entry.src is not None or len(workloads) > 1):
                shared[key] = entry
    lines = _Lines()
    top = Origin(1, "")
    source = Path(path).name
    lines.comment("", f"Imported from the fio job file {source} by iogate import. Each "
                  "workload keeps its fio job's meaning; comments say where iogate spells it "
                  "differently or where an option has no effect.", top)
    if any(w.group for w in workloads):
        lines.comment("", "Workloads of one group run together, as fio runs the jobs "
                      "between two stonewalls; the others run one after another.", top)
    if any("${" in str(e.value) for w in workloads for e in w.keys.values()):
        lines.comment("", "${VAR} is read from the environment when the suite is loaded, "
                      "with iogate's units; unlike fio, an unset variable is an error.", top)
    for section in jobfile.sections:
        if section.is_global:
            for note in section.notes:
                lines.comment("", f"fio: {note}", Origin(section.line, "[global]"))
    for note in header:
        lines.comment("", note, top)
    lines.add(f"suite: {_scalar(suite_name(Path(path).stem, 'fio-job'))}", top)
    if description:
        lines.add(f"description: {_scalar(description)}", top)
    if shared:
        lines.add("defaults:", top)
        _keys(lines, "  ", shared, top)
    # Notes that hold for every job are said once.
    common = [n for n in workloads[0].notes if all(n in w.notes for w in workloads)] \
        if len(workloads) > 1 else []
    for note in common:
        lines.comment("", f"All jobs: {note}", top)
    lines.add("workloads:", top)
    for w in workloads:
        origin = Origin(w.section.line, f"[{w.section.name}]")
        for note in w.section.notes:
            lines.comment("  ", f"fio: {note}", origin)
        title = f"[{w.section.name}], line {w.section.line}"
        if w.fio_name != w.section.name:
            title += f", named {w.fio_name}"
        if w.clone is not None:
            title += f", its clone {w.clone}"
        elif w.name != w.fio_name:
            title += f" (renamed: iogate's names are {NAME_BAD.pattern[2:-2]})"
        lines.comment("  ", f"fio job {title}", origin)
        for note in w.notes:
            if note not in common:
                lines.comment("  ", note, origin)
        lines.add(f"  - name: {_scalar(w.name)}", origin)
        if w.group:
            lines.add(f"    group: {w.group}", origin)
        _keys(lines, "    ", {k: e for k, e in w.keys.items() if k not in shared}, origin)
    return Imported("\n".join(lines.text) + "\n", lines.origins, path)

