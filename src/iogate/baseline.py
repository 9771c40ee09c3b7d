"""Baseline files: stored results that later runs are compared with.

Owns the file format and its validation, building a baseline from a results document,
merging, and finding the entry for a case in an environment. The format::

    {"format": "iogate-baseline", "version": 1, "created": "...",
     "entries": [{"case": "smoke.suite.yaml::read",
                  "environment": {"device_model": ..., "firmware": ..., "host": ...,
                                  "kernel": ..., "iogate_version": ...},
                  "metrics": {"read.iops": 51234.0, ...},
                  "samples": {"read.iops": [50911.0, 51234.0, 51502.0], ...}}]}

``samples`` holds the per-repeat values of a metric and is empty for a case run once.
An entry's key is its case id and its environment; a file holds at most one entry per key.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.errors import IogateError

FORMAT = "iogate-baseline"
VERSION = 1
# The facts that decide whether two measurements are comparable for firmware gating.
ENVIRONMENT_KEYS = ("device_model", "firmware", "host", "kernel", "iogate_version")
DEFAULT_MATCH = ("device_model", "firmware", "host")
# Outcomes whose metrics are whole measurements; errors and interruptions are left out.
MEASURED_OUTCOMES = ("passed", "failed")



def read_json(path: str | Path) -> Any:
    """A JSON file's contents; unreadable or invalid files are BaselineErrors naming them."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(source, "no such file") from None
    except IsADirectoryError:
        raise BaselineError(source, "is a directory, not a baseline file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(source, f"cannot be read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(source, f"not JSON: {exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno}") from None

class BaselineError(IogateError):
    """A baseline file (or document) cannot be used; the message names it and says why."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


@dataclass(frozen=True)
class Entry:
    """The stored measurement of one case in one environment."""

    case_id: str
    environment: dict[str, str | None]  # exactly ENVIRONMENT_KEYS
    metrics: dict[str, float]
    repeat_samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str | None, ...]:
        return (self.case_id, *(self.environment.get(k) for k in ENVIRONMENT_KEYS))

    def value(self, metric: str) -> float | None:
        """The metric's value (the median when the case was repeated), None if not measured."""
        return self.metrics.get(metric)

    def samples(self, metric: str) -> list[float]:
        """The per-repeat values; a single-element list for a case run once; [] if absent."""
        if metric in self.repeat_samples:
            return list(self.repeat_samples[metric])
        value = self.metrics.get(metric)
        return [] if value is None else [value]

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case_id, "environment": dict(self.environment),
                "metrics": dict(self.metrics),
                "samples": {k: list(v) for k, v in self.repeat_samples.items()}}


def environment_key(environment: Mapping[str, Any] | None) -> dict[str, str | None]:
    """The environment facts that key an entry, as strings; missing facts are None.

    Each fact is read under its own name, else under ``target.<name>`` (how per-target
    facts such as ``target.device_model`` are recorded).
    """
    environment = environment or {}
    out: dict[str, str | None] = {}
    for k in ENVIRONMENT_KEYS:
        v = environment.get(k)
        if v is None:
            v = environment.get(f"target.{k}")
        out[k] = None if v is None else str(v)
    return out


