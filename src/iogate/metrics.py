"""Metric paths: the names that expectations, results JSON and JUnit properties share.

Every metric is a row of :data:`TABLE`: its paths, its kind (and so its base unit), how it
is computed and where fio's figure comes from; ``iogate metrics`` prints it. Paths read
``scope.name`` with, for latencies, a statistic or any percentile ``pNN`` (``p50``, ``p99``,
``p99.9``, ``p99.999``): ``read.clat.p99``.

``sync.clat`` and ``sync.resp`` name the same latency as ``sync.lat``: a sync call is
one step. Every path has a kind that fixes its base unit, so a latency is never
compared with an IOPS figure.

Plugins add rows of their own through the ``iogate_metric_families`` hook: plain paths under
a scope of the plugin's (``health.media_errors``), measured by the plugin's ``iogate_metrics``
and judged like any other. This module never loads plugins: the plugin layer
(:mod:`iogate.hooks`) hands their rows over with :func:`use_plugin_families` whenever it loads
them, and :func:`plugin_families` checks them. Until then only :data:`TABLE`'s are known.

An expectation's key may add a statistic over repeated runs: ``read.iops@min``
(:data:`REPEAT_STATS`; the median when none is named). ``cv`` is the coefficient of
variation in percent. Only the metrics in :func:`has_series` exist per interval, for
windowed expectations.
"""

from __future__ import annotations

import difflib
import enum
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass


class Kind(enum.Enum):
    """What a metric measures, and so its base unit."""

    COUNT = "count"  # plain number: ios, errors
    BYTES = "bytes"  # bytes
    IOPS = "iops"  # operations per second
    BANDWIDTH = "bandwidth"  # bytes per second
    DURATION = "duration"  # nanoseconds (latencies, runtime)
    PERCENT = "percent"  # 0..100 (may exceed 100 for rate_pct)
    NUMBER = "number"  # a plain ratio or average without unit


# Trims (the trim rw modes) are a direction of their own: trim.iops, trim.clat.p99...
DIRECTIONS = ("read", "write", "trim")
SCOPES = (*DIRECTIONS, "total")
LAT_STATS = ("min", "max", "mean", "stdev")
BS_PCT = "bs_pct"


class Form(enum.Enum):
    """How a family's paths are written after ``scope.name``."""

    PLAIN = "plain"  # nothing more: read.iops
    LATENCY = "latency"  # a statistic or a percentile: read.clat.p99
    MEAN = "mean"  # one statistic, the mean: read.bs.mean
    SIZE = "size"  # a block size in bytes: read.bs_pct.4096


@dataclass(frozen=True)
class Family:
    """Metrics of one kind, measured and computed the same way: one row of :data:`TABLE`.

    ``compute`` names how :class:`iogate.results.RunResult` computes them (its method
    ``_m_<compute>``); ``fio`` says what fio reports them from, None when fio measures none
    of them (they are then not measured with the fio backend)."""

    scopes: tuple[str, ...]  # "" for the path that has no scope: errors
    names: tuple[str, ...]
    kind: Kind
    form: Form
    about: str
    compute: str
    fio: str | None
    # The plugin that declares and measures the row (compute "plugin"); None for the core's.
    plugin: str | None = None

    @property
    def counted(self) -> bool:
        """Whether its metrics are counts, 0 rather than unmeasured when nothing they count
        happened (``write.ios`` of a read-only run is 0; its ``write.iops`` is none)."""
        return self.compute in _COUNTED


# The computations that count, and so measure 0 of what did not happen.
_COUNTED = ("errors", "sum", "runtime", "sync_ios")

# What the fio backend reports the device statistics from.
FIO_DISK = "/sys/block counters read by iogate before and after fio's run (its ramp included)"

