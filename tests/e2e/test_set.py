"""The command line over the files: ``--set KEY=VALUE`` overrides a workload key in every
workload of every suite and fio job file, and ``--allow-overwrite PATH`` lets a run write an
existing file iogate did not create. Real runs, real files; protected bytes hashed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.e2e.test_cli import iogate
from tests.e2e.test_safety import digest, user_file

MiB = 1 << 20

BIG_SUITE = """\
suite: big
workloads:
  - name: fill
    ioengine: psync
    rw: write
    bs: 64k
    size: 10GiB
    filename: {target}
    precondition:
      - rw: write
        size: 64MiB
  - name: scan
    ioengine: psync
    rw: read
    bs: 64k
    size: 10GiB
    runtime: 10m
    filename: {target}
"""

BIG_JOB = """\
[global]
ioengine=psync
bs=64k
size=10g
filename={target}

[fill]
rw=write
"""


def metrics(path: Path) -> dict[str, dict]:
    return {c["id"].split("::")[1]: c["metrics"] for c in json.loads(path.read_text())["cases"]}


def test_set_shrinks_a_suite_to_a_smoke_run(disk_dir: Path) -> None:
    suite = disk_dir / "big.suite.yaml"
    suite.write_text(BIG_SUITE.format(target=disk_dir / "big.data"))
    other = disk_dir / "other.data"
    proc = iogate("run", str(suite), "--set", "size=16m", "--set", "runtime=1s",
                  "--set", f"filename={other}", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (disk_dir / "big.data").exists()  # the target was overridden too
    assert other.stat().st_size == 16 * MiB  # the precondition's 64MiB as well
    got = metrics(disk_dir / "r.json")
    assert got["fill"]["write.bytes"] == 16 * MiB
    assert 0 < got["scan"]["read.bytes"] <= 16 * MiB


def test_set_shrinks_a_fio_job_file(disk_dir: Path) -> None:
    job = disk_dir / "big.fio"
    job.write_text(BIG_JOB.format(target=disk_dir / "big.data"))
    proc = iogate("run", str(job), "--set", "size=16m", "--set", "runtime=1s",
                  "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (disk_dir / "big.data").stat().st_size == 16 * MiB
    assert metrics(disk_dir / "r.json")["fill"]["write.bytes"] == 16 * MiB


def test_set_values_are_read_like_a_suites(tmp_path: Path) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("suite: s\nworkloads:\n  - name: w\n    ioengine: null\n    rw: read\n"
                     "    size: 1m\n")
    proc = iogate("validate", str(suite), "--set", "time_based=true", "--set", "runtime=1s",
                  "--set", "iodepth=4")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "s.fio"
    proc = iogate("export", str(suite), "-o", str(out), "--set", "time_based=true",
                  "--set", "runtime=1s", "--set", "iodepth=4", "--set", "bs=16k")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "time_based" in text
    assert "iodepth=4" in text
    assert "bs=16384" in text


@pytest.mark.parametrize("command", ["run", "validate", "export"])
@pytest.mark.parametrize(("given", "said"), [
    ("size=abc", "--set size=abc: 'abc' is not a size"),
    ("sise=16m", "--set sise=16m: unknown key 'sise'; did you mean 'size'?"),
    ("time_based=yes", "--set time_based=yes: expected true or false, got the string 'yes' "
                       "(only true and false are booleans)"),
    ("iodepth=0", "--set iodepth=0: must be at least 1"),
    ("name=x", "--set name=x: 'name' cannot be set for every workload"),
    ("expect=x", "--set expect=x: 'expect' cannot be set for every workload"),
    ("sweep=x", "--set sweep=x: 'sweep' cannot be set for every workload"),
    ("size=[1, 2]", "--set size=[1, 2]: expected one value"),
    ("size", "--set size: expected KEY=VALUE"),
])
def test_a_bad_set_is_a_usage_error_said_once(tmp_path: Path, command: str, given: str,
                                              said: str) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("suite: s\nworkloads:\n" + "".join(
        f"  - name: w{i}\n    ioengine: null\n    rw: read\n    size: 1m\n" for i in range(3)))
    paths = [str(suite)] if command == "export" else [str(suite), str(suite)]
    proc = iogate(command, *paths, "--set", given, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count(said) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "s.suite.yaml" not in proc.stderr


def test_a_set_that_meets_a_workload_is_judged_with_it(tmp_path: Path) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("suite: s\nworkloads:\n  - name: w\n    ioengine: null\n    rw: read\n"
                     "    size: 1m\n")
    proc = iogate("validate", str(suite), "--set", "verify=crc32c")
    assert proc.returncode == 2
    assert "s.suite.yaml:3:5: workloads[0]: verify checks the blocks a job writes" \
        in proc.stderr, proc.stderr
    assert "(verify set on the command line)" in proc.stderr


def test_allow_overwrite_lets_a_run_write_an_unmarked_file(disk_dir: Path) -> None:
    target = disk_dir / "laid-out-by-fio.data"
    before = user_file(target)
    job = disk_dir / "w.fio"
    job.write_text(f"[w]\nioengine=psync\nrw=write\nbs=64k\nsize=1m\nfilename={target}\n")
    proc = iogate("run", str(job), cwd=disk_dir)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    # (wrapped to a log's width: the words in order)
    assert f"--allow-overwrite {target}" in " ".join((proc.stdout + proc.stderr).split())
    assert digest(target) == before
    other = disk_dir / "other.data"
    user_file(other)
    proc = iogate("run", str(job), "--allow-overwrite", str(other), cwd=disk_dir)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert digest(target) == before
    # Named through another path to it: matched by the file it resolves to.
    (disk_dir / "alias").symlink_to(disk_dir)
    proc = iogate("run", str(job), "--allow-overwrite", "alias/laid-out-by-fio.data",
                  cwd=disk_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert digest(target) != before
