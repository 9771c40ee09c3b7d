"""Expectations: ``read.clat.p99: "<= 1.2ms"`` parsed, checked against measured values.

An expectation is ``OP EXPR [in SHARE [of INTERVAL]]`` with OP one of ``>= <= > < == !=``.

EXPR is an arithmetic expression (:mod:`iogate.expr`: ``+ - * /``, parentheses) over
numbers with units and three names: ``baseline`` (the baseline's value of the same metric
and statistic), ``history`` (the metric's level over the last stable stretch of the case's
recorded runs, :mod:`iogate.changes`) and ``mean`` (the whole-run value, for windowed
expectations). Units must
fit the metric's kind (a latency takes ``ms``, an IOPS figure ``k``, a bandwidth
``MiB/s``, a percentage ``5%`` or a plain ``5``, a ratio a plain decimal such as
``0.55``); this is checked when the suite is loaded. ``baseline + 10%`` is
``baseline * 1.1``: a percentage added to or subtracted from a value is that share of it,
except for percent metrics, where ``%`` is the metric's unit (percentage points).

The metric key may name a statistic over repeats, ``read.iops@min`` (median by default;
``@cv`` is a percentage). A window (``in 99% of 1s``, ``in all``) asks that share of the
run's intervals (1 s unless given, at least 10 ms) to satisfy the comparison on their own.
An expectation that ends in ``if measured`` is optional: where its metric cannot be measured
on the target it is not judged (never a pass, never a failure), elsewhere it is judged as
usual.
"""

from __future__ import annotations

import contextlib
import difflib
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from iogate import expr
from iogate.expr import printable, shown
from iogate.metrics import (
    LATENCIES,
    Kind,
    MetricPath,
    has_series,
    parse_metric,
    series_paths,
    split_statistic,
)
from iogate.stats import INTERIM_SHARE, RANK_ALPHA, Evidence
from iogate.units import (
    UnitError,
    check_ascii,
    format_bandwidth,
    format_count,
    format_duration,
    format_size,
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_size,
)

__all__ = [
    "NAMES",
    "OPERATORS",
    "Check",
    "Expectation",
    "ExpectationError",
    "Tally",
    "Window",
    "evaluate",
    "evaluate_window",
    "format_value",
    "parse_expectation",
    "tally_window",
]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
    "==": operator.eq, "!=": operator.ne,
}


class ExpectationError(ValueError):
    """An expectation cannot be understood; the message says what to write."""

    def __init__(self, message: str) -> None:
        # Messages quote what was written; a NUL or other control character in it is
        # escaped (\\x00), never passed on raw to a terminal or a report.
        super().__init__(printable(message))


# -- values per kind ----------------------------------------------------------------------

_DECIMAL = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*\Z", re.ASCII)


def parse_number(text: str) -> float:
    """A plain decimal without a unit: ``0.55``, ``3``."""
    check_ascii(text)
    m = _DECIMAL.match(text)
    if m is None:
        raise UnitError(f"'{shown(text)}' is not a plain number")
    return float(m.group(1))


def parse_percent(text: str, *, sign: bool = False) -> float:
    """A percentage, ``5%`` or plainly ``5``; with sign=True the ``%`` is required."""
    check_ascii(text)
    stripped = text.strip()
    if stripped.endswith("%"):
        return parse_number(stripped[:-1])
    if sign:
        raise UnitError(f"'{shown(text)}' is not a percentage")
    return parse_number(stripped)


