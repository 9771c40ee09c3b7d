"""Human and machine renderings of case results: tables, failure reports, JSON (the live
progress line is :mod:`iogate.progress`); the journal that keeps a run's cases as they end,
and the results file written from it, or elsewhere when it cannot be."""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import itertools
import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from iogate import __version__, environment, hooks, text
from iogate.errors import IogateError
from iogate.expect import Check, expected_text, explain, format_value, observed_text, verdict
from iogate.files import OutputError, write_whole
from iogate.metrics import DIRECTIONS, LATENCIES, Kind, parse_metric
from iogate.outcome import OUTCOMES, SCHEMA_VERSION, SPREAD_METRICS, CaseResult, host_spread
from iogate.targets import lock_holder
from iogate.text import LOG_WIDTH
from iogate.textplot import latency_summary
from iogate.units import format_duration_exact, format_size_exact

# Metrics shown in the summary when a case has no expectation on them.
_SUMMARY_METRICS = ("read.iops", "read.bw", "read.clat.p99", "write.iops", "write.bw",
                    "write.clat.p99")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *,
          columns: int = LOG_WIDTH, free: Collection[int] = ()) -> str:
    """A plain-text table with a header rule, columns sized to content, at most ``columns``
    wide: its last column is a note (a reason, an error), which goes under its row when too
    long; its ``free`` columns wrap (:func:`iogate.text.table`)."""
    return text.table(headers, rows, columns=columns, free=free, notes=True)


def checks_table(checks: Sequence[Check], columns: int = LOG_WIDTH) -> str:
    """The checks of a case; a check against a baseline or the history says why in its row
    (:func:`iogate.expect.explain`)."""
    rows = [(c.key, expected_text(c), observed_text(c), verdict(c), explain(c))
            for c in checks]
    return table(("metric", "expected", "observed", "verdict", "why"), rows, columns=columns)


def latency_plots(result: CaseResult) -> list[str]:
    """A text histogram of each latency distribution a failed check judged, SLO marked."""
    if result.run is None:
        return []
    slos: dict[tuple[str, str], list[float]] = {}
    for c in result.failed_checks:
        m = c.expectation.metric
        if (c.expectation.window is None and m.scope in DIRECTIONS and m.name in LATENCIES
                and c.threshold is not None):
            slos.setdefault((m.scope, m.name), []).append(c.threshold)
    out: list[str] = []
    for (direction, kind), thresholds in slos.items():
        stats = result.run.latency(direction, kind)
        if not stats.count:
            continue
        out += ["", f"{direction}.{kind} distribution (last run):"]
        out += ["  " + line for line in latency_summary(
            stats.histogram, slo_ns=thresholds, min_ns=stats.min, max_ns=stats.max).splitlines()]
    return out


def failed_check_texts(result: CaseResult) -> list[str]:
    """Each failed check with what was measured and what was expected:
    ``read.clat.p99 1.8ms, expected <= 1.2ms``."""
    return [f"{c.key} {observed_text(c)}, expected {expected_text(c)}"
            + (f" ({explain(c)})" if c.evidence is not None else "")
            for c in result.failed_checks]


def failed_checks_line(result: CaseResult) -> str:
    """The failed checks in one line (:func:`failed_check_texts`):
    ``read.clat.p99 1.8ms, expected <= 1.2ms; read.iops ...``."""
    return "; ".join(failed_check_texts(result))


