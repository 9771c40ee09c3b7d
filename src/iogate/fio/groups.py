"""fio's schedule as iogate's groups: ``stonewall`` and ``wait_for`` turned into workloads
that run together (one group) or one after another.

fio runs the jobs of a file at once, up to a ``stonewall``; ``wait_for=NAME`` starts a job
when that job ends. iogate runs workloads one after another unless they share a ``group``,
then together. Jobs between stonewalls become a group; a ``wait_for`` becomes a step in
that order when the job it waits for is the only one running before it, the only case
iogate can run as fio does; otherwise it is refused. (``new_group`` only groups fio's
report: :data:`~iogate.fio.vocabulary.OUTPUT_ONLY`.)
"""

from __future__ import annotations

from iogate.expr import shown
from iogate.fio.problems import Problems
from iogate.fio.translate import Workload

__all__ = ["assign_groups"]


def assign_groups(workloads: list[Workload], problems: Problems) -> None:
    """fio's schedule as iogate's: units that run one after another, the jobs of one unit
    at once (a group when there are several)."""
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
