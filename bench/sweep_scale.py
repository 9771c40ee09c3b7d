#!/usr/bin/env python3
"""Benchmark: how the cost of a run grows with the number of cases.

Generates a suite with one swept workload of N points, each a 1 ms time-based run of the
null engine (so nearly all of a case's time is iogate's own overhead), runs
``iogate run SUITE --json FILE`` on it in a subprocess, and reports per N:

  wall       seconds from start to exit of the command
  user/sys   CPU seconds of the command and every process it waited for
  rss runner peak resident memory of the runner process itself (MB)
  rss child  peak resident memory of the largest process the runner waited for (engine
             processes, the fork server and through it the engine processes it reaped)
  per case   (wall - N * 1 ms) / N: the overhead of one case beyond its runtime (ms)

The runner is started through a small shim (``python -c``) that calls ``iogate.cli.main``
and then writes its own and its children's ``getrusage`` to a file, so that the runner's
peak memory is told apart from its children's.

Each N runs --rounds times and the medians are shown (the machine is shared: noisy). This
reports; it never gates: the exit status is 0 whatever the figures.

  .venv/bin/python bench/sweep_scale.py                  # N = 100, 1000, 10000
  .venv/bin/python bench/sweep_scale.py -n 100 -n 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHIM = """
import json, resource, sys
from iogate.cli import main
try:
    code = main(sys.argv[2:])
finally:
    try:  # let the fork server go and reap it, so that its usage is counted
        from iogate.engine import forkserver
        forkserver._shutdown()
    except ImportError:
        pass
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(sys.argv[1], "w") as f:
        json.dump({"self_maxrss_kb": me.ru_maxrss, "children_maxrss_kb": kids.ru_maxrss}, f)
sys.exit(code)
"""


def suite_text(n: int) -> str:
    points = ", ".join(str(i) for i in range(n))
    return f"""\
suite: sweep-scale
defaults:
  ioengine: null
  rw: randread
  bs: 4k
  size: 1MiB
  runtime: 1ms
  time_based: true
workloads:
  - name: point
    sweep:
      point: [{points}]
    expect:
      errors: "<= ${{point}}"
"""


def run_once(n: int, workdir: Path) -> dict[str, float]:
    suite = workdir / f"scale-{n}.suite.yaml"
    suite.write_text(suite_text(n))
    out = workdir / f"scale-{n}.json"
    usage = workdir / f"scale-{n}.rusage.json"
    before = os.times()
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", SHIM, str(usage), "run", str(suite),
                           "--json", str(out)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = os.times()
    if proc.returncode != 0:
        print(f"N={n}: iogate exited with {proc.returncode}: {proc.stderr[-2000:]}",
              file=sys.stderr)
    rusage = json.loads(usage.read_text())
    cases = len(json.loads(out.read_text())["cases"])
    if cases != n:
        print(f"N={n}: the results hold {cases} cases", file=sys.stderr)
    return {"wall": wall,
            "user": after.children_user - before.children_user,
            "sys": after.children_system - before.children_system,
            "rss_runner": rusage["self_maxrss_kb"] / 1024,
            "rss_child": rusage["children_maxrss_kb"] / 1024,
            "per_case_ms": (wall - n * 1e-3) / n * 1e3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, action="append", help="points (repeatable)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per N (median shown)")
    args = parser.parse_args()
    sizes = args.n or [100, 1000, 10000]
    columns = ("wall", "user", "sys", "rss_runner", "rss_child", "per_case_ms")
    print(f"{'N':>6}  {'wall s':>8}  {'user s':>7}  {'sys s':>7}  {'rss runner MB':>13}  "
          f"{'rss child MB':>12}  {'per case ms':>11}")
    with tempfile.TemporaryDirectory(prefix="iogate-scale-") as tmp:
        for n in sizes:
            rounds = [run_once(n, Path(tmp)) for _ in range(args.rounds)]
            med = {c: statistics.median(r[c] for r in rounds) for c in columns}
            print(f"{n:>6}  {med['wall']:>8.2f}  {med['user']:>7.2f}  {med['sys']:>7.2f}  "
                  f"{med['rss_runner']:>13.1f}  {med['rss_child']:>12.1f}  "
                  f"{med['per_case_ms']:>11.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