# The one table of every metric: validation (parse_metric), kinds and units, results
# (RunResult.metric), the fio backend's coverage, reports and the schema read it.
TABLE = (
    Family(("",), ("errors",), Kind.COUNT, Form.PLAIN,
           "I/O errors of every job and direction, sync calls included", "errors",
           "the job's error (fio stops at its first one)"),
    Family(SCOPES, ("iops",), Kind.IOPS, Form.PLAIN,
           "requests per second over the direction's runtime, summed over jobs", "rate",
           "iops"),
    Family(SCOPES, ("bw",), Kind.BANDWIDTH, Form.PLAIN,
           "bytes per second over the direction's runtime, summed over jobs", "rate",
           "bw_bytes"),
    Family(SCOPES, ("ios",), Kind.COUNT, Form.PLAIN,
           "completed requests (total: read, write and trim)", "sum", "total_ios"),
    Family(SCOPES, ("bytes",), Kind.BYTES, Form.PLAIN, "bytes moved", "sum", "io_bytes"),
    Family(SCOPES, ("runtime",), Kind.DURATION, Form.PLAIN,
           "the longest job's time doing I/O in the direction", "runtime", "runtime"),
    Family(SCOPES, ("rate_pct",), Kind.PERCENT, Form.PLAIN,
           "the achieved rate as a percent of rate_iops or rate (jobs weighted by the IOPS "
           "asked)", "rate_pct", "iops and bw_bytes against the job's rate"),
    Family(DIRECTIONS, ("slat", "clat", "lat"), Kind.DURATION, Form.LATENCY,
           "submission, completion and total latency: exact histograms merged over jobs",
           "latency", "slat_ns, clat_ns, lat_ns and their json+ bins"),
    Family(DIRECTIONS, ("resp", "lag"), Kind.DURATION, Form.LATENCY,
           "latency from the request's due time (resp) and how late it was issued (lag)",
           "latency", None),
    Family(SCOPES, ("prio_ios",), Kind.COUNT, Form.PLAIN,
           "completed requests issued with the command priority (cmdprio_percentage, "
           "cmdprio_bssplit); unmeasured without one", "prio",
           "the counts of json+'s per-priority entries (prios) other than the job's own"),
    Family(SCOPES, ("prio_pct",), Kind.PERCENT, Form.PLAIN,
           "requests issued with the command priority, in percent of the completed ones",
           "prio", "json+'s per-priority counts over total_ios"),
    Family(DIRECTIONS, ("prio_clat",), Kind.DURATION, Form.LATENCY,
           "completion latency of the requests issued with the command priority (the "
           "others': clat without them)", "latency", None),
    Family(DIRECTIONS, (BS_PCT,), Kind.PERCENT, Form.SIZE,
           "requests of that block size, in percent of the direction's", "bs_pct", None),
    Family(DIRECTIONS, ("bs",), Kind.BYTES, Form.MEAN, "mean block size", "bs_mean",
           "io_bytes / total_ios"),
    Family(DIRECTIONS, ("qd",), Kind.NUMBER, Form.MEAN,
           "mean requests in flight, sampled at each submission", "qd_mean", None),
    Family(("sync",), ("ios",), Kind.COUNT, Form.PLAIN, "fsync and fdatasync calls",
           "sync_ios", "sync total_ios"),
    Family(("sync",), ("lat", "clat", "resp"), Kind.DURATION, Form.LATENCY,
           "latency of a sync call (one step: the three names are the same)", "latency",
           "sync lat_ns"),
    Family(("mix",), ("read_pct",), Kind.PERCENT, Form.PLAIN,
           "reads in percent of all requests", "read_pct", "read and write total_ios"),
    Family(("data",), ("compress_ratio",), Kind.NUMBER, Form.PLAIN,
           "compressed size / size of a sample of written blocks (zlib)", "compress_ratio",
           None),
    Family(("data",), ("dedupe_pct",), Kind.PERCENT, Form.PLAIN,
           "written blocks duplicating an earlier one, in percent", "dedupe_pct", None),
    Family(("offsets",), ("coverage_pct",), Kind.PERCENT, Form.PLAIN,
           "the share of the region touched by at least one request", "coverage_pct", None),
    Family(("cpu",), ("user", "system"), Kind.DURATION, Form.PLAIN,
           "the engine's CPU time over the run, all its threads", "cpu",
           "usr_cpu and sys_cpu of fio's job threads"),
    Family(("cpu",), ("per_io",), Kind.DURATION, Form.PLAIN,
           "user + system CPU time per completed request", "cpu",
           "usr_cpu and sys_cpu of fio's job threads"),
    Family(("cpu",), ("util_pct",), Kind.PERCENT, Form.PLAIN,
           "user + system CPU time in percent of one CPU over the run", "cpu",
           "usr_cpu and sys_cpu of fio's job threads"),
    Family(("verify",), ("blocks", "failures"), Kind.COUNT, Form.PLAIN,
           "blocks read back to verify, and those that failed", "verify", None),
    Family(("verify",), ("torn", "lost", "misdirected", "read_errors"), Kind.COUNT,
           Form.PLAIN, "verification failures of each kind", "verify", None),
    Family(("disk",), ("read.ios", "write.ios", "discard.ios"), Kind.COUNT, Form.PLAIN,
           "requests the target's block device completed over the counted run (its own "
           "/sys/block counters: merged requests count once; any process's I/O counts)",
           "disk", FIO_DISK),
    Family(("disk",), ("read.merges", "write.merges", "discard.merges"), Kind.COUNT,
           Form.PLAIN, "requests the block layer merged into others before the device",
           "disk", FIO_DISK),
    Family(("disk",), ("read.bytes", "write.bytes", "discard.bytes"), Kind.BYTES, Form.PLAIN,
           "bytes the target's block device moved over the counted run (page cache hits "
           "never reach it; readahead adds to it)", "disk", FIO_DISK),
    Family(("disk",), ("util_pct",), Kind.PERCENT, Form.PLAIN,
           "time the device had a request in flight, in percent of the counted run "
           "(the busiest device when there are several)", "disk", FIO_DISK),
    Family(("disk",), ("aqu_sz",), Kind.NUMBER, Form.PLAIN,
           "mean requests in the device's queue over the counted run (time_in_queue / "
           "elapsed)", "disk", FIO_DISK),
    Family(("disk",), ("read.await", "write.await"), Kind.DURATION, Form.PLAIN,
           "mean time a request spent in the device's queue and service (the kernel counts "
           "in ms)", "disk", FIO_DISK),
)


