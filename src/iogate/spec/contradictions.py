"""Expectations no run can meet: refused when the suite is loaded, not found out after a run.

* :func:`impossible`: one bound outside the values its metric can take. Every core metric is
  never negative (counts, rates, bytes, latencies, durations, ratios, ``@cv``), and a share
  of a whole (:data:`SHARES`: ``mix.read_pct``, ``*.bs_pct``, ``*.prio_pct``,
  ``data.dedupe_pct``, ``offsets.coverage_pct``, ``disk.util_pct``) is at most 100%; so
  ``read.iops: "< 0"`` and ``mix.read_pct: ">= 120%"`` can never pass. ``rate_pct`` (a run
  faster than asked) and ``cpu.util_pct`` (several CPUs) may exceed 100%. A plugin's
  metrics are taken to have any value: their range is the plugin's to know.
* :func:`contradictions`: bounds on one metric and statistic that leave no value between
  them, ``write.clat.p99: [">= 2ms", "<= 1ms"]``, the metric's own range included
  (``[">= 100%", "!= 100%"]`` on a share). Windowed bounds judge intervals, not the whole
  run, so two of them contradict each other only when their shares of intervals add up to
  more than all of them (some interval would have to meet both); a windowed and a
  whole-run bound never do. ``sync.clat`` and ``sync.resp`` are ``sync.lat``.

Only literal thresholds are judged: one that names ``baseline``, ``history`` or ``mean``
has no value until the run. Suite variables are expanded before (each sweep point on its
own), so ``">= ${iodepth}k"`` is a literal of its point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from iogate.expect import Expectation, format_value
from iogate.expr import shown
from iogate.metrics import SCOPES, SYNC_LATENCIES, MetricPath

__all__ = ["SHARES", "Range", "contradictions", "impossible", "value_range"]

# (scope, name) of the percent metrics that are a share of a whole: 0% to 100%.
SHARES = frozenset({("mix", "read_pct"), ("data", "dedupe_pct"), ("offsets", "coverage_pct"),
                    ("disk", "util_pct")}
                   | {(d, "bs_pct") for d in ("read", "write", "trim")}
                   | {(s, "prio_pct") for s in SCOPES})

Where = TypeVar("Where")


@dataclass(frozen=True)
class Range:
    """The values a judged quantity can take, ``lo`` to ``hi`` (both possible), and how a
    message says so."""

    lo: float
    hi: float
    about: str  # "is never negative", "is a share, from 0% to 100%"


_NEVER_NEGATIVE = Range(0.0, math.inf, "is never negative")
_SHARE = Range(0.0, 100.0, "is a share, from 0% to 100%")
_SPREAD = Range(0.0, math.inf, "(a coefficient of variation) is never negative")


def value_range(exp: Expectation) -> Range | None:
    """What the value ``exp`` judges can be; None when nothing is known (a plugin's)."""
    metric = exp.metric
    if metric.family.plugin is not None:
        return None
    if exp.stat == "cv":
        return _SPREAD
    if (metric.scope, metric.name) in SHARES:
        return _SHARE
    return _NEVER_NEGATIVE


@dataclass(frozen=True)
class _Bound:
    """One side of the values a set of comparisons leaves: ``value``, itself excluded when
    ``strict``; ``exp`` is the comparison that sets it, None for the metric's own range."""

    value: float
    strict: bool = False
    exp: Expectation | None = None


def _lower(exp: Expectation) -> _Bound | None:
    if exp.op in (">=", ">", "==") and exp.literal is not None:
        return _Bound(exp.literal, exp.op == ">", exp)
    return None


def _upper(exp: Expectation) -> _Bound | None:
    if exp.op in ("<=", "<", "==") and exp.literal is not None:
        return _Bound(exp.literal, exp.op == "<", exp)
    return None


def _tighter_lower(a: _Bound, b: _Bound) -> _Bound:
    return b if (b.value, b.strict) > (a.value, a.strict) else a


def _tighter_upper(a: _Bound, b: _Bound) -> _Bound:
    return b if (b.value, not b.strict) < (a.value, not a.strict) else a


def _empty(lo: _Bound, hi: _Bound) -> bool:
    return lo.value > hi.value or (lo.value == hi.value and (lo.strict or hi.strict))


def _quoted(exp: Expectation) -> str:
    return f"'{shown(exp.text)}'"


def _outside(exp: Expectation, limits: Range | None) -> bool:
    """Whether the literal threshold of ``exp`` leaves no value of ``limits``."""
    if limits is None or exp.literal is None or exp.op == "!=":
        return False
    low, high = _lower(exp), _upper(exp)
    return (low is not None and _empty(low, _Bound(limits.hi))) or (
        high is not None and _empty(_Bound(limits.lo), high))


def impossible(exp: Expectation) -> str | None:
    """Why no run can meet ``exp`` whatever it measures, or None: its literal threshold is
    outside the values its metric can take."""
    limits = value_range(exp)
    if limits is None or exp.literal is None or not _outside(exp, limits):
        return None
    t, kind = exp.literal, exp.kind
    whole = f"{exp.key} {limits.about}, so no run makes it {_quoted(exp)}"
    if t > limits.hi or (t == limits.hi and exp.op == ">"):
        top = format_value(kind, limits.hi)
        fix = f" ('>= {top}')" if exp.op == ">" and t == limits.hi else ""
        return f"{whole}: {top} is the most it can be{fix}"
    least = format_value(kind, limits.lo)
    if t < limits.lo and limits.lo <= -t <= limits.hi:
        within = "" if exp.window is None else f" {exp.window.describe()}"
        return f"{whole}; did you mean '{exp.op} {format_value(kind, -t)}{within}'?"
    fix = f" ('== {least}')" if exp.op == "<" and t == limits.lo else ""
    return f"{whole}: {least} is the least it can be{fix}"


def _normal(metric: MetricPath) -> MetricPath:
    """One path for the names of one value: ``sync.clat`` and ``sync.resp`` are sync.lat."""
    if metric.scope == "sync" and metric.name in SYNC_LATENCIES:
        return replace(metric, name="lat")
    return metric


@dataclass(frozen=True)
class _Judged(Generic[Where]):
    exp: Expectation
    where: Where
    order: int  # place in the order given


def contradictions(placed: Sequence[tuple[Expectation, Where]]
                   ) -> list[tuple[Where, str]]:
    """Bounds on one metric and statistic that no value meets together, each set said once,
    at the last of its bounds in ``placed`` (which is in the file's order), naming the
    others by line. ``placed`` holds one key's expectations (expect, or per_host) with their
    locations; bounds :func:`impossible` refuses alone are left to it."""
    groups: dict[tuple[MetricPath, str, bool], list[_Judged[Where]]] = {}
    for order, (exp, where) in enumerate(placed):
        if exp.literal is None or _outside(exp, value_range(exp)):
            continue  # impossible() says it
        key = (_normal(exp.metric), exp.stat, exp.window is not None)
        groups.setdefault(key, []).append(_Judged(exp, where, order))
    out: list[tuple[int, Where, str]] = []
    for (_, _, windowed), items in groups.items():
        if not windowed:
            found = _conflict(items)
            if found is not None:
                out.append(found)
            continue
        for i, a in enumerate(items):  # pairs whose shares of intervals must overlap
            for b in items[i + 1:]:
                assert a.exp.window is not None
                assert b.exp.window is not None
                if a.exp.window.share + b.exp.window.share > 1:
                    found = _conflict([a, b], windowed=True)
                    if found is not None:
                        out.append(found)
    return [(where, message) for _, where, message in sorted(out, key=lambda o: o[0])]


def _conflict(items: list[_Judged[Where]], *, windowed: bool = False
              ) -> tuple[int, Where, str] | None:
    """(order, where, message) when no value meets every bound of ``items`` and the metric's
    range; None when one does."""
    first = items[0].exp
    limits = value_range(first) or Range(-math.inf, math.inf, "")
    lo, hi = _Bound(limits.lo), _Bound(limits.hi)
    for item in items:
        if (b := _lower(item.exp)) is not None:
            lo = _tighter_lower(lo, b)
        if (b := _upper(item.exp)) is not None:
            hi = _tighter_upper(hi, b)
    excluded = None
    if not _empty(lo, hi):
        excluded = next((i.exp for i in items if i.exp.op == "!=" and lo.value == hi.value
                         and i.exp.literal == lo.value), None)
        if excluded is None:
            return None
    # In the order written; '== 5' is both bounds, and is said once.
    bounds = [b.exp for b in (lo, hi) if b.exp is not None]
    by_id = {id(i.exp): i for i in items}
    said = sorted({id(e): by_id[id(e)] for e in (*bounds, excluded) if e is not None}.values(),
                  key=lambda i: i.order)
    last = said[-1]
    return last.order, last.where, _message(last.exp, [i.exp for i in said], lo, hi,
                                            excluded, limits, windowed)


def _message(exp: Expectation, blamed: list[Expectation], lo: _Bound, hi: _Bound,
             excluded: Expectation | None, limits: Range, windowed: bool) -> str:
    """What is wrong with ``exp``, the last of ``blamed``, and how to put it right."""
    def named(e: Expectation) -> str:
        return _quoted(e) + (f" (line {e.line})" if e.line and e.line != exp.line else "")

    kind = exp.kind
    own = "" if lo.exp is not None and hi.exp is not None else \
        f" ({exp.key} {limits.about})"
    if excluded is not None:
        rest = [named(e) for e in blamed if e is not excluded]
        leave = " and ".join(rest) + (" leave" if len(rest) > 1 else " leaves")
        return (f"{named(excluded)} excludes {format_value(kind, lo.value)}, the only value "
                f"{leave}{own}: no run can pass them all; drop one")
    why = ""
    if windowed:
        shares = " and ".join(e.window.text for e in blamed if e.window is not None)
        why = (f"; {shares} of the intervals add up to more than all of them, so some "
               "interval would have to meet both")
    said = " and ".join(named(e) for e in blamed)
    # Each bound alone is possible (impossible() says the others), so both are the user's.
    assert lo.exp is not None
    assert hi.exp is not None
    fix = "; drop one, or widen them"
    if lo.value > hi.value and lo.exp.op in (">=", ">") and hi.exp.op in ("<=", "<"):
        flip = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}

        def swapped(e: Expectation, value: float) -> str:
            within = "" if e.window is None else f" {e.window.describe()}"
            return f"'{flip[e.op]} {format_value(kind, value)}{within}'"
        fix = f"; did you mean {swapped(hi.exp, hi.value)} and {swapped(lo.exp, lo.value)}?"
    return f"{said} leave no value between them, so no run can pass both{why}{fix}"
