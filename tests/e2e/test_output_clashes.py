"""No output of a run is written over another, nor over a file a case reads or writes: every
output path (the results file and its journal, the baselines to save, the summaries, the
history store, the plugins' reports, each case's verify_state file) is compared, before
anything runs, with every other and with every target of the cases chosen, the suite files
too, by the file it resolves to and by device and inode where it exists. A clash is a usage
error (exit 2) naming both, and every protected byte stays as it was."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

SUITE = """\
suite: clash
workloads:
  - name: one
    ioengine: null
    rw: read
    size: 1MiB
"""
# A case that reads the user's file (reading never needs allow_overwrite).
READS = """\
suite: reads
workloads:
  - name: scan
    ioengine: psync
    rw: read
    size: 64KiB
    filename: {target}
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def iogate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2 before anything ran, the message naming each of ``words``."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert all(w in proc.stderr for w in words), proc.stderr
    assert "passed" not in proc.stdout + proc.stderr  # not one case ran


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / "clash.suite.yaml").write_text(SUITE)
    return tmp_path


def user_data(path: Path) -> str:
    path.write_bytes(os.urandom(1 << 20))
    return digest(path)


@pytest.mark.parametrize(("first", "second"), [
    ("--json", "--openmetrics"),
    ("--json", "--markdown"),
    ("--json", "--html"),
    ("--json", "--save-baseline"),
    ("--json", "--save-baseline-all"),
    ("--json", "--history"),
    ("--markdown", "--openmetrics"),
    ("--save-baseline", "--html"),
    ("--history", "--markdown"),
    ("--json", "--artifacts"),
])
def test_two_outputs_on_one_path_are_refused(run_dir: Path, first: str, second: str) -> None:
    proc = iogate(run_dir, "run", "clash.suite.yaml", first, "out", second, "out")
    refused(proc, f"{first} out", f"{second} out")
    assert sorted(p.name for p in run_dir.iterdir()) == ["clash.suite.yaml"]


def test_an_output_on_a_users_file_is_refused_before_the_file_is_touched(run_dir: Path
                                                                         ) -> None:
    # The same clash with a file that holds data: not a byte of it changes.
    before = user_data(run_dir / "notes.txt")
    proc = iogate(run_dir, "run", "clash.suite.yaml", "--json", "notes.txt", "--markdown",
                  "notes.txt")
    refused(proc, "--json notes.txt", "--markdown notes.txt")
    assert digest(run_dir / "notes.txt") == before


def test_an_output_on_the_journal_of_the_results_is_refused(run_dir: Path) -> None:
    proc = iogate(run_dir, "run", "clash.suite.yaml", "--json", "r.json", "--openmetrics",
                  "r.json.journal")
    refused(proc, "--openmetrics r.json.journal", "the journal of --json", "r.json")
    assert sorted(p.name for p in run_dir.iterdir()) == ["clash.suite.yaml"]


def test_a_clash_through_a_symbolic_link_or_a_hard_link_is_refused(run_dir: Path) -> None:
    before = user_data(run_dir / "data")
    (run_dir / "soft").symlink_to("data")
    os.link(run_dir / "data", run_dir / "hard")
    for other in ("soft", "hard"):
        proc = iogate(run_dir, "run", "clash.suite.yaml", "--json", "data", "--markdown", other)
        refused(proc, "--json data", f"--markdown {other}")
    assert digest(run_dir / "data") == before


@pytest.mark.parametrize("how", ["filename", "--filename", "symlink"])
def test_an_output_on_a_file_a_case_reads_is_refused(tmp_path: Path, how: str) -> None:
    before = user_data(tmp_path / "data.bin")
    (tmp_path / "link.bin").symlink_to("data.bin")
    target = {"filename": "data.bin", "--filename": "elsewhere.bin", "symlink": "link.bin"}[how]
    (tmp_path / "reads.suite.yaml").write_text(READS.format(target=target))
    extra = ["--filename", "data.bin"] if how == "--filename" else []
    proc = iogate(tmp_path, "run", "reads.suite.yaml", "--json", "data.bin", *extra)
    refused(proc, "--json data.bin", "the target of reads.suite.yaml::scan")
    assert digest(tmp_path / "data.bin") == before
    assert not (tmp_path / "elsewhere.bin").exists()


def test_an_output_on_a_suite_file_is_refused(run_dir: Path) -> None:
    before = digest(run_dir / "clash.suite.yaml")
    proc = iogate(run_dir, "run", "clash.suite.yaml", "--openmetrics", "clash.suite.yaml")
    refused(proc, "--openmetrics clash.suite.yaml", "the suite file clash.suite.yaml")
    assert digest(run_dir / "clash.suite.yaml") == before


def test_an_output_on_a_verify_state_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pl.suite.yaml").write_text("""\
suite: pl
workloads:
  - name: w
    ioengine: psync
    filename: t.data
    size: 64KiB
    rw: write
    verify: crc32c
    verify_state: state.bin
""")
    before = user_data(tmp_path / "state.bin")
    proc = iogate(tmp_path, "run", "pl.suite.yaml", "--markdown", "state.bin")
    refused(proc, "--markdown state.bin", "the verify_state file of pl.suite.yaml::w")
    assert digest(tmp_path / "state.bin") == before
    assert not (tmp_path / "t.data").exists()
    # iogate verify reads that file: its --json may not replace it, nor the target.
    (tmp_path / "t.data").write_bytes(bytes(64 << 10))
    data = digest(tmp_path / "t.data")
    for out in ("state.bin", "t.data"):
        proc = iogate(tmp_path, "verify", "pl.suite.yaml", "--json", out)
        refused(proc, f"--json {out}", "pl.suite.yaml::w")
    assert digest(tmp_path / "state.bin") == before
    assert digest(tmp_path / "t.data") == data


def test_the_plugin_refuses_clashing_outputs_before_running(pytester: pytest.Pytester) -> None:
    before = user_data(pytester.path / "data.bin")
    (pytester.path / "reads.suite.yaml").write_text(READS.format(target="data.bin"))
    for args, words in [
        (["--iogate-json=r.json", "--iogate-openmetrics=r.json"],
         ["--iogate-json r.json", "--iogate-openmetrics r.json"]),
        (["--iogate-json=r.json", "--iogate-html=r.json"],
         ["--iogate-json r.json", "--iogate-html r.json"]),
        (["--iogate-json=data.bin"], ["--iogate-json data.bin",
                                      "the target of reads.suite.yaml::scan"]),
    ]:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        err = result.stdout.str() + result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, (args, err)
        assert all(w in err for w in words), (args, err)
        assert "Traceback" not in err
        assert "1 passed" not in err
        assert not (pytester.path / "r.json").exists()
    assert digest(pytester.path / "data.bin") == before
