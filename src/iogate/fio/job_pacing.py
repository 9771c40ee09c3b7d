"""How long, how much and how fast one fio job runs, as workload keys:
runtime, ramp_time and time_based; io_size, number_ios and loops; startdelay and
thinktime; rate, rate_iops and their minimums over rate_cycle (as expectations); steadystate;
and flow control between the jobs that run together.
"""

from __future__ import annotations

import re
from typing import Any

from iogate.fio.job_state import LONE_REF, JobState
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    directions,
)
from iogate.spec.modes import TRIM_MODES, directions_of, field_directions_of
from iogate.units import format_duration_exact, format_size_exact, parse_size


def _times(n: int, value: Any, kind: str) -> int | str:
    """``n`` times a workload value (an int, a size as text, or an expression), exactly."""
    if isinstance(value, int):
        return format_size_exact(n * value) if kind == "size" else n * value
    try:
        return format_size_exact(n * parse_size(value)) if kind == "size" else n * int(value)
    except ValueError:
        return f"{n} * ({value})"


def _operand(value: int | str) -> str:
    """A value as one term of a product: numbers and references as they are."""
    text = str(value)
    return text if isinstance(value, int) or LONE_REF.fullmatch(text) else f"({text})"


class PacingOptions(JobState):
    """Time, amount, rates, rate floors, steady state, think time and flow."""

    def _times(self) -> None:
        for name in ("runtime", "ramp_time"):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            if (n := self.checked(src, text, "time_s")) is None:
                continue
            if n == 0:
                self.note(src, "0 is fio's default: no limit" if name == "runtime" else
                          "0 is fio's default: none")
                continue
            self.put(name, format_duration_exact(n) if isinstance(n, int) else n, src)
            if name == "runtime" and isinstance(n, int):
                self.runtime_ns = n
        time_based = self.opts.get("time_based")
        if time_based is not None and "runtime" not in self.w.keys and \
                "runtime" not in self.given:
            self.used.add("time_based")
            self.note(time_based, "no runtime: fio ignores it (it counts with a runtime "
                      "given on the command line: --set runtime=...)")
        else:
            self.bool_key("time_based")

    def _limits(self) -> None:
        """io_size, number_ios and loops (how much each thread does) and startdelay."""
        timed = getattr(self.w.keys.get("time_based"), "value", False) is True
        loops = self._loops(timed)
        for name, kind in (("io_size", "size"), ("number_ios", "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            if timed:
                self.note(src, "time_based: fio runs until its runtime and ignores it")
                continue
            if (n := self.checked(src, text, kind)) is None:
                continue
            if n == 0:
                self.note(src, "0 is fio's default: none")
                continue
            if loops is not None:
                self.put(name, _times(loops[0], n, kind), src, loops[1])
            else:
                self.put(name, self.size_text(n) if kind == "size" else n, src)
        if loops is not None and "io_size" not in self.w.keys:
            n, comment = loops
            size = self.w.keys["size"]
            self.put("io_size", _times(n, size.value, "size"), self.opts["loops"], comment)
        self._startdelay()

    def _loops(self, timed: bool) -> tuple[int, str] | None:
        """fio's loops as a multiple of each pass (count, comment), or None for one pass."""
        src = self.get_literal("loops")
        if src is None or (text := self.value(src)) is None:
            return None
        if (n := self.checked(src, text, "count")) is None:
            return None
        if not isinstance(n, int):
            self.refuse(src, "loops from a variable: iogate multiplies io_size by it; write "
                        "the number in the file")
            return None
        if n < 1:
            self.refuse(src, "fio takes loops=1 or more")
            return None
        if n == 1:
            self.note(src, "fio's default: one pass")
            return None
        if timed:
            self.note(src, "time_based: fio runs until its runtime, whatever loops says")
            return None
        if "size" not in self.w.keys and self.get("io_size") is None:
            self.refuse(src, f"loops={n} without size: iogate's io_size would be {n} times "
                        "the size of the file, unknown here: give size (in the file or "
                        "--set size=...)")
            return None
        return n, (f"fio's loops={n} (line {src.line}): {n} passes, each starting at the "
                   "region's start and dropping the page cache first (invalidate); iogate "
                   "goes on over the region without dropping it again")

    def _startdelay(self) -> None:
        src = self.get("startdelay")
        if src is None or (text := self.value(src)) is None:
            return
        if re.search(r"\d\s*[-:]\s*\d", text) and "(" not in text:
            self.refuse(src, "a range of delays, one drawn per clone: iogate delays the "
                        "workload by one value")
            return
        if (n := self.checked(src, text, "time_s")) is None:
            return
        if n == 0:
            self.note(src, "0 is fio's default: none")
            return
        # counted from fio's start: iogate.fio.groups.assign_startdelays
        self.put("startdelay", format_duration_exact(n) if isinstance(n, int) else n, src)

    def _rates(self) -> None:
        for name, kind in (("rate", "size"), ("rate_iops", "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            self._rate(name, kind, src, text)
        src = self.get("rate_process")
        if src is not None and (text := self.value(src)) is not None:
            if text not in ("linear", "poisson"):
                self.refuse(src, "rate_process is linear or poisson")
            elif "rate" in self.w.keys or "rate_iops" in self.w.keys:
                self.put("rate_process", text, src)
            else:
                self.note(src, "no rate is set: fio ignores it")

    def _rate_values(self, name: str, kind: str, src: Option,
                     text: str) -> dict[str, int | str] | None:
        """fio's per-direction rate ('r,w', or 'r,w,t' for a trim job) by the slot it takes
        (a trim's is the write one), zeros left out; None when refused."""
        if self.rw is None:
            self.refuse(src, f"{name} with rw from a variable: fio's rate is per direction, "
                        "iogate's single rate is split by the mix; set rw in the file")
            return None
        if self.rw in TRIM_MODES and len(directions_of(self.rw)) == 2:
            self.refuse(src, f"{name} with rw={self.rw}: iogate does not limit the rate of "
                        "trim and write pairs; limit a trim or a write job instead")
            return None
        dirs = field_directions_of(self.rw)  # a trim's rate is the write value
        try:
            parts = directions(text, "rates", trims=self.trims())
            values: dict[str, int | str] = {}
            for d, part in zip(("read", "write"), parts, strict=True):
                part = part.removesuffix("/s") if kind == "size" else part
                if d in dirs and part:
                    v = self.number(src, part, kind)
                    if v != 0:
                        values[d] = v
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return None
        return values

    def _rate_floors(self) -> None:
        """fio's rate_min and rate_iops_min end a job that falls below them over a
        rate_cycle: in iogate, an expectation on every interval of that length."""
        cycle_ns = 1_000_000_000
        cycle = self.get("rate_cycle")
        if cycle is not None and (text := self.value(cycle)) is not None:
            if (n := self.checked(cycle, text, "count")) is None:  # milliseconds
                return
            if not isinstance(n, int) or n <= 0:
                self.refuse(cycle, "rate_cycle is a whole number of milliseconds, above 0")
                return
            cycle_ns = n * 1_000_000
        expect: dict[str, str] = {}
        first: Option | None = None
        for name, metric, kind in (("rate_min", "bw", "size"), ("rate_iops_min", "iops",
                                                                "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            values = self._rate_values(name, kind, src, text)
            if values is None:
                continue
            first = first or src
            for d, v in values.items():
                total = v if self.numjobs == 1 else (
                    v * self.numjobs if isinstance(v, int) and isinstance(self.numjobs, int)
                    else f"{_operand(v)} * {_operand(self.numjobs)}")
                shown_v = (format_size_exact(total) + "/s" if isinstance(total, int)
                           and kind == "size" else str(total))
                direction = "trim" if self.trims() and d == "write" else d  # its slot
                expect[f"{direction}.{metric}"] = f">= {shown_v} in all of " \
                                          f"{format_duration_exact(cycle_ns)}"
        if first is None:
            if cycle is not None:
                self.note(cycle, "no rate_min or rate_iops_min: fio ignores it")
            return
        self.put("expect", expect, first, "fio ends a job that falls below its minimum rate "
                 "over a rate_cycle; iogate runs on and fails the case if any interval of that "
                 "length fell below it" + (f" (fio's minimum is per clone: times "
                                           f"numjobs={self.numjobs})"
                                           if self.numjobs != 1 else ""))

    def _steady_state(self) -> None:
        """fio's steadystate (ss): the job ends early once the last ss_dur of samples (one
        every ss_interval) of its IOPS, bandwidth or mean completion latency are steady; in
        iogate, rounds of ss_interval until a window of ss_dur is, at most the runtime."""
        src = self.get("steadystate")
        others = [o for name in ("steadystate_duration", "steadystate_ramp_time",
                                 "steadystate_check_interval")
                  if (o := self.get(name)) is not None]
        if src is None or (text := self.value(src)) is None:
            for other in others:
                self.note(other, "no steadystate: fio ignores it")
            return
        m = re.fullmatch(r"(iops|bw|lat)(_slope)?:([0-9]+(?:\.[0-9]+)?)(%?)", text)
        dirs = self.dirs()
        if m is None:
            self.refuse(src, "fio's steadystate is iops, iops_slope, bw, bw_slope, lat or "
                        "lat_slope and a limit, e.g. iops:10% or bw_slope:0.1%")
            return
        if not m.group(4):
            self.refuse(src, "an absolute limit: iogate's steady-state limits are percentages "
                        "of the mean; write it as N%")
            return
        if dirs is None:
            self.refuse(src, "steadystate with rw from a variable: set rw in the file")
            return
        if m.group(1) == "lat" and len(dirs) != 1:
            self.refuse(src, f"steady latency of rw={self.rw}: fio judges the completion "
                        "latency of every direction together; iogate tracks one metric of "
                        "one direction (e.g. read.clat.mean): give the job one direction")
            return
        times: dict[str, int] = {}
        for name in ("steadystate_duration", "steadystate_ramp_time",
                     "steadystate_check_interval"):
            if (opt := self.opts.get(name)) is None:
                continue
            if (t := self.value(opt)) is None:
                return
            if (n := self.checked(opt, t, "time_s")) is None:
                return
            if not isinstance(n, int):
                self.refuse(opt, "a duration from a variable: set it in the file")
                return
            times[name] = n
        interval = times.get("steadystate_check_interval", 1_000_000_000)
        if interval <= 0:
            self.refuse(self.opts["steadystate_check_interval"], "fio's check interval is a "
                        "positive duration")
            return
        duration = times.get("steadystate_duration", 0)
        if duration < 2 * interval:
            self.refuse(src, "steadystate needs ss_dur of at least two check intervals "
                        f"({format_duration_exact(2 * interval)}): the window of samples it "
                        "judges")
            return
        runtime_ns = self.runtime_ns  # None when not given, or from a variable
        if runtime_ns is None:
            self.refuse(src, "steadystate needs a runtime, its longest run, set in the file")
            return
        tracked = "clat.mean" if m.group(1) == "lat" else m.group(1)
        metric = f"{dirs[0] if len(dirs) == 1 else 'total'}.{tracked}"
        limit = float(m.group(3))
        window = duration // interval
        steady: dict[str, Any] = {"metric": metric, "round": format_duration_exact(interval),
                                  "window": window,
                                  "max_rounds": max(1, runtime_ns // interval)}
        if m.group(2):  # fio: |slope per sample| / mean; iogate: across the window
            steady.update(range_pct=None, slope_pct=round(limit * (window - 1), 9))
        else:
            steady.update(range_pct=None, slope_pct=None, deviation_pct=limit)
        if times.get("steadystate_ramp_time"):
            steady["ramp"] = format_duration_exact(times["steadystate_ramp_time"])
        self.put("steady_state", steady, src,
                 f"fio samples the job every {format_duration_exact(interval)} and ends it once "
                 "the last ss_dur of samples are steady; iogate runs rounds that long until a "
                 "window of them is, at most "
                 f"runtime={format_duration_exact(runtime_ns)} (each round "
                 "is a run of its own); fio keeps the results when steady state is not "
                 "reached, iogate fails the case (on_unsteady: skip to skip it)")

    def _rate(self, name: str, kind: str, src: Option, text: str) -> None:
        dirs = self.dirs()
        values = self._rate_values(name, kind, src, text)
        if values is None or dirs is None:
            return
        if not values:
            self.note(src, "no limit for the directions this job issues")
            return
        if len(dirs) == 2 and len(values) == 1:
            only = next(iter(values))
            self.refuse(src, f"fio limits only the {only}s of this mixed job; iogate limits "
                        "both directions of a mixed workload or neither: give both")
            return
        notes = []
        if self.numjobs != 1:
            notes.append(f"fio's {name} is per clone: times numjobs={self.numjobs}")
            for d, v in values.items():
                if isinstance(v, int) and isinstance(self.numjobs, int):
                    values[d] = v * self.numjobs
                else:
                    values[d] = f"{_operand(v)} * {_operand(self.numjobs)}"
        shown_values = {d: (format_size_exact(v) + "/s" if kind == "size" and isinstance(v, int)
                            else v) for d, v in values.items()}
        if len(values) == 2:
            if "," not in text:
                notes.insert(0, f"fio's {name}={text} limits each direction; iogate's single "
                                "value would be the total")
            self.put(name, shown_values, src, "; ".join(notes))
        else:
            self.put(name, next(iter(shown_values.values())), src, "; ".join(notes))

    def _thinktime(self) -> None:
        src = self.get("thinktime")
        blocks = self.get("thinktime_blocks")
        set_ = False
        if src is not None and (text := self.value(src)) is not None:
            if (n := self.checked(src, text, "time_us")) is None:
                return
            if n == 0:
                self.note(src, "0 is fio's default: none")
            else:
                comment = "a bare number in the variable is microseconds to fio, seconds " \
                          "to iogate" if LONE_REF.fullmatch(text) else ""
                self.put("thinktime", format_duration_exact(n) if isinstance(n, int) else n,
                         src, comment)
                set_ = True
        if blocks is not None:
            if set_:
                self.int_key("thinktime_blocks")
            else:
                self.note(blocks, "no thinktime: fio ignores it")

    def _flow(self) -> None:
        """flow: the weights of the jobs that run together (flow_id and flow_sleep are
        plain keys); a job in another stonewall group never shares a flow with this one, in
        fio (a job that ends leaves its flow) as in iogate (groups run one after another)."""
        self.int_key("flow", zero_means_off="0 is fio's default: no flow control")
