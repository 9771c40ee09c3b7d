"""health.* in real runs of ``iogate run``: a file on this machine's disk, a loop device and
a tmpfs file have no health data (not measured, and an expectation on them fails: exit 1);
without smartctl on PATH the reason is that it is not installed; and a tool that does report
health (a stand-in printing smartctl's documented NVMe JSON) gives values and deltas that
the gate judges."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_trim_devices import _loop_problem, loop_device

IOGATE = [sys.executable, "-m", "iogate"]
DATA = Path(__file__).parent / "data"


def run(directory: Path, target: str, expect: str, env: dict[str, str] | None = None,
        *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    (directory / "h.suite.yaml").write_text(
        f"suite: h\nworkloads:\n  - name: w\n    ioengine: psync\n    rw: read\n"
        f"    bs: 64k\n    size: 4MiB\n    filename: {target}\n    expect:\n{expect}")
    result = directory / "r.json"
    result.unlink(missing_ok=True)
    proc = subprocess.run([*IOGATE, "run", "h.suite.yaml", "--json", str(result), *args],
                          cwd=directory, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    doc = json.loads(result.read_text()) if result.exists() else {}
    return proc, doc


GATE = '      health.media_errors.delta: "== 0"\n'


def not_measured(proc: subprocess.CompletedProcess[str], doc: dict[str, Any]) -> str:
    """The reason of the one failed health check; the run exited 1 (failed), not 0."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    case = doc["cases"][0]
    assert case["outcome"] == "failed"
    assert case["error"] is None
    (check,) = case["checks"]
    assert check["metric"] == "health.media_errors.delta"
    assert not check["passed"]
    assert check["observed"] is None
    assert check["reason"].startswith("not measured: ")
    assert not any(k.startswith("health.") for k in case["metrics"])
    return str(check["reason"])


