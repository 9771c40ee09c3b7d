"""The engine's own word on each case, asked before any I/O: every case lowered to its job
spec and given to the library's validation (the session is created, never started, and
destroyed), so that what ``iogate validate`` and a run accept is what the engine accepts, by
construction and not by two rule sets kept alike by hand.

A size or offset that depends on the target (none given, or a share of the file) is taken
from the target where it exists (its size is read, nothing is written); where it does not yet,
the least region the job's block sizes allow stands in, and the run checks the real one
before its first I/O. Each refusal is a
:class:`iogate.errors.Problem` at the line of the key the library names, else of the
workload.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from iogate.errors import EngineError, Problem, SuiteError, TargetError
from iogate.ids import case_id
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.plan import seed_for, sized
from iogate.spec.loader import format_path, load_yaml, mark_of
from iogate.spec.models import JobFields
from iogate.spec.suite import Case

# A stand-in for a target named by none of the case's keys (a temporary file, made by the
# run): the library reads names, it opens none while it validates.
STAND_IN = "/nonexistent/iogate-validate.data"
_JOB_PREFIX = re.compile(r"^job \d+: ")


def stand_in(case: Case) -> JobSpec:
    """The case's job spec as the run would give it to the engine, its region taken from
    its target where that exists (:func:`iogate.plan.sized`), else the least one its block
    sizes and alignments allow."""
    w = case.workload
    files = [] if w.ioengine == "null" else (w.filenames or [STAND_IN])
    # TargetError: no target yet, the run makes it, or says why it cannot
    with contextlib.suppress(TargetError):
        case = sized(case, files)
    spec = lower(case.workload, filenames=files, seed=seed_for(case))
    if spec.size == 0:
        tables = [*spec.bssplit_read, *spec.bssplit_write]
        least = max([spec.bs_read, spec.bs_write, spec.blockalign_read, spec.blockalign_write,
                     *(e.hi for e in tables)])
        spec = replace(spec, size=least * max(1, len(files)))
    if spec.verify_state:  # made by the run just before it starts (runner): no identity yet
        spec = replace(spec, verify_state_id=(0, 0))
    return spec


def problems(cases: Sequence[Case]) -> list[Problem]:
    """What the engine refuses in ``cases``, one problem per refused case (the library
    stops at the first thing wrong with a job)."""
    from iogate.engine.session import Session  # the bindings load the library: lazily

    out = []
    for case in cases:
        try:
            with Session([stand_in(case)]):
                pass
        except EngineError as exc:
            message = _JOB_PREFIX.sub("", exc.message)
            line, col, where = _where(case, re.findall(r"[a-z_]+", message))
            out.append(Problem(str(case.path), line, col, where,
                               f"the engine refuses {case_id(case)}: {message}"))
    return out


def _where(case: Case, words: Sequence[str]) -> tuple[int, int, str]:
    """The line, column and path of the first workload key among ``words`` that the case's
    entry sets (else the suite's defaults); else the workload's line."""
    try:
        tree = load_yaml(case.path)
    except (SuiteError, OSError):  # not YAML (a fio job file), or changed since it was read
        tree = None
    if isinstance(tree, Mapping):
        places: list[tuple[Any, tuple[str | int, ...]]] = []
        for i, w in enumerate(_listed(tree.get("workloads"))):
            if isinstance(w, Mapping) and w.get("name") == case.base_name:
                places.append((w, ("workloads", i)))
                break
        places.append((tree.get("defaults"), ("defaults",)))
        for key in (w for w in words if w in JobFields.model_fields):
            for entry, path in places:
                if isinstance(entry, Mapping) and key in entry:
                    line, col = mark_of(tree, (*path, key))
                    return line, col, format_path((*path, key))
    return case.line, 0, case_id(case)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
