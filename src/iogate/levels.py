"""What the history store says a case's metrics should be: the levels its ``history``
expectations are judged against, read from the store before judging.

Judging (:mod:`iogate.judge`) never reads the store: the run's orchestration
(:mod:`iogate.runner`) reads here, for each case, the level of every metric its expectations
compare with ``history``, and hands them to :func:`iogate.judge.judge`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from iogate.changes import last_level
from iogate.history import HistoryError, is_url, load
from iogate.ids import case_id
from iogate.judge import HistoryLevel
from iogate.spec import Case

MIN_HISTORY = 5  # fewest recorded runs of a case that ``history`` is judged against


def history_level(store: str, cid: str, device: str, metric: str) -> HistoryLevel:
    """The level of ``metric`` for case ``cid`` on ``device`` over the runs of the store
    that form its norm: those whose case passed or that a person accepted
    (:attr:`iogate.history.Point.in_norm`), so that a failed run never moves it
    (:func:`iogate.changes.last_level`)."""
    points = []  # a store not made yet is made by this run's recording
    try:
        if is_url(store) or os.path.exists(store):
            points = [p for series in load(store, [metric], case_id=cid,
                                           device=device).values() for p in series]
    except HistoryError as exc:
        return HistoryLevel(None, f"the history store cannot be read: {exc}")
    values, recorded = [p.value for p in points if p.in_norm], len(points)
    if len(values) < MIN_HISTORY:
        where = f" on {device}" if device else ""
        return HistoryLevel(None, f"not judged: the history holds {len(values)} run(s) of "
                            f"this case{where} that passed or were accepted ({recorded} "
                            f"recorded), {MIN_HISTORY} are needed", judged=False,
                            runs=len(values), recorded=recorded)
    return HistoryLevel(last_level(values), runs=len(values), recorded=recorded)


def history_levels(store: str | None, case: Case, env: Mapping[str, object]
                   ) -> dict[str, HistoryLevel]:
    """The level of each metric ``case``'s expectations compare with ``history``, on the
    device of its environment ``env``; none without a store (``--history``)."""
    if store is None:
        return {}
    device = str(env.get("target.device_model") or "")
    return {e.metric.text: history_level(store, case_id(case), device, e.metric.text)
            for e in case.expectations if "history" in e.names}
