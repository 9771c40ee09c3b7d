"""The live progress line of a run: which case of the suite runs (3/40), how fast the current
run goes, and how long the rest of the suite is planned to take.

Everything shown is computed by pure functions: the suite's plan (:func:`schedule`, known
before anything runs), the live rate of one run (:class:`RateWindow`, fed the engine's
snapshots with their own clock), the time left (:func:`remaining`) and the text of one frame
(:func:`render`). :class:`ProgressLine` only feeds them and writes the frame to a terminal.

The rules:

- The rate is measured over the snapshots of the last :data:`RATE_WINDOW_NS` of counted
  I/O, on the engine's counted time, and shown once that window spans :data:`RATE_MIN_NS`;
  until then, while ramping, laying out or verifying, and from a backend that does not count
  while it runs, it is ``–``. A new phase (precondition pass, repeat, round) starts afresh.
- The unit is what the workload is judged on: a bandwidth or IOPS expectation picks its
  unit (both when both are judged). Without either, a random workload with blocks under
  :data:`BANDWIDTH_BS` shows IOPS, any other (sequential, or large blocks) bandwidth.
- The ETA is the remaining planned time: what is left of the current run, then every run
  still planned (precondition passes, repeats, steady-state rounds) of this unit and of the
  units after it. A run that ends by size has no known duration: its part is a lower bound
  (``ETA ≥ …``); one capped by a runtime an upper bound (``ETA ≤ …``).
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO

from iogate.lower import lower, lower_step
from iogate.metrics import Kind
from iogate.results import Progress, mean_bs
from iogate.spec import Case
from iogate.spec.models import JobFields, PreconditionStep, Workload
from iogate.units import format_bandwidth, format_count

RATE_WINDOW_NS = 2 * 10**9  # the rate is over the snapshots of the last 2 s...
RATE_MIN_NS = 10**9  # ...and shown once they span at least 1 s
BANDWIDTH_BS = 64 * 1024  # random I/O in blocks at least this large is shown in bandwidth

IOPS, BANDWIDTH, BOTH = "iops", "bw", "both"


# -- what the plan says before anything runs ------------------------------------------------

@dataclass(frozen=True)
class Span:
    """A duration between ``lo`` and ``hi`` nanoseconds; ``hi`` None: no bound is known."""

    lo: int = 0
    hi: int | None = 0

    def __add__(self, other: Span) -> Span:
        hi = None if self.hi is None or other.hi is None else self.hi + other.hi
        return Span(self.lo + other.lo, hi)

    @property
    def exact(self) -> bool:
        return self.lo == self.hi


def total(spans: Iterable[Span]) -> Span:
    out = Span()
    for s in spans:
        out = out + s
    return out


@dataclass(frozen=True)
class PlannedRun:
    """One engine run of a unit: a precondition pass, a repeat or a steady-state round.
    ``span`` is how long it takes when it runs; a round past the fewest that can settle
    (``certain`` False) may not run at all."""

    span: Span
    unit: str = IOPS
    certain: bool = True

    @property
    def planned(self) -> Span:
        return self.span if self.certain else Span(0, self.span.hi)


@dataclass(frozen=True)
class PlannedUnit:
    """A unit of the plan (a case, or the cases of a group run together): the position of
    its first case in the suite (1-based), how many cases it holds, and its runs in order."""

    first: int
    cases: int
    runs: tuple[PlannedRun, ...]

    @property
    def span(self) -> Span:
        return total(r.planned for r in self.runs)


@dataclass(frozen=True)
class Schedule:
    """Every unit of a run's plan, and the number of cases in all."""

    units: tuple[PlannedUnit, ...]
    cases: int

    def after(self, index: int) -> Span:
        """The planned time of the units after the ``index``-th."""
        return total(u.span for u in self.units[index + 1:])

    def position(self, index: int, case: int | None = None) -> str:
        """``3/40``: where the ``index``-th unit stands (``3-5/40`` for a group), or with
        ``case`` where that case of the unit does."""
        u = self.units[index]
        if case is not None:
            return f"{u.first + case}/{self.cases}"
        last = u.first + u.cases - 1
        return (f"{u.first}/{self.cases}" if last == u.first
                else f"{u.first}-{last}/{self.cases}")


