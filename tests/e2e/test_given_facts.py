"""Facts given from CI (--fact KEY=VALUE, IOGATE_FACT_<KEY>) on a target whose firmware
sysfs cannot read, a loop device where one can be made (else a file): recording a baseline
under one firmware and judging another against it, what the results document, the Markdown
summary and the history store say, and the usage errors, through the CLI and pytest."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]
IMAGE_SIZE = 8 << 20
CASE = "f.suite.yaml::read"

# A count of requests, the same on every machine: 4 MiB in 64 KiB blocks is 64 reads.
SUITE = """\
suite: facts
workloads:
  - name: read
    ioengine: psync
    rw: read
    bs: 64k
    size: 4MiB
    filename: {target}
    expect:
      read.ios: ">= baseline"
"""


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("IOGATE_FACT_")}
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**environ, **(env or {})})


def _loop_device(image: Path) -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("losetup") is None \
            or not os.path.exists("/dev/loop-control"):
        pytest.skip("a loop device needs root, losetup and the loop driver; the same steps "
                    "run on a file (the [file] case)")
    with open(image, "wb") as f:
        f.write(b"\x5a" * IMAGE_SIZE)
    made = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device here ({made.stderr.strip()}); the "
                    "same steps run on a file (the [file] case)")
    dev = made.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


@pytest.fixture(params=["loop", "file"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The target the suite reads: a loop device, whose sysfs has no model or firmware (the
    case this feature is for), or a file, whose disk's facts are whatever this machine's are."""
    if request.param == "loop":
        yield from _loop_device(tmp_path / "disk.img")
    else:
        yield str(tmp_path / "data")


@pytest.fixture
def suite(tmp_path: Path, target: str) -> Path:
    (tmp_path / "f.suite.yaml").write_text(SUITE.format(target=target))
    return tmp_path


def test_a_firmware_sysfs_cannot_read_is_given_and_gated_on(suite: Path, target: str) -> None:
    fw1 = iogate("run", "f.suite.yaml", "--fact", "firmware=FW1", "--save-baseline", "b.json",
                 "--json", "fw1.json", cwd=suite)
    assert fw1.returncode == 0, fw1.stdout + fw1.stderr
    [entry] = json.loads((suite / "b.json").read_text())["entries"]
    assert entry["environment"]["firmware"] == "FW1"
    fw2 = iogate("run", "f.suite.yaml", "--fact", "firmware=FW2", "--baseline", "b.json",
                 "--baseline-match", "firmware=FW1", "--json", "fw2.json", "--markdown",
                 "summary.md", cwd=suite)
    assert fw2.returncode == 0, fw2.stdout + fw2.stderr
    document = json.loads((suite / "fw2.json").read_text())
    assert document["environment"]["given"] == ["firmware"]
    assert document["environment"]["firmware"] == "FW2"
    [case] = document["cases"]
    assert case["environment"]["target.firmware"] == "FW2"
    # the firmware differs as asked, nothing else does (what the device did besides the
    # jobs, another process's I/O on a busy machine, is told apart: disk.*)
    assert [w for w in case["warnings"] if not w.startswith("disk.")] == []
    assert [c["passed"] for c in case["checks"]] == [True]
    assert "given, not read: firmware FW2" in (suite / "summary.md").read_text()


