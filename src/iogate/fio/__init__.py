"""fio interoperability: job files in and out, and fio as a backend.

What tells a job file from a suite (:func:`is_jobfile`) is here, apart from the importer, so
that a run of suites alone never loads fio's vocabulary and translation."""

from __future__ import annotations

from pathlib import Path

from iogate.interrupts import read_input


def is_jobfile(path: Path | str) -> bool:
    """A ``.fio`` file, or a regular file whose first line that is not blank or a comment
    is a ``[section]`` (a suite starts with a key). Anything else (a FIFO, process
    substitution) is read once, as what its name says: looking inside would consume it."""
    p = Path(path)
    if p.suffix.lower() == ".fio":
        return True
    try:
        if not p.is_file():
            return False
        head = read_input(p, 64 * 1024).decode("utf-8", "replace")
    except OSError:
        return False
    for line in head.splitlines():
        s = line.strip()
        if s and s[0] not in ";#":
            return s.startswith("[") and s.endswith("]")
    return False
