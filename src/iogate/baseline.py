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

What a baseline holds (:func:`record`, :func:`promote`): the cases that passed, since a
later run is judged against it as the normal to keep; ``--save-baseline-all`` (``iogate
baseline promote --all``) takes failed ones too, every case measured in full. Every case
left out is named with its outcome (:class:`LeftOut`, :func:`left_out_text`).

Choosing the entry a run is judged against (:meth:`Baseline.choose`): the entries of the
case that satisfy the caller's criteria (``--baseline-match firmware=1.2``), and among them
the one that shares the most environment facts with the run. Several equally close entries
are refused as ambiguous, and so is a case with no entry; every fact in which the chosen
entry differs from the run, and which the criteria did not ask for, is reported.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate import ids, inputs
from iogate.errors import IogateError
from iogate.files import OutputError, write_whole
from iogate.metrics import parse_metric
from iogate.outcome import SCHEMA_VERSION

FORMAT = "iogate-baseline"
VERSION = 1
# The facts that decide whether two measurements are comparable for firmware gating.
ENVIRONMENT_KEYS = ("device_model", "firmware", "host", "kernel", "iogate_version")
# Outcomes whose metrics are whole measurements; errors and interruptions are left out.
MEASURED_OUTCOMES = ("passed", "failed")
# What --save-baseline records: the cases that passed.
PASSED_OUTCOMES = ("passed",)


def read_json(path: str | Path) -> Any:
    """A results document's or a baseline file's JSON (:func:`iogate.inputs.read_json`: its
    size, nesting and numbers bounded); any problem is a BaselineError naming the file."""
    try:
        return inputs.read_json(path, "a results document or baseline file")
    except inputs.InputError as exc:
        raise BaselineError(exc.path, exc.problem) from None