def job_span(fields: JobFields, runtime: int | None = None,
             time_based: bool | None = None) -> Span:
    """How long one job of ``fields`` runs: startdelay, ramp_time and runtime when it runs
    for its time; at most that when its runtime caps a run that ends by size; unknown
    (at least its delay) when only its size ends it."""
    runtime = fields.runtime if runtime is None else runtime
    time_based = fields.time_based if time_based is None else time_based
    delay = fields.startdelay
    if runtime and time_based:
        return Span(delay + fields.ramp_time + runtime, delay + fields.ramp_time + runtime)
    if runtime:
        return Span(delay, delay + fields.ramp_time + runtime)
    return Span(delay, None)


def session_span(spans: Sequence[Span]) -> Span:
    """Jobs run at once: the session lasts as long as its longest job."""
    his = [s.hi for s in spans]
    return Span(max(s.lo for s in spans),
                None if any(h is None for h in his) else max(h or 0 for h in his))


def _block_size(fields: JobFields) -> float:
    """The largest mean request size of the directions the workload does."""
    spec = (lower(fields, filenames=(), seed=1) if isinstance(fields, Workload)
            else lower_step(fields, filenames=(), seed=1)
            if isinstance(fields, PreconditionStep) else None)
    if spec is None:
        return float(max(fields.bs.read, fields.bs.write))
    return max((mean_bs(spec, d) for d in ("read", "write", "trim") if spec.does(d)),
               default=0.0)


def rate_unit(fields: JobFields, kinds: Iterable[Kind] = ()) -> str:
    """The unit a workload's live rate is shown in (see the module's rules); ``kinds``:
    the kinds of the metrics its expectations judge."""
    judged = set(kinds)
    if Kind.BANDWIDTH in judged or Kind.IOPS in judged:
        if Kind.BANDWIDTH in judged and Kind.IOPS in judged:
            return BOTH
        return BANDWIDTH if Kind.BANDWIDTH in judged else IOPS
    if fields.rw.startswith("rand") and _block_size(fields) < BANDWIDTH_BS:
        return IOPS
    return BANDWIDTH


def _together(units: Iterable[str]) -> str:
    found = set(units)
    return found.pop() if len(found) == 1 else BOTH


def _case_unit(case: Case) -> str:
    kinds = [e.metric.kind for e in (*case.expectations, *case.per_host_expectations)]
    return rate_unit(case.workload, kinds)


def unit_plan(cases: Sequence[Case], first: int = 1) -> PlannedUnit:
    """The runs of one unit, in the order the runner makes them: each case's precondition
    steps (each pass alone), then the session of every case, ``repeat`` times or in
    steady-state rounds."""
    runs: list[PlannedRun] = []
    for case in cases:
        for step in case.preconditions:
            run = PlannedRun(job_span(step), rate_unit(step))
            runs += [run] * step.loops
    unit = _together(_case_unit(c) for c in cases)
    steady = next((c.steady_state for c in cases if c.steady_state), None)
    if steady is not None:
        span = session_span([job_span(c.workload, steady.round, True) for c in cases])
        fewest = min(steady.max_rounds, steady.ramp_rounds + steady.window)
        runs += [PlannedRun(span, unit, certain=i < fewest) for i in range(steady.max_rounds)]
    else:
        span = session_span([job_span(c.workload) for c in cases])
        runs += [PlannedRun(span, unit)] * max(c.repeat for c in cases)
    return PlannedUnit(first, len(cases), tuple(runs))


def schedule(units: Sequence[Sequence[Case]]) -> Schedule:
    """The plan of a whole run (the units of :func:`iogate.plan.plan`, in order)."""
    out, first = [], 1
    for unit in units:
        out.append(unit_plan(unit, first))
        first += len(unit)
    return Schedule(tuple(out), first - 1)


# -- what the current run says --------------------------------------------------------------

_COUNTING = ("running", "done")


class RateWindow:
    """The live rate of one run: its snapshots of the last :data:`RATE_WINDOW_NS` of counted
    time, (counted_ns, ios, bytes) each. Reset by anything that is not counted I/O of the
    same run, so a figure never outlives the run it was measured in."""

    def __init__(self) -> None:
        self._points: deque[tuple[int, int, int]] = deque()

    def reset(self) -> None:
        self._points.clear()

    def add(self, p: Progress) -> None:
        if p.state not in _COUNTING or not p.counts:
            self.reset()
            return
        point = (p.counted_ns, sum(p.ios) + p.trim_ios, sum(p.bytes) + p.trim_bytes)
        if self._points and any(n < o for n, o in zip(point, self._points[-1], strict=True)):
            self.reset()  # counts went back: another run
        self._points.append(point)
        # Keep the newest point at least a window old, so the window spans it all.
        while len(self._points) >= 2 and self._points[1][0] <= point[0] - RATE_WINDOW_NS:
            self._points.popleft()

    def rate(self) -> tuple[float, float] | None:
        """(IOPS, bytes per second) over the window, None until it spans RATE_MIN_NS."""
        if len(self._points) < 2:
            return None
        (t0, ios0, b0), (t1, ios1, b1) = self._points[0], self._points[-1]
        if t1 - t0 < RATE_MIN_NS:
            return None
        return (ios1 - ios0) * 1e9 / (t1 - t0), (b1 - b0) * 1e9 / (t1 - t0)