def _significant(value: float) -> str:
    """Three significant digits without an exponent or trailing zeros: 0.503, 5.2, 81.2, 1234."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, min(6, 2 - math.floor(math.log10(abs(value)))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_PARSERS: dict[Kind, Callable[[str], float]] = {
    Kind.DURATION: lambda t: parse_duration(t, bare=None),
    Kind.IOPS: parse_count,
    Kind.COUNT: parse_count,
    Kind.BANDWIDTH: parse_bandwidth,
    Kind.BYTES: parse_size,
    Kind.PERCENT: parse_percent,
    Kind.NUMBER: parse_number,
}
_EXAMPLES = {Kind.DURATION: "<= 1.2ms", Kind.IOPS: ">= 250k", Kind.COUNT: "== 0",
             Kind.BANDWIDTH: ">= 400MiB/s", Kind.BYTES: ">= 1GiB", Kind.PERCENT: "<= 5%",
             Kind.NUMBER: "<= 0.55"}


def format_value(kind: Kind, value: float) -> str:
    """A measured or expected value in the units of its kind, for humans."""
    if kind is Kind.DURATION:
        return format_duration(value)
    if kind is Kind.BANDWIDTH:
        return format_bandwidth(value)
    if kind is Kind.BYTES:
        return format_size(value)
    if kind is Kind.PERCENT:
        return _significant(value) + "%"
    if kind is Kind.NUMBER:
        return _significant(value)
    return format_count(value)


def _noun(metric: MetricPath, kind: Kind) -> str:
    if kind is Kind.DURATION:
        return "a latency" if metric.name in LATENCIES else "a duration"
    return {Kind.IOPS: "an IOPS figure", Kind.COUNT: "a count", Kind.BANDWIDTH: "a bandwidth",
            Kind.BYTES: "a size in bytes", Kind.PERCENT: "a percentage",
            Kind.NUMBER: "a plain number"}[kind]


def _what_literal_is(text: str) -> str | None:
    """Which kind of quantity ``text`` looks like, to explain a mismatch."""
    for noun, parse in (("a duration", lambda t: parse_duration(t, bare=None)),
                        ("a bandwidth", parse_bandwidth), ("a count", parse_count),
                        ("a size", parse_size),
                        ("a percentage", lambda t: parse_percent(t, sign=True))):
        try:
            parse(text)
            return noun
        except UnitError:
            continue
    return None


# -- expressions -------------------------------------------------------------------------

NAMES = ("baseline", "history", "mean")  # the names an expectation may refer to
_EMPTY: Mapping[str, float] = MappingProxyType({})
# Stand-in values for the names when a suite is loaded: only the units are checked then.
_PROBE = Fraction(7919, 7907)


def _expr_kind(kind: Kind) -> expr.Kind:
    """The expression kind of a metric's values. Every kind has a dimension, even those
    whose unit is a bare number (IOPS, counts, ratios): ``baseline``, ``mean`` and a literal
    with a unit are values of the metric, so ``baseline * baseline`` (an IOPS figure
    squared) and ``baseline / baseline`` (no unit at all) are refused as thresholds."""
    def literal(text: str) -> Fraction:
        value = _PARSERS[kind](text)
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    return expr.Kind(_NOUN[kind], literal, None if kind is Kind.DURATION else Fraction(1),
                     percent=kind is Kind.PERCENT)


_NOUN = {Kind.DURATION: "a duration", Kind.IOPS: "an IOPS figure", Kind.COUNT: "a count",
         Kind.BANDWIDTH: "a bandwidth", Kind.BYTES: "a size in bytes",
         Kind.PERCENT: "a percentage", Kind.NUMBER: "a plain number"}
_EXPR_KINDS = {k: _expr_kind(k) for k in Kind}


def _literal_error(literal: str, exc: UnitError, metric: MetricPath, kind: Kind,
                   text: str) -> ExpectationError:
    """Why a literal does not fit the metric, with an example of what does."""
    example = _EXAMPLES[kind]
    noun = _noun(metric, kind)
    if kind is Kind.DURATION and _DECIMAL.match(literal):
        return ExpectationError(f"'{shown(literal)}' has no unit, but {metric.text} is {noun}; "
                                f"write e.g. '{example}'")
    is_a = _what_literal_is(literal)
    if is_a is None or "ambiguous" in str(exc):
        return ExpectationError(f"'{shown(text)}': {exc}")
    return ExpectationError(f"'{shown(literal)}' is {is_a}, but {metric.text} is {noun}; "
                            f"write e.g. '{example}'")


def _check_units(node: expr.Node, metric: MetricPath, kind: Kind, text: str) -> None:
    """Every literal with a unit must be of the metric's kind (a share ``10%`` excepted)."""
    only = isinstance(node, expr.Number)
    if only and isinstance(node, expr.Number) and not node.unit and kind is Kind.DURATION:
        raise _literal_error(node.text, UnitError("no unit"), metric, kind, text)
    for lit in expr.literals_in(node):
        unit = lit.unit.strip()
        if not unit or (unit == "%" and kind is not Kind.PERCENT and not only):
            continue
        try:
            _PARSERS[kind](lit.text)
        except UnitError as exc:
            raise _literal_error(lit.text, exc, metric, kind, text) from None