class BaselineError(IogateError):
    """A baseline file (or document) cannot be used; the message names it and says why."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class BaselineMatchError(BaselineError):
    """No entry of the baseline fits a case, or several fit it equally well: the caller's
    choice is missing (a usage error). The message lists the entries to choose from."""


# Criteria on entries: environment fact -> the value wanted (None: not recorded).
Criteria = Mapping[str, str | None]
MATCH_HINT = "--baseline-match KEY=VALUE (pytest: --iogate-baseline-match)"
_CRITERION_START = re.compile(r",(?=\s*(?:" + "|".join(ENVIRONMENT_KEYS) + r")\s*=)")


def parse_match(texts: Iterable[str]) -> dict[str, str | None]:
    """Criteria from ``KEY=VALUE`` texts, each holding one or several comma-separated pairs
    (a comma inside a value stays there). An empty VALUE matches a fact not recorded.
    Raises ValueError naming the text and the valid keys."""
    out: dict[str, str | None] = {}
    for text in texts:
        for part in _CRITERION_START.split(text):
            key, equals, value = part.partition("=")
            key = key.strip()
            if not equals or not key:
                raise ValueError(f"'{part}' is not KEY=VALUE, e.g. firmware=1.2")
            if key not in ENVIRONMENT_KEYS:
                raise ValueError(f"unknown key '{key}' in '{part}': an entry records "
                                 f"{', '.join(ENVIRONMENT_KEYS)}")
            wanted = value.strip() or None
            if key in out and out[key] != wanted:
                raise ValueError(f"{key} is asked for twice, as {_shown(out[key])} and "
                                 f"{_shown(wanted)}: an entry has one {key}")
            out[key] = wanted
    return out


def _shown(value: str | None) -> str:
    return "(not recorded)" if value is None else f"'{value}'"


def describe_environment(environment: Mapping[str, str | None]) -> str:
    """``device_model=X firmware=1.2 ...`` as --baseline-match takes it; an empty value is
    a fact not recorded."""
    return " ".join(f"{k}={environment.get(k) or ''}" for k in ENVIRONMENT_KEYS)


def _criteria_text(criteria: Criteria) -> str:
    return ", ".join(f"{k}={v or ''}" for k, v in criteria.items())


@dataclass(frozen=True)
class Choice:
    """The entry a case is judged against, and how it was chosen."""

    entry: Entry
    # Facts in which the entry differs from the run, the criteria's keys left out:
    # key -> (the entry's value, the run's value).
    differs: dict[str, tuple[str | None, str | None]]
    candidates: int  # entries of the case that satisfied the criteria

    def warning(self) -> str | None:
        """What differs between the entry and the run, and why this entry; None when the
        entry was recorded in the run's environment (or differs only where asked)."""
        if not self.differs:
            return None
        what = "; ".join(f"{k} {_shown(old)} in the baseline, {_shown(new)} in this run"
                         for k, (old, new) in self.differs.items())
        why = (f", the closest of {self.candidates} entries for this case (it shares the "
               "most environment facts with this run)" if self.candidates > 1 else "")
        pin = ",".join(f"{k}={old or ''}" for k, (old, _) in self.differs.items())
        return (f"judged against a baseline entry from another environment{why}: {what} "
                f"(to compare across these on purpose, say so with --baseline-match {pin})")


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
        return split_results(results_document, source, include_failed=True)[0]

    def merge(self, other: Baseline) -> Baseline:
        """A new baseline: this one's entries, replaced or extended by ``other``'s.

        Entries with the same key (case id and environment) are replaced in place; new keys
        are appended in ``other``'s order. Neither input changes.
        """
        return Baseline([*self._entries.values(), *other._entries.values()], self.source)

    # -- finding ----------------------------------------------------------------------------

    def for_case(self, case_id: str) -> list[Entry]:
        return [e for e in self._entries.values() if e.case_id == case_id]

    def holdings(self, case_id: str | None = None) -> list[str]:
        """The environments the file holds entries for (of ``case_id``, else of any case),
        each with how many cases it has."""
        counts: dict[str, int] = {}
        for e in self._entries.values():
            if case_id is None or e.case_id == case_id:
                text = describe_environment(e.environment)
                counts[text] = counts.get(text, 0) + 1
        return [f"{text} ({n} case{'s' if n != 1 else ''})" for text, n in counts.items()]

    def _listing(self, case_id: str | None = None) -> str:
        held = self.holdings(case_id)
        if not held:
            return "the file holds no entries"
        whose = f"for case '{case_id}' " if case_id is not None else ""
        return f"the file holds entries {whose}recorded with:\n  " + "\n  ".join(held)

    def candidates(self, case_id: str, criteria: Criteria | None = None) -> list[Entry]:
        """The entries of ``case_id`` that satisfy ``criteria``."""
        return [e for e in self.for_case(case_id) if _satisfies(e, criteria or {})]

    def require(self, case_id: str, criteria: Criteria | None = None) -> list[Entry]:
        """The entries of ``case_id`` that satisfy ``criteria``; BaselineMatchError listing
        what the file holds when there are none."""
        criteria = criteria or {}
        candidates = self.candidates(case_id, criteria)
        if not candidates:
            asked = f" recorded with {_criteria_text(criteria)}" if criteria else ""
            if self.for_case(case_id):
                listing = self._listing(case_id)
            else:
                listing = f"record one with --save-baseline; {self._listing()}"
            raise BaselineMatchError(self.source, f"no entry for case '{case_id}'{asked}; "
                                                  f"{listing}")
        return candidates

    def select(self, criteria: Criteria) -> None:
        """Refuse criteria that no entry of the file satisfies (a misspelt firmware), listing
        what the file holds; before any case runs."""
        if not criteria or any(_satisfies(e, criteria) for e in self._entries.values()):
            return
        raise BaselineMatchError(self.source, f"no entry is recorded with "
                                              f"{_criteria_text(criteria)}; "
                                              f"{self._listing()}")

    def choose(self, case_id: str, environment: Mapping[str, Any] | None,
               criteria: Criteria | None = None) -> Choice:
        """The entry to judge ``case_id`` against in ``environment``.

        Of the case's entries that satisfy ``criteria``, the one that shares the most
        environment facts (:data:`ENVIRONMENT_KEYS`) with ``environment``. Raises
        BaselineMatchError when none satisfies the criteria, or when several are equally
        close (guessing would compare the wrong measurements): the message lists the
        entries, for the caller to choose with criteria.
        """
        criteria = criteria or {}
        wanted = environment_key(environment)
        candidates = self.require(case_id, criteria)

        def shared(e: Entry) -> int:
            return sum(e.environment.get(k) == wanted[k] for k in ENVIRONMENT_KEYS)

        best = max(map(shared, candidates))
        closest = [e for e in candidates if shared(e) == best]
        if len(closest) > 1:
            apart = [k for k in ENVIRONMENT_KEYS
                     if len({e.environment.get(k) for e in closest}) > 1]
            raise BaselineMatchError(self.source, (
                f"{len(closest)} entries for case '{case_id}' are equally close to this run "
                f"({describe_environment(wanted)}); they differ in {', '.join(apart)}: "
                f"choose one with {MATCH_HINT}:\n  "
                + "\n  ".join(describe_environment(e.environment) for e in closest)))
        entry = closest[0]
        differs = {k: (entry.environment.get(k), wanted[k]) for k in ENVIRONMENT_KEYS
                   if k not in criteria and entry.environment.get(k) != wanted[k]}
        return Choice(entry, differs, len(candidates))


