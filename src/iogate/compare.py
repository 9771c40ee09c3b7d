"""Comparing two runs: ``iogate compare OLD.json NEW.json``.

Owns the pairing of cases between two results documents or baseline files, the verdict
for each case and metric (which direction of change is worse, significance, minimum
effect), and the benchstat-like table that shows it, with the options and the exit code of
the ``compare`` subcommand that :mod:`iogate.cli` offers (this module has no command line
of its own). The statistics live in ``iogate.stats``; the file formats in
``iogate.baseline``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.baseline import (
    FORMAT,
    Baseline,
    BaselineError,
    BaselineMatchError,
    Entry,
    read_json,
)
from iogate.expect import format_value
from iogate.metrics import DIRECTIONS, SCOPES, Kind, parse_metric
from iogate.stats import Spread, regression, summary
from iogate.text import LOG_WIDTH, fit, table, width

EXIT_OK, EXIT_REGRESSED, EXIT_INVALID = 0, 1, 2

# Compared when the caller names no metrics, wherever both sides measured them.
DEFAULT_METRICS = (
    *(f"{scope}.{name}" for scope in SCOPES for name in ("iops", "bw")),
    *(f"{d}.clat.{p}" for d in DIRECTIONS for p in ("p50", "p99", "p99.9")),
)

VERDICTS = ("ok", "better", "REGRESSED", "~")


def higher_is_better(metric: str) -> bool | None:
    """True for IOPS and bandwidth, False for durations (latencies), None for the rest:
    counts, sizes, percentages and ratios have no better direction, so any change beyond
    the minimum effect is flagged."""
    kind = parse_metric(metric).kind
    if kind in (Kind.IOPS, Kind.BANDWIDTH):
        return True
    if kind is Kind.DURATION:
        return False
    return None


@dataclass(frozen=True)
class Row:
    """One case and metric on both sides."""

    case_id: str
    metric: str
    old: Spread
    new: Spread
    delta_pct: float  # change of the median, percent of the old median
    p_value: float | None  # None with fewer than 2 samples on a side
    verdict: str  # one of VERDICTS
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case_id, "metric": self.metric, "old": self.old.median,
                "new": self.new.median, "old_cv_pct": self.old.cv_pct,
                "new_cv_pct": self.new.cv_pct, "n_old": self.old.n, "n_new": self.new.n,
                "delta_pct": self.delta_pct if math.isfinite(self.delta_pct) else None,
                "p_value": self.p_value, "verdict": self.verdict, "reason": self.reason}


@dataclass
class Comparison:
    """Every compared case and metric, plus what could not be paired."""

    rows: list[Row]
    alpha: float
    min_effect_pct: float
    notes: list[str] = field(default_factory=list)  # unpaired cases, missing metrics

    @property
    def regressed(self) -> bool:
        return any(r.verdict == "REGRESSED" for r in self.rows)

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "REGRESSED"]

    def to_json(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "min_effect_pct": self.min_effect_pct,
                "regressed": self.regressed, "rows": [r.to_json() for r in self.rows],
                "notes": list(self.notes)}


def as_baseline(document: Any, source: str = "<document>") -> Baseline:
    """Read either a baseline document or a results document as a baseline."""
    if isinstance(document, Mapping) and document.get("format") == FORMAT:
        return Baseline.from_document(document, source)
    if isinstance(document, Mapping) and "cases" in document:
        return Baseline.from_results(document, source)
    raise BaselineError(source, "neither an iogate results document nor a baseline file")


def load_document(path: str | Path) -> Baseline:
    """Read a results document or baseline file; problems are BaselineErrors naming it."""
    return as_baseline(read_json(path), str(path))


def _verdict(old: Sequence[float], new: Sequence[float], direction: bool | None,
             alpha: float, min_effect_pct: float) -> tuple[str, float, float | None, str]:
    worse = regression(old, new, higher_is_better=direction, alpha=alpha,
                       min_effect_pct=min_effect_pct)
    if worse.regressed:
        return "REGRESSED", worse.effect_pct, worse.p_value, worse.reason
    if direction is not None:
        # An improvement is a regression seen the other way round.
        gain = regression(old, new, higher_is_better=not direction, alpha=alpha,
                          min_effect_pct=min_effect_pct)
        if gain.regressed:
            return "better", gain.effect_pct, gain.p_value, f"improved: {gain.reason}"
    if worse.p_value is not None and worse.p_value > alpha:
        return "~", worse.effect_pct, worse.p_value, (
            f"median {worse.effect_pct:+.1f}%, p={worse.p_value:.3g} > {alpha:g}: "
            "no significant difference")
    return "ok", worse.effect_pct, worse.p_value, worse.reason


def _pair(old: Baseline, new_entry: Entry) -> Entry | None:
    """The old entry to compare ``new_entry`` with: of the same case, the one recorded in
    the environment closest to the new one's (as a run's baseline entry is chosen); None
    when the old side has no entry for the case or several equally close ones."""
    try:
        return old.choose(new_entry.case_id, new_entry.environment).entry
    except BaselineMatchError:
        return None


def _label(entry: Entry, ambiguous: bool) -> str:
    if not ambiguous:
        return entry.case_id
    env = entry.environment
    where = "/".join(str(env.get(k)) for k in ("device_model", "firmware", "host"))
    return f"{entry.case_id} ({where})"


def compare(old: Any, new: Any, *, alpha: float = 0.05, min_effect_pct: float = 5.0,
            metrics: Sequence[str] | None = None) -> Comparison:
    """Compare two results documents or baseline documents (dicts or Baselines), case by
    case and metric by metric.

    Cases pair by id; when the old side holds the case in several environments, the one
    closest to the new side's environment is taken (several equally close: not compared,
    noted). Without ``metrics``, the
    ``DEFAULT_METRICS`` measured on both sides are compared; named metrics missing on a
    side are reported in the notes.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    if min_effect_pct < 0:
        raise ValueError("the minimum effect cannot be negative")
    for m in metrics or ():
        parse_metric(m)  # an unknown metric name is the caller's mistake: say so
    before = old if isinstance(old, Baseline) else as_baseline(old, "old")
    after = new if isinstance(new, Baseline) else as_baseline(new, "new")
    result = Comparison([], alpha, min_effect_pct)
    paired_ids: set[str] = set()
    for entry in after.entries:
        counterpart = _pair(before, entry)
        if counterpart is None:
            held = len(before.for_case(entry.case_id))
            why = ("not in the old results" if not held else
                   f"in the old results for {held} environments equally close to the new "
                   "one's; compare files of one environment")
            result.notes.append(f"{entry.case_id}: {why}")
            continue
        paired_ids.add(entry.case_id)
        label = _label(entry, len(after.for_case(entry.case_id)) > 1)
        wanted = list(metrics) if metrics is not None else list(DEFAULT_METRICS)
        for metric in wanted:
            old_values, new_values = counterpart.samples(metric), entry.samples(metric)
            if not old_values or not new_values:
                if metrics is not None:
                    side = "old" if not old_values else "new"
                    result.notes.append(f"{label}: {metric} not measured in the {side} results")
                continue
            verdict, delta, p, reason = _verdict(old_values, new_values,
                                                 higher_is_better(metric), alpha,
                                                 min_effect_pct)
            result.rows.append(Row(label, metric, summary(old_values), summary(new_values),
                                   delta, p, verdict, reason))
    for entry in before.entries:
        if entry.case_id not in paired_ids and not after.for_case(entry.case_id):
            result.notes.append(f"{entry.case_id}: not in the new results")
    return result