def fraction(p: Progress, total_bytes: int | None) -> float | None:
    """Share of the current run done: of the layout while laying out, else of its time or
    of its bytes (``total_bytes``: a run that ends by size), whichever is further."""
    if p.state == "done":
        return 1.0
    frac = p.fraction
    by_size = _by_size(p, total_bytes)
    if by_size is not None and (frac is None or by_size > frac):
        return by_size
    return frac


def _by_size(p: Progress, total_bytes: int | None) -> float | None:
    if p.state not in ("ramp", "running") or not total_bytes or not p.counts:
        return None
    # what size counts: reads and writes, or trims (trimwrite's writes follow them)
    return min(1.0, max(sum(p.bytes), p.trim_bytes) / total_bytes)


def remaining(p: Progress, total_bytes: int | None, planned: Span | None) -> Span:
    """What is left of the current run. ``planned``: its span from the plan (None when
    unknown: the engine's end, or the pace of its bytes, is taken as exact)."""
    if p.state == "done":
        return Span(0, 0)
    if p.state in ("created", "layout"):  # the layout's own time is unknown
        return Span(planned.lo if planned else 0, None)
    by_time = max(0, p.expected_ns - p.elapsed_ns) if p.expected_ns > 0 else None
    by_size = _by_size(p, total_bytes)
    pace = (int(p.counted_ns * (1 - by_size) / by_size)
            if by_size and p.counted_ns > 0 else None)
    if planned is None:
        frac = p.fraction
        ahead = by_size is not None and (frac is None or by_size > frac)
        guess = pace if pace is not None and ahead else by_time
        return Span(guess, guess) if guess is not None else Span(0, None)
    if planned.exact and by_time is not None:
        return Span(by_time, by_time)
    lo = pace if pace is not None else 0
    if by_time is not None:
        return Span(min(lo, by_time), by_time)
    return Span(lo, None)


# -- one frame of text ----------------------------------------------------------------------

STATES = {"created": "starting", "layout": "laying out", "ramp": "ramping",
          "running": "running", "verify": "verifying", "done": "done"}


@dataclass(frozen=True)
class Frame:
    """What one frame of the line shows; every figure is of the current run."""

    label: str
    state: str  # the engine's state
    elapsed_ns: int
    phase: str = ""  # "repeat 2/3"; empty for a single measured run
    position: str = ""  # "3/40"; empty outside a suite's plan
    fraction: float | None = None
    rate: tuple[float, float] | None = None  # (IOPS, bytes/s); None: none measured yet
    unit: str = IOPS
    eta: Span | None = None  # of everything left; None: not shown


def clock(ns: int) -> str:
    """A time left, whole seconds rounded up: ``45s``, ``3m05s``, ``2h07m``."""
    s = math.ceil(ns / 1e9)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def eta_text(eta: Span, ascii: bool = False) -> str:
    """``ETA 3m05s``; ``ETA ≥ 3m05s`` when part of it has no known end, ``ETA ≤ 5m00s`` or
    ``ETA 3m05s–5m00s`` when part may end sooner."""
    ge, le, dash = (">=", "<=", "-") if ascii else ("≥", "≤", "–")
    if eta.hi is None:
        return f"ETA {ge} {clock(eta.lo)}" if eta.lo > 0 else "ETA unknown"
    if eta.exact:
        return f"ETA {clock(eta.lo)}"
    if eta.lo == 0:
        return f"ETA {le} {clock(eta.hi)}"
    return f"ETA {clock(eta.lo)}{dash}{clock(eta.hi)}"


def rate_text(rate: tuple[float, float] | None, unit: str, ascii: bool = False) -> str:
    """``52.1k IOPS``, ``412MiB/s``, both, or ``–`` in their place until a rate is known."""
    none = "-" if ascii else "–"
    iops = f"{format_count(rate[0]) if rate else none} IOPS"
    bw = format_bandwidth(rate[1]) if rate else f"{none} MiB/s"
    return {IOPS: iops, BANDWIDTH: bw}.get(unit, f"{iops} {bw}")


