#!/usr/bin/env python3
"""Benchmark matrix: iogate against fio on the same file and workloads, side by side.

Each row is one workload, run by both tools on the same 1 GiB file (laid out once with
sequential 1 MiB writes and an fsync, reused by every row, written into by the write rows):

  null-4k-qd1 / null-4k-qd32      null engine, 4 KiB random reads: the engine's own cost
  null-4k-qd1-map / -qd32-map     the same with each tool's random map (fio's default)
  uring-randread-4k-qd1 / -qd32   io_uring, 4 KiB random reads, O_DIRECT
  libaio-randread-4k-qd32         libaio, 4 KiB random reads, O_DIRECT
  psync-randread-4k-qd1           pread(2), 4 KiB random reads, O_DIRECT, 1 job
  uring-write-128k-qd8            io_uring, 128 KiB sequential writes, O_DIRECT
  uring-read-1m-qd16              io_uring, 1 MiB sequential reads, O_DIRECT
  uring-randrw-8k-qd16            io_uring, 8 KiB random 70/30 reads/writes, O_DIRECT
  psync-cache-4k-j1 / -j2         pread(2), 4 KiB random reads from the page cache (buffered,
                                  file read into the cache before each run), 1 and 2 jobs
  uring-cache-4k-qd32             io_uring, 4 KiB random reads from the page cache, QD32, in
                                  both tools with neither registered files nor buffers
  uring-cache-4k-qd32-fixed       ... both registered (fixedbufs, registerfiles)
  uring-cache-4k-qd32-sqpoll      ... both registered, and a submission polling thread
                                  (sqthread_poll)

For every row and tool: IOPS (reads + writes), completion latency (clat) p50 and p99 per data
direction, and CPU per I/O of the whole process: user + system CPU seconds over the I/Os, in
microseconds. For fio that is the rusage of the fio process (its job processes included) from
os.wait4; fio's own usr_cpu/sys_cpu of the jobs is kept beside it for reference. For iogate it
is the getrusage(RUSAGE_SELF) delta around an in-process run (all threads, the Python caller
included).

Each row runs --rounds times per tool, alternating which tool goes first, and the table shows
the median of each figure. fio's JSON is read from the file given to --output.

Targets (reported, never gating: the exit status is 0 whatever the figures):
  device rows     IOPS >= 0.97x fio, clat p99 <= 1.15x fio (every direction), CPU/IO <= 1.0x fio
  null rows       IOPS >= 3x fio
  page cache rows IOPS >= 1.1x fio; the io_uring ones also CPU/IO <= 0.8x fio

--jobs 1,4,16 runs each CPU-bound row (null, page cache) at each of those numjobs (a row
named NAME-jN) and adds a scaling table: each tool's IOPS at each count and its efficiency
per job, IOPS(N) / (N x IOPS(1)) with 1 the smallest count given (1.00: linear).

  .venv/bin/python bench/matrix.py [--runtime 5] [--rounds 4] [--rows 'uring-*'] [--json OUT]
                                   [--jobs 1,4,16]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from iogate.engine.session import run
from iogate.errors import IogateError
from iogate.job import JobSpec

KiB, MiB, GiB = 1024, 1024**2, 1024**3
FILE_SIZE = 1 * GiB
LAYOUT_CHUNK = 1 * MiB
DIRECTIONS = ("read", "write")

# What each class of row is held to: (IOPS at least, clat p99 at most, CPU/IO at most),
# each as a ratio iogate / fio; None: not a target for that class.
TARGETS: dict[str, tuple[float, float | None, float | None]] = {
    "device": (0.97, 1.15, 1.0),
    "null": (3.0, None, None),
    "cache": (1.1, None, None),
    "ring": (1.1, None, 0.8),  # io_uring from the page cache
}
# io_uring's fast paths a row can set, in both tools, by fio's names
RING_OPTIONS = ("fixedbufs", "registerfiles", "sqthread_poll")


@dataclass(frozen=True)
class Row:
    name: str
    engine: str
    rw: str
    bs: int
    iodepth: int
    kind: str  # device | null | cache | ring (see TARGETS)
    numjobs: int = 1
    rwmixread: int = 100
    random_map: bool = False  # both tools' random map (each block once per pass)
    # io_uring's fast paths set in both tools (RING_OPTIONS); None: each tool's defaults
    ring: tuple[str, ...] | None = None

    @property
    def direct(self) -> bool:
        return self.kind == "device"

    @property
    def uses_file(self) -> bool:
        return self.kind != "null"

    @property
    def directions(self) -> tuple[str, ...]:
        if self.rw in ("randrw", "rw"):
            return DIRECTIONS
        return ("write",) if "write" in self.rw else ("read",)

    def describe(self) -> str:
        mix = f" {self.rwmixread}/{100 - self.rwmixread}" if len(self.directions) == 2 else ""
        io = "O_DIRECT" if self.direct else ("page cache" if self.uses_file else "no file")
        ring = "" if self.ring is None else ", " + (" ".join(self.ring) or "nothing registered")
        return (f"{self.engine} {size_text(self.bs)} {self.rw}{mix} QD{self.iodepth} "
                f"numjobs {self.numjobs}, {io}" + (", random map" if self.random_map else "")
                + ring)


ROWS = [
    Row("null-4k-qd1", "null", "randread", 4 * KiB, 1, "null"),
    Row("null-4k-qd32", "null", "randread", 4 * KiB, 32, "null"),
    Row("null-4k-qd1-map", "null", "randread", 4 * KiB, 1, "null", random_map=True),
    Row("null-4k-qd32-map", "null", "randread", 4 * KiB, 32, "null", random_map=True),
    Row("uring-randread-4k-qd1", "io_uring", "randread", 4 * KiB, 1, "device"),
    Row("uring-randread-4k-qd32", "io_uring", "randread", 4 * KiB, 32, "device"),
    Row("libaio-randread-4k-qd32", "libaio", "randread", 4 * KiB, 32, "device"),
    Row("psync-randread-4k-qd1", "psync", "randread", 4 * KiB, 1, "device"),
    Row("uring-write-128k-qd8", "io_uring", "write", 128 * KiB, 8, "device"),
    Row("uring-read-1m-qd16", "io_uring", "read", 1 * MiB, 16, "device"),
    Row("uring-randrw-8k-qd16", "io_uring", "randrw", 8 * KiB, 16, "device", rwmixread=70),
    Row("psync-cache-4k-j1", "psync", "randread", 4 * KiB, 1, "cache"),
    Row("psync-cache-4k-j2", "psync", "randread", 4 * KiB, 1, "cache", numjobs=2),
    Row("uring-cache-4k-qd32", "io_uring", "randread", 4 * KiB, 32, "ring", ring=()),
    Row("uring-cache-4k-qd32-fixed", "io_uring", "randread", 4 * KiB, 32, "ring",
        ring=("fixedbufs", "registerfiles")),
    Row("uring-cache-4k-qd32-sqpoll", "io_uring", "randread", 4 * KiB, 32, "ring",
        ring=("fixedbufs", "registerfiles", "sqthread_poll")),
]

# What the two tools still do differently with the settings used here; printed with the table.
DIFFERENCES = [
    "fio runs each job in a forked process (its default); iogate runs worker threads inside "
    "this Python process. CPU is the whole process for both: fio's from wait4 (job processes "
    "included), iogate's from getrusage(RUSAGE_SELF) (interpreter and progress polling "
    "included). fio's figure also holds its start-up, option parsing and JSON output "
    "(fixed costs, about 0.1 s of CPU here, that weigh less the longer --runtime); iogate's "
    "leaves out interpreter start and imports but holds session set-up and result collection.",
    "io_uring: iogate registers its files and asks for SINGLE_ISSUER|DEFER_TASKRUN rings; fio "
    "uses its defaults (no registerfiles, fixedbufs, sqpoll or hipri). The uring-cache rows set "
    "registerfiles, fixedbufs and sqthread_poll the same in both (as the row says); with "
    "sqthread_poll iogate's ring is a plain SQPOLL ring, like fio's.",
    "Submission: each tool's defaults, the same: every request submitted as soon as it is "
    "prepared (iodepth_batch_submit=1), each reap waiting for one completion "
    "(iodepth_batch_complete_min=1) and taking one (iodepth_batch_complete_max defaults "
    "to the minimum).",
    "Clocks: fio --clocksource=cpu (TSC); iogate CLOCK_MONOTONIC. Percentiles come from each "
    "tool's own log-linear histogram (fio 64 buckets per octave, iogate 128).",
    "Offsets: uniform over the whole 1 GiB, no random map in either (the -map rows: each "
    "tool's random map, every block once per pass); each tool has its own "
    "generator with a fixed seed (fio randrepeat=1, its default; iogate seed 0x1234).",
    "Write buffers: each tool's default. fio fills its buffers once with random data and "
    "scrambles a few bytes per write (scramble_buffers=1); iogate fills once with non-zero "
    "pseudo-random data and does not refill.",
    "Scheduling: each fio job process starts its own session (setsid), so with "
    "kernel.sched_autogroup_enabled=1 every fio job is a scheduling group of its own, while "
    "iogate's worker threads share the one group of this process. On a quiet machine that "
    "changes nothing; under other load fio with numjobs=N gets up to N times iogate's share "
    "of the CPUs.",
    "fio runs with --invalidate=0 like iogate (no cache drop before a job); otherwise fio would "
    "empty the page cache the psync rows read from. No ramp in either tool.",
]


@dataclass
class Measured:
    iops: float | None = None  # reads + writes
    ios: int | None = None
    # per direction, in ns: {"read": {"clat_p50", "clat_p99", "slat_mean", "lat_mean"}, ...};
    # the means are for reference (the table shows clat)
    latency: dict[str, dict[str, float | None]] = field(default_factory=dict)
    cpu_s: float | None = None  # user + system of the whole process
    cpu_per_io_us: float | None = None
    # fio only: its own accounting of the jobs' CPU (percent of the job runtime)
    fio_usr_cpu: float | None = None
    fio_sys_cpu: float | None = None
    fio_job_cpu_per_io_us: float | None = None
    wall_s: float | None = None
    error: str | None = None

    def p(self, direction: str, pct: str) -> float | None:
        """A clat percentile ("p50", "p99") of a direction, in ns."""
        return self.latency.get(direction, {}).get(f"clat_{pct}")


def size_text(n: int) -> str:
    for unit, scale in (("MiB", MiB), ("KiB", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def per_io_us(cpu_s: float | None, ios: int | None) -> float | None:
    return cpu_s / ios * 1e6 if cpu_s is not None and ios else None


# -- fio ----------------------------------------------------------------------------------


def fio_command(row: Row, filename: str | None, runtime: int, out: Path) -> list[str]:
    cmd = ["fio", f"--name={row.name}", f"--ioengine={row.engine}", f"--rw={row.rw}",
           f"--bs={row.bs}", f"--iodepth={row.iodepth}", f"--numjobs={row.numjobs}",
           f"--direct={int(row.direct)}", f"--size={FILE_SIZE}", "--offset=0",
           "--time_based", f"--runtime={runtime}", "--ramp_time=0",
           "--invalidate=0", "--clocksource=cpu", "--group_reporting",
           "--output-format=json", f"--output={out}"]
    if not row.random_map:
        cmd.append("--norandommap")
    if len(row.directions) == 2:
        cmd.append(f"--rwmixread={row.rwmixread}")
    if filename:
        cmd.append(f"--filename={filename}")
    cmd += [f"--{option}=1" for option in row.ring or ()]
    return cmd


def run_fio(row: Row, filename: str | None, runtime: int, workdir: Path) -> Measured:
    out = workdir / f"fio-{row.name}.json"
    err = workdir / f"fio-{row.name}.stderr"
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    with open(err, "w") as errf:
        proc = subprocess.Popen(fio_command(row, filename, runtime, out),
                                stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped by wait4
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        return Measured(error=f"fio exited {proc.returncode}: {err.read_text().strip()[-300:]}")
    text = out.read_text()
    try:
        report = json.loads(text[text.index("{"):])  # anything fio printed before the JSON
        job = report["jobs"][0]
    except (ValueError, KeyError, IndexError) as e:
        return Measured(error=f"fio JSON unreadable ({e}): {text[:200]!r}")
    if job.get("error"):
        return Measured(error=f"fio job error {job['error']}: {err.read_text().strip()[-300:]}")
    ios = sum(job[d]["total_ios"] for d in row.directions)
    iops = sum(job[d]["iops"] for d in row.directions)
    latency = {}
    for d in row.directions:
        pct = job[d]["clat_ns"].get("percentile", {})
        latency[d] = {"clat_p50": pct.get("50.000000"), "clat_p99": pct.get("99.000000"),
                      "slat_mean": job[d]["slat_ns"]["mean"],
                      "lat_mean": job[d]["lat_ns"]["mean"]}
    cpu_s = usage.ru_utime + usage.ru_stime
    job_cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] / 1000.0
    return Measured(iops=iops, ios=ios, latency=latency, cpu_s=cpu_s,
                    cpu_per_io_us=per_io_us(cpu_s, ios), fio_usr_cpu=job["usr_cpu"],
                    fio_sys_cpu=job["sys_cpu"],
                    fio_job_cpu_per_io_us=per_io_us(job_cpu_s, ios), wall_s=wall)


# -- iogate -------------------------------------------------------------------------------


def iogate_spec(row: Row, filename: str, runtime: int) -> JobSpec:
    return JobSpec(engine=row.engine, rw=row.rw, bs_read=row.bs, bs_write=row.bs,
                   iodepth=row.iodepth, numjobs=row.numjobs, size=FILE_SIZE, offset=0,
                   runtime_ns=runtime * 10**9, ramp_ns=0, time_based=True, direct=row.direct,
                   rwmixread=row.rwmixread, random_map=row.random_map,
                   filename=filename, no_layout=row.uses_file,
                   **({} if row.ring is None else {
                       "fixedbufs": "fixedbufs" in row.ring,
                       "registerfiles": "registerfiles" in row.ring,
                       "sqpoll": "sqthread_poll" in row.ring}))


def run_iogate(row: Row, filename: str | None, runtime: int) -> Measured:
    spec = iogate_spec(row, filename or "", runtime)
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        result = run([spec])
    except IogateError as e:
        return Measured(error=f"iogate failed: {e}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.monotonic() - t0
    errors = result.metric("errors") or 0
    if result.interrupted or errors:
        return Measured(error=f"iogate run {'interrupted' if result.interrupted else ''} "
                              f"with {errors:.0f} errors")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ios = int(result.metric("total.ios") or 0)
    latency = {d: {"clat_p50": result.metric(f"{d}.clat.p50"),
                   "clat_p99": result.metric(f"{d}.clat.p99"),
                   "slat_mean": result.metric(f"{d}.slat.mean"),
                   "lat_mean": result.metric(f"{d}.lat.mean")}
               for d in row.directions}
    return Measured(iops=result.metric("total.iops"), ios=ios, latency=latency, cpu_s=cpu_s,
                    cpu_per_io_us=per_io_us(cpu_s, ios), wall_s=wall)


# -- the file -----------------------------------------------------------------------------


def lay_out(path: Path) -> None:
    """Write the whole file once (sequential 1 MiB writes, then fsync) so every block is
    allocated and holds non-zero data; neither tool lays anything out itself."""
    chunk = bytearray(os.urandom(LAYOUT_CHUNK))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for i in range(FILE_SIZE // LAYOUT_CHUNK):
            chunk[:8] = i.to_bytes(8, "little")  # no two chunks alike
            os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_into_cache(path: Path) -> float:
    """Read the whole file through the page cache; seconds it took (small when cached)."""
    t0 = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        while os.read(fd, 4 * MiB):
            pass
    finally:
        os.close(fd)
    return time.monotonic() - t0


# -- figures and the table ----------------------------------------------------------------


def median_of(runs: list[Measured]) -> Measured:
    """Each figure's median over the runs that measured it; the first error if none did."""
    good = [m for m in runs if not m.error]
    if not good:
        return runs[0] if runs else Measured(error="not run")

    def med(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    latency = {d: {k: med([m.latency.get(d, {}).get(k) for m in good]) for k in figures}
               for d, figures in good[0].latency.items()}
    ios = med([m.ios for m in good])
    return Measured(iops=med([m.iops for m in good]), ios=None if ios is None else int(ios),
                    latency=latency, cpu_s=med([m.cpu_s for m in good]),
                    cpu_per_io_us=med([m.cpu_per_io_us for m in good]),
                    fio_usr_cpu=med([m.fio_usr_cpu for m in good]),
                    fio_sys_cpu=med([m.fio_sys_cpu for m in good]),
                    fio_job_cpu_per_io_us=med([m.fio_job_cpu_per_io_us for m in good]),
                    wall_s=med([m.wall_s for m in good]))


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def verdict(row: Row, fio: Measured, io: Measured) -> tuple[str, dict[str, float | None]]:
    """pass / miss (what) / n/a, and the ratios it was judged on."""
    min_iops, max_p99, max_cpu = TARGETS[row.kind]
    ratios: dict[str, float | None] = {"iops": ratio(io.iops, fio.iops)}
    if max_p99 is not None:
        for d in row.directions:
            ratios[f"{d}.p99"] = ratio(io.p(d, "p99"), fio.p(d, "p99"))
    if max_cpu is not None:
        ratios["cpu"] = ratio(io.cpu_per_io_us, fio.cpu_per_io_us)
    # (what, ratio, limit, whether the ratio must be at least the limit)
    checks = [("IOPS", ratios["iops"], min_iops, True)]
    checks += [("p99", ratios[f"{d}.p99"], max_p99, False)
               for d in row.directions if max_p99 is not None]
    if max_cpu is not None:
        checks.append(("CPU", ratios["cpu"], max_cpu, False))
    missed: list[str] = []
    for what, value, limit, at_least in checks:
        if value is None:
            return "n/a", ratios
        if (value < limit if at_least else value > limit) and what not in missed:
            missed.append(what)
    return ("miss: " + ",".join(missed) if missed else "pass"), ratios


def fmt(v: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if v is None else f"{v / scale:,.{digits}f}"


def fmt_ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def print_table(results: list[tuple[Row, Measured, Measured]], args: argparse.Namespace) -> None:
    print(f"\n{args.runtime} s per run, median of {args.rounds} rounds, tools alternating; "
          "IOPS = reads + writes; clat p50/p99 in us; CPU = whole-process user+system "
          "CPU us per I/O; ratios are iogate / fio")
    header = ("row", "class", "fio IOPS", "iog IOPS", "ratio", "fio p50", "iog p50", "ratio",
              "fio p99", "iog p99", "ratio", "fio CPU", "iog CPU", "ratio", "fio job CPU",
              "verdict")
    table: list[tuple[str, ...]] = [header]
    for row, fio, io in results:
        verdict_text, _ = verdict(row, fio, io)
        for i, d in enumerate(row.directions):
            first = i == 0
            label = row.name if len(row.directions) == 1 else (
                f"{row.name} {d}" if first else f"  {d}")
            lat = [fmt(fio.p(d, "p50"), 1e3, 2), fmt(io.p(d, "p50"), 1e3, 2),
                   fmt_ratio(ratio(io.p(d, "p50"), fio.p(d, "p50"))),
                   fmt(fio.p(d, "p99"), 1e3, 2), fmt(io.p(d, "p99"), 1e3, 2),
                   fmt_ratio(ratio(io.p(d, "p99"), fio.p(d, "p99")))]
            if first:
                table.append((label, row.kind, fmt(fio.iops, 1, 0), fmt(io.iops, 1, 0),
                              fmt_ratio(ratio(io.iops, fio.iops)), *lat,
                              fmt(fio.cpu_per_io_us, 1, 2), fmt(io.cpu_per_io_us, 1, 2),
                              fmt_ratio(ratio(io.cpu_per_io_us, fio.cpu_per_io_us)),
                              fmt(fio.fio_job_cpu_per_io_us, 1, 2), verdict_text))
            else:
                table.append((label, "", "", "", "", *lat, "", "", "", "", ""))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    left = (0, 1, len(header) - 1)
    for r in table:
        print("  ".join(c.ljust(widths[i]) if i in left else c.rjust(widths[i])
                        for i, c in enumerate(r)).rstrip())

    print("\ntargets (iogate / fio; reported, not gating):")
    for kind, (iops, p99, cpu) in TARGETS.items():
        parts = [f"IOPS >= {iops:g}x"]
        if p99 is not None:
            parts.append(f"clat p99 <= {p99:g}x in every direction")
        if cpu is not None:
            parts.append(f"CPU/IO <= {cpu:g}x")
        print(f"  {kind:7} {', '.join(parts)}")
    print("  'fio job CPU' is fio's own usr_cpu+sys_cpu of its jobs per I/O (reference only; "
          "the CPU columns are whole-process)")
    print("\nrows:")
    for row, _, _ in results:
        print(f"  {row.name:24} {row.describe()}")
    print("\nwhat differs between the tools:")
    for line in DIFFERENCES:
        print(f"  - {line}")
    for row, fio, io in results:
        for who, m in (("fio", fio), ("iogate", io)):
            if m.error:
                print(f"{row.name}/{who}: {m.error}")


def choose_rows(patterns: list[str] | None) -> list[Row]:
    if not patterns:
        return list(ROWS)
    wanted = [p for arg in patterns for p in arg.split(",") if p]
    unknown = [p for p in wanted if not any(fnmatch.fnmatchcase(r.name, p) for r in ROWS)]
    if unknown:
        raise SystemExit(f"no row matches {', '.join(unknown)}; rows: "
                         f"{', '.join(r.name for r in ROWS)}")
    return [r for r in ROWS if any(fnmatch.fnmatchcase(r.name, p) for p in wanted)]


CPU_BOUND = ("null", "cache", "ring")  # the classes --jobs scales


def with_jobs(rows: list[Row], counts: list[int]) -> list[tuple[Row, Row]]:
    """Each row as run, beside the row it comes from: a CPU-bound row once per job count
    (NAME-jN), any other as it is."""
    out: dict[str, tuple[Row, Row]] = {}
    for row in rows:
        if not counts or row.kind not in CPU_BOUND:
            out[row.name] = (row, row)
            continue
        # a row named for its job count (psync-cache-4k-j2) scales as its family
        base = replace(row, name=re.sub(r"-j[0-9]+$", "", row.name), numjobs=1)
        for n in counts:
            name = f"{base.name}-j{n}"
            out.setdefault(name, (replace(base, name=name, numjobs=n), base))
    return list(out.values())


def print_scaling(results: list[tuple[Row, Measured, Measured]],
                  base_of: dict[str, Row]) -> None:
    """Each tool's IOPS at each job count of a scaled row, and its efficiency per job."""
    by_base: dict[str, list[tuple[Row, Measured, Measured]]] = {}
    for row, fio, io in results:
        base = base_of[row.name]
        if base.name != row.name:
            by_base.setdefault(base.name, []).append((row, fio, io))
    if not by_base:
        return
    print("\nscaling (IOPS; efficiency per job = IOPS(N) / (N/N0 x IOPS(N0)), N0 the fewest "
          "jobs run; 1.00 is linear)")
    print(f"{'row':<28} {'jobs':>4}  {'fio IOPS':>12} {'eff':>5}  {'iog IOPS':>12} {'eff':>5}  "
          f"{'ratio':>6}")
    for name, runs in by_base.items():
        runs.sort(key=lambda r: r[0].numjobs)
        first = runs[0]
        for row, fio, io in runs:
            effs = []
            for m, m0 in ((fio, first[1]), (io, first[2])):
                scale = row.numjobs / first[0].numjobs
                effs.append(fmt(ratio(m.iops, None if m0.iops is None else m0.iops * scale),
                                1, 2))
            than_fio = fmt_ratio(ratio(io.iops, fio.iops))
            print(f"{name:<28} {row.numjobs:>4}  {fmt(fio.iops, 1, 0):>12} {effs[0]:>5}  "
                  f"{fmt(io.iops, 1, 0):>12} {effs[1]:>5}  {than_fio:>6}")


def environment() -> dict:
    fio_version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout
    from iogate.engine import native
    try:
        autogroup: str | None = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text()
    except OSError:
        autogroup = None
    return {"fio": fio_version.strip(), "iogate_library": native.library_path(),
            "iogate_version": native.version(), "kernel": platform.release(),
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "sched_autogroup": None if autogroup is None else autogroup.strip() == "1",
            "loadavg": os.getloadavg()}


def _json_default(o: object) -> str:
    return o.hex() if isinstance(o, bytes) else str(o)  # JobSpec.pattern is bytes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run (5)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="runs per tool and row, alternating which goes first; medians (4)")
    ap.add_argument("--rows", nargs="+", metavar="NAME",
                    help="rows to run: names or shell patterns, e.g. 'uring-*' (all)")
    ap.add_argument("--dir", default="/var/tmp",
                    help="where to make a directory for the 1 GiB test file (/var/tmp; the "
                         "file system must allow O_DIRECT)")
    ap.add_argument("--keep", action="store_true", help="keep the test file afterwards")
    ap.add_argument("--json", metavar="OUT", help="save every run's figures as JSON here")
    ap.add_argument("--jobs", metavar="N,M,...", type=lambda t: [int(n) for n in t.split(",")],
                    default=[], help="run each CPU-bound row (null, page cache) at each of "
                    "these numjobs and add a scaling table (e.g. 1,4,16)")
    args = ap.parse_args(argv)
    if any(n < 1 for n in args.jobs):
        ap.error("--jobs takes counts of at least 1")
    if args.rounds < 1 or args.runtime < 1:
        ap.error("--rounds and --runtime must be at least 1")
    if shutil.which("fio") is None:
        ap.error("fio is not installed")
    scaled = with_jobs(choose_rows(args.rows), sorted(set(args.jobs)))
    rows = [row for row, _ in scaled]
    base_of = {row.name: base for row, base in scaled}

    env = environment()
    print(f"{env['fio']}, iogate {env['iogate_version']} ({env['iogate_library']}), "
          f"kernel {env['kernel']}, {env['cpus']} CPUs, load {env['loadavg'][0]:.2f}",
          file=sys.stderr)
    if env["loadavg"][0] >= 0.5:
        print(f"warning: load average {env['loadavg'][0]:.2f} before the first run; other work "
              "on the CPUs skews every figure, the CPU-bound rows (null, page cache) most",
              file=sys.stderr)
    workdir = Path(tempfile.mkdtemp(prefix="iogate-bench-"))  # fio's JSON and stderr
    datadir = Path(tempfile.mkdtemp(prefix="iogate-bench-", dir=args.dir))
    datafile = datadir / "bench.dat"
    results: list[tuple[Row, Measured, Measured]] = []
    raw: list[dict] = []
    try:
        if any(r.uses_file for r in rows):
            print(f"laying out {FILE_SIZE // GiB} GiB at {datafile} ...", file=sys.stderr)
            lay_out(datafile)
        for row in rows:
            filename = str(datafile) if row.uses_file else None
            runs: dict[str, list[Measured]] = {"fio": [], "iogate": []}
            for r in range(args.rounds):
                order = ("fio", "iogate") if r % 2 == 0 else ("iogate", "fio")
                for tool in order:
                    note = ""
                    if row.kind in ("cache", "ring"):
                        note = f" (cache read in {read_into_cache(datafile):.2f} s)"
                    print(f"{row.name}: {tool} round {r + 1}/{args.rounds}{note} ...",
                          file=sys.stderr)
                    m = (run_fio(row, filename, args.runtime, workdir) if tool == "fio"
                         else run_iogate(row, filename, args.runtime))
                    runs[tool].append(m)
            fio, io = median_of(runs["fio"]), median_of(runs["iogate"])
            results.append((row, fio, io))
            verdict_text, ratios = verdict(row, fio, io)
            raw.append({"row": row.name, "describe": row.describe(), "class": row.kind,
                        "fio_command": fio_command(row, filename, args.runtime,
                                                   Path("OUT.json")),
                        "iogate_spec": asdict(iogate_spec(row, filename or "", args.runtime)),
                        "rounds": {t: [asdict(m) for m in ms] for t, ms in runs.items()},
                        "median": {"fio": asdict(fio), "iogate": asdict(io)},
                        "ratios": ratios, "verdict": verdict_text})
    except KeyboardInterrupt:
        print("interrupted: the rows finished so far follow", file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if args.keep:
            print(f"kept {datafile}", file=sys.stderr)
        else:
            shutil.rmtree(datadir, ignore_errors=True)

    print_table(results, args)
    print_scaling(results, base_of)
    if args.json:
        env["loadavg_end"] = os.getloadavg()
        doc = {"environment": env, "runtime_s": args.runtime, "rounds": args.rounds,
               "file_size": FILE_SIZE, "targets": TARGETS, "differences": DIFFERENCES,
               "rows": raw}
        Path(args.json).write_text(json.dumps(doc, indent=2, default=_json_default) + "\n")
        print(f"\nraw figures saved to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
