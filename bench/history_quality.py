"""How well ``iogate detect`` tells a real change from this machine's noise.

Records real runs once (``--record``): a paced 4 KiB random-read workload on a file with
O_DIRECT, at a base pace and at paces slowed by known amounts (5 % and 10 % fewer IOPS), in
an interleaved order so that any drift of the machine touches every pool alike. The pace is
a think time after each read (``--pace thinktime``, the default): each I/O takes the
device's latency plus the think time, so the device's and the machine's own noise shows in
the IOPS. (``--pace rate`` uses ``rate_iops`` instead, which holds the IOPS almost exactly.)
The shifted think times are set from a probe run so that the IOPS drop by 5 % and 10 %; the
shifts realized are measured and printed. Each run is a
separate ``iogate run`` process, as a nightly CI job would be; the case's metrics are kept in
a JSON file (``--runs``).

Then, from those runs (``--analyse``, the default when the file exists):

- **False alarms**: noise-only histories of 100 runs (the base runs in the order they were
  recorded, and random permutations of them). Every night from the 10th on runs detection
  over the runs so far, as ``iogate detect`` would; a night alarms when a regression starts
  among the newest runs (detect's exit 1). Reported per metric, and for any of the case's
  metrics at once.
- **Detection delay**: histories of 25 base runs followed by runs of a shifted pool; the
  share of trials where the change point at the first shifted run is found (with exit 1)
  within 1, 2, 3, 5 and 10 shifted runs.

The detection is :func:`iogate.trend.detect`, the code ``iogate detect`` runs once a
store's series are loaded; one history also goes through a real store and the command.

    .venv/bin/python bench/history_quality.py --record        # about 7 minutes
    .venv/bin/python bench/history_quality.py                 # the figures, about 1 minute

``bench/history_runs.json`` holds runs recorded this way with ``--pace rate`` (the figures
in the history guide, docs/guides/history.md); ``--runs FILE`` reads or records another set.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from iogate import trend
from iogate.changes import RECENT
from iogate.history import Point

HERE = Path(__file__).resolve().parent
SUITE = """\
suite: paced
workloads:
  - name: randread
    ioengine: psync
    direct: true
    rw: randread
    bs: 4k
    size: 256MiB
    filename: {file}
    {pace}
    runtime: 1s
    time_based: true
