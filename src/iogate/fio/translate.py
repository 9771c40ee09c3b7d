"""One fio job to one iogate workload: the job's options, its global ones merged in, as
workload keys with comments where iogate spells fio's meaning differently, notes on what
has no effect, and a problem for each option that cannot be kept. (A job under
``directory`` whose clones fio gives files of their own, ``JOB.N.F``, is one workload per
clone: iogate's threads share their workload's files.)

Sizes and counts are fio's (``4k`` is 4096, ``4KiB`` is 4000 with the default ``kb_base``,
``rate_iops=20k`` is 20480) and are written exactly; ``rate`` and ``rate_iops`` are per fio
clone and per direction, so the workload spells out the mapping and multiplies by
``numjobs``; a synchronous engine (one the engine catalog says keeps one request in flight)
ignores ``iodepth``; options fio ignores for the job's ``rw`` are left out with a note
(for ``rw`` from a variable, with its value in the environment the suite is loaded with);
``${VAR}`` stays a reference, read from the environment when the suite runs.

This module is the driver: the order of the conversion (:class:`_Job`, whose option groups'
handlers are mixins of :class:`~iogate.fio.job_state.JobState`, a module each:
:mod:`~iogate.fio.job_mode`, :mod:`~iogate.fio.job_files`, :mod:`~iogate.fio.job_region`,
:mod:`~iogate.fio.job_pacing`, :mod:`~iogate.fio.job_io`, :mod:`~iogate.fio.job_data`), the
options none of them converts, each job's effective options, the workloads it becomes and
their names, and fio's read-back of one job's blocks by a later one. The groups are mixins
rather than tables of functions because their handlers read and update one job's state
(rw, engine, files, clones, offset, numjobs, runtime) and call one another within a group;
as methods of one object they keep that state typed in one place, and :meth:`_Job.convert`
stays the one list of steps in the order each needs.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from iogate.expr import shown
from iogate.fio.job_data import DataOptions
from iogate.fio.job_files import FileOptions
from iogate.fio.job_io import IoOptions
from iogate.fio.job_mode import ModeOptions
from iogate.fio.job_pacing import PacingOptions
from iogate.fio.job_region import RegionOptions
from iogate.fio.job_state import Entry, Workload, default_value, flag
from iogate.fio.jobfile import (
    BARE_FLAGS,
    Option,
    Section,
    ValueProblem,
)
from iogate.fio.problems import Problems
from iogate.fio.vocabulary import (
    ALIASES,
    AT_DEFAULT,
    ENGINE_OPTIONS,
    FIO_OPTIONS,
    HINTS,
    OUTPUT_ONLY,
    SAME_MEANING,
)
from iogate.spec.fields import NAME_MAX

__all__ = ["NAME_BAD", "Entry", "Workload", "effective", "link_readbacks", "suite_name",
           "workload"]


# -- one job ------------------------------------------------------------------------------


class _Job(ModeOptions, FileOptions, RegionOptions, PacingOptions, IoOptions,
           DataOptions):
    """The conversion of one fio job (its global options merged) to workload keys."""

    # the conversion, in an order where each step knows what it depends on
    def convert(self) -> None:
        self._kb_base()
        self._rw()
        self._engine()
        self._numjobs()
        self._files()
        self._sizes()
        self._offset_increment()
        self._block_sizes()
        self._iodepth()
        self._batching()
        self._times()
        self._limits()
        self._direct()
        self._mix()
        self._rates()
        self._rate_floors()
        self._steady_state()
        self._randomness()
        self._thinktime()
        self._syncs()
        self._open_sync()
        self._end_fsync()
        self.bool_key("fill_device")
        self._flow()
        self._priorities()
        self._placement()
        self._numa()
        self._ring()
        self.bool_key("invalidate")
        self._write_layout()
        self._data()
        self._verify()
        self.plain_keys()
        self._loose_ends()

    def _loose_ends(self) -> None:
        """Every option not converted above: noted, accepted at its default, or refused."""
        for name, src in self.opts.items():
            if name in self.used or name in ("name", "description", "wait_for", "stonewall",
                                             "exitall", "exit_what"):
                continue
            if src.value is None and src.key not in BARE_FLAGS and name in FIO_OPTIONS:
                self.refuse(src, f"fio needs a value: {src.key}=...")
                continue
            if name in AT_DEFAULT or name in SAME_MEANING:
                # its value decides: a variable is read as fio reads it
                literal = self.get_literal(name)
                if literal is None:
                    continue
                src = literal
            if name in OUTPUT_ONLY:
                self.note(src, OUTPUT_ONLY[name])
            elif name in AT_DEFAULT and default_value(src) in AT_DEFAULT[name]:
                self.note(src, "fio's default")
            elif name in SAME_MEANING and (meaning := SAME_MEANING[name].get(
                    default_value(src), SAME_MEANING[name].get(None))) is not None:
                self.note(src, meaning)
            elif name in FIO_OPTIONS:
                hint = HINTS.get(name) or ("an option of fio's I/O engines; iogate's engines "
                                           "take none" if name in ENGINE_OPTIONS else "")
                self.refuse(src, f"fio's {src.key} is not supported" + (
                    f": {hint}" if hint else ": iogate has no such setting; remove it to "
                    "import the job"))
            else:
                close = [src.key.lower()] if src.key.lower() in FIO_OPTIONS else \
                    difflib.get_close_matches(src.key, sorted(FIO_OPTIONS), 1, 0.75)
                self.refuse(src, f"unknown fio option '{shown(src.key)}'" + (
                    f"; did you mean '{close[0]}'?" if close else ""))


# -- names and sections -------------------------------------------------------------------

NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
_NAME_REF = re.compile(r"(\$\{[A-Za-z_][A-Za-z0-9_]*\})")


def suite_name(raw: str, fallback: str) -> str:
    """An iogate name for a fio name: characters iogate's names do not have become '-'; an
    environment variable (``${JOB}``) stays a reference, which the suite's loader expands
    as fio expands it."""
    ascii_text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()
    parts = _NAME_REF.split(ascii_text)
    name = "".join(part if i % 2 else NAME_BAD.sub("-", part) for i, part in enumerate(parts))
    name = name.strip("-")
    return (name if len(name) <= NAME_MAX else name[:NAME_MAX].strip("-")) or fallback


def effective(sections: list[Section]) -> list[tuple[Section, dict[str, Option]]]:
    """Each job with its options: the global sections above it, then its own; a later
    setting of an option replaces an earlier one, as fio parses them in order."""
    defaults: dict[str, Option] = {}
    jobs = []
    for section in sections:
        own: dict[str, Option] = {}
        for opt in section.options:
            name = ALIASES.get(opt.key, opt.key)
            if name == "name" and section.is_global:
                continue  # fio names each job by its section
            before = own.get(name) or defaults.get(name)
            if name == "filename" and before is not None and before.value and opt.value:
                # fio adds each filename='s files to the job's, the global ones first
                opt = replace(opt, value=f"{before.value}:{opt.value}",
                              adds_up=(*(before.adds_up or (before,)), opt))
            own[name] = opt
        if section.is_global:
            defaults.update(own)
        else:
            jobs.append((section, {**defaults, **own}))
    return jobs


def workload(section: Section, options: dict[str, Option], problems: Problems,
             used_names: set[str], env: Mapping[str, str] | None = None,
             given: Mapping[str, Any] | None = None) -> list[Workload]:
    """The workload of one job, named apart from ``used_names`` (the name is added to it);
    every option that cannot be kept is added to ``problems``. A job whose clones fio gives
    files of their own is one workload per clone. ``given``: the keys ``--set`` gives every
    workload, with their values."""
    fio_name = (options["name"].value or "") if "name" in options and \
        options["name"].section == section.name and options["name"].value else \
        section.name
    w = Workload(section, fio_name)
    w.name = _unique(suite_name(fio_name, "job"), used_names)
    for name in ("stonewall", "new_group"):  # the flags that place the job among others
        src = options.get(name)
        if src is not None:
            try:
                setattr(w, name, flag(src))
            except ValueProblem as exc:
                problems.option(src, str(exc))
    w.wait_for = options.get("wait_for")
    w.exitall, w.exit_what = options.get("exitall"), options.get("exit_what")
    desc = options.get("description")
    if desc is not None and desc.section != "global" and desc.value:
        w.notes.insert(0, desc.value)
    job = _Job(problems, w, options, env, given)
    try:
        job.convert()
    except ValueProblem as exc:  # a value problem outside the steps' own handling
        problems.add(section.line, f"[{section.name}]", str(exc))
    if not job.clones:
        return [w]
    # One workload per fio clone, each on its own files or region; they run together.
    used_names.discard(w.name)
    clones = []
    for k, own in enumerate(job.clones):
        keys = {**w.keys, **own}
        clones.append(replace(w, name=_unique(f"{w.name}.{k}", used_names), keys=keys,
                              notes=list(w.notes), clone=k, stonewall=w.stonewall and k == 0,
                              new_group=w.new_group and k == 0))
    return clones


def link_readbacks(workloads: list[Workload]) -> None:
    """fio's read-back by a later job: a job that only reads with verify checks the blocks an
    earlier do_verify=0 job wrote to its files. iogate verifies in the job that writes, after
    its run, so the writer gets the verify and the reader reads unchecked, each with a
    comment. A reader with no such writer keeps its verify, which iogate's rules refuse."""
    for i, reader in enumerate(workloads):
        if reader.verify_reads is None:
            continue
        src = reader.verify_reads.src
        assert src is not None  # from an option of the job file
        files = reader.keys.get("filename")
        writer = next((w for w in reversed(workloads[:i]) if w.verify_later is not None
                       and files is not None and "filename" in w.keys
                       and w.keys["filename"].value == files.value), None)
        if writer is None or writer.verify_later is None:
            reader.keys["verify"] = reader.verify_reads
            continue
        later = writer.verify_later
        writer.keys["verify"] = Entry(later.value, later.src, "; ".join(filter(None, [
            later.comment, f"fio reads these blocks back in job [{reader.fio_name}] "
            "(do_verify=0 here); iogate reads them back at the end of this job"])))
        writer.verify_later = None
        reader.notes.append(f"{src} ({src.where}): fio checks here the blocks "
                            f"[{writer.fio_name}] wrote; iogate checked them at the end of "
                            f"{writer.name}: this job reads them unchecked")
    for w in workloads:
        if w.verify_later is not None:
            w.notes.append(w.verify_later_note)


def _unique(base: str, used_names: set[str]) -> str:
    """``base``, or ``base-N`` when taken, within iogate's name length; added to the set."""
    name, n = base[:NAME_MAX], 1
    while name in used_names:
        n += 1
        name = f"{base[:NAME_MAX - len(str(n)) - 1]}-{n}"
    used_names.add(name)
    return name