@functools.lru_cache(maxsize=1)
def _index() -> dict[tuple[str, str], Family]:
    out: dict[tuple[str, str], Family] = {}
    for family in TABLE:
        for scope in family.scopes:
            for name in family.names:
                assert (scope, name) not in out, f"{scope}.{name} is in two rows"
                out[(scope, name)] = family
    return out


# The rows the loaded plugins declare, as the plugin layer handed them over (unchecked).
_plugin_rows: tuple[Family, ...] = ()


def use_plugin_families(rows: Iterable[Family]) -> None:
    """Make ``rows`` the plugins' metric rows, replacing those given before (none: only the
    core's). The plugin layer calls this as it loads plugins or is given a plugin manager
    (:func:`iogate.hooks.get_plugin_manager`); they are checked as they are read."""
    global _plugin_rows
    _plugin_rows = tuple(rows)


def plugin_families() -> tuple[Family, ...]:
    """The rows the loaded plugins declare (``iogate_metric_families``), checked: each
    under a scope of the plugin's own, measured by the plugin (``compute="plugin"``), exact
    paths (``Form.PLAIN``), none declared twice."""
    core_scopes = {scope for f in TABLE for scope in f.scopes} | {"errors"}
    seen: set[str] = set()
    out: list[Family] = []
    for family in _plugin_rows:
        who = family.plugin or "a plugin"
        if family.plugin is None or family.form is not Form.PLAIN or family.compute != "plugin":
            raise ValueError(f"{who}: a plugin's metric row needs plugin=<its name>, "
                             "form=Form.PLAIN and compute='plugin'")
        for scope in family.scopes:
            if not scope or scope in core_scopes:
                raise ValueError(f"{who}: metric scope {scope!r} is the core's; use a scope "
                                 "of the plugin's own")
            for name in family.names:
                if f"{scope}.{name}" in seen:
                    raise ValueError(f"{who}: metric {scope}.{name} is declared twice")
                seen.add(f"{scope}.{name}")
        out.append(family)
    return tuple(out)


def families() -> tuple[Family, ...]:
    """Every row: :data:`TABLE` and the plugins'."""
    return TABLE + plugin_families()


def _plugin_index() -> dict[tuple[str, str], Family]:
    return {(scope, name): f for f in plugin_families() for scope in f.scopes for name in f.names}


def family_of(scope: str | None, name: str) -> Family:
    """The row of :data:`TABLE` (or of a plugin's) that a parsed path's scope and name
    belong to."""
    found = _index().get((scope or "", name))
    return found if found is not None else _plugin_index()[(scope or "", name)]


def _names(form: Form, scopes: tuple[str, ...]) -> dict[str, Kind]:
    return {n: f.kind for f in TABLE if f.form is form and set(scopes) <= set(f.scopes)
            for n in f.names}


def pattern(family: Family) -> str:
    """How a family's paths are written: ``{read,write}.clat.{min,max,mean,stdev,pNN}``."""
    def alternatives(items: tuple[str, ...]) -> str:
        return items[0] if len(items) == 1 else "{" + ",".join(items) + "}"

    head = alternatives(family.names) if family.scopes == ("",) else \
        f"{alternatives(family.scopes)}.{alternatives(family.names)}"
    tail = {Form.PLAIN: "", Form.LATENCY: ".{" + ",".join(LAT_STATS) + ",pNN}",
            Form.MEAN: ".mean", Form.SIZE: ".<bytes>"}[family.form]
    return head + tail


