"""fio job files to iogate suites, with fio's meaning kept: the entry points, which parse a
job file, translate each job, group them, write the suite and load it.

:func:`import_jobfile` turns a job file into suite YAML: ``[global]`` options that every job
shares become ``defaults``, each job a workload (:mod:`iogate.fio.translate`, with the
meaning of each fio option in :mod:`iogate.fio.vocabulary`). Values are converted where
iogate reads them differently from fio, with a comment saying so. fio's stonewalls and
``wait_for`` become groups and order (:mod:`iogate.fio.groups`); the suite is written by
:mod:`iogate.fio.render`.

Every option is translated, accepted with a comment when it only changes fio's output, or
refused: one :class:`~iogate.errors.SuiteError` names each refused option at its file and
line. The suite is then loaded with iogate's own loader, and whatever that finds is reported
at the fio line it came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iogate.errors import Problem, SuiteError
from iogate.fio import is_jobfile
from iogate.fio.groups import assign_exitall, assign_groups, assign_startdelays
from iogate.fio.job_state import Workload
from iogate.fio.jobfile import JobFile, Option, parse_lenient
from iogate.fio.problems import Problems
from iogate.fio.render import Imported, Origin, render
from iogate.fio.translate import effective, link_readbacks, workload
from iogate.units import parse_size

if TYPE_CHECKING:
    from iogate.spec import LoadedSuite
    from iogate.spec.overrides import Overrides

__all__ = ["import_jobfile", "is_jobfile", "load_jobfile"]


def _given_size(given: Mapping[str, Any] | None) -> int | None:
    """The size ``--set`` gives, in bytes; None when it gives none or an expression."""
    if not given or "size" not in given:
        return None
    try:
        return parse_size(given["size"])
    except (TypeError, ValueError):
        return None


def _convert(path: str, text: str | None, env: Mapping[str, str] | None,
             given: Mapping[str, Any] | None = None) -> Imported:
    """The job file as a suite. A size ``--set`` gives is read as every job's own ``size=``
    (over the file's): what fio's size means depends on the job (with filesize it is the
    amount moved, not the region; loops multiply it), which the translation knows."""
    jobfile, syntax = parse_lenient(path, text)
    problems = Problems(path)
    problems.items += syntax
    used_names: set[str] = set()
    size = _given_size(given)
    jobs = [(section, {**options, "size": Option("size", str(size), 0, section.name,
                                                 file="--set")} if size is not None
             else options) for section, options in effective(jobfile.sections)]
    workloads = [w for section, options in jobs
                 for w in workload(section, options, problems, used_names, env, given)]
    link_readbacks(workloads)
    units = assign_groups(workloads, problems)
    assign_exitall(workloads, units, problems)
    assign_startdelays(units)
    if problems.items and not syntax:
        _rules_too(path, jobfile, workloads, problems, env)
    problems.raise_any()
    # The first global description describes the suite; fio names jobs by their sections.
    header: list[str] = []
    description = None
    for opt in (o for s in jobfile.sections if s.is_global for o in s.options):
        if opt.key == "description" and opt.value and description is None:
            description = opt.value
        elif opt.key in ("description", "name"):
            header.append(f"{opt} ({opt.where}, [global]): fio " + (
                "describes the run by the first description" if opt.key == "description"
                else "names each job by its section or its own name="))
    return render(path, jobfile, workloads, description, header)


def _rules_too(path: str, jobfile: JobFile, workloads: list[Workload], problems: Problems,
               env: Mapping[str, str] | None) -> None:
    """With options refused, what the suite's rules also find in the jobs that converted
    whole, added to ``problems``: one validate names every problem of the file, not one stage
    after another. A job with a refused option is left out of this (its rules would judge
    what is left of it, not what was written)."""
    def section(p: Problem) -> str:  # "[job] option" or "[job]": the job's section
        return p.path.split("]", 1)[0] + "]" if p.path.startswith("[") else ""

    refused = {section(p) for p in problems.items}
    if "[global]" in refused:
        return  # every job lacks what was refused
    try:
        _check(render(path, jobfile, workloads, None, []), env, strict=False)
    except SuiteError as exc:
        problems.items += [p for p in exc.problems
                           if section(p) not in refused and p not in problems.items]


# -- loading ------------------------------------------------------------------------------

_UNSET = re.compile(r"variable '[A-Za-z_][A-Za-z0-9_]*' is not set")
# What a job without filename lacks, fio's template for a target named when it runs.
_NO_TARGET = re.compile(r"size is required: without a filename|needs a filename: without one")


def _check(imported: Imported, env: Mapping[str, str] | None, *, strict: bool,
           overrides: Overrides | None = None) -> LoadedSuite | None:
    """Load the suite; report what the loader finds at the fio line each value came from.
    Unless ``strict``, an unset variable is left for the run to report."""
    from iogate.spec import load_suite_text

    try:
        suite = load_suite_text(imported.text, imported.path, env, overrides)
        # Its warnings, like its problems, at the fio line each value came from.
        suite.warnings = [_at_fio_line(imported, w) for w in suite.warnings]
        return suite
    except SuiteError as exc:
        problems = Problems(imported.path)
        for p in exc.problems:
            if not strict and (_UNSET.search(p.message) or _NO_TARGET.search(p.message)):
                continue  # for the run to give
            origin = imported.origins[p.line - 1] if 0 < p.line <= len(imported.origins) \
                else Origin(0, "")
            hint = "; or name the target: --set filename=PATH" \
                if _NO_TARGET.search(p.message) else ""
            problems.add(origin.line, origin.what, p.message + hint, origin.file)
        problems.raise_any()
    return None


def _at_fio_line(imported: Imported, warning: Problem) -> Problem:
    """A warning of the suite made from a job file, at the job file's line."""
    origin = imported.origins[warning.line - 1] \
        if 0 < warning.line <= len(imported.origins) else Origin(0, "")
    return Problem(origin.file or imported.path, origin.line, 0, origin.what, warning.message)


def import_jobfile(path: Path | str, text: str | None = None,
                   warned: list[Problem] | None = None) -> str:
    """A fio job file as suite YAML; raise SuiteError naming every problem at its fio line.

    The suite is checked with the current environment; a variable that is not set is left
    for the run to report. Its warnings (valid, but likely not what was meant) are added to
    ``warned``."""
    imported = _convert(str(path), text, None)
    suite = _check(imported, None, strict=False)
    if suite is not None and warned is not None:
        warned += suite.warnings
    return imported.text


def load_jobfile(path: Path | str, text: str | None = None,
                 env: Mapping[str, str] | None = None, overrides: Overrides | None = None
                 ) -> LoadedSuite:
    """Import a job file and load the suite, as :func:`iogate.spec.load_suite` loads one
    (``overrides``, ``--set``, over every workload's keys)."""
    given = overrides.values if overrides else None
    imported = _convert(str(path), text, env, given)
    if overrides and _given_size(given) is not None:  # the translation applied it
        overrides = replace(overrides, values={k: v for k, v in overrides.values.items()
                                               if k != "size"})
    suite = _check(imported, env, strict=True, overrides=overrides)
    assert suite is not None
    return suite