def _compute(node: expr.Node, kind: Kind, names: Mapping[str, float | Fraction],
             text: str) -> float:
    try:
        return float(expr.evaluate(node, kind=_EXPR_KINDS[kind],
                                   names={k: Fraction(v) for k, v in names.items()}))
    except expr.ExprError as exc:
        raise ExpectationError(f"'{shown(text)}': {exc}") from None


# -- windows ------------------------------------------------------------------------------

DEFAULT_INTERVAL_NS = 1_000_000_000
MIN_INTERVAL_NS = 10_000_000
_WINDOW = re.compile(r"\s*(?:(?P<all>all)|(?P<pct>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%)"
                     r"(?:\s+of\s+(?P<interval>\S.*?))?\s*\Z", re.ASCII)


@dataclass(frozen=True)
class Window:
    """``in SHARE of INTERVAL``: the share of intervals (0 < share <= 1) that must pass."""

    share: float
    interval_ns: int = DEFAULT_INTERVAL_NS
    text: str = "all"  # the share as written: '99%' or 'all'

    def needed(self, intervals: int) -> int:
        """Intervals that must pass out of ``intervals``: ceil(share * intervals), exactly."""
        return math.ceil(Fraction(repr(self.share)) * intervals)

    def describe(self) -> str:
        of = "" if self.interval_ns == DEFAULT_INTERVAL_NS else \
            f" of {format_duration(self.interval_ns)}"
        return f"in {self.text}{of}"


def _parse_window(text: str, whole: str) -> Window:
    m = _WINDOW.match(text)
    if m is None:
        raise ExpectationError(f"'{shown(whole)}': after 'in', write a share of intervals like "
                               "'in 99%', 'in 95% of 1s' or 'in all'")
    if m.group("all"):
        share, written = Fraction(1), "all"
    else:
        share = Fraction(m.group("pct")) / 100
        written = f"{m.group('pct')}%"
        if not 0 < share <= 1:
            raise ExpectationError(f"'{shown(whole)}': the share of intervals must be above 0% "
                                   f"and at most 100%, got {shown(written)}")
    interval = DEFAULT_INTERVAL_NS
    if m.group("interval"):
        given = m.group("interval")
        if len(given) > expr.SHOWN_CHARS:  # no duration is this long; keep the message short
            raise ExpectationError(f"'{shown(whole)}': the interval '{shown(given)}' is not a "
                                   "duration like 1s or 500ms")
        try:
            interval = parse_duration(given, bare=None)
        except UnitError as exc:
            raise ExpectationError(f"'{shown(whole)}': the interval: {exc}") from None
        if interval < MIN_INTERVAL_NS:
            raise ExpectationError(f"'{shown(whole)}': the interval must be at least 10ms, got "
                                   f"{format_duration(interval)}")
    return Window(float(share), interval, written)


# -- expectations -------------------------------------------------------------------------

_OPERATOR = re.compile(r"\s*(>=|<=|==|!=|>|<)", re.ASCII)
_IN = re.compile(r"\s+in(?=\s|\Z)", re.ASCII)
_IF_MEASURED = re.compile(r"\s+if\s+measured\s*\Z", re.ASCII)


