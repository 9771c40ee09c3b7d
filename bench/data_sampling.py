#!/usr/bin/env python3
"""Benchmark: what measuring the written data costs a write workload.

One workload, two buffer settings, side by side:
  default       buffers filled once with (incompressible) contents, written data sampled
  zero_buffers  buffers of zeros
Both run 128 KiB sequential writes, io_uring, O_DIRECT, QD8, one job, time based, on a
1 GiB file laid out first. The runs alternate (A B, B A, ...) so that a drift of the
shared machine hits both alike, and the table shows the median of each figure.

CPU per I/O is user+system CPU of this process (the engine runs in it: I/O thread,
background and analysis threads) from getrusage(RUSAGE_SELF) around the run, in
microseconds per I/O. The data columns are what the engine measured of the written
data: bytes sampled, samples skipped (no free capture slot) and the compressed ratio.

This reports; it does not gate: the exit status is always 0.

  PYTHONPATH=src IOGATE_LIB=build/native/libiogate.so python bench/data_sampling.py \
      [--runtime 5] [--rounds 4] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iogate.engine.session import run
from iogate.errors import IogateError
from iogate.job import JobSpec

KiB, MiB, GiB = 1024, 1024**2, 1024**3
FILE_SIZE = 1 * GiB
BS = 128 * KiB
IODEPTH = 8


@dataclass
class Measured:
    iops: float = 0.0
    cpu_us_per_io: float = 0.0
    p99_us: float = 0.0
    sampled_mib: float = 0.0
    skipped: int = 0
    ratio: float | None = None
    error: str | None = None


def write_spec(filename: str, runtime: int, zero_buffers: bool) -> JobSpec:
    return JobSpec(engine="io_uring", rw="write", bs_read=BS, bs_write=BS, iodepth=IODEPTH,
                   numjobs=1, size=FILE_SIZE, offset=0, runtime_ns=runtime * 10**9, ramp_ns=0,
                   time_based=True, direct=True, rwmixread=0, filename=filename,
                   no_layout=True, zero_buffers=zero_buffers)


def measure(filename: str, runtime: int, zero_buffers: bool) -> Measured:
    spec = write_spec(filename, runtime, zero_buffers)
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        result = run([spec])
    except IogateError as e:
        return Measured(error=str(e))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ios = result.metric("write.ios") or 0
    data = result.jobs[0].data
    return Measured(iops=result.metric("write.iops") or 0.0,
                    cpu_us_per_io=cpu_s / ios * 1e6 if ios else 0.0,
                    p99_us=(result.metric("write.clat.p99") or 0.0) / 1e3,
                    sampled_mib=data.sampled_bytes / MiB,
                    skipped=getattr(data, "samples_skipped", 0),
                    ratio=result.metric("data.compress_ratio"))


def lay_out(path: Path) -> None:
    """Write the whole file once so that every block is allocated."""
    if path.exists() and path.stat().st_size >= FILE_SIZE:
        return
    run([JobSpec(engine="psync", rw="write", bs_read=MiB, bs_write=MiB, iodepth=1, numjobs=1,
                 size=FILE_SIZE, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
                 direct=True, rwmixread=0, filename=str(path))])
    os.sync()


def median(runs: list[Measured], name: str) -> float:
    return statistics.median(getattr(m, name) for m in runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run (5)")
    ap.add_argument("--rounds", type=int, default=4, help="runs per setting, alternating (4)")
    ap.add_argument("--dir", help="directory for the 1 GiB test file (default: a temp dir)")
    args = ap.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="iogate-bench-", dir=args.dir))
    datafile = workdir / "bench.dat"
    runs: dict[str, list[Measured]] = {"default": [], "zero_buffers": []}
    try:
        print(f"laying out {FILE_SIZE // GiB} GiB at {datafile} ...", file=sys.stderr)
        lay_out(datafile)
        for r in range(args.rounds):
            order = ("default", "zero_buffers") if r % 2 == 0 else ("zero_buffers", "default")
            for name in order:
                m = measure(str(datafile), args.runtime, name == "zero_buffers")
                print(f"round {r + 1}/{args.rounds} {name}: "
                      + (m.error or f"{m.iops:,.0f} IOPS, {m.cpu_us_per_io:.2f} us CPU/IO, "
                         f"p99 {m.p99_us:,.0f} us, sampled {m.sampled_mib:.1f} MiB, "
                         f"skipped {m.skipped}"), file=sys.stderr)
                if not m.error:
                    runs[name].append(m)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"128 KiB sequential write, io_uring, O_DIRECT, QD{IODEPTH}, {args.runtime} s per "
          f"run, median of {args.rounds} alternating rounds")
    header = ("buffers", "IOPS", "CPU us/IO", "clat p99 us", "sampled MiB", "skipped", "ratio")
    rows = [header]
    for name, ms in runs.items():
        if not ms:
            rows.append((name, "-", "-", "-", "-", "-", "-"))
            continue
        ratios = [m.ratio for m in ms if m.ratio is not None]
        rows.append((name, f"{median(ms, 'iops'):,.0f}", f"{median(ms, 'cpu_us_per_io'):.2f}",
                     f"{median(ms, 'p99_us'):,.0f}", f"{median(ms, 'sampled_mib'):.1f}",
                     f"{statistics.median(m.skipped for m in ms):.0f}",
                     f"{statistics.median(ratios):.3f}" if ratios else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    if runs["default"] and runs["zero_buffers"]:
        d, z = runs["default"], runs["zero_buffers"]
        print(f"default / zero_buffers: IOPS {median(d, 'iops') / median(z, 'iops'):.3f}x, "
              f"CPU per I/O {median(d, 'cpu_us_per_io') / median(z, 'cpu_us_per_io'):.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
