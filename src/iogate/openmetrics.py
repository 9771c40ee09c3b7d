"""The run's measurements as an OpenMetrics text exposition (``--openmetrics``), for
Prometheus: a file pushed to a Pushgateway or left for node exporter's textfile collector.

Every series is a gauge (a run's figures are values at one moment, never counters), named
``iogate_...`` per Prometheus's conventions: one family per measured quantity, in base units
with the unit as a suffix (``iogate_iops``, ``iogate_bandwidth_bytes_per_second``,
``iogate_latency_seconds{direction="read",kind="clat",quantile="0.99"}``; percents become
ratios, nanoseconds seconds), and the verdicts (``iogate_case_passed``,
``iogate_check_passed{metric="read.clat.p99",expected="<= 1.2ms"}``). A case's series are
labelled with its ``suite`` and ``case`` (its id), its sweep point (``sweep_<variable>``)
and, when known, the ``host``, the target's ``device``, ``device_model`` and ``firmware``.

The text is OpenMetrics 1.0 (``# HELP``, ``# TYPE``, ``# UNIT``, ``# EOF``) restricted so
that Prometheus's older text format (0.0.4) reads it the same: that parser, which node
exporter's textfile collector and the Pushgateway use for a plain upload, takes ``# UNIT``
and ``# EOF`` for comments, and every type used (gauge) and every escape (``\\\\``, ``\\"``,
``\\n`` in label values; ``\\\\``, ``\\n`` in help texts, which hold no quotes) means the
same in both. No sample has a timestamp (the textfile collector refuses them).

It is rendered from the :class:`~iogate.outcome.CaseResult` objects, as the Markdown summary
is: a case's sweep point and its checks' expectations live there, not in the results
document; the run's machine facts are the document's ``environment``, passed in.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from iogate.files import write_whole
from iogate.metrics import DIRECTIONS, Form, Kind, MetricPath, parse_metric
from iogate.outcome import OUTCOMES, CaseResult

__all__ = ["CONTENT_TYPE", "render", "write"]

# What to send it as over HTTP (a Pushgateway reads the older format from a plain upload).
CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"

# Base unit per kind: (suffix of the family's name, iogate's values per unit): divided,
# not multiplied by a fraction, so 81ns is 8.1e-08 s and not 8.100000000000001e-08.
_UNITS = {Kind.DURATION: ("seconds", 1e9), Kind.BYTES: ("bytes", 1.0),
          Kind.BANDWIDTH: ("bytes_per_second", 1.0), Kind.PERCENT: ("ratio", 100.0)}

# Families whose name and help say more than the metric table's row.
_HELP = {
    "iogate_iops": "Requests per second over the direction's runtime, summed over jobs.",
    "iogate_bandwidth_bytes_per_second": "Bytes per second over the direction's runtime, "
                                         "summed over jobs.",
    "iogate_latency_seconds": "Latency (kind: slat submission, clat completion, lat total, "
                              "resp from the due time, lag of issue; sync: a sync call) at "
                              "a quantile of its distribution, exact histograms merged over "
                              "jobs.",
    "iogate_run_cases": "Cases of the run with each outcome.",
    "iogate_run_duration_seconds": "Wall time of the run.",
    "iogate_run_timestamp_seconds": "When the run ended, in seconds since the Unix epoch.",
    "iogate_case_passed": "1 when every expectation of the case was met, else 0.",
    "iogate_case_outcome": "1 for the outcome the case had (passed, failed, error, "
                           "interrupted, crashed, skipped), 0 for the others.",
    "iogate_case_duration_seconds": "Wall time of the case, its preconditions and repeats "
                                    "included.",
    "iogate_check_passed": "1 when the expectation on the metric was met, else 0.",
}
# Names of the metric table said in words.
_WORDS = {"bw": "bandwidth", "bs": "block_size", "bs_pct": "block_size_pct",
          "qd": "queue_depth"}
_STAT_HELP = "The {stat} of the latency (kinds as in iogate_latency_seconds) over the run."


@dataclass
class _Family:
    name: str
    help: str
    unit: str
    samples: dict[tuple[tuple[str, str], ...], float] = field(default_factory=dict)


class _Exposition:
    """Families in the order first seen, each with its series; a series given twice (a case
    reported twice) keeps its first value."""

    def __init__(self) -> None:
        self.families: dict[str, _Family] = {}

    def add(self, name: str, labels: Mapping[str, str], value: float, *, unit: str = "",
            help: str | None = None) -> None:
        family = self.families.get(name)
        if family is None:
            text = help or _HELP.get(name) or name
            family = self.families[name] = _Family(name, text, unit)
        key = tuple(labels.items())
        family.samples.setdefault(key, value)

    def text(self) -> str:
        lines = []
        for f in self.families.values():
            lines.append(f"# HELP {f.name} {_help(f.help)}")
            lines.append(f"# TYPE {f.name} gauge")
            if f.unit:
                lines.append(f"# UNIT {f.name} {f.unit}")
            for labels, value in f.samples.items():
                inner = ",".join(f'{k}="{_label_value(v)}"' for k, v in labels)
                lines.append(f"{f.name}{{{inner}}} {_number(value)}" if inner
                             else f"{f.name} {_number(value)}")
        lines.append("# EOF")
        return "\n".join(lines) + "\n"


def _help(text: str) -> str:
    """A help text escaped alike in both formats: no quotes (OpenMetrics escapes them, the
    older format does not know that escape)."""
    return " ".join(text.replace("\\", "\\\\").replace('"', "'").splitlines())


def _label_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _name(text: str) -> str:
    """``text`` as a metric or label name: letters, digits and underscores only."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return "_" + name if name[:1].isdigit() else name