@dataclass(frozen=True)
class Expectation:
    """``metric[@stat] OP EXPR [in WINDOW]``.

    ``literal`` is the threshold in the metric's base unit when EXPR has no names;
    otherwise :meth:`threshold` computes it from the names' values.
    """

    metric: MetricPath
    op: str
    expr: expr.Node
    text: str  # as the user wrote it
    names: frozenset[str] = frozenset()
    literal: float | None = None
    stat: str = "median"  # the statistic over repeats it judges
    window: Window | None = None
    line: int | None = None  # where the suite states it, set by the loader
    optional: bool = False  # "... if measured": not judged where it cannot be measured

    @property
    def kind(self) -> Kind:
        """The kind of the value judged: the metric's, or a percentage for ``@cv``."""
        return Kind.PERCENT if self.stat == "cv" else self.metric.kind

    @property
    def key(self) -> str:
        """The metric as written in ``expect``: ``read.iops`` or ``read.iops@min``."""
        return self.metric.text + ("" if self.stat == "median" else f"@{self.stat}")

    def threshold(self, names: Mapping[str, float] = _EMPTY) -> float:
        """The threshold in base units; raise ExpectationError if a name has no value."""
        if self.literal is not None:
            return self.literal
        missing = sorted(n for n in self.names if names.get(n) is None)
        if missing:
            raise ExpectationError(f"{self.key} {shown(self.text)} refers to "
                                   f"{_missing_words(missing)}")
        return _compute(self.expr, self.kind, {n: names[n] for n in self.names}, self.text)

    def describe(self, names: Mapping[str, float] | None = None) -> str:
        """``>= 250k``; with names resolved: ``>= 0.95 * baseline (237.5k)``."""
        if self.literal is not None:
            rhs = format_value(self.kind, self.literal)
        else:
            rhs = expr.describe(self.expr)
            if names is not None and all(names.get(n) is not None for n in self.names):
                with contextlib.suppress(ExpectationError):
                    rhs += f" ({format_value(self.kind, self.threshold(names))})"
        out = f"{self.op} {rhs}"
        out = out if self.window is None else f"{out} {self.window.describe()}"
        return f"{out} if measured" if self.optional else out


def _missing_words(missing: list[str]) -> str:
    why = {"baseline": "baseline, but no baseline is loaded or it has no value for it",
           "history": "history, but no history store is given or it has no run of it",
           "mean": "mean, but the whole-run value was not measured"}
    return "; and ".join(why.get(n, f"'{n}', which has no value") for n in missing)