def test_without_the_fact_the_firmware_asked_for_is_not_found(suite: Path,
                                                              target: str) -> None:
    record = iogate("run", "f.suite.yaml", "--save-baseline", "b.json", "--json", "r.json",
                    cwd=suite)
    assert record.returncode == 0, record.stdout + record.stderr
    [case] = json.loads((suite / "r.json").read_text())["cases"]
    if target.startswith("/dev/loop"):
        # What the issue is about: sysfs has no firmware for a loop device.
        assert "target.firmware" not in case["environment"]
    proc = iogate("run", "f.suite.yaml", "--baseline", "b.json", "--baseline-match",
                  "firmware=FW1", cwd=suite)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "b.json: no entry is recorded with firmware=FW1" in proc.stderr
    assert "device_model=" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_environment_variable_gives_a_fact_and_the_option_wins(tmp_path: Path) -> None:
    (tmp_path / "f.suite.yaml").write_text(SUITE.format(target=tmp_path / "data"))
    proc = iogate("run", "f.suite.yaml", "--save-baseline", "b.json", "--history", "h.db",
                  cwd=tmp_path, env={"IOGATE_FACT_FIRMWARE": "FW1",
                                     "IOGATE_FACT_DEVICE_MODEL": "ACME 1TB"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [entry] = json.loads((tmp_path / "b.json").read_text())["entries"]
    assert entry["environment"]["firmware"] == "FW1"
    assert entry["environment"]["device_model"] == "ACME 1TB"
    with sqlite3.connect(tmp_path / "h.db") as db:
        assert db.execute("SELECT device_model, firmware FROM cases").fetchall() == [
            ("ACME 1TB", "FW1")]
    wins = iogate("run", "f.suite.yaml", "--fact", "firmware=FW2", "--baseline", "b.json",
                  "--json", "r.json", cwd=tmp_path, env={"IOGATE_FACT_FIRMWARE": "FW1",
                                                         "IOGATE_FACT_DEVICE_MODEL": "ACME 1TB"})
    assert wins.returncode == 0, wins.stdout + wins.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["environment"]["firmware"] == "FW2"
    assert document["environment"]["given"] == ["device_model", "firmware"]
    # The only entry, FW1's, not asked for: judged against with a warning naming both (a
    # busy disk may add one of its own)
    [warning] = [w for w in document["cases"][0]["warnings"] if "baseline" in w]
    assert "firmware 'FW1' in the baseline, 'FW2' in this run" in warning


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--fact", "firmwre=FW1"], {}, "iogate: --fact firmwre=FW1: unknown fact 'firmwre': "
                                    "facts that can be given are device_model, firmware, "
                                    "host, kernel; did you mean 'firmware'?"),
    (["--fact", "FW1"], {}, "iogate: --fact FW1: not KEY=VALUE, e.g. firmware=FW2"),
    ([], {"IOGATE_FACT_FW": "FW1"}, "iogate: the environment variable IOGATE_FACT_FW: "
                                    "unknown fact 'fw'"),
])
def test_facts_that_cannot_be_given_are_usage_errors_before_anything_runs(
        tmp_path: Path, args: list[str], env: dict[str, str], message: str) -> None:
    (tmp_path / "f.suite.yaml").write_text(SUITE.format(target=tmp_path / "data"))
    proc = iogate("run", "f.suite.yaml", *args, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "data").exists()


def test_pytest_gives_facts_too(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
                                ) -> None:
    pytester.makefile(".suite.yaml", f=SUITE.format(target=pytester.path / "data"))
    recorded = pytester.runpytest("-p", "no:cacheprovider", "--iogate-fact=firmware=FW1",
                                  "--iogate-save-baseline=b.json")
    recorded.assert_outcomes(passed=1)
    [entry] = json.loads((pytester.path / "b.json").read_text())["entries"]
    assert entry["environment"]["firmware"] == "FW1"
    # the session's facts were its own: a session in the same process without them reads
    # the target's as they are
    pytester.runpytest("-p", "no:cacheprovider", "--iogate-json=plain.json",
                       "--iogate-save-baseline=plain-b.json"
                       ).assert_outcomes(passed=1)
    plain = json.loads((pytester.path / "plain.json").read_text())
    assert "given" not in plain["environment"]
    assert plain["cases"][0]["environment"].get("target.firmware") != "FW1"
    monkeypatch.setenv("IOGATE_FACT_FIRMWARE", "FW2")
    judged = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=b.json",
                                "--iogate-baseline-match=firmware=FW1",
                                "--iogate-json=r.json")
    judged.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "r.json").read_text())["environment"]["given"] == [
        "firmware"]
    monkeypatch.delenv("IOGATE_FACT_FIRMWARE")
    bad = pytester.runpytest("-p", "no:cacheprovider", "--iogate-fact=firmwre=FW1")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--iogate-fact firmwre=FW1: unknown fact 'firmwre'*did you "
                              "mean 'firmware'?*"])
