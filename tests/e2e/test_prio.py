"""I/O priorities end to end: a suite with a command priority share runs through the CLI on
a real file, its results count the prioritized requests (within binomial noise of the
share) with their own latency, and a suite that asks the impossible is refused at its key."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.e2e.test_cli import iogate, suite_file

REQUESTS = 4096  # io_size 16 MiB of 4 KiB reads


def test_cmdprio_percentage_is_counted_apart_with_its_latency(disk_dir: Path) -> None:
    target = disk_dir / "prio.data"
    target.write_bytes(bytes(range(256)) * (4 << 12))  # 4 MiB
    suite = suite_file(disk_dir, f"""\
suite: prio
workloads:
  - name: quarter
    filename: {target}
    allow_overwrite: true
    ioengine: io_uring
    rw: randread
    iodepth: 8
    size: 4MiB
    io_size: 16MiB
    cmdprio_percentage: 25
    expect:
      read.prio_clat.p99: "< 60s"
""")
    out = disk_dir / "results.json"
    proc = iogate("run", str(suite), "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (case,) = json.loads(out.read_text())["cases"]
    m = case["metrics"]
    assert m["read.ios"] == REQUESTS
    tolerance = 5 * math.sqrt(REQUESTS * 0.25 * 0.75)  # 5 binomial sigmas
    assert abs(m["read.prio_ios"] - REQUESTS / 4) <= tolerance, m["read.prio_ios"]
    assert m["read.prio_pct"] == 100 * m["read.prio_ios"] / m["read.ios"]
    for stat in ("min", "mean", "max", "p50", "p99"):
        assert f"read.prio_clat.{stat}" in m
    assert m["read.clat.min"] <= m["read.prio_clat.min"] <= m["read.prio_clat.max"] \
        <= m["read.clat.max"]
    assert case["requested"]["requested.read.prio_pct"] == 25.0
    # The 4 MiB file is read four times (io_size 16 MiB) through the page cache: the
    # device statistics rightly say the device read a fraction of it (disk.read.bytes).
    assert [w for w in case["warnings"] if not w.startswith("disk.")] == []
    assert [c["metric"] for c in case["checks"]] == ["read.prio_clat.p99"]


def test_a_workload_without_priorities_reports_none(disk_dir: Path) -> None:
    suite = suite_file(disk_dir, """\
suite: noprio
workloads:
  - name: plain
    ioengine: io_uring
    rw: randread
    size: 1MiB
""")
    out = disk_dir / "results.json"
    proc = iogate("run", str(suite), "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (case,) = json.loads(out.read_text())["cases"]
    assert not [k for k in case["metrics"] if "prio" in k]


def test_cmdprio_on_a_synchronous_engine_is_refused_at_its_key(disk_dir: Path) -> None:
    suite = suite_file(disk_dir, """\
suite: bad
workloads:
  - name: sync
    ioengine: psync
    rw: randread
    size: 1MiB
    cmdprio_percentage: 25
""")
    proc = iogate("validate", str(suite))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{suite}:7:" in proc.stderr, proc.stderr
    assert "psync cannot give single requests a priority" in proc.stderr, proc.stderr