def test_validate_accepts_health_paths_and_refuses_a_misspelt_one(tmp_path: Path) -> None:
    run_args = [*IOGATE, "validate", "h.suite.yaml"]
    suite = tmp_path / "h.suite.yaml"
    suite.write_text("suite: h\nworkloads:\n  - name: w\n    rw: read\n    size: 1MiB\n"
                     "    expect:\n      health.media_errors.delta: '== 0'\n"
                     "      health.temperature: '<= 70'\n")
    ok = subprocess.run(run_args, cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    suite.write_text(suite.read_text().replace("media_errors.delta", "media_error.delta"))
    bad = subprocess.run(run_args, cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2
    assert "health.media_error.delta" in bad.stdout + bad.stderr


def test_a_file_on_this_machines_disk_has_no_health_data(disk_dir: Path) -> None:
    proc, doc = run(disk_dir, str(disk_dir / "data"), GATE)
    reason = not_measured(proc, doc)
    record = doc["health"]["h.suite.yaml::w"]
    if shutil.which("smartctl") is None:
        assert reason == "not measured: smartctl not installed"
        return
    device = record["after"]["device"]
    assert device
    assert device.startswith("/dev/")
    assert reason.startswith(f"not measured: smartctl: {device}: no SMART/health data")
    if os.path.basename(device).startswith("vd"):
        assert "virtio disk" in reason
    # smartctl's own JSON is kept, before and after
    for when in ("before", "after"):
        assert record[when]["raw"]["smartctl"]["argv"][-1] == device


def test_a_loop_device_has_no_health_data(disk_dir: Path) -> None:
    problem = _loop_problem()
    if problem:
        pytest.skip(problem)
    with loop_device(disk_dir / "disk.img") as dev:
        proc, doc = run(disk_dir, dev, GATE)
    reason = not_measured(proc, doc)
    if shutil.which("smartctl") is not None:
        name = os.path.basename(dev)
        assert reason.startswith(f"not measured: smartctl: /dev/{name}: no SMART/health data "
                                 "(loop device"), reason


def test_a_tmpfs_file_has_no_block_device(tmp_path: Path) -> None:
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "iogate-health",
                              str(mount_point)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    target = mount_point / "data"
    try:
        proc, doc = run(tmp_path, str(target), GATE)
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)
    reason = not_measured(proc, doc)
    assert reason == f"not measured: no block device behind {target} (tmpfs)"


def test_without_smartctl_on_path_it_is_not_installed(disk_dir: Path) -> None:
    empty = disk_dir / "bin"
    empty.mkdir()
    proc, doc = run(disk_dir, str(disk_dir / "data"), GATE, {"PATH": str(empty)})
    assert not_measured(proc, doc) == "not measured: smartctl not installed"


def _fake_smartctl(bin_dir: Path, before: dict[str, Any], after: dict[str, Any]) -> None:
    """A ``smartctl`` that prints ``before`` on its first call and ``after`` on the others:
    what a real NVMe device would answer before and after a case."""
    bin_dir.mkdir()
    (bin_dir / "before.json").write_text(json.dumps(before))
    (bin_dir / "after.json").write_text(json.dumps(after))
    script = bin_dir / "smartctl"
    script.write_text(f"""#!{sys.executable}
import os, sys
here = {str(bin_dir)!r}
state = os.path.join(here, "called")
first = not os.path.exists(state)
open(state, "a").write(" ".join(sys.argv[1:]) + "\\n")
sys.stdout.write(open(os.path.join(here, "before.json" if first else "after.json")).read())
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(("grown", "code"), [(0, 0), (3, 1)])
def test_a_device_with_health_data_is_gated_on_its_delta(disk_dir: Path, grown: int,
                                                           code: int) -> None:
    before = json.loads((DATA / "smartctl-nvme.json").read_text())
    after = json.loads(json.dumps(before))
    log = after["nvme_smart_health_information_log"]
    log["media_errors"] += grown
    log["data_units_read"] += 8  # 4 MiB read, rounded up to data units
    _fake_smartctl(disk_dir / "bin", before, after)
    env = {"PATH": f"{disk_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    expect = GATE + '      health.temperature: "<= 70"\n'
    proc, doc = run(disk_dir, str(disk_dir / "data"), expect, env)
    assert proc.returncode == code, proc.stdout + proc.stderr
    metrics = doc["cases"][0]["metrics"]
    assert metrics["health.media_errors.delta"] == grown
    assert metrics["health.media_errors.before"] == 0
    assert metrics["health.data_units_read.delta"] == 8
    assert metrics["health.bytes_read.delta"] == 8 * 512_000
    assert metrics["health.temperature"] == 38
    calls = (disk_dir / "bin" / "called").read_text().splitlines()
    assert len(calls) == 2
    assert all(c.startswith("-x --json=c /dev/") for c in calls)
    record = doc["health"]["h.suite.yaml::w"]
    assert record["after"]["raw"]["nvme_smart_health_information_log"]["media_errors"] == grown


def test_the_cases_of_a_group_share_the_readings_before_and_after_their_run(
        disk_dir: Path) -> None:
    # Two groups of three workloads on one disk, the second repeated three times: one
    # reading before and one after each group (4 calls, not 12 or 18), every case of a group
    # judged on the same pair
    before = json.loads((DATA / "smartctl-nvme.json").read_text())
    after = json.loads(json.dumps(before))
    after["nvme_smart_health_information_log"]["media_errors"] += 2
    _fake_smartctl(disk_dir / "bin", before, after)
    env = {"PATH": f"{disk_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    workloads = "".join(
        f"  - name: {group}{i}\n    group: {group}\n    ioengine: psync\n    rw: read\n"
        f"    bs: 64k\n    size: 1MiB\n    filename: {group}{i}.dat\n"
        + ("    repeat: 3\n" if group == "b" else "")
        for group in ("a", "b") for i in range(3))
    (disk_dir / "g.suite.yaml").write_text(f"suite: g\nworkloads:\n{workloads}")
    proc = subprocess.run([*IOGATE, "run", "g.suite.yaml", "--json", "r.json"], cwd=disk_dir,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = (disk_dir / "bin" / "called").read_text().splitlines()
    assert len(calls) == 4, calls
    cases = {c["id"].rsplit(":", 1)[-1]: c["metrics"] for c in json.loads(
        (disk_dir / "r.json").read_text())["cases"]}
    # the fake answers "before" once, then "after": the first group saw the errors grow, the
    # second began where the first ended
    assert [cases[f"a{i}"]["health.media_errors.delta"] for i in range(3)] == [2, 2, 2]
    assert [cases[f"b{i}"]["health.media_errors.delta"] for i in range(3)] == [0, 0, 0]
    assert [cases[f"b{i}"]["health.media_errors.before"] for i in range(3)] == [2, 2, 2]
