"""fio's schedule as iogate's groups: ``stonewall`` and ``wait_for`` turned into workloads
that run together (one group) or one after another, and ``exitall`` into the workloads a
workload's end stops.

fio runs the jobs of a file at once, up to a ``stonewall``; ``wait_for=NAME`` starts a job
when that job ends. iogate runs workloads one after another unless they share a ``group``,
then together. Jobs between stonewalls become a group; a ``wait_for`` becomes a step in
that order when the job it waits for is the only one running before it, the only case
iogate can run as fio does; otherwise it is refused. (``new_group`` only groups fio's
report: :data:`~iogate.fio.vocabulary.OUTPUT_ONLY`.)

fio's ``exitall`` is one switch for the whole file: set in any job, the end of every job
stops others, chosen by that job's ``exit_what``: ``group`` its reporting group (a new one
starts at each ``stonewall`` or ``new_group``), ``stonewall`` every job running (iogate: the
group), ``all`` every job, those after later stonewalls too (iogate: the group, when no
group comes after it; otherwise refused, as they would never run).
"""

from __future__ import annotations

from iogate.expr import shown
from iogate.fio.problems import Problems
from iogate.fio.translate import Entry, Workload
from iogate.units import format_duration, format_duration_exact, parse_duration

__all__ = ["assign_exitall", "assign_groups", "assign_startdelays"]

EXIT_WHAT = ("group", "stonewall", "all")


def assign_groups(workloads: list[Workload], problems: Problems) -> list[list[Workload]]:
    """fio's schedule as iogate's: units that run one after another, the jobs of one unit
    at once (a group when there are several). Returns the units in the order they run."""
    by_name: dict[str, list[Workload]] = {}
    for w in workloads:
        by_name.setdefault(w.fio_name, []).append(w)
    segment: list[Workload] = []
    segments: list[list[Workload]] = []
    for w in workloads:
        if w.stonewall and segment:
            segments.append(segment)
            segment = []
        segment.append(w)
    if segment:
        segments.append(segment)
    counter = 0
    all_units: list[list[Workload]] = []
    for seg in segments:
        level: dict[int, int] = {}  # id(workload) -> level
        for w in seg:
            waitee = None
            if w.wait_for is not None:
                target = (w.wait_for.value or "").strip()
                earlier = [v for v in by_name.get(target, []) if workloads.index(v)
                           < workloads.index(w)]
                if not earlier:
                    problems.option(w.wait_for, f"no job named '{shown(target)}' comes before "
                                    "this one: fio waits only for a job defined earlier")
                elif len({id(v.section) for v in by_name[target]}) > 1:
                    problems.option(w.wait_for, f"several jobs are named '{shown(target)}': "
                                    "fio needs the job waited for to have a unique name")
                elif earlier[0] in seg:
                    waitee = earlier[0]
                else:
                    w.notes.append(f"wait_for={target} ({w.wait_for.where}): that job is "
                                   "behind a stonewall already")
            level[id(w)] = 0 if waitee is None else level[id(waitee)] + 1
        depth = max(level.values())
        units = [[w for w in seg if level[id(w)] == k] for k in range(depth + 1)]
        for k, unit in enumerate(units[:-1]):
            if len({id(w.section) for w in unit}) > 1:  # a job's clones wait together
                waiter = next(w for w in units[k + 1])
                assert waiter.wait_for is not None
                waited = (waiter.wait_for.value or "").strip()
                others = ", ".join(dict.fromkeys(f"'{w.fio_name}'" for w in unit
                                                 if w.fio_name != waited))
                problems.option(waiter.wait_for, f"fio starts '{waiter.fio_name}' when "
                                f"'{waited}' ends, while "
                                f"{others} may still run; iogate runs workloads together "
                                "(one group) or one after another: use stonewall, or wait "
                                "for the last of them")
        all_units += units
        for k, unit in enumerate(units):
            if k > 0:
                for w in unit:
                    assert w.wait_for is not None
                    w.notes.append(f"wait_for={w.wait_for.value} ({w.wait_for.where}): "
                                   "runs after it, in the order of the workloads")
            if len(unit) > 1:
                counter += 1
                for w in unit:
                    w.group = f"g{counter}"
    return all_units


def _report_groups(workloads: list[Workload]) -> dict[int, int]:
    """fio's reporting group of each job (by id of its section): a new one at a stonewall
    or new_group, unless no job came since the last one began; a job's clones share it."""
    group_of: dict[int, int] = {}
    current, jobs_in = 0, 0
    for w in workloads:
        if id(w.section) in group_of:
            continue  # a later clone of the same job
        if (w.stonewall or w.new_group) and jobs_in:
            current, jobs_in = current + 1, 0
        group_of[id(w.section)] = current
        jobs_in += 1
    return group_of