def _quantile(percentile: float) -> str:
    """``99.9`` -> ``0.999``: exact, as the percentile was written."""
    q = (Decimal(repr(percentile)) / 100).normalize()
    return format(q, "f")


def _series(path: MetricPath) -> tuple[str, dict[str, str], str, float]:
    """Where a metric goes: its family's name, its own labels, the unit, the divisor."""
    unit, per = _UNITS.get(path.kind, ("", 1.0))
    labels: dict[str, str] = {}
    scope, name = path.scope, path.name
    if path.family.form is not Form.LATENCY:
        name = _WORDS.get(name, name)
    if scope in (*DIRECTIONS, "sync"):
        labels["direction"] = scope
        stem = name
    elif scope is None:
        stem = name
    else:  # total, and the scopes of run-wide metrics (disk.read.ios: read's)
        head, dot, tail = name.partition(".")
        if dot:
            labels["direction"] = head
            name = tail
        stem = f"{scope}_{name}"
    if path.family.form is Form.LATENCY:
        labels["kind"] = name
        if path.percentile is not None:
            labels["quantile"] = _quantile(path.percentile)
            stem = "latency"
        else:
            stem = f"latency_{path.stat}"
    elif path.family.form is Form.SIZE:
        labels["block_size"] = str(path.size)
    elif path.family.form is Form.MEAN:
        stem = f"{stem}_{path.stat}"
    if unit == "ratio":
        stem = re.sub(r"_pct$", "", stem)
    family = f"iogate_{_name(stem)}"
    if unit and not family.endswith("_" + unit):
        family += "_" + unit
    return family, labels, unit, per


def _case_labels(result: CaseResult, host: object) -> dict[str, str]:
    labels = {"suite": result.case.suite_name, "case": result.id}
    for variable, value in result.case.sweep_point.items():
        labels["sweep_" + _name(variable)] = str(value)
    if host:
        labels["host"] = str(host)
    env = result.environment
    for key, label in (("target.device", "device"), ("target.device_model", "device_model"),
                       ("target.firmware", "firmware")):
        if env.get(key):
            labels[label] = str(env[key])
    return labels


def _case(out: _Exposition, result: CaseResult, host: object) -> None:
    labels = _case_labels(result, host)
    out.add("iogate_case_passed", labels, int(result.outcome == "passed"))
    for outcome in OUTCOMES:
        out.add("iogate_case_outcome", {**labels, "outcome": outcome},
                int(result.outcome == outcome))
    out.add("iogate_case_duration_seconds", labels, result.duration_s, unit="seconds")
    for check in result.checks:
        where = {"metric": check.key, "expected": check.expectation.describe()}
        if check.host:
            where["check_host"] = check.host
        out.add("iogate_check_passed", {**labels, **where}, int(check.passed))
    for metric, value in sorted(result.metrics.items()):
        try:
            path = parse_metric(metric)
        except ValueError:  # a plugin's metric whose plugin is gone: nothing says its unit
            continue
        family, own, unit, per = _series(path)
        help_text = _HELP.get(family)
        if help_text is None and path.family.form is Form.LATENCY:
            help_text = _STAT_HELP.format(stat=path.stat)
        if help_text is None:
            about = path.family.about
            help_text = about[:1].upper() + about[1:] + (
                " (as a ratio: 1 is 100%)." if unit == "ratio" else ".")
        out.add(family, {**labels, **own}, value / per, unit=unit, help=help_text)


def render(results: Sequence[CaseResult], environment: Mapping[str, object] | None = None,
           *, wall_s: float | None = None) -> str:
    """The exposition of a run: its cases' results, the run's machine facts (the results
    document's ``environment``) and its wall time; ends with ``# EOF``."""
    out = _Exposition()
    host = (environment or {}).get("host")
    run = {"host": str(host)} if host else {}
    for outcome in OUTCOMES:
        out.add("iogate_run_cases", {**run, "outcome": outcome},
                sum(r.outcome == outcome for r in results))
    if wall_s is not None:
        out.add("iogate_run_duration_seconds", run, wall_s, unit="seconds")
    out.add("iogate_run_timestamp_seconds", run, time.time(), unit="seconds")
    for r in results:
        _case(out, r, host)
    return out.text()


def write(path: str, results: Sequence[CaseResult],
          environment: Mapping[str, object] | None = None, *, wall_s: float | None = None,
          option: str = "openmetrics") -> None:
    """Write the exposition (:func:`render`) to ``path``, whole (renamed over it, as the
    textfile collector needs); an :class:`iogate.files.OutputError` if it cannot be."""
    write_whole(path, render(results, environment, wall_s=wall_s), option)
