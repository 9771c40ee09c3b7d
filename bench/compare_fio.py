#!/usr/bin/env python3
"""Benchmark: iogate against fio on the same workloads, side by side.

Workloads (all 4 KiB random reads, one job, time based):
  null      null engine, QD1 - measures per-I/O overhead of the engine itself
  io_uring  io_uring, O_DIRECT, QD32, on a 1 GiB file
  psync     pread(2), O_DIRECT, QD1, on the same file
The file is written once by iogate (sequential 1 MiB writes, so every block
is allocated and real reads hit the device), then both tools read it with
O_DIRECT so neither is served by the page cache.

CPU per I/O is user+system CPU seconds per million I/Os: for fio from its
JSON usr_cpu/sys_cpu (percent of the job's runtime), for iogate from
getrusage(RUSAGE_SELF) around the run. fio's JSON is read from the file
given to --output, never from stdout.

The disk under a VM is noisy, so each workload runs --rounds times per tool, alternating
which tool goes first, and the table shows the median of each figure over the rounds.

This reports; it does not gate: the exit status is always 0.

  PYTHONPATH=src IOGATE_LIB=native/build/libiogate.so python bench/compare_fio.py [--runtime 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iogate.engine import JobSpec, run
from iogate.errors import IogateError

KiB, MiB, GiB = 1024, 1024**2, 1024**3
FILE_SIZE = 1 * GiB


@dataclass(frozen=True)
class Workload:
    name: str
    engine: str
    iodepth: int
    direct: bool
    uses_file: bool
    target: str


WORKLOADS = [
    Workload("null", "null", 1, False, False, "iogate IOPS >= 1.5x fio"),
    Workload("io_uring", "io_uring", 32, True, True, "iogate IOPS >= fio and CPU/IO <= fio"),
    Workload("psync", "psync", 1, True, True, "iogate p50 and p99 clat within 10% of fio"),
]


@dataclass
class Measured:
    iops: float | None = None
    p50_ns: float | None = None
    p99_ns: float | None = None
    cpu_per_mio: float | None = None  # CPU seconds per million I/Os
    error: str | None = None


def run_fio(w: Workload, filename: str | None, runtime: int, workdir: Path) -> Measured:
    if shutil.which("fio") is None:
        return Measured(error="fio not installed")
    out = workdir / f"fio-{w.name}.json"
    cmd = ["fio", "--name=" + w.name, "--ioengine=" + w.engine,
           "--rw=randread", "--bs=4k", f"--iodepth={w.iodepth}", "--numjobs=1",
           f"--size={FILE_SIZE}", "--time_based", f"--runtime={runtime}",
           f"--direct={int(w.direct)}", "--randrepeat=0", "--norandommap",
           "--output-format=json", f"--output={out}"]
    if filename:
        cmd.append(f"--filename={filename}")
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return Measured(error=f"fio failed: {proc.stderr.strip()[-200:]}")
    job = json.loads(out.read_text())["jobs"][0]
    read = job["read"]
    pct = read["clat_ns"].get("percentile", {})
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] / 1000.0
    ios = read["total_ios"]
    return Measured(iops=read["iops"], p50_ns=pct.get("50.000000"), p99_ns=pct.get("99.000000"),
                    cpu_per_mio=cpu_s / ios * 1e6 if ios else None)


def iogate_spec(w: Workload, filename: str, runtime: int) -> JobSpec:
    return JobSpec(engine=w.engine, rw="randread", bs_read=4 * KiB, bs_write=4 * KiB,
                   iodepth=w.iodepth, numjobs=1, size=FILE_SIZE, offset=0,
                   runtime_ns=runtime * 10**9, ramp_ns=0, time_based=True, direct=w.direct,
                   rwmixread=100, filename=filename, no_layout=w.uses_file)


def run_iogate(w: Workload, filename: str | None, runtime: int) -> Measured:
    spec = iogate_spec(w, filename or "", runtime)
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        result = run([spec])
    except IogateError as e:
        return Measured(error=f"iogate failed: {e}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ios = result.metric("read.ios") or 0
    return Measured(iops=result.metric("read.iops"), p50_ns=result.metric("read.clat.p50"),
                    p99_ns=result.metric("read.clat.p99"),
                    cpu_per_mio=cpu_s / ios * 1e6 if ios else None)


def lay_out(path: Path) -> None:
    """Write the whole file once so that every block is allocated."""
    if path.exists() and path.stat().st_size >= FILE_SIZE:
        return
    run([JobSpec(engine="psync", rw="write", bs_read=MiB, bs_write=MiB, iodepth=1, numjobs=1,
                 size=FILE_SIZE, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
                 direct=True, rwmixread=0, filename=str(path))])
    os.sync()


def median_of(runs: list[Measured]) -> Measured:
    """Each figure's median over the runs that measured it; the first error if none did."""
    good = [m for m in runs if not m.error]
    if not good:
        return runs[0]

    def med(name: str) -> float | None:
        values = [getattr(m, name) for m in good if getattr(m, name) is not None]
        return statistics.median(values) if values else None

    return Measured(iops=med("iops"), p50_ns=med("p50_ns"), p99_ns=med("p99_ns"),
                    cpu_per_mio=med("cpu_per_mio"))