def parse_expectation(metric: str, text: object) -> Expectation:
    """Parse one ``expect`` entry; raise ExpectationError with a message meant for users."""
    try:
        path_text, stat = split_statistic(metric)
        path = parse_metric(path_text)
    except ValueError as exc:
        raise ExpectationError(str(exc)) from None
    kind = Kind.PERCENT if stat == "cv" else path.kind
    if isinstance(text, bool) or not isinstance(text, str):
        raise ExpectationError(f"{shown(repr(text))} is not a comparison: write a comparison like "
                               f"'{_EXAMPLES[kind]}' (quoted)")
    m = _OPERATOR.match(text)
    if m is None:
        raise ExpectationError(f"'{shown(text)}' must start with one of {' '.join(OPERATORS)}, "
                               "e.g. '>= 250k'")
    op, rest = m.group(1), text[m.end():]
    optional = _IF_MEASURED.search(rest)
    if optional is not None:
        rest = rest[:optional.start()]
        text = text[:len(text) - len(optional.group(0))]
    window = None
    split = _IN.search(rest)
    if split is not None:
        window = _parse_window(rest[split.end():], text)
        rest = rest[:split.start()]
    if not rest.strip():
        raise ExpectationError(f"'{shown(text)}' ends too early: expected a value after the "
                               "operator")
    try:
        node = expr.parse(rest)
    except expr.ExprError as exc:
        raise ExpectationError(f"'{shown(text.strip())}': {_after_quote(exc)}") from None
    _check_units(node, path, kind, text)
    names = expr.names_in(node)
    unknown = sorted(names - set(NAMES))
    if unknown:
        close = difflib.get_close_matches(unknown[0], NAMES, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else \
            "a suite variable is written ${" + shown(unknown[0]) + "}"
        raise ExpectationError(f"'{shown(text.strip())}': unknown name '{shown(unknown[0])}'; an "
                               f"expectation may refer to {', '.join(NAMES[:-1])} and "
                               f"{NAMES[-1]}; {hint}")
    if window is not None:
        if not has_series(path):
            raise ExpectationError(f"{path.text} has no per-interval values, so it cannot "
                                   f"be judged 'in' a share of intervals; windows work on "
                                   f"{', '.join(series_paths())}")
        if stat != "median" and "@" in metric:
            raise ExpectationError(f"'{shown(metric)}': a windowed expectation judges intervals, "
                                   "not a statistic over repeats; drop the '@" + stat + "'")
    elif "mean" in names:
        raise ExpectationError(f"'{shown(text.strip())}': 'mean' is the whole-run value, so "
                               "it only makes sense in a windowed expectation, e.g. "
                               "'>= 0.8 * mean in all'")
    # Evaluating with stand-ins checks units and dimensions now, not at run time.
    value = _compute(node, kind, dict.fromkeys(names, _PROBE), text.strip())
    return Expectation(path, op, node, text.strip(), names,
                       literal=None if names else value, stat=stat, window=window,
                       optional=optional is not None)


def _after_quote(exc: Exception) -> str:
    """An expression error without its leading quote of the expression."""
    msg = str(exc)
    m = re.match(r"'[^']*': ", msg)
    return msg[m.end():] if m else msg


@dataclass(frozen=True)
class Check:
    """The verdict on one expectation.

    ``observed`` is the judged value in the expectation's base unit, or for a windowed
    expectation the percentage of intervals that passed (see :attr:`observed_kind`).
    ``threshold`` is the value compared with, once known.
    """

    expectation: Expectation
    observed: float | None
    passed: bool
    reason: str
    threshold: float | None = None
    intervals: int | None = None  # windowed: how many intervals were judged
    skipped: int = 0  # windowed: intervals not judged, empty with nothing due by the schedule
    judged: bool = True  # False: deliberately not judged (recording a baseline); never fails
    host: str | None = None  # a per_host expectation: the host ("name:port") judged
    evidence: Evidence | None = None  # against a baseline or the history: how it was decided

    @property
    def key(self) -> str:
        """The expectation's metric as written, prefixed with the host it judged, if any."""
        key = self.expectation.key
        return f"{self.host}: {key}" if self.host else key

    @property
    def observed_kind(self) -> Kind:
        return Kind.PERCENT if self.expectation.window is not None else \
            self.expectation.kind


def _why_unmeasured(metric: MetricPath, backend: str) -> str:
    if metric.family.plugin is not None:
        return f"the {metric.family.plugin} plugin did not report it"
    if backend == "fio" and metric.family.fio is None:
        return f"fio does not measure {metric.name} (the native backend does)"
    scope = metric.scope
    if metric.name == "rate_pct":
        which = "" if scope == "total" else f"{scope} "
        return f"no {which}rate was requested, or the workload did no I/O there"
    if scope == "data":
        return "no written data was sampled"
    if scope == "offsets":
        return "the workload has no region to cover"
    if scope == "disk":
        return ("no target is on a block device (tmpfs and other virtual filesystems, the "
                "null engine), so there are no device statistics")
    if scope == "sync":
        return "the workload made no sync calls"
    if scope in ("read", "write", "trim"):
        return f"the workload did no {scope}s"
    return "the workload did no I/O"


def _resolve(exp: Expectation, names: Mapping[str, float]) -> tuple[float | None, str]:
    """The threshold, or None and why it cannot be had."""
    try:
        return exp.threshold(names), ""
    except ExpectationError as exc:
        return None, f"not judged: {exc}"


def evaluate(exp: Expectation, observed: float | None, *,
             names: Mapping[str, float] = _EMPTY, backend: str = "native",
             unmeasured: str | None = None) -> Check:
    """Compare a measured value with an expectation. Unmeasured or NaN values fail, and so
    does an expectation whose names (``baseline``) have no value; ``unmeasured`` (a
    plugin's reason) or else ``backend``, the one that measured the run, says why a value
    is missing."""
    threshold, why = _resolve(exp, names)
    if threshold is None:
        return Check(exp, observed, False, why)
    if observed is None:
        why = unmeasured or _why_unmeasured(exp.metric, backend)
        return _not_measured(exp, why, threshold)
    if isinstance(observed, float) and math.isnan(observed):
        return Check(exp, observed, False, "not measured: the value is not a number",
                     threshold)
    passed = OPERATORS[exp.op](observed, threshold)
    shown = format_value(exp.kind, observed)
    wanted = exp.describe(names)
    reason = f"{shown} {wanted}" if passed else f"{shown} is not {wanted}"
    return Check(exp, float(observed), passed, reason, threshold)


def _not_measured(exp: Expectation, why: str, threshold: float | None,
                  intervals: int | None = None, skipped: int = 0) -> Check:
    """A check whose metric has no value: a failure, or for an optional expectation
    ("if measured") not judged, which is neither a pass nor a failure."""
    if exp.optional:
        return Check(exp, None, True, f"not measured (optional): {why}", threshold, intervals,
                     skipped=skipped, judged=False)
    return Check(exp, None, False, f"not measured: {why}", threshold, intervals,
                 skipped=skipped)


@dataclass(frozen=True)
class Tally:
    """How the intervals of a window fared: ``good`` passed; ``failed`` did not, among them
    ``empty`` (the positions of those with no completions); ``skipped`` had no completions
    while their schedule asked for less than one request (nothing due), and are not judged."""

    good: int
    failed: int
    skipped: int
    empty: tuple[int, ...]

    @property
    def judged(self) -> int:
        return self.good + self.failed


def tally_window(exp: Expectation, threshold: float, values: Sequence[float | None],
                 due: Sequence[float] | None = None) -> Tally:
    """Judge each interval value (base units) against ``threshold``.

    None is an interval without completions: it fails, unless ``due`` (the requests its
    schedule asked for, per interval; unlimited when not given) says fewer than one was
    due, when it is skipped. NaN never passes.
    """
    compare = OPERATORS[exp.op]
    good = failed = skipped = 0
    empty: list[int] = []
    for i, v in enumerate(values):
        if v is None:
            if due is not None and due[i] < 1:
                skipped += 1
            else:
                failed += 1
                empty.append(i)
        elif not math.isnan(v) and compare(v, threshold):
            good += 1
        else:
            failed += 1
    return Tally(good, failed, skipped, tuple(empty))


_NAMED_EMPTY = 8  # empty intervals a message names; the rest are counted


def _empty_text(empty: Sequence[int], spans: Sequence[str] | None) -> str:
    names = [spans[i] if spans is not None else f"#{i + 1}" for i in empty[:_NAMED_EMPTY]]
    more = f" and {len(empty) - _NAMED_EMPTY} more" if len(empty) > _NAMED_EMPTY else ""
    return f"{len(empty)} with no completions ({', '.join(names)}{more})"


def evaluate_window(exp: Expectation, series_values: Sequence[float | None],
                    whole_run: float | None, *, names: Mapping[str, float] = _EMPTY,
                    due: Sequence[float] | None = None,
                    spans: Sequence[str] | None = None, backend: str = "native") -> Check:
    """Judge a windowed expectation on the metric's per-interval values (base units).

    ``mean`` is ``whole_run``. Passes when at least ceil(share * n) of the n judged intervals
    satisfy the comparison; NaN intervals never do. A None value is an interval without
    completions: it never passes either (a stall is the worst interval, not the best),
    unless ``due[i]``, the requests the case's schedule asked for in it, is below one: then
    it is skipped, neither passed nor failed. ``spans`` name the intervals in the reason.
    No intervals, or none judged: not measured, fails.
    """
    window = exp.window
    if window is None:
        raise ValueError(f"{exp.key} {exp.text} has no window; use evaluate()")
    given = dict(names)
    if whole_run is not None:
        given["mean"] = whole_run
    threshold, why = _resolve(exp, given)
    if threshold is None:
        return Check(exp, None, False, why)
    if not series_values:
        return _not_measured(exp, "no intervals were recorded", threshold, 0)
    t = tally_window(exp, threshold, series_values, due)
    skipped = f", {t.skipped} skipped: nothing was due" if t.skipped else ""
    n = t.judged
    if n == 0:
        return _not_measured(exp, f"{_why_unmeasured(exp.metric, backend)} (no interval had "
                             f"completions{skipped})", threshold, 0, t.skipped)
    needed = window.needed(n)
    pct = 100.0 * t.good / n
    limit = format_value(exp.kind, threshold)
    empty = f"; {_empty_text(t.empty, spans)}" if t.empty else ""
    reason = (f"{pct:.1f}% of {n} intervals had {exp.metric.text} {exp.op} {limit}, "
              f"{'100%' if window.text == 'all' else window.text} needed{skipped}{empty}")
    return Check(exp, pct, t.good >= needed, reason, threshold, n, skipped=t.skipped)


# -- how a check is told ------------------------------------------------------------------


def _p_text(p: float) -> str:
    if p < 1e-99:
        return "0"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.0e}"