UNITS = {Kind.COUNT: "count", Kind.BYTES: "bytes", Kind.IOPS: "IOPS",
         Kind.BANDWIDTH: "bytes/s", Kind.DURATION: "ns", Kind.PERCENT: "%",
         Kind.NUMBER: "ratio"}


# The unit a value's name carries where the name alone does not say it (CI tools show
# properties and series as bare numbers).
_NAME_UNITS = {Kind.DURATION: "ns", Kind.BANDWIDTH: "bytes_per_s", Kind.BYTES: "bytes",
               Kind.PERCENT: "pct"}


def unit_name(text: str) -> str:
    """``text`` with the base unit of its values appended when it has one (a JUnit property,
    a time series): ``read.clat.p99_ns``, ``read.bw_bytes_per_s``; ``read.iops`` and counts
    are their own unit. A name that is no metric stays as it is."""
    try:
        kind = parse_metric(text).kind
    except ValueError:
        return text
    unit = _NAME_UNITS.get(kind)
    return text if unit is None or text.endswith(unit) else f"{text}_{unit}"


def describe(path: MetricPath) -> str:
    """One line on a metric for people and editors: what it is, its base unit, and where
    fio's figure comes from."""
    f = path.family
    if f.plugin is not None:
        return f"{f.about} ({UNITS[f.kind]}; measured by the {f.plugin} plugin)"
    fio = f"fio: {f.fio}" if f.fio else "not measured with fio"
    which = ""
    if path.percentile is not None:
        which = f"{path.text}, the {path.percentile:g}th percentile: "
    elif path.stat is not None:
        which = f"{path.text}, the {_STAT_WORDS.get(path.stat, path.stat)}: "
    return f"{which}{f.about} ({UNITS[f.kind]}; {fio})"


_STAT_WORDS = {"mean": "mean", "min": "minimum", "max": "maximum",
               "stdev": "standard deviation"}


# Views of the table, by how paths are written.
THROUGHPUT = _names(Form.PLAIN, SCOPES)
LATENCIES = tuple(_names(Form.LATENCY, DIRECTIONS))
SYNC_LATENCIES = tuple(_names(Form.LATENCY, ("sync",)))  # all the same: the whole sync call
SHAPES = {n: ("mean", k) for n, k in _names(Form.MEAN, DIRECTIONS).items()}
RUN_METRICS = {scope: _names(Form.PLAIN, (scope,))
               for scope in dict.fromkeys(s for f in TABLE for s in f.scopes)
               if scope not in ("", "sync", *SCOPES)}
STANDARD_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)

# Statistics over the repeats of a case; the first is the default.
REPEAT_STATS = ("median", "min", "max", "mean", "cv")
# Per-interval series kept for each direction (see results.Interval): windowed expectations.
SERIES_METRICS = ("iops", "bw")
SERIES_LATENCIES = ("clat", "lat", "resp")
SERIES_LAT_STATS = ("mean", "p99")

_PERCENTILE = re.compile(r"p([0-9]{1,2}(?:\.[0-9]+)?|100)\Z")
_SIZE = re.compile(r"[1-9][0-9]*\Z")


@dataclass(frozen=True)
class MetricPath:
    """A parsed metric path. ``scope`` is None only for ``errors``."""

    scope: str | None  # read, write, trim, total, sync, mix, data, offsets
    name: str  # iops, ..., slat, ..., bs_pct, bs, qd, read_pct, ..., errors
    stat: str | None = None  # min, max, mean, stdev; None for percentiles
    percentile: float | None = None
    size: int | None = None  # the block size of bs_pct

    @property
    def is_latency(self) -> bool:
        return self.scope in (*DIRECTIONS, "sync") and self.name in LATENCIES

    @property
    def kind(self) -> Kind:
        return self.family.kind

    @property
    def family(self) -> Family:
        """The row of :data:`TABLE` the path belongs to."""
        return family_of(self.scope, self.name)

    @property
    def text(self) -> str:
        if self.scope is None:
            return self.name
        head = f"{self.scope}.{self.name}"
        if self.size is not None:
            return f"{head}.{self.size}"
        if self.stat is not None:
            return f"{head}.{self.stat}"
        if self.percentile is not None:
            return f"{head}.{format_percentile(self.percentile)}"
        return head

    def __str__(self) -> str:
        return self.text