def fmt(v: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if v is None else f"{v / scale:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def verdict(w: Workload, fio: Measured, io: Measured) -> str:
    try:
        if w.name == "null":
            ok = io.iops >= 1.5 * fio.iops
        elif w.name == "io_uring":
            ok = io.iops >= fio.iops and io.cpu_per_mio <= fio.cpu_per_mio
        else:
            ok = all(abs(i / f - 1) <= 0.10 for i, f in ((io.p50_ns, fio.p50_ns),
                                                          (io.p99_ns, fio.p99_ns)))
    except TypeError:  # something was not measured
        return "n/a"
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", type=int, default=5, help="seconds per workload and tool (5)")
    ap.add_argument("--dir", help="directory for the 1 GiB test file (default: a temp dir)")
    ap.add_argument("--only", choices=[w.name for w in WORKLOADS], help="run one workload")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs per tool and workload, alternating order; medians shown (3)")
    args = ap.parse_args(argv)

    chosen = [w for w in WORKLOADS if args.only in (None, w.name)]
    workdir = Path(tempfile.mkdtemp(prefix="iogate-bench-", dir=args.dir))
    datafile = workdir / "bench.dat"
    rows = []
    try:
        if any(w.uses_file for w in chosen):
            print(f"laying out {FILE_SIZE // GiB} GiB at {datafile} ...", file=sys.stderr)
            lay_out(datafile)
        for w in chosen:
            filename = str(datafile) if w.uses_file else None
            fios, ios = [], []
            for r in range(args.rounds):
                order = ("fio", "iogate") if r % 2 == 0 else ("iogate", "fio")
                for tool in order:
                    print(f"{w.name}: {tool} (round {r + 1}/{args.rounds}) ...", file=sys.stderr)
                    if tool == "fio":
                        fios.append(run_fio(w, filename, args.runtime, workdir))
                    else:
                        ios.append(run_iogate(w, filename, args.runtime))
            rows.append((w, median_of(fios), median_of(ios)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"4 KiB randread, 1 job, {args.runtime} s per run, median of {args.rounds} rounds; "
          "clat in us; CPU = CPU s per million IOs; file workloads use O_DIRECT")
    header = ("workload", "fio IOPS", "iogate IOPS", "ratio", "fio p50", "iog p50", "ratio",
              "fio p99", "iog p99", "ratio", "fio CPU", "iog CPU", "ratio", "target", "")
    table = [header]
    for w, fio, io in rows:
        table.append((w.name, fmt(fio.iops, 1, 0), fmt(io.iops, 1, 0), ratio(io.iops, fio.iops),
                      fmt(fio.p50_ns, 1e3, 2), fmt(io.p50_ns, 1e3, 2), ratio(io.p50_ns, fio.p50_ns),
                      fmt(fio.p99_ns, 1e3, 2), fmt(io.p99_ns, 1e3, 2), ratio(io.p99_ns, fio.p99_ns),
                      fmt(fio.cpu_per_mio, 1, 2), fmt(io.cpu_per_mio, 1, 2),
                      ratio(io.cpu_per_mio, fio.cpu_per_mio), w.target, verdict(w, fio, io)))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        print("  ".join(c.ljust(widths[i]) if i in (0, 13) else c.rjust(widths[i])
                        for i, c in enumerate(r)).rstrip())
    for w, fio, io in rows:
        for who, m in (("fio", fio), ("iogate", io)):
            if m.error:
                print(f"{w.name}/{who}: {m.error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
