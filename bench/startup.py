#!/usr/bin/env python3
"""Start-up cost: what a run spends around its I/O, iogate's command against fio's.

Both tools run the smallest job there is, one 4 KiB read with the null engine, so the whole
command is its fixed cost: starting, reading the job, setting the engine up, reporting and
leaving. Each round runs both, alternating which goes first; the table gives the medians of
the wall time and of the CPU (user + system, children included, from wait4) of the whole
command. iogate runs as a user runs it (``python -m iogate run``, the suite in a temporary
directory, no results file); its own breakdown of the wall time follows, from one run with
``-X importtime`` (the imports) and the fork server's start (which the first case waits for).
So do the medians of iogate's commands that read no suite (--help, metrics, compare), whose
whole cost is the fixed one: no suite model and no engine.

    .venv/bin/python bench/startup.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """\
suite: startup
workloads:
  - name: one
    ioengine: null
    rw: read
    size: 4KiB
"""
# iogate's commands that read no suite, timed too: their cost is the fixed cost alone (no
# suite model, no engine); r.json is the results document of the first run.
COMMANDS = (("--help",), ("metrics",), ("compare", "r.json", "r.json"))
FIO = ["fio", "--name=one", "--ioengine=null", "--rw=read", "--size=4k", "--bs=4k",
       "--output-format=json", "--output=/dev/null"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s of the command and its children) of one run; exits on a failure."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        assert proc.stderr is not None
        sys.exit(f"{cmd[0]} exited {code}: {proc.stderr.read().decode()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime


def import_breakdown(cwd: Path) -> list[tuple[str, float]]:
    """The slowest top-level imports of one iogate run (cumulative, s)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "iogate", "run",
                          "startup.suite.yaml"], cwd=cwd, capture_output=True, text=True)
    rows = []
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if m and not m.group(2).startswith(" "):  # a top-level import
            rows.append((m.group(2), int(m.group(1)) / 1e6))
    return sorted(rows, key=lambda r: -r[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="runs of each tool (10)")
    args = ap.parse_args(argv)
    if shutil.which("fio") is None:
        ap.error("fio is not installed")
    iogate = [sys.executable, "-m", "iogate", "run", "startup.suite.yaml"]
    runs: dict[str, list[tuple[float, float]]] = {"fio": [], "iogate": []}
    with tempfile.TemporaryDirectory(prefix="iogate-startup-") as tmp:
        cwd = Path(tmp)
        (cwd / "startup.suite.yaml").write_text(SUITE)
        # compiled modules in place, caches warm, as on a second run
        timed([*iogate, "--json", "r.json"], cwd)
        timed(FIO, cwd)
        for r in range(args.rounds):
            order = ("fio", "iogate") if r % 2 == 0 else ("iogate", "fio")
            for tool in order:
                runs[tool].append(timed(FIO if tool == "fio" else iogate, cwd))
        commands = {" ".join(c): [timed([sys.executable, "-m", "iogate", *c], cwd)
                                  for _ in range(args.rounds)] for c in COMMANDS}
        imports = import_breakdown(cwd)
    print(f"{args.rounds} rounds, medians; {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'tool':<8} {'wall s':>8} {'CPU s':>8}")
    medians = {}
    for tool, rs in runs.items():
        medians[tool] = (statistics.median(w for w, _ in rs), statistics.median(c for _, c in rs))
        print(f"{tool:<8} {medians[tool][0]:>8.3f} {medians[tool][1]:>8.3f}")
    print(f"{'ratio':<8} {medians['iogate'][0] / medians['fio'][0]:>7.2f}x "
          f"{medians['iogate'][1] / medians['fio'][1]:>7.2f}x")
    print("\niogate's commands that read no suite (medians):")
    for command, rs in commands.items():
        print(f"  iogate {command:<24} {statistics.median(w for w, _ in rs):>8.3f} "
              f"{statistics.median(c for _, c in rs):>8.3f}")
    print("\niogate's slowest top-level imports in one run (cumulative s):")
    for name, s in imports[:8]:
        print(f"  {s:6.3f}  {name}")
    print(f"  {sum(s for _, s in imports):6.3f}  all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
