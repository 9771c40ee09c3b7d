"""Power-loss verification: ``iogate verify SUITE``, after a crash, a power cut or a device
reset, reads back the targets of every workload with a ``verify_state`` file and tells what
the device kept of what it acknowledged.

A verified write workload records in its state file each write that completed and each
sync (fsync, fdatasync) that completed after them (the library's writer, vstate.c); the
check (``iog_verify_state_check``) replays it and classifies every block position written:

- intact: all its writes were covered by a completed sync, and it holds the last of them;
- not durable: its last write came after the last completed sync: old or new data are both
  allowed, damaged or misplaced data are not;
- lost: it holds data older than a write a completed sync covered: the device broke its
  promise;
- torn, misdirected, read errors: as the verification of a run says them.

The exit code is 0 when no block is lost, torn, misdirected or unreadable, 3 when one is,
and 2 when a state file cannot be used (missing, not a regular file, damaged, another
job's) or the suite is invalid. The counts are the ``powerloss.*`` metrics of the ``--json``
document.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from iogate.engine import native
from iogate.engine.session import encode_files, verify_failure
from iogate.errors import EngineError
from iogate.ids import case_id
from iogate.inputs import InputError, check_regular
from iogate.results import VerifyFailure
from iogate.spec import Case, LoadedSuite

EXIT_OK, EXIT_INVALID, EXIT_LOST = 0, 2, 3
# The counts of a check, as metrics: powerloss.<name>.
COUNTS = ("blocks", "intact", "not_durable", "not_durable_new", "lost", "torn", "misdirected",
          "read_errors", "writes", "syncs")
FAILURES = ("lost", "torn", "misdirected", "read_errors")
SHOWN = 5  # offenders printed; the JSON keeps all the library kept


@dataclass
class StateCheck:
    """What the check of one case's state file found, or why it could not be done."""

    case_id: str
    suite: str
    state_file: str
    files: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    complete: bool = False  # the run closed the state file at its end
    ignored_bytes: int = 0  # a tail the crash cut short, not used
    offenders: list[VerifyFailure] = field(default_factory=list)
    error: str | None = None

    @property
    def failed(self) -> bool:
        return any(self.counts.get(k, 0) for k in FAILURES)

    def metrics(self) -> dict[str, int]:
        return {f"powerloss.{k}": v for k, v in self.counts.items()}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.case_id, "suite": self.suite, "state_file": self.state_file,
                "files": self.files, "complete": self.complete,
                "ignored_bytes": self.ignored_bytes, "metrics": self.metrics(),
                "offenders": [o.to_json() for o in self.offenders], "error": self.error}


def check_case(case: Case, files: list[str], *, renamed: bool = False) -> StateCheck:
    """Check ``case``'s state file against ``files``, its targets as the run named them;
    ``renamed``: the targets were given anew (``--filename``) and may have other names
    than when the run wrote the state file (a device renamed after a surprise removal)."""
    state = case.workload.verify_state or ""
    real = [os.path.realpath(f) for f in files]  # as the run's engine was given them
    out = StateCheck(case.id, str(case.path), state, real)
    try:
        check_regular(state, "a verify_state file")  # the library would wait on a FIFO
    except InputError as exc:
        out.error = str(exc)
        return out
    try:
        st, records = native.verify_state_check(
            state, encode_files(real), native.STATE_OTHER_NAMES if renamed else 0)
    except EngineError as exc:
        out.error = str(exc)
        if exc.errno == errno.EXDEV:
            out.error += ("; if the device was renamed since (re-enumerated after the power "
                          "cut), give its new name with --filename")
        return out
    out.counts = {k: int(getattr(st, k)) for k in COUNTS}
    out.complete = bool(st.complete)
    out.ignored_bytes = int(st.ignored_bytes)
    out.offenders = [verify_failure(r, real) for r in records]
    return out


def render(c: StateCheck) -> str:
    """The check of one case, as the command prints it."""
    head = f"{c.suite}::{c.case_id}  state file {c.state_file}"
    if c.error is not None:
        return f"{head}\n  error: {c.error}"
    n = c.counts
    verdict = "FAILED" if c.failed else "ok"
    closing = ("the run closed it at its end" if c.complete
               else "the run did not close it (cut short)")
    lines = [f"{head}: {verdict}",
             f"  {n['writes']} writes and {n['syncs']} completed syncs recorded; {closing}"
             + (f"; {c.ignored_bytes} bytes after its last whole record ignored"
                if c.ignored_bytes else ""),
             f"  {n['blocks']} blocks: {n['intact']} intact, {n['not_durable']} not yet "
             f"durable ({n['not_durable_new']} of them hold the last write), "
             f"{n['lost']} lost after a completed sync, {n['torn']} torn, "
             f"{n['misdirected']} misdirected, {n['read_errors']} read errors"]
    if c.offenders:
        failed = sum(n[k] for k in FAILURES)
        shown = c.offenders[:SHOWN]
        lines.append(f"  first offenders ({len(shown)} of {failed}; --json keeps "
                     f"{len(c.offenders)}):" if failed > len(shown) else "  offenders:")
        lines += [f"    {o.describe()}" for o in shown]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="SUITE",
                        help="suite files whose workloads have verify_state")
    parser.add_argument("-k", metavar="SUBSTRING", help="only cases whose id contains SUBSTRING")
    parser.add_argument("--filename", metavar="PATH",
                        help="the target of every case, as given to run --filename, or "
                             "under its new name (a device renamed since the run)")
    parser.add_argument("--json", metavar="FILE", help="write the checks as JSON to FILE")


def run(args: argparse.Namespace, suites: Sequence[LoadedSuite]) -> int:
    """The ``verify`` command on the ``suites`` its arguments named: its exit code. Its
    output file was checked before the suites were loaded."""
    from iogate.files import write_whole
    from iogate.plan import targets_of

    cases = [c for s in suites for c in s.cases
             if c.workload.verify_state and (not args.k or args.k in case_id(c))]
    if not cases:
        print("iogate: no workload " + (f"matching -k {args.k!r} " if args.k else "")
              + "has verify_state: nothing to check", file=sys.stderr)
        return EXIT_INVALID
    with targets_of(cases, args.filename) as targets:
        checks = [check_case(c, files, renamed=bool(args.filename))
                  for c, files in zip(cases, targets, strict=True)]
    for c in checks:
        print(render(c))
    if args.json:
        write_whole(args.json, json.dumps({"cases": [c.to_json() for c in checks]}, indent=2)
                    + "\n", "--json")
    if any(c.failed for c in checks):
        return EXIT_LOST
    return EXIT_INVALID if any(c.error for c in checks) else EXIT_OK