"""


def _run(suite: Path, work: Path, value: float) -> dict:
    doc = work / "run.json"
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", str(suite), "--json",
                           str(doc)], env={**os.environ, "PACE": f"{value:.0f}"},
                          capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"a run failed ({proc.returncode}): {proc.stderr}")
    metrics = json.loads(doc.read_text())["cases"][0]["metrics"]
    return {m: metrics[m] for m in trend.select_metrics(sorted(metrics), None)}


def record(out: Path, base: int, counts: dict[float, int], seed: int, pace: str) -> None:
    """``base``: IOPS for ``--pace rate``, the think time in µs for ``thinktime``."""
    order = [f for f, n in counts.items() for _ in range(n)]
    random.Random(seed).shuffle(order)
    work = Path(tempfile.mkdtemp(prefix="iogate-hq-", dir=os.environ.get("TMPDIR",
                                                                          "/var/tmp")))
    key = "rate_iops: ${PACE}" if pace == "rate" else "thinktime: ${PACE}us"
    suite = work / "paced.suite.yaml"
    suite.write_text(SUITE.format(file=work / "target.dat", pace=key))
    runs = []
    try:
        setting = {f: base * f for f in counts}
        if pace == "thinktime":  # an I/O takes 1/IOPS: lengthen it by 1/f - 1 of that
            period_us = 1e6 / statistics.median(
                _run(suite, work, base)["read.iops"] for _ in range(3))
            setting = {f: base + period_us * (1 / f - 1) for f in counts}
        for i, factor in enumerate(order):
            metrics = _run(suite, work, setting[factor])
            runs.append({"factor": factor, "setting": setting[factor], "metrics": metrics})
            print(f"{i + 1}/{len(order)} {pace} {setting[factor]:.0f}: read.iops "
                  f"{metrics['read.iops']:.1f}", file=sys.stderr)
    finally:
        for p in work.iterdir():
            p.unlink()
        work.rmdir()
    out.write_text(json.dumps({"pace": pace, "base": base, "runs": runs}, indent=1) + "\n")


def series(runs: list[dict[str, Any]], metric: str) -> list[Point]:
    return [Point(f"run{i}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}",
                  r["metrics"][metric], build=str(i)) for i, r in enumerate(runs)]


def alarms(points: list[Point], metric: str) -> bool:
    """Whether ``iogate detect`` would exit 1 on this series."""
    key = ("paced.suite.yaml::randread", "", metric)
    return any(f.regression and f.new(RECENT) for f in trend.detect({key: points}))


def found_at(points: list[Point], metric: str, index: int) -> bool:
    key = ("paced.suite.yaml::randread", "", metric)
    return any(f.regression and f.new(RECENT) and f.change.index == index
               for f in trend.detect({key: points}))


def analyse(data: dict, perms: int, trials: int, seed: int) -> None:
    rng = random.Random(seed)
    base = [r for r in data["runs"] if r["factor"] == 1.0]
    metrics = trend.select_metrics(sorted(base[0]["metrics"]), None)
    print(f"{len(data['runs'])} recorded runs, paced by {data['pace']}; {len(base)} at the "
          f"base pace")
    for factor in sorted({r["factor"] for r in data["runs"]} - {1.0}, reverse=True):
        pool = [r["metrics"]["read.iops"] for r in data["runs"] if r["factor"] == factor]
        shift = statistics.median(pool) / statistics.median(
            r["metrics"]["read.iops"] for r in base) - 1
        print(f"pool {factor:.2f}: {len(pool)} runs, read.iops median shift realized "
              f"{shift * 100:+.2f} %")
    iops = [r["metrics"]["read.iops"] for r in base]
    print(f"base read.iops: median {statistics.median(iops):.1f}, "
          f"cv {statistics.stdev(iops) / statistics.mean(iops) * 100:.2f} %, "
          f"min {min(iops):.1f}, max {max(iops):.1f}")
    for m in ("read.clat.p50", "read.clat.p99"):
        v = [r["metrics"][m] for r in base]
        print(f"base {m}: median {statistics.median(v) / 1e3:.1f} us, "
              f"cv {statistics.stdev(v) / statistics.mean(v) * 100:.1f} %")

    # False alarms over noise-only histories of 100 runs, night by night.
    histories = [base[:100]] + [rng.sample(base, min(100, len(base))) for _ in range(perms)]
    per_metric = dict.fromkeys(metrics, 0)
    any_alarm = nights = 0
    for h in histories:
        for n in range(10, len(h) + 1):  # the nights from the 10th on
            nights += 1
            hit = False
            for m in metrics:
                if alarms(series(h[:n], m), m):
                    per_metric[m] += 1
                    hit = True
            any_alarm += hit
    if not nights:
        raise SystemExit("too few base runs for a history of 10 nights")
    print(f"\nfalse alarms: {len(histories)} noise-only histories of {len(histories[0])} "
          f"runs (recorded order + {perms} permutations), {nights} nights")
    for m in metrics:
        print(f"  {m:<16} {per_metric[m]:>4} nights  {per_metric[m] / nights * 100:5.2f} %")
    print(f"  {'any metric':<16} {any_alarm:>4} nights  {any_alarm / nights * 100:5.2f} %")

    # Detection delay of each shifted pool.
    print(f"\ndetection: 25 base runs then a shifted pool, {trials} trials each, "
          "read.iops")
    for factor in sorted({r["factor"] for r in data["runs"]} - {1.0}, reverse=True):
        shifted = [r for r in data["runs"] if r["factor"] == factor]
        delays = (1, 2, 3, 5, 10)
        by = dict.fromkeys(delays, 0)
        for _ in range(trials):
            start = rng.randrange(0, len(base) - 25 + 1)
            h = base[start:start + 25] + rng.sample(shifted, min(len(shifted), delays[-1]))
            for k in range(1, len(h) - 25 + 1):
                if found_at(series(h[:25 + k], "read.iops"), "read.iops", 25):
                    for d in delays:
                        if k <= d:
                            by[d] += 1
                    break
        cells = [f"within {d}: {by[d] / trials * 100:5.1f} %" for d in delays]
        print(f"  step {(factor - 1) * 100:+.0f} %:  " + "   ".join(cells))


def through_the_store(data: dict) -> None:
    """One history (25 base runs, then 3 runs 5 % slower) through a real store and the
    ``iogate detect`` command: its exit code and output."""
    from iogate.history import record as record_run
    from iogate.report import SCHEMA_VERSION

    base = [r for r in data["runs"] if r["factor"] == 1.0][:25]
    slow = [r for r in data["runs"] if r["factor"] == 0.95][:3]
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "h.sqlite")
        for i, r in enumerate(base + slow):
            record_run(store, {"schema_version": SCHEMA_VERSION, "cases": [
                {"id": "paced.suite.yaml::randread", "outcome": "passed",
                 "metrics": r["metrics"], "environment": {}}]},
                environ={"BUILD_NUMBER": str(100 + i)})
        proc = subprocess.run([sys.executable, "-m", "iogate", "detect", store, "--metric",
                               "read.iops"], capture_output=True, text=True, timeout=120)
    print(f"\n$ iogate detect STORE --metric read.iops   (25 base runs, 3 at -5 %)\n"
          f"{proc.stdout.rstrip()}\n{proc.stderr.rstrip()}\nexit {proc.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="record the runs first")
    parser.add_argument("--runs", type=Path, default=HERE / "history_runs.json",
                        help="where the recorded runs are kept")
    parser.add_argument("--pace", choices=("thinktime", "rate"), default="thinktime")
    parser.add_argument("--base-pace", type=int, default=None, help="the base think time in "
                        "us (default 850) or rate in IOPS (default 1000)")
    parser.add_argument("--base", type=int, default=100, help="runs at the base rate")
    parser.add_argument("--shifted", type=int, default=30, help="runs per shifted rate")
    parser.add_argument("--perms", type=int, default=10, help="permuted noise histories")
    parser.add_argument("--trials", type=int, default=300, help="trials per step")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.record:
        base = args.base_pace or (850 if args.pace == "thinktime" else 1000)
        record(args.runs, base, {1.0: args.base, 0.95: args.shifted, 0.90: args.shifted},
               args.seed, args.pace)
    data = json.loads(args.runs.read_text())
    analyse(data, args.perms, args.trials, args.seed)
    through_the_store(data)


if __name__ == "__main__":
    main()