def failure_report(result: CaseResult, *, named: bool = True, columns: int = LOG_WIDTH,
                   taken: int = 0) -> str:
    """What a human needs to act on a failed case: the checks, their suite lines, the workload,
    in lines of at most ``columns`` (where words allow), the first ``taken`` shorter. Its
    first line says what failed (the case's id first when ``named``: a front end that names
    the case itself, such as pytest's summary, leaves it out)."""
    case = result.case
    parts: list[str] = []
    prefix = f"{result.id}: " if named else ""
    if (result.outcome in ("error", "crashed", "skipped")
            or (result.steady and not result.steady.steady)):
        parts.append(f"{prefix}{result.outcome}: {result.error}")
    elif result.outcome == "interrupted":
        parts.append(f"{prefix}interrupted; metrics below are partial")
    else:
        n = len(result.failed_checks)
        parts.append(f"{prefix}{n} of {len(result.checks)} expectation(s) not met: "
                     f"{failed_checks_line(result)}")
        if result.error:
            parts.append(result.error)
    if result.checks:
        parts += ["", checks_table(result.checks, columns)]
    if result.warnings:
        parts += ["", "realized workload differs from the request:"]
        parts += [f"  - {w}" for w in result.warnings]
    failing = [c for c in result.failed_checks if c.expectation.line]
    if failing:
        parts += ["", f"suite lines ({case.path}):"]
        for c in failing:
            lineno = c.expectation.line or 0
            parts.append(f"  {lineno:>4} | {case.source_lines.get(lineno, '').rstrip()}")
            if c.reason:
                parts.append(f"       = {c.reason}")
            if c.evidence is not None:
                parts.append(f"         {explain(c)}")
    parts += latency_plots(result)
    if result.steady is not None:
        rounds = ", ".join(format_value(_kind_of(result.steady.metric), v)
                           for v in result.steady.values)
        parts += ["", f"steady-state rounds of {result.steady.metric}: {rounds}"]
    parts += ["", f"workload {case.id} as run (defaults merged, variables expanded):"]
    parts += ["  " + line for line in workload_lines(result)]
    return text.fit("\n".join(parts), columns, taken)


_SIZE_KEYS = ("size", "offset")
_DURATION_KEYS = ("runtime", "ramp_time")


def workload_lines(result: CaseResult) -> list[str]:
    """The resolved workload in suite syntax, sizes and durations in the units people write."""
    workload = result.case.workload
    full = workload.model_dump(mode="json", exclude_none=True)
    # What always matters, then whatever else differs from the defaults.
    core = ["name", "ioengine", "rw", "bs", "iodepth", "numjobs", "size", "filename"]
    if "bssplit" in full or "bsrange" in full:
        core.remove("bs")
    data = {k: full[k] for k in core if k in full}
    data.update(workload.model_dump(mode="json", exclude_none=True, exclude_defaults=True))
    data.pop("expect", None)
    data.pop("per_host", None)
    if result.target is not None:
        data["filename"] = result.target
    lines = []
    for key, value in data.items():
        if key in _SIZE_KEYS and isinstance(value, int):  # else a share: '50%'
            text = format_size_exact(value)
        elif key in _DURATION_KEYS:
            text = format_duration_exact(value)
        elif key == "bs":
            text = (format_size_exact(value["read"]) if value["read"] == value["write"] else
                    f"{{read: {format_size_exact(value['read'])}, "
                    f"write: {format_size_exact(value['write'])}}}")
        else:
            text = json.dumps(value)
        lines.append(f"{key}: {text}")
    return lines


def _metric_cell(result: CaseResult, path: str) -> str | None:
    value = result.metrics.get(path)
    return None if value is None else format_value(parse_metric(path).kind, value)