def format_percentile(p: float) -> str:
    """``99.0`` -> ``p99``, ``99.9`` -> ``p99.9``."""
    return "p" + (f"{p:.6f}".rstrip("0").rstrip("."))


def _latency_paths(scope: str, kinds: tuple[str, ...]) -> list[str]:
    out = [f"{scope}.{lat}.{st}" for lat in kinds for st in LAT_STATS]
    out += [f"{scope}.{lat}.{format_percentile(p)}" for lat in kinds for p in STANDARD_PERCENTILES]
    return out


def standard_paths() -> list[str]:
    """The paths every result reports when measured (expectations may ask for more
    percentiles; results add ``bs_pct`` paths for the block sizes they saw)."""
    return list(_standard_paths())


@functools.lru_cache(maxsize=1)
def _standard_paths() -> tuple[str, ...]:
    out = ["errors"]
    out += [f"{s}.{n}" for s in SCOPES for n in THROUGHPUT]
    for d in DIRECTIONS:
        out += _latency_paths(d, LATENCIES)
    out += [f"{d}.{name}.{stat}" for d in DIRECTIONS for name, (stat, _) in SHAPES.items()]
    out += ["sync.ios", *_latency_paths("sync", ("lat",))]
    out += [f"{scope}.{name}" for scope, names in RUN_METRICS.items() for name in names]
    return tuple(out)


def _known_for_hints() -> list[str]:
    return standard_paths() + [f"{d}.{BS_PCT}.4096" for d in DIRECTIONS] + \
        [f"{scope}.{name}" for scope, name in _plugin_index()]


