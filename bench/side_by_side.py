#!/usr/bin/env python3
"""Side by side, rates: fio job files with per-direction rates (rate_iops=READ,WRITE) run
by fio and by iogate (``iogate run JOB --json``), their realized read and write IOPS set
against the rates asked for.

Rates are timing, so this is a measurement, never a test (tests/fio/test_side_by_side.py
compares what does not depend on the machine's speed). Each job file runs --rounds times per
tool, alternating which tool goes first, for --runtime seconds (the job files read it from
${SBS_RUNTIME}); the table shows the median realized IOPS per direction and its ratio to the
rate asked for. The asked rates are the import's (what iogate runs), the job's own per fio
clone times numjobs.

  .venv/bin/python bench/side_by_side.py [--runtime 5] [--rounds 3] [JOB.fio ...]

Without job files: tests/fio/jobs/side-rate.fio (null engine, randrw 50/50,
rate_iops=600,200).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iogate.fio.importer import load_jobfile

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JOBS = [ROOT / "tests" / "fio" / "jobs" / "side-rate.fio"]
DIRECTIONS = ("read", "write")
FILE_SIZE = 32 * 1024 * 1024


def fio_iops(job: Path, env: dict[str, str], workdir: Path) -> dict[str, float]:
    """fio's realized IOPS per direction, summed over its jobs (clones included)."""
    out = workdir / "fio.json"
    proc = subprocess.run(["fio", "--output-format=json", f"--output={out}", str(job)],
                          env=env, cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"fio {job} failed:\n{proc.stderr}")
    jobs = json.loads(out.read_text())["jobs"]
    return {d: sum(j[d]["iops"] for j in jobs) for d in DIRECTIONS}


def iogate_iops(job: Path, env: dict[str, str], workdir: Path) -> dict[str, float]:
    """iogate's realized IOPS per direction, summed over the job file's cases."""
    out = workdir / "iogate.json"
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", str(job), "--json", str(out)],
                          env=env, cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"iogate run {job} failed:\n{proc.stderr}")
    cases = json.loads(out.read_text())["cases"]
    return {d: sum(c["metrics"].get(f"{d}.iops") or 0.0 for c in cases) for d in DIRECTIONS}


def asked(job: Path, env: dict[str, str]) -> dict[str, float]:
    """The rates the import asks for, per direction, summed over the cases."""
    out = dict.fromkeys(DIRECTIONS, 0.0)
    for case in load_jobfile(job, env=env).cases:
        rate = case.workload.rate_iops
        for d in DIRECTIONS:
            out[d] += float(getattr(rate, d, 0) or 0) if rate is not None else 0.0
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("jobs", nargs="*", type=Path, help="fio job files (side-rate.fio)")
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run (5)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs per tool and job file, alternating which goes first (3)")
    ap.add_argument("--dir", default="/var/tmp", help="where the shared data file goes")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.runtime < 1:
        ap.error("--rounds and --runtime must be at least 1")
    if shutil.which("fio") is None:
        ap.error("fio is not installed")
    jobs = [job.resolve() for job in args.jobs or DEFAULT_JOBS]  # run from a directory of its own
    workdir = Path(tempfile.mkdtemp(prefix="iogate-side-", dir=args.dir))
    try:
        data = workdir / "data"
        with open(data, "wb") as f:
            f.write(os.urandom(FILE_SIZE))
        (workdir / "dir").mkdir()
        env = {**os.environ, "SBS_FILE": str(data), "SBS_DIR": str(workdir / "dir"),
               "SBS_RUNTIME": str(args.runtime)}
        print(f"{args.rounds} rounds of {args.runtime} s per tool, medians; load "
              f"{os.getloadavg()[0]:.2f}")
        header = (f"{'job':<16} {'tool':<7} {'dir':<6} {'asked':>8} {'realized':>10} "
                  f"{'ratio':>7}  {'each round':<30}")
        print(header)
        print("-" * len(header))
        for job in jobs:
            want = asked(job, env)
            runs: dict[str, list[dict[str, float]]] = {"fio": [], "iogate": []}
            for k in range(args.rounds):
                order = ("fio", "iogate") if k % 2 == 0 else ("iogate", "fio")
                for tool in order:
                    run = fio_iops if tool == "fio" else iogate_iops
                    runs[tool].append(run(job, env, workdir))
            for tool, results in runs.items():
                for d in DIRECTIONS:
                    values = [r[d] for r in results]
                    median = statistics.median(values)
                    ratio = f"{median / want[d]:.3f}" if want[d] else "-"
                    each = " ".join(f"{v:.1f}" for v in values)
                    print(f"{job.stem:<16} {tool:<7} {d:<6} {want[d]:>8.0f} {median:>10.1f} "
                          f"{ratio:>7}  {each:<30}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