def assign_exitall(workloads: list[Workload], units: list[list[Workload]],
                   problems: Problems) -> None:
    """fio's exitall as each workload's exitall key (see the module's docstring)."""
    switch = next((w.exitall for w in workloads if w.exitall is not None), None)
    if switch is None:
        for w in workloads:
            if w.exit_what is not None:
                w.notes.append(f"{w.exit_what} ({w.exit_what.where}): no exitall: fio ignores "
                               "it")
        return
    report = _report_groups(workloads)
    unit_of = {id(w): unit for unit in units for w in unit}
    for w in workloads:
        what = "group"
        if w.exit_what is not None:
            what = (w.exit_what.value or "").strip().lower()
            if what not in EXIT_WHAT:
                problems.option(w.exit_what, f"fio takes {', '.join(EXIT_WHAT)} for exit_what")
                continue
        unit = unit_of[id(w)]
        said = f"exit_what={what}" if w.exit_what is not None else "exit_what=group (fio's " \
            "default)"
        if what == "all" and unit is not units[-1]:
            assert w.exit_what is not None
            problems.option(w.exit_what, "when this job ends, fio stops every job, also those "
                            "after the next stonewall, which then never run; iogate runs every "
                            "group: use exit_what=stonewall, or put this job after the last "
                            "stonewall")
            continue
        value: bool | list[str] = True
        if what == "group":
            mates = [v for v in workloads if report[id(v.section)] == report[id(w.section)]]
            running = {id(v) for v in unit}
            later = [v for v in mates if id(v) not in running]
            if later:
                problems.option(w.exit_what or switch, f"fio's exitall with exit_what=group "
                                f"also stops '{later[0].fio_name}' of this job's reporting "
                                "group, which waits for another job (wait_for) and would then "
                                "never run; iogate cannot stop a workload before it starts: "
                                "use exit_what=stonewall")
                continue
            if len(mates) < len(unit):
                value = [v.name for v in mates]
        own = w.exitall is not None
        comment = "; ".join(filter(None, [
            "" if own else f"fio's exitall ([{switch.section}], {switch.where}) is one switch "
            "for every job of the file",
            "fio turns exitall on whatever its value" if w.exitall is not None
            and (w.exitall.value or "1").strip() in ("0", "false") else "",
            f"{said}: " + ("stops every workload of its group" if value is True
                           else "stops the workloads of its fio reporting group"
                           " (new_group)")]))
        w.keys["exitall"] = Entry(value, w.exitall or switch, comment)


def _ns(w: Workload, key: str) -> int | None:
    """A duration key of the workload in ns (0 when not set); None when not a literal."""
    entry = w.keys.get(key)
    if entry is None:
        return 0
    try:
        return parse_duration(entry.value)
    except (TypeError, ValueError):
        return None


def assign_startdelays(units: list[list[Workload]]) -> None:
    """fio counts ``startdelay`` from its own start, iogate from the start of the workload's
    unit. A unit after the first starts once the units before it ran, for at least the sum
    of what each surely lasts (its time-based jobs' delay, ramp and runtime; a size-based
    job's length is not known): a delay over by then is dropped, what is left of one is
    kept, each with a comment."""
    least, known = 0, True  # how long the units so far surely ran; whether exactly that
    for unit in units:
        for w in unit:
            delay = _ns(w, "startdelay")
            if not delay or (least == 0 and known):
                continue
            entry = w.keys["startdelay"]
            if delay <= least:
                del w.keys["startdelay"]
                line = f" (line {entry.src.line})" if entry.src else ""
                w.notes.append(f"fio's startdelay {entry.value}{line} counts from its start; "
                               f"the jobs before this one run at least "
                               f"{format_duration(least)}, so fio starts it at once")
                continue
            left = f"{format_duration(least)}" if least else "nothing known"
            w.keys["startdelay"] = Entry(
                format_duration_exact(delay - least), entry.src,
                f"fio counts startdelay ({entry.value}) from its start: what is left after "
                f"what the jobs before this one surely run ({left})"
                + ("" if known else "; none if they run longer, as their size-based jobs may"))
        lengths = []
        for w in unit:
            timed = w.keys.get("time_based", Entry(False, None)).value is True
            parts = [_ns(w, "startdelay"), _ns(w, "ramp_time"),
                     _ns(w, "runtime") if timed else 0]
            if any(p is None for p in parts) or not timed:
                known = False
            lengths.append(sum(p or 0 for p in parts))
        least += max(lengths, default=0)
