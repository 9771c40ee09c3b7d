"""A starter suite for a target (``iogate init TARGET``): a commented suite a new user can run
at once and then tighten.

What the target is decides what the suite holds:

- a block device: its size, model and firmware (the environment facts,
  :mod:`iogate.environment`) and whether it carries data (a filesystem or partition table
  signature, as a run finds it: :func:`iogate.targets.write_refusal`); the whole device is
  the region;
- an existing file: its size is the region; a file iogate did not create is only read;
- a path where nothing is: a file iogate creates, of ``${SIZE:-1GiB}``.

Its cases only read unless ``writes`` is asked for, and never write a device that carries
data or a file iogate did not make. Reads and writes alike run with direct I/O on io_uring
(libaio where io_uring is disabled), and expect what any healthy target meets: no errors and
a bounded tail latency. The comments say how to turn them into a gate.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from iogate import environment, ownership
from iogate.errors import IogateError
from iogate.targets import write_refusal
from iogate.units import format_size_exact


class StarterError(IogateError):
    """A starter suite that cannot be written as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    """What a target is: its path, ``kind`` (``device``, ``file`` or ``new``), its size in
    bytes (None for a new file), what it is (words for the header) and why it may not be
    written (None: it may, with ``--allow-destructive`` for a device)."""

    path: str
    kind: str
    size: int | None
    about: list[str]
    refusal: str | None


def _file_owned(path: str) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        return ownership.owns(fd)
    finally:
        os.close(fd)


def inspect(path: str) -> Target:
    """What ``path`` is, read without writing anything (StarterError for what no suite can
    use: a directory, a FIFO, a character device)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise StarterError(f"{path}: neither it nor its directory {parent} exists; name "
                               "a block device, a file, or a new file in an existing "
                               "directory") from None
        return Target(path, "new", None, ["a file iogate creates and lays out"], None)
    if stat.S_ISBLK(st.st_mode):
        facts = environment.capture(path)
        size = int(Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}/size")
                   .read_text()) * 512
        about = [f"a block device of {format_size_exact(size)}"]
        for key, name in (("target.device_model", "model"), ("target.firmware", "firmware")):
            if facts.get(key):
                about.append(f"{name} {facts[key]}")
        refusal = write_refusal(path)
        about.append(f"iogate would not write it: {refusal}" if refusal
                     else "it carries no filesystem or partition table signature")
        return Target(path, "device", size, about, refusal)
    if stat.S_ISREG(st.st_mode):
        owned = _file_owned(path)
        about = [f"an existing file of {format_size_exact(st.st_size)}",
                 "made by iogate" if owned else "not made by iogate: only read"]
        return Target(path, "file", st.st_size, about,
                      None if owned else "an existing file iogate did not create")
    raise StarterError(f"{path}: not a block device or a regular file")


def _engine() -> str:
    """io_uring, unless the kernel has it disabled (kernel.io_uring_disabled), then libaio."""
    try:
        disabled = Path("/proc/sys/kernel/io_uring_disabled").read_text().strip()
    except OSError:
        return "io_uring"
    return "libaio" if disabled == "2" or (disabled == "1" and os.geteuid() != 0) \
        else "io_uring"


def suite_name(path: str) -> str:
    """The suite's name (and its file's): the target's base name, in safe characters."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(path.rstrip("/"))).strip("-.") \
        or "target"


_READS = (
    ("seqread-1m-qd32", "read", "1MiB", 32,
     "sequential bandwidth", ("read.bw", '">= 1MiB/s"'), ("read.clat.p99", '"< 2s"')),
    ("randread-4k-qd32", "randread", "4k", 32,
     "small-block random IOPS at depth", ("read.iops", '">= 10"'), ("read.clat.p99", '"< 2s"')),
    ("randread-4k-qd1", "randread", "4k", 1,
     "latency of one request at a time", ("read.iops", '">= 10"'), ("read.clat.p99", '"< 1s"')),
)
_WRITES = (
    ("randwrite-4k-qd32", "randwrite", "4k", 32,
     "small-block random writes", ("write.iops", '">= 10"'), ("write.clat.p99", '"< 2s"')),
    ("seqwrite-1m-qd32", "write", "1MiB", 32,
     "sequential write bandwidth", ("write.bw", '">= 1MiB/s"'), ("write.clat.p99", '"< 2s"')),
)


def starter(path: str, writes: bool = False, today: _dt.date | None = None) -> str:
    """The text of a starter suite for ``path`` (:func:`inspect`), with cases that write
    when ``writes`` (StarterError where the target must not be written)."""
    target = inspect(path)
    if writes and target.refusal:
        raise StarterError(f"{path}: {target.refusal}; a starter suite for it only reads "
                           "(leave out --writes)")
    day = (today or _dt.date.today()).isoformat()
    lines = [
        f"# A starter suite for {path}, written by `iogate init` on {day}:",
        *(f"#   {fact}" for fact in target.about),
        "#",
        "# Its expectations are what any healthy target meets. Run it once and read the figures:",
        f"#   iogate run {suite_name(path)}.suite.yaml --json first.json"
        + (" --allow-destructive" if writes and target.kind == "device" else ""),
        "# then tighten each `expect` to what this target must keep doing (the commented lines",
        "# show how), or record a baseline (--save-baseline FILE) and judge later runs against",
        "# it (--baseline FILE, with `>= 0.95 * baseline`), or keep a history (--history FILE).",
        "# `iogate metrics` lists what an expectation can name; `iogate schema` writes the JSON",
        "# schema an editor checks suites with.",
    ]
    if target.kind == "device":
        lines += ["#", "# The cases read the whole device."]
        lines += (["# The writes destroy its contents, and run only with --allow-destructive",
                   "# on the command line."] if writes else
                  ["# Nothing is written (`iogate init --writes` adds cases that write)."])
    elif not writes:
        lines += ["#", "# Nothing is written but the file's layout"
                  + (" (a new file)" if target.kind == "new" else "")
                  + " (`iogate init --writes` adds cases that write)."]
    lines += [
        f"suite: {suite_name(path)}",
        "defaults:",
        f"  filename: {path if target.kind == 'device' else os.path.abspath(path)}",
        f"  ioengine: {_engine()}",
        "  direct: true  # the device, not the page cache",
    ]
    if target.kind == "new":
        lines.append("  size: ${SIZE:-1GiB}  # the file iogate lays out")
    lines += [
        "  runtime: ${RUNTIME:-10s}",
        "  ramp_time: ${RAMP:-1s}",
        "  time_based: true",
        "workloads:",
    ]
    for name, rw, bs, depth, what, (metric, floor), (tail, bound) in (
            _READS + (_WRITES if writes else ())):
        lines += [
            f"  - name: {name}  # {what}",
            f"    rw: {rw}",
            f"    bs: {bs}",
            f"    iodepth: {depth}",
            "    expect:",
            '      errors: "== 0"',
            f"      {metric}: {floor}",
            f"      {tail}: {bound}",
            f"      # {metric}: \">= 0.95 * baseline\"  # with --baseline FILE",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