# -- rendering ------------------------------------------------------------------------------

def _value_text(metric: str, spread: Spread) -> str:
    text = format_value(parse_metric(metric).kind, spread.median)
    if spread.n > 1:
        text += f" ±{spread.cv_pct:.0f}%" if spread.cv_pct >= 0.5 else " ±0%"
    return text


def _delta_text(delta: float) -> str:
    if not math.isfinite(delta):
        return "+inf%" if delta > 0 else "-inf%"
    return f"{delta:+.1f}%"


def _p_text(row: Row) -> str:
    n = f"n={row.old.n}+{row.new.n}"
    return n if row.p_value is None else f"p={row.p_value:.3f} {n}"


def render(comparison: Comparison, columns: int = LOG_WIDTH) -> str:
    """A table like benchstat's: medians with their spread (coefficient of variation), the
    change, the p-value with the sample counts, and the verdict; then the reasons for each
    regression and the notes; lines of at most ``columns`` where words allow."""
    headers = ("case", "metric", "old", "new", "delta", "p", "verdict")
    rows = [(r.case_id, r.metric, _value_text(r.metric, r.old), _value_text(r.metric, r.new),
             _delta_text(r.delta_pct), _p_text(r), r.verdict) for r in comparison.rows]
    # numbers line up on the right
    out = [table(headers, rows, columns=columns, right=(2, 3, 4))] if rows else \
        ["no case and metric measured on both sides"]
    regressions = comparison.regressions
    if regressions:
        out += ["", "regressions:"]
        out += [f"  {r.case_id} {r.metric}: {r.reason}" for r in regressions]
    if comparison.notes:
        out += ["", "not compared:"]
        out += [f"  {n}" for n in comparison.notes]
    out += ["", f"{len(regressions)} regression(s) in {len(comparison.rows)} comparison(s) "
                f"(significance {comparison.alpha:g}, minimum effect "
                f"{comparison.min_effect_pct:g}%; ~ = no significant difference)"]
    return fit("\n".join(out), columns)


# -- the iogate compare command (its parser and run: iogate.cli) ------------------------------

def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not strictly between 0 and 1")
    return value


def _effect(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage") from None
    if not value >= 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a percentage >= 0")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``iogate compare``, for a subcommand parser."""
    parser.add_argument("old", metavar="OLD.json",
                        help="results document (--json) or baseline file of the reference run")
    parser.add_argument("new", metavar="NEW.json", help="the run to judge, in either format")
    parser.add_argument("--alpha", type=_alpha, default=0.05,
                        help="significance of the one-sided test against the old runs' "
                        "noise (default 0.05)")
    parser.add_argument("--min-effect", type=_effect, default=5.0, metavar="PCT",
                        help="smallest change of the median that counts, in percent "
                             "(default 5)")
    parser.add_argument("--metric", action="append", dest="metrics", metavar="PATH",
                        help="compare this metric (repeatable); default: IOPS, bandwidth "
                             "and clat p50/p99/p99.9")


def run(args: argparse.Namespace) -> int:
    """Carry out ``iogate compare`` for parsed arguments; the exit code."""
    try:
        old = load_document(args.old)
        new = load_document(args.new)
        comparison = compare(old, new, alpha=args.alpha, min_effect_pct=args.min_effect,
                             metrics=args.metrics)
    except BaselineError as exc:
        print(f"iogate compare: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except ValueError as exc:  # an unknown --metric
        print(f"iogate compare: {exc}", file=sys.stderr)
        return EXIT_INVALID
    print(render(comparison, width(sys.stdout)))
    if not comparison.rows:
        return EXIT_INVALID
    return EXIT_REGRESSED if comparison.regressed else EXIT_OK