def _unknown(text: str, why: str) -> ValueError:
    close = difflib.get_close_matches(text, _known_for_hints(), n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ValueError(f"unknown metric '{text}': {why}{hint}")


def _latency(text: str, scope: str, name: str, parts: list[str]) -> MetricPath:
    if len(parts) != 3:
        stats = ", ".join(LAT_STATS)
        raise _unknown(text, f"say which statistic: {stats} or a percentile like p99")
    stat = parts[2]
    if stat in LAT_STATS:
        return MetricPath(scope, name, stat=stat)
    m = _PERCENTILE.match(stat)
    if m:
        p = float(m.group(1))
        if 0.0 < p <= 100.0:
            return MetricPath(scope, name, percentile=p)
    raise _unknown(text, f"'{stat}' is not min, max, mean, stdev or a percentile in (0, 100]")


def _no_more(text: str, parts: list[str]) -> None:
    if len(parts) != 2:
        raise _unknown(text, f"'{parts[0]}.{parts[1]}' takes no further part")


_CORE_SCOPES = (*SCOPES, "sync", *RUN_METRICS)


def parse_metric(text: str) -> MetricPath:
    """Parse a metric path; raise ValueError with a suggestion when it is unknown. A path
    outside the core's scopes is looked up among the plugins' rows, which are always exact
    paths (``health.media_errors.delta``)."""
    scope, dot, name = text.partition(".")
    if scope in _CORE_SCOPES or text == "errors":
        return _parse_core(text)
    plugins = _plugin_index()
    if dot and (scope, name) in plugins:
        return MetricPath(scope, name)
    theirs = {f.plugin for (s, _), f in plugins.items() if s == scope}
    if theirs:
        raise _unknown(text, f"'{scope}' metrics are the {', '.join(sorted(map(str, theirs)))} "
                       "plugin's, and this is not one of them (`iogate metrics` lists them)")
    scopes = (*_CORE_SCOPES, *dict.fromkeys(s for s, _ in plugins))
    raise _unknown(text, f"a metric starts with {', '.join(scopes)} (or is 'errors')")


@functools.lru_cache(maxsize=4096)
def _parse_core(text: str) -> MetricPath:
    """A path of :data:`TABLE`. Paths are immutable, so each text is parsed once (every
    case asks for the same ones)."""
    parts = text.split(".", 2)
    if parts == ["errors"]:
        return MetricPath(None, "errors")
    if len(parts) < 2:
        raise _unknown(text, f"a metric starts with {', '.join(_CORE_SCOPES)} (or is 'errors')")
    scope, name = parts[0], parts[1]
    if scope in RUN_METRICS and text.split(".", 1)[1] in RUN_METRICS[scope]:
        return MetricPath(scope, text.split(".", 1)[1])  # a name with a dot: disk.read.ios
    if scope in RUN_METRICS:
        if name not in RUN_METRICS[scope]:
            raise _unknown(text, f"'{scope}' has {', '.join(RUN_METRICS[scope])}")
        _no_more(text, parts)
        return MetricPath(scope, name)
    if scope == "sync":
        if name == "ios":
            _no_more(text, parts)
            return MetricPath(scope, name)
        if name in SYNC_LATENCIES:
            return _latency(text, scope, name, parts)
        raise _unknown(text, "sync calls have ios and a latency: sync.lat.<statistic>")
    if name in THROUGHPUT:
        _no_more(text, parts)
        return MetricPath(scope, name)
    if scope == "total" and (name in LATENCIES or name in SHAPES or name == BS_PCT):
        raise _unknown(text, f"'{name}' is per direction: read, write or trim")
    if name in LATENCIES:
        return _latency(text, scope, name, parts)
    if name in SHAPES:
        stat = SHAPES[name][0]
        if parts[2:] != [stat]:
            raise _unknown(text, f"'{scope}.{name}' has one statistic: {scope}.{name}.{stat}")
        return MetricPath(scope, name, stat=stat)
    if name == BS_PCT:
        if len(parts) != 3 or not _SIZE.match(parts[2]):
            raise _unknown(text, f"say which block size in bytes, e.g. {scope}.{BS_PCT}.4096")
        return MetricPath(scope, name, size=int(parts[2]))
    names = [*THROUGHPUT, *LATENCIES, *SHAPES, BS_PCT]
    raise _unknown(text, f"'{name}' is not one of {', '.join(names)}")


def split_statistic(key: str) -> tuple[str, str]:
    """``read.iops@min`` -> (``read.iops``, ``min``); no ``@``: the median.

    Raise ValueError naming the statistics (with a suggestion) when the one given is unknown.
    """
    path, at, stat = key.partition("@")
    if not at:
        return key, REPEAT_STATS[0]
    if stat not in REPEAT_STATS:
        close = difflib.get_close_matches(stat, REPEAT_STATS, n=1, cutoff=0.5)
        hint = f"; did you mean '@{close[0]}'?" if close else ""
        raise ValueError(f"unknown statistic '@{stat}': use one of "
                         f"{', '.join('@' + s for s in REPEAT_STATS)}{hint}")
    return path, stat


def has_series(metric: MetricPath) -> bool:
    """Whether the metric is also measured per interval (and so may be windowed): the
    directions' rates and latency means and p99s, and the devices' own counters."""
    if metric.scope == "disk":
        return True
    if metric.scope not in DIRECTIONS:
        return False
    if metric.name in SERIES_METRICS:
        return True
    return metric.name in SERIES_LATENCIES and (
        metric.stat in SERIES_LAT_STATS or metric.percentile == 99.0)


def series_paths() -> list[str]:
    """Every metric path :func:`has_series` accepts, for messages."""
    out = [f"{d}.{n}" for d in DIRECTIONS for n in SERIES_METRICS]
    out += [f"{d}.{lat}.{st}" for d in DIRECTIONS for lat in SERIES_LATENCIES
            for st in SERIES_LAT_STATS]
    return [*out, "disk.*"]


# -- for editors: the keys an expectation may have -----------------------------------------

# A percentile in (0, 100]: not p0, p00, p0.0...
_PERCENTILE_RE = r"p(?!0{1,2}(\.0+)?(@|$))([0-9]{1,2}(\.[0-9]+)?|100)"


def key_patterns() -> list[tuple[str, str]]:
    """(regular expression, description) of the expectation keys of each row of
    :data:`TABLE`: its paths, with or without an ``@statistic`` over repeats. What
    :func:`parse_metric` and :func:`split_statistic` accept, as a schema can say it."""
    def alternatives(items: tuple[str, ...]) -> str:
        return "(" + "|".join(re.escape(i) for i in items) + ")"

    repeat = "(@" + alternatives(REPEAT_STATS) + ")?"
    out = []
    for family in families():
        head = alternatives(family.names) if family.scopes == ("",) else \
            alternatives(family.scopes) + r"\." + alternatives(family.names)
        tail = {Form.PLAIN: "", Form.MEAN: r"\.mean", Form.SIZE: r"\.[1-9][0-9]*",
                Form.LATENCY: r"\.(" + "|".join(LAT_STATS) + "|" + _PERCENTILE_RE + ")"}
        out.append((f"^{head}{tail[family.form]}{repeat}$",
                    f"{pattern(family)}: {family.about} ({UNITS[family.kind]})"))
    return out
