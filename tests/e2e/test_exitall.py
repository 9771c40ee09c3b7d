"""exitall end to end: a workload whose run ends stops the others of its group through the
CLI, on a real file, with the stopped one passing on what it did (its end fsync and verify
included), and the suite's exitall key checked where it is written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_cli import iogate, suite_file

S = 10**9


def test_a_short_workload_ends_its_group(disk_dir: Path) -> None:
    target = disk_dir / "exitall.data"
    suite = suite_file(disk_dir, f"""\
suite: e2e
defaults:
  ioengine: psync
  filename: {target}
  size: 1MiB
  group: g
workloads:
  - name: short
    rw: read
    number_ios: 20
    rate_iops: 200
    startdelay: 1s  # long has written by then
    exitall: true
  - name: long
    rw: randwrite
    time_based: true
    runtime: 60s
    rate_iops: 100
    end_fsync: true
    verify: crc32c
    expect:
      write.ios: "< 3000"
""")
    out = disk_dir / "results.json"
    # If exitall did nothing, long would run its minute and the test would still end.
    proc = iogate("run", str(suite), "--json", str(out), cwd=disk_dir, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    short, long = cases["e2e.suite.yaml::short"], cases["e2e.suite.yaml::long"]
    assert short["outcome"] == long["outcome"] == "passed", long
    assert short["metrics"]["read.ios"] == 20
    m = long["metrics"]
    # counted by the engine: the run ended far before its runtime, at the rate asked for
    assert m["write.runtime"] < 30 * S
    assert 0 < m["write.ios"] < 3000
    assert m["sync.ios"] == 1  # its end fsync still ran
    assert m["verify.blocks"] > 0
    assert m["verify.failures"] == 0  # and so did its read-back
    assert long["error"] is None


def test_exitall_names_are_checked_at_their_place(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, """\
suite: e2e
defaults: {ioengine: null, rw: read, size: 1m}
workloads:
  - {name: a, group: g, exitall: [a, b, nosuch]}
  - {name: b, group: h}
  - {name: c, exitall: [a]}
  - {name: d, exitall: [d]}
""")
    proc = iogate("validate", str(suite))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert f"{suite}:4:" in err
    assert "'b' (line 5) is in group 'h'" in err
    assert "no workload named 'nosuch'" in err
    assert f"{suite}:6:" in err
    assert "which has no group" in err
    assert ":7:" not in err  # a workload may name itself without a group


def test_an_exitall_list_fits_a_mask_of_64(tmp_path: Path) -> None:
    names = [f"w{i}" for i in range(65)]
    body = "".join(f"  - {{name: {n}, group: g}}\n" for n in names[1:])
    suite = suite_file(tmp_path, "suite: e2e\ndefaults: {ioengine: null, rw: read, size: 1m}\n"
                       f"workloads:\n  - {{name: w0, group: g, exitall: [w1]}}\n{body}")
    proc = iogate("validate", str(suite))
    assert proc.returncode == 2
    assert f"{suite}:4:" in proc.stderr
    assert "at most 64" in proc.stderr