def render(frame: Frame, columns: int = 80, bar: int = 24, ascii: bool = False) -> str:
    """The frame's text, at most ``columns - 1`` characters (the last column would wrap):
    the label is shortened first, then the bar left out; the figures are kept."""
    room = max(1, columns - 1)
    state = STATES.get(frame.state, frame.state)
    if frame.phase:
        state = f"{frame.phase}: {state}"
    head = f"[{frame.position}] " if frame.position else ""
    tail = f" {state} {frame.elapsed_ns / 1e9:.1f}s  {rate_text(frame.rate, frame.unit, ascii)}"
    if frame.eta is not None:
        tail += f"  {eta_text(frame.eta, ascii)}"
    if frame.fraction is None:
        bar_text = " [" + "." * bar + "]"
    else:
        filled = round(frame.fraction * bar)
        bar_text = " [" + "#" * filled + "." * (bar - filled) + "]"
    label = frame.label
    if len(head) + len(label) + len(bar_text) + len(tail) > room:
        # the bar goes before the label would be cut to less than 12 characters
        if room - len(head) - len(bar_text) - len(tail) < min(12, len(label)):
            bar_text = ""
        fit = room - len(head) - len(bar_text) - len(tail)
        ellipsis = "..." if ascii else "…"
        if len(label) > fit:
            label = (label[:fit - len(ellipsis)] + ellipsis if fit > len(ellipsis)
                     else label[:max(0, fit)])
    return (head + label + bar_text + tail)[:room]


# -- the terminal ---------------------------------------------------------------------------

def _columns(stream: IO[str]) -> int:
    """The terminal's width: ``COLUMNS`` when set, else the stream's terminal's, else 80."""
    if os.environ.get("COLUMNS", "").isdigit() and int(os.environ["COLUMNS"]) > 0:
        return int(os.environ["COLUMNS"])
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return columns if columns > 0 else shutil.get_terminal_size((80, 24)).columns


def _can_write(stream: IO[str], text: str) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class ProgressLine:
    """The live progress line on a terminal, redrawn at each of the engine's snapshots.

    On a stream that is not a terminal it stays silent, so logs and CI output stay clean.
    ``schedule`` and ``unit`` (the index of the unit running): the suite's plan, for the
    position and the ETA of the whole run; without it the line shows the current run alone.
    """

    def __init__(self, label: str, stream: IO[str] | None = None, width: int = 24,
                 total_bytes: int | None = None, *, schedule: Schedule | None = None,
                 unit: int = 0) -> None:
        self.label = label
        self.phase = ""  # e.g. "precondition 1/2"; empty for the measured run
        self.total_bytes = total_bytes  # for runs that end by size, not by time
        self.stream = stream or sys.stderr
        self.width = width
        self.schedule = schedule
        self.unit = unit
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.ascii = not _can_write(self.stream, "–≥≤…")
        self._window = RateWindow()
        self._run = -1  # index of the current run among the unit's planned runs
        self._shown = False

    def _planned(self) -> tuple[PlannedRun | None, Span]:
        """The current run's plan (None when unknown) and the planned time after it."""
        if self.schedule is None or not 0 <= self.unit < len(self.schedule.units):
            return None, Span(0, 0)
        runs = self.schedule.units[self.unit].runs
        k = max(0, self._run)
        current = runs[k] if k < len(runs) else None
        return current, total(r.planned for r in runs[k + 1:]) + self.schedule.after(self.unit)

    def frame(self, p: Progress) -> Frame:
        """Take a snapshot in; what the line shows after it."""
        self._window.add(p)
        current, after = self._planned()
        # a plan of one unit has no position worth showing (pytest's items, one case)
        position = (self.schedule.position(self.unit)
                    if self.schedule and len(self.schedule.units) > 1 else "")
        left = remaining(p, self.total_bytes, current.span if current else None)
        return Frame(label=self.label, state=p.state, elapsed_ns=p.elapsed_ns,
                     phase=self.phase, position=position,
                     fraction=fraction(p, self.total_bytes), rate=self._window.rate(),
                     unit=current.unit if current else IOPS, eta=left + after)

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        text = render(self.frame(p), _columns(self.stream), self.width, self.ascii)
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self._shown = True

    def set_phase(self, phase: str) -> None:
        """A new engine run starts (a precondition pass, a repeat, a round): nothing of the
        last one is shown again."""
        self.phase = phase
        self._run += 1
        self._window.reset()

    def close(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