@dataclass(frozen=True)
class LeftOut:
    """A case of a results document that a baseline does not take, and its outcome."""

    case_id: str
    outcome: str

    def reason(self, failed_option: str) -> str:
        """``outcome (why)``; ``failed_option`` is the option that takes failed cases too."""
        if self.outcome == "failed":
            why = f"a baseline holds what passed; {failed_option} records failed cases too"
        elif self.outcome == "skipped":
            why = "not run"
        else:
            why = "not measured in full"
        return f"{self.outcome} ({why})"


def left_out_text(path: str, left: Sequence[LeftOut], failed_option: str) -> str | None:
    """What a baseline saved to ``path`` left out, a case a line (``id: outcome (why)``);
    None when nothing was."""
    if not left:
        return None
    many = "s" if len(left) != 1 else ""
    return (f"{path}: {len(left)} case{many} left out of the baseline:\n  "
            + "\n  ".join(f"{c.case_id}: {c.reason(failed_option)}" for c in left))


def split_results(results_document: Mapping[str, Any], source: str = "<results>", *,
                  include_failed: bool = False, select: str | None = None
                  ) -> tuple[Baseline, list[LeftOut]]:
    """The baseline a results document makes (:meth:`Baseline.from_results`) and the cases
    it leaves out: those that did not pass (with ``include_failed``: those not measured in
    full).
    ``select`` takes only the cases ``-k SELECT`` selects (:func:`iogate.ids.selects`); the
    others are neither taken nor left out. BaselineError for a document that is not one."""
    if not isinstance(results_document, Mapping):
        raise BaselineError(source, "not a results document: the top level is not an object")
    cases = results_document.get("cases")
    if not isinstance(cases, list):
        raise BaselineError(source, "not a results document: no 'cases' list")
    version = results_document.get("schema_version")
    if version != SCHEMA_VERSION:
        what = ("has no schema_version" if version is None
                else f"has schema_version {version!r}")
        raise BaselineError(source, f"the results document {what}; this iogate reads "
                                    f"schema_version {SCHEMA_VERSION}: compare results "
                                    "written by the same iogate version")
    shared = _mapping(results_document, "environment", source, "")
    if shared.get("iogate_version") is None and results_document.get("iogate_version"):
        shared["iogate_version"] = results_document["iogate_version"]
    taken = MEASURED_OUTCOMES if include_failed else PASSED_OUTCOMES
    entries, left = [], []
    first: dict[str, str] = {}  # case id -> where it is
    for i, case in enumerate(cases):
        where = f"cases[{i}]"
        if not isinstance(case, Mapping):
            raise BaselineError(source, f"{where}: not an object")
        case_id = case.get("id")
        if not isinstance(case_id, str) or not case_id:
            raise BaselineError(source, f"{where}: 'id' must be a non-empty string")
        if case_id in first:
            raise BaselineError(source, f"{where}: case '{case_id}' is in the document twice "
                                        f"(first at {first[case_id]}); a results document "
                                        "holds each case once (two suite files of one name "
                                        "run together? rename one)")
        first[case_id] = where
        if select and not ids.selects(case_id, select):
            continue
        outcome = case.get("outcome", "passed")
        if outcome not in taken:
            left.append(LeftOut(case_id, str(outcome)))
            continue
        environment = {**shared, **_mapping(case, "environment", source, f"{where}.")}
        entries.append(_entry_from_json(
            {"case": case_id, "environment": environment_key(environment),
             "metrics": case.get("metrics", {}), "samples": case.get("samples") or {}},
            source, where))
    return Baseline(entries, source), left


_JSON_TYPES = {str: "a string", list: "an array", bool: "true or false", int: "a number",
               float: "a number"}


def _mapping(document: Mapping[str, Any], key: str, source: str, where: str) -> dict[str, Any]:
    """``document[key]``, an object or absent (null: absent too), as a dict."""
    value = document.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise BaselineError(source, f"{where}{key} must be an object, not "
                                    f"{_JSON_TYPES.get(type(value), 'that')}")
    return dict(value or {})


def _satisfies(entry: Entry, criteria: Criteria) -> bool:
    return all(entry.environment.get(k) == v for k, v in criteria.items())