def hosts_tables(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """For each case run on a fleet: a row per host with its headline metrics and whether its
    per_host expectations held, then the fleet (the aggregate) and the spread. Empty when no
    case ran on hosts."""
    out = []
    for r in results:
        if not r.hosts:
            continue
        shown = [p for p in SPREAD_METRICS if any(p in m for m in r.hosts.values())]
        rows = []
        for host, metrics in r.hosts.items():
            failed = [c for c in r.failed_checks if c.host == host]
            rows.append([host, *(_cell(metrics, p) for p in shown),
                         "FAILED" if failed else "ok"])
        rows.append(["fleet", *(_cell(r.metrics, p) for p in shown), r.outcome])
        spread = host_spread(r.hosts)
        rows.append(["spread", *(f"{spread[p]['spread_pct']:.1f}%" if p in spread else "-"
                                 for p in shown), ""])
        out.append(f"hosts of {r.id}\n" + table(["host", *shown, "verdict"], rows,
                                                 columns=columns))
    return "\n\n".join(out)


def _cell(metrics: Mapping[str, float], path: str) -> str:
    value = metrics.get(path)
    return "-" if value is None else format_value(parse_metric(path).kind, value)


def summary_table(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """One line per case: verdict, the headline metrics, and the failed checks (these two
    wrap, the problems going under the row where the table would be wider than
    ``columns``)."""
    rows = []
    for r in results:
        shown = [f"{p}={cell}" for p in _SUMMARY_METRICS
                 if (cell := _metric_cell(r, p)) is not None]
        failed = "; ".join(f"{c.key} {c.expectation.describe()} "
                           f"(got {observed_text(c)})" for c in r.failed_checks)
        if r.outcome in ("error", "crashed", "skipped") and r.error:
            failed = r.error
        if r.warnings:
            failed = "; ".join(filter(None, [failed, f"{len(r.warnings)} warning(s)"]))
        verdict = r.outcome.upper() if r.outcome != "passed" else "passed"
        rows.append((r.id, verdict, f"{r.duration_s:.1f}s", " ".join(shown), failed))
    return table(("case", "verdict", "time", "metrics", "problems"), rows, columns=columns,
                 free=(-2,))


_SWEEP_METRICS = ("read.iops", "read.bw", "read.clat.p50", "read.clat.p99", "write.iops",
                  "write.bw", "write.clat.p50", "write.clat.p99")


def sweep_tables(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """One table per swept workload: a row per point, the swept values, the headline metrics
    that were measured, and the verdict. Empty when nothing was swept."""
    by_workload: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        if r.case.sweep_point:
            by_workload.setdefault((str(r.case.path), r.case.base_name), []).append(r)
    out = []
    for (path, name), rows in by_workload.items():
        names = list(rows[0].case.sweep_point)
        shown = [m for m in _SWEEP_METRICS if any(m in r.metrics for r in rows)]
        body = [[r.case.sweep_point.get(n, "") for n in names]
                + [_metric_cell(r, m) or "-" for m in shown]
                + [r.outcome if r.outcome != "passed" else "passed"] for r in rows]
        out.append(f"sweep {Path(path).name}::{name}\n"
                   + table([*names, *shown, "verdict"], body, columns=columns))
    return "\n\n".join(out)


def results_table(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """Every check of every case: workload, metric, expectation, observed value, verdict,
    and why (a run that ended in an error says it there)."""
    rows = []
    for r in results:
        if not r.checks and r.outcome == "passed":
            rows.append((r.id, "-", "-", "-", "passed",
                         "no expectations: measured below" if _measured_rows(r) else ""))
        for c in r.checks:
            rows.append((r.id, c.key, expected_text(c),
                         observed_text(c), verdict(c), explain(c)))
        if r.outcome in ("error", "crashed", "interrupted", "skipped"):
            rows.append((r.id, "(run)", "-", "-", r.outcome.upper(), r.error or r.outcome))
    return table(("case", "metric", "expected", "observed", "verdict", "why"), rows,
                 columns=columns)


# What a case without expectations shows of each direction it moved data in, as fio's
# summary does: rate, bandwidth and completion latency.
_MEASURED = ("iops", "bw", "clat.mean", "clat.p50", "clat.p99", "clat.p99.9")


def _measured_rows(result: CaseResult) -> list[list[str]]:
    return [[result.id, d] + [_metric_cell(result, f"{d}.{m}") or "-" for m in _MEASURED]
            for d in DIRECTIONS if d != "total" and result.metrics.get(f"{d}.ios")]


def measured_table(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """What each case without expectations measured, a row per direction that moved data:
    IOPS, bandwidth and completion latency (mean, p50, p99, p99.9). Empty when every case
    had expectations or none moved data."""
    rows = [row for r in results if not r.checks for row in _measured_rows(r)]
    if not rows:
        return ""
    return "measured\n" + table(("case", "dir", "iops", "bw", "clat mean", "p50", "p99",
                                  "p99.9"), rows, columns=columns)


def warnings_text(results: Sequence[CaseResult], columns: int = LOG_WIDTH) -> str:
    """Every realized-workload warning, one each (wrapped to ``columns``); empty when there
    are none."""
    return text.fit("\n".join(f"{r.id}: warning: {w}" for r in results for w in r.warnings),
                    columns)


def journal_path(results_path: str | os.PathLike[str]) -> Path:
    """Where the cases of a run are journaled as they end: beside its results file."""
    path = Path(results_path)
    return path.with_name(path.name + ".journal")


class Journal:
    """The cases of a run on disk, one JSON line each (``CaseResult.to_json``), appended as
    each case ends: memory need not hold every case's detail, and a run that dies late
    loses none of the cases it finished. The results document is assembled from it, read
    back through the descriptor the journal was written with, so that a journal (or its
    directory) removed meanwhile loses nothing.

    ``results``: the results file (``--json``, named by ``option``), beside which the
    journal is kept (:func:`journal_path`), held with an exclusive lock for the run: a
    journal another run holds is an OutputError naming that run, before anything is
    written. None: a file without a name (in the scratch directory), which nothing can
    leave behind. A journal that cannot be written (the filesystem filled or went
    read-only) is given up, ``error`` says why, and the document is made from the results
    in memory instead.
    """

    def __init__(self, results: str | os.PathLike[str] | None = None,
                 option: str = "json") -> None:
        if results is None:
            from iogate.plan import scratch_dir

            fd, name = tempfile.mkstemp(prefix="iogate-journal-", suffix=".jsonl",
                                        dir=scratch_dir())
            os.unlink(name)
            self.path: Path | None = None
        else:
            self.path = journal_path(results)
            fd = _locked(self.path, str(results), option)
        self._fd = fd
        self._file: IO[str] = os.fdopen(fd, "w", encoding="utf-8")
        self.count = 0
        self.error: OSError | None = None

    @property
    def intact(self) -> bool:
        """Every case appended is in the file."""
        return self.error is None

    @property
    def kept(self) -> Path | None:
        """The journal's path, while the file there is this journal."""
        if self.path is None:
            return None
        try:
            st, here = os.fstat(self._fd), os.stat(self.path)
        except (OSError, ValueError):
            return None
        return self.path if (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino) else None

    def append(self, result: CaseResult) -> None:
        """Write one finished case (flushed: a crash of the runner after this keeps it)."""
        if self.error is not None:
            return
        try:
            self._file.write(json.dumps(result.to_json(), separators=(",", ":")) + "\n")
            self._file.flush()
        except OSError as exc:
            self.error = exc
            return
        self.count += 1

    def cases(self) -> JournalCases:
        """The cases written so far, read back lazily, as the document's ``cases``."""
        self._file.flush()
        return JournalCases(self._fd, self.count)

    def close(self, remove: bool = False) -> None:
        """Close the file, removing it first when ``remove`` says so (and it is still this
        journal); the lock ends with it."""
        kept = self.kept if remove else None
        if kept is not None:
            with contextlib.suppress(OSError):
                kept.unlink()
        with contextlib.suppress(OSError):  # what a failed write left buffered is lost
            self._file.close()


def _locked(path: Path, results: str, option: str) -> int:
    """The journal at ``path`` opened anew and locked for this run: an OutputError when
    another run holds it (writing ``results``), or when it cannot be made."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise OutputError(path, f"cannot be written: {exc.strerror or exc}",
                              option) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            st, here = os.fstat(fd), os.stat(path)
        except BlockingIOError:
            holder = lock_holder(fd)
            os.close(fd)
            run = f"another iogate run (pid {holder})" if holder else "another iogate run"
            raise OutputError(results, f"{run} is writing results to {results}; wait for it "
                              "to end, or name another file", option) from None
        except OSError as exc:
            os.close(fd)
            if isinstance(exc, FileNotFoundError):
                continue  # removed by the run that held it, as it ended: made anew
            raise OutputError(path, f"cannot be locked: {exc.strerror or exc}",
                              option) from None
        if (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino):
            os.ftruncate(fd, 0)
            return fd
        os.close(fd)  # replaced meanwhile by a run that started after: open it again


class JournalCases(list):  # type: ignore[type-arg]
    """The ``cases`` of a results document, read from a journal's descriptor one case at a
    time when iterated (the JSON encoder, a baseline) instead of held in memory. It is a
    list for whoever checks (``isinstance(cases, list)``), but holds nothing itself."""

    def __init__(self, fd: int, count: int) -> None:
        super().__init__()
        self._fd = fd
        self._count = count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        offset, rest, n = 0, b"", 0
        while n < self._count:
            chunk = os.pread(self._fd, 1 << 16, offset)
            if not chunk:
                raise OSError(f"the journal ends after {n} of {self._count} cases")
            offset += len(chunk)
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines[:self._count - n]:
                yield json.loads(line)
            n += len(lines)

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and list(self) == list(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"JournalCases(fd={self._fd}, {self._count})"


def results_document(results: Sequence[CaseResult], journal: Journal | None = None,
                     history: str | None = None,
                     facts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The results document; its cases are read from ``journal`` when given (it holds
    every case of ``results``), else made from ``results``. With ``history`` (the store the
    run is recorded in), its ``history`` section holds each case's recent trend
    (:func:`iogate.trend.recent`). ``facts``: those the run was given rather than read
    (--fact, IOGATE_FACT_*), named in the environment's ``given``."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    document = {
        "schema_version": SCHEMA_VERSION,
        "iogate_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": environment.capture(given=facts),
        "summary": counts,
        "cases": (journal.cases() if journal is not None and journal.intact
                  else [r.to_json() for r in results]),
    }
    if history:
        from iogate.trend import recent

        document["history"] = recent(history, results)
    return document


def write_json(path: str | Path, document: dict[str, Any]) -> None:
    """Write the document whole or not at all (an OutputError then). The text is encoded
    piece by piece, so cases read from a journal never need to be in memory all at once."""
    chunks = json.JSONEncoder(indent=2).iterencode(document)
    write_whole(path, itertools.chain(chunks, ["\n"]))


def write_results(path: str | Path, document: dict[str, Any],
                  journal: Journal | None = None) -> str | None:
    """Write the results document to ``path``; None when done. When it cannot be (the
    filesystem filled or went read-only, the directory was removed during the run), the
    document goes to a new file in the first of :func:`elsewhere` that takes it, and the
    answer is the message that says so, naming the file that holds the results (or the
    journal, while it is there, if none did)."""
    try:
        write_json(path, document)
        return None
    except OutputError as exc:
        failure = f"iogate: the results file {exc.path} {exc.problem}"
    tried = []
    for directory in elsewhere():
        try:
            fd, name = tempfile.mkstemp(prefix="iogate-results-", suffix=".json",
                                        dir=directory)
        except OSError as exc:
            tried.append(f"{directory}: {exc.strerror or exc}")
            continue
        os.close(fd)
        try:
            write_json(name, document)
        except OutputError as exc:
            tried.append(f"{name}: {exc.problem}")
            with contextlib.suppress(OSError):
                os.unlink(name)
            continue
        return f"{failure}\niogate: the results are in {name} instead"
    failure += "".join(f"\niogate: nor could they be kept in {t}" for t in tried)
    kept = journal.kept if journal is not None and journal.intact else None
    if kept is not None:
        return (f"{failure}\niogate: the finished cases are in the journal {kept} "
                "(one JSON object per line)")
    return f"{failure}\niogate: the results are lost"


def elsewhere() -> list[str]:
    """Where results go when their file cannot be written, in this order: $TMPDIR (else
    the platform's temporary directory), the scratch directory, the current directory,
    $HOME; those that can be named."""
    from iogate.plan import scratch_dir

    places: list[str] = []
    getters: tuple[Callable[[], str], ...] = (
        lambda: os.environ.get("TMPDIR") or tempfile.gettempdir(), scratch_dir,
        os.getcwd, lambda: os.path.expanduser("~"))
    for place in getters:
        with contextlib.suppress(OSError, IogateError):
            places.append(place())
    return list(dict.fromkeys(places))


def call_report_hooks(results: Sequence[CaseResult], document: dict[str, Any]) -> None:
    """Let every plugin have its say on the finished document (``iogate_report``)."""
    hooks.get_plugin_manager().hook.iogate_report(results=list(results), document=document)


def finish_document(results: Sequence[CaseResult], journal: Journal | None = None,
                    history: str | None = None,
                    facts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The results document, after every plugin had its say (``iogate_report``)."""
    document = results_document(results, journal, history, facts)
    call_report_hooks(results, document)
    return document


def _kind_of(path: str) -> Kind:
    """The kind of a steady-state metric (``total.clat.p99`` is a latency too)."""
    scope, _, rest = path.partition(".")
    return parse_metric(("read." + rest) if scope == "total" and "." in rest else path).kind