def explain(check: Check) -> str:
    """Why a check against a baseline or the history came out as it did, in one line a
    person can check: the reference (median, noise, which runs), the runs observed, the
    effect, the p-value against the significance it was held to (and how that was
    adjusted), and the rule that decided. Empty for other checks."""
    ev = check.evidence
    if ev is None:
        return ""
    kind = check.expectation.kind
    spread = f" ±{format_value(kind, ev.spread)}" if ev.spread is not None else ""
    effect = "" if math.isnan(ev.effect_pct) else f"{ev.effect_pct:+.1f}% vs "
    facts = (f"{effect}{ev.reference} {format_value(kind, ev.center)}{spread} "
             f"({ev.runs}), n={ev.observed_runs}")
    adjusted = f"alpha / {ev.family} checks" if ev.family > 1 else "alpha"
    if ev.looks > 1:
        adjusted += (f", {100 - INTERIM_SHARE * 100:g}% at the last of {ev.looks} looks"
                     if ev.final else f", {INTERIM_SHARE * 100:g}% over {ev.looks - 1} "
                     "interim looks")
    alpha = f"{ev.alpha:.2g}" + (f" ({adjusted})" if adjusted != "alpha" else "")
    p = "" if ev.p is None else f"p={_p_text(ev.p)}"
    rule = {
        "met": facts + (f", {p}" if p else ""),
        "regression": f"regression: {facts}, {p} <= {alpha}"
                      + (f", rank p={_p_text(ev.rank_p)}" if ev.rank_p is not None else ""),
        "within noise": f"within noise: {facts}, {p} > {alpha}: not significant",
        "one slow run": f"one slow run, not a level: {facts}, {p} <= {alpha}, but the runs "
                        f"do not rank below the {ev.reference}'s (rank p="
                        f"{_p_text(ev.rank_p or 1.0)} > {RANK_ALPHA:g})",
        "within min effect": f"within the minimum effect of {ev.min_effect_pct:g}%: {facts}",
        "too few runs": f"decided by effect size, too few runs for a test ({ev.reference} "
                        f"holds {ev.reference_runs}, 2 needed): {facts}",
        "improvement": f"the {ev.reference}'s own value does not meet it (it asks for an "
                       f"improvement): the threshold decides; {facts}",
        "no test": f"no test for @{check.expectation.stat}: the threshold decides; {facts}",
    }
    return rule.get(ev.decision, f"{ev.decision}: {facts}")


def verdict(check: Check) -> str:
    if not check.judged:
        return "n/a"
    return "ok" if check.passed else "FAIL"


def observed_text(check: Check) -> str:
    if not check.judged:
        return check.reason
    if check.observed is None:
        return "not measured"
    return format_value(check.observed_kind, check.observed)


def expected_text(check: Check) -> str:
    """The expectation as written, with the threshold it came to when it is not a literal."""
    e = check.expectation
    text = e.describe()
    if check.threshold is not None and e.literal is None:
        text += f" (= {format_value(e.kind, check.threshold)})"
    return text