def _number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _entry_from_json(item: Any, source: str, where: str) -> Entry:
    if not isinstance(item, Mapping):
        raise BaselineError(source, f"{where}: an entry must be an object")
    case_id = item.get("case")
    if not isinstance(case_id, str) or not case_id:
        raise BaselineError(source, f"{where}: 'case' must be a non-empty string")
    case_id = ids.current(case_id)  # recorded by an earlier version, perhaps
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
    problem = _impossible(clean, repeats)
    if problem:
        raise BaselineError(source, f"{where} ({case_id}): {problem}")
    return Entry(case_id, environment_key(environment), clean, repeats)


def _impossible(metrics: Mapping[str, float], samples: Mapping[str, list[float]]) -> str | None:
    """Why these values cannot have been measured: a negative value of an iogate metric
    (every one counts, sizes, rates, durations or shares), or a latency's percentiles out
    of order. Metrics of plugins are their own business and pass."""
    measured = [*(("metrics", n, [v]) for n, v in metrics.items()),
                *(("samples", n, vs) for n, vs in samples.items())]
    for where, name, values in measured:
        try:
            parse_metric(name)
        except ValueError:
            continue
        negative = next((v for v in values if v < 0), None)
        if negative is not None:
            return (f"{where}.{name} is {negative:g}: a measured {name} is never negative; "
                    "the file is damaged, record the baseline again")
    percentiles: dict[tuple[str | None, str], list[tuple[float, str]]] = {}
    for name in metrics:
        try:
            path = parse_metric(name)
        except ValueError:
            continue
        if path.percentile is not None:
            percentiles.setdefault((path.scope, path.name), []).append((path.percentile, name))
    for ordered in percentiles.values():
        ordered.sort()
        for (_, low), (_, high) in itertools.pairwise(ordered):
            if metrics[low] > metrics[high]:
                return (f"metrics.{low} ({metrics[low]:g}) is above metrics.{high} "
                        f"({metrics[high]:g}): percentiles never fall; the file is damaged, "
                        "record the baseline again")
    return None


@dataclass(frozen=True)
class SaveBaseline:
    """Where a run stores its results as a baseline, and which cases: those that passed
    (``--save-baseline FILE``), or every case measured in full (``--save-baseline-all
    FILE``: ``include_failed``)."""

    path: str
    include_failed: bool = False


def record(path: str, results_document: Mapping[str, Any], *,
           include_failed: bool = False) -> tuple[int, list[LeftOut]]:
    """Store a results document's cases that passed (with ``include_failed``: every case
    measured in full) in the baseline ``path``; an existing file keeps its other entries
    (``--save-baseline``, ``--save-baseline-all``). The number of cases stored and those
    left out (:func:`split_results`); BaselineError naming a file that cannot be read or
    written."""
    new, left = split_results(results_document, include_failed=include_failed)
    _merged_into(path, new).save(path)
    return len(new), left


def promote(results_path: str, path: str, *, include_failed: bool = False,
            select: str | None = None) -> tuple[Baseline, int, list[LeftOut]]:
    """The baseline ``path`` with the cases of the results file ``results_path`` that passed
    (with ``include_failed``: every case measured in full; with ``select``: of those ``-k
    SELECT`` selects) merged in as :func:`record` does, to save without running them again
    (``iogate baseline promote``); with the number of cases taken and those left out.
    BaselineError when the results file or the baseline cannot be read, or the results hold
    no case ``select`` selects, or none that can be taken."""
    document = read_json(results_path)
    new, left = split_results(document, results_path, include_failed=include_failed,
                              select=select)
    if not len(new):
        if not left:
            raise BaselineError(results_path, f"no case matches -k {select!r}" if select
                                else "the results document holds no case")
        why = "; ".join(f"{c.case_id}: {c.reason('--all')}" for c in left)
        raise BaselineError(results_path, f"nothing to promote: {why}")
    return _merged_into(path, new), len(new), left


def check_merge(path: str, option: str = "save-baseline") -> None:
    """Refuse, before a run, an existing file ``path`` that the run could not merge its
    baseline into at its end (:func:`record`): not a baseline file, damaged, too large or
    too deep. An OutputError naming ``option``; a file that is not there, or not a regular
    file, is :func:`iogate.files.check_output`'s to judge."""
    if not os.path.isfile(path):
        return
    try:
        Baseline.load(path)
    except BaselineError as exc:
        raise OutputError(path, f"{exc.reason}; a run merges its baseline into the file it "
                                "names: name a baseline file, or a new one", option) from None


def _merged_into(path: str, new: Baseline) -> Baseline:
    """``new`` merged into the baseline file ``path`` when there is one."""
    return Baseline.load(path).merge(new) if Path(path).exists() else new