class Baseline:
    """An ordered collection of entries, at most one per (case id, environment) key."""

    def __init__(self, entries: Iterable[Entry] = (), source: str = "<baseline>") -> None:
        self.source = source
        self._entries: dict[tuple[str | None, ...], Entry] = {}
        for e in entries:
            self._entries[e.key] = e

    @property
    def entries(self) -> list[Entry]:
        return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    # -- reading and writing ----------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        """Read a baseline file; any problem is a BaselineError naming the file."""
        return cls.from_document(read_json(path), str(path))

    @classmethod
    def from_document(cls, document: Any, source: str = "<baseline>") -> Baseline:
        """Validate a parsed baseline document."""
        if not isinstance(document, dict):
            raise BaselineError(source, "not a baseline file: the top level is not an object")
        kind = document.get("format")
        if kind != FORMAT:
            what = ("an iogate results document (save a baseline with --save-baseline)"
                    if "cases" in document and "schema_version" in document
                    else f"format is {kind!r}, expected '{FORMAT}'")
            raise BaselineError(source, f"not a baseline file: {what}")
        version = document.get("version")
        if version != VERSION:
            raise BaselineError(source, f"baseline version {version!r} is not supported "
                                        f"(this iogate reads version {VERSION})")
        raw = document.get("entries")
        if not isinstance(raw, list):
            raise BaselineError(source, "'entries' must be a list")
        entries = [_entry_from_json(item, source, f"entries[{i}]") for i, item in enumerate(raw)]
        seen: set[tuple[str | None, ...]] = set()
        for i, e in enumerate(entries):
            if e.key in seen:
                raise BaselineError(source, f"entries[{i}]: a second entry for case "
                                            f"'{e.case_id}' in the same environment")
            seen.add(e.key)
        return cls(entries, source)

    def to_document(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "entries": [e.to_json() for e in self._entries.values()]}

    def save(self, path: str | Path) -> None:
        """Write the file whole (:func:`iogate.files.write_whole`): readers see the old file
        or the new one, never a part."""
        from iogate.files import OutputError, write_whole

        text = json.dumps(self.to_document(), indent=2, allow_nan=False) + "\n"
        try:
            write_whole(path, text)
        except OutputError as exc:
            raise BaselineError(str(path), exc.problem) from None

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def from_results(cls, results_document: Mapping[str, Any],
                     source: str = "<results>") -> Baseline:
        """A baseline from a results document (``iogate run --json``, ``--iogate-json``).

        Cases that passed or failed are kept; errors and interruptions measured only part of
        the run and are left out. The environment comes from the document's ``environment``,
        overridden by a case's own ``environment`` when it has one (the target's device
        facts are per case). ``iogate_version`` falls back to the document's.
        """
        if not isinstance(results_document, Mapping):
            raise BaselineError(source, "not a results document: the top level is not an object")
        cases = results_document.get("cases")
        if not isinstance(cases, list):
            raise BaselineError(source, "not a results document: no 'cases' list")
        shared = dict(results_document.get("environment") or {})
        if shared.get("iogate_version") is None and results_document.get("iogate_version"):
            shared["iogate_version"] = results_document["iogate_version"]
        entries = []
        for i, case in enumerate(cases):
            where = f"cases[{i}]"
            if not isinstance(case, Mapping):
                raise BaselineError(source, f"{where}: not an object")
            if case.get("outcome", "passed") not in MEASURED_OUTCOMES:
                continue
            environment = {**shared, **dict(case.get("environment") or {})}
            entries.append(_entry_from_json(
                {"case": case.get("id"), "environment": environment_key(environment),
                 "metrics": case.get("metrics", {}), "samples": case.get("samples") or {}},
                source, where))
        return cls(entries, source)

    def merge(self, other: Baseline) -> Baseline:
        """A new baseline: this one's entries, replaced or extended by ``other``'s.

        Entries with the same key (case id and environment) are replaced in place; new keys
        are appended in ``other``'s order. Neither input changes.
        """
        return Baseline([*self._entries.values(), *other._entries.values()], self.source)

    # -- finding ----------------------------------------------------------------------------

    def for_case(self, case_id: str) -> list[Entry]:
        return [e for e in self._entries.values() if e.case_id == case_id]

    def lookup(self, case_id: str, environment: Mapping[str, Any] | None, *,
               match: Sequence[str] = DEFAULT_MATCH) -> Entry | None:
        """The entry for ``case_id`` whose environment equals ``environment`` on ``match``.

        A fact missing on either side is None and matches only None. When no entry matches
        exactly and the baseline holds exactly one entry for the case id, that entry is
        returned: a baseline recorded on one machine still applies to a run that renamed the
        host or updated the firmware (which is what a firmware gate compares). With several
        entries for the case id and none matching, the answer is None: guessing between
        environments would compare the wrong measurements.
        """
        unknown = [k for k in match if k not in ENVIRONMENT_KEYS]
        if unknown:
            raise ValueError(f"cannot match on {', '.join(unknown)}: "
                             f"an entry's environment has {', '.join(ENVIRONMENT_KEYS)}")
        wanted = environment_key(environment)
        candidates = self.for_case(case_id)
        for e in candidates:
            if all(e.environment.get(k) == wanted[k] for k in match):
                return e
        return candidates[0] if len(candidates) == 1 else None


def _number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _entry_from_json(item: Any, source: str, where: str) -> Entry:
    if not isinstance(item, Mapping):
        raise BaselineError(source, f"{where}: an entry must be an object")
    case_id = item.get("case")
    if not isinstance(case_id, str) or not case_id:
        raise BaselineError(source, f"{where}: 'case' must be a non-empty string")
    environment = item.get("environment", {})
    if not isinstance(environment, Mapping):
        raise BaselineError(source, f"{where} ({case_id}): 'environment' must be an object")
    for k in ENVIRONMENT_KEYS:
        v = environment.get(k)
        if v is not None and not isinstance(v, (str, int, float)):
            raise BaselineError(source, f"{where} ({case_id}): environment.{k} must be a "
                                        "string or null")
    metrics = item.get("metrics")
    if not isinstance(metrics, Mapping):
        raise BaselineError(source, f"{where} ({case_id}): 'metrics' must be an object")
    clean: dict[str, float] = {}
    for name, value in metrics.items():
        if value is None:  # not measured
            continue
        if not _number(value):
            raise BaselineError(source, f"{where} ({case_id}): metrics.{name} must be a "
                                        f"finite number, not {value!r}")
        clean[str(name)] = float(value)
    samples = item.get("samples", {})
    if not isinstance(samples, Mapping):
        raise BaselineError(source, f"{where} ({case_id}): 'samples' must be an object")
    repeats: dict[str, list[float]] = {}
    for name, values in samples.items():
        if (not isinstance(values, list) or not values
                or not all(_number(v) for v in values)):
            raise BaselineError(source, f"{where} ({case_id}): samples.{name} must be a "
                                        "non-empty list of finite numbers")
        repeats[str(name)] = [float(v) for v in values]
    return Entry(case_id, environment_key(environment), clean, repeats)
